#!/usr/bin/env bash
# GPU-machine run of the IBGDA route (staged by ctest/ibgda/stage_gpu.sh as .gpu/ibgda/run.sh):
# the CUDA RMA/AMO/signal tests in P2P mode (the hooks must not change it) and in forced-remote
# mode (every device RMA/AMO goes through WQEs to the software HCA model), the IBGDA stress,
# ordering and error tests, then the post-rate benchmark in model sink mode. Logs and the CSV go
# to $OUT. Nothing here has met a real NIC: the model plays the ConnectX.
set -uo pipefail
G="$(cd "$(dirname "$0")" && pwd)"
OUT="${OUT:-/tmp/rshmem-ibgda-out}"
L="$OUT/logs"   # one log per step; packed into logs.tgz at the end (few files come back)
mkdir -p "$L"
exec > >(tee "$OUT/run.log") 2>&1
nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader
nproc; date -u
S="$G/stage"; B="$G/bin"
chmod +x "$S/bin/"* "$B/"* 2>/dev/null
export RSHMEM_BOOTSTRAP_TIMEOUT=20 NVSHMEM_DISABLE_NVLS=1
RUN="$S/bin/rshmemrun -n 2"
REM=(env NVSHMEM_DISABLE_P2P=1 RSHMEM_IBGDA_NIC=model)
pass=0; fail=0; failed=""
t() { # name limit_s command...
  local name="$1" lim="$2"; shift 2
  local t1=$(date +%s%N)
  timeout -k 3 "$lim" "$@" > "$L/$name.log" 2>&1
  local rc=$? ms=$(( ($(date +%s%N) - t1) / 1000000 ))
  if [ $rc -eq 0 ]; then pass=$((pass+1)); echo "PASS $name (${ms} ms)"; else fail=$((fail+1)); failed="$failed $name"; echo "FAIL $name rc=$rc (${ms} ms)"; fi
  tail -n 6 "$L/$name.log" | sed 's/^/    /'
}
expect_fail() { # name pattern limit_s command...
  local name="$1" pat="$2" lim="$3"; shift 3
  timeout -k 3 "$lim" "$@" > "$L/$name.log" 2>&1
  local rc=$?
  if [ $rc -ne 0 ] && grep -qF "$pat" "$L/$name.log"; then pass=$((pass+1)); echo "PASS $name (failed as expected, rc=$rc)";
  else fail=$((fail+1)); failed="$failed $name"; echo "FAIL $name rc=$rc: no \"$pat\""; fi
  grep -m3 -F "IBGDA" "$L/$name.log" | sed 's/^/    /'
}

echo "== forced remote (NVSHMEM_DISABLE_P2P=1 RSHMEM_IBGDA_NIC=model)"
t ibgda_rma 60 "${REM[@]}" $RUN "$B/rma"
t ibgda_amo 40 "${REM[@]}" $RUN "$B/amo"
t ibgda_signal 40 "${REM[@]}" $RUN "$B/signal"
t ibgda_stress 40 "${REM[@]}" $RUN "$B/gpu_stress"
t ibgda_stress_qp16 60 "${REM[@]}" NVSHMEM_QP_DEPTH=16 $RUN "$B/gpu_stress"
t ibgda_stress_warp 40 "${REM[@]}" NVSHMEM_IBGDA_RC_MAP_BY=warp NVSHMEM_IBGDA_NUM_RC_PER_PE=4 RSHMEM_IBGDA_MODEL_THREADS=2 $RUN "$B/gpu_stress"
t ibgda_order 40 "${REM[@]}" NVSHMEM_IBGDA_RC_MAP_BY=warp NVSHMEM_IBGDA_NUM_RC_PER_PE=8 RSHMEM_IBGDA_MODEL_THREADS=4 $RUN "$B/gpu_order"
t ibgda_order_hostsq 40 "${REM[@]}" RSHMEM_IBGDA_MODEL_SQ=host NVSHMEM_IBGDA_RC_MAP_BY=sm NVSHMEM_IBGDA_NUM_RC_PER_PE=8 $RUN "$B/gpu_order"
expect_fail ibgda_error_device "IBGDA RDMA WRITE (put) from PE 0 to PE 1 failed: remote access error" 30 "${REM[@]}" $RUN "$B/gpu_error" device
expect_fail ibgda_error_host "IBGDA RDMA WRITE (put) from PE 0 to PE 1 failed: remote access error" 30 "${REM[@]}" $RUN "$B/gpu_error" host

echo "== P2P mode (unchanged path)"
t p2p_rma 40 $RUN "$B/rma"
t p2p_amo 30 $RUN "$B/amo"
t p2p_signal 30 $RUN "$B/signal"

echo "== post rate, model sink mode"
CSV="$OUT/post_rate.csv"
BENCH=("${REM[@]}" RSHMEM_IBGDA_MODEL_SINK=1 RSHMEM_IBGDA_MODEL_THREADS=8 RSHMEM_DEBUG=INFO)
bench() { # label map num_rc depth batch [extra env...]
  local label="$1" map="$2" nrc="$3" depth="$4" batch="$5"; shift 5
  t "bench_$label" 60 "${BENCH[@]}" NVSHMEM_IBGDA_RC_MAP_BY=$map NVSHMEM_IBGDA_NUM_RC_PER_PE=$nrc NVSHMEM_QP_DEPTH=$depth \
    NVSHMEM_IBGDA_NUM_REQUESTS_IN_BATCH=$batch "$@" $RUN "$B/post_rate" "$label"
  grep -E "^(label|$label)," "$L/bench_$label.log" >> "$CSV.tmp"
}
bench cta-rc64-b32 cta 64 8192 32
bench sm-rc64-b32 sm 64 8192 32
bench warp-rc64-b32 warp 64 8192 32
bench warp-rc256-b32 warp 256 2048 32
bench cta-rc64-b256 cta 64 8192 256
bench warp-rc256-b256 warp 256 2048 256
bench cta-rc64-b32-hostsq cta 64 8192 32 RSHMEM_IBGDA_MODEL_SQ=host
awk 'NR==1 || !/^label/' "$CSV.tmp" > "$CSV"; rm -f "$CSV.tmp"
cat "$CSV"
grep -h "IBGDA model NIC of PE 0" "$L"/bench_*.log | head -8
tar czf "$OUT/logs.tgz" -C "$L" . && rm -rf "$L"
echo "RESULT: $pass passed, $fail failed:$failed"
