#!/usr/bin/env bash
# PEs that report different hosts (RSHMEM_HOSTNAME = h<rank mod H>) reach each other through
# the fabric transport (libfabric tcp;ofi_rxm) while same-host PEs keep shared memory: puts
# and gets of static data checked on every PE, and the routes in the INFO log. Skipped where
# libfabric is not installed.
source "$(dirname "$0")/../programs/common.sh"
if ! ldconfig -p | grep -q 'libfabric\.so\.1 '; then echo "SKIP: libfabric.so.1 is not installed"; exit 0; fi
build fabric_routes

# run NP HOSTS [ARGS]: every PE gets the host name h<rank mod HOSTS>.
run() {
    local np=$1 hosts=$2; shift 2
    RSHMEM_DEBUG=INFO timeout 120 "$RUN" -n "$np" sh -c "RSHMEM_HOSTNAME=h\$((RSHMEM_RANK % $hosts)) exec \"\$0\" \"\$@\"" \
        "$WORK/fabric_routes" "$@" >"$WORK/out" 2>&1
}

for spec in "2 2" "4 2" "3 3" "7 3"; do
    set -- $spec
    if run "$1" "$2" && grep -q "fabric_routes: $1 PEs ok" "$WORK/out"; then
        pass "$1 PEs on $2 hosts: puts and gets checked"
    else
        fail "$1 PEs on $2 hosts"; tail -20 "$WORK/out"
    fi
    if grep -q "PEs .* via fabric .*tcp;ofi_rxm" "$WORK/out" && grep -q "via shm (this host)" "$WORK/out"; then
        pass "$1 PEs on $2 hosts: the INFO log shows both routes"
    else
        fail "$1 PEs on $2 hosts: routes not in the INFO log"; grep -i "host" "$WORK/out" | head
    fi
done

finish
