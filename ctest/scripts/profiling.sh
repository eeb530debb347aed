#!/usr/bin/env bash
# The OpenSHMEM profiling interface (issue 21 item 3): every shmem_/shmemx_ routine of the
# headers is exported as pshmem_/pshmemx_ at the same address; a PMPI-style library
# (programs/count_calls.c) that defines shmem_init, shmem_putmem, shmem_int_p,
# shmem_barrier_all, shmem_pcontrol and shmem_finalize and forwards to pshmem_* counts exactly
# the calls programs/profiled.c makes, both preloaded and linked before librshmem, and the data
# still arrives.
source "$(dirname "$0")/../programs/common.sh"
LIB=$PREFIX/lib/librshmem.so
INC=$PREFIX/include

# Same address for every profiled name.
nm -D --defined-only "$LIB" | awk '{sub(/@.*/, "", $3); print $3, $1}' | sort >"$WORK/exports"
declared=$(grep -oE '\bp(shmemx?_[a-z0-9_]+)\(' "$INC/pshmem.h" | tr -d '(' | sort -u)
missing=0 differ=0 n=0
while read -r p; do
    n=$((n + 1))
    pa=$(awk -v s="$p" '$1 == s {print $2}' "$WORK/exports")
    sa=$(awk -v s="${p#p}" '$1 == s {print $2}' "$WORK/exports")
    if [ -z "$pa" ]; then missing=$((missing + 1)); [ $missing -le 5 ] && echo "not exported: $p"
    elif [ "$pa" != "$sa" ]; then differ=$((differ + 1)); [ $differ -le 5 ] && echo "$p at $pa, ${p#p} at $sa"; fi
done <<<"$declared"
[ "$n" -gt 1500 ] && [ $missing -eq 0 ] && [ $differ -eq 0 ] && pass "all $n pshmem_ names exported at their shmem_ routine's address" \
    || fail "pshmem names: $n declared, $missing not exported, $differ at another address"

gcc -std=gnu11 -O1 -Wall -fPIC -shared -I"$INC" "$PROGRAMS/count_calls.c" -o "$WORK/libcount_calls.so" \
    -L"$PREFIX/lib" -lrshmem -Wl,-rpath,"$PREFIX/lib" || { fail "cannot build the profiling library"; finish; }
gcc -std=gnu11 -O1 -Wall -I"$INC" "$PROGRAMS/profiled.c" -o "$WORK/profiled" -L"$PREFIX/lib" -lrshmem -Wl,-rpath,"$PREFIX/lib" \
    || { fail "cannot build profiled.c"; finish; }
gcc -std=gnu11 -O1 -Wall -I"$INC" "$PROGRAMS/profiled.c" -o "$WORK/profiled_linked" -L"$WORK" -lcount_calls \
    -L"$PREFIX/lib" -lrshmem -Wl,-rpath,"$WORK:$PREFIX/lib" || { fail "cannot link profiled.c with the library first"; finish; }

# check LABEL NP CMD...: each PE's counts and data.
check() {
    local label=$1 np=$2; shift 2
    local out rc want="counted: init 1 putmem 3 int_p 5 barrier_all 2"
    out=$(timeout 60 "$@" 2>&1); rc=$?
    if [ $rc -eq 0 ] && [ "$(grep -c "$want" <<<"$out")" -eq "$np" ] && [ "$(grep -c "data ok" <<<"$out")" -eq "$np" ]; then
        pass "$label: every PE counted '$want' and got its data"
    else
        fail "$label: exit $rc:"; echo "$out"
    fi
}
check "LD_PRELOAD, 2 PEs" 2 env LD_PRELOAD="$WORK/libcount_calls.so" "$RUN" -n 2 "$WORK/profiled"
check "LD_PRELOAD, 3 PEs" 3 env LD_PRELOAD="$WORK/libcount_calls.so" "$RUN" -n 3 "$WORK/profiled"
check "linked before librshmem, 2 PEs" 2 "$RUN" -n 2 "$WORK/profiled_linked"
out=$(timeout 60 "$RUN" -n 2 "$WORK/profiled" 2>&1); rc=$?
[ $rc -eq 0 ] && ! grep -q counted <<<"$out" && [ "$(grep -c "data ok" <<<"$out")" -eq 2 ] \
    && pass "without the library: nothing counted, data ok (shmem_pcontrol is a no-op)" || { fail "without the library: exit $rc"; echo "$out"; }
finish
