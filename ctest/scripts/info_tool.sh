#!/usr/bin/env bash
# rshmem-info (issue 21 item 7, issue 17 §2): its options, the version line, values checked as
# they are shown, the README's environment table equal to `rshmem-info -m`, `-r` valid reStructuredText
# listing every setting (info_rest.py), and a closed pipe
# (`rshmem-info | head`) ending it quietly instead of a panic.
source "$(dirname "$0")/../programs/common.sh"
INFO=$PREFIX/bin/rshmem-info
README=$(cd "$PROGRAMS/../.." && pwd)/README.md
CLEAN=(env -i PATH="$PATH" HOME="${HOME:-/root}")

# The reader is gone before rshmem-info writes: it must exit 0 with nothing on stderr.
{ sleep 0.3; "$INFO" 2>"$WORK/pipe.err"; echo $? >"$WORK/pipe.rc"; } | true
[ "$(cat "$WORK/pipe.rc")" = 0 ] && [ ! -s "$WORK/pipe.err" ] && pass "closed pipe: exit 0, nothing on stderr" \
    || { fail "closed pipe: exit $(cat "$WORK/pipe.rc"), stderr:"; cat "$WORK/pipe.err"; }
out=$("$INFO" | head -1)
[[ $out == rshmem\ * ]] && pass "rshmem-info | head -1: $out" || fail "rshmem-info | head -1 printed: $out"

v=$("$INFO" --version)
[[ $v =~ ^rshmem\ [0-9]+\.[0-9]+\.[0-9]+\ \(commit\ ([0-9a-f]{7,}(-dirty)?|unknown),\ built\ 20[0-9]{2}-[0-9]{2}-[0-9]{2} ]] \
    && pass "--version: $v" || fail "--version printed: $v"
"$INFO" -h | grep -q -- "-e, --env" && pass "-h lists the options" || fail "-h does not list -e"
"$INFO" --bogus >/dev/null 2>"$WORK/bogus.err"; rc=$?
[ $rc -eq 2 ] && grep -q "unknown option --bogus" "$WORK/bogus.err" && pass "unknown option: exit 2, named" \
    || fail "unknown option: exit $rc, $(cat "$WORK/bogus.err")"

rows=$("$INFO" -m | tail -n +3 | wc -l)
all=$("${CLEAN[@]}" "$INFO" -a | grep -cE '^  [A-Z][A-Z0-9_]+ +=')
[ "$rows" -gt 20 ] && [ "$all" -eq "$rows" ] && pass "-a shows all $all settings" || fail "-a shows $all settings, -m $rows"
set_only=$("${CLEAN[@]}" RSHMEM_SYMMETRIC_SIZE=2G NVSHMEM_QP_DEPTH=64 "$INFO" -e)
n=$(grep -cE '^  [A-Z][A-Z0-9_]+ +=' <<<"$set_only")
grep -qE '^  SYMMETRIC_SIZE +.*= 2G +\[RSHMEM_SYMMETRIC_SIZE' <<<"$set_only" && grep -qE '^  QP_DEPTH +.*= 64 +\[NVSHMEM_QP_DEPTH' <<<"$set_only" && [ "$n" -eq 2 ] \
    && pass "-e shows only the 2 settings given, with their variables" || { fail "-e showed $n settings:"; echo "$set_only"; }

bad=$("${CLEAN[@]}" RSHMEM_DEBUG=LOUD SHMEM_SYMMETRIC_SIZE=lots RSHMEM_IBGDA_NUM_DCT=two "$INFO" -e); rc=$?
[ $rc -eq 1 ] && pass "invalid values: exit 1" || fail "invalid values: exit $rc"
for want in 'INVALID: .*RSHMEM_DEBUG="LOUD".*NONE, WARN, INFO or TRACE' 'INVALID: .*SHMEM_SYMMETRIC_SIZE="lots"' 'INVALID: RSHMEM_IBGDA_NUM_DCT="two": expected a whole number'; do
    grep -qE "$want" <<<"$bad" && pass "shown as invalid: $want" || { fail "not marked invalid: $want"; echo "$bad"; }
done
"${CLEAN[@]}" RSHMEM_SYMMETRIC_SIZE=2G "$INFO" -a >/dev/null && pass "valid values: exit 0" || fail "valid values: exit $?"

# A misspelt variable sets nothing: -e and -a name it and the setting meant; the variables
# rshmem's wrappers, build and scripts read (the README has users export them) are not listed.
tools=(RSHMEM_CC=cc RSHMEM_PTXAS=none RSHMEM_PREFIX=/opt/rshmem)
for opt in -e -a; do
    out=$("${CLEAN[@]}" "${tools[@]}" RSHMEM_SYMMETRIC_SIZ=2G "$INFO" $opt); rc=$?
    [ $rc -eq 1 ] && grep -q "UNKNOWN: environment variable RSHMEM_SYMMETRIC_SIZ is not a setting rshmem knows (ignored); did you mean RSHMEM_SYMMETRIC_SIZE?" <<<"$out" \
        && [ "$(grep -c UNKNOWN <<<"$out")" -eq 1 ] && pass "$opt: the misspelt RSHMEM_SYMMETRIC_SIZ named, exit 1" \
        || { fail "$opt with RSHMEM_SYMMETRIC_SIZ: exit $rc:"; grep -E "UNKNOWN|^Settings" <<<"$out"; }
done
out=$("${CLEAN[@]}" "${tools[@]}" "$INFO" -e); rc=$?
[ $rc -eq 0 ] && ! grep -q UNKNOWN <<<"$out" && pass "the tools' variables (${tools[*]}) are not unknown" \
    || { fail "the tools' variables: exit $rc:"; echo "$out"; }

# Which NIC IBGDA uses is said once, and as the setting says (it used to be said three ways).
for nic in "" auto model hw; do
    report=$("${CLEAN[@]}" ${nic:+RSHMEM_IBGDA_NIC=$nic} "$INFO" | sed '/^Settings/q')
    said=$(grep -oE 'RSHMEM_IBGDA_NIC=[a-z]+' <<<"$report" | sort -u | tr '\n' ' ')
    lines=$(grep -cE '^ +(IBGDA )?NIC: ' <<<"$report")
    [ "$said" = "RSHMEM_IBGDA_NIC=${nic:-auto} " ] && [ "$lines" -eq 1 ] && pass "NIC ${nic:-default}: one line, $said" \
        || { fail "NIC ${nic:-default}: $lines NIC lines saying '$said':"; grep NIC <<<"$report"; }
done

# -r: reStructuredText, as nvshmem-info -r prints for NVIDIA's docs.
"$INFO" -r >"$WORK/info.rst"
"${CLEAN[@]}" "$INFO" -a | grep -oE '^  [A-Z][A-Z0-9_]+ +=' | awk '{print $1}' >"$WORK/names.txt"
if ! python3 -c 'import docutils' 2>/dev/null; then
    fail "-r: cannot check the ReST: python3 has no docutils (apt-get install python3-docutils)"
elif msg=$(python3 "$(dirname "$0")/info_rest.py" "$WORK/info.rst" "$WORK/names.txt" 2>&1); then
    pass "-r: reStructuredText docutils parses, one entry for each of the $msg settings"
else
    fail "-r is not the ReST expected:"; echo "$msg" | tail -5
fi

if [ -f "$README" ]; then
    sed -n '/<!-- env-table:begin -->/,/<!-- env-table:end -->/p' "$README" | sed '1d;$d' >"$WORK/readme_table.md"
    "$INFO" -m >"$WORK/info_table.md"
    diff -u "$WORK/readme_table.md" "$WORK/info_table.md" >"$WORK/table.diff" \
        && pass "README's environment table is what rshmem-info -m prints" \
        || { fail "README's environment table differs from rshmem-info -m (run python3 scripts/gen_env_table.py):"; cat "$WORK/table.diff"; }
fi
finish
