/* rshmem-expect: shmem_init: environment variable RSHMEM_SYMMETRIC_SIZE=.banana. is not valid: expected a positive size
   rshmem-test: pes=1,2
   A malformed setting must be refused at shmem_init with the variable, its value and what is
   expected. */
#include <shmem.h>
#include <stdlib.h>

int main(void) {
    setenv("RSHMEM_SYMMETRIC_SIZE", "banana", 1);
    shmem_init();
    shmem_finalize();
    return 0;
}
