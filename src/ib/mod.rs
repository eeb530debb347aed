//! rdma-core (libibverbs + mlx5dv), loaded at run time. Placeholder until the layer lands.
