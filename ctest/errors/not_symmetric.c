/* rshmem-expect: shmem_putmem: address 0x[0-9a-f]+ \(8 bytes\) is not symmetric.*shmem_malloc
   rshmem-test: pes=1,2
   A malloc'd (private) destination is not remotely accessible: the message names the address
   and says how to get a symmetric one. */
#include <shmem.h>
#include <stdlib.h>

int main(void) {
    shmem_init();
    long *private_dest = malloc(sizeof(long));
    long v = 1;
    shmem_putmem(private_dest, &v, sizeof v, (shmem_my_pe() + 1) % shmem_n_pes());
    shmem_finalize();
    return 0;
}
