#!/usr/bin/env bash
# A launch agent for rshmemrun --hosts (RSHMEM_LAUNCH_AGENT), hydra's -bootstrap-exec and Open
# MPI's plm_rsh_agent: runs a command "on" a namespaced test host made by scripts/netns-hosts.sh.
#   netns-agent.sh HOST COMMAND...   HOST is <prefix>-h<K> (the host name netns-hosts gives)
# Like ssh, it hands the command words to a shell, so quoted words keep their spaces, and the
# command runs as a child of the agent, not in its place: when the launcher that started the
# agent dies, the command is not killed with it (as over ssh) and must notice on its own.
# ssh options before the host (hydra passes -x; Open MPI may pass -o ...) are skipped.
set -eu
while [ $# -gt 0 ]; do
    case $1 in
        -[opliFJ]) shift 2 ;;
        -*) shift ;;
        *) break ;;
    esac
done
host=${1:?usage: netns-agent.sh [ssh options] HOST COMMAND...}; shift
k=${host##*-h}
[[ "$k" =~ ^[0-9]+$ ]] || { echo "netns-agent: $host is not a namespaced test host (<prefix>-h<K>)" >&2; exit 255; }
# The host name says which set of hosts (netns-hosts.sh's prefix); the command does not see it.
RSHMEM_NETNS_PREFIX=${host%-h*} exec "$(dirname "$0")/../../scripts/netns-hosts.sh" exec "$k" \
    env -u RSHMEM_NETNS_PREFIX sh -c "$*; exit \$?"
