#!/usr/bin/env bash
# The same binary under Open MPI's mpirun and oshrun (PMIx, libpmix loaded at run time),
# with 2 and 4 PEs; with libpmix made unloadable the job is refused (no private channel).
# NVSHMEMX_INIT_WITH_MPI_COMM over Open MPI's communicators.
source "$(dirname "$0")/../programs/common.sh"
# Open MPI's launchers, not rshmem's oshrun (an alias of rshmemrun in the install's bin).
MPIRUN=$(PATH=$PATH_WITHOUT_PREFIX command -v mpirun) OSHRUN=$(PATH=$PATH_WITHOUT_PREFIX command -v oshrun)
if [ -z "$MPIRUN" ] || ! "$MPIRUN" --version 2>&1 | grep -q "Open MPI"; then
    echo "FAIL: Open MPI's mpirun is not installed (Debian/Ubuntu: apt-get install openmpi-bin)"
    exit 1
fi
build launch_check
build fault_victim
# Open MPI refuses to run as root unless told; more PEs than cores need --oversubscribe.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
FLAGS=(--oversubscribe)

for np in 2 4; do
    check_run "mpirun -np $np" $np 1 "$MPIRUN" "${FLAGS[@]}" -np $np "$WORK/launch_check"
done
if [ -n "$OSHRUN" ]; then
    for np in 2 4; do
        check_run "oshrun -np $np" $np 1 "$OSHRUN" "${FLAGS[@]}" -np $np "$WORK/launch_check"
    done
else
    fail "oshrun is not installed (it comes with openmpi-bin)"
fi
check_run "mpirun -np 2, two rounds, implicit finalize" 2 2 "$MPIRUN" "${FLAGS[@]}" -np 2 "$WORK/launch_check" 2 implicit
out=$(timeout 60 "$MPIRUN" "${FLAGS[@]}" -np 2 -x RSHMEM_DEBUG=INFO "$WORK/launch_check" 2>&1)
grep -q "bootstrap pmix" <<<"$out" && pass "the PEs used the PMIx bootstrap" || fail "the PMIx bootstrap was not used: $out"

# Without libpmix there is no private channel for the job secret: refuse, saying what to do.
out=$(timeout 60 "$MPIRUN" "${FLAGS[@]}" -np 2 -x RSHMEM_PMIX_LIBRARY=/nonexistent/libpmix.so "$WORK/launch_check" 2 2>&1); rc=$?
[ $rc -ne 0 ] && grep -q "libpmix could not be loaded (/nonexistent/libpmix.so" <<<"$out" && grep -q "Install libpmix" <<<"$out" \
    && grep -q "rshmemrun -n N prog" <<<"$out" \
    && pass "without libpmix the job is refused, naming libpmix and rshmemrun" || fail "without libpmix (exit $rc): $out"

# nvshmemx_init_attr over an Open MPI communicator (a pointer handle).
check_mpi_comm_init "$(command -v mpicc.openmpi || echo mpicc.openmpi)" "$MPIRUN" "${FLAGS[@]}"

# shmem_global_exit(3) while PE 0 waits in a barrier and PE 1 sleeps: mpirun ends the job with 3.
dir=$WORK/exit3 && mkdir -p "$dir"
timeout 60 "$MPIRUN" "${FLAGS[@]}" -np 3 "$WORK/fault_victim" exit3 "$dir" 2 >"$dir/out" 2>&1; rc=$?
[ $rc -eq 3 ] && pass "shmem_global_exit(3) under mpirun: the job exits 3" || { fail "global exit under mpirun: exit $rc, want 3"; cat "$dir/out"; }
pids_gone "$dir" 10 && pass "no PE is left after the global exit" || fail "PEs survived the global exit under mpirun"
finish
