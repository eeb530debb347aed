#!/usr/bin/env bash
# One device call (session 28, gpux): the proxy A/B (ab.sh) with old = main 6a27e59's machine
# code (.gpu fin30, f108327's librshmem.so) and new = this branch's librshmem.so, both with the
# route-built programs of xhcuda27; then the CUDA suite subset the change touches across the 2
# hosts with the new library (OLDLIB, NEWLIB: other tarballs for old and new; DROP: pairs whose
# bench logs are not kept; call_r2.sh). Carried: .gpu/base.tar.xz (fin30's stage, tools, ctest and scripts
# with xhcuda27's proxy_bench and the subset's programs in build/cuda), .gpu/newlib.xz.
set -u
D="$(cd "$(dirname "$0")" && pwd)" O="${OUT:-/tmp/gpux-out}"; mkdir -p "$O"
F="$D"; [ -f "$F/base.tar.xz" ] || F="$D/../../.gpu" # the tarballs: beside this script, or in the repo's .gpu/
exec > >(tee "$O/call.log") 2>&1
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi -L; nproc
W=/tmp/gx; rm -rf $W; mkdir -p $W
tar -xJf "$F/base.tar.xz" -C $W && mv $W/fin30 $W/old
cp -a $W/old $W/new && xz -dc "$F/${NEWLIB:-newlib.xz}" >$W/new/stage/lib/librshmem.so.0.1.0
[ -z "${OLDLIB:-}" ] || xz -dc "$F/$OLDLIB" >$W/old/stage/lib/librshmem.so.0.1.0 # round 2: another old library
el "unpacked: $(ls $W/old/build/cuda | wc -l) programs; libs $(md5sum $W/old/stage/lib/librshmem.so.0.1.0 $W/new/stage/lib/librshmem.so.0.1.0 | cut -c1-8 | tr '\n' ' ')"
OUT=$O REPS="${REPS:-2}" timeout 150 bash "$D/ab.sh" $W/old $W/new; el "ab rc=$?"
for i in ${DROP:-}; do rm -f "$O/bench_old$i.log" "$O/bench_new$i.log"; done # at most 8 files come back; ab.txt has every column
XH_PREFIX=rxs OUT=/tmp/gx-suite TESTS="${SUITE:-rma put_block signal amo wait host stream strided ring_bcast two_tu}" \
  LIMIT=20 DEADLINE="${SUITE_DEADLINE:-90}" timeout 110 bash $W/new/ctest/cuda/crosshost.sh >/dev/null 2>&1; el "suite rc=$?"
grep -E "^(PASS|FAIL|MISSING|RESULT|NOT RUN)" /tmp/gx-suite/crosshost.log >"$O/suite.txt"; cp /tmp/gx-suite/failures.txt "$O/suite_failures.txt" 2>/dev/null
cat "$O/suite.txt"; el done
