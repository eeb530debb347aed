#!/usr/bin/env bash
# shmem_global_exit and fatal errors end the job without losing what the PEs printed: stdout
# to a file or a pipe is block-buffered by C stdio, and must be flushed before the exit.
source "$(dirname "$0")/../programs/common.sh"
build print_then_exit

for mode in global fatal; do
    for np in 1 2 4; do
        dir=$WORK/$mode-np$np && mkdir -p "$dir"
        want=$([ $mode = global ] && echo 4 || echo 1)
        timeout 60 "$RUN" -n $np "$WORK/print_then_exit" $mode >"$dir/file" 2>"$dir/err"; rc=$?
        [ $rc -eq "$want" ] || fail "$mode np=$np: exit $rc, want $want: $(cat "$dir/err")"
        timeout 60 "$RUN" -n $np "$WORK/print_then_exit" $mode 2>/dev/null | cat >"$dir/pipe"
        last=$((np - 1))
        for out in file pipe; do
            grep -qx "PE $last printed this before the exit" "$dir/$out" \
                && pass "$mode np=$np: the exiting PE's output reached the $out" \
                || fail "$mode np=$np: the exiting PE's line is missing from the $out: $(cat "$dir/$out")"
            grep -q "went on" "$dir/$out" && fail "$mode np=$np: a PE went on after the exit"
        done
    done
done
finish
