#!/usr/bin/env bash
# nvbench, session 29: rshmem vs NVSHMEM 3.4.5 on 2 x H200 (NVLink), 2 PEs, one PE per GPU.
# pkg.tar.xz: stage/ (main's library = fin31 stage: librshmem + rshmemrun), pb/nvshmem/*
# (NVSHMEM 3.4.5, -rdc, the pip wheel), pb/rshmem/* (perftest/gpu against main's headers),
# pkg2.tar.xz: pb-new3/rshmem/put_bw (two-word block-put fast path), pb-new2/rshmem/put_bw
# (main + -DRSHMEM_PUT_DEEP_CTAS=1024), tests/new3/* (CUDA tests against the new3 headers).
# Device (kind nvidia-h200-x2): OUT=$OUT LIMIT=340 TESTS="rma put_block tma_put moe_shuffle_pattern" \
#   timeout -k 5 400 bash .gpu/nvb29/run.sh   (PARTS="full exp" by default; LIMIT = seconds in all)
set -u
G="$(cd "$(dirname "$0")" && pwd)"; R="$(cd "$G/../.." && pwd)"
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
W=/tmp/nvb29w; rm -rf "$W"; mkdir -p "$W"; cd "$W" && tar xJf "$G/pkg.tar.xz" || exit 1
[ -f "$G/pkg2.tar.xz" ] && tar xJf "$G/pkg2.tar.xz"
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 RSHMEM_BOOTSTRAP_TIMEOUT=30 PATH=/usr/local/cuda/bin:$PATH
chmod +x stage/bin/* pb*/*/* tests/*/* 2>/dev/null
P="$OUT/progress.txt"; T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 )) s] $*" >> "$P"; }
{ date -u; nvidia-smi -L; nvidia-smi topo -m; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; nvidia-smi nvlink -s 2>&1 | head -40; } > "$OUT/env.txt" 2>&1
el "unpacked"
LIMIT=${LIMIT:-330}
late() { [ $(( $(date +%s) - T0 )) -gt "$1" ]; }
bc() { # bc name budget_s pbdir args...: scripts/bench_compare.sh with the prebuilt programs
  local name=$1 b=$2 pb=$3; shift 3
  late $(( LIMIT - 20 )) && { el "skip $name"; return; }
  local left=$(( LIMIT - ($(date +%s) - T0) )); [ "$b" -gt "$left" ] && b=$left
  LD_LIBRARY_PATH="$W/stage/lib" timeout -k 5 "$b" bash "$R/scripts/bench_compare.sh" --np 2 --rshmem "$W/stage" \
    --prebuilt "$W/$pb" --out "$OUT/$name" "$@" > "$OUT/$name.log" 2>&1
  el "$name rc=$?"
  rm -f "$OUT/$name"/logs/*.err.empty 2>/dev/null; find "$OUT/$name/logs" -name '*.err' -size 0 -delete 2>/dev/null
}
tst() { # tst variant test
  [ -x "tests/$1/$2" ] || { el "test $1 $2 missing"; return; }
  late $(( LIMIT - 30 )) && { el "skip test $1 $2"; return; }
  ( cd "tests/$1" && LD_LIBRARY_PATH="$W/stage/lib" timeout -k 5 40 "$W/stage/bin/rshmemrun" -n 2 "./$2" "$W/tests/$1" > "$OUT/test-$1-$2.log" 2>&1 )
  el "test $1 $2 rc=$? $(grep -E '^(PASS|FAIL)' "$OUT/test-$1-$2.log" | head -1 | cut -c1-80)"
}
run1() { # run1 tag lib prog args...: one launch, CSV appended to $OUT/raw/TAG-np2-LIB.csv
  local tag=$1 b=$2 prog=$3; shift 3
  local f="$OUT/raw/$tag-np2-$b.csv"; mkdir -p "$OUT/raw"
  late $(( LIMIT - 15 )) && { el "skip $tag $b (time)"; return; }
  local d=pb/rshmem; [ "$b" = nv ] && d=pb/nvshmem; [ "$b" != nv ] && [ "$b" != old ] && d=pb-$b/rshmem
  [ -x "$d/$prog" ] || { el "skip $tag $b (no $d/$prog)"; return; }
  if [ "$b" = nv ]; then
    LD_LIBRARY_PATH="$NVH/lib" timeout -k 5 40 mpirun --allow-run-as-root -np 2 --bind-to none -x NVSHMEM_BOOTSTRAP=MPI \
      -x LD_LIBRARY_PATH -x NVSHMEM_DISABLE_NVLS -x NCCL_NVLS_ENABLE "$d/$prog" "$@" >> "$f" 2>> "$f.err"
  else
    LD_LIBRARY_PATH="$W/stage/lib" timeout -k 5 40 "$W/stage/bin/rshmemrun" -n 2 "$d/$prog" "$@" >> "$f" 2>> "$f.err"
  fi
  el "$tag $b rc=$?"
}
rounds() { # rounds tag "libs" prog args...: NR rounds, the order rotating
  local tag=$1 libs=($2) prog=$3; shift 3
  local n=${#libs[@]} r i
  for r in $(seq 0 $((NR - 1))); do for i in $(seq 0 $((n - 1))); do run1 "$tag" "${libs[$(( (i + r) % n ))]}" "$prog" "$@"; done; done
}
for py in /opt/torch/.venv/bin/python3 python3; do
  NVH="$($py -c 'import nvidia.nvshmem as m; print(list(m.__path__)[0])' 2>/dev/null)"; [ -d "$NVH/lib" ] && break; done
NR=${NR:-3}; L=${L:-nv old new3 new2}
PARTS=${PARTS:-full exp}
on() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
on full && bc full 250 pb --quick --args "--reps 3 --target-ms 1" --timeout 60
on extra && bc extra 90 pb --progs put_bw --args "--ctas 8,132 --min 256K --max 16M --only put_bw/put_block,put_bw/put_nbi_block,put_bw/floor --reps 3 --target-ms 1" --timeout 40
on exp && rounds blk "$L" put_bw --ctas 8,132 --min 256K --max 16M --only put_bw/put_block,put_bw/put_nbi_block --no-floor
on exp && rounds blkq "$L" put_bw --quick --max 32K --ctas 8,32 --only put_bw/put_block,put_bw/put_nbi_block --no-floor
for t in ${TESTS:-}; do tst ${TV:-new3} "$t"; done
find "$OUT/raw" -name '*.err' -size 0 -delete 2>/dev/null
[ -f "$G/more.sh" ] && . "$G/more.sh"
el "done"
