# Sourced by ctest/scripts/multihost_*.sh after programs/common.sh: namespaced test hosts.
# hosts_up PREFIX N   creates hosts PREFIX-h1..N (scripts/netns-hosts.sh), removed at exit
# left_in_hosts       how many processes run in them (after a job: none)
# no_leftovers LABEL  waits up to 10 s for that to be 0, then passes or fails LABEL
# on_host K CMD...    runs CMD in host K
# mpi_launchers       LAUNCH[hydra], LAUNCH[openmpi]: 4 PEs on hosts 1-2 (after hosts_up)
# Gives NETNS (the script) and AGENT (netns-agent.sh, the launch agent for every launcher).
ROOT=$(cd "$PROGRAMS/../.." && pwd)
NETNS=$ROOT/scripts/netns-hosts.sh
AGENT=$ROOT/ctest/multihost/netns-agent.sh
if [ "$(id -u)" -ne 0 ] || ! command -v nsenter >/dev/null || ! ip netns list >/dev/null 2>&1; then
    echo "FAIL: needs root, ip netns and nsenter (network namespaces play the hosts; CI runs as root)"
    exit 1
fi
HOSTS_PREFIX=
HOSTS_N=0
hosts_up() {
    HOSTS_PREFIX=$1 HOSTS_N=$2
    trap 'RSHMEM_NETNS_PREFIX=$HOSTS_PREFIX "$NETNS" down >/dev/null 2>&1' EXIT
    RSHMEM_NETNS_PREFIX=$1 "$NETNS" up "$2" || { echo "FAIL: cannot create the namespaced hosts"; exit 1; }
}
# on_host K CMD...: runs CMD in host K (netns-hosts.sh's prefix stays out of its environment).
on_host() {
    local k=$1; shift
    RSHMEM_NETNS_PREFIX=$HOSTS_PREFIX "$NETNS" exec "$k" env -u RSHMEM_NETNS_PREFIX "$@"
}
left_in_hosts() {
    local k n=0
    for k in $(seq 1 "$HOSTS_N"); do n=$((n + $(ip netns pids "$HOSTS_PREFIX-h$k" | wc -l))); done
    echo $n
}
no_leftovers() {
    local k deadline=$((SECONDS + 10))
    while [ "$(left_in_hosts)" -ne 0 ] && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
    if [ "$(left_in_hosts)" -eq 0 ]; then
        pass "$1: no process is left in any host"
    else
        fail "$1: processes left in the hosts"
        for k in $(seq 1 "$HOSTS_N"); do ps -o pid,args --no-headers $(ip netns pids "$HOSTS_PREFIX-h$k") 2>/dev/null; done
    fi
}

# The MPI launchers across hosts 1 and 2 (2 PEs each), both with the agent as their ssh.
declare -A LAUNCH
mpi_launchers() {
    local hydra ompi
    hydra=$(command -v mpiexec.hydra) || { echo "FAIL: mpiexec.hydra is not installed (apt-get install mpich)"; exit 1; }
    ompi=$(command -v mpirun.openmpi) || { echo "FAIL: mpirun.openmpi is not installed (apt-get install openmpi-bin)"; exit 1; }
    local hosts=$HOSTS_PREFIX-h1:2,$HOSTS_PREFIX-h2:2
    LAUNCH[hydra]="$hydra -launcher ssh -launcher-exec $AGENT -iface eth0 -hosts $hosts -n 4"
    LAUNCH[openmpi]="$ompi --allow-run-as-root --mca plm_rsh_agent $AGENT --mca oob_tcp_if_include eth0 --mca btl_tcp_if_include eth0 -H $hosts -n 4"
}
