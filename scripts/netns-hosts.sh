#!/usr/bin/env bash
# Namespaced test "hosts" on one machine: each host has its own network and UTS namespace (so
# its own interfaces, addresses and host name) and shares only the kernel with the others.
# Hosts are joined by veth pairs to a bridge that lives in a namespace of its own, so nothing in
# the machine's own network changes. Addresses: host k is 10.77.0.k/24 on its eth0 (only ever
# this private test range).
#
#   scripts/netns-hosts.sh up N             create hosts 1..N (keeps those that exist)
#   scripts/netns-hosts.sh exec K CMD...    run CMD in host K (its network, its host name)
#   scripts/netns-hosts.sh addr K           print host K's address
#   scripts/netns-hosts.sh list             the hosts that exist
#   scripts/netns-hosts.sh down             remove every host and the bridge
#
# RSHMEM_NETNS_PREFIX (default "rshmem") names the set, so two sets can coexist (each has its
# own bridge; their addresses never meet). Needs root (CI runs as root). Safe to re-run.
set -euo pipefail

prefix="${RSHMEM_NETNS_PREFIX:-rshmem}"
[[ "$prefix" =~ ^[a-z][a-z0-9]{0,7}$ ]] || { echo "netns-hosts: RSHMEM_NETNS_PREFIX must be 1-8 lowercase letters/digits" >&2; exit 2; }
switch="${prefix}-sw"
state="/run/${prefix}-hosts"
net=10.77.0

die() { echo "netns-hosts: $*" >&2; exit 1; }
need_root() { [ "$(id -u)" -eq 0 ] || die "needs root (network namespaces); run it as root or under sudo"; }
host_ns() { echo "${prefix}-h$1"; }
exists() { ip netns list | awk '{print $1}' | grep -qx "$1"; }
check_k() { [[ "$1" =~ ^[0-9]+$ ]] && [ "$1" -ge 1 ] && [ "$1" -le 200 ] || die "host number '$1' must be 1..200"; }

up_switch() {
  exists "$switch" || ip netns add "$switch"
  ip -n "$switch" link show br0 >/dev/null 2>&1 || ip -n "$switch" link add br0 type bridge
  ip -n "$switch" link set lo up
  ip -n "$switch" link set br0 up
}

up_host() {
  local k=$1 ns; ns=$(host_ns "$k")
  exists "$ns" || ip netns add "$ns"
  if ! ip -n "$ns" link show eth0 >/dev/null 2>&1; then
    # veth created in the host namespace; its peer moves to the switch and joins the bridge.
    ip -n "$ns" link add eth0 type veth peer name "h$k" netns "$switch"
  fi
  ip -n "$switch" link set "h$k" master br0
  ip -n "$switch" link set "h$k" up
  ip -n "$ns" addr replace "$net.$k/24" dev eth0
  ip -n "$ns" link set lo up
  ip -n "$ns" link set eth0 up
  # The host name lives in a UTS namespace kept open by a bind mount, like ip netns does.
  mkdir -p "$state"
  if ! mountpoint -q "$state/h$k.uts" 2>/dev/null; then
    touch "$state/h$k.uts"
    unshare --uts="$state/h$k.uts" hostname "$ns"
  fi
}

case "${1:-}" in
  up)
    need_root
    n="${2:-}"; check_k "$n"
    up_switch
    for k in $(seq 1 "$n"); do up_host "$k"; done
    ;;
  exec)
    k="${2:-}"; check_k "$k"; shift 2
    [ $# -gt 0 ] || die "exec: no command"
    exists "$(host_ns "$k")" || die "host $k does not exist (run: $0 up $k)"
    exec nsenter --net="/run/netns/$(host_ns "$k")" --uts="$state/h$k.uts" -- "$@"
    ;;
  addr)
    k="${2:-}"; check_k "$k"; echo "$net.$k"
    ;;
  list)
    ip netns list | awk '{print $1}' | grep -E "^${prefix}-h[0-9]+$" | sort -V || true
    ;;
  down)
    need_root
    for ns in $(ip netns list | awk '{print $1}' | grep -E "^${prefix}-h[0-9]+$" || true); do
      ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null || true
      ip netns del "$ns"
    done
    exists "$switch" && ip netns del "$switch"
    if [ -d "$state" ]; then
      for f in "$state"/*.uts; do
        [ -e "$f" ] || continue
        umount "$f" 2>/dev/null || true
        rm -f "$f"
      done
      rmdir "$state" 2>/dev/null || true
    fi
    ;;
  *)
    sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
