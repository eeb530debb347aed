// Prints sizes and field offsets of the rdma-core structs src/ib/sys.rs declares by hand, and the
// values of the constants it declares, from the real headers, so tests/ibgda_layout.rs can
// compare the two.
#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdio>

#define SIZE(T, name) std::printf("size %s %zu\n", name, sizeof(T))
#define FIELD(T, name, f) std::printf("field %s.%s %zu\n", name, #f, offsetof(T, f))
#define CONST(name) std::printf("const %s %llu\n", #name, (unsigned long long)(name))

// ibv_qp_attr.path_mtu is written as a number (clamped to 5 = 4096 bytes): no Rust constant.
static_assert(IBV_MTU_4096 == 5, "mtu enum");

int main() {
    SIZE(ibv_port_attr, "ibv_port_attr");
    FIELD(ibv_port_attr, "ibv_port_attr", state);
    FIELD(ibv_port_attr, "ibv_port_attr", active_mtu);
    FIELD(ibv_port_attr, "ibv_port_attr", gid_tbl_len);
    FIELD(ibv_port_attr, "ibv_port_attr", lid);
    FIELD(ibv_port_attr, "ibv_port_attr", link_layer);
    FIELD(ibv_port_attr, "ibv_port_attr", flags);
    FIELD(ibv_port_attr, "ibv_port_attr", port_cap_flags2);
    SIZE(ibv_mr, "ibv_mr");
    FIELD(ibv_mr, "ibv_mr", addr);
    FIELD(ibv_mr, "ibv_mr", length);
    FIELD(ibv_mr, "ibv_mr", handle);
    FIELD(ibv_mr, "ibv_mr", lkey);
    FIELD(ibv_mr, "ibv_mr", rkey);
    SIZE(ibv_global_route, "ibv_global_route");
    FIELD(ibv_global_route, "ibv_global_route", dgid);
    FIELD(ibv_global_route, "ibv_global_route", flow_label);
    FIELD(ibv_global_route, "ibv_global_route", sgid_index);
    FIELD(ibv_global_route, "ibv_global_route", hop_limit);
    FIELD(ibv_global_route, "ibv_global_route", traffic_class);
    SIZE(ibv_ah_attr, "ibv_ah_attr");
    FIELD(ibv_ah_attr, "ibv_ah_attr", grh);
    FIELD(ibv_ah_attr, "ibv_ah_attr", dlid);
    FIELD(ibv_ah_attr, "ibv_ah_attr", sl);
    FIELD(ibv_ah_attr, "ibv_ah_attr", src_path_bits);
    FIELD(ibv_ah_attr, "ibv_ah_attr", static_rate);
    FIELD(ibv_ah_attr, "ibv_ah_attr", is_global);
    FIELD(ibv_ah_attr, "ibv_ah_attr", port_num);
    SIZE(ibv_qp_cap, "ibv_qp_cap");
    FIELD(ibv_qp_cap, "ibv_qp_cap", max_send_wr);
    FIELD(ibv_qp_cap, "ibv_qp_cap", max_inline_data);
    SIZE(ibv_qp_attr, "ibv_qp_attr");
    FIELD(ibv_qp_attr, "ibv_qp_attr", qp_state);
    FIELD(ibv_qp_attr, "ibv_qp_attr", path_mtu);
    FIELD(ibv_qp_attr, "ibv_qp_attr", qkey);
    FIELD(ibv_qp_attr, "ibv_qp_attr", rq_psn);
    FIELD(ibv_qp_attr, "ibv_qp_attr", sq_psn);
    FIELD(ibv_qp_attr, "ibv_qp_attr", dest_qp_num);
    FIELD(ibv_qp_attr, "ibv_qp_attr", qp_access_flags);
    FIELD(ibv_qp_attr, "ibv_qp_attr", cap);
    FIELD(ibv_qp_attr, "ibv_qp_attr", ah_attr);
    FIELD(ibv_qp_attr, "ibv_qp_attr", alt_ah_attr);
    FIELD(ibv_qp_attr, "ibv_qp_attr", pkey_index);
    FIELD(ibv_qp_attr, "ibv_qp_attr", max_rd_atomic);
    FIELD(ibv_qp_attr, "ibv_qp_attr", max_dest_rd_atomic);
    FIELD(ibv_qp_attr, "ibv_qp_attr", min_rnr_timer);
    FIELD(ibv_qp_attr, "ibv_qp_attr", port_num);
    FIELD(ibv_qp_attr, "ibv_qp_attr", timeout);
    FIELD(ibv_qp_attr, "ibv_qp_attr", retry_cnt);
    FIELD(ibv_qp_attr, "ibv_qp_attr", rnr_retry);
    FIELD(ibv_qp_attr, "ibv_qp_attr", alt_timeout);
    FIELD(ibv_qp_attr, "ibv_qp_attr", rate_limit);
    SIZE(ibv_qp_init_attr, "ibv_qp_init_attr");
    FIELD(ibv_qp_init_attr, "ibv_qp_init_attr", send_cq);
    FIELD(ibv_qp_init_attr, "ibv_qp_init_attr", recv_cq);
    FIELD(ibv_qp_init_attr, "ibv_qp_init_attr", srq);
    FIELD(ibv_qp_init_attr, "ibv_qp_init_attr", cap);
    FIELD(ibv_qp_init_attr, "ibv_qp_init_attr", qp_type);
    FIELD(ibv_qp_init_attr, "ibv_qp_init_attr", sq_sig_all);
    // We declare only the head of struct ibv_qp; its size row is the head's end (qp_type).
    std::printf("size ibv_qp %zu\n", offsetof(ibv_qp, qp_type) + sizeof(ibv_qp_type));
    FIELD(ibv_qp, "ibv_qp", handle);
    FIELD(ibv_qp, "ibv_qp", qp_num);
    FIELD(ibv_qp, "ibv_qp", state);
    FIELD(ibv_qp, "ibv_qp", qp_type);
    // ibv_srq_init_attr = { srq_context; ibv_srq_attr attr } declared flat on the Rust side.
    SIZE(ibv_srq_init_attr, "ibv_srq_init_attr");
    std::printf("field ibv_srq_init_attr.max_wr %zu\n", offsetof(ibv_srq_init_attr, attr) + offsetof(ibv_srq_attr, max_wr));
    std::printf("field ibv_srq_init_attr.max_sge %zu\n", offsetof(ibv_srq_init_attr, attr) + offsetof(ibv_srq_attr, max_sge));
    std::printf("field ibv_srq_init_attr.srq_limit %zu\n", offsetof(ibv_srq_init_attr, attr) + offsetof(ibv_srq_attr, srq_limit));
    SIZE(mlx5dv_devx_uar, "mlx5dv_devx_uar");
    FIELD(mlx5dv_devx_uar, "mlx5dv_devx_uar", reg_addr);
    FIELD(mlx5dv_devx_uar, "mlx5dv_devx_uar", base_addr);
    FIELD(mlx5dv_devx_uar, "mlx5dv_devx_uar", page_id);
    FIELD(mlx5dv_devx_uar, "mlx5dv_devx_uar", mmap_off);
    FIELD(mlx5dv_devx_uar, "mlx5dv_devx_uar", comp_mask);
    SIZE(mlx5dv_devx_umem, "mlx5dv_devx_umem");
    FIELD(mlx5dv_devx_umem, "mlx5dv_devx_umem", umem_id);
    // Every IBV_* constant src/ib/sys.rs declares (and the UAR allocation types).
    CONST(IBV_QPS_RESET);
    CONST(IBV_QPS_INIT);
    CONST(IBV_QPS_RTR);
    CONST(IBV_QPS_RTS);
    CONST(IBV_QPS_ERR);
    CONST(IBV_PORT_DOWN);
    CONST(IBV_PORT_INIT);
    CONST(IBV_PORT_ARMED);
    CONST(IBV_PORT_ACTIVE);
    CONST(IBV_PORT_ACTIVE_DEFER);
    CONST(IBV_QP_STATE);
    CONST(IBV_QP_ACCESS_FLAGS);
    CONST(IBV_QP_PKEY_INDEX);
    CONST(IBV_QP_PORT);
    CONST(IBV_QP_AV);
    CONST(IBV_QP_PATH_MTU);
    CONST(IBV_QP_TIMEOUT);
    CONST(IBV_QP_RETRY_CNT);
    CONST(IBV_QP_RNR_RETRY);
    CONST(IBV_QP_RQ_PSN);
    CONST(IBV_QP_MAX_QP_RD_ATOMIC);
    CONST(IBV_QP_MIN_RNR_TIMER);
    CONST(IBV_QP_SQ_PSN);
    CONST(IBV_QP_MAX_DEST_RD_ATOMIC);
    CONST(IBV_QP_DEST_QPN);
    CONST(IBV_ACCESS_LOCAL_WRITE);
    CONST(IBV_ACCESS_REMOTE_WRITE);
    CONST(IBV_ACCESS_REMOTE_READ);
    CONST(IBV_ACCESS_REMOTE_ATOMIC);
    CONST(IBV_ACCESS_RELAXED_ORDERING);
    CONST(IBV_QPT_RC);
    CONST(IBV_LINK_LAYER_INFINIBAND);
    CONST(IBV_LINK_LAYER_ETHERNET);
    CONST(MLX5DV_UAR_ALLOC_TYPE_BF);
    CONST(MLX5DV_UAR_ALLOC_TYPE_NC);
    return 0;
}
