#!/usr/bin/env bash
# expect_failure.sh REGEX cmd...: passes when cmd exits non-zero within the time limit and its
# stderr matches REGEX (an extended regular expression).
regex=$1; shift
err=$(timeout 30 "$@" 2>&1 >/dev/null); rc=$?
if [ $rc -eq 0 ]; then echo "expected a failure, but the command succeeded"; echo "$err"; exit 1; fi
if [ $rc -eq 124 ]; then echo "the command hung (killed after 30 s)"; echo "$err"; exit 1; fi
if ! grep -Eq -- "$regex" <<<"$err"; then echo "exit $rc, but stderr does not match /$regex/:"; echo "$err"; exit 1; fi
echo "failed as expected (exit $rc): $(grep -E -m1 -- "$regex" <<<"$err")"
