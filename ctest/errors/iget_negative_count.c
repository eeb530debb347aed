/* rshmem-expect: shmem_int_iget: stride 1 × 18446744073709551613 elements of 4 bytes overflows the address space.*negative
   rshmem-test: pes=1,2
   An element count of 2^64 - 3 (a negative count converted to size_t) is refused like 2^62 (the
   named error), not silently ignored. */
#include <shmem.h>

int main(void) {
    shmem_init();
    int *p = shmem_malloc(64);
    int got[1];
    shmem_int_iget(got, p, 1, 1, (size_t)-3, (shmem_my_pe() + 1) % shmem_n_pes());
    shmem_finalize();
    return 0;
}
