#!/usr/bin/env bash
# Regenerates the committed PTX of rshmem's own collective kernels (src/cuda/kernels/*.cu ->
# src/cuda/generated/*.ptx) with nvcc 13.0 from PyPI (scripts/install-nvcc.sh); `--check` only
# verifies that the committed files are what the sources give (CI), without touching them.
#
# Target: -arch=compute_80 (virtual). The library has no CUDA compiler at build time, so it
# ships PTX and the driver compiles it for the GPU at hand (Ampere, Hopper, Blackwell, ...).
# compute_80 is the oldest architecture with native bfloat16 conversions (half the code of
# the emulated ones, so less JIT time on first use) and covers every NVLink data-centre GPU
# since A100; nothing here needs Hopper features. nvcc 13 writes `.version 9.0`, which only
# CUDA 13 drivers accept; the kernels use nothing newer than PTX ISA 7.8 (CUDA 11.8:
# __grid_constant__ parameters, ld.acquire/st.release at system scope), so the version line is
# lowered to 7.8 and ptxas checks that the result assembles for sm_80 and sm_90.
# ll.ptx is compiled from the device library (device/): a change there needs this script run
# again (CI's --check says so when it was not).
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-write}"
dir=src/cuda/kernels
generated=src/cuda/generated
kinds="u8 u16 u32 u64 i8 i16 i32 i64 f16 bf16 f32 f64"

home="$(bash scripts/install-nvcc.sh 2>/dev/null)"
nvcc="$home/bin/nvcc"
ptxas="$home/bin/ptxas"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

gen() { # source, output, extra flags...
  local src="$1" dst="$2"; shift 2
  "$nvcc" -arch=compute_80 -ptx -std=c++17 -O3 "$@" "$dir/$src" -o "$out/raw.ptx"
  # Internal (static) functions are named _INTERNAL_<hash of the source's path>_...: the hash is
  # zeroed so that every checkout generates the same file (names stay unique within the module).
  # nvcc 13 may mark a vector parameter load of which some bytes go unused with `.pragma
  # "used_bytes_mask"` (PTX ISA 8.3, an optimisation hint): dropped, for the 7.8 version line.
  sed -e 's/^\.version 9\.0$/.version 7.8/' -e 's/_INTERNAL_[0-9a-f]\{8\}_/_INTERNAL_00000000_/g' \
    -e '/^[[:space:]]*\.pragma "used_bytes_mask [0-9]*";$/d' "$out/raw.ptx" > "$out/$dst"
  grep -q '^\.version 7\.8$' "$out/$dst" || { echo "gen_ptx: unexpected PTX version in $dst" >&2; exit 1; }
  for arch in sm_80 sm_90; do "$ptxas" -arch=$arch "$out/$dst" -o /dev/null; done
}

gen coll.cu coll.ptx
gen stream.cu stream.ptx
for k in $kinds; do gen reduce.cu "reduce_$k.ptx" -DRK_KIND="$k"; done
# ll.cu is built from the device library itself: its headers laid out as installed.
mkdir -p "$out/inc/rshmem"
cp include/*.h "$out/inc/" && cp include/rshmem/rshmem_abi.h "$out/inc/rshmem/" && cp -r device "$out/inc/rshmem/device"
gen ll.cu ll.ptx -I"$out/inc"
gen proxy.cu proxy.ptx -I"$out/inc"

status=0
for f in coll.ptx stream.ptx ll.ptx proxy.ptx $(for k in $kinds; do echo "reduce_$k.ptx"; done); do
  if [ "$mode" = "--check" ]; then
    if ! cmp -s "$out/$f" "$generated/$f"; then
      echo "gen_ptx: $generated/$f is not what $dir/*.cu give; run scripts/gen_ptx.sh and commit" >&2
      status=1
    fi
  else
    cp "$out/$f" "$generated/$f"
  fi
done
[ "$mode" = "--check" ] && [ $status -eq 0 ] && echo "collective kernels PTX: up to date"
exit $status
