#!/usr/bin/env bash
# rshmem's CMake packages (issue 21 item 2), used as a user would: ctest/cmake/rshmem_app
# (find_package(rshmem), target rshmem::rshmem) and ctest/cmake/nvshmem_app (a project written
# for NVSHMEM: find_package(NVSHMEM), nvshmem::nvshmem_host/_device/nvshmem) are configured
# against the install with CMAKE_PREFIX_PATH only, built and run; the version files accept
# and refuse what they should; nothing compiled through nvshmem::* asks for -rdc.
source "$(dirname "$0")/../programs/common.sh"
APPS=$(cd "$PROGRAMS/../cmake" && pwd)
export PATH=$PATH_WITHOUT_PREFIX  # nothing found through PATH: the package alone must do

# configure LABEL SOURCE_DIR ARGS...: configure and build; fail with the log on error.
configure_build() {
    local label=$1 src=$2; shift 2
    if cmake -S "$src" -B "$WORK/$label" -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON "$@" >"$WORK/$label.log" 2>&1 \
        && cmake --build "$WORK/$label" >>"$WORK/$label.log" 2>&1; then
        pass "$label: configured and built"
    else
        fail "$label: configure/build failed:"; tail -30 "$WORK/$label.log"; return 1
    fi
}

if configure_build rshmem_app "$APPS/rshmem_app"; then
    launcher=$(cat "$WORK/rshmem_app/launcher.txt")
    [ "$launcher" = "$PREFIX/bin/rshmemrun" ] && pass "RSHMEM_LAUNCHER is $launcher" || fail "RSHMEM_LAUNCHER is '$launcher'"
    out=$(env -u LD_LIBRARY_PATH timeout 60 "$PREFIX/bin/rshmemrun" -n 2 "$WORK/rshmem_app/ring" 2>&1); rc=$?
    [ $rc -eq 0 ] && [ "$(grep -c 'from the left ok' <<<"$out")" -eq 2 ] && pass "rshmem_app runs with 2 PEs" \
        || { fail "rshmem_app: exit $rc"; echo "$out"; }
fi

if configure_build nvshmem_app "$APPS/nvshmem_app"; then
    out=$(env -u LD_LIBRARY_PATH "$WORK/nvshmem_app/host_info" 2>&1); rc=$?
    [ $rc -eq 0 ] && pass "nvshmem_app host program: $out" || { fail "nvshmem_app host program: exit $rc"; echo "$out"; }
fi
# The CUDA program through nvshmem::nvshmem, where an nvcc exists: compiled without -rdc.
. "$PROGRAMS/../common/find_cuda.sh"
nvcc=$(find_nvcc || true)
if [ -n "$nvcc" ]; then
    if configure_build nvshmem_cuda "$APPS/nvshmem_app" -DWITH_CUDA=ON -DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES=90; then
        [ -x "$WORK/nvshmem_cuda/ring_kernel" ] && pass "CUDA program linked" || fail "CUDA program missing"
        grep -qE -- '-rdc|relocatable-device-code|--device-c( |")| -dc ' "$WORK/nvshmem_cuda/compile_commands.json" \
            && fail "a compile command asks for relocatable device code" || pass "no -rdc in the CUDA compile commands"
    fi
else
    echo "note: no nvcc (scripts/install-nvcc.sh installs one): the CUDA part of nvshmem_app is not built"
fi

# Version requests: 0.1 (and the exact version) are met, 1.0 and 0.2 are not; NVSHMEM 3.4 is,
# NVSHMEM 4 is not.
version=$(sed -n 's/^set(rshmem_VERSION "\(.*\)")/\1/p' "$PREFIX/lib/cmake/rshmem/rshmemConfig.cmake")
probe() {  # probe LABEL PACKAGE VERSION WANT(found|refused)
    local dir=$WORK/probe_$1
    mkdir -p "$dir/src"
    printf 'cmake_minimum_required(VERSION 3.16)\nproject(p NONE)\nfind_package(%s %s REQUIRED)\n' "$2" "$3" >"$dir/src/CMakeLists.txt"
    if cmake -S "$dir/src" -B "$dir/build" -DCMAKE_PREFIX_PATH="$PREFIX" >"$dir/log" 2>&1; then got=found; else got=refused; fi
    [ $got = "$4" ] && pass "find_package($2 $3): $got" || { fail "find_package($2 $3): $got, want $4"; tail -8 "$dir/log"; }
}
probe exact rshmem "$version EXACT" found
probe minor rshmem 0.1 found
probe major rshmem 1.0 refused
probe newer rshmem 0.2 refused
probe nv34 NVSHMEM 3.4 found
probe nv4 NVSHMEM 4.0 refused
finish
