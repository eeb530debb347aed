# Sourced by ctest/scripts/launch_*.sh and faults_*.sh: $1 = install prefix, $2 = ctest build dir.
# Gives: PREFIX, WORK (a fresh directory for this script), RUN (rshmemrun), PATH_WITHOUT_PREFIX, build NAME,
# pass MSG, fail MSG, pids_gone DIR SECONDS, shm_listing.
set -u
PREFIX=${1:?usage: $0 PREFIX BUILD_DIR}
BUILD=${2:?usage: $0 PREFIX BUILD_DIR}
SCRIPT=$(basename "$0" .sh)
PROGRAMS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WORK=$BUILD/script-work/$SCRIPT
RUN=$PREFIX/bin/rshmemrun
rm -rf "$WORK" && mkdir -p "$WORK" || exit 1
FAILURES=0

# PATH without the install's bin: there rshmem's own oshcc/oshrun shadow Open MPI's.
source "$PROGRAMS/../common/path_without.sh"
PATH_WITHOUT_PREFIX=$(path_without "$PREFIX/bin")

pass() { echo "ok:   $*"; }
fail() { echo "FAIL: $*"; FAILURES=$((FAILURES + 1)); }
finish() {
    if [ "$FAILURES" -ne 0 ]; then echo "$SCRIPT: $FAILURES check(s) failed"; exit 1; fi
    echo "$SCRIPT: all checks passed"; exit 0
}

# build NAME: compiles programs/NAME.c against the installed library into $WORK/NAME.
build() {
    local flags
    flags=$(PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig pkg-config --cflags --libs rshmem) || { echo "pkg-config cannot find rshmem under $PREFIX"; exit 1; }
    # shellcheck disable=SC2086
    gcc -std=gnu11 -O1 -Wall -o "$WORK/$1" "$PROGRAMS/$1.c" $flags -Wl,-rpath,"$PREFIX/lib" \
        || { echo "cannot compile $1.c"; exit 1; }
}

# pids_gone DIR SECONDS: waits until no process whose pid is in DIR/pid.* exists.
pids_gone() {
    local deadline=$((SECONDS + $2)) pid left
    while :; do
        left=""
        for f in "$1"/pid.*; do
            [ -e "$f" ] || continue
            pid=$(cat "$f")
            if kill -0 "$pid" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null; then left="$left $pid"; fi
        done
        [ -z "$left" ] && return 0
        if [ $SECONDS -ge $deadline ]; then echo "still running:$left"; return 1; fi
        sleep 0.1
    done
}

# wait_files PATTERN COUNT SECONDS: waits until COUNT files match PATTERN.
wait_files() {
    local deadline=$((SECONDS + $3))
    # shellcheck disable=SC2086
    while [ "$(ls $1 2>/dev/null | wc -l)" -lt "$2" ]; do
        [ $SECONDS -ge $deadline ] && return 1
        sleep 0.05
    done
}

# Our footprint in shared places: anything named after rshmem, or after one of the given pids.
footprint() {
    local pattern="rshmem"
    for p in "$@"; do pattern="$pattern|$p"; done
    ls -a /dev/shm /tmp 2>/dev/null | grep -E "$pattern" || true
}

# check_run LABEL NP ROUNDS CMD...: runs a launch_check job; it must exit 0 and every PE must
# report every round (and, in "implicit" mode, PE 0 must confirm the implicit finalize).
check_run() {
    local label=$1 np=$2 rounds=$3; shift 3
    local out rc want got
    out=$(timeout 120 "$@" 2>&1); rc=$?
    echo "--- $label: exit $rc"; echo "$out"
    [ $rc -eq 0 ] || { fail "$label: exit status $rc"; return; }
    want=$((np * rounds))
    got=$(grep -cE "^PE [0-9]+ of $np: round [0-9]+ ok" <<<"$out")
    [ "$got" -eq $want ] && pass "$label: $np PE(s) x $rounds round(s) reported ok" || fail "$label: $got of $want reports"
    if [[ " $* " == *" implicit "* ]]; then
        grep -q "PE 0 at exit: ok" <<<"$out" && pass "$label: exit ran a collective shmem_finalize" \
            || fail "$label: PE 0 did not confirm the implicit finalize"
    fi
    if grep -q FAIL <<<"$out"; then fail "$label: a PE reported a failure"; fi
}

# check_mpi_comm_init MPICC LAUNCHER...: NVSHMEMX_INIT_WITH_MPI_COMM through the MPI of MPICC
# (programs/mpi_comm_init.c; no GPU here, so each job stops at GPU selection): 3 ranks over
# MPI_COMM_WORLD must be PEs 0, 1, 2 of one job; split by parity, a job of 2 and a job of 1;
# misuse (no communicator, MPI not initialized) a named error on every rank.
check_mpi_comm_init() {
    local cc=$1 flags out rc pes; shift
    flags=$(PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig pkg-config --cflags --libs rshmem) || { fail "pkg-config cannot find rshmem"; return; }
    # shellcheck disable=SC2086
    "$cc" -std=gnu11 -O1 -Wall -o "$WORK/mpi_comm_init" "$PROGRAMS/mpi_comm_init.c" $flags -Wl,-rpath,"$PREFIX/lib" \
        || { fail "cannot compile mpi_comm_init.c with $cc (MPI's development package missing?)"; return; }
    for mode in world:0,1,2 split:0,0,1 misuse:; do
        out=$(RSHMEM_BOOTSTRAP_TIMEOUT=20 timeout 90 "$@" -n 3 "$WORK/mpi_comm_init" "${mode%%:*}" 2>&1); rc=$?
        pes=$(grep -oE "PE [0-9]+: nvshmemx_init_attr: .*no usable GPU" <<<"$out" | grep -oE "^PE [0-9]+" | sort | cut -d' ' -f2 | paste -sd,)
        if [ "${mode%%:*}" = misuse ]; then
            # Each misuse names its fix.
            grep -q "MPI is not initialized; call MPI_Init before nvshmemx_init_attr" <<<"$out" \
                && grep -q "NVSHMEMX_INIT_WITH_MPI_COMM needs attr.mpi_comm = &comm" <<<"$out" \
                || { fail "MPI_COMM init, $(basename "$cc"), misuse: the errors do not name the fix"; echo "$out"; }
        fi
        if [ $rc -eq 0 ] && grep -q "PASS mpi_comm_init ${mode%%:*} (3 ranks)" <<<"$out" && [ "$pes" = "${mode#*:}" ]; then
            pass "MPI_COMM init, $(basename "$cc"), ${mode%%:*}: every rank got its error${pes:+ as PE $pes}"
        else
            fail "MPI_COMM init, $(basename "$cc"), ${mode%%:*}: exit $rc, PEs '$pes' (want '${mode#*:}')"; echo "$out"
        fi
    done
}
