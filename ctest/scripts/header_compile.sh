#!/usr/bin/env bash
# The installed shmem.h/shmemx.h compile cleanly as C99, C11 (with the _Generic interfaces) and
# C++11, and an OpenSHMEM program written for another implementation compiles unchanged.
# Compile-only (-c): linking every routine is ctest/host/api_link.c's job.
# Usage: header_compile.sh <install prefix> [scratch dir]
set -euo pipefail
prefix=${1:?usage: header_compile.sh <install prefix> [scratch dir]}
inc=$prefix/include
work=$(mktemp -d "${2:-${TMPDIR:-/tmp}}/header_compile.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail=0

compile() { # compile <description> <compiler and flags...> -- <source>
    local what=$1; shift
    if "$@" -I"$inc" -c -o "$work/out.o" 2>"$work/err"; then
        echo "ok:   $what"
    else
        echo "FAIL: $what"; sed 's/^/    /' "$work/err"; fail=1
    fi
}

# 1. The headers alone, in every language mode we promise.
cat >"$work/plain.c" <<'EOF'
#include <shmem.h>
#include <shmemx.h>
int main(void) { return SHMEM_MAJOR_VERSION == 1 ? 0 : 1; }
EOF
cp "$work/plain.c" "$work/plain.cpp"
compile "C99 -pedantic"  gcc -std=c99 -pedantic -Wall -Wextra -Werror "$work/plain.c"
compile "C11 -pedantic"  gcc -std=c11 -pedantic -Wall -Wextra -Werror "$work/plain.c"
compile "C++11"          g++ -std=c++11 -Wall -Wextra -Werror "$work/plain.cpp"

# 2. The C11 generic interfaces: several types, with and without a context.
cat >"$work/generic.c" <<'EOF'
#include <shmem.h>
#include <stdint.h>
static long dl[4], sl[4];
static int di[4];
static double dd[4];
static const double cd[4] = {1, 2, 3, 4};
static unsigned int du;
static long long dll;
static float _Complex zf[2], zs[2];
static int8_t d8[4], s8[4];
static uint64_t sig;
static volatile long flag;
int main(void)
{
    shmem_ctx_t ctx = SHMEM_CTX_DEFAULT;
    size_t idx[4];
    long r = 0;
    double g = 0;
    shmem_put(dl, sl, 4, 1);
    shmem_put(ctx, dd, cd, 4, 1);
    shmem_get(di, di, 4, 0);
    shmem_get(ctx, dl, sl, 4, 0);
    shmem_p(di, 3, 0);
    shmem_p(ctx, dd, 1.5, 0);
    r += shmem_g(sl, 0);
    g += shmem_g(cd, 0) + shmem_g(ctx, cd, 0);
    shmem_iput(dl, sl, 2, 1, 2, 0);
    shmem_iget(ctx, dd, cd, 1, 2, 2, 0);
    shmem_put_nbi(ctx, dl, sl, 2, 0);
    shmem_get_nbi(dd, cd, 2, 0);
    shmem_put_signal(dl, sl, 4, &sig, 1, SHMEM_SIGNAL_SET, 0);
    shmem_put_signal_nbi(ctx, dd, cd, 4, &sig, 1, SHMEM_SIGNAL_ADD, 0);
    r += shmem_atomic_fetch(dl, 0) + shmem_atomic_fetch(ctx, (const long *)dl, 0);
    shmem_atomic_set(dd, 2.0, 0);
    shmem_atomic_set(ctx, &du, 1u, 0);
    r += shmem_atomic_compare_swap(dl, 1L, 2L, 0) + shmem_atomic_swap(ctx, dl, 3L, 0);
    r += shmem_atomic_fetch_inc(&dll, 0);
    shmem_atomic_inc(ctx, &du, 0);
    r += shmem_atomic_fetch_add(dl, 2L, 0);
    shmem_atomic_add(ctx, di, 2, 0);
    r += shmem_atomic_fetch_and(&du, 1u, 0) + shmem_atomic_fetch_or(ctx, &du, 2u, 0);
    shmem_atomic_xor(dl, 1L, 0);
    shmem_atomic_fetch_nbi(&r, dl, 0);
    shmem_atomic_fetch_add_nbi(ctx, &r, dl, 1L, 0);
    shmem_atomic_compare_swap_nbi(&r, dl, 1L, 2L, 0);
    shmem_wait_until(dl, SHMEM_CMP_GE, 0L);
    shmem_wait_until(&flag, SHMEM_CMP_NE, 1L);
    shmem_wait_until_all(di, 4, NULL, SHMEM_CMP_EQ, 0);
    r += (long)shmem_wait_until_some_vector(dl, 4, idx, NULL, SHMEM_CMP_EQ, sl);
    r += shmem_test(&sig, SHMEM_CMP_EQ, 0) + (long)shmem_test_any(dl, 4, NULL, SHMEM_CMP_GT, 0L);
    shmem_broadcast(SHMEM_TEAM_WORLD, dl, sl, 4, 0);
    shmem_collect(SHMEM_TEAM_WORLD, dd, cd, 1);
    shmem_fcollect(SHMEM_TEAM_WORLD, di, di, 1);
    shmem_alltoall(SHMEM_TEAM_WORLD, dl, sl, 1);
    shmem_alltoalls(SHMEM_TEAM_WORLD, dl, sl, 1, 1, 1);
    shmem_sum_reduce(SHMEM_TEAM_WORLD, zf, zs, 2);
    shmem_prod_reduce(SHMEM_TEAM_WORLD, dd, cd, 4);
    shmem_max_reduce(SHMEM_TEAM_WORLD, dl, sl, 4);
    shmem_and_reduce(SHMEM_TEAM_WORLD, d8, s8, 4);
    shmem_xor_reduce(SHMEM_TEAM_WORLD, &du, &du, 1);
    shmem_sync(SHMEM_TEAM_WORLD);
    /* deprecated generic names */
    r += shmem_swap(dl, 1L, 0) + shmem_cswap(di, 0, 1, 0) + shmem_finc(dl, 0) + shmem_fadd(dl, 1L, 0);
    r += shmem_fetch(dl, 0);
    shmem_inc(dl, 0);
    shmem_add(dl, 1L, 0);
    shmem_set(dd, 2.0, 0);
    return (int)(r + (long)g);
}
EOF
compile "C11 _Generic interfaces" gcc -std=c11 -pedantic -Wall -Wextra -Werror "$work/generic.c"

# 3. An unsupported type in a generic call is a compile error, not a silent wrong call.
cat >"$work/badtype.c" <<'EOF'
#include <shmem.h>
static void *p[2];
int main(void) { shmem_put(SHMEM_CTX_DEFAULT, p, p, 2, 0); return 0; }
EOF
if gcc -std=c11 -I"$inc" -c -o "$work/out.o" "$work/badtype.c" 2>/dev/null; then
    echo "FAIL: shmem_put(ctx, void **, ...) compiled"; fail=1
else
    echo "ok:   unsupported generic type rejected"
fi

# 4. A program in the style of Open MPI's OSHMEM examples (deprecated names, pSync arrays,
#    _SHMEM_ constants, active-set collectives), compiled unchanged in gnu11 and C++.
cat >"$work/oshmem_style.c" <<'EOF'
#include <stdio.h>
#include <shmem.h>

#define N 8
long pSync[_SHMEM_REDUCE_SYNC_SIZE];
long pWrk[_SHMEM_REDUCE_MIN_WRKDATA_SIZE > N ? _SHMEM_REDUCE_MIN_WRKDATA_SIZE : N];
long src[N], dst[N];
static volatile long flag;

int main(void)
{
    int i, me, npes;
    long total;
    start_pes(0);
    me = _my_pe();
    npes = _num_pes();
    for (i = 0; i < _SHMEM_REDUCE_SYNC_SIZE; i++)
        pSync[i] = _SHMEM_SYNC_VALUE;
    for (i = 0; i < N; i++)
        src[i] = me + i;
    shmem_barrier_all();
    shmem_long_sum_to_all(dst, src, N, 0, 0, npes, pWrk, pSync);
    shmem_broadcast64(dst, src, N, 0, 0, 0, npes, pSync);
    shmem_long_put(dst, src, N, (me + 1) % npes);
    shmem_fence();
    shmem_long_p((long *)&flag, 1, (me + 1) % npes);
    shmem_long_wait_until(&flag, SHMEM_CMP_EQ, 1);
    shmem_wait(&flag, 0);
    total = shmem_long_fadd(&dst[0], 1, 0) + shmem_long_finc(&dst[1], 0);
    shmem_ctx_long_put(SHMEM_CTX_DEFAULT, dst, src, N, me);
    shmem_ctx_quiet(SHMEM_CTX_DEFAULT);
    shmem_barrier(0, 0, npes, pSync);
    {
        long *buf = (long *)shmalloc(N * sizeof(long));
        shfree(buf);
    }
    printf("PE %d of %d: %ld\n", me, npes, total);
    shmem_finalize();
    return 0;
}
EOF
cp "$work/oshmem_style.c" "$work/oshmem_style.cpp"
compile "OSHMEM-style program, gnu11"  gcc -Wall -Wextra -Werror "$work/oshmem_style.c"
compile "OSHMEM-style program, C99"    gcc -std=c99 -Wall -Wextra -Werror "$work/oshmem_style.c"
compile "OSHMEM-style program, C++11"  g++ -std=c++11 -Wall -Wextra -Werror "$work/oshmem_style.cpp"

# 5. C++: typed routines with std::complex, teams and contexts.
cat >"$work/typed.cpp" <<'EOF'
#include <complex>
#include <shmem.h>
#include <shmemx.h>
static std::complex<double> zd[4], zs[4];
int main()
{
    shmem_init();
    shmem_ctx_t ctx;
    shmem_team_t row = SHMEM_TEAM_INVALID;
    shmem_team_config_t cfg;
    cfg.num_contexts = 1;
    if (shmem_ctx_create(SHMEM_CTX_PRIVATE | SHMEM_CTX_NOSTORE, &ctx) != 0) ctx = SHMEM_CTX_INVALID;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, shmem_n_pes(), &cfg, SHMEM_TEAM_NUM_CONTEXTS, &row);
    shmem_complexd_sum_reduce(SHMEM_TEAM_WORLD, zd, zs, 4);
    shmem_team_sync(row);
    double t = shmemx_wtime();
    shmem_ctx_destroy(ctx);
    shmem_finalize();
    return t < 0;
}
EOF
compile "C++11 typed routines" g++ -std=c++11 -Wall -Wextra -Werror "$work/typed.cpp"

exit $fail
