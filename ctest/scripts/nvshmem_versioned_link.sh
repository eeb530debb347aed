#!/usr/bin/env bash
# A program linked against NVIDIA's libnvshmem_host.so.3 runs on rshmem's (issue 21 items 6, 9).
# NVIDIA's library puts every symbol at version node NVSHMEM, so such a program needs that node
# in the object named libnvshmem_host.so.3 and binds nvshmem_*@NVSHMEM only to definitions of
# that version. The program is linked against a shim with NVIDIA's soname and node (and against
# NVIDIA's own library too where pip's nvidia-nvshmem-cu13 is installed), then run with rshmem's
# lib/ on LD_LIBRARY_PATH: it calls the entry points NVSHMEM's device library uses
# (nvshmemid_*) and a few public ones. Without a GPU the start fails, with a message.
source "$(dirname "$0")/../programs/common.sh"
LIB=$PREFIX/lib
cd "$WORK" || exit 1
cat > shim.c <<'EOF'
/* Link-time stand-in for NVIDIA's libnvshmem_host.so.3: its soname and version node only. */
void nvshmemid_hostlib_init_attr(void) {}
void nvshmemid_hostlib_finalize(void) {}
void nvshmemid_init_status(void) {}
void nvshmemx_init_status(void) {}
void nvshmemx_mc_ptr(void) {}
void nvshmemx_vendor_get_version_info(void) {}
EOF
echo 'NVSHMEM { global: nvshmem_*; nvshmemx_*; nvshmemid_*; local: *; };' > shim.map
cat > app.c <<'EOF'
/* Calls the host library as code built with NVIDIA's headers does (its declarations). */
#include <stdio.h>
#include <string.h>
typedef struct { int major, minor, patch; } nvshmemi_version_t;
int nvshmemid_hostlib_init_attr(int requested, int *provided, unsigned int flags, void *attr,
                                nvshmemi_version_t device_lib, void (*cb)(void **, void **));
void nvshmemid_hostlib_finalize(void *device_ctx, void *transport_ctx);
int nvshmemid_init_status(void);
int nvshmemx_init_status(void);
void *nvshmemx_mc_ptr(int team, const void *ptr);
void nvshmemx_vendor_get_version_info(int *major, int *minor, int *patch);

#define EXPECT(cond, ...) do { if (!(cond)) { printf("FAIL %s: ", #cond); printf(__VA_ARGS__); printf("\n"); return 1; } } while (0)

int main(void) {
    int major = 0, minor = 0, patch = 0, provided = -1, x = 0;
    nvshmemx_vendor_get_version_info(&major, &minor, &patch);
    EXPECT(major == 3 && minor == 4, "version %d.%d.%d", major, minor, patch);
    EXPECT(nvshmemid_init_status() == 0 && nvshmemx_init_status() == 0, "status before init %d", nvshmemid_init_status());
    EXPECT(nvshmemx_mc_ptr(0, &x) == NULL, "a multicast address where there is no multicast");
    nvshmemi_version_t old = {2, 11, 0}, current = {3, 4, 5};
    EXPECT(nvshmemid_hostlib_init_attr(2, &provided, 0, NULL, old, NULL) != 0, "a 2.x device library accepted");
    EXPECT(nvshmemid_init_status() == 0, "initialised after a refused start");
    int rc = nvshmemid_hostlib_init_attr(2, &provided, 0, NULL, current, NULL);
    printf("start rc %d provided %d status %d\n", rc, provided, nvshmemid_init_status());
    if (rc == 0) {
        EXPECT(provided >= 2 && nvshmemid_init_status() == 2, "after a start: provided %d status %d", provided, nvshmemid_init_status());
        nvshmemid_hostlib_finalize(NULL, NULL);
        EXPECT(nvshmemid_init_status() == 0, "still initialised after the last finalize");
    }
    printf("resolved and ran\n");
    return 0;
}
EOF
gcc -shared -fPIC -o libnvshmem_host.so.3 shim.c -Wl,-soname,libnvshmem_host.so.3 -Wl,--version-script=shim.map \
    && gcc -std=gnu11 -Wall -o app_shim app.c -L. -l:libnvshmem_host.so.3 || { fail "cannot build the shim or the program"; finish; }
readelf -V app_shim | grep -A1 'File: libnvshmem_host.so.3' | grep -q 'Name: NVSHMEM' \
    && pass "the program requires libnvshmem_host.so.3's NVSHMEM node" || fail "the program carries no NVSHMEM version need"

# check PROGRAM LABEL: run with rshmem's libraries; every symbol resolves and the checks pass.
check() {
    local out
    out=$(env LD_LIBRARY_PATH="$LIB" "./$1" 2>&1)
    if ! grep -q "resolved and ran" <<<"$out"; then fail "$2: $out"; return; fi
    pass "$2 runs on rshmem's libnvshmem_host.so.3"
    grep -q "nvshmemid_hostlib_init_attr: the caller was built with NVSHMEM 2.11.0's device library; rshmem implements the NVSHMEM 3.x API" <<<"$out" \
        && pass "$2: a 2.x device library is refused with its version named" || fail "$2: no version message: $out"
    if grep -q "^start rc 0 " <<<"$out"; then
        pass "$2: started and finalized through nvshmemid_* ($(grep '^start' <<<"$out"))"
    elif grep -q "PE 0: nvshmemid_hostlib_init_attr: .*GPU" <<<"$out"; then
        pass "$2: without a GPU the start fails, naming the routine"
    else
        fail "$2: start neither succeeded nor failed with a GPU message: $out"
    fi
}
check app_shim "linked against a shim of NVIDIA's library"

real=${NVSHMEM_HOST_LIB:-}
for py in python3 /opt/cuda13/bin/python3; do
    [ -n "$real" ] && break
    real=$($py -c 'import nvidia.nvshmem, os; print(os.path.join(nvidia.nvshmem.__path__[0], "lib/libnvshmem_host.so.3"))' 2>/dev/null)
done
if [ -n "$real" ] && [ -f "$real" ]; then
    gcc -std=gnu11 -Wall -o app_real app.c "$real" -Wl,--allow-shlib-undefined && check app_real "linked against NVIDIA's $real" \
        || fail "cannot link against $real"
else
    echo "skip: NVIDIA's libnvshmem_host.so.3 (pip nvidia-nvshmem-cu13) is not installed here"
fi
finish
