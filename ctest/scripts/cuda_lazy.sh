#!/usr/bin/env bash
# CUDA is loaded lazily: a CPU-only OpenSHMEM program never maps libcuda, and on a machine
# without a usable GPU the NVSHMEM entry points fail with a clear message (status code from
# nvshmemx_init_attr, message + non-zero exit from nvshmem_init) instead of aborting.
#   cuda_lazy.sh PREFIX BUILD_DIR
set -euo pipefail
prefix="$(cd "$1" && pwd)"
out="${2:-$(mktemp -d)}/cuda-lazy"
mkdir -p "$out"
cc=(cc -std=c11 -Wall -I"$prefix/include" -L"$prefix/lib" -Wl,-rpath,"$prefix/lib")

cat > "$out/cpu_only.c" <<'C'
#include <stdio.h>
#include <string.h>
void shmem_init(void);
void shmem_finalize(void);
int main(void) {
    shmem_init();
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096];
    int cuda = 0;
    while (f && fgets(line, sizeof line, f)) cuda |= strstr(line, "libcuda") != NULL;
    if (f) fclose(f);
    shmem_finalize();
    if (cuda) { fprintf(stderr, "FAIL: a CPU-only program mapped libcuda\n"); return 1; }
    return 0;
}
C
"${cc[@]}" "$out/cpu_only.c" -o "$out/cpu_only" -lrshmem
"$prefix/bin/rshmemrun" -n 2 "$out/cpu_only"
echo "ok   CPU-only program: libcuda never mapped"

if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q GPU; then
  echo "SKIPPED: the no-GPU error paths (this machine has a GPU)"
  exit 0
fi

cat > "$out/no_gpu.c" <<'C'
#include <stdio.h>
#include <nvshmem.h>
int main(int argc, char **argv) {
    (void)argv;
    if (argc > 1) { nvshmem_init(); return 0; } /* must not return: no GPU */
    int rc = nvshmemx_init_attr(0, NULL);
    if (rc == 0) { fprintf(stderr, "FAIL: nvshmemx_init_attr succeeded without a GPU\n"); return 1; }
    if (nvshmemx_init_status() != NVSHMEM_STATUS_NOT_INITIALIZED) { fprintf(stderr, "FAIL: status\n"); return 1; }
    printf("status %d\n", rc);
    return 0;
}
C
"${cc[@]}" "$out/no_gpu.c" -o "$out/no_gpu" -lrshmem
"$out/no_gpu" > "$out/no_gpu.out" 2> "$out/no_gpu.err"
grep -q "nvshmemx_init_attr: .*no usable GPU" "$out/no_gpu.err" || { echo "FAIL: no clear message:"; cat "$out/no_gpu.err"; exit 1; }
grep -q "^status 5$" "$out/no_gpu.out" || { echo "FAIL: want NVSHMEMX_ERROR_GPU_NOT_SELECTED (5), got: $(cat "$out/no_gpu.out")"; exit 1; }
echo "ok   nvshmemx_init_attr without a GPU: $(head -c 160 "$out/no_gpu.err")"
set +e
"$out/no_gpu" init 2> "$out/init.err"
rc=$?
set -e
[ "$rc" -ne 0 ] || { echo "FAIL: nvshmem_init returned without a GPU"; exit 1; }
grep -q "nvshmem_init: .*no usable GPU" "$out/init.err" || { echo "FAIL: no clear message:"; cat "$out/init.err"; exit 1; }
[ "$rc" -ne 134 ] || { echo "FAIL: nvshmem_init aborted (SIGABRT)"; exit 1; }
echo "ok   nvshmem_init without a GPU: exit $rc with a message"
