# Sourced by the ctest scripts that need nvcc or NVSHMEM: each function prints a path, or nothing
# when the tool cannot be found (the caller then says SKIPPED).
#   find_nvcc     $NVCC, nvcc on PATH, the one scripts/install-nvcc.sh installs, /usr/local/cuda
#   find_nvshmem  $NVSHMEM_HOME, else the pip package nvidia-nvshmem-cu13 of a python that has it

find_nvcc() {
  if [ -n "${NVCC:-}" ] && [ -x "$NVCC" ]; then echo "$NVCC"; return; fi
  if command -v nvcc >/dev/null 2>&1; then command -v nvcc; return; fi
  if [ -x /opt/cuda13/bin/python ]; then
    local home
    home="$(/opt/cuda13/bin/python -c 'import nvidia.cu13 as m; print(list(m.__path__)[0])' 2>/dev/null || true)"
    if [ -n "$home" ] && [ -x "$home/bin/nvcc" ]; then echo "$home/bin/nvcc"; return; fi
  fi
  if [ -x /usr/local/cuda/bin/nvcc ]; then echo /usr/local/cuda/bin/nvcc; return; fi
}

find_nvshmem() {
  if [ -n "${NVSHMEM_HOME:-}" ] && [ -f "$NVSHMEM_HOME/include/nvshmem.h" ]; then echo "$NVSHMEM_HOME"; return; fi
  local py h
  for py in python3 /opt/cuda13/bin/python /opt/torch/.venv/bin/python3; do
    command -v "$py" >/dev/null 2>&1 || continue
    h="$("$py" -c 'import nvidia.nvshmem as m; print(list(m.__path__)[0])' 2>/dev/null || true)"
    if [ -n "$h" ] && [ -f "$h/include/nvshmem.h" ]; then echo "$h"; return; fi
  done
}
