#!/usr/bin/env bash
# The manual pages (issue 21 item 8): each page of docs/man is installed under share/man/manN,
# formats without a groff warning, has NAME, SYNOPSIS and DESCRIPTION; `man NAME` shows a page
# naming it for every program in bin (oshrun, oshc++... included); and rshmem(3) lists every
# setting that rshmem-info knows.
source "$(dirname "$0")/../programs/common.sh"
SRC=$(cd "$PROGRAMS/../../docs/man" && pwd)
for page in "$SRC"/*.[0-9]; do
    name=$(basename "$page")
    installed=$PREFIX/share/man/man${name##*.}/$name
    [ -f "$installed" ] && pass "$name installed" || { fail "$name is not installed at $installed"; continue; }
    warnings=$(groff -man -ww -z "$installed" 2>&1)
    [ -z "$warnings" ] && pass "$name formats without warnings" || { fail "$name: groff says:"; echo "$warnings"; }
    text=$(groff -man -Tascii "$installed" 2>/dev/null | sed 's/.\x08//g')
    for section in NAME SYNOPSIS DESCRIPTION; do
        grep -q "^$section" <<<"$text" || fail "$name has no $section section"
    done
done
# Every installed program, under each of its names, has a page that man finds and formats.
for prog in "$PREFIX"/bin/*; do
    name=$(basename "$prog")
    page=$PREFIX/share/man/man1/$name.1
    if [ ! -f "$page" ]; then fail "$name has no manual page ($page)"; continue; fi
    text=$(MANPATH=$PREFIX/share/man MANWIDTH=100 man -P cat "$name" 2>&1 | sed 's/.\x08//g')
    head -1 <<<"$text" | grep -qE "^(RSHMEMRUN|OSHCC|RSHMEM-INFO)\(1\)" && grep -qE "^NAME" <<<"$text" \
        && grep -qF -- "$name" <<<"$(sed -n '/^NAME/,/^SYNOPSIS/p' <<<"$text")" \
        && pass "man $name: $(sed -n '/^NAME/{n;p;}' <<<"$text" | sed 's/^ *//' | cut -c1-60)..." \
        || { fail "man $name does not show its page:"; head -5 <<<"$text"; }
done
settings=$("$PREFIX/bin/rshmem-info" -m | tail -n +3 | cut -d'`' -f2)
text=$(groff -man -Tascii -rLL=200n "$PREFIX/share/man/man3/rshmem.3" 2>/dev/null | sed 's/.\x08//g')
missing=0
for s in $settings; do grep -qE "^ +$s\b" <<<"$text" || { missing=$((missing + 1)); echo "rshmem(3) lacks $s"; }; done
[ $missing -eq 0 ] && pass "rshmem(3) describes all $(wc -w <<<"$settings") settings" || fail "rshmem(3) lacks $missing setting(s)"
finish
