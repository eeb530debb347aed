#!/usr/bin/env bash
# A stranger host against the head launcher's own TCP ports (rshmemrun --hosts: the job's star
# rendezvous and the per-host launchers' control socket), while the job starts: the PEs'
# own ports are multihost_stranger.sh's. The launch agent holds every host's start until a
# third host (multihost/head_stranger.py) has, on each of the head's ports: sent 64 KiB of
# garbage; opened a silent connection; sent a 4 GiB length prefix and gone silent; sent a
# valid-looking hello and stalled before its proof; and, in the last job, held 200 more silent
# connections (more than the star admits at once). Three jobs: as root, as the user nobody
# (runuser), and root with the flood (before the fix in src/bootstrap/star.rs the star then
# refused the job's own PEs: "128 handshakes are already in progress"). Each job of 2 PEs on 2 hosts must finish with status 0
# and every PE's report, within 30 s; the stranger must get nothing but the stalled
# handshake's 72-byte reply; the head's INFO log must name the refused garbage by address.
source "$(dirname "$0")/../programs/common.sh"
source "$(dirname "$0")/../multihost/hosts.sh"
command -v runuser >/dev/null || { echo "FAIL: runuser (util-linux) is not installed"; exit 1; }
PY=$(command -v /usr/bin/python3 || command -v python3) || { echo "FAIL: python3 is needed"; exit 1; }
hosts_up rhs 3
build hosts_check

# A directory the user nobody can read (the attacker's script and its reports).
SEC=$(mktemp -d /tmp/rshmem-head-stranger.XXXXXX) || exit 1
trap 'rm -rf "$SEC"; RSHMEM_NETNS_PREFIX=rhs "$NETNS" down >/dev/null 2>&1' EXIT
chmod 755 "$SEC" && mkdir -m 1777 "$SEC/r"
cp "$ROOT/ctest/multihost/head_stranger.py" "$SEC/" && chmod 755 "$SEC/head_stranger.py"

# The agent waits (up to 20 s) for $SEC/r/go before it starts a host's launcher: the head
# listens all that time, and the stranger attacks it before any PE has joined.
cat >"$WORK/held_agent.sh" <<EOF
#!/bin/sh
i=0
while [ ! -e "$SEC/r/go" ] && [ \$i -lt 200 ]; do sleep 0.1; i=\$((i + 1)); done
exec "$AGENT" "\$@"
EOF
chmod 755 "$WORK/held_agent.sh"

# head_ports: the TCP ports the head rshmemrun listens on in host 1 (comma-separated).
head_ports() {
    ip netns exec rhs-h1 ss -Hltnp | grep '"rshmemrun"' | awk '{print $4}' | sed 's/.*://' | sort -u | paste -sd,
}

# attacked_job LABEL FLOOD [RUNUSER...]: one job under attack; outputs in $WORK/LABEL.*
attacked_job() {
    local label=$1 flood=$2; shift 2
    local dir=$WORK/$label ports rep=$SEC/r/$label
    mkdir -p "$dir" && rm -f "$SEC/r/go" "$SEC/r/stop"
    local start=$SECONDS
    on_host 1 timeout 90 env RSHMEM_DEBUG=INFO RSHMEM_LAUNCH_AGENT="$WORK/held_agent.sh" "$RUN" \
        --hosts rhs-h1:1,rhs-h2:1 "$WORK/hosts_check" report "$dir" >"$dir/out" 2>"$dir/err" &
    local job=$!
    local deadline=$((SECONDS + 15))
    while ports=$(head_ports); [ "$(tr ',' '\n' <<<"$ports" | grep -c .)" -lt 2 ] && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
    echo "--- $label: the head listens on $ports"
    [ -n "$ports" ] || fail "$label: the head listens on no TCP port"
    on_host 3 "$@" "$PY" "$SEC/head_stranger.py" 10.77.0.1 "$ports" "$SEC/r/stop" "$rep" "$flood" &
    local stranger=$!
    deadline=$((SECONDS + 20))
    while [ ! -e "$rep.ready" ] && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
    echo "--- $label: the stranger holds $(cat "$rep.ready" 2>/dev/null || echo no) connections; the PEs start"
    touch "$SEC/r/go"
    wait $job; local rc=$?
    local took=$((SECONDS - start))
    touch "$SEC/r/stop"
    wait $stranger
    echo "--- $label: exit $rc after $took s"; cat "$dir/out"; grep -v "^\[rshmem" "$dir/err" | tail -5
    grep "refused" "$dir/err" | sed 's/^/    /' | sort | uniq -c | sort -rn | head -8
    echo "--- $label: the stranger's report"; sed 's/^/    /' "$rep"
    [ $rc -eq 0 ] && [ "$(grep -c ": ok$" "$dir/out")" -eq 2 ] \
        && pass "$label: the job finished with status 0 and both PEs' reports" \
        || fail "$label: exit $rc, $(grep -c ": ok$" "$dir/out") of 2 PEs reported"
    [ $took -le 30 ] && pass "$label: over in $took s" || fail "$label: took $took s"
    grep -q "^done" "$rep" || fail "$label: the stranger did not finish its report"
    # Nothing comes back but the stalled hello's reply (72 bytes: the server's nonce and proof).
    awk '$3 == "sent" && ($6 > 72 || ($1 != "stall" && $6 > 0)) { bad = 1; print "    got: " $0 } END { exit bad }' "$rep" \
        && pass "$label: the stranger got nothing but the handshake's reply" || fail "$label: the stranger got bytes back"
    grep -q "refused a TCP connection from 10.77.0.3:[0-9]*: not an rshmem handshake" "$dir/err" \
        && pass "$label: the star's refusal of the garbage names the stranger's address" \
        || fail "$label: no INFO line names the star's refusal of 10.77.0.3"
    grep -q "refused a control connection from 10.77.0.3:[0-9]*: not an rshmem handshake" "$dir/err" \
        && pass "$label: the control socket's refusal of the garbage names the stranger's address" \
        || fail "$label: no INFO line names the control socket's refusal of 10.77.0.3"
    if [ "$flood" -gt 0 ]; then
        grep -q "dropped the unfinished handshake of a TCP connection from 10.77.0.3:[0-9]* to admit a newer connection" "$dir/err" \
            && pass "$label: the star dropped the oldest silent connections for newer ones, and says so" \
            || fail "$label: no INFO line says the star dropped a silent connection"
    fi
    no_leftovers "$label"
}

attacked_job root 0
attacked_job nobody 0 runuser -u nobody --
attacked_job flood 200
finish
