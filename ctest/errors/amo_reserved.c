/* rshmem-expect: shmem_long_atomic_fetch_add: address 0x[0-9a-f]+ \(8 bytes\) is not symmetric.*runtime
   rshmem-test: pes=1,2
   An atomic on the word just below the first heap block (the runtime's reserved area) is
   refused with the named error. */
#include <shmem.h>

int main(void) {
    shmem_init();
    long *p = shmem_malloc(64);
    shmem_long_atomic_fetch_add(p - 1, 1, (shmem_my_pe() + 1) % shmem_n_pes());
    shmem_finalize();
    return 0;
}
