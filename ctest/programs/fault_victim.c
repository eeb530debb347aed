/* Used by the faults_*.sh scripts.
 * usage: fault_victim <mode> <dir> [target-pe]
 * Every PE writes <dir>/pid.<pe> (its pid) once shmem_init has returned, then:
 *   kill      the target PE (default: the last) raises SIGKILL; the others wait in a barrier
 *   exit3     the target PE calls shmem_global_exit(3); PE 0 waits in a barrier, the others
 *             sleep outside any SHMEM call
 *   exit1     the target PE calls exit(1) without shmem_finalize; the others wait in a barrier
 *   block     every PE waits in a barrier that the target PE never reaches (it sleeps)
 *   signal    every PE installs a handler for SIGINT/SIGTERM/SIGUSR1, writes <dir>/ready.<pe>,
 *             waits for a signal, then prints "PE <me> observed <name>" and exits 0
 *   nohandler like signal, without a handler (the default action ends the PE) */
#include <shmem.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t got_signal;
static void on_signal(int sig) { got_signal = sig; }

static void mark(const char *dir, const char *what, int me) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.%d", dir, what, me);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(2);
    }
    fprintf(f, "%d\n", (int)getpid());
    fclose(f);
}

static const char *name_of(int sig) {
    return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGUSR1 ? "SIGUSR1" : "another signal";
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s kill|exit3|exit1|block|signal|nohandler DIR [PE]\n", argv[0]);
        return 2;
    }
    const char *mode = argv[1], *dir = argv[2];
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!strcmp(mode, "signal")) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGUSR1, &sa, NULL);
    }
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    int target = argc > 3 ? atoi(argv[3]) : n - 1;
    mark(dir, "pid", me);
    shmem_barrier_all();
    if (!strcmp(mode, "kill")) {
        if (me == target) {
            usleep(300 * 1000);
            raise(SIGKILL);
        }
        shmem_barrier_all();
        printf("PE %d: the barrier completed, but PE %d should be dead\n", me, target);
        return 1;
    }
    if (!strcmp(mode, "exit3")) {
        if (me == target) {
            usleep(300 * 1000);
            shmem_global_exit(3);
        }
        if (me == 0)
            shmem_barrier_all();
        else
            sleep(120);
        printf("PE %d: still running after shmem_global_exit(3)\n", me);
        return 1;
    }
    if (!strcmp(mode, "exit1")) {
        if (me == target)
            exit(1);
        shmem_barrier_all();
        printf("PE %d: the barrier completed, but PE %d has exited\n", me, target);
        return 1;
    }
    if (!strcmp(mode, "block")) {
        if (me == target)
            sleep(120);
        shmem_barrier_all();
        sleep(120);
        return 1;
    }
    if (!strcmp(mode, "signal") || !strcmp(mode, "nohandler")) {
        mark(dir, "ready", me);
        for (int i = 0; i < 60 * 100 && !got_signal; i++)
            usleep(10 * 1000);
        if (!got_signal) {
            printf("PE %d: no signal arrived\n", me);
            return 1;
        }
        printf("PE %d observed %s\n", me, name_of(got_signal));
        shmem_finalize();
        return 0;
    }
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
}
