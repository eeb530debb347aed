// True round trips, one thread, µs per round trip:
//   chain_*   dependent chains PE 0 -> PE 1: each operation's result is the index of the next
//             address (a random single cycle over 128-byte lines of a 64 MiB window, continued
//             across launches), so every operation waits for the previous reply and never
//             touches a line twice. g, atomic_fetch, atomic_fetch_add(+0),
//             atomic_compare_swap(never matching); g_self = g to the own PE (reference).
//   pingpong_* PE 0 sends, PE 1 waits and answers: signal_op(SET)+signal_wait_until,
//             uint64_p+uint64_wait_until, putmem_signal_nbi(8 B)+signal_wait_until.
// Floors: floor_load_chain (dependent volatile peer loads), floor_atomic_chain (dependent
// atomicAdd_system(+0)), floor_cas_chain (atomicCAS_system), floor_flag_pingpong (volatile store
// to the peer's flag, spin on the own flag).
#include "bench.cuh"
#include "floors.cuh"

#include <random>

using namespace bench;

static const int LINE_INTS = 32;  // 128-byte lines
enum { G = 0, FETCH, FADD, CSWAP, G_SELF, F_LOAD, F_ATOMIC, F_CAS };
static const char *chain_name[] = {"chain_g", "chain_atomic_fetch", "chain_fetch_add", "chain_compare_swap",
                                   "chain_g_self", "floor_load_chain", "floor_atomic_chain", "floor_cas_chain"};

template <int OP>
__global__ void chain_kernel(int *buf, int *pos, int iters, int pe) {
    int idx = *pos;
    for (int i = 0; i < iters; i++) {
        int *p = buf + (size_t)idx * LINE_INTS;
        if (OP == G || OP == G_SELF) idx = nvshmem_int_g(p, pe);
        else if (OP == FETCH) idx = nvshmem_int_atomic_fetch(p, pe);
        else if (OP == FADD) idx = nvshmem_int_atomic_fetch_add(p, 0, pe);
        else if (OP == CSWAP) idx = nvshmem_int_atomic_compare_swap(p, -1, 0, pe);
        else if (OP == F_LOAD) idx = *(volatile int *)p;
        else if (OP == F_ATOMIC) idx = atomicAdd_system(p, 0);
        else idx = atomicCAS_system(p, -1, 0);
    }
    *pos = idx;
}

enum { PP_SIGNAL = 0, PP_P, PP_PUT_SIGNAL };
static const char *pp_name[] = {"pingpong_signal", "pingpong_p", "pingpong_put_signal_8B"};

template <int KIND>
__global__ void pingpong_kernel(uint64_t *flag, char *data, const char *src, bool initiator,
                                unsigned long long base, int warm, int iters, int pe,
                                unsigned long long *slot) {
    unsigned long long t0 = 0;
    for (int i = 1; i <= warm + iters; i++) {
        if (i == warm + 1) t0 = gtimer();
        uint64_t v = base + (uint64_t)i;
        if (!initiator) {
            if (KIND == PP_P) nvshmem_uint64_wait_until(flag, NVSHMEM_CMP_GE, v);
            else nvshmem_signal_wait_until(flag, NVSHMEM_CMP_GE, v);
        }
        if (KIND == PP_SIGNAL) nvshmemx_signal_op(flag, v, NVSHMEM_SIGNAL_SET, pe);
        else if (KIND == PP_P) nvshmem_uint64_p(flag, v, pe);
        else nvshmem_putmem_signal_nbi(data, src, 8, flag, v, NVSHMEM_SIGNAL_SET, pe);
        if (initiator) {
            if (KIND == PP_P) nvshmem_uint64_wait_until(flag, NVSHMEM_CMP_GE, v);
            else nvshmem_signal_wait_until(flag, NVSHMEM_CMP_GE, v);
        }
    }
    *slot = gtimer() - t0;
}

int main(int argc, char **argv) {
    start(argc, argv, "rtt");
    const size_t lines = (64u << 20) / (LINE_INTS * sizeof(int));
    int *buf = (int *)nvshmem_malloc(lines * LINE_INTS * sizeof(int));
    uint64_t *flag = (uint64_t *)nvshmem_malloc(256);
    char *data = (char *)nvshmem_malloc(256);
    if (!buf || !flag || !data) { fprintf(stderr, "nvshmem_malloc failed\n"); return 2; }
    int *pos = nullptr;
    CK(cudaMalloc(&pos, sizeof(int)));

    // One random cycle over all lines (Sattolo), the same on every PE.
    std::vector<int> next(lines);
    for (size_t i = 0; i < lines; i++) next[i] = (int)i;
    std::mt19937_64 rng(12345);
    for (size_t i = lines - 1; i > 0; i--) {
        size_t j = std::uniform_int_distribution<size_t>(0, i - 1)(rng);
        std::swap(next[i], next[j]);
    }
    {
        std::vector<int> h(lines * LINE_INTS, 0);
        for (size_t i = 0; i < lines; i++) h[i * LINE_INTS] = next[i];
        CK(cudaMemcpy(buf, h.data(), h.size() * sizeof(int), cudaMemcpyHostToDevice));
    }
    CK(cudaMemset(flag, 0, 256));
    CK(cudaMemset(data, 0, 256));
    bool fl = floors_possible(buf);
    int *pbuf = fl ? peer_ptr(buf) : nullptr;
    unsigned long long *pflag = fl ? (unsigned long long *)peer_ptr(flag) : nullptr;
    nvshmem_barrier_all();

    // Each chain starts 65536 steps further along the cycle than the previous one, so no chain
    // touches a line another one touched (each uses fewer than 65536 steps in all).
    std::vector<int> starts(8);
    {
        int at = 0;
        for (int op = 0; op < 8; op++) {
            starts[op] = at;
            for (int k = 0; k < 65536; k++) at = next[at];
        }
    }
    typedef void (*chain_fn)(int *, int *, int, int);
    chain_fn chains[] = {chain_kernel<G>,      chain_kernel<FETCH>,  chain_kernel<FADD>,     chain_kernel<CSWAP>,
                         chain_kernel<G_SELF>, chain_kernel<F_LOAD>, chain_kernel<F_ATOMIC>, chain_kernel<F_CAS>};
    for (int op = G; op <= F_CAS; op++) {
        bool floor = op >= F_LOAD;
        if (floor && !fl) continue;
        if (!want("rtt", chain_name[op])) continue;
        int *target = floor ? pbuf : buf;
        int pe = op == G_SELF ? mype : peer;
        CK(cudaMemcpy(pos, &starts[op], sizeof(int), cudaMemcpyHostToDevice));
        double ms = events_per_iter_ms([&](int it) { chains[op]<<<1, 1, 0, stream>>>(target, pos, it, pe); },
                                       mype == 0, 1000, 100, 8000);
        emit("rtt", chain_name[op], 4, 1, 1, mype == 0 ? ms * 1e3 : 0, "us");
        // Data check: 1000 steps from line 0 end where the host's walk ends.
        if (mype == 0) {
            CK(cudaMemset(pos, 0, sizeof(int)));
            chains[op]<<<1, 1, 0, stream>>>(target, pos, 1000, pe);
            CKLAUNCH();
            int got = -1, want_idx = 0;
            CK(cudaMemcpyAsync(&got, pos, sizeof(int), cudaMemcpyDeviceToHost, stream));
            CK(cudaStreamSynchronize(stream));
            for (int i = 0; i < 1000; i++) want_idx = next[want_idx];
            check(got == want_idx, chain_name[op], 4);
        }
        nvshmem_barrier_all();
    }

    typedef void (*pp_fn)(uint64_t *, char *, const char *, bool, unsigned long long, int, int, int, unsigned long long *);
    pp_fn pps[] = {pingpong_kernel<PP_SIGNAL>, pingpong_kernel<PP_P>, pingpong_kernel<PP_PUT_SIGNAL>};
    const char *src8 = data + 128;
    for (int k = PP_SIGNAL; k <= PP_PUT_SIGNAL; k++) {
        if (!want("rtt", pp_name[k])) continue;
        double us = window_per_iter_us(
            [&](int w, int it, unsigned long long *slot) {
                pps[k]<<<1, 1, 0, stream>>>(flag, data, src8, mype == 0, floors::next_base(w, it), w, it, peer, slot);
            },
            1000, 100, 100000);
        emit("rtt", pp_name[k], 8, 1, 1, us, "us");
    }
    if (fl && want("rtt", "floor_flag_pingpong")) {
        double us = window_per_iter_us(
            [&](int w, int it, unsigned long long *slot) {
                floors::pingpong<<<1, 1, 0, stream>>>((unsigned long long *)flag, pflag, mype == 0,
                                                      floors::next_base(w, it), w, it, slot);
            },
            1000, 100, 100000);
        emit("rtt", "floor_flag_pingpong", 8, 1, 1, us, "us");
    }

    nvshmem_barrier_all();
    CK(cudaFree(pos));
    nvshmem_free(data);
    nvshmem_free(flag);
    nvshmem_free(buf);
    return finish();
}
