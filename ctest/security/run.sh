#!/usr/bin/env bash
# The security suite (issue 17 §5): strangers attack running jobs on every start-up path.
#   rshmemrun, MPICH hydra (PMI-1), Open MPI mpirun (PMIx), unique-id start (no launcher)
# For each, two attackers (attacker.py) start before the job and attack every rendezvous it
# makes, at start-up, mid-job and between its two sessions: one runs as a second user (made
# here, idempotently: CI runs as root), one as the job's own user but without its secret. The
# job must finish correctly every time (it checks its own results), no attacker may receive
# anything but a refusal (no descriptor, no byte of a PE's data, never the victim's secret
# global), and the job's INFO log must name the refused strangers by uid.
# usage: run.sh PREFIX BUILD_DIR
set -u
PREFIX=${1:?usage: $0 PREFIX BUILD_DIR}
HERE=$(cd "$(dirname "$0")" && pwd)
RUN=$PREFIX/bin/rshmemrun
FAILURES=0
pass() { echo "ok:   $*"; }
fail() { echo "FAIL: $*"; FAILURES=$((FAILURES + 1)); }

# A directory every user can traverse (the attackers read their script from it); its path is
# the tag by which attackers find the victims' processes.
SEC=$(mktemp -d /tmp/rshmem-security.XXXXXX) || exit 1
trap 'rm -rf "$SEC"' EXIT
chmod 755 "$SEC"
mkdir -m 1777 "$SEC/reports"
cp "$HERE/attacker.py" "$HERE/wrap_recorded.sh" "$HERE/late_ranks.sh" "$SEC/"
chmod 755 "$SEC/attacker.py" "$SEC/wrap_recorded.sh" "$SEC/late_ranks.sh"

flags=$(PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig pkg-config --cflags --libs rshmem) || { echo "pkg-config cannot find rshmem under $PREFIX"; exit 1; }
for prog in victim victim_uid; do
    # shellcheck disable=SC2086
    gcc -std=gnu11 -O1 -Wall -o "$SEC/$prog" "$HERE/$prog.c" $flags -Wl,-rpath,"$PREFIX/lib" || { echo "cannot compile $prog.c"; exit 1; }
done

STRANGER=rshmem-stranger
if [ "$(id -u)" = 0 ]; then
    id -u "$STRANGER" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$STRANGER" \
        || { echo "cannot create the user $STRANGER"; exit 1; }
    SUID=$(id -u "$STRANGER") SGID=$(id -g "$STRANGER")
    as_stranger() { setpriv --reuid="$SUID" --regid="$SGID" --clear-groups "$@"; }
else
    echo "note: not root, so no second user: only the same-user attacker runs"
    SUID=""
fi
ME=$(id -u)
# The system's Python (a per-user one, e.g. pyenv's, may be unreadable to the second user).
PY=$(command -v /usr/bin/python3 || command -v python3) || { echo "python3 is needed"; exit 1; }
NPES=3
ROUNDS=2
PAUSE_MS=700

# start_attackers NAME: both attackers on every rendezvous of processes tagged with $SEC.
start_attackers() {
    local name=$1
    rm -f "$SEC/stop.$name"
    ATTACKERS=()
    local who
    for who in stranger same-user; do
        [ "$who" = stranger ] && [ -z "$SUID" ] && continue
        local cmd=("$PY" "$SEC/attacker.py" attack --tag "$SEC/victim" --npes $NPES --until "$SEC/stop.$name"
                   --report "$SEC/reports/$name.$who" --replay "$SEC/recorded")
        if [ "$who" = stranger ]; then as_stranger "${cmd[@]}" & else "${cmd[@]}" & fi
        ATTACKERS+=($!)
    done
    sleep 0.3 # they are scanning before the job starts: the start-up race is part of the test
}

# finish_attackers NAME OUTPUT: stops them, checks their reports, and that
# the job's INFO log names the refused strangers. Under hydra and mpirun the ranks other than 0
# start late (late_ranks.sh), so the attackers meet rank 0's rendezvous while it waits: without
# that delay a stranger may arrive only after every PE joined and find nothing left to refuse.
finish_attackers() {
    local name=$1 out=$2 who report last
    touch "$SEC/stop.$name"
    for pid in "${ATTACKERS[@]}"; do wait "$pid"; done
    for who in stranger same-user; do
        [ "$who" = stranger ] && [ -z "$SUID" ] && continue
        report=$SEC/reports/$name.$who
        last=$(tail -1 "$report" 2>/dev/null)
        if grep -q "^FAIL" "$report" 2>/dev/null; then
            fail "$name: the $who attacker got something:"; grep "^FAIL" "$report" | sort | uniq -c | head -20
        elif [[ "$last" =~ ^attacked\ ([0-9]+)\ rendezvous\ with\ ([0-9]+)\ connections,\ 0\ failures$ ]] && [ "${BASH_REMATCH[1]}" -ge 1 ]; then
            pass "$name: the $who attacker got nothing ($last)"
        else
            fail "$name: the $who attacker did not attack ($last)"
        fi
    done
    if [ -n "$SUID" ]; then
        grep -q "refused a connection from uid $SUID (pid [0-9]*): another user" <<<"$out" \
            && pass "$name: the other user was refused by uid, and the log says so" \
            || fail "$name: no INFO line refusing uid $SUID"
    fi
    grep -qE "refused a connection from uid $ME \(pid [0-9]+\): (wrong proof|not an rshmem handshake|no complete|the connection closed)" <<<"$out" \
        && pass "$name: the same-user stranger without the secret was refused, and the log says why" \
        || fail "$name: no INFO line refusing the same-user stranger"
}

# check_victim NAME RC OUTPUT WANT: exit 0 and WANT "victim ok" lines.
check_victim() {
    local name=$1 rc=$2 out=$3 want=$4 ok
    ok=$(grep -c "^victim ok" <<<"$out")
    if [ "$rc" -eq 0 ] && [ "$ok" -eq "$want" ]; then
        pass "$name: the job finished correctly under attack ($ok PEs checked their results)"
    else
        fail "$name: exit $rc, $ok of $want PEs ok"; grep -v "refused a connection" <<<"$out" | head -30
    fi
}

# 1. rshmemrun (its PE 1 through a recording proxy: that recording is what the others replay).
start_attackers rshmemrun
out=$(RSHMEM_DEBUG=INFO timeout 120 "$RUN" -n $NPES "$SEC/wrap_recorded.sh" "$SEC/attacker.py" "$SEC/recorded" \
      "$SEC/victim" $ROUNDS $PAUSE_MS 2>&1); rc=$?
finish_attackers rshmemrun "$out"
check_victim rshmemrun $rc "$out" $NPES
[ -s "$SEC/recorded" ] && pass "a real PE's bytes were recorded for replay ($(stat -c %s "$SEC/recorded") bytes)" \
    || fail "nothing was recorded from the real PE"

# 2. MPICH hydra (PMI-1).
if HYDRA=$(command -v mpiexec.hydra); then
    start_attackers hydra
    out=$(RSHMEM_DEBUG=INFO timeout 120 "$HYDRA" -n $NPES "$SEC/late_ranks.sh" "$SEC/victim" $ROUNDS $PAUSE_MS 2>&1); rc=$?
    finish_attackers hydra "$out"
    check_victim hydra $rc "$out" $NPES
else
    fail "mpiexec.hydra is not installed (Debian: mpich)"
fi

# 3. Open MPI (PMIx).
MPIRUN=$(command -v mpirun.openmpi || command -v mpirun)
if [ -n "$MPIRUN" ] && "$MPIRUN" --version 2>&1 | grep -qE "Open MPI|OpenRTE"; then
    start_attackers openmpi
    out=$(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 120 "$MPIRUN" --oversubscribe -np $NPES \
          -x RSHMEM_DEBUG=INFO "$SEC/late_ranks.sh" "$SEC/victim" $ROUNDS $PAUSE_MS 2>&1); rc=$?
    finish_attackers openmpi "$out"
    check_victim openmpi $rc "$out" $NPES
else
    fail "Open MPI's mpirun is not installed (Debian: openmpi-bin)"
fi

# 4. Unique-id start: the script starts the ranks; rank 0's id goes through a 0600 file. The
# others come a second later, so the attacks meet rank 0's rendezvous while it waits for them.
start_attackers uniqueid
pids=()
for ((r = 0; r < NPES; r++)); do
    RSHMEM_DEBUG=INFO RSHMEM_BOOTSTRAP_TIMEOUT=30 timeout 120 "$SEC/victim_uid" $r $NPES "$SEC/id" >"$SEC/uid.$r" 2>&1 &
    pids+=($!)
    [ $r -eq 0 ] && sleep 1.5
done
rc=0
for pid in "${pids[@]}"; do wait "$pid" || rc=$?; done
out=$(cat "$SEC"/uid.*)
finish_attackers uniqueid "$out"
check_victim uniqueid $rc "$out" $NPES
[ "$(stat -c %a "$SEC/id")" = 600 ] && pass "uniqueid: the id file is private (0600)" || fail "uniqueid: the id file is not 0600"

if [ "$FAILURES" -ne 0 ]; then echo "security: $FAILURES check(s) failed"; exit 1; fi
echo "security: all checks passed"
