#!/usr/bin/env bash
# libnvshmem_host.so.3 (issue 21 item 6): what nvshmem4py and cuda.pathfinder do to find NVSHMEM's
# host library finds rshmem: dlopen by that name (LD_LIBRARY_PATH), the RTLD_NOLOAD "already
# loaded" probe after LD_PRELOAD, and symbol lookups through its handle, which give librshmem's
# own nvshmem_ routines (one runtime even when librshmem is also linked directly).
source "$(dirname "$0")/../programs/common.sh"
LIB=$PREFIX/lib
[ -f "$LIB/libnvshmem_host.so.3" ] || { fail "no $LIB/libnvshmem_host.so.3 installed"; finish; }
soname=$(readelf -d "$LIB/libnvshmem_host.so.3" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[ "$soname" = libnvshmem_host.so.3 ] && pass "soname libnvshmem_host.so.3" || fail "soname is '$soname'"
probe='
import ctypes, os, sys
mode = sys.argv[1]
if mode == "byname":
    h = ctypes.CDLL("libnvshmem_host.so.3", mode=os.RTLD_NOW | os.RTLD_GLOBAL)
else:
    h = ctypes.CDLL("libnvshmem_host.so.3", mode=os.RTLD_NOLOAD)
r = ctypes.CDLL("librshmem.so.0", mode=os.RTLD_NOLOAD)
names = ["nvshmem_malloc", "nvshmem_init", "nvshmemx_init_attr", "nvshmemx_get_uniqueid", "nvshmemx_barrier_all_on_stream"]
for n in names:
    a, b = ctypes.cast(getattr(h, n), ctypes.c_void_p).value, ctypes.cast(getattr(r, n), ctypes.c_void_p).value
    assert a == b and a, (n, a, b)
major, minor, patch = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
h.nvshmemx_vendor_get_version_info(ctypes.byref(major), ctypes.byref(minor), ctypes.byref(patch))
print("ok %s %d.%d.%d" % (mode, major.value, minor.value, patch.value))
'
out=$(LD_LIBRARY_PATH=$LIB python3 -c "$probe" byname 2>&1)
grep -q "^ok byname 3\.4\." <<<"$out" && pass "dlopen(\"libnvshmem_host.so.3\") gives librshmem's routines ($out)" || fail "by name: $out"
out=$(LD_PRELOAD=$LIB/libnvshmem_host.so.3 python3 -c "$probe" noload 2>&1)
grep -q "^ok noload 3\.4\." <<<"$out" && pass "preloaded, the RTLD_NOLOAD probe finds it ($out)" || fail "preloaded: $out"
finish
