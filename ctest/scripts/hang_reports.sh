#!/usr/bin/env bash
# RSHMEM_HANG_TIMEOUT: a wait that lasts longer says what it waits for and keeps waiting (the
# job then finishes normally); 0 keeps it quiet.
source "$(dirname "$0")/../programs/common.sh"
build hang_then_go

err=$(RSHMEM_HANG_TIMEOUT=1 timeout 60 "$RUN" -n 2 "$WORK/hang_then_go" 2.5 2>&1 >/dev/null); rc=$?
echo "--- RSHMEM_HANG_TIMEOUT=1: exit $rc"; echo "$err"
[ $rc -eq 0 ] && pass "the job still finishes (the waits go on after the report)" || fail "exit $rc"
grep -Eq "rshmem: PE 0: shmem_int_sum_reduce: has waited 1 s for PE 1 \(PE 1 is in shmem_int_wait_until\).*still waiting" <<<"$err" \
    && pass "PE 0's reduction names PE 1 and where PE 1 is" || fail "no report from PE 0's reduction naming PE 1 in shmem_int_wait_until"
grep -Eq "rshmem: PE 1: shmem_int_wait_until: has waited 1 s for the value at 0x[0-9a-f]+ to be == 1 \(it is 0\)" <<<"$err" \
    && pass "PE 1's wait names the address, comparison and value" || fail "no report from PE 1's wait"
grep -Eq "has waited 2 s" <<<"$err" && pass "reported again after twice the time" || fail "no second report at 2 s"
[ "$(grep -c 'has waited' <<<"$err")" -le 6 ] && pass "a few lines, not a flood" || fail "too many reports"

err=$(RSHMEM_HANG_TIMEOUT=0 timeout 60 "$RUN" -n 2 "$WORK/hang_then_go" 1.5 2>&1 >/dev/null); rc=$?
[ $rc -eq 0 ] && ! grep -q "has waited" <<<"$err" && pass "RSHMEM_HANG_TIMEOUT=0: silent" || fail "RSHMEM_HANG_TIMEOUT=0: exit $rc, stderr: $err"

err=$(RSHMEM_HANG_TIMEOUT=soon timeout 60 "$RUN" -n 1 "$WORK/hang_then_go" 2>&1 >/dev/null); rc=$?
[ $rc -ne 0 ] && grep -q 'RSHMEM_HANG_TIMEOUT="soon" is not valid: expected a number of seconds' <<<"$err" \
    && pass "a bad RSHMEM_HANG_TIMEOUT is refused" || fail "bad RSHMEM_HANG_TIMEOUT: exit $rc, stderr: $err"
finish
