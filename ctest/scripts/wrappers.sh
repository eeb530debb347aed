#!/usr/bin/env bash
# The installed compiler wrappers and launcher names (issue 21 item 1): a program built with
# `oshcc` (C) and `oshc++` (C++) runs under `oshrun` and `nvshmrun` with no LD_LIBRARY_PATH
# (the wrapper adds an rpath), and the --showme family prints what the wrapper would run.
source "$(dirname "$0")/../programs/common.sh"
SRC=$PROGRAMS/ring_hello.c
B=$PREFIX/bin
export PATH="$B:$PATH"
unset LD_LIBRARY_PATH

for name in oshcc oshc++ oshCC oshcxx oshrun nvshmrun; do
    [ -x "$B/$name" ] && pass "$name installed" || fail "$name is not installed in $B"
done

# build LABEL WRAPPER ARGS...: compiles ring_hello with a wrapper; checks the rpath.
build_with() {
    local label=$1; shift
    if "$@" >"$WORK/$label.build.log" 2>&1; then
        pass "$label: built"
    else
        fail "$label: build failed:"; cat "$WORK/$label.build.log"; return 1
    fi
    readelf -d "$WORK/$label" | grep -E 'R(UN)?PATH' | grep -q "$PREFIX/lib" \
        && pass "$label: runpath names $PREFIX/lib" || fail "$label: no rpath to $PREFIX/lib: $(readelf -d "$WORK/$label" | grep -i path)"
}

# run_ring LABEL LAUNCHER N BINARY: every PE must report ok.
run_ring() {
    local label=$1 launcher=$2 n=$3 bin=$4 out rc
    out=$(timeout 60 "$launcher" -np "$n" "$bin" 2>&1); rc=$?
    local ok
    ok=$(grep -c "got .* from the left ok" <<<"$out")
    if [ $rc -eq 0 ] && [ "$ok" -eq "$n" ]; then pass "$label: $n PEs under $launcher"
    else fail "$label under $launcher: exit $rc, $ok of $n ok:"; echo "$out"; fi
}

build_with c oshcc -O1 -Wall "$SRC" -o "$WORK/c" && {
    run_ring c oshrun 2 "$WORK/c"
    run_ring c nvshmrun 3 "$WORK/c"
}
cp "$SRC" "$WORK/ring_hello.cpp"
build_with cxx oshc++ -O1 -Wall "$WORK/ring_hello.cpp" -o "$WORK/cxx" && run_ring cxx oshrun 2 "$WORK/cxx"
# Separate compile and link steps: -c gets no link flags, the link gets them.
if oshcc -c "$SRC" -o "$WORK/obj.o" && oshcc "$WORK/obj.o" -o "$WORK/two_step"; then
    run_ring two_step oshrun 2 "$WORK/two_step"
else
    fail "oshcc -c then link failed"
fi

show=$(oshcc --showme -O2 prog.c -o prog)
[[ $show == "cc -I$PREFIX/include -O2 prog.c -o prog -L$PREFIX/lib -Wl,-rpath,$PREFIX/lib -lrshmem" ]] \
    && pass "--showme: $show" || fail "--showme printed: $show"
show=$(oshc++ -showme -c prog.cpp)
[[ $show == "c++ -I$PREFIX/include -c prog.cpp" ]] && pass "oshc++ -showme -c: $show" || fail "oshc++ -showme -c printed: $show"
[ "$(oshcc -showme:compile)" = "-I$PREFIX/include" ] && pass "-showme:compile" || fail "-showme:compile printed: $(oshcc -showme:compile)"
[ "$(oshcc --showme:link)" = "-L$PREFIX/lib -Wl,-rpath,$PREFIX/lib -lrshmem" ] && pass "--showme:link" || fail "--showme:link printed: $(oshcc --showme:link)"
show=$(RSHMEM_CC=gcc-12 oshcc --showme x.c)
[[ $show == gcc-12\ * ]] && pass "RSHMEM_CC picks the compiler" || fail "RSHMEM_CC ignored: $show"
finish
