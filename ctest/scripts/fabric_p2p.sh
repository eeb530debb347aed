#!/usr/bin/env bash
# Point-to-point routines across hosts over the fabric transport (libfabric tcp;ofi_rxm):
# ctest/programs/fabric_p2p.c (RMA of every kind, AMO totals from every host, put-with-signal
# ordering, fence, locks, shmem_ptr) under rshmemrun --hosts on namespaced hosts: 2 PEs on 2
# hosts, 4 PEs on 2 (0-1 | 2-3) and 4 PEs on 3 (0 | 1-2 | 3); and on 4 PEs that alternate
# hosts on this machine (RSHMEM_HOSTNAME = h<rank mod 2>: 0,2 | 1,3). Skipped where libfabric
# is not installed.
source "$(dirname "$0")/../programs/common.sh"
if ! ldconfig -p | grep -q 'libfabric\.so\.1 '; then echo "SKIP: libfabric.so.1 is not installed"; exit 0; fi
source "$(dirname "$0")/../multihost/hosts.sh"
hosts_up rfp 3
build fabric_p2p

for spec in rfp-h1:1,rfp-h2:1 rfp-h1:2,rfp-h2:2 rfp-h1:1,rfp-h2:2,rfp-h3:1; do
    np=$(( $(tr ',' '\n' <<<"$spec" | cut -d: -f2 | paste -sd+) ))
    on_host 1 timeout 120 env RSHMEM_LAUNCH_AGENT="$AGENT" "$RUN" --hosts "$spec" "$WORK/fabric_p2p" >"$WORK/out" 2>&1; rc=$?
    if [ $rc -eq 0 ] && grep -q "fabric_p2p: $np PEs ok" "$WORK/out"; then
        pass "$np PEs on namespaced hosts $spec"
    else
        fail "$np PEs on namespaced hosts $spec: exit $rc"; grep -v "^rshmem: PE .*: \(host\|initialised\)" "$WORK/out" | tail -30
    fi
    no_leftovers "$np PEs on hosts $spec"
done

timeout 120 "$RUN" -n 4 sh -c 'RSHMEM_HOSTNAME=h$((RSHMEM_RANK % 2)) exec "$0"' "$WORK/fabric_p2p" >"$WORK/out" 2>&1; rc=$?
if [ $rc -eq 0 ] && grep -q "fabric_p2p: 4 PEs ok" "$WORK/out"; then
    pass "4 PEs alternating between 2 hosts (0,2 | 1,3)"
else
    fail "4 PEs alternating between 2 hosts: exit $rc"; grep -v "^rshmem: PE .*: \(host\|initialised\)" "$WORK/out" | tail -30
fi
finish
