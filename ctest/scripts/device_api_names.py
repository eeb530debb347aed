#!/usr/bin/env python3
"""Names of the device routines (nvshmem_* / nvshmemx_*) a preprocessed CUDA unit declares.

Reads the output of `nvcc -E -D__CUDA_ARCH__=...` (the device pass, where __device__ has become
__attribute__((device))) and prints, sorted, every nvshmem_/nvshmemx_ function declared or defined
with the device attribute (host-and-device routines included). Used by device_api_audit.sh on
NVSHMEM's headers and on ours; nothing of either is kept.
    device_api_names.py UNIT.ii
"""
import re
import sys

# The device attribute, then (without crossing a ';', '{', '(' or ')') the rest of the
# declaration's specifiers and return type, then the routine's name and its '('.
DECL = re.compile(r"__attribute__\(\(device\)\)"
                  r"((?:\s|__attribute__\(\([\w, ()]*?\)\)|[\w:<>*&,])*?)"
                  r"\b(nvshmemx?_\w+)\s*\(")

def main():
    text = open(sys.argv[1], encoding="utf-8", errors="replace").read()
    for name in sorted({m.group(2) for m in DECL.finditer(text)}):
        print(name)

if __name__ == "__main__":
    main()
