#!/usr/bin/env bash
# GPU-machine run of the CUDA tests: ctest/cuda/stage_gpu.sh stages it as /work/main/.gpu/rt/run.sh.
# Builds every ctest/cuda program with the machine's nvcc against the carried install, then
# runs each with rshmemrun -n 2 (uid_init starts its own processes). Logs go to $OUT.
set -uo pipefail
G="$(cd "$(dirname "$0")" && pwd)"
OUT="${OUT:-/tmp/rshmem-out}"
mkdir -p "$OUT"
exec > >(tee "$OUT/run.log") 2>&1
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
export PATH=/usr/local/cuda/bin:$PATH
export RSHMEM_BOOTSTRAP_TIMEOUT=30
nvidia-smi -L; nvidia-smi topo -m | head -5
S="$G/stage"
chmod +x "$S/bin/"* 2>/dev/null
B="$G/build"
T0=$(date +%s)
bash "$G/ctest/scripts/cuda_compile.sh" "$S" "$B" || echo "COMPILE FAILED"
echo "compile: $(( $(date +%s) - T0 )) s"
cd "$B/cuda" || exit 1
pass=0; fail=0; failed=""
t() {
  local name="$1"; shift
  local t1=$(date +%s%N)
  timeout 45 "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  local ms=$(( ($(date +%s%N) - t1) / 1000000 ))
  if [ $rc -eq 0 ]; then pass=$((pass+1)); echo "PASS $name (${ms} ms)"; else fail=$((fail+1)); failed="$failed $name"; echo "FAIL $name rc=$rc (${ms} ms)"; fi
  tail -n 12 "$OUT/$name.log" | sed 's/^/    /'
}
for name in ${TESTS:-host rma amo signal sync stream host_amo coll two_tu two_tu_rdc cumodule reinit}; do
  [ -x "./$name" ] || { echo "MISSING $name"; fail=$((fail+1)); continue; }
  t "$name" "$S/bin/rshmemrun" -n 2 "./$name" "$B/cuda"
done
[ -x ./uid_init ] && t uid_init ./uid_init
t device_checks "$S/bin/rshmemrun" -n 2 ./device_checks
grep -q "is out of range" "$OUT/device_checks.log" && echo "device_checks: the kernel printed the bad PE" || { echo "FAIL device_checks: no message from the device"; fail=$((fail+1)); failed="$failed device_checks_message"; }
RSHMEM_DEBUG=INFO t host_info "$S/bin/rshmemrun" -n 2 ./host
grep -h "GPU memory\|GPU [0-9]" "$OUT/host_info.log" | head -4
t lazy bash "$G/ctest/scripts/cuda_lazy.sh" "$S" "$B"
echo "RESULT: $pass passed, $fail failed:$failed"
nvidia-smi --query-gpu=index,memory.used --format=csv
