/* Used by ctest/scripts/multihost_*.sh: PEs spread over several (namespaced) hosts.
 * usage: hosts_check <mode> <dir>
 * Every PE writes <dir>/pid.<pe> (its pid) once shmem_init has returned, then:
 *   report  prints "PE <me> of <n> on <host>: ok" and finalizes (shmem_init .. shmem_finalize
 *           must work across hosts)
 *   kill    the last PE raises SIGKILL after 0.3 s; the others sleep outside any SHMEM call
 *   exit3   the last PE calls shmem_global_exit(3) after 0.3 s; the others sleep
 *   exit3barrier  the same, while the others wait in shmem_barrier_all (across hosts)
 *   hold    every PE sleeps (the test kills a launcher) */
#include <shmem.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s report|kill|exit3|exit3barrier|hold DIR\n", argv[0]);
        return 2;
    }
    const char *mode = argv[1], *dir = argv[2];
    setvbuf(stdout, NULL, _IOLBF, 0);
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    char host[256] = "?", path[4096];
    gethostname(host, sizeof host - 1);
    snprintf(path, sizeof path, "%s/pid.%d", dir, me);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return 2;
    }
    fprintf(f, "%d\n", (int)getpid());
    fclose(f);
    if (!strcmp(mode, "report")) {
        printf("PE %d of %d on %s: ok\n", me, n, host);
        shmem_finalize();
        return 0;
    }
    if (me == n - 1 && !strcmp(mode, "kill")) {
        usleep(300 * 1000);
        raise(SIGKILL);
    }
    if (me == n - 1 && !strncmp(mode, "exit3", 5)) {
        usleep(300 * 1000);
        shmem_global_exit(3);
    }
    if (!strcmp(mode, "exit3barrier")) shmem_barrier_all();
    sleep(120);
    printf("PE %d: nobody stopped me\n", me);
    return 1;
}
