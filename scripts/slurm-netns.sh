#!/usr/bin/env bash
# A throw-away Slurm cluster on this machine, for trying rshmem under `srun`: slurmctld plus one
# slurmd per node, every node a namespaced host of scripts/netns-hosts.sh (its own network and
# host name, nothing shared but the kernel), so tasks on different nodes really are on different
# hosts for rshmem (no shared memory between them; libfabric tcp and the TCP rendezvous).
# munged, the munge key, slurm.conf, the spool directories and the logs live in one temporary
# directory; `down` stops every daemon and removes it all.
#
#   scripts/slurm-netns.sh install      apt-get install slurmctld slurmd slurm-client munge
#   scripts/slurm-netns.sh up [N]       start the cluster: nodes PREFIX-h1..N (default 2) and a
#                                       login host PREFIX-h(N+1) that runs slurmctld; waits
#                                       until every node is idle (restarts a running cluster)
#   scripts/slurm-netns.sh exec CMD...  run CMD on the login host with SLURM_CONF set (srun...)
#   scripts/slurm-netns.sh node K CMD...  run CMD on node K (its network, its host name)
#   scripts/slurm-netns.sh logs         print the daemons' logs (to see why a job failed)
#   scripts/slurm-netns.sh down         stop everything, remove the hosts and the directory
#
# RSHMEM_NETNS_PREFIX (default "slurm") names the set of hosts; RSHMEM_SLURM_CPUS (default 2)
# is each node's CPU count (jobs with more tasks than CPUs need `srun --overcommit`).
# Needs root (network namespaces; the daemons run as root). Safe to re-run.
set -euo pipefail

export RSHMEM_NETNS_PREFIX="${RSHMEM_NETNS_PREFIX:-slurm}"
prefix=$RSHMEM_NETNS_PREFIX
netns="$(cd "$(dirname "$0")" && pwd)/netns-hosts.sh"
# Where the current cluster's directory is recorded (so `down` finds it).
pointer="/run/${prefix}-slurm.dir"
cpus="${RSHMEM_SLURM_CPUS:-2}"

die() { echo "slurm-netns: $*" >&2; exit 1; }
need_root() { [ "$(id -u)" -eq 0 ] || die "needs root (network namespaces, Slurm daemons); run it as root or under sudo"; }
need_tools() {
  local t missing=()
  for t in slurmctld slurmd srun sinfo munged; do command -v "$t" >/dev/null || missing+=("$t"); done
  [ ${#missing[@]} -eq 0 ] || die "${missing[*]} not installed: run '$0 install' (Debian: slurmctld slurmd slurm-client munge)"
}
dir() { [ -f "$pointer" ] && cat "$pointer"; }
# The number of nodes of the running cluster (the login host is one more).
nodes() { sed -n 's/^# nodes=//p' "$(dir)/slurm.conf"; }
login() { echo $(( $(nodes) + 1 )); }
on_host() { local k=$1; shift; "$netns" exec "$k" env -u RSHMEM_NETNS_PREFIX SLURM_CONF="$(dir)/slurm.conf" "$@"; }

# pid_alive FILE: the pid in FILE runs.
pid_alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

write_conf() {
  local d=$1 n=$2 k ctl
  ctl=$((n + 1))
  {
    echo "# A throw-away cluster made by scripts/slurm-netns.sh (removed by its 'down')."
    echo "# nodes=$n"
    echo "ClusterName=rshmem"
    echo "SlurmctldHost=${prefix}-h${ctl}($("$netns" addr "$ctl"))"
    echo "SlurmUser=root"
    echo "SlurmdUser=root"
    echo "AuthType=auth/munge"
    echo "CredType=cred/munge"
    echo "AuthInfo=socket=$d/munge.socket"
    echo "StateSaveLocation=$d/ctld"
    echo "SlurmdSpoolDir=$d/spool.%n"
    # Each node's own temporary directory: the pmix plugin puts its per-job directory there,
    # which on one machine would clash between nodes in a shared /tmp.
    echo "TmpFS=$d/tmp.%n"
    echo "SlurmctldPidFile=$d/slurmctld.pid"
    echo "SlurmdPidFile=$d/slurmd.%n.pid"
    echo "SlurmctldLogFile=$d/slurmctld.log"
    echo "SlurmdLogFile=$d/slurmd.%n.log"
    echo "SlurmctldDebug=info"
    echo "SlurmdDebug=info"
    # No cgroups: plain process tracking, no task binding (the namespaces are the isolation).
    echo "ProctrackType=proctrack/linuxproc"
    echo "TaskPlugin=task/none"
    echo "JobAcctGatherType=jobacct_gather/none"
    echo "AccountingStorageType=accounting_storage/none"
    echo "SchedulerType=sched/builtin"
    echo "SelectType=select/cons_tres"
    echo "SelectTypeParameters=CR_CPU"
    echo "MpiDefault=none"
    echo "ReturnToService=2"
    echo "KillWait=5"
    echo "MessageTimeout=20"
    for k in $(seq 1 "$n"); do
      echo "NodeName=${prefix}-h$k NodeAddr=$("$netns" addr "$k") CPUs=$cpus State=UNKNOWN"
    done
    echo "PartitionName=all Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES"
  } >"$d/slurm.conf"
}

up() {
  local n=$1 d k deadline idle
  [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le 16 ] || die "node count '$n' must be 1..16"
  need_root
  need_tools
  down >/dev/null 2>&1 || true
  "$netns" up $((n + 1))
  d=$(mktemp -d /tmp/rshmem-slurm.XXXXXX)
  echo "$d" >"$pointer"
  mkdir -p "$d/ctld"
  # munge: a fresh key, its own socket (no system munged is touched).
  head -c 1024 /dev/urandom >"$d/munge.key"
  chmod 400 "$d/munge.key"
  munged --force --socket="$d/munge.socket" --key-file="$d/munge.key" --pid-file="$d/munged.pid" \
    --log-file="$d/munged.log" --seed-file="$d/munged.seed" || die "munged did not start: $(tail -3 "$d/munged.log" 2>/dev/null)"
  write_conf "$d" "$n"
  on_host $((n + 1)) slurmctld -c -f "$d/slurm.conf" || die "slurmctld did not start: $(tail -5 "$d/slurmctld.log" 2>/dev/null)"
  for k in $(seq 1 "$n"); do
    mkdir -p "$d/spool.${prefix}-h$k" "$d/tmp.${prefix}-h$k"
    on_host "$k" slurmd -N "${prefix}-h$k" -f "$d/slurm.conf" \
      || die "slurmd on node $k did not start: $(tail -5 "$d/slurmd.${prefix}-h$k.log" 2>/dev/null)"
  done
  deadline=$((SECONDS + 60))
  while :; do
    idle=$(on_host $((n + 1)) sinfo -h -N -t idle -o '%N' 2>/dev/null | sort -u | wc -l)
    [ "$idle" -eq "$n" ] && break
    if [ $SECONDS -ge $deadline ]; then
      on_host $((n + 1)) sinfo -N -l >&2 || true
      die "only $idle of $n nodes became idle within 60 s; see '$0 logs'"
    fi
    sleep 0.2
  done
  echo "slurm-netns: $n nodes (${prefix}-h1..$n, $cpus CPUs each) idle; run jobs with: $0 exec srun ..."
}

down() {
  local d
  need_root
  d=$(dir || true)
  if [ -n "$d" ] && [ -d "$d" ]; then
    # Stop the daemons by their pid files and wait (bounded) until they have written their
    # last state, so that the directory can go; the hosts' down kills anything left in them.
    local f deadline=$((SECONDS + 10))
    for f in "$d"/*.pid; do pid_alive "$f" && { kill "$(cat "$f")" 2>/dev/null || true; }; done
    while [ $SECONDS -lt $deadline ]; do
      for f in "$d"/*.pid; do pid_alive "$f" && break; done
      pid_alive "$f" || break
      sleep 0.1
    done
    "$netns" down
    case "$d" in /tmp/rshmem-slurm.*) rm -rf "$d" ;; esac
  else
    "$netns" down
  fi
  rm -f "$pointer"
}

case "${1:-}" in
  install)
    need_root
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends slurmctld slurmd slurm-client munge >/dev/null
    ;;
  up) up "${2:-2}" ;;
  exec)
    shift
    [ $# -gt 0 ] || die "exec: no command"
    [ -n "$(dir || true)" ] || die "no cluster is up (run: $0 up)"
    on_host "$(login)" "$@"
    ;;
  node)
    k="${2:-}"; shift 2 || true
    [ -n "$(dir || true)" ] || die "no cluster is up (run: $0 up)"
    [[ "$k" =~ ^[0-9]+$ ]] && [ "$k" -ge 1 ] && [ "$k" -le "$(nodes)" ] || die "node '$k' must be 1..$(nodes)"
    on_host "$k" "$@"
    ;;
  logs)
    d=$(dir || true)
    [ -n "$d" ] || die "no cluster is up"
    for f in "$d"/*.log; do echo "=== $f"; tail -n 40 "$f"; done
    ;;
  down) down ;;
  *)
    sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
