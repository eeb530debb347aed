#!/usr/bin/env bash
# Installs (or removes) what `make build` built; called by `make install` / `make uninstall`.
#   bash scripts/install.sh install   PREFIX TARGET_DIR VERSION   (DESTDIR from the environment)
#   bash scripts/install.sh uninstall PREFIX
# It never runs cargo, so `sudo make install` works where root has no Rust.
# PREFIX/share/rshmem/install-manifest lists, relative to PREFIX, every file and link installed,
# then every directory the install had to create (with a trailing /). Uninstall removes those
# files and, of the directories, only those it created, once empty: /usr/local/include and the
# like stay. Installing over an earlier install removes the files of it this one does not write
# (another version's library), so uninstall after an upgrade still leaves nothing behind.
set -euo pipefail
cd "$(dirname "$0")/.."
action=${1:?usage: install.sh install|uninstall PREFIX [TARGET_DIR VERSION]}
PREFIX=${2:?missing PREFIX}
ROOT=${DESTDIR:-}$PREFIX
MANIFEST=share/rshmem/install-manifest

# remove LIST: deletes the listed files, then the listed directories that are empty, deepest first.
remove() {
    while read -r rel; do [ -n "$rel" ] && rm -f "$ROOT/$rel"; done < <(grep -v '/$' <<<"$1")
    while read -r dir; do rmdir "$ROOT/$dir" 2>/dev/null || true; done < <(grep '/$' <<<"$1" | sort -r)
}

if [ "$action" = uninstall ]; then
    if [ ! -f "$ROOT/$MANIFEST" ]; then
        echo "make uninstall: no rshmem install under $ROOT ($MANIFEST is missing)" >&2
        exit 1
    fi
    remove "$(cat "$ROOT/$MANIFEST"; echo "$MANIFEST")"
    echo "rshmem removed from $ROOT"
    exit 0
fi

TARGET=${3:?missing TARGET_DIR}
VERSION=${4:?missing VERSION}
MAJOR=${VERSION%%.*}
for f in librshmem.so rshmemrun rshmem-info; do
    if [ ! -f "$TARGET/$f" ]; then
        echo "make install: $TARGET/$f is missing: build first with 'make' (as a user with cargo)," \
             "then run 'make install' (it only copies)" >&2
        exit 1
    fi
done

# What an earlier install wrote (its directories stay listed: rshmem made them).
earlier=$(cat "$ROOT/$MANIFEST" 2>/dev/null || true)
installed=()
mapfile -t created < <(grep '/$' <<<"$earlier" || true)
mkdir -p "$ROOT"
# dir DIR(relative to PREFIX): makes it and any missing directory above it, noting each one made.
dir() {
    local path="" part parts
    IFS=/ read -ra parts <<<"$1"
    for part in "${parts[@]}"; do
        path=${path:+$path/}$part
        [ -d "$ROOT/$path" ] || { mkdir "$ROOT/$path"; created+=("$path/"); }
    done
}
# put MODE SOURCE DEST(relative to PREFIX)
put() {
    dir "$(dirname "$3")"
    install -m "$1" "$2" "$ROOT/$3"
    installed+=("$3")
}
# link TARGET NAME(relative to PREFIX)
link() {
    dir "$(dirname "$2")"
    ln -sfn "$1" "$ROOT/$2"
    installed+=("$2")
}
# fill MODE FILE.in DEST: a template with @PREFIX@, @VERSION@ and @MAJOR@ replaced.
fill() {
    dir "$(dirname "$3")"
    sed -e "s|@PREFIX@|$PREFIX|g" -e "s|@VERSION@|$VERSION|g" -e "s|@MAJOR@|$MAJOR|g" "$2" >"$ROOT/$3"
    chmod "$1" "$ROOT/$3"
    installed+=("$3")
}

# The library, stripped, with its debug info beside it (found by gdb through the debuglink).
lib=lib/librshmem.so.$VERSION
put 755 "$TARGET/librshmem.so" "$lib"
if command -v objcopy >/dev/null; then
    objcopy --only-keep-debug "$ROOT/$lib" "$ROOT/$lib.debug"
    chmod 644 "$ROOT/$lib.debug"
    installed+=("$lib.debug")
    objcopy --strip-debug --strip-unneeded --add-gnu-debuglink="$ROOT/$lib.debug" "$ROOT/$lib"
fi
link "librshmem.so.$VERSION" "lib/librshmem.so.$MAJOR"
link "librshmem.so.$MAJOR" lib/librshmem.so
# NVSHMEM's host library name (nvshmem4py loads it by name): a stub that pulls librshmem in.
[ -f "$TARGET/libnvshmem_host.so.3" ] && put 755 "$TARGET/libnvshmem_host.so.3" lib/libnvshmem_host.so.3

# Programs: the launcher under its other names, the compiler wrappers.
put 755 "$TARGET/rshmemrun" bin/rshmemrun
put 755 "$TARGET/rshmem-info" bin/rshmem-info
fill 755 scripts/oshcc.in bin/oshcc
# The other names, each with its manual page (a link to the program's).
for name in oshrun nvshmrun; do link rshmemrun "bin/$name" && link rshmemrun.1 "share/man/man1/$name.1"; done
for name in oshc++ oshCC oshcxx; do link oshcc "bin/$name" && link oshcc.1 "share/man/man1/$name.1"; done

# Headers: the C API, and the header-only CUDA device library under include/rshmem/device.
while IFS= read -r f; do put 644 "include/$f" "include/$f"; done < <(cd include && find . -type f | sed 's|^\./||' | sort)
if [ -d device ]; then
    while IFS= read -r f; do put 644 "device/$f" "include/rshmem/device/$f"; done < <(cd device && find . -type f | sed 's|^\./||' | sort)
fi

# Build-system integration.
fill 644 pkgconfig/rshmem.pc.in lib/pkgconfig/rshmem.pc
for f in cmake/*.cmake.in; do
    name=$(basename "$f" .in)
    case $name in
        nvshmem-*) fill 644 "$f" "lib/cmake/nvshmem/$name" ;;  # find_package(NVSHMEM) finds it too
        *) fill 644 "$f" "lib/cmake/rshmem/$name" ;;
    esac
done

# The licence texts and the changelog, where packaging tools look for them.
for f in LICENSE LICENSE-MIT LICENSE-APACHE CHANGELOG.md; do put 644 "$f" "share/doc/rshmem/$f"; done

# Manual pages.
for f in docs/man/*.[0-9]; do
    [ -e "$f" ] || continue
    put 644 "$f" "share/man/man${f##*.}/$(basename "$f")"
done

dir share/rshmem
# Files of the earlier install that this one did not write (e.g. another version's library).
remove "$(comm -23 <(grep -v '/$' <<<"$earlier" | sort) <(printf '%s\n' "${installed[@]}" | sort))"
{ printf '%s\n' "${installed[@]}"; [ ${#created[@]} -eq 0 ] || printf '%s\n' "${created[@]}" | sort -u; } >"$ROOT/$MANIFEST"
echo "rshmem $VERSION installed under $ROOT (${#installed[@]} files; make uninstall PREFIX=$PREFIX removes them)"
