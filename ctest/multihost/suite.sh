#!/usr/bin/env bash
# The C test suite with its PEs spread over namespaced hosts (scripts/netns-hosts.sh), started
# by rshmemrun --hosts with ctest/multihost/netns-agent.sh as the launch agent. ctest/
# CMakeLists.txt registers one CTest test per program, PE count and host count; the hosts are
# a CTest fixture made once for all of them.
#   suite.sh up PREFIX       creates hosts PREFIX-h1..3 (fixture setup)
#   suite.sh down PREFIX     removes them (fixture cleanup)
#   suite.sh run PREFIX HOSTS NP RSHMEMRUN PROG [EXPECT]
#       runs PROG with NP PEs spread evenly over hosts 1..HOSTS (the head in host 1). Without
#       EXPECT it must exit 0; with EXPECT (an errors/ test) it must fail within 30 s with
#       stderr matching that extended regex. A program listed in pending.txt (a routine it
#       needs does not reach other hosts yet) must instead fail with the named refusal
#       "not wired to the network transport yet", never pass silently, hang or crash; once it
#       passes, the listing fails the test until it is removed. A listing whose reason starts
#       with "DEFECT:" is a defect found here and not fixed yet: its outcome is printed only.
#       A run still going 20 s before its limit (90 s, MULTIHOST_LIMIT) prints where every
#       process of the hosts is (threads, wait channels, and with gdb the PEs' stacks).
set -u
here=$(cd "$(dirname "$0")" && pwd)
netns=$here/../../scripts/netns-hosts.sh
cmd=${1:?usage: suite.sh up|down|run PREFIX ...}
export RSHMEM_NETNS_PREFIX=${2:?usage: suite.sh $cmd PREFIX ...}
if [ "$(id -u)" -ne 0 ] || ! command -v nsenter >/dev/null || ! ip netns list >/dev/null 2>&1; then
    echo "FAIL: needs root, ip netns and nsenter (network namespaces play the hosts; CI runs as root)"
    exit 1
fi
case $cmd in
    up) "$netns" down >/dev/null 2>&1; exec "$netns" up 3 ;;
    down) exec "$netns" down ;;
    run) ;;
    *) echo "suite.sh: unknown command $cmd" >&2; exit 2 ;;
esac
hosts=$3 np=$4 run=$5 prog=$6 expect=${7-}
name=$(basename "$prog"); name=${name#err_}

# NP PEs over HOSTS hosts: the first NP % HOSTS hosts get one more.
spec=
for k in $(seq 1 "$hosts"); do
    n=$((np / hosts + (k <= np % hosts)))
    [ "$n" -gt 0 ] && spec="$spec${spec:+,}$RSHMEM_NETNS_PREFIX-h$k:$n"
done
limit=${MULTIHOST_LIMIT:-90}  # (a shorter one to try the hang report)
[ -n "$expect" ] && limit=30
# where_all: every process in the hosts with each thread's state and kernel wait channel, then
# (with gdb, all at once) the stacks of the PEs: printed when a job nears the limit, so a rare
# hang is diagnosed from the log alone.
where_all() {
    local k p t pes=()
    for k in $(seq 1 "$hosts"); do
        for p in $(ip netns pids "$RSHMEM_NETNS_PREFIX-h$k" 2>/dev/null); do
            echo "host $k pid $p: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-160)"
            for t in /proc/"$p"/task/*; do
                echo "  thread ${t##*/} $(cut -d' ' -f3 "$t/stat" 2>/dev/null) $(cat "$t/comm" 2>/dev/null) in $(cat "$t/wchan" 2>/dev/null)"
            done
            grep -q librshmem "/proc/$p/maps" 2>/dev/null && pes+=("$p")
        done
    done
    command -v gdb >/dev/null || { echo "(no gdb here: no stacks)"; return; }
    for p in "${pes[@]}"; do
        timeout 15 gdb -p "$p" -batch -nx -ex "thread apply all bt 16" >"$diag.$p" 2>/dev/null &
    done
    wait
    for p in "${pes[@]}"; do echo "stacks of pid $p:"; grep -E "^(Thread|#)" "$diag.$p"; rm -f "$diag.$p"; done
}
diag=$(mktemp)
start=$SECONDS
# (Its output goes only to the file: a stray sleep holding CTest's pipe would delay the test.)
(
    exec >/dev/null 2>&1
    for _ in $(seq $((limit - 20))); do sleep 1; done
    { echo "=== still running after $((limit - 20)) s: where every process is"; where_all; } >"$diag"
) &
watcher=$!
out=$("$netns" exec 1 env -u RSHMEM_NETNS_PREFIX RSHMEM_LAUNCH_AGENT="$here/netns-agent.sh" \
    timeout "$limit" "$run" --hosts "$spec" "$prog" 2>&1); rc=$?
kill "$watcher" 2>/dev/null; wait "$watcher" 2>/dev/null
echo "--- $name, $np PEs on hosts $spec: exit $rc after $((SECONDS - start)) s"
echo "$out"
cat "$diag"; rm -f "$diag"

layout=${name}_np${np}_${hosts}hosts
reason=$(awk -v n="$name" -v l="$layout" '!/^#/ && ($1 == n || $1 == l) { $1 = ""; sub(/^ +/, ""); print; exit }' "$here/pending.txt")
if [[ $reason == DEFECT:* ]]; then
    # A defect this suite found and nobody has fixed yet: the outcome is shown, not judged.
    [ $rc -eq 0 ] && got="passed" || got="failed (exit $rc)"
    echo "KNOWN DEFECT, $got this time: $layout: ${reason#DEFECT: }"; exit 0
fi
if [ -n "$reason" ]; then
    if [ $rc -eq 0 ]; then
        echo "FAIL: $layout now passes across hosts: take it out of ctest/multihost/pending.txt"; exit 1
    fi
    if [ $rc -ne 124 ] && grep -q "is not wired to the network transport yet" <<<"$out"; then
        echo "PENDING: $name: $reason (it failed with the named refusal, as it must until then)"; exit 0
    fi
    echo "FAIL: $name is listed as pending ($reason) but failed otherwise (exit $rc)"; exit 1
fi
if [ $rc -eq 124 ]; then echo "FAIL: hung (killed after $limit s)"; exit 1; fi
if [ -z "$expect" ]; then
    [ $rc -eq 0 ] || { echo "FAIL: exit $rc"; exit 1; }
else
    [ $rc -ne 0 ] || { echo "FAIL: expected a failure, but it succeeded"; exit 1; }
    grep -Eq -- "$expect" <<<"$out" || { echo "FAIL: exit $rc, but the output does not match /$expect/"; exit 1; }
    echo "failed as expected: $(grep -E -m1 -- "$expect" <<<"$out")"
fi
echo "ok"
