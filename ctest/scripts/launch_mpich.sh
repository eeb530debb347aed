#!/usr/bin/env bash
# The same binary under MPICH's hydra (PMI-1 wire protocol): 1, 2 and 4 PEs put to each
# other, synchronise, and may finalize and initialise again. NVSHMEMX_INIT_WITH_MPI_COMM over
# MPICH's communicators.
source "$(dirname "$0")/../programs/common.sh"
HYDRA=$(command -v mpiexec.hydra)
if [ -z "$HYDRA" ]; then
    echo "FAIL: mpiexec.hydra is not installed (Debian/Ubuntu: apt-get install mpich); this test needs MPICH's launcher"
    exit 1
fi
build launch_check
build fault_victim

for np in 1 2 4; do
    check_run "mpiexec.hydra -n $np" $np 1 "$HYDRA" -n $np "$WORK/launch_check"
done
check_run "mpiexec.hydra -n 2, two rounds, implicit finalize" 2 2 "$HYDRA" -n 2 "$WORK/launch_check" 2 implicit
out=$(RSHMEM_DEBUG=INFO timeout 60 "$HYDRA" -n 2 "$WORK/launch_check" 2>&1)
grep -q "bootstrap pmi-1" <<<"$out" && pass "the PEs used the PMI-1 bootstrap" || fail "the PMI-1 bootstrap was not used: $out"

# nvshmemx_init_attr over an MPICH communicator (an int handle).
check_mpi_comm_init "$(command -v mpicc.mpich || echo mpicc.mpich)" "$HYDRA"

# shmem_global_exit(3) while PE 0 waits in a barrier and PE 1 sleeps: hydra ends the job with 3.
dir=$WORK/exit3 && mkdir -p "$dir"
timeout 60 "$HYDRA" -n 3 "$WORK/fault_victim" exit3 "$dir" 2 >"$dir/out" 2>&1; rc=$?
[ $rc -eq 3 ] && pass "shmem_global_exit(3) under hydra: the job exits 3" || { fail "global exit under hydra: exit $rc, want 3"; cat "$dir/out"; }
pids_gone "$dir" 5 && pass "no PE is left after the global exit" || fail "PEs survived the global exit under hydra"
finish
