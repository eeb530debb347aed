#!/usr/bin/env bash
# Issue 22's "Done when" figures, measured on the checkout it is run in (repository root).
# Usage: bash results/refactor-2026-11-29d/figures.sh [ISSUE_BASE]
#   ISSUE_BASE: the last commit before issue 22 was filed (default c277644, 2026-11-24 12:04,
#   the commit at which the whole history's subject median is the issue's 112 and its max 1,034).
# Prints "figure: value" lines; figures.md says what each one means and what the issue gave.
# Slow parts (cargo fmt, the duplicates tool) run only when their tool is on PATH.
set -uo pipefail
cd "$(dirname "$0")/../.."
base=${1:-c277644}

count() { grep -c . || true; }

echo "upward imports (check-layers.py): $(python3 scripts/check-layers.py 2>&1 | tail -1)"
echo "uses of the runtime::log alias or capi's LongDouble re-export outside capi/: $(grep -rnE 'crate::runtime::log|crate::capi::types::LongDouble' src --include=*.rs | grep -v '^src/capi/' | count)"
echo "places that load libcuda.so.1 (the c\"libcuda.so.1\" literal): $(grep -rn 'c"libcuda.so' src --include=*.rs | cut -d: -f1,2 | tr '\n' ' ')"
echo "ibgda model/ and hw/: $(for d in src/ibgda/model src/ibgda/hw; do [ -d $d ] && printf '%s(%s files) ' $d "$(ls $d | count)"; done)"
echo "settings read by string key (env::var(\"RSHMEM_|SHMEM_|NVSHMEM_...\")): $(grep -rnE 'env::var(_os)?\("(RSHMEM|SHMEM|NVSHMEM)_' src | count)"
echo "settings! list in src/env.rs: $(grep -c 'settings!' src/env.rs) macro use(s); gen_env_table --check: $(python3 scripts/gen_env_table.py --check >/dev/null 2>&1 && echo ok || echo STALE)"
echo "dead code: capi::status module: $(ls src/capi/status.rs 2>/dev/null | count) file(s); 'mod status' in capi: $(grep -rn '^ *mod status' src/capi | count)"
echo "generated PTX: $(git ls-files src/cuda/generated | count) tracked files in src/cuda/generated, README: $(test -f src/cuda/generated/README.md && head -1 src/cuda/generated/README.md)"
echo "gen_ptx.sh --check in .ci/run: $(grep -c 'gen_ptx.sh --check' .ci/run)"
rfiles=$(git ls-files results | count)
rbytes=$(git ls-files -z results | xargs -0 cat | wc -c)
rdirs=$(git ls-files results | awk -F/ 'NF>2{print $2}' | sort -u | count)
# The index names folders one by one or as `name-{,b,c}-rest/`: expand the braces, then compare.
unindexed=$(git ls-files results | awk -F/ 'NF>2{print $2}' | sort -u | python3 -c '
import re, sys
text = open("results/README.md").read()
names = set()
for code in text.split("`")[1::2]:
    code = code.rstrip("/")
    m = re.fullmatch(r"([^{]*)\{([^}]*)\}(.*)", code)
    names.update(m[1] + a + m[3] for a in m[2].split(",")) if m else names.add(code)
print(" ".join(d for d in sys.stdin.read().split() if d not in names))')
echo "results/: $rfiles tracked files, $rbytes bytes, $rdirs folders; not in results/README.md: ${unindexed:-none}"
echo "results-like files under src/: $(git ls-files src | grep -E '\.(csv|log)$|/results/' | count)"
# README layout: every entry of src/ (and of src/ibgda, src/cuda) must be named in the Layout section.
layout=$(awk '/^## Layout/{f=1;next} /^## /{f=0} f' README.md)
missing=""
for e in $(ls src) $(ls -d src/ibgda/*/ src/cuda/*/ | xargs -n1 basename); do
    grep -qF "$e" <<<"$layout" || missing="$missing $e"
done
echo "src/ entries missing from README Layout:${missing:- none}"
echo "rustfmt.toml: $(test -f rustfmt.toml && echo present || echo absent); make lint has fmt --check: $(grep -c 'fmt --check' Makefile), clippy -D warnings: $(grep -c 'clippy.*-D warnings' Makefile)"
echo "Rust files tracked: $(git ls-files '*.rs' | count)"
if command -v cargo >/dev/null; then
    echo "Rust files cargo fmt would change: $(cargo fmt --check -- -l 2>/dev/null | count)"
fi
echo "unsafe blocks in src/ (lines with 'unsafe {'): $(grep -rnE '\bunsafe \{' src --include=*.rs | count)"
echo "undocumented_unsafe_blocks in Cargo.toml [lints.clippy]: $(grep -c 'undocumented_unsafe_blocks' Cargo.toml) (clippy -D warnings in make lint then fails on any unsafe block without // SAFETY:)"
echo "not_unsafe_ptr_arg_deref allows: $(grep -rn 'not_unsafe_ptr_arg_deref' src | count)"
med() { awk '{print length}' | sort -n | awk '{a[NR]=$1} END{if (NR) printf "%d subjects, median %s, max %s", NR, a[int((NR+1)/2)], a[NR]}'; }
echo "commit subjects up to $base (issue filed after): $(git log --format=%s "$base" | med)"
echo "commit subjects since ($base..HEAD): $(git log --format=%s "$base..HEAD" | med); over 60: $(git log --format=%s "$base..HEAD" | awk 'length>60' | count)"
echo "commit subjects, last 100: $(git log -100 --format=%s | med); over 60: $(git log -100 --format=%s | awk 'length>60' | count)"
echo "'routine: &' parameters in src/: $(grep -rn 'routine: &' src | count)"
echo "  by file: $(grep -rn 'routine: &' src | cut -d: -f1 | sort | uniq -c | sort -rn | awk '{printf "%s %s; ", $2, $1}')"
echo "C status enums: $(grep -rnE '^pub enum RshmemStatus' src | count) (src/abi/rshmem.rs); OUT_OF_MEMORY values: $(grep -rhoE 'NVSHMEMX_ERROR_OUT_OF_MEMORY = [0-9]+' device include | sort -u | tr '\n' ' ')"
echo "status chosen by message text in capi/ or error.rs: $(grep -rnE '\.(text|message|to_string\(\))\.contains\(' src/capi src/error.rs | grep -v assert | count)"
echo "capi imports of cuda::sys: $(grep -rn 'cuda::sys' src/capi | count)"
echo "generated-file checks in .ci/run: $(grep -cE -- '--check|check-header' .ci/run); in make lint: $(sed -n '/^lint:/,/^$/p' Makefile | grep -v 'fmt --check' | grep -cE -- '--check|check-header')"
if command -v duplicates >/dev/null; then
    echo "repeated-block pairs in src/: $(duplicates --repo src --most 60 2>&1 | head -1)"
fi
