#!/usr/bin/env bash
# Network faults across namespaced hosts (issue 18 item 6), beyond what multihost_rshmemrun.sh
# covers (killed PE/head/per-host launcher, global exit, wrong interface and unreachable head
# under rshmemrun, unknown host): each fault ends the job within its timeout with a message
# naming the host and the fix, and leaves nothing running in any host.
#   - host 2's rendezvous and control connections cut mid-job (ss -K, as a firewall reset does)
#   - host 2 unreachable from the start (its link down)
#   - a wrong RSHMEM_BOOTSTRAP_IFNAME under MPICH's hydra (PMI-1: rank 0 picks the interface)
#   - host 2 silent mid-job (its link down) while PEs read from each other
#   - a libfabric provider that cannot reach other hosts (FI_PROVIDER=shm), or does not exist
#   - FI_* settings reach every host through an agent that clears the environment (as ssh)
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
grep -q "launcher of host rmf-h2.*never reached this one" "$dir/err" \
    && fail "cut: the head also claims host 2 never reached it" || pass "cut: no false 'never reached' for a host that was connected"
no_leftovers "cut"

# --- libfabric's own settings reach every host, even through an agent that starts commands with
# an empty environment (as ssh does)
out=$(on_host 1 timeout 60 env FI_RSHMEM_PROBE=carried RSHMEM_LAUNCH_AGENT="env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin $AGENT" \
    "$RUN" --hosts rmf-h1:1,rmf-h2:1 sh -c 'echo "$(hostname) FI_RSHMEM_PROBE=$FI_RSHMEM_PROBE"' 2>&1)
[ "$(grep -c "FI_RSHMEM_PROBE=carried" <<<"$out")" -eq 2 ] && pass "FI_* settings reach the PEs of both hosts" \
    || fail "FI_* settings not carried to every host: $out"

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
# give up within the bootstrap timeout. mpiexec forwards its stdin to rank 0's proxy and does not
# ignore SIGPIPE: with stdin carrying data (a CI runner's pipe) it writes to that proxy after rank 0
# failed and the proxy exited, dies of SIGPIPE (exit 141) at 0 s before printing rank 0's message,
# and leaves host 2's proxy behind (seen in a clean-clone CI run; `yes | mpiexec ...` repeats it).
# The PEs read no stdin, so it is /dev/null; anything mpiexec leaves is killed after the checks.
HYDRA=$(command -v mpiexec.hydra) || { echo "FAIL: mpiexec.hydra is not installed (apt-get install mpich)"; exit 1; }
start=$SECONDS
out=$(on_host 1 timeout 60 env RSHMEM_BOOTSTRAP_IFNAME=wlan RSHMEM_BOOTSTRAP_TIMEOUT=5 "$HYDRA" -launcher ssh -launcher-exec "$AGENT" \
    -iface eth0 -hosts rmf-h1:1,rmf-h2:1 -n 2 "$WORK/hosts_check" report "$WORK" 2>&1 </dev/null); rc=$?
took=$((SECONDS - start)); echo "--- hydra, wrong interface: exit $rc after ${took}s"; echo "$out"
grep -q 'RSHMEM_BOOTSTRAP_IFNAME="wlan" matches no interface that is up with a usable address on host rmf-h1; its interfaces are: .*eth0 (10.77.0.1)' <<<"$out" \
    && pass "hydra, wrong interface: rank 0 names its host and lists the interfaces" || fail "hydra, wrong interface: not explained"
grep -q "Set it to one of them" <<<"$out" && pass "hydra, wrong interface: the fix is given" || fail "hydra, wrong interface: no fix"
grep -q "ok$" <<<"$out" && fail "hydra, wrong interface: a PE reported ok"
[ $took -le 20 ] && pass "hydra, wrong interface: over within the bootstrap timeout (${took}s)" || fail "hydra, wrong interface: took ${took}s"
no_leftovers "hydra, wrong interface"
for k in 1 2; do pids=$(ip netns pids "$HOSTS_PREFIX-h$k"); [ -z "$pids" ] || kill -9 $pids 2>/dev/null; done

# --- host 2 goes silent mid-job (its link down, no reset) while its PEs and host 1's read from
# each other: the reads fail after RSHMEM_FABRIC_TIMEOUT, the job ends, nothing is left
cat >"$WORK/get_loop.c" <<'EOF'
/* Every PE reads its neighbour's word over and over, after writing DIR/pid.<pe>. */
#include <shmem.h>
#include <stdio.h>
#include <unistd.h>
static long word;
int main(int argc, char **argv) {
    shmem_init();
    int me = shmem_my_pe(), peer = (me + 1) % shmem_n_pes();
    char path[4096];
    snprintf(path, sizeof path, "%s/pid.%d", argc > 1 ? argv[1] : ".", me);
    FILE *f = fopen(path, "w");
    if (!f) return 2;
    fprintf(f, "%d\n", (int)getpid());
    fclose(f);
    for (long v;;) shmem_getmem(&v, &word, sizeof v, peer);
}
EOF
# shellcheck disable=SC2046
gcc -std=gnu11 -O1 -o "$WORK/get_loop" "$WORK/get_loop.c" $(PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig pkg-config --cflags --libs rshmem) \
    -Wl,-rpath,"$PREFIX/lib" || { echo "FAIL: cannot compile get_loop.c"; exit 1; }
dir=$WORK/silent && mkdir -p "$dir"
RSHMEM_FABRIC_TIMEOUT=3 run --hosts rmf-h1:1,rmf-h2:1 "$WORK/get_loop" "$dir" >"$dir/out" 2>&1 &
job=$!
wait_files "$dir/pid.*" 2 30 || fail "silent host: the PEs did not start"
sleep 0.5
ip -n rmf-h2 link set eth0 down
start=$SECONDS
wait $job; rc=$?
took=$((SECONDS - start)); echo "--- silent host: exit $rc after ${took}s"; cat "$dir/out"
[ $rc -ne 0 ] && pass "silent host: the job fails (exit $rc)" || fail "silent host: exit 0"
grep -q "shmem_getmem.*did not complete in 3 s.*RSHMEM_FABRIC_TIMEOUT" "$dir/out" \
    && pass "silent host: the read that never completed is reported with the setting" || fail "silent host: no fabric timeout report"
[ $took -le 10 ] && pass "silent host: over within 10 s (${took}s)" || fail "silent host: took ${took}s"
no_leftovers "silent host"
ip -n rmf-h2 link set eth0 up

# --- a provider that reaches only its own host, and one that does not exist: shmem_init fails
# on every PE with the host, the provider and the fix
for setting in FI_PROVIDER=shm RSHMEM_FABRIC_PROVIDER=nosuch; do
    start=$SECONDS
    out=$(export "$setting"; run --hosts rmf-h1:1,rmf-h2:1 "$WORK/hosts_check" report "$WORK" 2>&1); rc=$?
    took=$((SECONDS - start)); echo "--- $setting: exit $rc after ${took}s"; echo "$out"
    [ $rc -ne 0 ] && ! grep -q "ok$" <<<"$out" && pass "$setting: the job fails, no PE reports ok" || fail "$setting: exit $rc"
    # The first PE to fail ends the job, so the other may be stopped before it says anything.
    said=$(grep -cE "PE 0: shmem_init: fabric: no libfabric provider offers thread-safe RDM endpoints with RMA.* on host rmf-h1|PE 1: shmem_init: fabric: no libfabric provider offers thread-safe RDM endpoints with RMA.* on host rmf-h2" <<<"$out")
    wrong=$(grep -cE "PE 0: .* on host rmf-h2|PE 1: .* on host rmf-h1" <<<"$out")
    [ "$said" -ge 1 ] && [ "$wrong" -eq 0 ] && pass "$setting: the PEs that failed name their own hosts ($said)" || fail "$setting: $said right, $wrong wrong host names"
    case $setting in
        FI_PROVIDER=*) want="(FI_PROVIDER=shm limits the choice); shm answered, but reaches only PEs of its own host.*Fix: unset FI_PROVIDER" ;;
        *) want='from provider "nosuch" on host rmf-h.*Fix: set RSHMEM_FABRIC_PROVIDER to one it lists' ;;
    esac
    grep -q "$want" <<<"$out" && pass "$setting: the provider and the fix are named" || fail "$setting: provider or fix missing"
    [ $took -le 10 ] && pass "$setting: over within 10 s (${took}s)" || fail "$setting: took ${took}s"
    no_leftovers "$setting"
done

finish
