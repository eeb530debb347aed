#!/usr/bin/env bash
# A PE never calls shmem_init: with RSHMEM_BOOTSTRAP_TIMEOUT=2 the others must give up within
# bounded time with a message naming the missing PE, and the job must end non-zero.
source "$(dirname "$0")/../programs/common.sh"
build late_starter

for np in 2 3; do
    late=$((np - 1))
    start=$SECONDS
    err=$(RSHMEM_BOOTSTRAP_TIMEOUT=2 timeout 60 "$RUN" -n $np "$WORK/late_starter" $late 2>&1 >/dev/null)
    rc=$? took=$((SECONDS - start))
    echo "--- np=$np, PE $late late: exit $rc after ${took}s"; echo "$err"
    [ $rc -ne 0 ] && [ $rc -ne 124 ] && pass "np=$np: the job fails (exit $rc)" || fail "np=$np: exit $rc"
    [ $took -le 12 ] && pass "np=$np: within 12 s (${took}s)" || fail "np=$np: took ${took}s"
    grep -Eq "rshmem: .*shmem_init: .*timed out after 2 s waiting for PE\(s\) $late\b" <<<"$err" \
        && pass "np=$np: a PE's own error names PE $late" || fail "np=$np: no PE error naming PE $late"
    grep -q "RSHMEM_BOOTSTRAP_TIMEOUT" <<<"$err" && pass "np=$np: the message says which setting to raise" \
        || fail "np=$np: the message does not mention RSHMEM_BOOTSTRAP_TIMEOUT"
done
finish
