#!/usr/bin/env bash
# make check-exports: librshmem.so exports API symbols only, NVSHMEM's names at NVIDIA's version
# node NVSHMEM and all others at RSHMEM_0 (src/capi/librshmem.map); libnvshmem_host.so.3 defines
# the NVSHMEM node and no routine (scripts/nvshmem_host_alias.map). Where NVIDIA's own
# libnvshmem_host.so.3 is at hand (pip nvidia-nvshmem-cu13, or NVSHMEM_HOST_LIB=path), every
# symbol both export must carry the same version there and here.
set -eu
export LC_ALL=C
TARGET=${1:?usage: check-exports.sh TARGET_DIR}
lib=$TARGET/librshmem.so alias=$TARGET/libnvshmem_host.so.3
defined() { nm -D --defined-only "$1" | awk '$2 ~ /^[TDBRWVi]$/ {print $3}'; }
bad=$(defined "$lib" | awk '
  { split($0, p, "@@"); name = p[1]; ver = p[2] }
  name ~ /^(nvshmem_|nvshmemx_|nvshmemid_)/ { if (ver != "NVSHMEM") print name " at \"" ver "\", want NVSHMEM"; next }
  name ~ /^(shmem_|shmemx_|pshmem_|pshmemx_|rshmem_|oshmem_)/ || name ~ /^(shmalloc|shfree|shrealloc|shmemalign|start_pes|_my_pe|_num_pes|my_pe|num_pes|globalexit)$/ {
    if (ver != "RSHMEM_0") print name " at \"" ver "\", want RSHMEM_0"; next }
  { print name " is not an API symbol" }')
if [ -n "$bad" ]; then echo "librshmem.so exports (src/capi/librshmem.map, scripts/link-gcc):"; echo "$bad" | head; exit 1; fi
echo "exports: API symbols only; nvshmem_/nvshmemx_/nvshmemid_ at NVSHMEM, the rest at RSHMEM_0"

# The profiling interface (OpenSHMEM 1.5 ch. 10): every shmem_/shmemx_ routine has its pshmem_/pshmemx_ name.
names=$(defined "$lib" | sed 's/@.*//' | sort -u)
unprofiled=$(grep -E '^shmemx?_' <<<"$names" | sed 's/^/p/' | comm -23 - <(echo "$names"))
if [ -n "$unprofiled" ]; then
    echo "librshmem.so lacks $(wc -l <<<"$unprofiled") profiling names (scripts/gen_headers.py writes them into src/capi/aliases.ld):"
    echo "$unprofiled" | head; exit 1
fi
echo "profiling interface: all $(grep -cE '^shmemx?_' <<<"$names") shmem_/shmemx_ exports have their pshmem_/pshmemx_ names"

# The LD_PRELOAD swap-in: every routine Open MPI's liboshmem exports (where it is installed) is
# defined here, or a program built with its oshcc binds that one into the never-started OSHMEM.
# Not routines of the API: OSHMEM's internal helpers listed here.
oshmem_internal="shmem_api_logger_output shmem_ds_reset shmem_internal_mutex_alloc shmem_lock_finalize shmem_lock_init"
oshmem=$(ls /usr/lib/*/liboshmem.so.40 /usr/lib64/liboshmem.so.40 2>/dev/null | head -1 || true)
if [ -n "$oshmem" ]; then
    theirs=$(defined "$oshmem" | sed 's/@.*//' | grep -E '^(p?shmemx?_|start_pes$|_?my_pe$|_?num_pes$|shmalloc$|shfree$|shrealloc$|shmemalign$)' | sort -u \
        | comm -23 - <(tr ' ' '\n' <<<"$oshmem_internal" | sort))
    lacking=$(comm -23 <(echo "$theirs") <(echo "$names"))
    if [ -n "$lacking" ]; then
        echo "librshmem.so lacks $(wc -l <<<"$lacking") routines $oshmem exports:"; echo "$lacking" | head; exit 1
    fi
    echo "LD_PRELOAD swap-in: all $(wc -l <<<"$theirs") routines of $oshmem are defined ($(grep -c '^shmemx_' <<<"$theirs") shmemx_)"
else
    echo "Open MPI's liboshmem.so.40 not installed here: comparison with its exports skipped"
fi

readelf -V "$alias" | grep -q 'Name: NVSHMEM$' || { echo "$alias does not define the NVSHMEM version node (scripts/nvshmem_host_alias.map)"; exit 1; }
extra=$(defined "$alias")
[ -z "$extra" ] || { echo "$alias exports routines of its own (it must only define the node): $extra" | head; exit 1; }
echo "libnvshmem_host.so.3: defines the NVSHMEM node, exports no routine of its own"

# What torch 2.11's libtorch_nvshmem.so imports from libnvshmem_host.so.3, all at NVSHMEM (read off
# the 4 x H100 machine, results/gpu-nvidia-programs-2026-11-27): NVSHMEM's device library's host
# entry points among them. Each must be defined at that node, or importing torch fails.
torch_imports="nvshmem_free nvshmem_info_get_version nvshmem_malloc nvshmem_ptr nvshmem_team_n_pes
  nvshmem_team_split_strided nvshmemid_hostlib_finalize nvshmemid_hostlib_init_attr
  nvshmemid_init_status nvshmemx_alltoallmem_on_stream nvshmemx_broadcastmem_on_stream
  nvshmemx_cumodule_init nvshmemx_get_uniqueid nvshmemx_getmem_on_stream nvshmemx_mc_ptr
  nvshmemx_putmem_on_stream nvshmemx_putmem_signal_on_stream nvshmemx_set_attr_uniqueid_args
  nvshmemx_signal_wait_until_on_stream"
missing=$(for s in $torch_imports; do echo "$s@@NVSHMEM"; done | sort | comm -23 - <(defined "$lib" | sort))
[ -z "$missing" ] || { echo "librshmem.so lacks what torch's libtorch_nvshmem.so imports: $missing" | head; exit 1; }
echo "torch's libtorch_nvshmem.so: all $(echo $torch_imports | wc -w) imports defined at NVSHMEM"

real=${NVSHMEM_HOST_LIB:-$(python3 -c 'import nvidia.nvshmem, os; print(os.path.join(nvidia.nvshmem.__path__[0], "lib/libnvshmem_host.so.3"))' 2>/dev/null || true)}
if [ -z "$real" ] || [ ! -f "$real" ]; then echo "NVIDIA's libnvshmem_host.so.3 not installed here: version comparison skipped"; exit 0; fi
mismatch=$(join <(defined "$real" | sed 's/@@*/ /' | sort) <(defined "$lib" | sed 's/@@*/ /' | sort) | awk '$2 != $3 {print $1 ": NVIDIA " $2 ", rshmem " $3}')
if [ -n "$mismatch" ]; then echo "versions differ from $real:"; echo "$mismatch" | head; exit 1; fi
common=$(join <(defined "$real" | sed 's/@.*//' | sort) <(defined "$lib" | sed 's/@.*//' | sort) | wc -l)
echo "versions match NVIDIA's $real on all $common symbols both export"
