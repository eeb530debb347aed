#!/usr/bin/env bash
# rshmemrun --hosts across namespaced "hosts" (scripts/netns-hosts.sh: own network, own host
# name, nothing shared but the kernel), started through a launch agent (ctest/multihost/
# netns-agent.sh). The head launcher runs in host 1. Checks: 2 and 3 hosts start and finalize
# with the right ranks on the right hosts; a killed PE, a global exit (also one while the others
# wait in a barrier spanning the hosts), a killed head, a killed
# per-host launcher, a wrong interface, a host that does not exist, a program missing on one
# host and a head the hosts cannot reach each end the job with a message naming the host and the fix; nothing is left running
# in any host; the job secret is on no command line.
source "$(dirname "$0")/../programs/common.sh"
source "$(dirname "$0")/../multihost/hosts.sh"
hosts_up rmh 3
build hosts_check

# run ARGS...: rshmemrun in host 1 with the agent.
run() { on_host 1 timeout 90 env RSHMEM_LAUNCH_AGENT="$AGENT" "$RUN" "$@"; }
# The rshmemrun process (not its timeout/nsenter wrappers) whose command line has $1.
launcher_with() {
    local p
    for p in $(pgrep -f -- "$1"); do
        [ "$(readlink "/proc/$p/exe")" = "$(readlink -f "$RUN")" ] && echo "$p"
    done | head -1
}
shm_before=$(ls -a /dev/shm)

# --- start-up across 2 and 3 hosts
dir=$WORK/two && mkdir -p "$dir"
out=$(run --hosts rmh-h1:2,rmh-h2:2 "$WORK/hosts_check" report "$dir" 2>&1); rc=$?
echo "--- 2 hosts: exit $rc"; echo "$out"
[ $rc -eq 0 ] && pass "2 hosts: exit 0" || fail "2 hosts: exit $rc"
got=$(grep -cE "^PE (0|1) of 4 on rmh-h1: ok|^PE (2|3) of 4 on rmh-h2: ok" <<<"$out")
[ "$got" -eq 4 ] && pass "2 hosts: PEs 0-1 on rmh-h1 and 2-3 on rmh-h2 reported" || fail "2 hosts: $got of 4 right reports"
no_leftovers "2 hosts"

dir=$WORK/three && mkdir -p "$dir"
printf '# three namespaced hosts\nrmh-h1:2   # the head runs here\n\nrmh-h2:2\nrmh-h3\n' >"$WORK/hostfile"
out=$(RSHMEM_DEBUG=INFO run --hostfile "$WORK/hostfile" "$WORK/hosts_check" report "$dir" 2>&1); rc=$?
echo "--- 3 hosts: exit $rc"; echo "$out"
got=$(grep -cE "^PE (0|1) of 5 on rmh-h1: ok|^PE (2|3) of 5 on rmh-h2: ok|^PE 4 of 5 on rmh-h3: ok" <<<"$out")
[ $rc -eq 0 ] && [ "$got" -eq 5 ] && pass "3 hosts from a host file: 5 PEs on the right hosts" || fail "3 hosts: exit $rc, $got of 5 right reports"
grep -q "the job spans 3 hosts" <<<"$out" && pass "3 hosts: PE 0 says the job spans 3 hosts (INFO)" || fail "3 hosts: no 'spans 3 hosts' line"
no_leftovers "3 hosts"

# --- a PE killed on host 2 ends the job on every host within 10 s
dir=$WORK/kill && mkdir -p "$dir"
start=$SECONDS
run --hosts rmh-h1:2,rmh-h2:2 "$WORK/hosts_check" kill "$dir" >"$dir/out" 2>"$dir/err"; rc=$?
took=$((SECONDS - start)); echo "--- kill: exit $rc after ${took}s"; cat "$dir/err"
pid=$(cat "$dir/pid.3" 2>/dev/null)
[ $rc -eq 137 ] && pass "kill: exit 137 (128+SIGKILL)" || fail "kill: exit $rc, want 137"
[ $took -le 10 ] && pass "kill: the job ended within 10 s (${took}s)" || fail "kill: took ${took}s"
grep -q "PE 3 (pid $pid) on host rmh-h2 was killed by signal 9 (SIGKILL); stopping the other 3 PE(s) on every host" "$dir/err" \
    && pass "kill: the head names PE 3, its pid, its host and the signal" || fail "kill: PE 3 not named"
grep -q "nobody stopped me" "$dir/out" && fail "kill: a PE ran on"
no_leftovers "kill"

# --- shmem_global_exit(3) on host 2
dir=$WORK/exit3 && mkdir -p "$dir"
run --hosts rmh-h1:1,rmh-h2:2 "$WORK/hosts_check" exit3 "$dir" >"$dir/out" 2>"$dir/err"; rc=$?
echo "--- exit3: exit $rc"; cat "$dir/err"
[ $rc -eq 3 ] && pass "global exit: the job exits 3" || fail "global exit: exit $rc, want 3"
grep -q "PE 2 on host rmh-h2 ended the job (shmem_global_exit(3)" "$dir/err" && pass "global exit: PE 2 and its host are named" || fail "global exit: not named"
no_leftovers "global exit"

# --- shmem_global_exit(3) on host 2 while the PEs of both hosts wait in a barrier spanning them
dir=$WORK/exit3barrier && mkdir -p "$dir"
start=$SECONDS
run --hosts rmh-h1:2,rmh-h2:2 "$WORK/hosts_check" exit3barrier "$dir" >"$dir/out" 2>"$dir/err"; rc=$?
took=$((SECONDS - start)); echo "--- exit3barrier: exit $rc after ${took}s"; cat "$dir/err"
[ $rc -eq 3 ] && [ $took -le 10 ] && pass "global exit during a cross-host barrier: exit 3 within 10 s (${took}s)" || fail "global exit during a barrier: exit $rc after ${took}s"
grep -q "PE 3 on host rmh-h2 ended the job (shmem_global_exit(3)" "$dir/err" && pass "global exit during a barrier: PE 3 and its host are named" || fail "global exit during a barrier: not named"
grep -q "nobody stopped me" "$dir/out" && fail "global exit during a barrier: a PE ran on"
no_leftovers "global exit during a barrier"

# --- the head is killed: every per-host launcher sees the connection drop and stops its PEs
dir=$WORK/head && mkdir -p "$dir"
run --hosts rmh-h1:2,rmh-h2:2,rmh-h3:1 "$WORK/hosts_check" hold "$dir" >"$dir/out" 2>"$dir/err" &
wait_files "$dir/pid.*" 5 30 || fail "head kill: the PEs did not start"
# The secret is in the PEs' environment (readable by their user only), never on a command line.
secret=$(tr '\0' '\n' <"/proc/$(cat "$dir/pid.4")/environ" | sed -n 's/^RSHMEM_JOB_SECRET=//p')
[ ${#secret} -eq 64 ] || fail "could not read the job secret of PE 4"
leak=$(for p in $(ip netns pids rmh-h1) $(ip netns pids rmh-h2) $(ip netns pids rmh-h3) $(pgrep -x rshmemrun); do tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null; echo; done | grep -c "$secret")
[ -n "$secret" ] && [ "$leak" -eq 0 ] && pass "the job secret is on no command line of any host" || fail "the job secret is on $leak command line(s)"
head=$(launcher_with "--hosts rmh-h1:2,rmh-h2:2,rmh-h3:1")
start=$SECONDS
kill -9 "$head"; wait
no_leftovers "head killed"
echo "--- head killed: took $((SECONDS - start))s"; cat "$dir/err"
[ "$(grep -c "lost the head launcher (the connection closed); stopping this host's" "$dir/err")" -eq 3 ] \
    && pass "head killed: each of the 3 per-host launchers says it lost the head" || fail "head killed: per-host launchers did not say so"
[ $((SECONDS - start)) -le 10 ] && pass "head killed: every host was clean within 10 s" || fail "head killed: took too long"

# --- a per-host launcher is killed: the head names its host and stops the others
dir=$WORK/perhost && mkdir -p "$dir"
run --hosts rmh-h1:2,rmh-h2:2 "$WORK/hosts_check" hold "$dir" >"$dir/out" 2>"$dir/err" &
job=$!
wait_files "$dir/pid.*" 4 30 || fail "per-host kill: the PEs did not start"
victim=$(for p in $(ip netns pids rmh-h2); do [ "$(readlink "/proc/$p/exe")" = "$(readlink -f "$RUN")" ] && echo "$p"; done | head -1)
start=$SECONDS
kill -9 "$victim"; wait $job; rc=$?
echo "--- per-host killed: exit $rc after $((SECONDS - start))s"; cat "$dir/err"
[ $rc -ne 0 ] && pass "per-host killed: the job fails (exit $rc)" || fail "per-host killed: exit 0"
grep -q "lost the per-host launcher of host rmh-h2 (PEs 2-3)" "$dir/err" && pass "per-host killed: its host is named" || fail "per-host killed: host not named"
no_leftovers "per-host killed"

# --- SIGTERM to the head mid-job: forwarded to the PEs of every host; exit 128+15, nothing left
dir=$WORK/term && mkdir -p "$dir"
run --hosts rmh-h1:1,rmh-h2:2 "$WORK/hosts_check" hold "$dir" >"$dir/out" 2>"$dir/err" &
job=$!
wait_files "$dir/pid.*" 3 30 || fail "SIGTERM: the PEs did not start"
start=$SECONDS
kill -TERM "$(launcher_with "--hosts rmh-h1:1,rmh-h2:2")"; wait $job; rc=$?
echo "--- SIGTERM mid-job: exit $rc after $((SECONDS - start))s"; cat "$dir/err"
[ $rc -eq 143 ] && pass "SIGTERM: exit 143 (128+SIGTERM)" || fail "SIGTERM: exit $rc, want 143"
[ $((SECONDS - start)) -le 10 ] && pass "SIGTERM: the job ended within 10 s" || fail "SIGTERM: took $((SECONDS - start))s"
grep -q "nobody stopped me" "$dir/out" && fail "SIGTERM: a PE ran on"
no_leftovers "SIGTERM mid-job"

# --- SIGTERM to the head while a host is still starting (its agent waits 30 s, in a bash
# builtin, before running anything): that host's launcher cannot be told, so the head ends the
# job itself and names the host
mkfifo "$WORK/never"
printf '#!/bin/bash\n[ "${1##*-}" = h2 ] && read -r -t 30 _ <>"%s"\nexec "%s" "$@"\n' "$WORK/never" "$AGENT" >"$WORK/slow_agent.sh"
chmod +x "$WORK/slow_agent.sh"
dir=$WORK/term_start && mkdir -p "$dir"
on_host 1 timeout 90 env RSHMEM_LAUNCH_AGENT="$WORK/slow_agent.sh" "$RUN" --hosts rmh-h1:1,rmh-h2:1 "$WORK/hosts_check" hold "$dir" \
    >"$dir/out" 2>"$dir/err" &
job=$!
# (PE 0 runs, but waits in shmem_init for PE 1: it writes no pid file yet.)
pe0=
for _ in $(seq 300); do
    pe0=$(for p in $(ip netns pids rmh-h1); do [ "$(readlink "/proc/$p/exe")" = "$(readlink -f "$WORK/hosts_check")" ] && echo "$p"; done | head -1)
    [ -n "$pe0" ] && break
    sleep 0.1
done
[ -n "$pe0" ] && pass "SIGTERM while starting: PE 0 runs on host 1, host 2 is still starting" || fail "SIGTERM while starting: PE 0 did not start"
start=$SECONDS
kill -TERM "$(launcher_with "--hosts rmh-h1:1,rmh-h2:1")"; wait $job; rc=$?
echo "--- SIGTERM while starting: exit $rc after $((SECONDS - start))s"; cat "$dir/err"
[ $rc -eq 143 ] && pass "SIGTERM while starting: exit 143" || fail "SIGTERM while starting: exit $rc, want 143"
[ $((SECONDS - start)) -le 10 ] && pass "SIGTERM while starting: over within 10 s" || fail "SIGTERM while starting: took $((SECONDS - start))s"
grep -q "rshmemrun: SIGTERM received while host rmh-h2 (PE 1) had not started yet; stopping all PEs on every host" "$dir/err" \
    && pass "SIGTERM while starting: the head names the host still starting" || fail "SIGTERM while starting: host not named"
no_leftovers "SIGTERM while starting"

# --- a wrong interface name lists the interfaces
out=$(RSHMEM_BOOTSTRAP_IFNAME=wlan run --hosts rmh-h1:1,rmh-h2:1 "$WORK/hosts_check" report "$WORK" 2>&1); rc=$?
echo "--- wrong interface: exit $rc"; echo "$out"
grep -q 'RSHMEM_BOOTSTRAP_IFNAME="wlan" matches no interface' <<<"$out" && grep -q "eth0 (10.77.0.1)" <<<"$out" && [ $rc -ne 0 ] \
    && pass "wrong interface: refused, the interfaces listed" || fail "wrong interface: exit $rc"

# --- a host that does not exist: the agent fails, the head names the host and the check
start=$SECONDS
out=$(run --hosts rmh-h1:1,rmh-h9:1 "$WORK/hosts_check" report "$WORK" 2>&1); rc=$?
echo "--- unknown host: exit $rc after $((SECONDS - start))s"; echo "$out"
grep -q "could not start the PEs of host rmh-h9 (PE 1): .* exited with status" <<<"$out" && [ $rc -ne 0 ] \
    && pass "unknown host: named, with the agent's status" || fail "unknown host: not named"
[ $((SECONDS - start)) -le 10 ] && pass "unknown host: failed within 10 s" || fail "unknown host: took $((SECONDS - start))s"
no_leftovers "unknown host"

# --- the program is missing on one host (hosts share this file system: an agent that hides
# its directory on host 2): the head names the host and the path and ends the job at once.
# Host 3's launcher gets its start-up record 3 s late, so it first tries to reach the head
# after the job ended: it must give up at once, not retry for the bootstrap timeout.
mkdir -p "$WORK/only-some" && cp "$WORK/hosts_check" "$WORK/only-some/"
cat >"$WORK/hiding-agent.sh" <<EOF
#!/bin/bash
[ "\$1" = rmh-h2 ] && exec unshare -m sh -c 'mount -t tmpfs none "\$0" && exec "\$@"' "$WORK/only-some" "$AGENT" "\$@"
[ "\$1" = rmh-h3 ] && { { sleep 3; cat; } | "$AGENT" "\$@"; exit; }
exec "$AGENT" "\$@"
EOF
chmod +x "$WORK/hiding-agent.sh"
start=$SECONDS
out=$(on_host 1 timeout 90 env RSHMEM_LAUNCH_AGENT="$WORK/hiding-agent.sh" "$RUN" --hosts rmh-h1:2,rmh-h2:2,rmh-h3:1 "$WORK/only-some/hosts_check" report "$WORK" 2>&1); rc=$?
echo "--- program missing on one host: exit $rc after $((SECONDS - start))s"; echo "$out"
grep -q "cannot start PE 2 on host rmh-h2: $WORK/only-some/hosts_check: No such file or directory (os error 2); the program must exist at that path on every host" <<<"$out" \
    && [ $rc -eq 127 ] && pass "missing program: the head names the host and the path (exit 127)" || fail "missing program: exit $rc, host or path not named"
grep -q "never reached\|lost the per-host launcher" <<<"$out" && fail "missing program: a false 'never reached' or 'lost' message"
[ $((SECONDS - start)) -le 10 ] && pass "missing program: over within 10 s" || fail "missing program: took $((SECONDS - start))s"
no_leftovers "missing program (host 3's late launcher gave up)"

# --- the head listens where the hosts cannot reach it (loopback): named, within the timeout
start=$SECONDS
out=$(RSHMEM_BOOTSTRAP_IFNAME==lo RSHMEM_BOOTSTRAP_TIMEOUT=3 run --hosts rmh-h1:1,rmh-h2:1 "$WORK/hosts_check" report "$WORK" 2>&1); rc=$?
echo "--- unreachable head: exit $rc after $((SECONDS - start))s"; echo "$out"
grep -q "the per-host launcher of host rmh-h2 (PE 1) never reached this one at tcp:127.0.0.1:[0-9]*; .*RSHMEM_BOOTSTRAP_IFNAME" <<<"$out" && [ $rc -ne 0 ] \
    && pass "unreachable head: the host that cannot reach it says so, with the fix" || fail "unreachable head: not explained"
[ $((SECONDS - start)) -le 15 ] && pass "unreachable head: over within the bootstrap timeout" || fail "unreachable head: took $((SECONDS - start))s"
no_leftovers "unreachable head"

[ "$shm_before" = "$(ls -a /dev/shm)" ] && pass "/dev/shm unchanged" || fail "/dev/shm changed"
finish
