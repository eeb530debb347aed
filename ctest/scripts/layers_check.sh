#!/usr/bin/env bash
# scripts/check-layers.py (run by `make lint`) refuses a raw binding table named from capi/
# (issue 22: "capi no longer imports cuda::sys"): a copy of the tree's src/ passes as it is,
# passes with the name only in a comment or a string, and fails once one file names
# crate::cuda::sys or, after `use crate::cuda`, cuda::sys.
source "$(dirname "$0")/../programs/common.sh"
REPO=$(cd "$PROGRAMS/../.." && pwd)
T=$WORK/tree
mkdir -p "$T/scripts" && cp "$REPO"/scripts/check-layers.py "$T/scripts/" && cp -r "$REPO/src" "$T/"
out=$(python3 "$T/scripts/check-layers.py" 2>&1) && pass "the tree as it is passes" || fail "the unchanged copy fails: $out"
F=$T/src/capi/ctx.rs
cp "$F" "$WORK/ctx.rs.orig"
printf '\n// crate::cuda::sys in a comment\nconst _NAME: &str = "crate::cuda::sys";\n' >>"$F"
out=$(python3 "$T/scripts/check-layers.py" 2>&1) && pass "a comment or string naming cuda::sys passes" || fail "a comment or string fails: $out"
# refused WHAT CODE: ctx.rs with CODE appended must fail the check, naming ctx.rs and cuda::sys.
refused() {
    cp "$WORK/ctx.rs.orig" "$F" && printf '%s\n' "$2" >>"$F"
    local out rc
    out=$(python3 "$T/scripts/check-layers.py" 2>&1)
    rc=$?
    [ $rc -ne 0 ] && grep -q 'ctx.rs:[0-9]*: `capi` names crate::cuda::sys' <<<"$out" &&
        pass "$1 fails the check" || fail "$1 not caught (rc=$rc): $out"
}
refused "use crate::cuda::sys from capi" "use crate::cuda::sys::CUresult;"
refused "cuda::sys after use crate::cuda" "use crate::cuda; fn _f() -> cuda::sys::CUresult { todo!() }"
finish
