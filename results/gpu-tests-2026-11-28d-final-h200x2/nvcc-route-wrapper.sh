#!/usr/bin/env bash
# nvcc with the proxy route compiled in; links against a full libcuda stub (every cu* name of cuda.h;
# the real libcuda.so.1 is resolved at run time)
real=/opt/cuda13/lib/python3.11/site-packages/nvidia/cu13/bin/nvcc
for a in "$@"; do case "$a" in -c|-ptx|-cubin) exec "$real" -DRSHMEM_PROXY_ROUTE "$@";; esac; done
exec "$real" -DRSHMEM_PROXY_ROUTE "$@" -L/tmp/nvx2/stub
