#!/usr/bin/env bash
# nvrows, session 24 (second task): put_block rows, main 6132b1d headers ("base") vs the same
# with idle threads skipping the group copy ("A"), vs NVSHMEM 3.4.5; put_block/rma CUDA tests of both.
# pkg.tar.xz: stage/ (rshmem install, 3c2ae7d library; the programs carry their own device code),
# pb/{nvshmem,base,A}/put_bw, tests/{base,A}/{put_block,rma}. Device: bash run.sh (OUT set).
set -u
G="$(cd "$(dirname "$0")" && pwd)"; OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; R="$OUT/r"; mkdir -p "$R"
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 RSHMEM_BOOTSTRAP_TIMEOUT=30
cd "$G" && tar xJf pkg.tar.xz || exit 1
NVH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nvshmem
S="$G/stage"; chmod +x "$S"/bin/* pb/*/* tests/*/*
P="$R/progress.txt"; nvidia-smi -L > "$P"
LD_LIBRARY_PATH="$S/lib" timeout 30 "$S/bin/rshmem-info" > "$R/rshmem-info.txt" 2>&1
for v in base A; do for t in put_block rma; do
  LD_LIBRARY_PATH="$S/lib" timeout -k 5 40 "$S/bin/rshmemrun" -n 2 "tests/$v/$t" "$G/tests/$v" > "$R/test-$v-$t.log" 2>&1
  echo "test $v $t rc=$? at $SECONDS s" >> "$P"; done; done
A=(--quick --ctas 32 --only put_block,put_nbi_block --no-floor)
run1() { # run1 np lib round
  local np=$1 b=$2 r=$3 f="$R/np$1-$2-r$3.csv"
  if [ "$b" = nvshmem ]; then
    LD_LIBRARY_PATH="$NVH/lib" timeout -k 5 40 mpirun --allow-run-as-root -np "$np" --bind-to none -x NVSHMEM_BOOTSTRAP=MPI \
      -x LD_LIBRARY_PATH -x NVSHMEM_DISABLE_NVLS -x NCCL_NVLS_ENABLE pb/nvshmem/put_bw "${A[@]}" > "$f" 2> "$f.err"
  else
    LD_LIBRARY_PATH="$S/lib" timeout -k 5 40 "$S/bin/rshmemrun" -n "$np" "pb/$b/put_bw" "${A[@]}" > "$f" 2> "$f.err"
  fi
  echo "np$np $b r$r rc=$? at $SECONDS s" >> "$P"
}
for r in 1 2 3; do
  case $r in 1) o="nvshmem base A";; 2) o="A nvshmem base";; 3) o="base A nvshmem";; esac
  for b in $o; do run1 2 "$b" "$r"; done
done
for r in 1 2; do [ "$SECONDS" -lt 100 ] || break
  case $r in 1) o="nvshmem base A";; 2) o="A base nvshmem";; esac
  for b in $o; do run1 4 "$b" "$r"; done
done
find "$R" -name '*.err' -size 0 -delete
tar czf "$OUT/res.tgz" -C "$R" . ; cp "$P" "$OUT/"
