/* rshmem-cuda-test: pes=2
 * Teams of GPU PEs: NVSHMEM's handle values, nvshmem_team_split_strided / _split_2d /
 * _translate_pe / _my_pe / _n_pes / _get_config / _destroy on the host, the same queries in
 * device code (the device team table follows every split and destroy), device collectives and
 * barriers on split teams, on-stream and blocking host collectives on split teams, and bad
 * splits failing alike on every PE. */
#include <unistd.h>
#include <algorithm>
#include <vector>
#include "cuda_test.h"

static int me, npes;

struct Q {
    int my, n, to_world0, from_world;
};

/* Device answers for each handle: my_pe, n_pes, translate(team, 0, WORLD), translate(WORLD, me, team). */
__global__ void query(const int *teams, int count, Q *out) {
    int i = threadIdx.x;
    if (i < count) {
        nvshmem_team_t t = teams[i];
        out[i].my = nvshmem_team_my_pe(t);
        out[i].n = nvshmem_team_n_pes(t);
        out[i].to_world0 = nvshmem_team_translate_pe(t, 0, NVSHMEM_TEAM_WORLD);
        out[i].from_world = nvshmem_team_translate_pe(NVSHMEM_TEAM_WORLD, nvshmem_my_pe(), t);
    }
}

static void check_queries(const std::vector<int> &teams) {
    int *dt;
    Q *dq;
    CUDA_CHECK(cudaMalloc(&dt, teams.size() * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dq, teams.size() * sizeof(Q)));
    CUDA_CHECK(cudaMemcpy(dt, teams.data(), teams.size() * sizeof(int), cudaMemcpyHostToDevice));
    query<<<1, 64>>>(dt, (int)teams.size(), dq);
    CUDA_CHECK(cudaGetLastError());
    std::vector<Q> q(teams.size());
    CUDA_CHECK(cudaMemcpy(q.data(), dq, q.size() * sizeof(Q), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < teams.size(); i++) {
        int t = teams[i];
        if (q[i].my != nvshmem_team_my_pe(t) || q[i].n != nvshmem_team_n_pes(t) ||
            q[i].to_world0 != nvshmem_team_translate_pe(t, 0, NVSHMEM_TEAM_WORLD) ||
            q[i].from_world != nvshmem_team_translate_pe(NVSHMEM_TEAM_WORLD, me, t))
            FAIL("team %d: device says my_pe %d n_pes %d translate %d/%d; host %d %d %d/%d", t, q[i].my, q[i].n, q[i].to_world0,
                 q[i].from_world, nvshmem_team_my_pe(t), nvshmem_team_n_pes(t), nvshmem_team_translate_pe(t, 0, NVSHMEM_TEAM_WORLD),
                 nvshmem_team_translate_pe(NVSHMEM_TEAM_WORLD, me, t));
    }
    CUDA_CHECK(cudaFree(dt));
    CUDA_CHECK(cudaFree(dq));
}

/* Block-scope collectives on `team` (n members, this PE is `my`); results checked by the host. */
__global__ void team_colls(nvshmem_team_t team, int *src, int *sum, int *all, int *bc, int root, int n) {
    for (int i = threadIdx.x; i < n; i += blockDim.x) src[i] = nvshmem_team_my_pe(team) * 1000 + i;
    __syncthreads();
    nvshmemx_barrier_block(team);
    nvshmemx_int_sum_reduce_block(team, sum, src, n);
    nvshmemx_int_fcollect_block(team, all, src, n);
    nvshmemx_int_broadcast_block(team, bc, src, n, root);
    nvshmemx_team_sync_block(team);
    if (threadIdx.x == 0) nvshmem_team_sync(team);
}

static void check_team_collectives(nvshmem_team_t team, const char *name) {
    int tn = nvshmem_team_n_pes(team), tme = nvshmem_team_my_pe(team);
    const int N = 777;
    int *src = (int *)nvshmem_malloc(N * sizeof(int)), *sum = (int *)nvshmem_malloc(N * sizeof(int));
    int *all = (int *)nvshmem_malloc(N * npes * sizeof(int)), *bc = (int *)nvshmem_malloc(N * sizeof(int));
    if (tme >= 0) {
        int root = tn - 1;
        team_colls<<<1, 256>>>(team, src, sum, all, bc, root, N);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaDeviceSynchronize());
        std::vector<int> h(N * tn);
        CUDA_CHECK(cudaMemcpy(h.data(), sum, N * sizeof(int), cudaMemcpyDeviceToHost));
        for (int i = 0; i < N; i++) CHECK(h[i] == 1000 * (tn * (tn - 1) / 2) + tn * i, "%s: device sum[%d] = %d", name, i, h[i]);
        CUDA_CHECK(cudaMemcpy(h.data(), all, N * tn * sizeof(int), cudaMemcpyDeviceToHost));
        for (int k = 0; k < tn; k++)
            for (int i = 0; i < N; i++) CHECK(h[k * N + i] == k * 1000 + i, "%s: device fcollect[%d][%d] = %d", name, k, i, h[k * N + i]);
        CUDA_CHECK(cudaMemcpy(h.data(), bc, N * sizeof(int), cudaMemcpyDeviceToHost));
        for (int i = 0; i < N; i++) CHECK(h[i] == root * 1000 + i, "%s: device broadcast[%d] = %d", name, i, h[i]);

        /* The same from the host: on a stream, then blocking. */
        cudaStream_t s;
        CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        CUDA_CHECK(cudaMemset(sum, 0, N * sizeof(int)));
        CUDA_CHECK(cudaMemset(all, 0, N * tn * sizeof(int)));
        CUDA_CHECK(cudaDeviceSynchronize()); /* the fills are on the legacy stream, not on s */
        CHECK_EQ(nvshmemx_team_sync_on_stream(team, s), 0);
        CHECK_EQ(nvshmemx_int_max_reduce_on_stream(team, sum, src, N, s), 0);
        CHECK_EQ(nvshmemx_int_alltoall_on_stream(team, all, src, N / tn, s), 0);
        CHECK_EQ(nvshmemx_barrier_on_stream(team, s), 0);
        CUDA_CHECK(cudaStreamSynchronize(s));
        CUDA_CHECK(cudaMemcpy(h.data(), sum, N * sizeof(int), cudaMemcpyDeviceToHost));
        for (int i = 0; i < N; i++) CHECK(h[i] == (tn - 1) * 1000 + i, "%s: on-stream max[%d] = %d", name, i, h[i]);
        int blk = N / tn;
        CUDA_CHECK(cudaMemcpy(h.data(), all, blk * tn * sizeof(int), cudaMemcpyDeviceToHost));
        for (int k = 0; k < tn; k++)
            for (int i = 0; i < blk; i++)
                CHECK(h[k * blk + i] == k * 1000 + tme * blk + i, "%s: on-stream alltoall[%d][%d] = %d", name, k, i, h[k * blk + i]);
        CHECK_EQ(nvshmem_int_min_reducescatter(team, sum, src, N / tn), 0);
        CUDA_CHECK(cudaMemcpy(h.data(), sum, blk * sizeof(int), cudaMemcpyDeviceToHost));
        for (int i = 0; i < blk; i++) CHECK(h[i] == tme * blk + i, "%s: reducescatter[%d] = %d", name, i, h[i]);
        CHECK_EQ(nvshmem_barrier(team), 0);
        CUDA_CHECK(cudaStreamDestroy(s));
    }
    nvshmem_barrier_all();
    nvshmem_free(bc);
    nvshmem_free(all);
    nvshmem_free(sum);
    nvshmem_free(src);
}

/* The job's host layout from the host names (a hash per PE, exchanged through the heap). */
struct HostLayout {
    int node_size, node_index, hosts, host_index, last_in_node;
};
static HostLayout host_layout(void) {
    char name[256] = {0};
    gethostname(name, sizeof name - 1);
    unsigned long long mine = 1469598103934665603ull;
    for (const char *c = name; *c; c++) mine = (mine ^ (unsigned char)*c) * 1099511628211ull;
    unsigned long long *all = (unsigned long long *)nvshmem_calloc(npes, sizeof mine);
    for (int p = 0; p < npes; p++) nvshmem_putmem(&all[me], &mine, sizeof mine, p);
    nvshmem_barrier_all();
    std::vector<unsigned long long> hash(npes);
    CUDA_CHECK(cudaMemcpy(hash.data(), all, npes * sizeof mine, cudaMemcpyDeviceToHost));
    nvshmem_barrier_all();
    nvshmem_free(all);
    HostLayout h = {0, 0, 0, 0, -1};
    std::vector<unsigned long long> seen; /* host hashes in order of their first PE */
    for (int p = 0; p < npes; p++) {
        if (std::find(seen.begin(), seen.end(), hash[p]) == seen.end()) seen.push_back(hash[p]);
        if (hash[p] != hash[me]) continue;
        if (p < me) h.node_index++;
        if (p == npes - 1) h.last_in_node = h.node_size;
        h.node_size++;
    }
    h.hosts = (int)seen.size();
    h.host_index = (int)(std::find(seen.begin(), seen.end(), hash[me]) - seen.begin());
    return h;
}

int main(void) {
    test_init();
    me = nvshmem_my_pe();
    npes = nvshmem_n_pes();
    /* Predefined handles (NVSHMEM's values). */
    CHECK_EQ(NVSHMEM_TEAM_WORLD, 0);
    CHECK_EQ(NVSHMEM_TEAM_SHARED, 1);
    CHECK_EQ(NVSHMEMX_TEAM_NODE, 2);
    CHECK_EQ(NVSHMEM_TEAM_INVALID, -1);
    /* SHARED and NODE are this host's PEs, SAME_MYPE_NODE the PEs of this node rank on every
     * host: checked against the host names the PEs report (ctest/cuda/crosshost.sh runs the PEs
     * in namespaced hosts, each its own name; on one host both are the world and this PE). */
    HostLayout h = host_layout();
    CHECK_EQ(nvshmem_team_my_pe(NVSHMEM_TEAM_WORLD), me);
    CHECK_EQ(nvshmem_team_n_pes(NVSHMEM_TEAM_WORLD), npes);
    for (int t = 1; t <= 2; t++) {
        CHECK_EQ(nvshmem_team_my_pe(t), h.node_index);
        CHECK_EQ(nvshmem_team_n_pes(t), h.node_size);
    }
    CHECK_EQ(nvshmem_team_my_pe(NVSHMEMX_TEAM_SAME_MYPE_NODE), h.host_index);
    CHECK_EQ(nvshmem_team_n_pes(NVSHMEMX_TEAM_SAME_MYPE_NODE), h.hosts);
    CHECK_EQ(nvshmem_team_my_pe(NVSHMEM_TEAM_INVALID), -1);
    CHECK_EQ(nvshmem_team_n_pes(NVSHMEM_TEAM_INVALID), -1);
    CHECK_EQ(nvshmem_team_my_pe(40), -1);
    CHECK_EQ(nvshmem_team_translate_pe(NVSHMEM_TEAM_WORLD, npes - 1, NVSHMEMX_TEAM_NODE), h.last_in_node);
    CHECK_EQ(nvshmem_team_translate_pe(NVSHMEM_TEAM_WORLD, npes, NVSHMEMX_TEAM_NODE), -1);

    /* Splits. */
    nvshmem_team_config_t cfg = NVSHMEM_TEAM_CONFIG_INITIALIZER;
    cfg.num_contexts = 2;
    nvshmem_team_t dup = NVSHMEM_TEAM_INVALID, last = NVSHMEM_TEAM_INVALID, first = NVSHMEM_TEAM_INVALID;
    CHECK_EQ(nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, 0, 1, npes, &cfg, NVSHMEM_TEAM_CONFIG_MASK_NUM_CONTEXTS, &dup), 0);
    CHECK(dup >= NVSHMEM_TEAMS_MIN, "split gave handle %d, below NVSHMEM_TEAMS_MIN", dup);
    CHECK_EQ(nvshmem_team_my_pe(dup), me);
    CHECK_EQ(nvshmem_team_n_pes(dup), npes);
    nvshmem_team_config_t got = NVSHMEM_TEAM_CONFIG_INITIALIZER;
    nvshmem_team_get_config(dup, &got);
    CHECK_EQ(got.num_contexts, 2);
    CHECK_EQ(nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, npes - 1, 1, 1, NULL, 0, &last), 0);
    CHECK_EQ(nvshmem_team_split_strided(dup, 0, 1, 1, NULL, 0, &first), 0);
    CHECK_EQ(last != NVSHMEM_TEAM_INVALID, me == npes - 1);
    CHECK_EQ(first != NVSHMEM_TEAM_INVALID, me == 0);
    if (me == npes - 1) {
        CHECK_EQ(nvshmem_team_n_pes(last), 1);
        CHECK_EQ(nvshmem_team_my_pe(last), 0);
        CHECK_EQ(nvshmem_team_translate_pe(last, 0, NVSHMEM_TEAM_WORLD), npes - 1);
        CHECK_EQ(nvshmem_team_translate_pe(last, 0, dup), npes - 1);
    }
    nvshmem_team_t row = NVSHMEM_TEAM_INVALID, col = NVSHMEM_TEAM_INVALID, wide = NVSHMEM_TEAM_INVALID, single = NVSHMEM_TEAM_INVALID;
    CHECK_EQ(nvshmem_team_split_2d(NVSHMEM_TEAM_WORLD, 1, NULL, 0, &row, NULL, 0, &col), 0);
    CHECK_EQ(nvshmem_team_n_pes(row), 1);
    CHECK_EQ(nvshmem_team_my_pe(row), 0);
    CHECK_EQ(nvshmem_team_n_pes(col), npes);
    CHECK_EQ(nvshmem_team_my_pe(col), me);
    CHECK_EQ(nvshmem_team_split_2d(dup, npes, NULL, 0, &wide, NULL, 0, &single), 0);
    CHECK_EQ(nvshmem_team_n_pes(wide), npes);
    CHECK_EQ(nvshmem_team_n_pes(single), 1);
    CHECK_EQ(nvshmem_team_translate_pe(single, 0, NVSHMEM_TEAM_WORLD), me);

    /* Strided teams: the even and the odd PEs. */
    nvshmem_team_t evens = NVSHMEM_TEAM_INVALID, odds = NVSHMEM_TEAM_INVALID;
    CHECK_EQ(nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, NULL, 0, &evens), 0);
    CHECK_EQ(nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, 1, 2, npes / 2, NULL, 0, &odds), 0);
    nvshmem_team_t mine = me % 2 ? odds : evens, other = me % 2 ? evens : odds;
    CHECK_EQ(other, NVSHMEM_TEAM_INVALID);
    CHECK_EQ(nvshmem_team_my_pe(mine), me / 2);
    CHECK_EQ(nvshmem_team_n_pes(mine), me % 2 ? npes / 2 : (npes + 1) / 2);
    CHECK_EQ(nvshmem_team_translate_pe(mine, 0, NVSHMEM_TEAM_WORLD), me % 2);
    CHECK_EQ(nvshmem_team_translate_pe(NVSHMEM_TEAM_WORLD, me, mine), me / 2);
    CHECK_EQ(nvshmem_team_translate_pe(NVSHMEM_TEAM_WORLD, (me + 1) % npes, mine), npes > 1 && (me + 1) % npes % 2 == me % 2 ? (me + 1) % npes / 2 : -1);

    /* A split that describes no team fails on every PE, and gives NVSHMEM_TEAM_INVALID. */
    nvshmem_team_t bad = 12345;
    CHECK_EQ(nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, 0, 1, npes + 1, NULL, 0, &bad), NVSHMEMX_ERROR_INVALID_VALUE);
    CHECK_EQ(bad, NVSHMEM_TEAM_INVALID);
    nvshmem_team_t bx = 12345, by = 12345;
    CHECK_EQ(nvshmem_team_split_2d(NVSHMEM_TEAM_WORLD, 0, NULL, 0, &bx, NULL, 0, &by), NVSHMEMX_ERROR_INVALID_VALUE);
    CHECK_EQ(bx, NVSHMEM_TEAM_INVALID);
    CHECK_EQ(by, NVSHMEM_TEAM_INVALID);

    /* The device sees what the host sees, for every handle. */
    std::vector<int> handles = {NVSHMEM_TEAM_WORLD, NVSHMEM_TEAM_SHARED, NVSHMEMX_TEAM_NODE, NVSHMEMX_TEAM_SAME_MYPE_NODE,
                                NVSHMEM_TEAM_INVALID, 40, dup, last, first, row, col, wide, single, evens, odds};
    check_queries(handles);

    /* Collectives on split teams, in device code and from the host. */
    check_team_collectives(dup, "dup");
    check_team_collectives(col, "col");
    check_team_collectives(single, "single");
    check_team_collectives(last, "last");
    check_team_collectives(evens, "evens");
    check_team_collectives(odds, "odds");

    /* 2-D grids with more than one row and column (4 PEs: 2x2; 8 PEs: 2x4 and 4x2): each row
     * team holds xrange consecutive PEs, each column team the PEs xrange apart. Collectives
     * run on rows and columns at once, so teams that share PEs but not members overlap in time. */
    for (int xrange = 2; npes >= 4 && xrange <= npes / 2 && npes % xrange == 0; xrange *= 2) {
        nvshmem_team_t r = NVSHMEM_TEAM_INVALID, c = NVSHMEM_TEAM_INVALID;
        CHECK_EQ(nvshmem_team_split_2d(NVSHMEM_TEAM_WORLD, xrange, NULL, 0, &r, NULL, 0, &c), 0);
        int rows = npes / xrange;
        CHECK_EQ(nvshmem_team_n_pes(r), xrange);
        CHECK_EQ(nvshmem_team_my_pe(r), me % xrange);
        CHECK_EQ(nvshmem_team_n_pes(c), rows);
        CHECK_EQ(nvshmem_team_my_pe(c), me / xrange);
        CHECK_EQ(nvshmem_team_translate_pe(r, 0, NVSHMEM_TEAM_WORLD), me / xrange * xrange);
        CHECK_EQ(nvshmem_team_translate_pe(c, 0, NVSHMEM_TEAM_WORLD), me % xrange);
        CHECK_EQ(nvshmem_team_translate_pe(r, 0, c), me % xrange == 0 ? me / xrange : -1);
        check_queries(std::vector<int>{r, c});
        char name[32];
        snprintf(name, sizeof name, "row%dx", xrange);
        check_team_collectives(r, name);
        snprintf(name, sizeof name, "col%dx", xrange);
        check_team_collectives(c, name);
        nvshmem_team_destroy(r);
        nvshmem_team_destroy(c);
        if (me == 0) printf("teams: 2-D split with xrange %d (%d x %d) ok\n", xrange, rows, xrange);
    }

    /* Destroy: the handles go dead on the host and the device; freed slots are reused and the
     * device table follows. */
    nvshmem_team_t destroyed[] = {wide, single, row, col, first, last, evens, odds};
    for (nvshmem_team_t t : destroyed) nvshmem_team_destroy(t);
    for (nvshmem_team_t t : destroyed)
        if (t != NVSHMEM_TEAM_INVALID) CHECK_EQ(nvshmem_team_n_pes(t), -1);
    check_queries(std::vector<int>(destroyed, destroyed + 8));
    for (int round = 0; round < 50; round++) {
        nvshmem_team_t t = NVSHMEM_TEAM_INVALID;
        int size = round % 2 ? 1 : npes;
        CHECK_EQ(nvshmem_team_split_strided(dup, 0, 1, size, NULL, 0, &t), 0);
        if (me < size) {
            CHECK_EQ(nvshmem_team_n_pes(t), size);
            check_queries(std::vector<int>{t});
            nvshmem_team_destroy(t);
        } else {
            CHECK_EQ(t, NVSHMEM_TEAM_INVALID);
        }
    }
    nvshmem_team_destroy(dup);
    CHECK_EQ(nvshmem_team_my_pe(dup), -1);
    nvshmem_team_destroy(NVSHMEM_TEAM_INVALID); /* allowed, does nothing */
    if (me == 0) printf("teams: handles, splits, device table, collectives on split teams: ok\n");
    return test_pass("team");
}
