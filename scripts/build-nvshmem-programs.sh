#!/usr/bin/env bash
# Builds NVIDIA's NVSHMEM examples and perftests, unchanged, against an rshmem install: plain
# nvcc, no -rdc (rshmem's device library is header-only), one program per source file.
#
# usage: scripts/build-nvshmem-programs.sh NVSHMEM_SRC OUT
#   NVSHMEM_SRC  a directory holding NVSHMEM's examples/ and perftest/ (an NVSHMEM source tree,
#                e.g. a checkout of NVIDIA/nvshmem at v3.4.5-0); either may be missing
#   OUT          OUT/examples/<name>, OUT/perftest/<name>, one log per program in OUT/log/
# env:
#   RSHMEM_PREFIX  the rshmem install (default: build/stage of this checkout)
#   NVCC           default: nvcc on PATH, else $CUDA_HOME/bin/nvcc
#   CUDA_ARCH      default sm_90
#   JOBS           parallel compiles (default: number of CPUs)
#   MPI            auto (default: on when `mpicc -showme` works), on, off. Off skips the MPI
#                  examples and builds the rest without NVSHMEMTEST_MPI_SUPPORT.
#   LINK           1 (default) links the programs. 0 compiles only, then checks that every
#                  NVSHMEM/OpenSHMEM symbol the objects need is exported by librshmem.so: for
#                  machines without libcuda (CI), where nothing can be linked.
# Prints one line per failure and a summary; exits 1 when any program failed to build.
#
# Built: every examples/*.cu and *.cpp, and the perftests each perftest CMakeLists.txt names with
# nvshmem_add_perftest. Not built: perftest/device/tile (the tile API needs NVLink multicast)
# and examples/gemm_allreduce (CUTLASS, Blackwell).
set -uo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
src="${1:?usage: build-nvshmem-programs.sh NVSHMEM_SRC OUT}"
out="${2:?usage: build-nvshmem-programs.sh NVSHMEM_SRC OUT}"
prefix="${RSHMEM_PREFIX:-$root/build/stage}"
arch="${CUDA_ARCH:-sm_90}"
jobs="${JOBS:-$(nproc)}"
link="${LINK:-1}"
nvcc="${NVCC:-$(command -v nvcc || echo "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc")}"

die() { echo "build-nvshmem-programs: $*" >&2; exit 2; }
[ -d "$src/examples" ] || [ -d "$src/perftest" ] || die "$src has neither examples/ nor perftest/ (give an NVSHMEM source tree)"
[ -f "$prefix/include/nvshmem.h" ] || die "no rshmem install at $prefix (run 'make stage', or set RSHMEM_PREFIX)"
[ -x "$nvcc" ] || die "nvcc not found (set NVCC or CUDA_HOME; scripts/install-nvcc.sh installs one)"
if [ "$link" = 0 ]; then
    [ -f "$prefix/lib/librshmem.so" ] || die "$prefix/lib/librshmem.so is missing"
fi

# MPI: the include directories and link line of Open MPI's wrapper.
mpi_flags=() mpi_link=()
case "${MPI:-auto}" in
    off) ;;
    on | auto)
        if inc=$(mpicc -showme:incdirs 2>/dev/null) && lnk=$(mpicc -showme:link 2>/dev/null); then
            mpi_flags=(-DNVSHMEMTEST_MPI_SUPPORT)
            for d in $inc; do mpi_flags+=("-I$d"); done
            read -ra mpi_link <<<"$lnk"
        elif [ "${MPI:-auto}" = on ]; then
            die "MPI=on but 'mpicc -showme:incdirs' failed (Open MPI's mpicc is needed)"
        fi ;;
    *) die "MPI must be auto, on or off (got '$MPI')" ;;
esac

mkdir -p "$out/examples" "$out/perftest" "$out/log" "$out/obj"
common=(-arch="$arch" -std=c++17 -O2 -I"$prefix/include")
libs=(-L"$prefix/lib" -lrshmem -lcuda -ldl -Xlinker -rpath="$prefix/lib" "${mpi_link[@]}")
failed=()

# build KIND NAME SOURCE [extra compile flags...]: compile (as CUDA), then link with the extra
# objects in $extra_objs.
build() {
    local kind=$1 name=$2 file=$3; shift 3
    local obj="$out/obj/$kind-$name.o" log="$out/log/$kind-$name.log"
    "$nvcc" "${common[@]}" "${mpi_flags[@]}" "$@" -x cu -c "$file" -o "$obj" >"$log" 2>&1 || return 1
    [ "$link" = 0 ] && return 0
    "$nvcc" -arch="$arch" "$obj" "${extra_objs[@]}" -o "$out/$kind/$name" "${libs[@]}" >>"$log" 2>&1
}

# run_all KIND FILE...: builds each file, JOBS at a time; records the failures.
run_all() {
    local kind=$1 f name; shift
    local -a pids=() names=()
    for f in "$@"; do
        name=$(basename "${f%.*}")
        while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
        build "$kind" "$name" "$f" "${dir_flags[@]}" -I"$(dirname "$f")" &
        pids+=($!) names+=("$name")
    done
    for i in "${!pids[@]}"; do
        wait "${pids[$i]}" || { failed+=("$kind/${names[$i]}"); echo "FAILED $kind/${names[$i]} (log: $out/log/$kind-${names[$i]}.log)"; }
    done
}

n_ex=0 n_pt=0
if [ -d "$src/examples" ]; then
    mapfile -t ex < <(find "$src/examples" -maxdepth 1 \( -name '*.cu' -o -name '*.cpp' \) | sort)
    if [ ${#mpi_flags[@]} -eq 0 ]; then
        mapfile -t ex < <(printf '%s\n' "${ex[@]}" | grep -v -e '/mpi-based-init\.' -e '/dev-guide-ring-mpi\.' -e '/uid-based-init\.')
        echo "MPI off: mpi-based-init, dev-guide-ring-mpi and uid-based-init are not built"
    fi
    extra_objs=() dir_flags=()
    run_all examples "${ex[@]}"
    n_ex=${#ex[@]}
fi
if [ -d "$src/perftest" ]; then
    # The perftests NVIDIA's CMake builds: each directory's nvshmem_add_perftest(<file>) lines
    # (the tree holds stale sources that it does not build, e.g. redmaxloc_latency.cu).
    mapfile -t pt < <(find "$src/perftest" -name CMakeLists.txt -not -path '*/common/*' -not -path '*/tile/*' | sort | while read -r cm; do
        sed -n 's/^[[:space:]]*nvshmem_add_perftest([[:space:]]*\([^$)[:space:]]*\)[[:space:]]*)/\1/p' "$cm" | sed "s|^|$(dirname "$cm")/|"
    done)
    # The perftests' shared helpers (utils.cu), built once.
    helper="$out/obj/perftest-utils.o"
    if "$nvcc" "${common[@]}" "${mpi_flags[@]}" -I"$src/perftest/common" -c "$src/perftest/common/utils.cu" -o "$helper" >"$out/log/perftest-utils.log" 2>&1; then
        extra_objs=("$helper") dir_flags=(-I"$src/perftest/common")
        run_all perftest "${pt[@]}"
        n_pt=${#pt[@]}
    else
        echo "FAILED perftest/common/utils.cu (log: $out/log/perftest-utils.log): no perftest can be built"
        failed+=(perftest/common/utils)
    fi
fi

# Without linking: every NVSHMEM/OpenSHMEM/rshmem symbol the objects need must be one that
# librshmem.so exports.
if [ "$link" = 0 ]; then
    exported=$(nm -D --defined-only "$prefix/lib/librshmem.so" | awk '{sub(/@.*/, "", $3); print $3}' | sort -u)
    for o in "$out"/obj/*.o; do
        missing=$(nm -u "$o" | awk '{print $2}' | grep -E '^(nvshmemx?i?d?|p?shmemx?|rshmem)_' | sort -u | comm -23 - <(echo "$exported"))
        if [ -n "$missing" ]; then
            echo "UNRESOLVED in $(basename "$o"): $(echo $missing)"
            failed+=("$(basename "$o" .o) (symbols)")
        fi
    done
fi

what=$([ "$link" = 0 ] && echo "compiled (symbols checked, not linked)" || echo built)
echo "build-nvshmem-programs: $what $n_ex examples and $n_pt perftests into $out; ${#failed[@]} failed${failed:+: ${failed[*]}}"
[ ${#failed[@]} -eq 0 ]
