#!/usr/bin/env bash
# The start-up environment variables: SHMEM_VERSION / NVSHMEM_VERSION print the version and
# SHMEM_INFO / NVSHMEM_INFO the settings (once, from PE 0); SHMEM_DEBUG set to anything enables
# debug output; RSHMEM_DEBUG=TRACE traces collectives and start-up; a misspelled variable gets
# one warning naming the closest setting, other implementations' variables none.
source "$(dirname "$0")/../programs/common.sh"
build hang_then_go
job() { timeout 60 env "$@" "$RUN" -n 2 "$WORK/hang_then_go" 0 2>"$WORK/err" >"$WORK/out"; }

job SHMEM_VERSION=1 && [ "$(grep -c '^rshmem [0-9.]*: OpenSHMEM 1.5, NVSHMEM 3.4.5 API$' "$WORK/out")" = 1 ] \
    && pass "SHMEM_VERSION=1: one version line" || fail "SHMEM_VERSION=1: $(cat "$WORK/out" "$WORK/err")"
job NVSHMEM_VERSION=true && grep -q '^rshmem .*NVSHMEM 3.4.5 API$' "$WORK/out" \
    && pass "NVSHMEM_VERSION=true: version" || fail "NVSHMEM_VERSION: $(cat "$WORK/out" "$WORK/err")"
job NVSHMEM_VERSION=false && ! grep -q '^rshmem ' "$WORK/out" && pass "NVSHMEM_VERSION=false: nothing" || fail "NVSHMEM_VERSION=false printed"
job SHMEM_INFO=yes RSHMEM_SYMMETRIC_SIZE=64M && grep -q '^  SYMMETRIC_SIZE *= 64M *\[RSHMEM_SYMMETRIC_SIZE; default 1G\]' "$WORK/out" \
    && grep -q '^  HANG_TIMEOUT *= 10 ' "$WORK/out" && [ "$(grep -c '^  SYMMETRIC_SIZE ' "$WORK/out")" = 1 ] \
    && pass "SHMEM_INFO: every setting with value, source and default, once" || fail "SHMEM_INFO: $(cat "$WORK/out" "$WORK/err")"
job NVSHMEM_INFO=1 && grep -q '^  WAIT_SPIN_US *= auto' "$WORK/out" && pass "NVSHMEM_INFO: settings" || fail "NVSHMEM_INFO: $(cat "$WORK/out")"

job RSHMEM_SYMMETRIC_SIZ=2G && [ "$(grep -c 'RSHMEM_SYMMETRIC_SIZ is not a setting rshmem knows (ignored); did you mean RSHMEM_SYMMETRIC_SIZE?' "$WORK/err")" = 1 ] \
    && pass "a misspelled variable: one warning naming the closest setting" || fail "misspelling: $(cat "$WORK/err")"
job NVSHMEM_BOOTSTARP=PMI && grep -q 'did you mean NVSHMEM_BOOTSTRAP?' "$WORK/err" && pass "NVSHMEM_BOOTSTARP: named" || fail "NVSHMEM_BOOTSTARP: $(cat "$WORK/err")"
job NVSHMEM_REMOTE_TRANSPORT=none SHMEM_OFI_PROVIDER=tcp NVSHMEM_BOOTSTRAP_PMI=PMI-2 SHMEM_BARRIER_ALGORITHM=auto && [ ! -s "$WORK/err" ] \
    && pass "other implementations' variables: quiet" || fail "foreign variables warned: $(cat "$WORK/err")"
job && [ ! -s "$WORK/err" ] && pass "a plain job under rshmemrun: stderr empty (launcher variables are known)" || fail "plain job: $(cat "$WORK/err")"

job SHMEM_DEBUG=yes && grep -q 'rshmem: PE [01]: initialised: 2 PEs' "$WORK/err" && pass "SHMEM_DEBUG=yes: debug output" || fail "SHMEM_DEBUG=yes: $(cat "$WORK/err")"
job RSHMEM_DEBUG=TRACE && grep -q 'rshmem: PE 1: bootstrap rshmemrun: joined as PE 1 of 2' "$WORK/err" \
    && grep -q 'rshmem: PE 0: shmem_int_sum_reduce: PEs 0..=1' "$WORK/err" && grep -q 'rshmem: PE 0: shmem_barrier_all: PEs 0..=1' "$WORK/err" \
    && pass "RSHMEM_DEBUG=TRACE: start-up steps, collectives and barriers" || fail "TRACE: $(cat "$WORK/err")"
job RSHMEM_DEBUG=INFO && ! grep -q 'shmem_int_sum_reduce: PEs' "$WORK/err" && pass "INFO does not trace" || fail "INFO traced"
finish
