#!/usr/bin/env bash
# A program run directly, with no launcher, is a job of one PE; it can finalize and initialise
# again, and a program that returns without shmem_finalize is finalized at exit.
source "$(dirname "$0")/../programs/common.sh"
build launch_check

UNSET=(env -u RSHMEM_RANK -u RSHMEM_NPES -u RSHMEM_STAR_ADDR -u PMI_FD -u PMIX_RANK -u OMPI_COMM_WORLD_RANK)
check_run "no launcher" 1 1 "${UNSET[@]}" "$WORK/launch_check"
check_run "no launcher, init/finalize twice" 1 2 "${UNSET[@]}" "$WORK/launch_check" 2
check_run "no launcher, implicit finalize at exit" 1 2 "${UNSET[@]}" "$WORK/launch_check" 2 implicit
check_run "no launcher, RSHMEM_BOOTSTRAP=single" 1 1 "${UNSET[@]}" RSHMEM_BOOTSTRAP=single "$WORK/launch_check"
finish
