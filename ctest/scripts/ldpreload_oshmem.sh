#!/usr/bin/env bash
# Swap-in test: programs compiled with Open MPI's `oshcc` (Debian openmpi-bin/libopenmpi-dev,
# OSHMEM 4.1 = OpenSHMEM 1.4) run on rshmem through LD_PRELOAD, without recompiling.
#   bash ctest/scripts/ldpreload_oshmem.sh <rshmem install prefix> [work dir]
# For each program in ctest/oshmem/ it
#   1. compiles it with oshcc (so it is linked against liboshmem and libmpi, not rshmem);
#   2. lists the OpenSHMEM symbols the binary imports that librshmem.so does not define (those
#      would silently resolve into the uninitialised liboshmem and crash): each is reported;
#   3. runs it natively under oshrun -np 2, to prove the program itself is right;
#   4. runs it LD_PRELOAD=librshmem.so under rshmemrun -n 2 and -n 4;
#   5. runs it under oshrun -np 2 with LD_PRELOAD exported to the ranks only (-x LD_PRELOAD=...),
#      so rshmem bootstraps through Open MPI's PMIx server;
# and checks that each run exits 0, prints its PASS line, and that the PASS line names rshmem
# when rshmem was preloaded (proof that the swap really happened). `legacy exit` checks that
# shmem_global_exit(7) ends the job with a failure under every launcher instead of hanging.
# Without oshcc/oshrun the test is skipped (exit 0 with a SKIP line).
#
# What happens inside an oshcc-built binary when librshmem.so is preloaded (checked here with
# readelf, LD_DEBUG=bindings and strace -f on rshmemrun runs):
#   - The binary has DT_NEEDED liboshmem.so.40 and libmpi.so.40 (which pull in libopen-rte,
#     libopen-pal, libhwloc, libevent, ...). The dynamic loader still maps all of them (strace:
#     only those files are opened, no Open MPI component mca_*.so and no socket but rshmem's), but
#     every shmem_* / start_pes / shmalloc / oshmem_ctx_default reference binds to the first
#     definition in search order, which is librshmem.so (preloaded). liboshmem exports its
#     shmem_* names as weak aliases of pshmem_*, so there is no clash.
#   - None of those Open MPI libraries has a real constructor (their .init_array holds only
#     the compiler's frame_dummy entry): OSHMEM's and MPI's initialisation run only inside
#     their shmem_init/start_pes/MPI_Init, which are never called. So nothing of Open MPI
#     starts: no ORTE/PMIx connection, no orted, no UCX worker, no shared-memory segments,
#     no atexit handler. Under rshmemrun the ORTE environment (OMPI_*, PMIX_*) is simply
#     absent and not needed. The cost is only the load time of those libraries.
#   - The program's own globals live in the executable's data/bss, which rshmem makes
#     symmetric at init as it does for its own programs.
#   - oshmem_ctx_default (SHMEM_CTX_DEFAULT) is a data object: gcc's PIE code gives the binary an
#     R_X86_64_COPY relocation for it, so the loader copies the value from the first definition
#     (librshmem.so, preloaded) into the executable at load time, and every reference, even
#     liboshmem's, then reads that copy (LD_DEBUG=bindings shows it). rshmem's value must
#     therefore be a load-time constant that is valid before shmem_init; it is (a fixed handle).
#   - Under oshrun, the ranks do get Open MPI's PMIx environment; rshmem's bootstrap detects it
#     (PMIX_RANK) and uses it. LD_PRELOAD must reach the ranks only (oshrun -x), not oshrun.
#   - A routine missing from librshmem.so binds to liboshmem's, which finds OSHMEM never
#     initialised and aborts the PE ("[pshmem_query.c:61:my_pe] SHMEM is not initialized",
#     exit status 255; seen with my_pe/num_pes); step 2 names such routines before running.
#
# Known bugs of the native library (Open MPI 4.1.4 with UCX 1.13), worked around in the
# programs only when they detect they run natively (shmem_info_get_name):
#   - 32-bit shmem_int_atomic_compare_swap / shmem_int_cswap abort ("stack smashing detected");
#   - fetching bitwise AMOs give wrong results (fetch_and/fetch_or leave the target unchanged,
#     fetch_xor zeroes it, while returning the old value);
#   - polling shmem_test_lock while another PE calls shmem_clear_lock hangs, and so does
#     polling shmem_test for a value whose put has not been quieted (no UCX progress);
#   - every program segfaults at exit unless OMPI_MCA_osc=^rdma (set below).
set -u -o pipefail

if [ $# -lt 1 ]; then
    echo "usage: $0 <rshmem install prefix> [work dir]" >&2
    exit 2
fi
PREFIX=$(realpath "$1")
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC=$(cd "$HERE/../oshmem" && pwd)
COMMON=$(cd "$HERE/../common" && pwd)
WORK=${2:-$(mktemp -d /tmp/rshmem-ldpreload.XXXXXX)}/oshmem_preload
LIB=$PREFIX/lib/librshmem.so
RSHMEMRUN=$PREFIX/bin/rshmemrun
TIMEOUT=${LDPRELOAD_TIMEOUT:-120}
# Open MPI's oshcc/oshrun: rshmem's own (in the install's bin, maybe on PATH) must not shadow them.
source "$HERE/../common/path_without.sh"
PATH=$(path_without "$PREFIX/bin")

if ! command -v oshcc >/dev/null || ! command -v oshrun >/dev/null; then
    echo "SKIP: Open MPI's oshcc/oshrun are not installed (apt-get install openmpi-bin libopenmpi-dev)"
    exit 0
fi
[ -f "$LIB" ] || { echo "FAIL: $LIB not found (run make stage)" >&2; exit 1; }
[ -x "$RSHMEMRUN" ] || { echo "FAIL: $RSHMEMRUN not found" >&2; exit 1; }
mkdir -p "$WORK"

# Open MPI as root, and its exit-time segfault (see above). OMPI_MCA_* reach only Open MPI.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_osc=^rdma
# Keep Open MPI quiet about the idle network transports of this host.
export OMPI_MCA_btl_base_warn_component_unused=0

PROGRAMS=${LDPRELOAD_PROGRAMS:-"rma amo coll sync setup legacy"}
declare -A RESULT
failures=0
report=()

note() { report+=("$*"); }

# run <label> <prog> <expect: pass|rshmem|fail> <command...>
#   pass:   exit 0 and "<prog>: PASS" printed (native);
#   rshmem: as pass, and the PASS line names rshmem;
#   fail:   a non-zero exit within the time limit (global_exit test).
run() {
    local label=$1 prog=$2 expect=$3
    shift 3
    local log="$WORK/$prog.$label.log" rc
    timeout "$TIMEOUT" "$@" >"$log" 2>&1
    rc=$?
    local ok=1 why=""
    case $expect in
        fail)
            if [ $rc -eq 0 ]; then ok=0; why="exited 0, expected a failure status";
            elif [ $rc -eq 124 ]; then ok=0; why="hung (killed after ${TIMEOUT}s)"; fi ;;
        *)
            if [ $rc -eq 124 ]; then ok=0; why="hung (killed after ${TIMEOUT}s)";
            elif [ $rc -ne 0 ]; then ok=0; why="exit status $rc";
            elif ! grep -q "^$prog: PASS" "$log"; then ok=0; why="no PASS line";
            elif [ "$expect" = rshmem ] && ! grep "^$prog: PASS" "$log" | grep -q rshmem; then
                ok=0; why="PASS line does not name rshmem: the preload did not take effect"; fi ;;
    esac
    if [ $ok = 1 ]; then
        RESULT[$prog.$label]=PASS
        printf '  %-22s PASS\n' "$label"
    else
        RESULT[$prog.$label]=FAIL
        failures=$((failures + 1))
        printf '  %-22s FAIL: %s; output ends with:\n' "$label" "$why"
        tail -n 12 "$log" | sed 's/^/      /'
    fi
}

defined_syms=$(nm -D --defined-only "$LIB" | awk '{print $3}' | sed 's/@.*//' | sort -u)

for prog in $PROGRAMS; do
    echo "== $prog"
    bin=$WORK/$prog
    if ! oshcc -std=gnu11 -O1 -g -Wall -Werror=implicit-function-declaration -I"$COMMON" \
        "$SRC/$prog.c" -o "$bin" -lpthread >"$WORK/$prog.build.log" 2>&1; then
        echo "  build FAIL:"; sed 's/^/      /' "$WORK/$prog.build.log"
        RESULT[$prog.build]=FAIL; failures=$((failures + 1)); continue
    fi

    # OpenSHMEM names the binary imports that rshmem does not define.
    missing=$(nm -D --undefined-only "$bin" | awk '{print $2}' | sed 's/@.*//' |
        grep -E '^(p?shmemx?_|oshmem_|start_pes$|_my_pe$|_num_pes$|my_pe$|num_pes$|shmalloc$|shfree$|shrealloc$|shmemalign$|globalexit$)' |
        sort -u | comm -23 - <(echo "$defined_syms"))
    if [ -n "$missing" ]; then
        echo "  symbols missing from librshmem.so (they would bind to liboshmem, which aborts: not initialised):"
        echo "$missing" | sed 's/^/      /'
        note "$prog: $(echo "$missing" | wc -l) symbol(s) missing in librshmem.so, e.g. $(echo $missing | cut -d' ' -f1-4)"
        RESULT[$prog.symbols]=FAIL; failures=$((failures + 1))
    else
        RESULT[$prog.symbols]=PASS
        printf '  %-22s PASS\n' "symbols"
    fi

    run native_oshrun_np2 "$prog" pass oshrun --oversubscribe -np 2 "$bin"
    if [ "$prog" = legacy ]; then
        run native_global_exit "$prog" fail oshrun --oversubscribe -np 2 "$bin" exit
    fi
    if [ -n "$missing" ]; then
        echo "  (rshmem runs skipped: they would call into the uninitialised liboshmem)"
        continue
    fi
    run rshmemrun_np2 "$prog" rshmem env LD_PRELOAD="$LIB" "$RSHMEMRUN" -n 2 "$bin"
    run rshmemrun_np4 "$prog" rshmem env LD_PRELOAD="$LIB" "$RSHMEMRUN" -n 4 "$bin"
    run oshrun_preload_np2 "$prog" rshmem oshrun --oversubscribe -np 2 -x LD_PRELOAD="$LIB" "$bin"
    if [ "$prog" = legacy ]; then
        run rshmemrun_global_exit "$prog" fail env LD_PRELOAD="$LIB" "$RSHMEMRUN" -n 2 "$bin" exit
        run oshrun_preload_global_exit "$prog" fail oshrun --oversubscribe -np 2 -x LD_PRELOAD="$LIB" "$bin" exit
    fi
done

echo
echo "summary ($WORK):"
for k in $(printf '%s\n' "${!RESULT[@]}" | sort); do
    printf '  %-40s %s\n' "$k" "${RESULT[$k]}"
done
for line in "${report[@]+"${report[@]}"}"; do
    echo "  $line"
done
if [ $failures -gt 0 ]; then
    echo "ldpreload_oshmem: $failures failure(s)"
    exit 1
fi
echo "ldpreload_oshmem: all passed"
