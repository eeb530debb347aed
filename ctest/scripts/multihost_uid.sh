#!/usr/bin/env bash
# Unique-id start across namespaced hosts (scripts/netns-hosts.sh: own network, own host name):
# the id carries a TCP address on RSHMEM_BOOTSTRAP_IFNAME's interface besides its Unix name.
# Checks: nvshmemx_get_uniqueid + nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID) joins 4 ranks
# on 2 hosts (ctest/security/victim_uid.c: no GPU here, so it must stop at GPU selection, after
# the bootstrap); shmem_init with NVSHMEM_BOOTSTRAP=MPI (a unique id passed over MPI) under
# hydra across the 2 hosts runs a put ring and a reduction; an id made on loopback
# (RSHMEM_BOOTSTRAP_IFNAME==lo) is unreachable from host 2, which says so and names the
# setting within the bootstrap timeout; an interface name that does not exist is refused by
# nvshmemx_get_uniqueid. Nothing is left in either host.
source "$(dirname "$0")/../programs/common.sh"
source "$(dirname "$0")/../multihost/hosts.sh"
hosts_up rmu 2
flags=$(PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig pkg-config --cflags --libs rshmem)
# shellcheck disable=SC2086
gcc -std=gnu11 -O1 -Wall -o "$WORK/victim_uid" "$PROGRAMS/../security/victim_uid.c" $flags -Wl,-rpath,"$PREFIX/lib" \
    || { echo "cannot compile victim_uid.c"; exit 1; }

# uid_job LABEL [ENV...]: ranks 0-1 on host 1, 2-3 on host 2; the ENV settings go to rank 0
# only (the maker of the id). Leaves the outputs in $WORK/LABEL.R and the exit codes in RC[R].
declare -A RC
uid_job() {
    local label=$1 r; shift
    rm -f "$WORK/$label.id"
    for r in 0 1 2 3; do
        local extra=()
        [ $r -eq 0 ] && extra=("$@")
        on_host $((r / 2 + 1)) env RSHMEM_BOOTSTRAP_TIMEOUT=5 "${extra[@]}" timeout 60 \
            "$WORK/victim_uid" $r 4 "$WORK/$label.id" >"$WORK/$label.$r" 2>&1 &
        eval "pid_$r=\$!"
    done
    for r in 0 1 2 3; do eval "wait \$pid_$r"; RC[$r]=$?; done
}

uid_job plain
ok=$(cat "$WORK"/plain.[0-3] | grep -c "^victim ok rank [0-3] of 4")
echo "--- 4 ranks, 2 hosts:"; cat "$WORK"/plain.[0-3]
[ "$ok" -eq 4 ] && pass "nvshmemx_init_attr with a unique id: 4 ranks on 2 hosts joined" || fail "unique id across hosts: $ok of 4 ranks joined"
no_leftovers "unique id across hosts"

start=$SECONDS
uid_job loopback RSHMEM_BOOTSTRAP_IFNAME==lo
echo "--- id made on loopback: after $((SECONDS - start)) s"; cat "$WORK"/loopback.[0-3]
grep -q "could not reach the rendezvous at tcp:127.0.0.1:[0-9]* within 5 s: .* from host rmu-h2; .*RSHMEM_BOOTSTRAP_IFNAME" "$WORK/loopback.2" \
    && [ "${RC[2]}" -ne 0 ] && pass "id on loopback: host 2 cannot reach it and says so, naming RSHMEM_BOOTSTRAP_IFNAME" || fail "id on loopback: rank 2 (exit ${RC[2]}) did not say why"
[ $((SECONDS - start)) -le 30 ] && pass "id on loopback: over within the bootstrap timeout" || fail "id on loopback: took $((SECONDS - start)) s"
no_leftovers "id on loopback"

uid_job wrongif RSHMEM_BOOTSTRAP_IFNAME=wlan
echo "--- wrong interface:"; cat "$WORK/wrongif.0"
grep -q 'RSHMEM_BOOTSTRAP_IFNAME="wlan" matches no interface .* eth0 (10.77.0.1)' "$WORK/wrongif.0" && [ "${RC[0]}" -ne 0 ] \
    && pass "wrong interface: nvshmemx_get_uniqueid refuses it and lists the interfaces" || fail "wrong interface: rank 0 exit ${RC[0]}, not explained"
no_leftovers "wrong interface"

# shmem_init over NVSHMEM_BOOTSTRAP=MPI: rank 0 makes a unique id and MPI carries it.
mpicc=$(command -v mpicc.mpich) || { echo "FAIL: mpicc.mpich is not installed (apt-get install mpich)"; exit 1; }
# shellcheck disable=SC2086
"$mpicc" -std=gnu11 -O1 -Wall -o "$WORK/mpi_bootstrap" "$PROGRAMS/mpi_bootstrap.c" $flags -Wl,-rpath,"$PREFIX/lib" \
    || { echo "cannot compile mpi_bootstrap.c"; exit 1; }
mpi_launchers
# shellcheck disable=SC2086
out=$(on_host 1 timeout 90 env NVSHMEM_BOOTSTRAP=MPI ${LAUNCH[hydra]} "$WORK/mpi_bootstrap" 2>&1 </dev/null); rc=$?
echo "--- NVSHMEM_BOOTSTRAP=MPI under hydra, 2 hosts: exit $rc"; echo "$out"
[ $rc -eq 0 ] && grep -q "PASS mpi_bootstrap (4 PEs)" <<<"$out" \
    && pass "shmem_init over a unique id (NVSHMEM_BOOTSTRAP=MPI): 4 PEs on 2 hosts, put ring and reduction right" || fail "NVSHMEM_BOOTSTRAP=MPI across hosts: exit $rc"
no_leftovers "NVSHMEM_BOOTSTRAP=MPI across hosts"
finish
