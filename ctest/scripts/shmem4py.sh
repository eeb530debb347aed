#!/usr/bin/env bash
# shmem4py (the OpenSHMEM Python binding, PyPI) against the installed rshmem, out of the box
# (issue 21 item 6): its source release builds with rshmem's oshcc found on PATH, with no
# defines or shims of ours, and its whole unittest suite passes on every PE at 1, 2 and 3 PEs
# under rshmemrun, including test_info (shmem_info_get_name == SHMEM_VENDOR_STRING) and
# test_prof (shmem_pcontrol).
# Needs python3 with venv and pip, and PyPI (the release and numpy are downloaded once into
# the build directory's cache). shmem4py 1.0.0 predates NumPy 2 (its buffer code fails there),
# so the venv gets numpy<2.
source "$(dirname "$0")/../programs/common.sh"
VERSION=1.0.0
CACHE=$BUILD/shmem4py-cache
mkdir -p "$CACHE"
python3 -m venv "$WORK/venv" || { fail "python3 -m venv failed (Debian: apt install python3-venv)"; finish; }
PY=$WORK/venv/bin/python
"$PY" -m pip -q install --cache-dir "$CACHE/pip" "numpy<2" cffi setuptools wheel \
    || { fail "pip could not install numpy<2, cffi, setuptools, wheel (PyPI reachable?)"; finish; }
if [ ! -f "$CACHE/shmem4py-$VERSION.tar.gz" ]; then
    "$PY" -m pip -q download --no-deps --no-binary :all: --cache-dir "$CACHE/pip" -d "$CACHE" "shmem4py==$VERSION" \
        || { fail "cannot download shmem4py $VERSION from PyPI"; finish; }
fi
tar -xzf "$CACHE/shmem4py-$VERSION.tar.gz" -C "$WORK" || { fail "cannot unpack shmem4py"; finish; }
SRC=$WORK/shmem4py-$VERSION

# The build finds oshcc on PATH (shmem4py looks for $OSHCC, then oshcc): the install's.
unset OSHCC CC CFLAGS
if PATH=$PREFIX/bin:$PATH "$PY" -m pip install --no-build-isolation --no-deps "$SRC" >"$WORK/build.log" 2>&1; then
    pass "shmem4py $VERSION builds with rshmem's oshcc, nothing else given"
else
    grep -E "error|Error" "$WORK/build.log" | head -n 15
    fail "shmem4py $VERSION does not build against rshmem (log: $WORK/build.log)"
    finish
fi

for np in 1 2 3; do
    log=$WORK/test-$np.log
    (cd "$SRC" && timeout 240 "$RUN" -n $np "$PY" -m unittest discover -s test) >"$log" 2>&1
    rc=$?
    # Every PE runs the whole suite; unittest exits non-zero on any failure and rshmemrun exits
    # non-zero when any PE does, so the exit status judges all PEs. (Their output lines may
    # interleave, e.g. "OKOK": the text is only checked for a full run and no failure.)
    ran=$(grep -oE 'Ran [0-9]+ tests' "$log" | awk '{print $2}' | sort -u | tr '\n' ' ')
    if [ $rc -eq 0 ] && ! grep -qE 'FAILED|Traceback' "$log" && [ -n "$ran" ] && [ "${ran%% *}" -ge 100 ]; then
        pass "shmem4py's tests at $np PE(s): every PE passed (Ran $ran)"
    else
        grep -E '^(FAIL|ERROR):|Error:' "$log" | sort | uniq -c | head -n 12
        tail -n 5 "$log"
        fail "shmem4py's tests at $np PE(s): exit $rc (log: $log)"
    fi
done
finish
