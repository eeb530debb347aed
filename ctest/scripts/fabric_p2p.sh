#!/usr/bin/env bash
# Point-to-point routines across hosts over the fabric transport (libfabric tcp;ofi_rxm):
# ctest/programs/fabric_p2p.c (RMA of every kind, AMO totals from both hosts, put-with-signal
# ordering, fence, locks, shmem_ptr) on 2 and 4 PEs spread over 2 namespaced hosts
# (rshmemrun --hosts, PEs 0-1 | 2-3), and on 4 PEs that alternate hosts (RSHMEM_HOSTNAME =
# h<rank mod 2>: PEs 0,2 | 1,3) on this machine. Skipped where libfabric is not installed.
source "$(dirname "$0")/../programs/common.sh"
if ! ldconfig -p | grep -q 'libfabric\.so\.1 '; then echo "SKIP: libfabric.so.1 is not installed"; exit 0; fi
source "$(dirname "$0")/../multihost/hosts.sh"
hosts_up rfp 2
build fabric_p2p

for spec in rfp-h1:1,rfp-h2:1 rfp-h1:2,rfp-h2:2; do
    np=$(( $(tr ',' '\n' <<<"$spec" | cut -d: -f2 | paste -sd+) ))
    on_host 1 timeout 120 env RSHMEM_LAUNCH_AGENT="$AGENT" "$RUN" --hosts "$spec" "$WORK/fabric_p2p" >"$WORK/out" 2>&1; rc=$?
    if [ $rc -eq 0 ] && grep -q "fabric_p2p: $np PEs ok" "$WORK/out"; then
        pass "$np PEs on 2 namespaced hosts ($spec)"
    else
        fail "$np PEs on 2 namespaced hosts ($spec): exit $rc"; tail -20 "$WORK/out"
    fi
    no_leftovers "$np PEs on 2 hosts"
done

timeout 120 "$RUN" -n 4 sh -c 'RSHMEM_HOSTNAME=h$((RSHMEM_RANK % 2)) exec "$0"' "$WORK/fabric_p2p" >"$WORK/out" 2>&1; rc=$?
if [ $rc -eq 0 ] && grep -q "fabric_p2p: 4 PEs ok" "$WORK/out"; then
    pass "4 PEs alternating between 2 hosts (0,2 | 1,3)"
else
    fail "4 PEs alternating between 2 hosts: exit $rc"; tail -20 "$WORK/out"
fi
finish
