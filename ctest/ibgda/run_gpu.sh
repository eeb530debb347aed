#!/usr/bin/env bash
# GPU-machine run of the IBGDA route (staged by ctest/ibgda/stage_gpu.sh as .gpu/ibgda/run.sh):
# the CUDA RMA/AMO/signal/sync tests and the device collectives in P2P mode (the hooks must not change it) and in forced-remote
# mode (every device RMA/AMO goes through WQEs to the software HCA model), over RC and over DC
# (NVSHMEM_IBGDA_NUM_RC_PER_PE=0), the IBGDA stress, ordering, DC, coalesced-p, 1024-thread and error tests,
# then the post-rate benchmark in model sink mode. Logs and the CSVs go to $OUT. Nothing here
# has met a real NIC: the model plays the ConnectX.
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
# Kernels loaded up front: with lazy loading (CUDA's default) a first launch waits for the GPU to
# go idle while holding up the model NIC thread's copies and atomics (the library warns;
# docs/ARCHITECTURE.md "IBGDA"), so device code that waits for the model meanwhile hangs.
export CUDA_MODULE_LOADING="${CUDA_MODULE_LOADING:-EAGER}"
# MPS=1 (one-GPU machines: both PEs on the GPU): one CUDA MPS daemon for the whole run, each PE
# allowed half the SMs, so that both PEs' kernels run at once.
if [ "${MPS:-0}" = 1 ]; then
  export CUDA_MPS_PIPE_DIRECTORY=/tmp/rshmem-mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/rshmem-mps-log CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  nvidia-cuda-mps-control -d
  trap 'echo quit | nvidia-cuda-mps-control' EXIT
fi
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
t ibgda_sync 40 "${REM[@]}" $RUN "$B/sync"
t ibgda_coll 120 "${REM[@]}" $RUN "$B/coll_sizes"
t ibgda_stress 40 "${REM[@]}" $RUN "$B/gpu_stress"
t ibgda_stress_qp16 60 "${REM[@]}" NVSHMEM_QP_DEPTH=16 $RUN "$B/gpu_stress"
t ibgda_stress_warp 40 "${REM[@]}" NVSHMEM_IBGDA_RC_MAP_BY=warp NVSHMEM_IBGDA_NUM_RC_PER_PE=4 RSHMEM_IBGDA_MODEL_THREADS=2 $RUN "$B/gpu_stress"
t ibgda_order 40 "${REM[@]}" NVSHMEM_IBGDA_RC_MAP_BY=warp NVSHMEM_IBGDA_NUM_RC_PER_PE=8 RSHMEM_IBGDA_MODEL_THREADS=4 $RUN "$B/gpu_order"
t ibgda_order_hostsq 40 "${REM[@]}" RSHMEM_IBGDA_MODEL_SQ=host NVSHMEM_IBGDA_RC_MAP_BY=sm NVSHMEM_IBGDA_NUM_RC_PER_PE=8 $RUN "$B/gpu_order"
expect_fail ibgda_error_device "IBGDA RDMA WRITE (put) from PE 0 to PE 1 failed: remote access error" 30 "${REM[@]}" $RUN "$B/gpu_error" device
expect_fail ibgda_error_host "IBGDA RDMA WRITE (put) from PE 0 to PE 1 failed: remote access error" 30 "${REM[@]}" $RUN "$B/gpu_error" host

echo "== forced remote over DC (NVSHMEM_IBGDA_NUM_RC_PER_PE=0; NVSHMEM's default: 1 DCI, 2 DCTs per PE, map by cta)"
DC=("${REM[@]}" NVSHMEM_IBGDA_NUM_RC_PER_PE=0)
t dc_rma 60 "${DC[@]}" $RUN "$B/rma"
t dc_amo 40 "${DC[@]}" $RUN "$B/amo"
t dc_signal 40 "${DC[@]}" $RUN "$B/signal"
t dc_coll 120 "${DC[@]}" $RUN "$B/coll_sizes"
t dc_stress 40 "${DC[@]}" $RUN "$B/gpu_stress"
t dc_stress_auto_warp 40 "${DC[@]}" NVSHMEM_IBGDA_NUM_DCI=0 NVSHMEM_IBGDA_DCI_MAP_BY=warp RSHMEM_IBGDA_MODEL_THREADS=2 $RUN "$B/gpu_stress"
t dc_stress_sm 40 "${DC[@]}" NVSHMEM_IBGDA_NUM_DCI=16 NVSHMEM_IBGDA_DCI_MAP_BY=sm $RUN "$B/gpu_stress"
t dc_stress_dct_qp16 60 "${DC[@]}" NVSHMEM_IBGDA_NUM_DCI=4 NVSHMEM_IBGDA_NUM_DCT=3 NVSHMEM_IBGDA_DCI_MAP_BY=dct NVSHMEM_QP_DEPTH=16 $RUN "$B/gpu_stress"
t dc_order 40 "${DC[@]}" NVSHMEM_IBGDA_NUM_DCI=8 NVSHMEM_IBGDA_DCI_MAP_BY=warp RSHMEM_IBGDA_MODEL_THREADS=4 $RUN "$B/gpu_order"
DC8=("${DC[@]}" NVSHMEM_IBGDA_NUM_DCI=8 NVSHMEM_IBGDA_NUM_DCT=3 NVSHMEM_IBGDA_DCI_MAP_BY=cta)
t dc_gpu_dc 40 "${DC8[@]}" $RUN "$B/gpu_dc"
expect_fail dc_wrong_key "to PE 1 over DC (DCT 0x002000 at LID 2) failed: transport retry counter exceeded (the target never answered): the DC target rejected the DC access key" 30 "${DC8[@]}" $RUN "$B/gpu_dc" key
expect_fail dc_error_device "IBGDA RDMA WRITE (put) from PE 0 to PE 1 over DC (DCT 0x002000 at LID 2) failed: remote access error" 30 "${DC[@]}" $RUN "$B/gpu_error" device
expect_fail dc_error_host "IBGDA RDMA WRITE (put) from PE 0 to PE 1 over DC (DCT 0x002000 at LID 2) failed: remote access error" 30 "${DC[@]}" $RUN "$B/gpu_error" host

echo "== warp-coalesced p (one inline WQE per 192 bytes of a warp's consecutive p)"
t coalesce_rc 40 "${REM[@]}" $RUN "$B/gpu_coalesce"
t coalesce_dc 40 "${DC[@]}" $RUN "$B/gpu_coalesce"
t coalesce_qp16 40 "${REM[@]}" NVSHMEM_QP_DEPTH=16 $RUN "$B/gpu_coalesce"

echo "== registered local buffers (nvshmemx_buffer_register): one WQE instead of inline chunks"
t register_rc 40 "${REM[@]}" $RUN "$B/gpu_register"
t register_dc 40 "${DC[@]}" $RUN "$B/gpu_register"

echo "== 1024-thread CTAs: with __launch_bounds__ they launch and run; without, CUDA refuses them"
t bounds_rc 40 "${REM[@]}" $RUN "$B/gpu_bounds"
t bounds_dc 40 "${DC[@]}" $RUN "$B/gpu_bounds"

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
# DC: the same posting path on DCIs (every WQE carries a 16-byte address vector).
bench dc-cta-dci64-b32 cta 0 8192 32 NVSHMEM_IBGDA_NUM_DCI=64 NVSHMEM_IBGDA_DCI_MAP_BY=cta
bench dc-warp-dci256-b32 cta 0 2048 32 NVSHMEM_IBGDA_NUM_DCI=256 NVSHMEM_IBGDA_DCI_MAP_BY=warp
bench dc-sm-auto-b32 cta 0 8192 32 NVSHMEM_IBGDA_NUM_DCI=0 NVSHMEM_IBGDA_DCI_MAP_BY=sm
bench dc-dct4-b32 cta 0 8192 32 NVSHMEM_IBGDA_NUM_DCI=64 NVSHMEM_IBGDA_NUM_DCT=4 NVSHMEM_IBGDA_DCI_MAP_BY=dct
awk 'NR==1 || !/^label/' "$CSV.tmp" > "$CSV"; rm -f "$CSV.tmp"
cat "$CSV"
# Warp-coalesced p: lanes write consecutive words (p calls per second; the WQE blocks posted).
CCSV="$OUT/post_rate_coalesced.csv"
for spec in "warp-rc256 warp 256 2048" "cta-rc64 cta 64 8192"; do
  set -- $spec
  t "bench_coalesced_$1" 60 "${BENCH[@]}" NVSHMEM_IBGDA_RC_MAP_BY=$2 NVSHMEM_IBGDA_NUM_RC_PER_PE=$3 NVSHMEM_QP_DEPTH=$4 \
    $RUN "$B/post_rate" "coalesced-$1" contiguous
  grep -E "^(label|coalesced-$1)," "$L/bench_coalesced_$1.log" >> "$CCSV.tmp"
done
awk 'NR==1 || !/^label/' "$CCSV.tmp" > "$CCSV"; rm -f "$CCSV.tmp"
cat "$CCSV"
grep -h "IBGDA model NIC of PE 0" "$L"/bench_*.log | head -8
tar czf "$OUT/logs.tgz" -C "$L" . && rm -rf "$L"
echo "RESULT: $pass passed, $fail failed:$failed"
