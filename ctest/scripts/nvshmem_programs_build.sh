#!/usr/bin/env bash
# scripts/build-nvshmem-programs.sh, which builds NVIDIA's NVSHMEM examples and perftests against
# rshmem, checked on a small tree in NVSHMEM's layout written here (NVIDIA's sources are not in
# this repository): an example, a perftest in C++ (compiled as CUDA) that links the perftests'
# shared helper, a tile perftest and a source NVIDIA's CMakeLists does not name (both must be
# skipped), and an example calling a routine rshmem does not export, which the compile-only mode
# (LINK=0, no libcuda here) must report by name.
#   nvshmem_programs_build.sh PREFIX [BUILD_DIR]
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
prefix="${1:?usage: nvshmem_programs_build.sh PREFIX [BUILD_DIR]}"
. "$root/ctest/common/find_cuda.sh"
nvcc="$(find_nvcc)"
if [ -z "$nvcc" ]; then
  echo "SKIPPED: nvcc not found (set NVCC, or run scripts/install-nvcc.sh)"
  exit 0
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fails=0
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }

t="$work/nv"
mkdir -p "$t/examples" "$t/perftest/common" "$t/perftest/host/pt" "$t/perftest/device/tile"
cat >"$t/examples/ring.cu" <<'CU'
#include <nvshmem.h>
__global__ void pass_on(int *x) { nvshmem_int_p(x, nvshmem_my_pe(), (nvshmem_my_pe() + 1) % nvshmem_n_pes()); }
int main() {
    nvshmem_init();
    int *x = (int *)nvshmem_malloc(sizeof(int));
    pass_on<<<1, 1>>>(x);
    nvshmem_barrier_all();
    nvshmem_free(x);
    nvshmem_finalize();
    return 0;
}
CU
cat >"$t/examples/missing.cu" <<'CU'
extern "C" void nvshmemx_routine_nobody_exports(void);
int main() { nvshmemx_routine_nobody_exports(); return 0; }
CU
cat >"$t/perftest/common/utils.h" <<'CU'
int helper_iterations(int argc);
CU
cat >"$t/perftest/common/utils.cu" <<'CU'
#include "utils.h"
int helper_iterations(int argc) { return 10 * argc; }
CU
cat >"$t/perftest/host/pt/latency.cpp" <<'CU'
#include <nvshmem.h>
#include <nvshmemx.h>
#include "utils.h"
int main(int argc, char **argv) {
    nvshmem_init();
    cudaStream_t s;
    cudaStreamCreate(&s);
    for (int i = 0; i < helper_iterations(argc); i++) nvshmemx_barrier_all_on_stream(s);
    nvshmem_finalize();
    return 0;
}
CU
echo 'nvshmem_add_perftest(latency.cpp)' >"$t/perftest/host/pt/CMakeLists.txt"
echo '#error a source the CMakeLists does not name is not built' >"$t/perftest/host/pt/stale.cu"
echo '#error the tile perftests are not built' >"$t/perftest/device/tile/tile_allgather.cu"
echo 'nvshmem_add_perftest(tile_allgather.cu)' >"$t/perftest/device/tile/CMakeLists.txt"

out="$work/out"
log="$work/log"
NVCC="$nvcc" RSHMEM_PREFIX="$prefix" LINK=0 MPI=off JOBS=2 bash "$root/scripts/build-nvshmem-programs.sh" "$t" "$out" >"$log" 2>&1
rc=$?
cat "$log"
[ "$rc" = 1 ] && pass "exit 1 when a program cannot be built" || fail "exit $rc, want 1"
grep -q '^UNRESOLVED in examples-missing.o: nvshmemx_routine_nobody_exports$' "$log" \
  && pass "the routine rshmem does not export is named" || fail "no UNRESOLVED line for missing.cu"
grep -q 'compiled (symbols checked, not linked) 2 examples and 1 perftests into .*; 1 failed: examples-missing (symbols)$' "$log" \
  && pass "summary: 2 examples, 1 perftest, only missing.cu failed" || fail "summary line"
[ -s "$out/obj/examples-ring.o" ] && [ -s "$out/obj/perftest-latency.o" ] && [ -s "$out/obj/perftest-utils.o" ] \
  && pass "the example, the C++ perftest and the helper compiled" || fail "objects missing: $(ls "$out/obj")"
[ ! -e "$out/log/perftest-tile_allgather.log" ] && [ ! -e "$out/log/perftest-stale.log" ] \
  && pass "tile perftests and sources the CMakeLists does not name skipped" || fail "compiled: $(ls "$out/log")"
nm -u "$out/obj/perftest-latency.o" | grep -q helper_iterations \
  && pass "the perftest uses the shared helper" || fail "helper not referenced"

bad="$(RSHMEM_PREFIX="$prefix" bash "$root/scripts/build-nvshmem-programs.sh" "$work/nowhere" "$out" 2>&1)"; rc=$?
[ "$rc" = 2 ] && grep -q "has neither examples/ nor perftest/" <<<"$bad" \
  && pass "a wrong source directory is refused with a message" || fail "wrong source dir: exit $rc: $bad"

[ "$fails" = 0 ] && echo "RESULT: all passed" || { echo "RESULT: $fails failed"; exit 1; }
