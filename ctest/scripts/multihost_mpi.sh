#!/usr/bin/env bash
# The same program across namespaced hosts under MPICH's hydra (PMI-1; -launcher-exec) and Open
# MPI's mpirun (PMIx; plm_rsh_agent), both with ctest/multihost/netns-agent.sh as their ssh:
# rank 0 publishes its TCP rendezvous in the launcher's key-value store and the PEs of the other
# host join over TCP. A PE killed on host 2 ends the job on both hosts within 10 s, and nothing
# is left in either host.
source "$(dirname "$0")/../programs/common.sh"
source "$(dirname "$0")/../multihost/hosts.sh"
hosts_up rmm 2
build hosts_check

mpi_launchers
for name in hydra openmpi; do
    dir=$WORK/$name && mkdir -p "$dir"
    # shellcheck disable=SC2086
    out=$(on_host 1 timeout 90 ${LAUNCH[$name]} "$WORK/hosts_check" report "$dir" 2>&1 </dev/null); rc=$?
    echo "--- $name, report: exit $rc"; echo "$out"
    got=$(grep -cE "^PE (0|1) of 4 on rmm-h1: ok|^PE (2|3) of 4 on rmm-h2: ok" <<<"$out")
    [ $rc -eq 0 ] && [ "$got" -eq 4 ] && pass "$name: 4 PEs on 2 hosts started and finalized" || fail "$name: exit $rc, $got of 4 right reports"
    no_leftovers "$name report"

    dir=$WORK/$name-kill && mkdir -p "$dir"
    start=$SECONDS
    # shellcheck disable=SC2086
    on_host 1 timeout 90 ${LAUNCH[$name]} "$WORK/hosts_check" kill "$dir" >"$dir/out" 2>&1 </dev/null; rc=$?
    took=$((SECONDS - start)); echo "--- $name, kill: exit $rc after ${took}s"; cat "$dir/out"
    [ $rc -ne 0 ] && [ $took -le 10 ] && pass "$name: a PE killed on host 2 ended the job within 10 s (${took}s)" || fail "$name kill: exit $rc after ${took}s"
    no_leftovers "$name kill"
done
finish
