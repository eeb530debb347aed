#!/usr/bin/env bash
# rshmem under a real Slurm: a throw-away cluster of 2 namespaced nodes (scripts/slurm-netns.sh;
# slurmctld, a slurmd per node, munge), PEs started by srun on both nodes.
# - srun --mpi=pmi2 (Slurm's PMI-2 plugin, which also answers the PMI-1 wire protocol rshmem
#   speaks): a put ring and a sum reduction across the nodes at 4 PEs (2 per node) and 3 PEs
#   (uneven), every element checked; then the same at 4 PEs with --mpi=pmix where this Slurm
#   has the pmix plugin (`srun --mpi=list`); a core set of the C tests (collectives, teams, RMA)
#   at 4 PEs over the nodes under each; without --mpi every task fails naming the fix.
# - faults, each ending the job within 20 s with a non-zero status and a message, leaving no PE
#   on either node: a PE SIGKILLed on node 2 under `srun -K`; the same while the others wait
#   for it in a barrier, without -K, ended by rshmem's hang report (RSHMEM_HANG_ACTION=abort);
#   shmem_global_exit(3) on node 2 during a barrier across the nodes, under pmi2 and pmix.
# Registered by ctest/CMakeLists.txt only as root where slurmctld, slurmd, srun and munged exist.
source "$(dirname "$0")/../programs/common.sh"
SLURM=$(cd "$PROGRAMS/../.." && pwd)/scripts/slurm-netns.sh
# This build's own cluster (two builds' tests never share one): netns-hosts.sh's prefix.
export RSHMEM_NETNS_PREFIX=sl$(echo "$BUILD" | md5sum | cut -c1-6)
trap '"$SLURM" down >/dev/null 2>&1' EXIT
start=$SECONDS
"$SLURM" up 2 || { "$SLURM" logs; echo "FAIL: the Slurm cluster did not come up"; exit 1; }
echo "cluster up in $((SECONDS - start)) s"
node1=$RSHMEM_NETNS_PREFIX-h1 node2=$RSHMEM_NETNS_PREFIX-h2

flags=$(PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig pkg-config --cflags --libs rshmem) || { echo "FAIL: pkg-config cannot find rshmem under $PREFIX"; exit 1; }
# shellcheck disable=SC2086
gcc -std=gnu11 -O1 -Wall -o "$WORK/ring_reduce" "$(dirname "$0")/ring_reduce.c" $flags -Wl,-rpath,"$PREFIX/lib" || { echo "FAIL: cannot compile ring_reduce.c"; exit 1; }
build hosts_check
cd "$WORK" || exit 1

have_pmix=0
"$SLURM" exec srun --mpi=list 2>&1 | grep -q pmix && have_pmix=1

# srun_check MPI NP: the ring and the reduction at NP PEs over both nodes.
srun_check() {
    local mpi=$1 np=$2 out rc got on1 on2
    out=$("$SLURM" exec timeout 90 srun --mpi="$mpi" -N2 -n"$np" "$WORK/ring_reduce" check 2>&1); rc=$?
    echo "--- srun --mpi=$mpi -N2 -n$np: exit $rc"; echo "$out"
    got=$(grep -cE "^PE [0-9]+ of $np on ($node1|$node2): ring ok, sum ok$" <<<"$out")
    # srun's block distribution: the first ceil(np/2) tasks on node 1.
    on1=$(grep -cE "^PE [0-9]+ of $np on $node1:" <<<"$out")
    on2=$(grep -cE "^PE [0-9]+ of $np on $node2:" <<<"$out")
    if [ $rc -eq 0 ] && [ "$got" -eq "$np" ] && [ "$on1" -eq $(((np + 1) / 2)) ] && [ "$on2" -eq $((np / 2)) ]; then
        pass "srun --mpi=$mpi: $np PEs on 2 nodes ($on1 + $on2), ring and sum right on every PE"
    else
        fail "srun --mpi=$mpi, $np PEs: exit $rc, $got of $np PEs right ($on1 on node 1, $on2 on node 2)"
    fi
}
srun_check pmi2 4
srun_check pmi2 3
# A core set of the C tests (this build's programs; each checks its own results) at 4 PEs over
# the 2 nodes, under each PMI.
for mpi in pmi2 pmix; do
    [ $mpi = pmix ] && [ "$have_pmix" = 0 ] && continue
    for prog in coll_barrier coll_broadcast coll_collect coll_alltoall coll_reduce coll_deprecated coll_team rma_small; do
        [ -x "$BUILD/$prog" ] || { fail "$prog is not built in $BUILD"; continue; }
        out=$("$SLURM" exec timeout 90 srun --mpi=$mpi -N2 -n4 "$BUILD/$prog" 2>&1); rc=$?
        if [ $rc -eq 0 ]; then
            pass "srun --mpi=$mpi: $prog, 4 PEs on 2 nodes"
        else
            fail "srun --mpi=$mpi: $prog: exit $rc"; echo "$out" | tail -15
        fi
    done
done

# Without --mpi (this cluster's MpiDefault is none) the tasks cannot find each other: each must
# say so and name the fix, never run on as a job of one PE.
out=$("$SLURM" exec timeout 60 srun -N2 -n2 "$WORK/ring_reduce" check 2>&1); rc=$?
echo "--- srun without --mpi: exit $rc"; echo "$out"
[ $rc -ne 0 ] && [ $rc -ne 124 ] && [ "$(grep -c "one of 2 tasks (SLURM_STEP_NUM_TASKS) without a PMI plugin.*srun --mpi=pmi2" <<<"$out")" -eq 2 ] \
    && pass "srun without --mpi: both tasks fail naming srun --mpi=pmi2" || fail "srun without --mpi: exit $rc, not both tasks named the fix"
grep -q "ring ok" <<<"$out" && fail "srun without --mpi: a task ran as a job of its own"

if [ "$have_pmix" = 1 ]; then
    srun_check pmix 4
else
    echo "(this Slurm has no pmix plugin: srun --mpi=pmix not tried)"
fi

# ends_job LABEL EXPECT "ENV" "SRUN_OPTS" PROG MODE: PROG MODE DIR under srun SRUN_OPTS with the
# settings ENV (words NAME=VALUE) must end within 20 s (Slurm's own kill takes seconds on a
# loaded machine) with a status other than 0 and timeout's 124, its output matching EXPECT
# (extended regex), no PE saying it ran on, and no PE left on either node.
ends_job() {
    local label=$1 expect=$2 env=$3 opts=$4 prog=$5 mode=$6 dir out rc took start
    dir=$WORK/$(tr -c 'a-z0-9\n' _ <<<"$label $opts") && mkdir -p "$dir"
    # The clock is rshmem's: wait (up to 30 s) until Slurm has cleared the previous job, which
    # on a loaded machine takes seconds and would otherwise keep this one queued.
    "$SLURM" exec sh -c 'for _ in $(seq 60); do [ -z "$(squeue -h)" ] && exit 0; sleep 0.5; done' || true
    start=$SECONDS
    # shellcheck disable=SC2086
    out=$("$SLURM" exec env $env timeout 60 srun $opts -N2 -n4 "$WORK/$prog" "$mode" "$dir" 2>&1); rc=$?
    took=$((SECONDS - start))
    label="$label (srun $opts)"
    echo "--- $label: exit $rc after ${took}s"; echo "$out"
    [ $took -le 20 ] && [ $rc -ne 0 ] && [ $rc -ne 124 ] && pass "$label: the job ended within 20 s (${took}s, exit $rc)" \
        || fail "$label: exit $rc after ${took}s (want an error within 20 s)"
    grep -qE "$expect" <<<"$out" && pass "$label: the output says so" || fail "$label: no line matches '$expect'"
    grep -q "nobody stopped me" <<<"$out" && fail "$label: a PE ran on"
    pids_gone "$dir" 10 && pass "$label: no PE is left on either node" || fail "$label: PEs left"
}
build fault_victim
# PE 3 (node 2) SIGKILLed while the others sleep outside SHMEM: srun -K (--kill-on-bad-exit)
# ends the step and names the task.
ends_job "PE 3 killed" "$node2: task 3: Killed" "" "--mpi=pmi2 -K" hosts_check kill
# The same while the others wait for it in a barrier across the nodes, without -K (Slurm's
# default leaves the other tasks running): rshmem's hang report names PE 3 and, with
# RSHMEM_HANG_ACTION=abort, ends the job through the PMI abort.
ends_job "PE 3 killed during a barrier" "PE 2: shmem_barrier_all: has waited [0-9]+ s for PE 3 .*ending the job" \
    "RSHMEM_HANG_TIMEOUT=2 RSHMEM_HANG_ACTION=abort" --mpi=pmi2 fault_victim kill
# shmem_global_exit(3) on node 2 while the others wait in a barrier across the nodes: PMI-1's
# abort and PMIx_Abort make Slurm end the step (tasks killed by Slurm make srun's status 137).
for mpi in pmi2 pmix; do
    [ $mpi = pmix ] && [ "$have_pmix" = 0 ] && continue
    ends_job "shmem_global_exit(3)" "$node2: tasks? [0-9-]+: Exited with exit code 3" "" --mpi=$mpi hosts_check exit3barrier
done
finish
