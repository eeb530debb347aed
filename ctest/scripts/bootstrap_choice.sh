#!/usr/bin/env bash
# The BOOTSTRAP setting as NVSHMEM spells it: NVSHMEM_BOOTSTRAP=MPI starts a CPU job over
# MPI_COMM_WORLD under MPICH's hydra and Open MPI; PMI, PMI2, PMIX name the launcher's protocol
# in any case; an unknown value is refused with the list of valid ones; UID without an id says
# how to use it.
source "$(dirname "$0")/../programs/common.sh"
flags=$(PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig pkg-config --cflags --libs rshmem) || { fail "pkg-config cannot find rshmem"; finish; }
build launch_check

# mpi_run NAME MPICC LAUNCHER...: builds mpi_bootstrap.c with MPICC and runs 3 PEs with BOOTSTRAP=MPI.
mpi_run() {
    local name=$1 cc=$2 out rc; shift 2
    # shellcheck disable=SC2086
    "$cc" -std=gnu11 -O1 -Wall -o "$WORK/mpi_bootstrap.$name" "$PROGRAMS/mpi_bootstrap.c" $flags -Wl,-rpath,"$PREFIX/lib" \
        || { fail "cannot compile mpi_bootstrap.c with $cc"; return; }
    out=$(timeout 90 "$@" "$WORK/mpi_bootstrap.$name" 2>&1); rc=$?
    [ $rc -eq 0 ] && grep -q "PASS mpi_bootstrap (3 PEs)" <<<"$out" \
        && pass "NVSHMEM_BOOTSTRAP=MPI under $name: 3 PEs over MPI_COMM_WORLD" || { fail "NVSHMEM_BOOTSTRAP=MPI under $name: exit $rc"; echo "$out"; }
}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi_run hydra "$(command -v mpicc.mpich || echo mpicc.mpich)" env NVSHMEM_BOOTSTRAP=MPI mpiexec.hydra -n 3
mpi_run openmpi "$(command -v mpicc.openmpi || echo mpicc.openmpi)" mpirun.openmpi --oversubscribe -np 3 -x NVSHMEM_BOOTSTRAP=mpi

# PMI and PMI2 (hydra's PMI-1 wire), PMIX (Open MPI), in NVSHMEM's capitals.
for choice in PMI PMI2; do
    check_run "NVSHMEM_BOOTSTRAP=$choice under hydra" 2 1 env NVSHMEM_BOOTSTRAP=$choice mpiexec.hydra -n 2 "$WORK/launch_check"
done
check_run "NVSHMEM_BOOTSTRAP=PMIX under mpirun" 2 1 mpirun.openmpi --oversubscribe -np 2 -x NVSHMEM_BOOTSTRAP=PMIX "$WORK/launch_check"

out=$(NVSHMEM_BOOTSTRAP=plugin timeout 30 "$RUN" -n 1 "$WORK/launch_check" 2>&1); rc=$?
[ $rc -ne 0 ] && grep -q 'NVSHMEM_BOOTSTRAP="plugin" is not valid: expected one of auto, rshmemrun, PMI, PMI2, PMIX, MPI, UID or single' <<<"$out" \
    && pass "an unknown bootstrap is refused with the valid ones listed" || { fail "unknown bootstrap: exit $rc"; echo "$out"; }
out=$(NVSHMEM_BOOTSTRAP=UID timeout 30 "$RUN" -n 1 "$WORK/launch_check" 2>&1); rc=$?
[ $rc -ne 0 ] && grep -q "NVSHMEMX_INIT_WITH_UNIQUEID" <<<"$out" \
    && pass "UID without an id says to use nvshmemx_init_attr" || { fail "UID without an id: exit $rc"; echo "$out"; }
finish
