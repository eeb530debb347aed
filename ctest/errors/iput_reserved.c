/* rshmem-expect: shmem_long_iput: address 0x[0-9a-f]+ \(24 bytes\) is not symmetric.*runtime
   rshmem-test: pes=1,2
   A strided put with a negative destination stride that reaches below the first heap block
   (into the runtime's reserved area) is refused with the named error. */
#include <shmem.h>

int main(void) {
    shmem_init();
    long *p = shmem_malloc(64);
    long src[3] = {1, 2, 3};
    shmem_long_iput(p + 1, src, -1, 1, 3, (shmem_my_pe() + 1) % shmem_n_pes());
    shmem_finalize();
    return 0;
}
