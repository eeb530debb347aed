#!/usr/bin/env bash
# Session 31, helper gpux: ctest/cuda/coll.cu on the IBGDA model route (NVSHMEM_DISABLE_P2P=1
# RSHMEM_IBGDA_NIC=model), which timed out in session 30 (ack30b.sh). Libraries: fin32 (main
# 7af91b1, before c458dba) and fin33 (main 37f4fb6); tests built here -DRSHMEM_IBGDA_ROUTE
# against fin33's headers (= main's). Each run with CUDA_MODULE_LOADING unset (the driver's
# default: LAZY) or EAGER. On a timeout the PEs' threads (comm, wchan) and, where gdb exists,
# their stacks go to the log before `timeout` ends the job.
set -u
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
G=$PWD/.gpu/gpux31; R=/tmp/R31; rm -rf $R; mkdir -p $R/logs
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" >> $R/progress.txt; }
nvidia-smi -L > $R/progress.txt; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> $R/progress.txt
tar -xJf $G/libs.tar.xz -C $R && tar -xJf $G/bins.tar.xz -C $R && chmod +x $R/L/*/bin/* $R/b/*
md5sum $R/L/*/lib/librshmem.so.0.1.0 >> $R/progress.txt; command -v gdb >> $R/progress.txt || echo "no gdb" >> $R/progress.txt
NG=$(nvidia-smi -L | grep -c '^GPU')
if [ "$NG" -lt 2 ]; then # one GPU: both PEs on it under MPS, half the SMs each
  export CUDA_MPS_PIPE_DIRECTORY=/tmp/g31-mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/g31-mps-log CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50
  mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY; nvidia-cuda-mps-control -d; echo "MPS on" >> $R/progress.txt
fi
el start
stacks() { # pid of rshmemrun
  for pe in $(pgrep -P "$1"); do
    echo "== stacks of PE process $pe ($(tr '\0' ' ' < /proc/$pe/cmdline))"
    for t in /proc/$pe/task/*; do echo "  tid $(basename $t) $(cat $t/comm) state=$(awk '{print $3}' $t/stat) wchan=$(cat $t/wchan 2>/dev/null)"; done
    if command -v gdb > /dev/null; then timeout 25 gdb -p $pe -batch -ex "thread apply all bt 14" 2>&1 | grep -E '^Thread|^#' | head -200; fi
  done
}
# run TAG LIB(f32|f33) LOADING(lazy|eager) LIMIT PROGRAM [ARGS]
run() {
  local tag=$1 lib=$2 mode=$3 lim=$4; shift 4
  local log=$R/logs/$tag.log
  local lm="-u CUDA_MODULE_LOADING"; [ $mode = eager ] && lm=CUDA_MODULE_LOADING=EAGER
  local t1=$(date +%s%N)
  ( cd $R/b && env $lm LD_LIBRARY_PATH=$R/L/$lib/lib NVSHMEM_DISABLE_P2P=1 RSHMEM_IBGDA_NIC=model \
      RSHMEM_DEBUG=INFO RSHMEM_BOOTSTRAP_TIMEOUT=20 timeout -k 5 $lim $R/L/$lib/bin/rshmemrun -n 2 "$@" > $log 2>&1 ) &
  local sub=$!
  # the rshmemrun under timeout: dump the stacks 8 s before the limit if it still runs
  ( sleep $(( lim - 8 )); rr=$(pgrep -n -f "$R/L/$lib/bin/rshmemrun -n 2"); [ -n "$rr" ] && stacks $rr > $log.stacks 2>&1 ) &
  local wd=$!
  wait $sub; local rc=$?
  kill $wd 2>/dev/null; wait $wd 2>/dev/null
  local ms=$(( ($(date +%s%N) - t1) / 1000000 ))
  echo "$tag lib=$lib loading=$mode rc=$rc ${ms} ms: $(grep -hE '^PASS|FAIL|still waiting' $log | head -3 | tr '\n' ' ')" >> $R/summary.txt
  el "$tag rc=$rc"
}
run coll-f33-lazy f33 lazy 30 ./coll
run coll-f33-eager f33 eager 60 ./coll
run fl-f33-lazy f33 lazy 25 ./first_launch
run fl-f33-lazy-preload f33 lazy 25 ./first_launch preload
run fl-f33-eager f33 eager 25 ./first_launch
run coll-f32-lazy f32 lazy 30 ./coll
run coll-f32-eager f32 eager 60 ./coll
run cs-f33-lazy f33 lazy 60 ./coll_sizes
run cs-f32-lazy f32 lazy 60 ./coll_sizes
run cs-f33-eager f33 eager 60 ./coll_sizes
for t in put_block rma amo signal wait; do run $t-f33-eager f33 eager 40 ./$t; done
[ $(( $(date +%s) - t0 )) -lt ${MORE_MAX:-200} ] && run put_block-f33-lazy f33 lazy 40 ./put_block
[ "$NG" -lt 2 ] && { echo quit | nvidia-cuda-mps-control; sleep 1; }
el done
cp $R/summary.txt $R/progress.txt $OUT/; tar czf $OUT/logs.tgz -C $R logs progress.txt summary.txt
cat $R/progress.txt $R/summary.txt
