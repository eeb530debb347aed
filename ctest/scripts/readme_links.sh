#!/usr/bin/env bash
# The README's links stay inside the repository (issue 21 item 8): every relative Markdown link
# and every `path/...` it names in backquotes under a top-level directory of the repository
# exists, and nothing points at a machine's own files (/work/..., /home/..., file://).
source "$(dirname "$0")/../programs/common.sh"
REPO=$(cd "$PROGRAMS/../.." && pwd)
README=$REPO/README.md
[ -f "$README" ] || { fail "no README.md in $REPO"; finish; }

# Markdown links [text](target): web addresses aside, each target a path in the repository.
links=$(grep -oE '\]\([^)]+\)' "$README" | sed 's/^](//; s/)$//; s/#.*//' | grep -vE '^(https?|mailto):' | sort -u)
bad=0
for l in $links; do [ -e "$REPO/$l" ] || { echo "README links $l, which is not in the repository"; bad=$((bad + 1)); }; done
[ $bad -eq 0 ] && pass "all $(wc -w <<<"$links") relative links resolve in the repository" || fail "$bad link(s) lead nowhere"

# Paths in backquotes under the repository's own top-level directories (`ctest/cuda/rma.cu`).
tops=$(cd "$REPO" && git ls-files 2>/dev/null | cut -d/ -f1 | sort -u | grep -v '\.' | paste -sd'|')
[ -n "$tops" ] || tops="src|include|device|ctest|scripts|docs|results|perftest|cmake|tests|pkgconfig"
paths=$(grep -oE "\`($tops)/[^\` ]*\`" "$README" | tr -d '\`' | sed 's/[:,.;]*$//' | grep -v '[<*{]' | sort -u)
bad=0
for p in $paths; do [ -e "$REPO/$p" ] || { echo "README names $p, which is not in the repository"; bad=$((bad + 1)); }; done
[ $bad -eq 0 ] && pass "all $(wc -w <<<"$paths") repository paths the README names exist" || fail "$bad path(s) do not exist"

outside=$(grep -nE '\]\((/|file:)|(^|[ `(])/(work|home|root|tmp)/' "$README")
[ -z "$outside" ] && pass "no link to a machine's own files" || { fail "links outside the repository:"; echo "$outside"; }
finish
