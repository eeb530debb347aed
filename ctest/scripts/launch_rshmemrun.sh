#!/usr/bin/env bash
# Under rshmemrun: the PEs may finalize and initialise again (the launcher serves a new
# rendezvous), and a program that returns without shmem_finalize is finalized at exit.
source "$(dirname "$0")/../programs/common.sh"
build launch_check

for np in 1 2 4; do
    check_run "rshmemrun -n $np, three init/finalize rounds" $np 3 "$RUN" -n $np "$WORK/launch_check" 3
    check_run "rshmemrun -n $np, implicit finalize at exit" $np 2 "$RUN" -n $np "$WORK/launch_check" 2 implicit
done
finish
