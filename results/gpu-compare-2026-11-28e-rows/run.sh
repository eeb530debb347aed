#!/usr/bin/env bash
# nvrows, session 23: one call on 2 GPUs (issue 20 §2/§3, 2-PE rows). Unpacked beside it
# (nvrows23.tar.xz): main/lib (main's librshmem, session 22's final stage), new/lib (branch
# nvrows: heap helper thread + init's closing barrier, switched by env for the A/B), bin/rshmemrun,
# b/{rshmem,nvshmem}/init (perftest/gpu/init.cu), t/ (CUDA tests), pt/{rshmem,nvshmem}/ (p_bw,
# rtt, put_bw). Configs of the init A/B (PE 0's rows, alternating, REPS launches each):
#   main  main's library
#   c     new library, RSHMEM_HEAP_VARIANT=c: a growth's spent descriptors closed on a helper thread
#   cp    new, =cp: also the chunk ahead created + exported on the helper beside the chunk of now
#   c0    new, =c with RSHMEM_INIT_END_BARRIER=0 (init without its closing barrier)
#   nv    NVSHMEM 3.4.5 (pip) under mpirun --bind-to none
# Then one RSHMEM_DEBUG=INFO launch of main, c, cp (growth breakdown), the CUDA tests at 2 PEs
# with the new library (default and cp), and the p/signal/put_nbi_block rows, main vs NVSHMEM.
# Top-level files in $OUT: rows.csv, summary.txt, debug.txt, tests.txt, pt.csv, env.txt,
# progress.txt, stderr.txt. Usage: OUT=$OUT DL=secs timeout N bash run.sh
set -u
G="$(cd "$(dirname "$0")" && pwd)"
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 RSHMEM_BOOTSTRAP_TIMEOUT=30
T0=$(date +%s); DL=${DL:-100}
el() { echo "[$(($(date +%s) - T0)) s] $*" >> "$OUT/progress.txt"; }
late() { [ $(($(date +%s) - T0)) -gt "${1:-$DL}" ]; }
NVH=$(python3 -c 'import nvidia.nvshmem as m; print(list(m.__path__)[0])' 2> /dev/null ||
  /opt/cuda13/bin/python -c 'import nvidia.nvshmem as m; print(list(m.__path__)[0])' 2> /dev/null)
N=$(nvidia-smi -L | wc -l)
{ date -u; echo "NVH=$NVH GPUs=$N"; nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version --format=csv
  nvidia-smi topo -m | head -4; md5sum "$G"/main/lib/librshmem.so.0 "$G"/new/lib/librshmem.so.0; } > "$OUT/env.txt" 2>&1
if [ "$N" -lt 2 ]; then
  export CUDA_MPS_PIPE_DIRECTORY=/tmp/nvrows-mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/nvrows-mps-log
  export CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50 NVSHMEM_DISABLE_NCCL=1
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"; nvidia-cuda-mps-control -d
  echo "MPS on ($N GPU): every number is a proxy" >> "$OUT/env.txt"
fi
root=(); [ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
NP=2
# rsh CONFIG PROG ARGS...: run PROG under rshmemrun with CONFIG's library and switches.
rsh() {
  local cfg=$1; shift
  local lib=new v=c b=1
  case $cfg in main) lib=main ;; c) v=c ;; cp) v=cp ;; c0) v=c b=0 ;; esac
  RSHMEM_HEAP_VARIANT=$v RSHMEM_INIT_END_BARRIER=$b LD_LIBRARY_PATH=$G/$lib/lib timeout 20 "$G/bin/rshmemrun" -n $NP "$@"
}
nvrun() {
  LD_LIBRARY_PATH=$NVH/lib timeout 30 mpirun "${root[@]}" -np $NP --bind-to none -x NVSHMEM_BOOTSTRAP=MPI \
    -x NVSHMEM_DISABLE_NVLS -x NCCL_NVLS_ENABLE -x LD_LIBRARY_PATH "$@"
}
ROWS=$OUT/rows.csv
echo "config,np,rep,bench,variant,size,ctas,threads,value,unit" > "$ROWS"
one() {
  local cfg=$1 rep=$2
  late && { el "skip $cfg rep$rep"; return; }
  if [ "$cfg" = nv ]; then nvrun "$G/b/nvshmem/init" --reps 1 > "$OUT/tmp.out" 2>> "$OUT/stderr.txt"
  else rsh "$cfg" "$G/b/rshmem/init" --reps 1 > "$OUT/tmp.out" 2>> "$OUT/stderr.txt"; fi
  el "$cfg rep$rep rc=$?"
  grep -E '^(init|mem),' "$OUT/tmp.out" | sed "s/^/$cfg,$NP,$rep,/" >> "$ROWS"
}
CFGS=${CFGS:-main c cp c0 nv}
for rep in $(seq ${REPS:-5}); do for cfg in $CFGS; do one $cfg $rep; done; done
for cfg in main c cp; do
  late && break
  echo "=== $cfg RSHMEM_DEBUG=INFO" >> "$OUT/debug.txt"
  RSHMEM_DEBUG=INFO rsh $cfg "$G/b/rshmem/init" --reps 1 > "$OUT/tmp.out" 2> "$OUT/tmp.err"
  el "debug $cfg rc=$?"
  grep -hE '^init,|^mem,' "$OUT/tmp.out" >> "$OUT/debug.txt"
  grep -hE 'GPU heap|warn|WARN|rror' "$OUT/tmp.err" | head -c 12000 >> "$OUT/debug.txt"
done
for row in malloc_1GiB malloc_256MiB nvshmem_init first_barrier init_to_first_barrier first_bcast_64KiB first_bcast_64B after_init after_malloc_256MiB; do
  for cfg in $CFGS; do
    awk -F, -v r=$row -v c=$cfg 'NR > 1 && $5 == r && $1 == c { print $9 }' "$ROWS" | sort -g |
      awk -v r=$row -v c=$cfg '{ a[NR] = $1; s = s " " $1 } END { if (NR) printf "%s %s: median %s (%d runs:%s)\n", r, c, (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2), NR, s }'
  done
done > "$OUT/summary.txt"
# CUDA tests at 2 PEs with the new library (c: the default switches; cp: the parallel variant).
cd "$G/t"
for v in c cp; do
  for n in heap_ahead heap_exact heap_default rma reinit first_coll; do
    late $((DL + 25)) && { echo "skip $v $n" >> "$OUT/tests.txt"; continue; }
    [ $v = cp ] && [ $n != heap_ahead ] && [ $n != heap_default ] && continue
    rsh $v ./$n > "$OUT/t.log" 2>&1
    echo "$v np$NP $n rc=$?" >> "$OUT/tests.txt"
    grep -E "heap_ahead:|PASS|FAIL|rror" "$OUT/t.log" | tail -n 6 | sed 's/^/    /' >> "$OUT/tests.txt"
  done
done
el "tests done"
# The 2-PE device rows of §2 still behind, main beside NVSHMEM (PE 0's rows; 2 launches each).
PT=$OUT/pt.csv; echo "lib,rep,bench,variant,size,ctas,threads,value,unit" > "$PT"
for rep in 1 2; do
  for p in "p_bw --ctas 132 --min 65536 --max 65536" "rtt --only pingpong_signal,floor_flag" "put_bw --ctas 132 --min 2097152 --max 8388608 --only put_nbi_block,floor_sm_push"; do
    for lib in rshmem nvshmem; do
      late $((DL + 60)) && { el "skip $lib $p"; continue; }
      set -- $p; prog=$1; shift
      if [ $lib = rshmem ]; then rsh main "$G/pt/rshmem/$prog" "$@" > "$OUT/tmp.out" 2>> "$OUT/stderr.txt"
      else nvrun "$G/pt/nvshmem/$prog" "$@" > "$OUT/tmp.out" 2>> "$OUT/stderr.txt"; fi
      el "$lib $prog rep$rep rc=$?"
      grep -vE '^#|^bench,' "$OUT/tmp.out" | grep , | sed "s/^/$lib,$rep,/" >> "$PT"
    done
  done
done
rm -f "$OUT/tmp.out" "$OUT/tmp.err" "$OUT/t.log"
[ "$N" -lt 2 ] && { echo quit | nvidia-cuda-mps-control; sleep 0.5; }
el done
