#!/usr/bin/env bash
# Network faults across namespaced hosts (issue 18 item 6), beyond what multihost_rshmemrun.sh
# covers (killed PE/head/per-host launcher, global exit, wrong interface and unreachable head
# under rshmemrun, unknown host): each fault ends the job within its timeout with a message
# naming the host and the fix, and leaves nothing running in any host.
#   - host 2's rendezvous and control connections cut mid-job (ss -K, as a firewall reset does)
#   - host 2 unreachable from the start (its link down)
#   - a wrong RSHMEM_BOOTSTRAP_IFNAME under MPICH's hydra (PMI-1: rank 0 picks the interface)
source "$(dirname "$0")/../programs/common.sh"
source "$(dirname "$0")/../multihost/hosts.sh"
hosts_up rmf 2
build hosts_check

run() { on_host 1 timeout 90 env RSHMEM_LAUNCH_AGENT="$AGENT" "$RUN" "$@"; }

# --- mid-job: every TCP connection between host 2 and the head is reset
dir=$WORK/cut && mkdir -p "$dir"
run --hosts rmf-h1:1,rmf-h2:2 "$WORK/hosts_check" hold "$dir" >"$dir/out" 2>"$dir/err" &
job=$!
wait_files "$dir/pid.*" 3 30 || fail "cut: the PEs did not start"
conns=$(ip netns exec rmf-h2 ss -Htn state established dst 10.77.0.1 | wc -l)
# The per-host launcher's control connection and one star connection per PE of host 2.
[ "$conns" -ge 3 ] && pass "cut: host 2 holds $conns connections to the head" || fail "cut: host 2 holds $conns connections to the head, want 3 or more"
start=$SECONDS
ip netns exec rmf-h2 ss -K state established dst 10.77.0.1 >/dev/null 2>&1
wait $job; rc=$?
took=$((SECONDS - start)); echo "--- cut: exit $rc after ${took}s"; cat "$dir/err"
[ $rc -ne 0 ] && pass "cut: the job fails (exit $rc)" || fail "cut: exit 0"
[ $took -le 10 ] && pass "cut: over within 10 s (${took}s)" || fail "cut: took ${took}s"
grep -q "rshmemrun (host rmf-h2): lost the head launcher (.*); stopping this host's 2 PE(s)" "$dir/err" \
    && pass "cut: host 2's launcher says it lost the head and stops its PEs" || fail "cut: host 2's launcher did not say so"
grep -q "rshmemrun: lost the per-host launcher of host rmf-h2 (PEs 1-2)" "$dir/err" \
    && pass "cut: the head names host 2 and its PEs" || fail "cut: the head did not name host 2"
grep -q "nobody stopped me" "$dir/out" && fail "cut: a PE ran on"
no_leftovers "cut"

# --- host 2 cannot be reached at all: its link is down before the job starts
ip -n rmf-h2 link set eth0 down
start=$SECONDS
out=$(RSHMEM_BOOTSTRAP_TIMEOUT=3 run --hosts rmf-h1:1,rmf-h2:1 "$WORK/hosts_check" report "$WORK" 2>&1); rc=$?
took=$((SECONDS - start)); echo "--- unreachable host: exit $rc after ${took}s"; echo "$out"
ip -n rmf-h2 link set eth0 up
[ $rc -ne 0 ] && pass "unreachable host: the job fails (exit $rc)" || fail "unreachable host: exit 0"
grep -q "timed out after 3 s waiting for PE(s) 1 to start" <<<"$out" \
    && pass "unreachable host: PE 0 names the PE that never came" || fail "unreachable host: the missing PE is not named"
grep -q "the per-host launcher of host rmf-h2 (PE 1) never reached this one at tcp:10.77.0.1:[0-9]*; check that the host can reach that address (RSHMEM_BOOTSTRAP_IFNAME" <<<"$out" \
    && pass "unreachable host: the head names host 2 and the fix" || fail "unreachable host: host 2 not named with the fix"
grep -q "rshmemrun (host rmf-h2): cannot reach the head launcher at tcp:10.77.0.1:[0-9]* within 3 s: Network is unreachable .*RSHMEM_BOOTSTRAP_IFNAME" <<<"$out" \
    && pass "unreachable host: host 2's launcher says what it could not reach, and why" || fail "unreachable host: host 2's launcher did not explain"
[ $took -le 10 ] && pass "unreachable host: over within the bootstrap timeout (${took}s)" || fail "unreachable host: took ${took}s"
no_leftovers "unreachable host"

# --- a wrong interface name under hydra: rank 0 cannot listen, says where and why; the others
# give up within the bootstrap timeout
HYDRA=$(command -v mpiexec.hydra) || { echo "FAIL: mpiexec.hydra is not installed (apt-get install mpich)"; exit 1; }
start=$SECONDS
out=$(on_host 1 timeout 60 env RSHMEM_BOOTSTRAP_IFNAME=wlan RSHMEM_BOOTSTRAP_TIMEOUT=5 "$HYDRA" -launcher ssh -launcher-exec "$AGENT" \
    -iface eth0 -hosts rmf-h1:1,rmf-h2:1 -n 2 "$WORK/hosts_check" report "$WORK" 2>&1); rc=$?
took=$((SECONDS - start)); echo "--- hydra, wrong interface: exit $rc after ${took}s"; echo "$out"
grep -q 'RSHMEM_BOOTSTRAP_IFNAME="wlan" matches no interface that is up with a usable address on host rmf-h1; its interfaces are: .*eth0 (10.77.0.1)' <<<"$out" \
    && pass "hydra, wrong interface: rank 0 names its host and lists the interfaces" || fail "hydra, wrong interface: not explained"
grep -q "Set it to one of them" <<<"$out" && pass "hydra, wrong interface: the fix is given" || fail "hydra, wrong interface: no fix"
grep -q "ok$" <<<"$out" && fail "hydra, wrong interface: a PE reported ok"
[ $took -le 20 ] && pass "hydra, wrong interface: over within the bootstrap timeout (${took}s)" || fail "hydra, wrong interface: took ${took}s"
no_leftovers "hydra, wrong interface"

finish
