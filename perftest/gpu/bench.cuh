// Common helpers of the GPU benchmarks (perftest/gpu/*.cu): start-up, options, timing, CSV.
//
// Written against the public NVSHMEM API only, so that the same source builds against NVSHMEM
// (nvcc -rdc=true ... -lnvshmem_device -lnvshmem_host) and against rshmem
// (nvcc ... $(pkg-config --cflags --libs rshmem), no -rdc).
//
// Output: one CSV row per measurement on stdout of PE 0:
//     bench,variant,size,ctas,threads,value,unit
// Lines starting with '#' are comments (library, version, notes). Rows whose variant starts
// with "floor" are bare-CUDA floors: the same hardware path without any SHMEM call.
//
// Timing rules (every benchmark):
//   - one measurement = `reps` timed launches (default 5) after `warm` untimed ones (default 2);
//     the row is the median over the timed launches of (launch time / iterations);
//   - one-sided kernels are timed with CUDA events around the launch, with enough iterations
//     that a launch lasts about `--target-ms` (default 2 ms), so launch overhead stays < 0.5 %;
//   - kernels where both PEs take part (ping-pong, barriers, collectives) time a window inside
//     the kernel (%globaltimer, ns) that starts after in-kernel warm-up iterations, so that the
//     launch skew between the two processes is not counted.
#pragma once

#include <nvshmem.h>
#include <nvshmemx.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <time.h>
#include <vector>

#define CK(call)                                                                                 \
    do {                                                                                         \
        cudaError_t ck_err_ = (call);                                                            \
        if (ck_err_ != cudaSuccess) {                                                            \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,                 \
                    cudaGetErrorString(ck_err_));                                                \
            exit(2);                                                                             \
        }                                                                                        \
    } while (0)
#define CKLAUNCH() CK(cudaGetLastError())

namespace bench {

struct Opts {
    bool quick = false;         // a short sweep (a few sizes and CTA counts)
    int reps = 5;               // timed launches per measurement
    int warm = 2;               // untimed launches before them
    double target_ms = 2.0;     // aimed length of one timed launch
    size_t min_size = 0;        // clip of every size sweep
    size_t max_size = SIZE_MAX;
    std::vector<int> ctas;      // overrides a benchmark's CTA list
    std::vector<int> threads;   // overrides a benchmark's threads-per-CTA list
    std::string only;           // run only rows whose "bench/variant" contains this
    bool no_floor = false;      // skip the bare-CUDA floors
    size_t offset = 0;          // p_bw: the window starts this many bytes into its buffer
};

inline Opts opt;
inline int mype = 0, npes = 1, peer = 0;
inline cudaStream_t stream;
inline cudaEvent_t ev0, ev1;
inline int failures = 0;        // data checks that failed (exit status 3 at the end)
inline double *xchg = nullptr;  // symmetric scratch for exchanging numbers between PEs

inline size_t parse_size(const char *s) {
    char *end = nullptr;
    double v = strtod(s, &end);
    switch (end && *end ? *end : ' ') {
        case 'k': case 'K': v *= 1024.0; break;
        case 'm': case 'M': v *= 1024.0 * 1024.0; break;
        case 'g': case 'G': v *= 1024.0 * 1024.0 * 1024.0; break;
        default: break;
    }
    return (size_t)v;
}

inline std::vector<int> parse_list(const char *s) {
    std::vector<int> out;
    while (*s) {
        out.push_back(atoi(s));
        const char *c = strchr(s, ',');
        if (!c) break;
        s = c + 1;
    }
    return out;
}

inline void usage(const char *prog) {
    fprintf(stderr,
            "usage: %s [--quick] [--reps N] [--warm N] [--target-ms X] [--min SIZE] [--max SIZE]\n"
            "          [--ctas a,b,..] [--threads a,b,..] [--only SUB,SUB2,..] [--no-floor] [--offset SIZE]\n"
            "SIZE takes K/M/G suffixes. Output: CSV bench,variant,size,ctas,threads,value,unit\n",
            prog);
}

inline void parse_args(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto next = [&]() -> const char * {
            if (i + 1 >= argc) { usage(argv[0]); exit(1); }
            return argv[++i];
        };
        if (a == "--quick") opt.quick = true;
        else if (a == "--reps") opt.reps = std::max(1, atoi(next()));
        else if (a == "--warm") opt.warm = std::max(0, atoi(next()));
        else if (a == "--target-ms") opt.target_ms = atof(next());
        else if (a == "--min") opt.min_size = parse_size(next());
        else if (a == "--max") opt.max_size = parse_size(next());
        else if (a == "--ctas") opt.ctas = parse_list(next());
        else if (a == "--threads") opt.threads = parse_list(next());
        else if (a == "--only") opt.only = next();
        else if (a == "--no-floor") opt.no_floor = true;
        else if (a == "--offset") opt.offset = parse_size(next());
        else { usage(argv[0]); exit(1); }
    }
}

// Node-local rank from the launcher, so the GPU can be chosen (and its context created) before
// the library starts: OpenMPI, MPICH/hydra, Slurm, MVAPICH, rshmemrun (single host), PMI.
inline int local_rank_from_env() {
    const char *names[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID",
                           "MV2_COMM_WORLD_LOCAL_RANK",  "RSHMEM_RANK",     "PMI_RANK",
                           "PMIX_RANK"};
    for (const char *n : names) {
        const char *v = getenv(n);
        if (v && *v) return atoi(v);
    }
    return -1;
}

inline double now_s() {
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

// One GPU per PE: device = local rank modulo the visible devices. Returns the device chosen
// (-1 when the launcher told us nothing; the library then picks).
inline int select_device() {
    int ndev = 0;
    CK(cudaGetDeviceCount(&ndev));
    int lr = local_rank_from_env();
    if (lr < 0 || ndev == 0) return -1;
    CK(cudaSetDevice(lr % ndev));
    CK(cudaFree(0));
    return lr % ndev;
}

inline void print_header(const char *prog) {
    if (mype != 0) return;
    char name[256] = {0};
    int major = 0, minor = 0;
    nvshmem_info_get_name(name);
    nvshmem_info_get_version(&major, &minor);
    int dev = 0;
    CK(cudaGetDevice(&dev));
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, dev));
    int drv = 0, rt = 0;
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    printf("# %s: library \"%s\" (spec %d.%d), %d PEs, GPU %s (%d SMs), driver API %d, runtime %d\n",
           prog, name, major, minor, npes, p.name, p.multiProcessorCount, drv, rt);
    printf("bench,variant,size,ctas,threads,value,unit\n");
    fflush(stdout);
}

// Device chosen, library started, stream and events made. Needs at least 2 PEs.
inline void start(int argc, char **argv, const char *prog) {
    parse_args(argc, argv);
    select_device();
    nvshmem_init();
    mype = nvshmem_my_pe();
    npes = nvshmem_n_pes();
    if (npes < 2) {
        if (mype == 0) fprintf(stderr, "%s: needs at least 2 PEs (got %d)\n", prog, npes);
        nvshmem_finalize();
        exit(1);
    }
    peer = (mype + 1) % npes;
    CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CK(cudaEventCreate(&ev0));
    CK(cudaEventCreate(&ev1));
    xchg = (double *)nvshmem_malloc(sizeof(double) * (size_t)npes);
    if (!xchg) { fprintf(stderr, "%s: nvshmem_malloc failed\n", prog); exit(2); }
    print_header(prog);
    nvshmem_barrier_all();
}

inline int finish() {
    CK(cudaStreamSynchronize(stream));
    nvshmem_barrier_all();
    nvshmem_free(xchg);
    CK(cudaEventDestroy(ev0));
    CK(cudaEventDestroy(ev1));
    CK(cudaStreamDestroy(stream));
    nvshmem_finalize();
    if (failures) fprintf(stderr, "PE %d: %d data checks FAILED\n", mype, failures);
    return failures ? 3 : 0;
}

inline bool want(const std::string &b, const std::string &v) {
    if (opt.no_floor && v.compare(0, 5, "floor") == 0) return false;
    if (opt.only.empty()) return true;
    const std::string row = b + "/" + v;
    for (size_t at = 0; at <= opt.only.size();) { /* --only a,b: rows matching a or b */
        size_t end = opt.only.find(',', at);
        if (end == std::string::npos) end = opt.only.size();
        if (end > at && row.find(opt.only.substr(at, end - at)) != std::string::npos) return true;
        at = end + 1;
    }
    return false;
}

inline void emit(const char *b, const std::string &v, size_t size, int ctas, int threads,
                 double value, const char *unit) {
    if (mype != 0) return;
    printf("%s,%s,%zu,%d,%d,%.6g,%s\n", b, v.c_str(), size, ctas, threads, value, unit);
    fflush(stdout);
}

inline void note(const char *fmt, const char *a = "", const char *b = "") {
    if (mype != 0) return;
    printf("# ");
    printf(fmt, a, b);
    printf("\n");
    fflush(stdout);
}

inline void check(bool ok, const char *what, size_t size) {
    if (ok) return;
    failures++;
    fprintf(stderr, "PE %d: data check FAILED: %s (size %zu)\n", mype, what, size);
}

// Powers of two from lo to hi, clipped by --min/--max; --quick keeps every `quick_step`-th one
// plus both ends.
inline std::vector<size_t> sizes(size_t lo, size_t hi, int quick_step = 4) {
    std::vector<size_t> all, out;
    for (size_t s = lo; s <= hi; s *= 2)
        if (s >= opt.min_size && s <= opt.max_size) all.push_back(s);
    for (size_t i = 0; i < all.size(); i++)
        if (!opt.quick || i % (size_t)quick_step == 0 || i + 1 == all.size()) out.push_back(all[i]);
    return out;
}

inline std::vector<int> list_or(const std::vector<int> &given, std::vector<int> full,
                                std::vector<int> quick) {
    if (!given.empty()) return given;
    return opt.quick ? quick : full;
}

inline double median(std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// ---- exchanging numbers between PEs (outside timed regions) ---------------------------------

__global__ void xchg_put_kernel(double *slots, double v, int me, int n) {
    for (int pe = 0; pe < n; pe++) nvshmem_double_p(&slots[me], v, pe);
    nvshmem_quiet();
}

// Every PE gets every PE's value.
inline std::vector<double> allgather(double v) {
    nvshmem_barrier_all();
    xchg_put_kernel<<<1, 1, 0, stream>>>(xchg, v, mype, npes);
    CKLAUNCH();
    CK(cudaStreamSynchronize(stream));
    nvshmem_barrier_all();
    std::vector<double> out((size_t)npes);
    CK(cudaMemcpy(out.data(), xchg, sizeof(double) * (size_t)npes, cudaMemcpyDeviceToHost));
    nvshmem_barrier_all();
    return out;
}

inline double max_over_pes(double v) {
    std::vector<double> all = allgather(v);
    return *std::max_element(all.begin(), all.end());
}

// ---- timing ------------------------------------------------------------------------------------

template <class L>
inline double event_ms(L &&launch) {
    CK(cudaEventRecord(ev0, stream));
    launch();
    CKLAUNCH();
    CK(cudaEventRecord(ev1, stream));
    CK(cudaEventSynchronize(ev1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, ev0, ev1));
    return (double)ms;
}

inline int clamp_iters(double iters, int lo, int hi) {
    if (!(iters > 0)) iters = lo;
    return (int)std::min<double>(hi, std::max<double>(lo, iters));
}

// Median time of one iteration (ms) of `launch(iters)`, timed with CUDA events on the PEs where
// `active`; every PE must call it (it synchronizes the PEs between launches). The iteration count
// is calibrated once (the same count on every PE) so that a launch lasts about --target-ms.
// The calibration launch follows an untimed one: a kernel's first launch also loads its module
// (CUDA lazy loading; milliseconds), which would make the calibrated count far too small (a
// first row of 2 iterations per launch measured mostly the launch).
// Returns this PE's median (0 where not active).
template <class L>
inline double events_per_iter_ms(L &&launch, bool active, int iters0, int lo, int hi) {
    nvshmem_barrier_all();
    if (active) event_ms([&] { launch(iters0); });
    nvshmem_barrier_all();
    double t = active ? event_ms([&] { launch(iters0); }) : 0.0;
    double tmax = max_over_pes(t);
    int iters = clamp_iters(iters0 * opt.target_ms / std::max(tmax, 1e-4), lo, hi);
    std::vector<double> v;
    for (int r = 0; r < opt.warm + opt.reps; r++) {
        nvshmem_barrier_all();
        if (!active) continue;
        double ms = event_ms([&] { launch(iters); });
        if (r >= opt.warm) v.push_back(ms / iters);
    }
    nvshmem_barrier_all();
    return active ? median(v) : 0.0;
}

// ---- in-kernel window timing (two-sided kernels) ------------------------------------------------

__device__ __forceinline__ unsigned long long gtimer() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Device-side results of the window timer: [0] = window length in ns.
inline unsigned long long *dres = nullptr;

inline unsigned long long *window_slot() {
    if (!dres) CK(cudaMalloc(&dres, 64 * sizeof(unsigned long long)));
    return dres;
}

// `launch(warm_iters, iters, slot)` runs a kernel that does warm_iters untimed then iters timed
// iterations and writes the timed window (ns) to *slot. Every PE launches. Returns this PE's
// median per-iteration time in microseconds.
template <class L>
inline double window_per_iter_us(L &&launch, int iters0, int lo, int hi, int warm_iters = -1) {
    unsigned long long *slot = window_slot();
    auto one = [&](int w, int it) -> double {
        CK(cudaMemsetAsync(slot, 0, sizeof(unsigned long long), stream));
        nvshmem_barrier_all();
        launch(w, it, slot);
        CKLAUNCH();
        CK(cudaStreamSynchronize(stream));
        unsigned long long ns = 0;
        CK(cudaMemcpy(&ns, slot, sizeof ns, cudaMemcpyDeviceToHost));
        return (double)ns;
    };
    double t = one(std::max(1, iters0 / 10), iters0) / 1e6;  // ms
    double tmax = max_over_pes(t);
    int iters = clamp_iters(iters0 * opt.target_ms / std::max(tmax, 1e-4), lo, hi);
    int w = warm_iters >= 0 ? warm_iters : std::max(2, iters / 10);
    std::vector<double> v;
    for (int r = 0; r < opt.warm + opt.reps; r++) {
        double ns = one(w, iters);
        if (r >= opt.warm) v.push_back(ns / 1e3 / iters);
    }
    nvshmem_barrier_all();
    return median(v);
}

// Whether `fn` can be launched with `threads` threads per CTA (registers permitting); says so
// in a comment row when not, so a row goes missing visibly instead of a launch failure.
template <class F>
inline bool fits(F *fn, int threads, const char *what) {
    cudaFuncAttributes a;
    if (cudaFuncGetAttributes(&a, (const void *)fn) != cudaSuccess) return true;
    if (threads <= a.maxThreadsPerBlock) return true;
    if (mype == 0) {
        printf("# %s: %d threads per CTA do not fit (max %d: %d registers/thread); rows skipped\n", what,
               threads, a.maxThreadsPerBlock, a.numRegs);
        fflush(stdout);
    }
    return false;
}

// Peer's copy of a symmetric object as a plain pointer (NULL where not load/store reachable).
template <class T>
inline T *peer_ptr(T *sym) {
    return (T *)nvshmem_ptr((void *)sym, peer);
}

inline bool floors_possible(void *sym) {
    if (opt.no_floor) return false;
    if (nvshmem_ptr(sym, peer) != nullptr) return true;
    note("no load/store path to the peer (nvshmem_ptr is NULL): floors skipped");
    return false;
}

}  // namespace bench
