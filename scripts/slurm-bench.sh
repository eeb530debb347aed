#!/usr/bin/env bash
# Start-up of a hello across 2 Slurm nodes (scripts/slurm-netns.sh's throw-away cluster),
# launcher by launcher, in one run: srun --mpi=pmi2 and --mpi=pmix with rshmem, rshmemrun
# --hosts across the same namespaced nodes (agent ctest/multihost/netns-agent.sh) and, where
# Open MPI's oshcc is installed, OSHMEM's own program under srun --mpi=pmix and under oshrun in
# a salloc allocation (Open MPI starts its daemons through srun; UCX over tcp).
# The program is ctest/slurm/ring_reduce.c in "time" mode: shmem_init, one barrier, finalize.
# For each launcher and PE count (2, 4, 8; half on each node, more PEs than CPUs overcommitted)
# it prints every run's time from the launch to PE 0 leaving the first barrier, the total wall
# time of the launch command and PE 0's shmem_init, then the medians.
#   scripts/slurm-bench.sh [RSHMEM_PREFIX [REPEATS]]   (default build/stage, 5; run as root)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
prefix=$(cd "${1:-$root/build/stage}" && pwd)
reps=${2:-5}
slurm=$root/scripts/slurm-netns.sh
export RSHMEM_NETNS_PREFIX=slbench
[ "$(id -u)" -eq 0 ] || { echo "slurm-bench: run as root (network namespaces, Slurm daemons)" >&2; exit 1; }

work=$(mktemp -d /tmp/rshmem-slurm-bench.XXXXXX)
trap '"$slurm" down >/dev/null 2>&1; rm -rf "$work"' EXIT
flags=$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs rshmem)
# shellcheck disable=SC2086
gcc -std=gnu11 -O2 -o "$work/hello" "$root/ctest/slurm/ring_reduce.c" $flags -Wl,-rpath,"$prefix/lib"
oshmem=
if command -v oshcc >/dev/null && oshcc --showme:version 2>/dev/null | grep -q "Open SHMEM"; then
    oshcc -O2 -w -o "$work/hello_oshmem" "$root/ctest/slurm/ring_reduce.c" && oshmem=$work/hello_oshmem
fi

t=$(date +%s%N)
"$slurm" up 2 >/dev/null
echo "# cluster up (2 nodes + login host, slurmctld, 2 slurmd, munged): $(( ($(date +%s%N) - t) / 1000000 )) ms"
echo "# $(date -Is) on $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $("$slurm" exec srun --version), rshmem $("$prefix/bin/rshmem-info" --version 2>/dev/null | head -1)${oshmem:+, $(oshcc --showme:version 2>/dev/null)}"
echo "# launcher            np  run  first_barrier_ms  total_ms  pe0_init_ms"

h=$RSHMEM_NETNS_PREFIX
agent=$root/ctest/multihost/netns-agent.sh
# Open MPI's OSHMEM across the namespaces: UCX over tcp on eth0 (as perftest/net/bench.sh).
ompi_env=(UCX_TLS=tcp,self UCX_NET_DEVICES=eth0 OMPI_MCA_spml=ucx OMPI_MCA_osc=^rdma OMPI_MCA_mpi_yield_when_idle=1
    OMPI_MCA_btl_tcp_if_include=eth0 OMPI_MCA_oob_tcp_if_include=eth0)
declare -A rows
# launch NAME NP START: one run (START: the launch time in ns, for the program).
launch() {
    local name=$1 np=$2 start=$3 per=$(($2 / 2))
    case $name in
        srun-pmi2) "$slurm" exec srun --mpi=pmi2 -O -N2 -n"$np" "$work/hello" time "$start" ;;
        srun-pmix) "$slurm" exec srun --mpi=pmix -O -N2 -n"$np" "$work/hello" time "$start" ;;
        rshmemrun-hosts) "$slurm" exec env RSHMEM_LAUNCH_AGENT="$agent" "$prefix/bin/rshmemrun" \
            --hosts "$h-h1:$per,$h-h2:$per" "$work/hello" time "$start" ;;
        oshmem-srun-pmix) "$slurm" exec env "${ompi_env[@]}" srun --mpi=pmix -O -N2 -n"$np" "$oshmem" time "$start" ;;
        oshmem-oshrun) "$slurm" exec env "${ompi_env[@]}" salloc -O -N2 -n"$np" oshrun --allow-run-as-root --oversubscribe \
            -np "$np" "$oshmem" time "$start" ;;
    esac 2>&1
}
launchers=(srun-pmi2 srun-pmix rshmemrun-hosts)
[ -n "$oshmem" ] && launchers+=(oshmem-srun-pmix oshmem-oshrun)
for np in 2 4 8; do
    for name in "${launchers[@]}"; do
        for r in $(seq 1 "$reps"); do
            start=$(date +%s%N)
            out=$(launch "$name" "$np" "$start")
            total=$(( ($(date +%s%N) - start) / 1000000 ))
            first=$(sed -n 's/^first barrier after \([0-9.]*\) ms.*/\1/p' <<<"$out")
            init=$(sed -n 's/.*(shmem_init \([0-9.]*\) ms).*/\1/p' <<<"$out")
            if [ -z "$first" ]; then
                echo "# $name np=$np run $r FAILED:"; sed 's/^/#   /' <<<"$out"; continue
            fi
            printf '%-20s %3d  %3d  %16s  %8d  %11s\n' "$name" "$np" "$r" "$first" "$total" "$init"
            rows[$name/$np]+="$first $total $init"$'\n'
        done
    done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# medians over $reps runs (ms):  launcher  np  first_barrier  total  pe0_init"
median() { sort -n | awk '{v[NR]=$1} END {if (NR) print (NR % 2 ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2); else print "-"}'; }
for np in 2 4 8; do
    for name in "${launchers[@]}"; do
        r=${rows[$name/$np]:-}
        printf '# %-20s %3d  %10s  %8s  %8s\n' "$name" "$np" \
            "$(awk 'NF {print $1}' <<<"$r" | median)" "$(awk 'NF {print $2}' <<<"$r" | median)" "$(awk 'NF {print $3}' <<<"$r" | median)"
    done
done
