#!/usr/bin/env bash
# SIGTERM and SIGINT sent to rshmemrun reach every PE: PEs with a handler observe them (and
# the job then ends normally); PEs without one die of it and the launcher reports 128+sig.
source "$(dirname "$0")/../programs/common.sh"
build fault_victim
np=3

# run_with SIGNAL MODE: starts the job, waits until every PE is ready, signals the launcher.
run_with() {
    local sig=$1 mode=$2 dir=$WORK/$1-$2
    mkdir -p "$dir"
    "$RUN" -n $np "$WORK/fault_victim" "$mode" "$dir" >"$dir/out" 2>"$dir/err" &
    local launcher=$!
    if ! wait_files "$dir/ready.*" $np 30; then
        fail "$sig/$mode: the PEs did not get ready"; kill -9 $launcher; return
    fi
    kill -s "$sig" $launcher
    local waited=0
    while kill -0 $launcher 2>/dev/null && [ $waited -lt 200 ]; do sleep 0.05; waited=$((waited + 1)); done
    if kill -0 $launcher 2>/dev/null; then fail "$sig/$mode: the job did not end within 10 s"; kill -9 $launcher; fi
    wait $launcher; RC=$?
    OUT=$(cat "$dir/out") ERR=$(cat "$dir/err")
    echo "--- $sig to rshmemrun, PEs $mode: exit $RC"; echo "$OUT"; echo "$ERR"
    pids_gone "$dir" 5 || fail "$sig/$mode: PE processes survived"
}

for sig in TERM INT; do
    run_with $sig signal
    n=$(grep -c "observed SIG$sig" <<<"$OUT")
    [ "$n" -eq $np ] && pass "SIG$sig: all $np PEs observed it" || fail "SIG$sig: $n of $np PEs observed it"
    [ $RC -eq 0 ] && pass "SIG$sig: the PEs finished normally, so the job exits 0" || fail "SIG$sig: exit $RC, want 0"

    run_with $sig nohandler
    num=$(kill -l $sig)
    [ $RC -eq $((128 + num)) ] && pass "SIG$sig without a handler: exit $((128 + num))" || fail "SIG$sig without a handler: exit $RC, want $((128 + num))"
    grep -q "was killed by signal $num (SIG$sig)" <<<"$ERR" && pass "SIG$sig: the launcher names the signal" \
        || fail "SIG$sig: no 'killed by signal $num (SIG$sig)' on stderr"
done
finish
