#!/usr/bin/env bash
# CPU benchmark: rshmem against the physical floor and Open MPI's OSHMEM, in one run.
#   bash perftest/host/bench.sh <rshmem install prefix> [row-name ...]
# Builds perftest/host (shmem_bench for rshmem, shmem_bench_oshmem with oshcc, floor), then runs
# ROUNDS rounds (default 3), each: floor, rshmem (rshmemrun -n NP), OSHMEM (oshrun -np NP), so
# the three see the same machine load. NP defaults to 2. Each figure printed is the median over
# rounds of each run's median of repetitions. If OSHMEM (or rshmem) fails, its error is printed
# and the table is made from what ran.
# SAVE=1 keeps the raw CSV (impl,round,name,size,value,unit) in perftest/results/cpu-<date>.csv
# and the printed table beside it (.txt). The host is shared: look at the load average printed
# with the table, and compare only columns measured in the same run.
set -u -o pipefail

if [ $# -lt 1 ]; then
    echo "usage: bash perftest/host/bench.sh <rshmem install prefix> [row-name ...]" >&2
    exit 2
fi
STAGE=$(realpath "$1")
shift
ROWS=("$@")
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RESULTS=$(cd "$HERE/.." && pwd)/results
BUILD=$HERE/build
ROUNDS=${ROUNDS:-3}
NP=${NP:-2}
TIMEOUT=${BENCH_TIMEOUT:-180}

# Fresh binaries (a stale one must not stand in for a failed build); -k: build what can be built (a library missing a routine must not stop the other columns).
rm -f "$BUILD/shmem_bench" "$BUILD/shmem_bench_oshmem" "$BUILD/floor"
if ! make -k --no-print-directory -C "$HERE" STAGE="$STAGE" >&2; then
    echo "bench.sh: some programs did not build (see above); running the others" >&2
fi

RAW=$(mktemp /tmp/rshmem-bench.XXXXXX.csv)
LOG=$(mktemp /tmp/rshmem-bench.XXXXXX.log)
trap 'rm -f "$RAW" "$LOG"' EXIT
echo "impl,round,name,size,value,unit" > "$RAW"

# Runs one benchmark command; appends its CSV rows tagged with impl and round.
run_one() {
    local impl=$1 round=$2
    shift 2
    if timeout "$TIMEOUT" "$@" >"$LOG" 2>&1; then
        grep -E '^[a-z][a-z0-9_]*,[0-9]+,[-0-9.eE+]+,[A-Za-z/]+$' "$LOG" | sed "s/^/$impl,$round,/" >> "$RAW"
    else
        local rc=$?
        echo "bench.sh: round $round: $impl failed (exit status $rc); its output ends with:" >&2
        tail -n 15 "$LOG" | sed 's/^/    /' >&2
        # Keep the rows it finished before failing.
        grep -E '^[a-z][a-z0-9_]*,[0-9]+,[-0-9.eE+]+,[A-Za-z/]+$' "$LOG" | sed "s/^/$impl,$round,/" >> "$RAW" || true
    fi
}

have_oshmem=0
if [ -x "$BUILD/shmem_bench_oshmem" ] && command -v oshrun >/dev/null; then
    have_oshmem=1
else
    echo "bench.sh: Open MPI OSHMEM (oshcc/oshrun) not installed: its column stays empty" >&2
fi

for round in $(seq 1 "$ROUNDS"); do
    echo "bench.sh: round $round of $ROUNDS" >&2
    [ -x "$BUILD/floor" ] && run_one floor "$round" "$BUILD/floor" --csv "${ROWS[@]}"
    if [ -x "$BUILD/shmem_bench" ]; then
        run_one rshmem "$round" "$STAGE/bin/rshmemrun" -n "$NP" "$BUILD/shmem_bench" --csv "${ROWS[@]}"
    fi
    if [ $have_oshmem = 1 ]; then
        # As root Open MPI needs the two ALLOW variables; without osc=^rdma every OSHMEM program
        # segfaults at exit on this Open MPI (4.1.4) build.
        run_one oshmem "$round" env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=^rdma \
            oshrun --oversubscribe -np "$NP" "$BUILD/shmem_bench_oshmem" --csv "${ROWS[@]}"
    fi
done

TABLE=$(mktemp /tmp/rshmem-bench.XXXXXX.txt)
trap 'rm -f "$RAW" "$LOG" "$TABLE"' EXIT
{
    echo "CPU benchmark, $NP PEs (floor: 2 processes), $ROUNDS rounds, $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "host: $(nproc) cores ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)), load average $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "rshmem: $STAGE; OSHMEM: $(command -v oshrun >/dev/null && oshrun --version 2>/dev/null | head -1 || echo absent)"
    echo
    python3 "$HERE/table.py" "$RAW"
} > "$TABLE"
echo
cat "$TABLE"

if [ "${SAVE:-0}" = 1 ]; then
    mkdir -p "$RESULTS"
    out=$RESULTS/cpu-$(date +%Y-%m-%d)
    [ -e "$out.csv" ] && out=$RESULTS/cpu-$(date +%Y-%m-%d-%H%M%S)
    cp "$RAW" "$out.csv"
    cp "$TABLE" "$out.txt" # the table as printed, with the host load at the time
    echo "raw CSV saved to $out.csv (table: $out.txt)"
fi
