#!/usr/bin/env bash
# A program built with Open MPI's oshcc started by rshmemrun without LD_PRELOAD (issue 21
# item 5): it runs liboshmem, which never contacts rshmemrun, so each PE would run alone.
# rshmemrun must say so, name LD_PRELOAD and rshmem's library, and stop the job non-zero within
# seconds; with LD_PRELOAD the same binary runs as one job. Skipped without Open MPI's oshcc.
source "$(dirname "$0")/../programs/common.sh"
OSHCC=$(PATH=$PATH_WITHOUT_PREFIX command -v oshcc) || { echo "SKIP: Open MPI's oshcc is not installed"; exit 0; }
"$OSHCC" -O1 "$PROGRAMS/ring_hello.c" -o "$WORK/ring_oshmem" || { fail "oshcc cannot build ring_hello.c"; finish; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=^rdma
start=$SECONDS
out=$(timeout 60 "$RUN" -n 2 "$WORK/ring_oshmem" 2>&1); rc=$?
took=$((SECONDS - start))
echo "$out" | tail -5
[ $rc -ne 0 ] && [ $rc -ne 124 ] && pass "without LD_PRELOAD: refused (exit $rc) after ${took}s" || fail "without LD_PRELOAD: exit $rc after ${took}s"
grep -q "is linked with liboshmem.so, another OpenSHMEM library" <<<"$out" && grep -q "LD_PRELOAD=$PREFIX/lib/librshmem.so" <<<"$out" \
    && pass "rshmemrun names liboshmem and the LD_PRELOAD to use" || fail "no explanation naming liboshmem and LD_PRELOAD=$PREFIX/lib/librshmem.so"
out=$(timeout 60 env LD_PRELOAD="$PREFIX/lib/librshmem.so" "$RUN" -n 2 "$WORK/ring_oshmem" 2>&1); rc=$?
[ $rc -eq 0 ] && [ "$(grep -c "from the left ok" <<<"$out")" -eq 2 ] && ! grep -q "another OpenSHMEM" <<<"$out" \
    && pass "with LD_PRELOAD: one job of 2 PEs, no complaint" || { fail "with LD_PRELOAD: exit $rc"; echo "$out"; }
finish
