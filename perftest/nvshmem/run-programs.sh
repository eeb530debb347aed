#!/usr/bin/env bash
# Runs NVIDIA's NVSHMEM examples and perftests, as built by scripts/build-nvshmem-programs.sh,
# on rshmem with their OWN default arguments: one PASS/FAIL/TIMEOUT/SKIP line per program.
#
# usage: perftest/nvshmem/run-programs.sh BIN NP TABLE [PROGRAM...]
#   BIN    the build's OUT directory (BIN/examples/<name>, BIN/perftest/<name>)
#   NP     PEs per program (one per GPU where there are enough GPUs)
#   TABLE  file the result lines are appended to; each program's output goes to TABLE.d/<name>.np<NP>
#   PROGRAM...  examples/<name> or perftest/<name>; default: every program in BIN
# env:
#   RSHMEM_PREFIX  the rshmem install (bin/rshmemrun; lib/ goes on LD_LIBRARY_PATH)
#   TIMEOUT        seconds per program (default 60)
#   DEADLINE       epoch seconds: programs not started by then are listed as SKIP
#   RUN_KNOWN_BAD  1: run the known-bad programs too (default: a SKIP line with the reason)
# Line format: RESULT  np=NP  kind/name  rc=RC  SECONDS s  [last line of output]
# RESULT: PASS (exit status 0 on every PE and no failure reported in the output: some examples
# print "run failure" / "Error at ..." and still exit 0), FAIL, TIMEOUT, SKIP (out of time, or
# known-bad: broken in NVIDIA's own source, the reason printed), or N/A where it says it
# does not run at this PE count (NVIDIA's point-to-point perftests need exactly 2 PEs; they then
# leave through a path that frees tables they never allocated, and exit non-zero on any library).
# The MPI examples (mpi-based-init, dev-guide-ring-mpi, uid-based-init) start under mpirun; the
# rest under rshmemrun.
set -u
bin="${1:?usage: run-programs.sh BIN NP TABLE [PROGRAM...]}"
np="${2:?usage: run-programs.sh BIN NP TABLE [PROGRAM...]}"
table="${3:?usage: run-programs.sh BIN NP TABLE [PROGRAM...]}"
shift 3
prefix="${RSHMEM_PREFIX:?set RSHMEM_PREFIX to the rshmem install}"
unset RSHMEM_PREFIX # not a library setting: the PEs would warn about it
timeout_s="${TIMEOUT:-60}"
deadline="${DEADLINE:-0}"
logs="$table.d"
mkdir -p "$logs"
export LD_LIBRARY_PATH="$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0

if [ $# -eq 0 ]; then
    set -- $(cd "$bin" && ls -d examples/* perftest/* 2>/dev/null | sort)
fi
for prog in "$@"; do
    name=$(basename "$prog")
    log="$logs/$name.np$np"
    if [ "$deadline" != 0 ] && [ "$(date +%s)" -ge "$deadline" ]; then
        printf 'SKIP     np=%s  %-40s (out of time)\n' "$np" "$prog" >>"$table"
        continue
    fi
    case $name in
        # NVSHMEM 3.4.5 perftest/device/coll/sync_latency.cu: lines 33-34 give every kernel
        # (team, iter), lines 60-62 make the sync_all ones, lines 83-84 launch those with
        # one-entry argument arrays.
        sync_latency) why="NVIDIA's program reads out of bounds: its sync_all kernels take (team, iter) but are launched with 1-entry argument arrays, so iter is garbage, different per PE, and the PEs' barriers can hang" ;;
        *) why="" ;;
    esac
    if [ -n "$why" ] && [ "${RUN_KNOWN_BAD:-0}" != 1 ]; then
        printf 'SKIP     np=%s  %-40s (known-bad: %s)\n' "$np" "$prog" "$why" >>"$table"
        continue
    fi
    case $name in
        mpi-based-init | dev-guide-ring-mpi | uid-based-init)
            launch=(mpirun --allow-run-as-root -np "$np" --bind-to none -x LD_LIBRARY_PATH -x NVSHMEM_DISABLE_NVLS -x NCCL_NVLS_ENABLE) ;;
        *) launch=("$prefix/bin/rshmemrun" -n "$np") ;;
    esac
    t0=$(date +%s.%N)
    (cd "$(dirname "$bin/$prog")" && timeout -k 5 "$timeout_s" "${launch[@]}" "./$name") >"$log" 2>&1 </dev/null
    rc=$?
    secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    case $rc in
        0) result=PASS ;;
        124 | 137) result=TIMEOUT ;;
        *) result=FAIL ;;
    esac
    if [ $result = PASS ] && grep -v '^rshmem' "$log" | grep -qiE 'run failure|^error at|mismatch|incorrect|wrong result'; then result=FAIL; fi
    if [ $result != PASS ] && grep -q 'This test requires exactly two processes' "$log"; then result=N/A; fi
    last=$(grep -v '^[[:space:]]*$' "$log" | tail -1 | cut -c1-160)
    printf '%-8s np=%s  %-40s rc=%-3s %6s s  %s\n' "$result" "$np" "$prog" "$rc" "$secs" "$last" >>"$table"
done
