#!/usr/bin/env bash
# A subset of the C test suite (collectives, teams, RMA) with 4 PEs over 2 namespaced hosts,
# started by MPICH's hydra (PMI-1) and Open MPI's mpirun (PMIx) with ctest/multihost/
# netns-agent.sh as their ssh; the full suite under rshmemrun --hosts is ctest/multihost/
# suite.sh (coll_barrier is left out here: ctest/multihost/pending.txt says why). Each program
# checks its own results and exits 0; nothing may be left in the hosts.
# Then shmem_global_exit(3) on host 2, while the other PEs wait in a barrier spanning both
# hosts, ends the job on both hosts with status 3 within 10 s.
source "$(dirname "$0")/../programs/common.sh"
source "$(dirname "$0")/../multihost/hosts.sh"
hosts_up rms 2
build hosts_check

mpi_launchers
for prog in coll_broadcast coll_collect coll_alltoall coll_reduce coll_deprecated coll_team rma_small; do
    [ -x "$BUILD/$prog" ] || { fail "$prog is not built in $BUILD"; continue; }
    for name in hydra openmpi; do
        # shellcheck disable=SC2086
        out=$(on_host 1 timeout 90 ${LAUNCH[$name]} "$BUILD/$prog" 2>&1 </dev/null); rc=$?
        if [ $rc -eq 0 ]; then
            pass "$name: $prog, 4 PEs on 2 hosts"
        else
            fail "$name: $prog, 4 PEs on 2 hosts: exit $rc"; echo "$out" | tail -15
        fi
    done
done
no_leftovers "every run"
for name in hydra openmpi; do
    start=$SECONDS
    # shellcheck disable=SC2086
    out=$(on_host 1 timeout 60 ${LAUNCH[$name]} "$WORK/hosts_check" exit3barrier "$WORK" 2>&1 </dev/null); rc=$?
    took=$((SECONDS - start))
    [ $rc -eq 3 ] && [ $took -le 10 ] && pass "$name: global exit during a cross-host barrier: exit 3 within 10 s (${took}s)" \
        || { fail "$name: global exit during a barrier: exit $rc after ${took}s"; echo "$out" | tail -15; }
    grep -q "nobody stopped me" <<<"$out" && fail "$name: a PE ran on after the global exit"
    no_leftovers "$name global exit"
done
finish
