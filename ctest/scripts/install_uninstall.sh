#!/usr/bin/env bash
# make install / make uninstall (issue 21 item 9): install copies what `make` built without
# cargo on PATH (as under sudo), refuses with a message when nothing is built, installs a
# stripped library whose debug information sits beside it behind a debuglink, and uninstall
# removes every file it installed (also after an upgrade) and the directories it made, no other.
source "$(dirname "$0")/../programs/common.sh"
REPO=$(cd "$PROGRAMS/../.." && pwd)
NOCARGO=(env PATH=/usr/local/bin:/usr/bin:/bin)

# Nothing built: a message naming the missing file and what to run.
"${NOCARGO[@]}" make -s -C "$REPO" install PREFIX="$WORK/none" TARGET="$WORK/empty" >"$WORK/none.log" 2>&1; rc=$?
[ $rc -ne 0 ] && grep -q "librshmem.so is missing: build first with 'make'" "$WORK/none.log" \
    && pass "install with nothing built: refused with a message" || { fail "install with nothing built: exit $rc"; cat "$WORK/none.log"; }
[ ! -e "$WORK/none" ] && pass "nothing was written" || fail "$WORK/none was created"

# A DESTDIR install of the build, with no cargo reachable, into a prefix that already has
# (empty) directories of its own, as /usr/local has; over an install of another version.
dest=$WORK/dest
root=$dest/opt/rshmem
theirs="include lib lib/pkgconfig share share/man share/man/man1"
for d in $theirs; do mkdir -p "$root/$d"; done
"${NOCARGO[@]}" make -s -C "$REPO" install DESTDIR="$dest" PREFIX=/opt/rshmem VERSION=0.0.9 >"$WORK/old.log" 2>&1 \
    || { fail "make install VERSION=0.0.9:"; cat "$WORK/old.log"; }
if "${NOCARGO[@]}" make -s -C "$REPO" install DESTDIR="$dest" PREFIX=/opt/rshmem >"$WORK/install.log" 2>&1; then
    pass "make install without cargo on PATH"
else
    fail "make install without cargo on PATH:"; cat "$WORK/install.log"
fi
stale=$(find "$root" -name '*0.0.9*')
[ -z "$stale" ] && pass "installing over version 0.0.9 removed its files" || fail "left from the 0.0.9 install: $stale"
lib=$(readlink -f "$root/lib/librshmem.so")
[ -f "$lib" ] && [ "$(readlink "$root/lib/librshmem.so")" = librshmem.so.0 ] && pass "librshmem.so -> librshmem.so.0 -> $(basename "$lib")" || fail "library links wrong: $(ls -l "$root/lib")"
readelf -S "$lib" | grep -qE '\.debug_|\.symtab' && fail "the installed library is not stripped" || pass "installed library stripped (no .debug_*, no .symtab)"
readelf -p .gnu_debuglink "$lib" 2>/dev/null | grep -q "$(basename "$lib").debug" && pass "debuglink names $(basename "$lib").debug" || fail "no debuglink"
readelf -S "$lib.debug" | grep -q '\.debug_line' && pass "the .debug file holds the line tables" || fail "$lib.debug has no .debug_line"
grep -q "^prefix=/opt/rshmem$" "$root/lib/pkgconfig/rshmem.pc" && pass "rshmem.pc names the PREFIX, not DESTDIR" || fail "rshmem.pc prefix wrong"
grep -q "^prefix='/opt/rshmem'" "$root/bin/oshcc" && pass "oshcc names the PREFIX" || fail "oshcc prefix wrong"
cmp -s "$REPO/LICENSE-APACHE" "$root/share/doc/rshmem/LICENSE-APACHE" && [ -f "$root/share/doc/rshmem/LICENSE-MIT" ] \
    && grep -q "^license = \"MIT OR Apache-2.0\"" "$REPO/Cargo.toml" && pass "licence texts (MIT OR Apache-2.0, as Cargo.toml) in share/doc/rshmem" \
    || fail "share/doc/rshmem lacks the licence texts Cargo.toml names"
n=$(grep -vc '/$' "$root/share/rshmem/install-manifest")
[ "$n" -gt 20 ] && pass "manifest lists $n files" || fail "manifest lists $n files"

if "${NOCARGO[@]}" make -s -C "$REPO" uninstall DESTDIR="$dest" PREFIX=/opt/rshmem >"$WORK/uninstall.log" 2>&1; then
    left=$(find "$dest" -mindepth 1 ! -type d | sed "s|^$dest||")
    dirs=$(cd "$root" && find . -mindepth 1 -type d | sed 's|^\./||' | sort | tr '\n' ' ')
    [ -z "$left" ] && [ "$dirs" = "$(tr ' ' '\n' <<<"$theirs" | sort | tr '\n' ' ')" ] \
        && pass "make uninstall removed every file and the directories it made, not the prefix's own" \
        || { fail "after uninstall: files: ${left:-none}; directories: $dirs (want: $theirs)"; }
else
    fail "make uninstall:"; cat "$WORK/uninstall.log"
fi
"${NOCARGO[@]}" make -s -C "$REPO" uninstall DESTDIR="$dest" PREFIX=/opt/rshmem >"$WORK/again.log" 2>&1
[ $? -ne 0 ] && grep -q "no rshmem install under" "$WORK/again.log" && pass "uninstall twice: says there is nothing" || fail "uninstall twice: $(cat "$WORK/again.log")"
finish
