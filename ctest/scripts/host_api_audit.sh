#!/usr/bin/env bash
# Audit of the host API against NVSHMEM's. NVSHMEM's host API is taken, at test time, from the
# pip package nvidia-nvshmem-cu13 (nothing of it is committed): the nvshmem_* / nvshmemx_* names
# that libnvshmem_host.so.3 exports AND that its public headers mention once preprocessed for the
# host (the intersection drops the library's internal data, nvshmem_options, nvshmem_debug_*...).
#   1. both header sets through nvcc's host-pass preprocessor (no __CUDA_ARCH__), names out;
#   2. every host routine rshmem's headers do not declare for the host is listed: absent, or
#      declared __device__ only (a device definition compiles to a weak host stub, so such a
#      routine would even link, and still cannot be called from the host); the test fails on any
#      not in EXCLUDED below;
#   3. api_host_*.cu, generated in BUILD_DIR, take the address of every routine rshmem declares
#      and are linked against PREFIX/lib/librshmem.so: a routine declared but not exported is an
#      undefined reference there. The program then runs, so the loader resolves them too.
#   host_api_audit.sh PREFIX [BUILD_DIR]
# Skipped, with a message saying so, when nvcc, NVSHMEM's headers or its host library cannot be
# found (NVSHMEM: $NVSHMEM_HOME, or the pip package in python3 / /opt/cuda13/bin/python).
set -euo pipefail

prefix="$(cd "$1" && pwd)"
if [ -n "${2:-}" ]; then out="$2/host_api_audit"; else out="$(mktemp -d)/host_api_audit"; fi
mkdir -p "$out"

# NVSHMEM host routines rshmem leaves out on purpose. One a line: the name, then why (an entry
# without a reason fails the audit). Say what the routine needs that rshmem does not have, or
# why no program can notice its absence; none today.
EXCLUDED="$(cat <<'EOF'
EOF
)"


. "$(cd "$(dirname "$0")" && pwd)/../common/find_cuda.sh"
nvcc="$(find_nvcc)"
if [ -z "$nvcc" ]; then echo "SKIPPED: nvcc not found; host API not audited"; exit 0; fi
nv="$(find_nvshmem)"
if [ -z "$nv" ]; then echo "SKIPPED: NVSHMEM headers not found (set NVSHMEM_HOME); host API not audited"; exit 0; fi
hostlib=""
for f in "$nv"/lib/libnvshmem_host.so.3 "$nv"/lib/libnvshmem_host.so "$nv"/lib64/libnvshmem_host.so.3; do
  if [ -f "$f" ]; then hostlib="$f"; break; fi
done
if [ -z "$hostlib" ]; then echo "SKIPPED: $nv has no lib/libnvshmem_host.so.3; host API not audited"; exit 0; fi
if ! command -v nm >/dev/null 2>&1; then echo "SKIPPED: nm (binutils) not found; host API not audited"; exit 0; fi
echo "nvcc: $nvcc; NVSHMEM: $hostlib"

# Exclusion entries: a name and a reason each.
printf '%s\n' "$EXCLUDED" | awk 'NF' | sort -u > "$out/excluded.lines"
if awk 'NF < 2' "$out/excluded.lines" | grep -q .; then
  echo "EXCLUDED entries without a reason:"; awk 'NF < 2 {print "  " $1}' "$out/excluded.lines"
  echo "host API audit FAILED"; exit 1
fi
awk '{print $1}' "$out/excluded.lines" | sort -u > "$out/excluded.names"

# 1. Names. Exports: defined dynamic symbols, version suffix (@@NVSHMEM) dropped. Headers: every
# nvshmem_/nvshmemx_ identifier of the host pass (nvcc -E alone preprocesses for the device:
# -U__CUDA_ARCH__ after its own -D gives the host's view).
nm -D --defined-only "$hostlib" | awk 'NF >= 3 {n = $3; sub(/@.*/, "", n); print n}' \
  | grep -E '^nvshmemx?_' | sort -u > "$out/nvshmem.exports"
printf '#include <nvshmem.h>\n#include <nvshmemx.h>\n' > "$out/headers.cu"
idents_of() {  # idents_of INCLUDE_DIR UNIT.ii IDENTS
  "$nvcc" -E -U__CUDA_ARCH__ -std=c++17 -I"$1" "$out/headers.cu" -o "$2"
  grep -v '^#' "$2" | grep -oE '\bnvshmemx?_[A-Za-z0-9_]*' | sort -u > "$3"
}
idents_of "$nv/include" "$out/nvshmem.ii" "$out/nvshmem.idents"
idents_of "$prefix/include" "$out/rshmem.ii" "$out/rshmem.idents"
comm -12 "$out/nvshmem.exports" "$out/nvshmem.idents" > "$out/wanted.names"

# Routines rshmem's headers declare with the device attribute and without the host one: in the
# host pass __device__ is __attribute__((device)) and __host__ __attribute__((host)).
python3 - "$out/rshmem.ii" "$out/wanted.names" > "$out/device_only.names" <<'EOF'
import re, sys
text = open(sys.argv[1], encoding="utf-8", errors="replace").read()
wanted = set(open(sys.argv[2]).read().split())
# Execution-space attributes, then (not crossing ';', '{', '(' or ')') the other specifiers and
# the return type, then the routine's name and its '('.
decl = re.compile(r"((?:__attribute__\(\((?:host|device|global)\)\)\s*)+)"
                  r"((?:\s|__attribute__\(\([\w, ()]*?\)\)|[\w:<>*&,])*?)"
                  r"\b(nvshmemx?_\w+)\s*\(")
names = set()
for m in decl.finditer(text):
    spec = m.group(1) + m.group(2)
    if m.group(3) in wanted and "((device))" in spec and "((host))" not in spec:
        names.add(m.group(3))
print("\n".join(sorted(names)))
EOF
sed -i '/^$/d' "$out/device_only.names"

# 2. What rshmem lacks, what it has for the device only, what is left out on purpose.
comm -23 "$out/wanted.names" "$out/rshmem.idents" > "$out/absent.names"
sort -u "$out/absent.names" "$out/device_only.names" > "$out/lacking.names"
comm -23 "$out/lacking.names" "$out/excluded.names" > "$out/missing.names"
comm -12 "$out/rshmem.idents" "$out/wanted.names" | comm -23 - "$out/device_only.names" \
  | comm -23 - "$out/excluded.names" > "$out/present.names"
echo "NVSHMEM host routines: $(wc -l < "$out/wanted.names") (of $(wc -l < "$out/nvshmem.exports") exported nvshmem*_ symbols);" \
     "rshmem declares $(wc -l < "$out/present.names") of them for the host; $(wc -l < "$out/excluded.names") excluded"
fail=0
if [ -s "$out/missing.names" ]; then
  echo "MISSING from rshmem's host headers ($(wc -l < "$out/missing.names")):"
  comm -23 "$out/absent.names" "$out/excluded.names" | sed 's/^/  /'
  if comm -23 "$out/device_only.names" "$out/excluded.names" | grep -q .; then
    echo "  declared for the device only (__device__, no __host__):"
    comm -23 "$out/device_only.names" "$out/excluded.names" | sed 's/^/    /'
  fi
  fail=1
fi
stale="$(comm -23 "$out/excluded.names" "$out/lacking.names")"
if [ -n "$stale" ]; then
  echo "note: EXCLUDED names that rshmem has or NVSHMEM lacks (drop them from the list):"
  echo "$stale" | sed 's/^/  /'
fi

# 3. Every declared routine by address, linked against librshmem.so. Units of 400 names,
# compiled two at a time; main() counts the addresses the loader filled in.
rm -f "$out"/api_host_* "$out"/chunk.*
split -l 400 -d "$out/present.names" "$out/chunk."
units=()
for c in "$out"/chunk.*; do
  k="${c##*.}"
  u="$out/api_host_$k.cu"
  {
    echo '/* Generated by ctest/scripts/host_api_audit.sh: NVSHMEM host routines by address. */'
    echo '#include <nvshmem.h>'
    echo '#include <nvshmemx.h>'
    echo "static void *const addresses[] = {"
    sed 's/.*/    (void *)\&&,/' "$c"
    echo '};'
    echo "extern \"C\" int api_host_$k(void) {"
    echo '    int n = 0;'
    echo '    for (size_t i = 0; i < sizeof addresses / sizeof addresses[0]; i++) n += addresses[i] != 0;'
    echo '    return n;'
    echo '}'
  } > "$u"
  units+=("$k")
  rm -f "$c"
done
{
  echo '/* Generated by ctest/scripts/host_api_audit.sh. */'
  echo '#include <stdio.h>'
  for k in "${units[@]}"; do echo "extern \"C\" int api_host_$k(void);"; done
  echo 'int main(void) {'
  echo '    int n = 0;'
  for k in "${units[@]}"; do echo "    n += api_host_$k();"; done
  echo '    printf("%d\n", n);'
  echo '    return 0;'
  echo '}'
} > "$out/api_host_main.cu"

printf '%s\n' "${units[@]}" | xargs -P 2 -I{} sh -c \
    '"$0" -c -std=c++17 -I"$1" "$2/api_host_{}.cu" -o "$2/api_host_{}.o" > "$2/api_host_{}.log" 2>&1 || true' \
    "$nvcc" "$prefix/include" "$out"
# A unit that does not compile: the errors on lines of its address table name routines that are
# not functions (a type, a variable, an overload set); they are reported, taken out of the unit,
# and the rest compiled again, so that the link below still covers them.
expected="$(wc -l < "$out/present.names")"
compiled=1
for k in "${units[@]}"; do
  [ -f "$out/api_host_$k.o" ] && continue
  u="$out/api_host_$k.cu"
  bad="$(sed -n 's/.*\.cu(\([0-9][0-9]*\)): error.*/\1/p' "$out/api_host_$k.log" | sort -un)"
  names="$(for l in $bad; do sed -n "${l}s/.*&\(nvshmemx\?_[A-Za-z0-9_]*\).*/\1/p" "$u"; done)"
  if [ -n "$names" ]; then
    echo "NOT ADDRESSABLE as routines in rshmem's headers ($(echo "$names" | wc -l)):"
    echo "$names" | sed 's/^/  /'
    sed -n 's/.*\.cu([0-9]*): error: /    /p' "$out/api_host_$k.log" | sort | uniq -c | sed 's/^/   /'
    expected=$((expected - $(echo "$names" | wc -l)))
    for l in $(echo "$bad" | sort -rn); do
      if sed -n "${l}p" "$u" | grep -q '(void \*)&'; then sed -i "${l}d" "$u"; fi
    done
    fail=1
    "$nvcc" -c -std=c++17 -I"$prefix/include" "$u" -o "$out/api_host_$k.o" > "$out/api_host_$k.log" 2>&1 || true
  fi
  if [ ! -f "$out/api_host_$k.o" ]; then
    echo "FAILED to compile $u:"; sed 's/^/    /' "$out/api_host_$k.log" | head -40
    compiled=0
  fi
done
if [ "$compiled" -eq 1 ]; then
  if "$nvcc" -std=c++17 -o "$out/api_host" "$out/api_host_main.cu" "$out"/api_host_[0-9]*.o \
      -L"$prefix/lib" -lrshmem -Xlinker -rpath="$prefix/lib" > "$out/link.log" 2>&1; then
    got="$("$out/api_host" 2> "$out/run.log" || true)"
    if [ "$got" = "$expected" ]; then
      echo "ok   $got routines by address, linked against $prefix/lib/librshmem.so (${#units[@]} units)"
    else
      echo "FAILED: the linked program resolved '${got}' of $expected addresses"
      sed 's/^/    /' "$out/run.log" | head -20
      fail=1
    fi
  else
    undefined="$(sed -n "s/.*undefined reference to \`\(nvshmemx\?_[A-Za-z0-9_]*\)'.*/\1/p" "$out/link.log" | sort -u)"
    if [ -n "$undefined" ]; then
      echo "DECLARED BUT NOT EXPORTED by librshmem.so ($(echo "$undefined" | wc -l)):"
      echo "$undefined" | sed 's/^/  /'
    else
      echo "FAILED to link:"; sed 's/^/    /' "$out/link.log" | head -40
    fi
    fail=1
  fi
else
  fail=1
fi
if [ "$fail" -ne 0 ]; then echo "host API audit FAILED"; exit 1; fi
echo "host API audit passed"
