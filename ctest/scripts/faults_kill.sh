#!/usr/bin/env bash
# A PE SIGKILLs itself while the others wait in a barrier: rshmemrun must notice, name the PE
# and the signal, stop the others within a few seconds, exit 128+9, and leave nothing behind.
source "$(dirname "$0")/../programs/common.sh"
build fault_victim

for np in 2 4; do
    dir=$WORK/np$np && mkdir -p "$dir"
    target=$((np - 1))
    before=$(ls -a /dev/shm)
    start=$SECONDS
    timeout 60 "$RUN" -n $np "$WORK/fault_victim" kill "$dir" $target >"$dir/out" 2>"$dir/err"
    rc=$? took=$((SECONDS - start))
    echo "--- np=$np: exit $rc after ${took}s; stderr:"; cat "$dir/err"
    [ $rc -eq 137 ] && pass "np=$np: rshmemrun exits 137 (128+SIGKILL)" || fail "np=$np: exit status $rc, want 137"
    [ $took -le 10 ] && pass "np=$np: the job ended within 10 s (${took}s)" || fail "np=$np: the job took ${took}s"
    pid=$(cat "$dir/pid.$target" 2>/dev/null)
    grep -q "PE $target (pid $pid) was killed by signal 9 (SIGKILL)" "$dir/err" \
        && pass "np=$np: the launcher names PE $target, its pid and SIGKILL" \
        || fail "np=$np: no 'PE $target (pid $pid) was killed by signal 9 (SIGKILL)' on stderr"
    grep -q "barrier completed" "$dir/out" && fail "np=$np: a barrier completed without the dead PE"
    pids_gone "$dir" 5 && pass "np=$np: no PE process is left" || fail "np=$np: PE processes survived"
    after=$(ls -a /dev/shm)
    [ "$before" = "$after" ] && pass "np=$np: /dev/shm unchanged" || fail "np=$np: /dev/shm changed: $(diff <(echo "$before") <(echo "$after"))"
done
finish
