// CUDA context creation alone, the `init/ctx` phase of init.cu without any SHMEM library, so
// that one launcher's effect on it (CPU binding, environment, how the processes are started)
// can be told from another's. Plain CUDA runtime; one CSV line per process on stdout:
//   ctx_probe,<local rank>,<allowed CPUs>,<start, s since the epoch>,<exec ms>,<count ms>,<set ms>,<free ms>,<ctx ms>
// exec = from the process's start (/proc/self/stat, 10 ms ticks) to main: the loading and the
// static constructors of the libraries it links (built with -lrshmem or -lnvshmem_host and
// --no-as-needed, the probe shows what merely linking a library does to the context's cost).
// count = cudaGetDeviceCount (driver start-up, cuInit), set = cudaSetDevice(rank % count),
// free = cudaFree(0) (the primary context), ctx = the three together: what init.cu's `ctx` is.
// The rank comes from the launcher's environment (Open MPI, MPICH, Slurm, rshmemrun), else
// CTX_PROBE_RANK, else 0. Used by scripts that compare launchers (results/gpu-compare-*-rows).
#include <cuda_runtime.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double mono_s() {
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double epoch_s() {
    timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

// Milliseconds since this process started (its start time in /proc is in clock ticks since boot).
static double since_exec_ms() {
    FILE *f = fopen("/proc/self/stat", "r");
    if (!f) return -1;
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    // Field 22 (starttime); fields 3 onwards follow the last ')' (the command name may hold any).
    char *p = buf + n;
    while (p > buf && *p != ')') p--;
    unsigned long long start = 0;
    int field = 2;
    for (char *q = p + 1; *q && field < 22; q++)
        if (*q == ' ' && ++field == 22) start = strtoull(q + 1, nullptr, 10);
    timespec t;
    clock_gettime(CLOCK_BOOTTIME, &t);
    double now = (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
    return 1e3 * (now - (double)start / (double)sysconf(_SC_CLK_TCK));
}

static int rank_from_env() {
    const char *names[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID", "RSHMEM_RANK",
                           "PMI_RANK", "CTX_PROBE_RANK"};
    for (const char *n : names) {
        const char *v = getenv(n);
        if (v && *v) return atoi(v);
    }
    return 0;
}

static void check(cudaError_t e, const char *what) {
    if (e == cudaSuccess) return;
    fprintf(stderr, "ctx_probe: %s failed: %s\n", what, cudaGetErrorString(e));
    exit(1);
}

int main() {
    double start = epoch_s();
    double exec_ms = since_exec_ms();
    int rank = rank_from_env();
    cpu_set_t set;
    CPU_ZERO(&set);
    int cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : -1;
    double t0 = mono_s();
    int n = 0;
    check(cudaGetDeviceCount(&n), "cudaGetDeviceCount");
    if (n < 1) {
        fprintf(stderr, "ctx_probe: no CUDA device visible\n");
        return 1;
    }
    double t1 = mono_s();
    check(cudaSetDevice(rank % n), "cudaSetDevice");
    double t2 = mono_s();
    check(cudaFree(0), "cudaFree(0)");
    double t3 = mono_s();
    printf("ctx_probe,%d,%d,%.6f,%.0f,%.2f,%.2f,%.2f,%.2f\n", rank, cpus, start, exec_ms, 1e3 * (t1 - t0), 1e3 * (t2 - t1),
           1e3 * (t3 - t2), 1e3 * (t3 - t0));
    return 0;
}
