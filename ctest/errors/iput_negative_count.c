/* rshmem-expect: shmem_long_iput: stride 1 × 18446744073709551615 elements of 8 bytes overflows the address space.*negative
   rshmem-test: pes=1,2
   A negative element count converted to size_t (here -1) is refused like any count too large
   for the address space, instead of silently doing nothing. */
#include <shmem.h>

int main(void) {
    shmem_init();
    long *p = shmem_malloc(64);
    long src[1] = {7};
    long n = -1;
    shmem_long_iput(p, src, 1, 1, (size_t)n, (shmem_my_pe() + 1) % shmem_n_pes());
    shmem_finalize();
    return 0;
}
