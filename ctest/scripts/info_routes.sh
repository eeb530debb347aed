#!/usr/bin/env bash
# Each PE pair's transport (issue 18 item 2): `rshmem-info --routes` inside a job prints every
# PE's row of the route table, and the INFO log at init has the same lines. PEs report the host
# name h<rank mod 2> (RSHMEM_HOSTNAME), so PEs 0,2 and 1,3 share a host. Skipped without libfabric.
source "$(dirname "$0")/../programs/common.sh"
if ! ldconfig -p | grep -q 'libfabric\.so\.1 '; then echo "SKIP: libfabric.so.1 is not installed"; exit 0; fi
two_hosts() { timeout 60 "$RUN" -n 4 sh -c 'RSHMEM_HOSTNAME=h$((RSHMEM_RANK % 2)) exec "$0" "$@"' "$@"; }

out=$(two_hosts "$PREFIX/bin/rshmem-info" --routes 2>&1); rc=$?
echo "$out"
[ $rc -eq 0 ] && pass "rshmem-info --routes runs in a 4-PE job" || fail "rshmem-info --routes: exit $rc"
want=0
for i in 0 1 2 3; do
    for j in 0 1 2 3; do
        if [ $((i % 2)) -eq $((j % 2)) ]; then how="shm"; else how="fabric(tcp;ofi_rxm)"; fi
        grep -qxF "PE $i -> PE $j: $how" <<<"$out" && want=$((want + 1)) || fail "missing: PE $i -> PE $j: $how"
    done
done
[ $want -eq 16 ] && pass "all 16 pairs, shm within a host and fabric(tcp;ofi_rxm) across"
[ "$(grep -c -- ' -> PE ' <<<"$out")" -eq 16 ] && pass "no other pair lines" || fail "extra pair lines"

out=$(RSHMEM_DEBUG=INFO two_hosts "$PREFIX/bin/rshmem-info" --routes 2>&1 >/dev/null)
grep -q "rshmem: PE 3: PE 3 -> PE 0: fabric(tcp;ofi_rxm)" <<<"$out" && grep -q "rshmem: PE 3: PE 3 -> PE 1: shm" <<<"$out" \
    && pass "the INFO log at init shows each PE's pairs" || { fail "pairs not in the INFO log"; grep " -> " <<<"$out" | head; }

out=$("$PREFIX/bin/rshmem-info" --routes 2>&1); rc=$?
[ $rc -eq 0 ] && grep -qxF "PE 0 -> PE 0: shm" <<<"$out" && pass "alone (no launcher): one PE, its own row" \
    || fail "alone: exit $rc: $out"
finish
