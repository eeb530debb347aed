#!/usr/bin/env bash
# A program started without a launcher is a 1-PE job: addressing PE 1 must say how to start
# N PEs (rshmemrun -n N ...); under `srun --mpi=none -n 2` shmem_init refuses, naming --mpi=pmi2.
source "$(dirname "$0")/../programs/common.sh"
cat > "$WORK/put_pe1.c" <<'C'
#include <shmem.h>
static long x;
int main(void) { shmem_init(); long v = 1; shmem_long_put(&x, &v, 1, 1); shmem_finalize(); return 0; }
C
PROGRAMS=$WORK build put_pe1
err=$(cd "$WORK" && env -u SLURM_NTASKS -u SLURM_STEP_NUM_TASKS timeout 20 ./put_pe1 2>&1); rc=$?
[ $rc -ne 0 ] && grep -q 'shmem_long_put: PE 1 is out of range: this job has 1 PEs (valid 0..=0); no launcher started this program, so it is a job of 1 PE: start N PEs with `rshmemrun -n N ./put_pe1`' <<<"$err" \
    && pass "./prog: $err" || fail "./prog: exit $rc: $err"
# A step of 2 srun tasks without PMI is refused at init (ctest/slurm/run.sh does it under srun).
err=$(cd "$WORK" && SLURM_NTASKS=2 SLURM_STEP_NUM_TASKS=2 timeout 20 ./put_pe1 2>&1); rc=$?
[ $rc -ne 0 ] && grep -q 'shmem_init: bootstrap: srun started this process as one of 2 tasks (SLURM_STEP_NUM_TASKS) without a PMI plugin.*`srun --mpi=pmi2`' <<<"$err" \
    && pass "srun --mpi=none -n 2 (simulated): $err" || fail "srun --mpi=none: exit $rc: $err"
# Told to run each task alone (RSHMEM_BOOTSTRAP=single), addressing PE 1 still names the fix.
err=$(cd "$WORK" && RSHMEM_BOOTSTRAP=single SLURM_NTASKS=2 SLURM_STEP_NUM_TASKS=2 timeout 20 ./put_pe1 2>&1); rc=$?
[ $rc -ne 0 ] && grep -q 'srun started 2 tasks without a process-management interface.*`srun --mpi=pmix -n 2 ./put_pe1`' <<<"$err" \
    && pass "srun --mpi=none -n 2, RSHMEM_BOOTSTRAP=single (simulated): $err" || fail "srun --mpi=none, single: exit $rc: $err"
err=$(timeout 20 "$RUN" -n 2 "$WORK/put_pe1" 2>&1); rc=$?
[ $rc -eq 0 ] && pass "under rshmemrun -n 2 the put works" || fail "rshmemrun -n 2: exit $rc: $err"
err=$(cd "$WORK" && timeout 20 "$RUN" -n 1 ./put_pe1 2>&1); rc=$?
[ $rc -ne 0 ] && ! grep -q "no launcher" <<<"$err" && pass "rshmemrun -n 1: no launcher hint (a launcher was used)" || fail "rshmemrun -n 1: exit $rc: $err"
finish
