#!/usr/bin/env bash
# ibr34: the IBGDA route on the software NIC model, 2 PEs on one host, tests built
# -DRSHMEM_IBGDA_ROUTE. Usage: S=<stage with lib/ and bin/rshmemrun> OUT=<dir> bash run.sh
# (from this folder). Every test with CUDA_MODULE_LOADING=EAGER: PASS expected. LAZY=1 adds the
# lazy-loading checks: coll and first_launch time out (rc 124, "device barrier: still waiting"),
# first_launch preload passes.
set -u
cd "$(dirname "$0")/b"; OUT=${OUT:-/tmp/ibr34}; mkdir -p "$OUT"; chmod +x ./* "$S/bin/"*
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
if [ "$(nvidia-smi -L | grep -c '^GPU')" -lt 2 ]; then # one GPU: both PEs under MPS
  export CUDA_MPS_PIPE_DIRECTORY=/tmp/ibr34-mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/ibr34-mps-log CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50
  mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY; nvidia-cuda-mps-control -d; trap 'echo quit | nvidia-cuda-mps-control' EXIT
fi
t() { # tag loading limit program [args]
  local tag=$1 mode=$2 lim=$3; shift 3
  local lm="-u CUDA_MODULE_LOADING"; [ -n "$mode" ] && lm="CUDA_MODULE_LOADING=$mode"
  env $lm LD_LIBRARY_PATH=$S/lib NVSHMEM_DISABLE_P2P=1 RSHMEM_IBGDA_NIC=model RSHMEM_BOOTSTRAP_TIMEOUT=20 \
    timeout -k 5 $lim $S/bin/rshmemrun -n 2 "$@" > "$OUT/$tag.log" 2>&1
  echo "$tag loading=${mode:-default} rc=$?: $(grep -hE '^PASS|FAIL|still waiting|lazily' "$OUT/$tag.log" | head -3 | tr '\n' ' ')" | tee -a "$OUT/summary.txt"
}
for p in rma amo signal wait put_block coll_sizes coll first_launch; do t $p EAGER 60 ./$p; done
if [ "${LAZY:-0}" = 1 ]; then
  t coll-lazy "" 30 ./coll; t first_launch-lazy "" 25 ./first_launch; t first_launch-lazy-preload "" 25 ./first_launch preload
fi
