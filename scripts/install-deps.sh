#!/usr/bin/env bash
# Installs what building and testing rshmem needs on a fresh Debian/Ubuntu machine, and nothing
# when it is all there already (so `make run` / `make test` can call it every time).
#   scripts/install-deps.sh          build + test dependencies (Debian packages)
#   scripts/install-deps.sh --ci     also the pinned cbindgen used by the header check
set -euo pipefail

need_pkgs=()
have() { command -v "$1" >/dev/null 2>&1; }
want() { have "$1" || need_pkgs+=("$2"); }

want cc gcc
want c++ g++
want make make
want cmake cmake
want pkg-config pkg-config
want python3 python3
python3 -c 'import venv, ensurepip' 2>/dev/null || need_pkgs+=(python3-venv)   # shmem4py test (ctest/scripts/shmem4py.sh)
python3 -c 'import docutils' 2>/dev/null || need_pkgs+=(python3-docutils)   # rshmem-info -r check (ctest/scripts/info_rest.py)
want mpiexec.hydra mpich            # PMI-1 launcher (bootstrap tests)
[ -e /usr/include/x86_64-linux-gnu/mpich/mpi.h ] || ls /usr/include/*/mpich/mpi.h >/dev/null 2>&1 || need_pkgs+=(libmpich-dev) # MPI_COMM init over MPICH
want oshcc libopenmpi-dev           # Open MPI OSHMEM: LD_PRELOAD tests and the CPU reference
want oshrun openmpi-bin
want strace strace
want fi_info libfabric-bin          # libfabric1 (the fabric layer loads it) + fi_info for diagnosis
want ip iproute2                    # namespaced test hosts (scripts/netns-hosts.sh)
want gdb gdb                        # PE stacks when a multi-host run nears its limit (ctest/multihost/suite.sh)
want groff groff-base              # man page check (ctest/scripts/man_pages.sh)
want man man-db                     # the same: `man NAME` for every installed program
# A throw-away Slurm cluster for the srun tests (scripts/slurm-netns.sh; ~1 min to install).
want srun slurm-client
for d in slurmctld slurmd munged; do [ -x /usr/sbin/$d ] || need_pkgs+=("${d/munged/munge}"); done
{ [ -e /usr/include/pmix.h ] || ls /usr/lib/*/pmix2/include/pmix.h >/dev/null 2>&1; } || need_pkgs+=(libpmix-dev)
[ -e /usr/include/rdma/fabric.h ] || need_pkgs+=(libfabric-dev)   # a stranger's own endpoint (ctest/multihost/fabric_attacker.c)
[ -e /usr/include/infiniband/mlx5dv.h ] || need_pkgs+=(libibverbs-dev)   # IBGDA layout tests (tests/ibgda_layout.rs)

if [ ${#need_pkgs[@]} -gt 0 ]; then
  echo "install-deps: installing ${need_pkgs[*]}"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >/dev/null
fi

have cargo || { echo "install-deps: Rust (cargo) is required: https://rustup.rs" >&2; exit 1; }
# `make lint` (part of make test) runs rustfmt and clippy.
if ! cargo clippy --version >/dev/null 2>&1; then
  have rustup && rustup component add clippy >/dev/null 2>&1 \
    || { echo "install-deps: cargo clippy is required (rustup component add clippy)" >&2; exit 1; }
fi
if ! cargo fmt --version >/dev/null 2>&1; then
  have rustup && rustup component add rustfmt >/dev/null 2>&1 \
    || { echo "install-deps: cargo fmt is required (rustup component add rustfmt)" >&2; exit 1; }
fi

if [ "${1:-}" = "--ci" ]; then
  if ! cbindgen --version 2>/dev/null | grep -q "0.29.4"; then
    cargo install --locked cbindgen --version 0.29.4 >/dev/null 2>&1
  fi
fi
