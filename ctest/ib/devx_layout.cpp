// Prints sizes and field offsets of the mlx5dv structs src/ib/sys.rs declares for the DevX path
// (devx_layout_table), and the constants it uses, from the real rdma-core headers, so that
// tests/ib_devx.rs can compare the two.
#include <infiniband/mlx5dv.h>

#include <cstddef>
#include <cstdio>

#define SIZE(T, name) std::printf("size %s %zu\n", name, sizeof(T))
#define FIELD(T, name, f) std::printf("field %s.%s %zu\n", name, #f, offsetof(T, f))
#define CONST(name) std::printf("const %s %llu\n", #name, (unsigned long long)(name))

int main() {
    SIZE(mlx5dv_obj, "mlx5dv_obj");
    FIELD(mlx5dv_obj, "mlx5dv_obj", qp);
    FIELD(mlx5dv_obj, "mlx5dv_obj", cq);
    FIELD(mlx5dv_obj, "mlx5dv_obj", srq);
    FIELD(mlx5dv_obj, "mlx5dv_obj", rwq);
    FIELD(mlx5dv_obj, "mlx5dv_obj", dm);
    FIELD(mlx5dv_obj, "mlx5dv_obj", ah);
    FIELD(mlx5dv_obj, "mlx5dv_obj", pd);
    SIZE(mlx5dv_pd, "mlx5dv_pd");
    FIELD(mlx5dv_pd, "mlx5dv_pd", pdn);
    FIELD(mlx5dv_pd, "mlx5dv_pd", comp_mask);
    SIZE(mlx5dv_cq, "mlx5dv_cq");
    FIELD(mlx5dv_cq, "mlx5dv_cq", buf);
    FIELD(mlx5dv_cq, "mlx5dv_cq", dbrec);
    FIELD(mlx5dv_cq, "mlx5dv_cq", cqe_cnt);
    FIELD(mlx5dv_cq, "mlx5dv_cq", cqe_size);
    FIELD(mlx5dv_cq, "mlx5dv_cq", cq_uar);
    FIELD(mlx5dv_cq, "mlx5dv_cq", cqn);
    FIELD(mlx5dv_cq, "mlx5dv_cq", comp_mask);
    SIZE(mlx5dv_srq, "mlx5dv_srq");
    FIELD(mlx5dv_srq, "mlx5dv_srq", buf);
    FIELD(mlx5dv_srq, "mlx5dv_srq", dbrec);
    FIELD(mlx5dv_srq, "mlx5dv_srq", stride);
    FIELD(mlx5dv_srq, "mlx5dv_srq", head);
    FIELD(mlx5dv_srq, "mlx5dv_srq", tail);
    FIELD(mlx5dv_srq, "mlx5dv_srq", comp_mask);
    FIELD(mlx5dv_srq, "mlx5dv_srq", srqn);
    SIZE(mlx5dv_ah, "mlx5dv_ah");
    FIELD(mlx5dv_ah, "mlx5dv_ah", av);
    FIELD(mlx5dv_ah, "mlx5dv_ah", comp_mask);
    SIZE(mlx5dv_devx_umem_in, "mlx5dv_devx_umem_in");
    FIELD(mlx5dv_devx_umem_in, "mlx5dv_devx_umem_in", addr);
    FIELD(mlx5dv_devx_umem_in, "mlx5dv_devx_umem_in", size);
    FIELD(mlx5dv_devx_umem_in, "mlx5dv_devx_umem_in", access);
    FIELD(mlx5dv_devx_umem_in, "mlx5dv_devx_umem_in", pgsz_bitmap);
    FIELD(mlx5dv_devx_umem_in, "mlx5dv_devx_umem_in", comp_mask);
    FIELD(mlx5dv_devx_umem_in, "mlx5dv_devx_umem_in", dmabuf_fd);
    FIELD(mlx5dv_context_attr, "mlx5dv_context_attr", flags);
    FIELD(mlx5dv_context_attr, "mlx5dv_context_attr", comp_mask);
    CONST(MLX5DV_CONTEXT_FLAGS_DEVX);
    CONST(MLX5DV_OBJ_CQ);
    CONST(MLX5DV_OBJ_SRQ);
    CONST(MLX5DV_OBJ_AH);
    CONST(MLX5DV_OBJ_PD);
    CONST(MLX5DV_UMEM_MASK_DMABUF);
    // The address vector the provider builds is the 48-byte mlx5_wqe_av; nic.rs reads rmac at 20.
    SIZE(mlx5_wqe_av, "mlx5_wqe_av");
    FIELD(mlx5_wqe_av, "mlx5_wqe_av", rmac);
    return 0;
}
