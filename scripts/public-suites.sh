#!/usr/bin/env bash
# Builds and runs public OpenSHMEM test suites (and programs) against an rshmem install, and prints a table.
# Their sources are never part of rshmem: give a checkout of each (git clone of
# openshmem-org/tests-sos, tests-uh, tests-cray, tests-mellanox; a Sandia SOS checkout with its
# modules/tests-sos submodule works too; an OSU Micro-Benchmarks source tree; ParRes/ISx).
#
#   scripts/public-suites.sh [options] CHECKOUT...
#     --prefix P      the rshmem install (default build/stage): its bin/oshcc builds, its
#                     bin/rshmemrun runs
#     --np "1 2 4"    PE counts to run every test at (default "1 2 4")
#     --hosts K       spread the PEs over K namespaced hosts (scripts/netns-hosts.sh, root only)
#                     started through rshmemrun --hosts with ctest/multihost/netns-agent.sh
#     --only REGEX    only the tests whose suite/name matches REGEX (grep -E)
#     --timeout S     per-run time limit in seconds (default 60)
#     --out DIR       build products and logs (default build/public-suites)
#     --shmemx        also the tests-sos shmemx/ directory (SOS's own shmemx_ extensions)
#
# Every test is built once and run at each PE count. A result is PASS, FAIL (exit status or a
# "FAIL" line where the suite says so), TIMEOUT, BUILD (did not compile: the log says why) or
# XFAIL/XPASS for a test listed in scripts/public-suites-expected.txt with the reason it is not
# rshmem's defect, or SKIP where a Cray test says the PE count does not suit it. The exit status
# is 0 when nothing failed that is not listed there.
# What each suite's own lists say and how the script follows them:
#  - tests-sos: the check_PROGRAMS of test/{unit,spec-example,apps}/Makefile.am (their _SOURCES
#    and _CFLAGS too); Fortran programs and the MPI-hybrid ones are left out. SOS runs them at 2
#    PEs (oshrun -np 2); the tests that need more or an even count skip themselves.
#  - tests-uh: feature_tests/C/test_parameters.conf names each test and its expected outcome
#    (Pass, or ExitCodeNN for shmem_global_exit).
#  - tests-cray: sma1/sma1_tlist (C) and the sma2 C++ tests; a run passes with exit 0 and no
#    "FAIL" on its output (the suite's README); built with -DOPENSHMEM (what the tests test for
#    a library other than Cray's) and the type macros for short, long long and long double (short
#    only outside the AMO tests: short AMOs are Cray's own).
#  - tests-mellanox: the verifier, built with its autotools (CC=oshcc), run once per test case
#    as "oshmem_test exec --task=GROUP:tcN" (configured --disable-mpi: the OpenSHMEM+MPI mix
#    tests need an MPI built for the same launcher).
#  - osu: OSU Micro-Benchmarks' OpenSHMEM tests (c/openshmem, or openshmem/ in releases before
#    5.7), built with their configure (CC=oshcc) and make; the point-to-point and atomics
#    tests run once on the symmetric heap and once on global data (their heap|global argument).
#    They do not check data: pass = exit 0; "This test requires exactly two processes" (or at
#    least two) is SKIP. OMB 6.x's osu_util.c calls omb_ddt_process_options (its -D option, MPI
#    derived types) which only its MPI utilities define: an empty one is linked in where so.
#  - isx: ParRes ISx (SHMEM/), its strong, weak and weak-isobucket builds, each sorting 2^20
#    keys (per PE when weak) 3 times; it verifies the last sort (every key in its PE's bucket,
#    counts, total): pass = exit 0 and no "Failed Verification"/"Verification Failed" line.
#    Built with -std=gnu99 (its Makefile's -std=c99 hides struct timespec, which its timer.h
#    needs, once any header has included <features.h>: shmem.h's <stdint.h> does, with any
#    library).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
prefix=$root/build/stage nps="1 2 4" hosts=0 only= limit=60 out=$root/build/public-suites shmemx=0
while [ $# -gt 0 ]; do
    case $1 in
        --prefix) prefix=$2; shift 2 ;;
        --np) nps=$2; shift 2 ;;
        --hosts) hosts=$2; shift 2 ;;
        --only) only=$2; shift 2 ;;
        --timeout) limit=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --shmemx) shmemx=1; shift ;;
        -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        -*) echo "public-suites.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
        *) break ;;
    esac
done
[ $# -gt 0 ] || { echo "usage: public-suites.sh [options] CHECKOUT... (see --help)" >&2; exit 2; }
prefix=$(cd "$prefix" 2>/dev/null && pwd) || { echo "public-suites.sh: no install at --prefix" >&2; exit 2; }
for tool in oshcc rshmemrun; do
    [ -x "$prefix/bin/$tool" ] || { echo "public-suites.sh: $prefix/bin/$tool is missing: give --prefix an rshmem install (make install PREFIX=...)" >&2; exit 2; }
done
mkdir -p "$out" && out=$(cd "$out" && pwd)
expected=$here/public-suites-expected.txt
cc="$prefix/bin/oshcc" cxx="$prefix/bin/oshc++" run=$prefix/bin/rshmemrun
table=$out/results.tsv
: >"$table"

netns_prefix=ps$$
if [ "$hosts" -gt 0 ]; then
    export RSHMEM_NETNS_PREFIX=$netns_prefix
    "$here/netns-hosts.sh" up "$hosts" >/dev/null || { echo "public-suites.sh: cannot make $hosts namespaced hosts" >&2; exit 2; }
    trap 'RSHMEM_NETNS_PREFIX=$netns_prefix "$here/netns-hosts.sh" down >/dev/null 2>&1' EXIT
fi

# expectation SUITE NAME NP: the reason a listed test may fail ("" when it is not listed).
# Lines are "suite/name np|* reason"; np may be a list such as 2,4.
expectation() {
    awk -v t="$1/$2" -v np="$3" '!/^#/ && NF >= 3 && $1 == t {
        if ($2 == "*" || index("," $2 ",", "," np ",")) { $1 = ""; $2 = ""; sub(/^ +/, ""); print; exit } }' "$expected"
}

# build SUITE NAME COMPILER FLAGS... -- SOURCES...: compiles $out/SUITE/NAME; 0 when it built.
build() {
    local suite=$1 name=$2 comp=$3; shift 3
    local flags=() srcs=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do flags+=("$1"); shift; done
    shift
    srcs=("$@")
    mkdir -p "$out/$suite"
    nice "$comp" -O1 -g0 -w "${flags[@]}" -o "$out/$suite/$name" "${srcs[@]}" -lm -pthread \
        >"$out/$suite/$name.build.log" 2>&1
}

# launch NP PROG ARGS...: runs PROG on NP PEs (on one host, or spread over the namespaced hosts).
launch() {
    local np=$1; shift
    if [ "$hosts" -eq 0 ]; then
        timeout -k 5 "$limit" "$run" -n "$np" "$@"
        return
    fi
    local spec= k n
    for k in $(seq 1 "$hosts"); do
        n=$((np / hosts + (k <= np % hosts)))
        [ "$n" -gt 0 ] && spec="$spec${spec:+,}$netns_prefix-h$k:$n"
    done
    "$here/netns-hosts.sh" exec 1 env -u RSHMEM_NETNS_PREFIX \
        RSHMEM_LAUNCH_AGENT="$root/ctest/multihost/netns-agent.sh" \
        timeout -k 5 "$limit" "$run" --hosts "$spec" "$@"
}

# check SUITE NAME HOW [ARGS...]: runs a built test at every PE count and records the outcome.
# HOW is "exit" (exit 0 passes), "nofail" (exit 0 and no FAIL line), "exitN" (exit N passes),
# "osu" (exit 0 passes; OSU's "This test requires ..." skips; "osu2" also skips at other than
# 2 PEs) or "clean:REGEX" (exit 0 and no line matching REGEX).
check() {
    local suite=$1 name=$2 how=$3; shift 3
    local np rc res log t0 why
    for np in $nps; do
        log=$out/$suite/$name.np$np.log
        t0=$(date +%s.%N)
        (cd "$out/$suite" && launch "$np" "$out/$suite/$name" "$@") >"$log" 2>&1
        rc=$?
        case $how in
            exit) [ $rc -eq 0 ] && res=PASS || res=FAIL ;;
            nofail) [ $rc -eq 0 ] && ! grep -q FAIL "$log" && res=PASS || res=FAIL
                # "FAIL - test requires at least two PEs" (or an even number): not for this count.
                grep -q "^FAIL - test requires" "$log" && res=SKIP ;;
            osu*) [ $rc -eq 0 ] && res=PASS || res=FAIL
                grep -q "^This test requires" "$log" && res=SKIP
                # "osu2": exactly 2 PEs, else every PE leaves at once with status 1 and the
                # launcher may stop PE 0 before it prints why (a race, not a failure).
                [ $how = osu2 ] && [ "$np" -ne 2 ] && res=SKIP ;;
            clean:*) [ $rc -eq 0 ] && ! grep -Eq "${how#clean:}" "$log" && res=PASS || res=FAIL ;;
            exit*) [ $rc -eq "${how#exit}" ] && res=PASS || res=FAIL ;;
        esac
        [ $rc -eq 124 ] || [ $rc -eq 137 ] && res=TIMEOUT
        why=$(expectation "$suite" "$name" "$np")
        if [ -n "$why" ]; then
            [ $res = PASS ] && res=XPASS || res=XFAIL
        fi
        record "$suite" "$name" "$np" "$res" "$rc" "$(awk "BEGIN { print $(date +%s.%N) - $t0 }")" "$why"
    done
}

record() {
    printf '%s\t%s\t%s\t%s\t%s\t%.1f\t%s\n' "$@" >>"$table"
    printf '%-10s %-40s np=%-2s %-7s rc=%-3s %5.1fs %s\n' "$@"
}

# build_or_record SUITE NAME ARGS-OF-BUILD...: builds, or records BUILD for every PE count.
build_or_record() {
    local suite=$1 name=$2 np why
    build "$@" && return 0
    for np in $nps; do
        why=$(expectation "$suite" "$name" "$np")
        record "$suite" "$name" "$np" "$([ -n "$why" ] && echo XFAIL || echo BUILD)" - 0 "$why"
    done
    return 1
}

selected() { [ -z "$only" ] || grep -Eq -- "$only" <<<"$1/$2"; }

# am_programs MAKEFILE.AM: every program named in check_PROGRAMS (all conditionals).
am_programs() {
    awk '/^check_PROGRAMS[ \t]*\+?=/ { on = 1; sub(/^[^=]*=/, "") }
         on { line = $0; cont = sub(/\\[ \t]*$/, "", line); n = split(line, w, /[ \t]+/)
              for (i = 1; i <= n; i++) if (w[i] != "") print w[i]; if (!cont) on = 0 }' "$1"
}
# am_var MAKEFILE.AM VAR: the value of VAR (one line), with automake variables made concrete.
am_var() {
    awk -v v="$2" '$1 == v && $2 == "=" { $1 = ""; $2 = ""; print; exit }' "$1" |
        sed 's/\$(AM_OPENMP_CFLAGS)/-fopenmp/; s/\$(PTHREAD_CFLAGS)/-pthread/; s/\$([A-Z_]*)//g'
}

run_sos() {
    local top=$1 dir am name srcs cflags comp s suite
    local dirs="unit spec-example apps"
    [ $shmemx = 1 ] && dirs="$dirs shmemx"
    for dir in $dirs; do
        am=$top/test/$dir/Makefile.am
        [ -f "$am" ] || continue
        # shmemx/ reuses some unit/ program names: its own suite name keeps them apart.
        suite=sos
        [ "$dir" = shmemx ] && suite=sos-shmemx
        for name in $(am_programs "$am" | sort -u); do
            case $name in hybrid_mpi*) continue ;; esac   # needs MPI (SOS builds them only with PMI-MPI)
            srcs=$(am_var "$am" "${name}_SOURCES")
            if [ -z "$srcs" ]; then
                for s in "$name.c" "$name.cpp"; do [ -f "$top/test/$dir/$s" ] && srcs=$s; done
            fi
            # Fortran programs are left out (rshmem has no Fortran API).
            [ -n "$srcs" ] && [[ $srcs != *.f90* ]] || continue
            selected "$suite" "$name" || continue
            cflags=$(am_var "$am" "${name}_CFLAGS")
            comp=$cc
            [[ $srcs == *.cpp* ]] && comp=$cxx
            local files=()
            for s in $srcs; do [[ $s == *.h ]] || files+=("$top/test/$dir/$s"); done
            # shellcheck disable=SC2086
            build_or_record "$suite" "$name" "$comp" -I"$top/test/include" $cflags -- "${files[@]}" &&
                check "$suite" "$name" exit
        done
    done
}

run_uh() {
    local c=$1/feature_tests/C exe pes desc e1 e2 want name how
    while IFS=, read -r exe pes desc e1 e2 want; do
        name=${exe%.x}; want=$(echo "$want" | tr -d ' \r')
        [ -f "$c/$name.c" ] || continue
        selected uh "$name" || continue
        how=exit
        [[ $want == ExitCode* ]] && how=exit${want#ExitCode}
        build_or_record uh "$name" "$cc" -- "$c/$name.c" && check uh "$name" "$how"
    done <"$c/test_parameters.conf"
}

run_cray() {
    local top=$1 name f flags
    # -DOPENSHMEM leaves out the parts that test Cray's own shmemx_ routines (put_nb, broadcast).
    local types=(-DOPENSHMEM -DHAVE_SHORT -DHAVE_LONG_LONG -DHAVE_LONG_DOUBLE) amo_types=(-DOPENSHMEM -DHAVE_LONG_LONG)
    for name in $(cat "$top/sma1/sma1_tlist"); do
        selected cray "$name" || continue
        # In the AMO tests HAVE_SHORT means short AMOs, which only Cray SHMEM has (OpenSHMEM's
        # AMOs are on int, long, long long and the fixed-width types).
        flags=("${types[@]}")
        [[ $name =~ finc|swap|fadd|cswap ]] && flags=("${amo_types[@]}")
        # Its long double part calls Cray's shmem_longdouble_put_nb outside the OPENSHMEM guard.
        [ "$name" = shmem_type_put_nb ] && flags=(-DOPENSHMEM -DHAVE_SHORT -DHAVE_LONG_LONG)
        build_or_record cray "$name" "$cc" "${flags[@]}" -- "$top/sma1/$name.c" && check cray "$name" nofail
    done
    for f in "$top"/sma2/*.cpp; do
        name=$(basename "$f" .cpp)
        selected cray "$name" || continue
        build_or_record cray "$name" "$cxx" "${types[@]}" -- "$f" && check cray "$name" nofail
    done
}

run_mellanox() {
    local top=$1 b=$out/mellanox group tc name np
    mkdir -p "$b"
    if [ ! -x "$b/src/oshmem_test" ]; then
        rm -rf "$b/src" && cp -r "$top" "$b/src" && mkdir -p "$b/stub"
        # Its configure probes the system's Open MPI libraries, not the compiler's: answer for
        # rshmem (it has the _nbi routines; Open MPI's internal opal_progress must not be
        # linked in). The nbi tests include mpi.h without calling MPI: an empty one does.
        # --enable-active-sets: only the active set's PEs call the active-set reductions, as
        # the specification requires (by default every PE calls them).
        if ! command -v libtoolize >/dev/null; then   # its configure.ac calls AC_PROG_LIBTOOL
            for np in $nps; do record mellanox verifier "$np" BUILD - 0 "libtoolize not found: install libtool"; done
            return
        fi
        echo "/* the verifier's nbi tests include mpi.h but call no MPI routine */" >"$b/stub/mpi.h"
        if ! (cd "$b/src" && ./autogen.sh && ./configure CC="$cc" CPPFLAGS="-I$b/stub" --disable-mpi \
                --enable-active-sets ac_cv_lib_oshmem_shmem_getmem_nbi=yes ac_cv_lib_open_pal_opal_progress=no &&
                nice make -j2) >"$b/build.log" 2>&1; then
            for np in $nps; do record mellanox verifier "$np" BUILD - 0 "$(tail -1 "$b/build.log")"; done
            return
        fi
    fi
    cp "$b/src/oshmem_test" "$b/oshmem_test"
    # One run per test case (GROUP.tcN), as its --info=case lists them.
    "$run" -n 1 "$b/oshmem_test" exec --info=case 2>&1 |
        awk '/^   [a-z]/ { group = $1 } /^      [a-z]/ && match($0, /\(tc[0-9]+/) {
                 print group, substr($0, RSTART + 1, RLENGTH - 1), $1 }' >"$b/cases.txt"
    while read -r group tc name; do
        # analysis.tc1 measures lost CPU cycles for 60 s by design: a benchmark, not a test.
        [ "$group.$tc" = analysis.tc1 ] && continue
        selected mellanox "$group.$tc" || continue
        ln -sf oshmem_test "$b/$group.$tc"
        check mellanox "$group.$tc" exit exec --task="$group:$tc" </dev/null
    done <"$b/cases.txt"
}

run_osu() {
    local top=$1 b=$out/osu name a d=c/openshmem
    [ -f "$top/$d/osu_oshm_put.c" ] || d=openshmem
    mkdir -p "$b"
    if [ ! -x "$b/src/$d/osu_oshm_put" ]; then
        rm -rf "$b/src" && cp -r "$top" "$b/src"
        local libs=
        # Generated files newer than their sources (a git checkout's times are arbitrary):
        # otherwise make wants the automake version the release was made with.
        (cd "$b/src" && touch aclocal.m4 && sleep 1 && touch configure && sleep 1 &&
            find . -name Makefile.in -exec touch {} + && { [ ! -f config.h.in ] || touch config.h.in; })
        if grep -q omb_ddt_process_options "$b/src/c/util/osu_util.c" 2>/dev/null &&
            ! grep -q "^void omb_ddt_process_options" "$b/src/c/util/osu_util.c" "$b/src/c/util/osu_util_pgas.c"; then
            echo "void omb_ddt_process_options(char *optarg) { (void)optarg; }" >"$b/ddt_stub.c"
            "$cc" -c -o "$b/ddt_stub.o" "$b/ddt_stub.c" && libs=$b/ddt_stub.o
        fi
        if ! (cd "$b/src" && ./configure CC="$cc" CXX="$cxx" && nice make -C "$d" -j2 LIBS="$libs") >"$b/build.log" 2>&1; then
            for np in $nps; do record osu build "$np" BUILD - 0 "$(tail -1 "$b/build.log")"; done
            return
        fi
    fi
    local args how
    for name in $(cd "$b/src/$d" && ls osu_oshm_* | grep -v '\.'); do
        case $name in
            *_barrier | *_broadcast | *_collect | *_fcollect | *_reduce | *_alltoall) args=("") ;;
            *) args=(heap global) ;;
        esac
        for a in "${args[@]}"; do
            selected osu "$name${a:+-$a}" || continue
            cp "$b/src/$d/$name" "$b/$name${a:+-$a}"
            # shellcheck disable=SC2086
            how=osu
            grep -q "requires exactly two processes" "$b/src/$d/$name.c" && how=osu2
            check osu "$name${a:+-$a}" $how $a
        done
    done
}

run_isx() {
    local top=$1 b=$out/isx v
    mkdir -p "$b"
    if ! { rm -rf "$b/src" && cp -r "$top/SHMEM" "$b/src" &&
        nice make -C "$b/src" CC="$cc" CFLAGS="-O2 -std=gnu99 -Wall" >"$b/build.log" 2>&1; }; then
        for np in $nps; do record isx build "$np" BUILD - 0 "$(tail -1 "$b/build.log")"; done
        return
    fi
    for v in strong weak weak_iso; do
        selected isx "isx.$v" || continue
        cp "$b/src/bin/isx.$v" "$b/isx.$v"
        check isx "isx.$v" "clean:Failed Verification|Verification Failed" 1048576 3 "$b/isx.$v.times"
    done
}

for top in "$@"; do
    top=$(cd "$top" && pwd) || exit 2
    if [ -f "$top/test/unit/Makefile.am" ]; then run_sos "$top"
    elif [ -f "$top/modules/tests-sos/test/unit/Makefile.am" ]; then run_sos "$top/modules/tests-sos"
    elif [ -f "$top/feature_tests/C/test_parameters.conf" ]; then run_uh "$top"
    elif [ -f "$top/sma1/sma1_tlist" ]; then run_cray "$top"
    elif [ -f "$top/verifier/osh_main.c" ]; then run_mellanox "$top/verifier"
    elif [ -f "$top/c/openshmem/osu_oshm_put.c" ] || [ -f "$top/openshmem/osu_oshm_put.c" ]; then run_osu "$top"
    elif [ -f "$top/SHMEM/isx.c" ]; then run_isx "$top"
    else echo "public-suites.sh: $top is none of tests-sos, tests-uh, tests-cray, tests-mellanox, OSU Micro-Benchmarks, ISx" >&2; exit 2
    fi
done

# The summary: per suite and PE count, how many of each result.
echo
printf '%-10s %-3s %5s %5s %5s %7s %5s %5s %5s %5s\n' suite np PASS FAIL BUILD TIMEOUT XFAIL XPASS SKIP total
awk -F'\t' '{ k = $1 "\t" $3; n[k, $4]++; tot[k]++; if (!(k in seen)) { seen[k] = 1; keys[++m] = k } }
    END { for (i = 1; i <= m; i++) { k = keys[i]; split(k, p, "\t")
        printf "%-10s %-3s %5d %5d %5d %7d %5d %5d %5d %5d\n", p[1], p[2], n[k, "PASS"], n[k, "FAIL"],
            n[k, "BUILD"], n[k, "TIMEOUT"], n[k, "XFAIL"], n[k, "XPASS"], n[k, "SKIP"], tot[k] } }' "$table"
bad=$(awk -F'\t' '$4 == "FAIL" || $4 == "BUILD" || $4 == "TIMEOUT"' "$table" | wc -l)
echo "results: $table; logs: $out/<suite>/<test>.np<N>.log; $bad unexpected failure(s)"
[ "$bad" -eq 0 ]
