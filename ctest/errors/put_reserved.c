/* rshmem-expect: shmem_putmem: address 0x[0-9a-f]+ \(8 bytes\) is not symmetric.*runtime
   rshmem-test: pes=1,2
   The runtime's reserved area at the start of every heap (just below the first block
   shmem_malloc returns) is not the user's: an 8-byte put there is refused with the named
   error instead of overwriting the runtime's control words on the target. */
#include <shmem.h>

int main(void) {
    shmem_init();
    char *p = shmem_malloc(64);
    long v = 42;
    shmem_putmem(p - 8, &v, sizeof v, (shmem_my_pe() + 1) % shmem_n_pes());
    shmem_finalize();
    return 0;
}
