#!/usr/bin/env bash
# CPU benchmark: rshmem against the physical floor and Open MPI's OSHMEM, in one run.
#   bash perftest/host/bench.sh <rshmem install prefix> [row-name ...]
# Builds perftest/host (shmem_bench for rshmem, shmem_bench_oshmem with oshcc, floor), then runs
# ROUNDS rounds (default 3), each: floor, rshmem (rshmemrun -n NP), OSHMEM (oshrun -np NP), so
# the three see the same machine load. NP defaults to 2. Each figure printed is the median over
# rounds of each run's median of repetitions. If OSHMEM (or rshmem) fails, its error is printed
# and the table is made from what ran.
# Each round also runs barrier_all_long (barriers back to back for 0.5 s, the mean) while one
# busy process per CPU competes for the cores (as a parallel build does): rows
# barrier_all_long_loaded, and for rshmem barrier_all_long_loaded_spin1000 too, the same with
# RSHMEM_WAIT_SPIN_US=1000 (what WAIT_SPIN_US=auto did before it learnt to back off), so before
# and after sit in one run. LOADED=0 skips them; naming barrier_all_loaded as a row runs only
# them (with no other row named, only them).
# HOSTS=2 adds the multi-host table after this one (perftest/net/bench.sh: PEs on two namespaced
# hosts over libfabric tcp, beside OSHMEM over UCX tcp and the bare TCP floor; needs root).
# SAVE=1 keeps the raw CSV (impl,round,name,size,value,unit) in results/cpu-<date>.csv
# and the printed table beside it (.txt). The host is shared: look at the load average printed
# with the table, and compare only columns measured in the same run.
set -u -o pipefail

if [ $# -lt 1 ]; then
    echo "usage: bash perftest/host/bench.sh <rshmem install prefix> [row-name ...]" >&2
    exit 2
fi
STAGE=$(realpath "$1")
shift
case ${HOSTS:-} in
    '' | 2) ;;
    *) echo "bench.sh: HOSTS=$HOSTS: the multi-host table runs between 2 hosts (HOSTS=2)" >&2; exit 2 ;;
esac
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
echo "impl,round,name,size,value,unit" > "$RAW"

# Runs one benchmark command; appends its CSV rows tagged with impl and round (and each row
# name followed by $SUFFIX).
SUFFIX=
run_one() {
    local impl=$1 round=$2
    shift 2
    local tag="s/^\([a-z][a-z0-9_]*\),/\1$SUFFIX,/; s/^/$impl,$round,/"
    if timeout "$TIMEOUT" "$@" >"$LOG" 2>&1; then
        grep -E '^[a-z][a-z0-9_]*,[0-9]+,[-0-9.eE+]+,[A-Za-z/]+$' "$LOG" | sed "$tag" >> "$RAW"
    else
        local rc=$?
        echo "bench.sh: round $round: $impl failed (exit status $rc); its output ends with:" >&2
        tail -n 15 "$LOG" | sed 's/^/    /' >&2
        # Keep the rows it finished before failing.
        grep -E '^[a-z][a-z0-9_]*,[0-9]+,[-0-9.eE+]+,[A-Za-z/]+$' "$LOG" | sed "$tag" >> "$RAW" || true
    fi
}

# The loaded rows run when no rows are named, or when barrier_all_loaded is (alone it selects
# nothing else).
LOADED=${LOADED:-1}
PLAIN=1
if [ ${#ROWS[@]} -gt 0 ]; then
    LOADED=0
    for r in "${ROWS[@]}"; do [ "$r" = barrier_all_loaded ] && LOADED=1; done
    [ "$LOADED" = 1 ] && [ ${#ROWS[@]} -eq 1 ] && PLAIN=0
fi
HOGS=()
start_load() {
    for _ in $(seq "$(nproc)"); do
        (while :; do :; done) &
        HOGS+=($!)
    done
}
stop_load() {
    [ ${#HOGS[@]} -gt 0 ] && kill "${HOGS[@]}" 2>/dev/null && wait "${HOGS[@]}" 2>/dev/null
    HOGS=()
}
trap 'stop_load; rm -f "$RAW" "$LOG"' EXIT

have_oshmem=0
if [ -x "$BUILD/shmem_bench_oshmem" ] && command -v oshrun >/dev/null; then
    have_oshmem=1
else
    echo "bench.sh: Open MPI OSHMEM (oshcc/oshrun) not installed: its column stays empty" >&2
fi

# As root Open MPI needs the two ALLOW variables; without osc=^rdma every OSHMEM program
# segfaults at exit on this Open MPI (4.1.4) build.
OSHRUN=(env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=^rdma oshrun --oversubscribe -np "$NP")

for round in $(seq 1 "$ROUNDS"); do
    echo "bench.sh: round $round of $ROUNDS" >&2
    if [ "$PLAIN" = 1 ]; then
        [ -x "$BUILD/floor" ] && run_one floor "$round" "$BUILD/floor" --csv "${ROWS[@]}"
        if [ -x "$BUILD/shmem_bench" ]; then
            run_one rshmem "$round" "$STAGE/bin/rshmemrun" -n "$NP" "$BUILD/shmem_bench" --csv "${ROWS[@]}"
        fi
        if [ $have_oshmem = 1 ]; then
            run_one oshmem "$round" "${OSHRUN[@]}" "$BUILD/shmem_bench_oshmem" --csv "${ROWS[@]}"
        fi
    fi
    if [ "$LOADED" = 1 ]; then
        start_load
        SUFFIX=_loaded
        if [ -x "$BUILD/shmem_bench" ]; then
            run_one rshmem "$round" "$STAGE/bin/rshmemrun" -n "$NP" "$BUILD/shmem_bench" --csv --reps 3 barrier_all_long
            SUFFIX=_loaded_spin1000
            run_one rshmem "$round" env RSHMEM_WAIT_SPIN_US=1000 "$STAGE/bin/rshmemrun" -n "$NP" "$BUILD/shmem_bench" --csv --reps 3 barrier_all_long
            SUFFIX=_loaded
        fi
        if [ $have_oshmem = 1 ]; then
            run_one oshmem "$round" "${OSHRUN[@]}" "$BUILD/shmem_bench_oshmem" --csv --reps 3 barrier_all_long
        fi
        SUFFIX=
        stop_load
    fi
done

TABLE=$(mktemp /tmp/rshmem-bench.XXXXXX.txt)
trap 'stop_load; rm -f "$RAW" "$LOG" "$TABLE"' EXIT
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

if [ "${HOSTS:-}" = 2 ]; then
    bash "$HERE/../net/bench.sh" "$STAGE"
fi
