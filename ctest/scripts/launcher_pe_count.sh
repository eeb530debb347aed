#!/usr/bin/env bash
# rshmemrun refuses a PE count it could not start (above its documented bound of 4096, or not
# below RLIMIT_NPROC) at once, with a message, before starting any process.
source "$(dirname "$0")/../programs/common.sh"
marker=$WORK/started
for case in "-n 100000|rshmemrun starts at most 4096 PEs" "-n 4097|rshmemrun starts at most 4096 PEs"; do
    args=${case%%|*} want=${case#*|}
    start=$SECONDS
    # shellcheck disable=SC2086
    err=$(timeout 20 "$RUN" $args touch "$marker" 2>&1); rc=$?
    [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q -- "$want" <<<"$err" && pass "$args: refused: $err" || fail "$args: exit $rc: $err"
    [ $((SECONDS - start)) -le 2 ] && [ ! -e "$marker" ] && pass "$args: nothing started" || fail "$args: a PE ran or it took long"
done
err=$(bash -c "ulimit -S -u 16; timeout 20 '$RUN' -n 16 touch '$marker'" 2>&1); rc=$?
[ $rc -ne 0 ] && grep -q "this user may run only 16 processes (RLIMIT_NPROC" <<<"$err" && [ ! -e "$marker" ] \
    && pass "-n 16 under ulimit -u 16: refused: $err" || fail "-n 16 under ulimit -u 16: exit $rc: $err"
"$RUN" -n 3 touch "$marker" && [ -e "$marker" ] && pass "-n 3 still runs" || fail "-n 3 did not run"
finish
