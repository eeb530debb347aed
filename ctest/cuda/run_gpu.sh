#!/usr/bin/env bash
# GPU-machine run of the CUDA tests: ctest/cuda/stage_gpu.sh stages it as .gpu/<name>/run.sh
# with the library, the sources and (normally) the programs already built. Builds whatever is
# missing, then runs each program with rshmemrun -n $NP (default 2: one PE per GPU on 2×H200;
# NP=4 / NP=8 on the 4- and 8-GPU machines; uid_init/uid_file start their own processes,
# mpi_init runs under mpirun -np $NP), rshmem-info, and the lazy-CUDA check. One log:
# $OUT/run.log; every test's own log: $OUT/logs.tgz.
# MPS=1: every test under a fresh CUDA MPS daemon, each PE allowed 100/NP % of the SMs: how
# several PEs share one GPU with their kernels running at once (one-GPU machines: NP=2 MPS=1).
set -uo pipefail
G="$(cd "$(dirname "$0")" && pwd)"
OUT="${OUT:-/tmp/rshmem-out}"
mkdir -p "$OUT"
L=/tmp/rshmem-logs; rm -rf "$L"; mkdir -p "$L"
exec > >(tee "$OUT/run.log") 2>&1
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
export PATH=/usr/local/cuda/bin:$PATH
export RSHMEM_BOOTSTRAP_TIMEOUT=30
NP="${NP:-2}"
nvidia-smi -L; nvidia-smi topo -m | head -4
S="$G/stage"
chmod +x "$S/bin/"* 2>/dev/null
export LD_LIBRARY_PATH="$S/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
B="$G/build"
T0=$(date +%s)
if [ ! -x "$B/cuda/host" ]; then
  bash "$G/ctest/scripts/cuda_compile.sh" "$S" "$B" || echo "COMPILE FAILED"
  echo "compile: $(( $(date +%s) - T0 )) s"
fi
# mpi_init needs MPI's headers: staged without PREBUILD it was compiled without them (it then only
# says SKIP); build it here against this machine's MPI.
if command -v mpicc >/dev/null && [ -f "$G/ctest/cuda/mpi_init.cu" ] && ! grep -q MPI_Comm_rank "$B/cuda/mpi_init" 2>/dev/null; then
  inc="$(mpicc -showme:incdirs 2>/dev/null | awk '{print $1}')"; lib="$(mpicc -showme:libdirs 2>/dev/null | awk '{print $1}')"
  nvcc -arch=sm_90 -std=c++17 -I"$S/include" -I"$G/ctest/cuda" -I"$inc" "$G/ctest/cuda/mpi_init.cu" -o "$B/cuda/mpi_init" \
    -L"$S/lib" -lrshmem -L"$lib" -lmpi && echo "mpi_init: built with $(mpicc -showme:version 2>/dev/null | head -1)"
fi
chmod +x "$B/cuda/"* 2>/dev/null
cd "$B/cuda" || exit 1
echo "== rshmem-info"; "$S/bin/rshmem-info" | sed -n '1,/^Environment/p'
pass=0; fail=0; failed=""
if [ "${MPS:-0}" = 1 ]; then
  export CUDA_MPS_PIPE_DIRECTORY=/tmp/rshmem-mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/rshmem-mps-log
  export CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$((100 / NP))
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
fi
t() {
  local name="$1" limit="$2"; shift 2
  local t1=$(date +%s%N)
  [ "${MPS:-0}" = 1 ] && nvidia-cuda-mps-control -d
  timeout "$limit" "$@" > "$L/$name.log" 2>&1
  local rc=$?
  [ "${MPS:-0}" = 1 ] && { echo quit | nvidia-cuda-mps-control; sleep 0.5; }
  local ms=$(( ($(date +%s%N) - t1) / 1000000 ))
  if [ $rc -eq 0 ]; then pass=$((pass+1)); echo "PASS $name (${ms} ms)"; else fail=$((fail+1)); failed="$failed $name"; echo "FAIL $name rc=$rc (${ms} ms)"; fi
  grep -v "^TIME" "$L/$name.log" | tail -n 8 | sed 's/^/    /'
}
for name in ${TESTS:-first_coll team coll_host ring_bcast ring_reduce put_block coll_fresh pipeline collective_launch jacobi coll coll_sizes coll_misuse stall_report sync wait strided stream host host_typed buffer_register rma amo signal host_amo two_tu two_tu_rdc cumodule nvrtc reinit heap_exact heap_ahead g_visibility moe_shuffle_pattern user_buffer graphs first_launch}; do
  [ -x "./$name" ] || { echo "MISSING $name"; fail=$((fail+1)); failed="$failed $name"; continue; }
  limit="${LIMIT:-40}"; [ "$name" = coll_host ] && limit=120; [ "$name" = stall_report ] && limit=90
  t "$name" "$limit" "$S/bin/rshmemrun" -n "$NP" "./$name" "$B/cuda"
done
grep -h "^TIME" "$L/coll_host.log" 2>/dev/null
# Programs that must fail (fatal_*.cu): a non-zero exit and stderr matching their rshmem-expect.
for f in "$G"/ctest/cuda/fatal_*.cu; do
  name="$(basename "$f" .cu)"; regex="$(sed -n 's/.*rshmem-expect: //p' "$f" | head -n 1)"
  [ -x "./$name" ] || { echo "MISSING $name"; fail=$((fail+1)); failed="$failed $name"; continue; }
  t "$name" 45 bash "$G/ctest/expect_failure.sh" "$regex" "$S/bin/rshmemrun" -n "$NP" "./$name"
done
[ -x ./uid_init ] && t uid_init 45 ./uid_init
[ -x ./uid_file ] && t uid_file 45 ./uid_file
if [ -x ./mpi_init ] && command -v mpirun >/dev/null; then
  t mpi_init 60 mpirun --allow-run-as-root --oversubscribe -np "$NP" -x LD_LIBRARY_PATH -x RSHMEM_BOOTSTRAP_TIMEOUT ./mpi_init
  grep -q "PASS mpi_init" "$L/mpi_init.log" || { echo "FAIL mpi_init: no PASS line"; fail=$((fail+1)); failed="$failed mpi_init_pass"; }
fi
# Twice as many PEs as GPUs or as NP, whichever is more (two or more per GPU, time-sliced, or
# side by side under MPS): reductions on more than two PEs take the two-phase path, teams get
# strides, and PEs hold different teams (team.cu). 2-GPU machine or one GPU with NP=2: 4 PEs;
# NP=4 on a 4-GPU machine: 8.
export COLL_HOST_NO_TIMING=1
ngpu=$(nvidia-smi -L | grep -c '^GPU')
more=$((2 * (ngpu > NP ? ngpu : NP)))
for spec in ${TESTS4:-coll_host:45 team:30 ring_reduce:20}; do
  name="${spec%%:*}"
  [ -x "./$name" ] && t "${name}_np$more" "${spec##*:}" "$S/bin/rshmemrun" -n "$more" "./$name" "$B/cuda"
done
unset COLL_HOST_NO_TIMING
t device_checks 45 "$S/bin/rshmemrun" -n 2 ./device_checks
grep -q "is out of range" "$L/device_checks.log" && echo "device_checks: the kernel printed the bad PE" || { echo "FAIL device_checks: no message from the device"; fail=$((fail+1)); failed="$failed device_checks_message"; }
t lazy 60 bash "$G/ctest/scripts/cuda_lazy.sh" "$S" "$B"
echo "RESULT (NP=$NP): $pass passed, $fail failed:$failed  ($(( $(date +%s) - T0 )) s)"
tar czf "$OUT/logs.tgz" -C "$L" .
