/* rshmem-test: pes=2 (built with -z norelro, partial and full RELRO: see CMakeLists.txt)
 * The shared static-data range holds the program's globals, never what the dynamic linker
 * writes: no peer may address the GOT (_GLOBAL_OFFSET_TABLE_, the start of .got.plt that lazy
 * binding fills) or the dynamic section (_DYNAMIC), while a global in .data and one in .bss
 * stay remotely accessible and a put into them arrives. */
#include <shmem.h>
#include <stdio.h>
#include <string.h>
#include "check.h"

extern char _GLOBAL_OFFSET_TABLE_[];
extern char _DYNAMIC[];
long in_data = 5;
long in_bss;

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), peer = (me + 1) % shmem_n_pes();
    CHECK(!shmem_addr_accessible(_GLOBAL_OFFSET_TABLE_, peer), "the GOT at %p is remotely accessible", (void *)_GLOBAL_OFFSET_TABLE_);
    CHECK(shmem_ptr(_GLOBAL_OFFSET_TABLE_, peer) == NULL, "shmem_ptr gives a pointer into the peer's GOT");
    CHECK(!shmem_addr_accessible(_DYNAMIC, peer), "the dynamic section at %p is remotely accessible", (void *)_DYNAMIC);
    CHECK(shmem_addr_accessible(&in_data, peer), ".data global not accessible");
    CHECK(shmem_addr_accessible(&in_bss, peer), ".bss global not accessible");
    shmem_long_p(&in_data, 100 + me, peer);
    shmem_long_p(&in_bss, 200 + me, peer);
    shmem_barrier_all();
    int from = (me + shmem_n_pes() - 1) % shmem_n_pes();
    CHECK_EQ_LONG(in_data, 100 + from);
    CHECK_EQ_LONG(in_bss, 200 + from);
    /* A libc call after init goes through lazy binding when RELRO is partial or off. */
    char buf[32];
    snprintf(buf, sizeof buf, "%d", me);
    CHECK(strlen(buf) > 0, "snprintf");
    shmem_barrier_all();
    shmem_finalize();
    return 0;
}
