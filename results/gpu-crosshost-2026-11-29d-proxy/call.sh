#!/usr/bin/env bash
# Session 29 device call (gpux, nvidia-h200-x2): proxy A/B with old = main's librshmem.so (.gpu/fin31lib.xz,
# = main 2a3da42's) and new = branch gpux (several put writes in flight, .gpu/gpux29/newlib.xz), both over
# fin30's stage and xhcuda27's route-built programs (.gpu/gpux28b/base.tar.xz) with this session's
# crosshost.sh (XH_MPS=0: one GPU per namespaced host); then the CUDA suite subset across the 2 hosts
# with the new library. Usage: OUT=dir [REPS=3] [SUITE=0] bash .gpu/gpux29/call.sh
set -u
D="$(cd "$(dirname "$0")" && pwd)" G="$(cd "$(dirname "$0")/.." && pwd)" O="${OUT:-/tmp/gpux-out}"; mkdir -p "$O/logs"
exec > >(tee "$O/call.log") 2>&1
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi -L; nproc
W=/tmp/gx; rm -rf $W; mkdir -p $W
tar -xJf "$G/gpux28b/base.tar.xz" -C $W && mv $W/fin30 $W/old && cp "$D/crosshost.sh" $W/old/ctest/cuda/crosshost.sh
cp -a $W/old $W/new && xz -dc "$G/fin31lib.xz" >$W/old/stage/lib/librshmem.so.0.1.0 && xz -dc "$D/newlib.xz" >$W/new/stage/lib/librshmem.so.0.1.0
el "unpacked: $(ls $W/old/build/cuda | wc -l) programs; libs $(md5sum $W/old/stage/lib/librshmem.so.0.1.0 $W/new/stage/lib/librshmem.so.0.1.0 | cut -c1-8 | tr '\n' ' ')"
OUT=$O/logs REPS="${REPS:-3}" timeout "${AB_LIMIT:-200}" bash "$D/ab.sh" $W/old $W/new; el "ab rc=$?"
cp $O/logs/ab.txt $O/ab.txt
if [ "${SUITE:-1}" = 1 ]; then
  XH_MPS=0 XH_PREFIX=rxs OUT=/tmp/gx-suite TESTS="${SUITE_TESTS:-rma put_block signal amo wait host stream strided ring_bcast two_tu}" \
    LIMIT=20 DEADLINE="${SUITE_DEADLINE:-70}" timeout 90 bash $W/new/ctest/cuda/crosshost.sh >/dev/null 2>&1; el "suite rc=$?"
  grep -E "^(PASS|FAIL|MISSING|RESULT|NOT RUN|SKIP)" /tmp/gx-suite/crosshost.log >"$O/suite.txt"; cp /tmp/gx-suite/failures.txt "$O/logs/suite_failures.txt" 2>/dev/null
  cat "$O/suite.txt"
fi
tar czf "$O/logs.tgz" -C "$O" logs && rm -rf "$O/logs" # one file back (at most 8 files a call)
el done
