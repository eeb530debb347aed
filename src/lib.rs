//! rshmem: the OpenSHMEM / NVSHMEM programming model as a C-ABI shared library.
//! Layers (dependencies point down only): `capi` → `runtime` → `heap`, `bootstrap` → `sys`.
//! See ../shared/DESIGN.md (and README.md) for the architecture.

pub mod abi;
pub mod bootstrap;
pub mod capi;
pub mod cuda;
pub mod env;
pub mod error;
// Multi-host (issue 18): libfabric layer, node identity and the transport seam.
pub mod fabric;
pub mod heap;
pub mod proxy;
// GPU-initiated InfiniBand (issue 4): rdma-core layer and IBGDA descriptors / HCA model.
pub mod ib;
pub mod ibgda;
pub mod log;
pub mod runtime;
pub mod sys;
pub mod transport;
