#!/usr/bin/env bash
# scripts/check-boundary.py (run by `make lint`) catches a C entry point whose ffi_boundary! call
# names another routine, also when a macro_rules! arm defines the entry point (`extern "C" fn $f`):
# a copy of the tree's src/capi with one such name broken must fail the check, the copy as it is
# must pass.
source "$(dirname "$0")/../programs/common.sh"
REPO=$(cd "$PROGRAMS/../.." && pwd)
T=$WORK/tree
mkdir -p "$T/scripts" "$T/src" && cp "$REPO"/scripts/check-boundary.py "$REPO"/scripts/check-layers.py "$T/scripts/" && cp -r "$REPO/src/capi" "$T/src/"
out=$(python3 "$T/scripts/check-boundary.py" 2>&1) && pass "the tree as it is passes ($(tail -1 <<<"$out" | cut -c1-60)...)" || fail "the unchanged copy fails: $out"
# The on-stream @rma arm: drop $nbi from the name given to ffi_boundary!, so put_nbi would name put.
S=$T/src/capi/nvshmem/stream.rs
before=$(md5sum <"$S")
sed -i 's/ffi_boundary!(concat!(\$pre, \$op, \$suf, \$nbi, "_on_stream")/ffi_boundary!(concat!($pre, $op, $suf, "_on_stream")/' "$S"
[ "$(md5sum <"$S")" != "$before" ] || fail "the macro arm to break was not found in stream.rs (update this test)"
out=$(python3 "$T/scripts/check-boundary.py" 2>&1)
rc=$?
[ $rc -ne 0 ] && grep -q 'stream.rs:[0-9]*: \$f: ffi_boundary! names the routine' <<<"$out" &&
  pass "a macro-made entry point naming another routine fails the check" || fail "not caught (rc=$rc): $out"
finish
