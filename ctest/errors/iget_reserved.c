/* rshmem-expect: shmem_long_iget: address 0x[0-9a-f]+ \(16 bytes\) is not symmetric.*runtime
   rshmem-test: pes=1,2
   A strided get with a negative source stride that starts at the first heap block reaches back
   into the runtime's reserved area: refused with the named error. */
#include <shmem.h>

int main(void) {
    shmem_init();
    long *p = shmem_malloc(64);
    long got[2];
    shmem_long_iget(got, p, 1, -1, 2, (shmem_my_pe() + 1) % shmem_n_pes());
    shmem_finalize();
    return 0;
}
