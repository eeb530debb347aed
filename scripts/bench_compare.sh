#!/usr/bin/env bash
# rshmem vs NVSHMEM on a GPU machine, side by side, in one run (`make bench-compare`).
#
# Builds every program of perftest/gpu twice from the same source: against NVSHMEM (-rdc +
# libnvshmem_device.a) and against rshmem (pkg-config rshmem, no -rdc). Runs them alternately,
# round after round (NVSHMEM, rshmem, NVSHMEM, rshmem, ...), each program's warm-ups excluded
# inside the program, and prints one table per benchmark: NVSHMEM median, rshmem median over the
# rounds, their ratio and which is better. Writes raw.csv, summary.csv, tables.txt/.md, one PNG
# per benchmark family and env.txt into the results folder.
#
# NVSHMEM sends host on-stream collectives to NCCL when it finds NCCL: the `stream`,
# `stream_team` and `init` programs are therefore run twice for NVSHMEM, as "nvshmem" (default:
# NCCL path where NVSHMEM uses it) and "nvshmem-nonccl" (NVSHMEM_DISABLE_NCCL=1: NVSHMEM's own
# kernels). `coll` runs NVSHMEM with NVSHMEM_REDUCE_SCRATCH_SIZE=16777216 (see config_list).
#
# If rshmem is missing or a program does not build against it (its GPU runtime is incomplete),
# that is printed and NVSHMEM's numbers are still reported.
#
# usage: scripts/bench_compare.sh [options]
#   --rshmem PREFIX   rshmem install (lib/librshmem.so, lib/pkgconfig/rshmem.pc, bin/rshmemrun);
#                     default $RSHMEM_PREFIX, else build/stage when it holds a library
#   --nvshmem HOME    NVSHMEM (include/, lib/); default $NVSHMEM_HOME, else the pip package
#                     nvidia-nvshmem-cu13 found through python
#   --no-rshmem, --no-nvshmem
#   --np N            PEs per launch, one per GPU (default 2; 4 or 8 on the 4-/8-GPU machines)
#   --rounds N        rounds (default 3; fewer than 3 is refused)
#   --quick           short sweeps (every program gets --quick)
#   --progs "a b"     a subset of: put_bw p_bw lat rtt amo_bw sync coll stream stream_team init
#   --args "..."      extra arguments for every program (e.g. "--reps 3 --target-ms 1")
#   --out DIR         results folder (default results/gpu-<date>)
#   --timeout S       limit per launch (default 900 s)
#   -j N              parallel builds (default: number of CPUs)
#   --prebuilt DIR    no build: run the programs in DIR/nvshmem and DIR/rshmem (built elsewhere
#                     with the same installs, e.g. on a machine without a GPU; NVSHMEM's library
#                     directory is put first on LD_LIBRARY_PATH, its rpath may point elsewhere)
# env: NVCC, CUDA_ARCH (sm_90), PYTHON, NVSHMEM_LAUNCH (command prefix replacing mpirun)
set -uo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
all_progs="put_bw p_bw lat rtt amo_bw sync coll stream stream_team init"
progs="$all_progs"
rounds=3
np=2
quick=0
extra=""
out=""
tmo=900
jobs="$(nproc 2>/dev/null || echo 4)"
rs_prefix="${RSHMEM_PREFIX:-}"
nv_home="${NVSHMEM_HOME:-}"
use_rs=1
use_nv=1
prebuilt=""
cmdline="$0 $*"

while [ $# -gt 0 ]; do
  case "$1" in
    --rshmem) rs_prefix="$2"; shift 2 ;;
    --nvshmem) nv_home="$2"; shift 2 ;;
    --no-rshmem) use_rs=0; shift ;;
    --no-nvshmem) use_nv=0; shift ;;
    --rounds) rounds="$2"; shift 2 ;;
    --np) np="$2"; shift 2 ;;
    --quick) quick=1; shift ;;
    --progs) progs="$2"; shift 2 ;;
    --args) extra="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --timeout) tmo="$2"; shift 2 ;;
    -j) jobs="$2"; shift 2 ;;
    --prebuilt) prebuilt="$2"; shift 2 ;;
    -h|--help) sed -n '2,36p' "$0"; exit 0 ;;
    *) echo "bench_compare: unknown option $1 (see --help)"; exit 1 ;;
  esac
done
if [ "$rounds" -lt 3 ]; then echo "bench_compare: at least 3 rounds (got $rounds)"; exit 1; fi
if [ -z "$out" ]; then
  out="$root/results/gpu-$(date +%F)"
  [ "$np" = 2 ] || out="$out-np$np"
fi
mkdir -p "$out"
out="$(cd "$out" && pwd)"
build="$root/build/bench-compare"
log="$out/logs"
mkdir -p "$log" "$build"
rm -f "$log"/*
say() { echo "bench_compare: $*"; }

# ---- tools -------------------------------------------------------------------------------------
find_nvcc() {
  if [ -n "${NVCC:-}" ] && [ -x "$NVCC" ]; then echo "$NVCC"; return; fi
  if command -v nvcc >/dev/null 2>&1; then command -v nvcc; return; fi
  [ -x /usr/local/cuda/bin/nvcc ] && { echo /usr/local/cuda/bin/nvcc; return; }
  if [ -x /opt/cuda13/bin/python ]; then
    local h
    h="$(/opt/cuda13/bin/python -c 'import nvidia.cu13 as m; print(list(m.__path__)[0])' 2>/dev/null || true)"
    [ -n "$h" ] && [ -x "$h/bin/nvcc" ] && { echo "$h/bin/nvcc"; return; }
  fi
}
nvcc="$(find_nvcc)"
if [ -z "$nvcc" ]; then say "no nvcc found (set NVCC or put nvcc on PATH)"; exit 1; fi

pythons=("${PYTHON:-}" /opt/torch/.venv/bin/python3 python3 /opt/cuda13/bin/python)
find_nvshmem() {
  local py h
  for py in "${pythons[@]}"; do
    [ -n "$py" ] && command -v "$py" >/dev/null 2>&1 || continue
    h="$("$py" -c 'import nvidia.nvshmem as m, os
f = getattr(m, "__file__", None)
print(os.path.dirname(f) if f else list(m.__path__)[0])' 2>/dev/null || true)"
    if [ -n "$h" ] && [ -d "$h/include" ]; then echo "$h"; return; fi
  done
}
if [ "$use_nv" = 1 ]; then
  [ -n "$nv_home" ] || nv_home="$(find_nvshmem)"
  if [ -z "$nv_home" ] || [ ! -f "$nv_home/include/nvshmem.h" ]; then
    say "NVSHMEM not found (set NVSHMEM_HOME or install nvidia-nvshmem-cu13): NVSHMEM side skipped"
    use_nv=0
  fi
fi
if [ "$use_rs" = 1 ]; then
  [ -n "$rs_prefix" ] || { [ -e "$root/build/stage/lib/librshmem.so" ] && rs_prefix="$root/build/stage"; }
  if [ -z "$rs_prefix" ] || ! ls "$rs_prefix"/lib/librshmem.so* >/dev/null 2>&1; then
    say "rshmem: no install given or found (--rshmem PREFIX / RSHMEM_PREFIX): rshmem side skipped"
    use_rs=0
  elif [ ! -x "$rs_prefix/bin/rshmemrun" ]; then
    say "rshmem: $rs_prefix/bin/rshmemrun missing: rshmem side skipped"
    use_rs=0
  else
    rs_prefix="$(cd "$rs_prefix" && pwd)"
  fi
fi
if [ "$use_nv" = 0 ] && [ "$use_rs" = 0 ]; then say "nothing to run"; exit 1; fi

pick_python() {
  local py
  for py in "${pythons[@]}"; do
    [ -n "$py" ] && command -v "$py" >/dev/null 2>&1 && { echo "$py"; return; }
  done
}
python="$(pick_python)"

# ---- environment record ------------------------------------------------------------------------
{
  echo "date: $(date -u '+%F %T UTC')"
  echo "host: $(hostname)"
  echo "command: $cmdline"
  echo "pes: $np"
  rev="${BENCH_GIT_REV:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null)}"
  git -C "$root" status --porcelain 2>/dev/null | grep -q . && rev="$rev (working tree modified)"
  echo "git: ${rev:-unknown}"
  echo "nvcc: $nvcc ($("$nvcc" --version | sed -n 's/.*release \([0-9.]*\), \(V[0-9.]*\).*/\1 \2/p'))"
  command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi --query-gpu=index,name,driver_version,memory.total,pci.bus_id --format=csv,noheader | sed 's/^/gpu: /'
  command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi topo -m 2>/dev/null | sed -n '1,3p' | sed 's/^/topo: /'
  if [ "$use_nv" = 1 ]; then
    echo "nvshmem: $nv_home"
    ver="$(sed -n 's/^#define NVSHMEM_VENDOR_MAJOR_VERSION \([0-9]*\).*/\1/p; s/^#define NVSHMEM_VENDOR_MINOR_VERSION \([0-9]*\).*/\1/p; s/^#define NVSHMEM_VENDOR_PATCH_VERSION \([0-9]*\).*/\1/p' "$nv_home"/include/non_abi/nvshmem_version.h 2>/dev/null | paste -sd.)"
    echo "nvshmem version: ${ver:-unknown}"
    echo "nvshmem launcher: ${NVSHMEM_LAUNCH:-mpirun (NVSHMEM_BOOTSTRAP=MPI)} $(mpirun --version 2>/dev/null | head -1)"
  fi
  if [ "$use_rs" = 1 ]; then
    echo "rshmem: $rs_prefix ($(PKG_CONFIG_PATH="$rs_prefix/lib/pkgconfig" pkg-config --modversion rshmem 2>/dev/null || echo version unknown))"
  fi
  env | grep -E '^(NVSHMEM_|NCCL_|CUDA_VISIBLE)' | sort | sed 's/^/env: /'
} > "$out/env.txt"
cat "$out/env.txt"

# ---- build -------------------------------------------------------------------------------------
libs=()
[ "$use_nv" = 1 ] && libs+=(nvshmem)
[ "$use_rs" = 1 ] && libs+=(rshmem)
declare -A built
if [ -n "$prebuilt" ]; then
  build="$(cd "$prebuilt" && pwd)" || exit 1
  [ "$use_nv" = 1 ] && export LD_LIBRARY_PATH="$nv_home/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  for lib in "${libs[@]}"; do
    for p in $progs; do
      if [ -x "$build/$lib/$p" ]; then built[$lib/$p]=1; else built[$lib/$p]=0; say "$lib $p: not in $build/$lib"; fi
    done
  done
  say "programs from $build (not built here)"
else
  say "building [$progs] for [${libs[*]}] with $jobs jobs"
  t_build=$(date +%s)
  pids=()
  for lib in "${libs[@]}"; do
    # Always from scratch: make sees the program sources, not the headers of the library install
    # being compared, so a program built against an earlier install would be reused.
    rm -rf "${build:?}/$lib"
    mkdir -p "$build/$lib"
    for p in $progs; do
      while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do sleep 0.2; done
      (
        make -s -C "$root/perftest/gpu" LIB="$lib" NVCC="$nvcc" ARCH="${CUDA_ARCH:-sm_90}" \
          NVSHMEM_HOME="$nv_home" RSHMEM_PREFIX="$rs_prefix" BUILD="$build/$lib" "$p" \
          > "$log/build-$lib-$p.log" 2>&1
      ) &
      pids+=($!)
    done
  done
  wait "${pids[@]}" 2>/dev/null
  for lib in "${libs[@]}"; do
    for p in $progs; do
      if [ -x "$build/$lib/$p" ] && [ "$build/$lib/$p" -nt "$root/perftest/gpu/$p.cu" ] && ! grep -q "rror" "$log/build-$lib-$p.log"; then
        built[$lib/$p]=1
      else
        built[$lib/$p]=0
        if [ "$lib" = rshmem ]; then
          say "rshmem build of $p FAILED (the GPU runtime may be incomplete); NVSHMEM numbers are still reported. First errors:"
        else
          say "NVSHMEM build of $p FAILED. First errors:"
        fi
        grep -m 5 -E "error|undefined reference" "$log/build-$lib-$p.log" | sed 's/^/    /'
      fi
    done
  done
  say "build took $(( $(date +%s) - t_build )) s"
fi

# ---- launchers -----------------------------------------------------------------------------------
# "nvshmem" must mean NVSHMEM as installed (NCCL where it finds it): drop a NCCL switch-off that
# the caller's environment may carry; the nvshmem-nonccl configuration sets it explicitly.
if [ -n "${NVSHMEM_DISABLE_NCCL:-}" ]; then say "NVSHMEM_DISABLE_NCCL was set in the environment: unset for the default NVSHMEM runs"; unset NVSHMEM_DISABLE_NCCL; fi
root_flag=()
[ "$(id -u)" = 0 ] && root_flag=(--allow-run-as-root)
nv_cmd() {  # nv_cmd [VAR=value...]: sets cmd=(launcher for $np NVSHMEM PEs)
  if [ -n "${NVSHMEM_LAUNCH:-}" ]; then
    # shellcheck disable=SC2206
    cmd=(env "$@" $NVSHMEM_LAUNCH)
    return
  fi
  local xs=(-x NVSHMEM_BOOTSTRAP=MPI -x PATH) e
  [ -n "${LD_LIBRARY_PATH:-}" ] && xs+=(-x LD_LIBRARY_PATH)
  for e in "$@"; do xs+=(-x "$e"); done
  for e in $(env | grep -oE '^(NVSHMEM|NCCL)_[A-Za-z0-9_]*=' | tr -d =); do
    [ "$e" = NVSHMEM_BOOTSTRAP ] || xs+=(-x "$e")
  done
  cmd=(mpirun "${root_flag[@]}" -np "$np" --bind-to none "${xs[@]}")
}
rs_cmd() { cmd=(env "$@" "$rs_prefix/bin/rshmemrun" -n "$np"); }

config_list() {  # config_list <prog>: lines "name lib [VAR=value...]"
  local p="$1"
  if [ "$use_nv" = 1 ]; then
    case "$p" in
      # NVSHMEM's device reducescatter asserts when the source exceeds half of its reduce scratch
      # ("Increase value of NVSHMEM_REDUCE_SCRATCH_SIZE"; with the default it aborted at 512 KiB):
      # give it 16 MiB so the sweep reaches 4 MiB.
      coll) echo "nvshmem nvshmem NVSHMEM_REDUCE_SCRATCH_SIZE=16777216" ;;
      *) echo "nvshmem nvshmem" ;;
    esac
    case "$p" in stream|stream_team|init) echo "nvshmem-nonccl nvshmem NVSHMEM_DISABLE_NCCL=1" ;; esac
  fi
  [ "$use_rs" = 1 ] && echo "rshmem rshmem"
}

raw="$out/raw.csv"
echo "lib,round,bench,variant,size,ctas,threads,value,unit" > "$raw"
args=()
[ "$quick" = 1 ] && args+=(--quick)
# shellcheck disable=SC2206
[ -n "$extra" ] && args+=($extra)

run_one() {  # run_one <config name> <lib> <round> <prog> [VAR=value...]
  local name="$1" lib="$2" r="$3" p="$4"; shift 4
  local bin="$build/$lib/$p" lf="$log/run-$name-$p-r$r"
  local t0 t1 rc rows secs
  if [ "$lib" = rshmem ]; then rs_cmd "$@"; else nv_cmd "$@"; fi
  [ "$r" = 1 ] && echo "+ ${cmd[*]} $bin ${args[*]}" >> "$log/commands.txt"
  t0=$(date +%s.%N)
  timeout -k 10 "$tmo" "${cmd[@]}" "$bin" "${args[@]}" < /dev/null > "$lf.csv" 2> "$lf.err"
  rc=$?
  t1=$(date +%s.%N)
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
  grep -E '^[a-z_0-9]+,' "$lf.csv" | grep -v '^bench,variant,' | sed "s/^/$name,$r,/" >> "$raw"
  [ $rc -eq 0 ] && echo "$name,$r,launch,$p,0,0,0,$secs,s" >> "$raw"  # whole launch, successful runs only
  rows=$(grep -E '^[a-z_0-9]+,' "$lf.csv" | grep -cv '^bench,variant,')
  if [ $rc -ne 0 ]; then
    say "round $r $name $p: FAILED rc=$rc after $rows rows, $secs s (log: ${lf#$root/}.err):"
    { grep -iE 'error|fail|abort|timed out|what\(\)' "$lf.err" | grep -v '^ *$' | head -n 4; tail -n 2 "$lf.err"; } | sed 's/^/    /'
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
      echo "    (killed by the ${tmo} s limit: the rows printed before are kept; not run again in later rounds)"
      hung[$name/$p]=1
    fi
  else
    printf 'bench_compare: round %s %-15s %-7s %4d rows %7.1f s\n' "$r" "$name" "$p" "$rows" "$secs"
  fi
}

declare -A hung
t_run=$(date +%s)
for r in $(seq 1 "$rounds"); do
  for p in $progs; do
    while read -r name lib envs; do
      [ -n "$name" ] || continue
      if [ "${built[$lib/$p]:-0}" != 1 ]; then
        [ "$r" = 1 ] && say "$name $p: not built, skipped"
        continue
      fi
      if [ "${hung[$name/$p]:-0}" = 1 ]; then
        say "round $r $name $p: skipped (hit the time limit before)"
        continue
      fi
      # shellcheck disable=SC2086
      run_one "$name" "$lib" "$r" "$p" $envs
    done < <(config_list "$p")
  done
done
say "runs took $(( $(date +%s) - t_run )) s"

# ---- tables and plots --------------------------------------------------------------------------
if [ -n "$python" ]; then
  "$python" "$root/scripts/bench_compare.py" --raw "$raw" --out "$out" | tee "$out/tables.txt"
else
  say "no python found: raw CSV only ($raw)"
fi
say "results in ${out#$root/}"
