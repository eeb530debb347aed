/* rshmem-expect: shmem_getmem: address 0x[0-9a-f]+ \(8 bytes\) is not symmetric
   rshmem-test: pes=1,2
   A stack variable as the remote source of a get is not symmetric. */
#include <shmem.h>

int main(void) {
    shmem_init();
    long on_stack = 5, got = 0;
    shmem_getmem(&got, &on_stack, sizeof got, 0);
    shmem_finalize();
    return (int)got;
}
