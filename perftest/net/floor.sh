#!/usr/bin/env bash
# The TCP floor between two namespaced hosts (scripts/netns-hosts.sh): builds tcp_floor, runs
# its server in host 1 and its client in host 2, prints its CSV lines (the 8-byte round trip
# and one stream per write size; perftest/net/bench.sh sets them beside rshmem and OSHMEM).
# Needs root.
#   perftest/net/floor.sh [ITERS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
hosts="$here/../../scripts/netns-hosts.sh"
export RSHMEM_NETNS_PREFIX="${RSHMEM_NETNS_PREFIX:-rsflr}"
out=$(mktemp -d)
trap '"$hosts" down; rm -rf "$out"' EXIT
cc -O2 -Wall -Wextra -o "$out/tcp_floor" "$here/tcp_floor.c"
"$hosts" up 2
"$hosts" exec 1 "$out/tcp_floor" server 17717 &
server=$!
"$hosts" exec 2 "$out/tcp_floor" client "$("$hosts" addr 1)" 17717 "${1:-20000}"
wait "$server"
