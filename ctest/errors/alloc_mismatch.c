/* rshmem-expect: shmem_malloc: symmetric allocation mismatch: PE 1 called with \(128, [0-9]+\) but PE 0 with \(64, [0-9]+\)
   rshmem-test: pes=2
   shmem_malloc is collective with the same size everywhere: PEs asking for different sizes
   must be told, with both sizes. */
#include <shmem.h>

int main(void) {
    shmem_init();
    void *p = shmem_malloc(shmem_my_pe() == 0 ? 64 : 128);
    shmem_free(p);
    shmem_finalize();
    return 0;
}
