// Prints the layout of device/ibgda/ibgda_state.h so tests/ibgda_layout.rs can compare it with
// the Rust owner of these structs (src/abi/ibgda.rs). Also prints the version.
#include <cstddef>
#include <cstdio>

#include "../../device/ibgda/ibgda_state.h"

#define SIZE(T, name) std::printf("size %s %zu\n", name, sizeof(T))
#define FIELD(T, name, f) std::printf("field %s.%s %zu\n", name, #f, offsetof(T, f))

int main() {
    SIZE(rshmem_ibgda_qp, "qp");
    FIELD(rshmem_ibgda_qp, "qp", version);
    FIELD(rshmem_ibgda_qp, "qp", qpn);
    FIELD(rshmem_ibgda_qp, "qp", peer_pe);
    FIELD(rshmem_ibgda_qp, "qp", cqn);
    FIELD(rshmem_ibgda_qp, "qp", log_nwqes);
    FIELD(rshmem_ibgda_qp, "qp", log_ncqes);
    FIELD(rshmem_ibgda_qp, "qp", signal_every);
    FIELD(rshmem_ibgda_qp, "qp", batch);
    FIELD(rshmem_ibgda_qp, "qp", inline_max);
    FIELD(rshmem_ibgda_qp, "qp", kind);
    FIELD(rshmem_ibgda_qp, "qp", flags);
    FIELD(rshmem_ibgda_qp, "qp", sq_buf);
    FIELD(rshmem_ibgda_qp, "qp", sq_dbrec);
    FIELD(rshmem_ibgda_qp, "qp", bf_reg);
    FIELD(rshmem_ibgda_qp, "qp", cq_buf);
    FIELD(rshmem_ibgda_qp, "qp", cq_dbrec);
    FIELD(rshmem_ibgda_qp, "qp", resv_head);
    FIELD(rshmem_ibgda_qp, "qp", ready_head);
    FIELD(rshmem_ibgda_qp, "qp", posted_head);
    FIELD(rshmem_ibgda_qp, "qp", signaled_head);
    FIELD(rshmem_ibgda_qp, "qp", post_lock);
    FIELD(rshmem_ibgda_qp, "qp", fence_pending);
    FIELD(rshmem_ibgda_qp, "qp", completed_head);
    FIELD(rshmem_ibgda_qp, "qp", cq_cons);
    FIELD(rshmem_ibgda_qp, "qp", cq_lock);
    FIELD(rshmem_ibgda_qp, "qp", err_syndrome);
    FIELD(rshmem_ibgda_qp, "qp", err_vendor);
    FIELD(rshmem_ibgda_qp, "qp", err_opcode);
    FIELD(rshmem_ibgda_qp, "qp", err_cqe_opcode);
    FIELD(rshmem_ibgda_qp, "qp", err_wqe_index);
    FIELD(rshmem_ibgda_qp, "qp", err_count);
    FIELD(rshmem_ibgda_qp, "qp", err_dct);
    FIELD(rshmem_ibgda_qp, "qp", err_rlid);
    SIZE(rshmem_ibgda_peer, "peer");
    FIELD(rshmem_ibgda_peer, "peer", heap_base);
    FIELD(rshmem_ibgda_peer, "peer", heap_size);
    FIELD(rshmem_ibgda_peer, "peer", rkey);
    FIELD(rshmem_ibgda_peer, "peer", av_size);
    FIELD(rshmem_ibgda_peer, "peer", av);
    SIZE(rshmem_ibgda_state, "state");
    FIELD(rshmem_ibgda_state, "state", version);
    FIELD(rshmem_ibgda_state, "state", my_pe);
    FIELD(rshmem_ibgda_state, "state", npes);
    FIELD(rshmem_ibgda_state, "state", num_rc_per_pe);
    FIELD(rshmem_ibgda_state, "state", num_dci);
    FIELD(rshmem_ibgda_state, "state", rc_map_by);
    FIELD(rshmem_ibgda_state, "state", dci_map_by);
    FIELD(rshmem_ibgda_state, "state", heap_lkey);
    FIELD(rshmem_ibgda_state, "state", heap_base);
    FIELD(rshmem_ibgda_state, "state", heap_size);
    FIELD(rshmem_ibgda_state, "state", rc_qps);
    FIELD(rshmem_ibgda_state, "state", dci_qps);
    FIELD(rshmem_ibgda_state, "state", peers);
    FIELD(rshmem_ibgda_state, "state", fetch_buf);
    FIELD(rshmem_ibgda_state, "state", fetch_lkey);
    FIELD(rshmem_ibgda_state, "state", fetch_slots);
    FIELD(rshmem_ibgda_state, "state", fetch_next);
    FIELD(rshmem_ibgda_state, "state", num_dct);
    FIELD(rshmem_ibgda_state, "state", num_qps);
    FIELD(rshmem_ibgda_state, "state", dcts);
    FIELD(rshmem_ibgda_state, "state", qp_used);
    FIELD(rshmem_ibgda_state, "state", regs);
    SIZE(rshmem_ibgda_reg, "reg");
    FIELD(rshmem_ibgda_reg, "reg", base);
    FIELD(rshmem_ibgda_reg, "reg", size);
    FIELD(rshmem_ibgda_reg, "reg", lkey);
    SIZE(rshmem_ibgda_regs, "regs");
    FIELD(rshmem_ibgda_regs, "regs", count);
    FIELD(rshmem_ibgda_regs, "regs", reg);
    std::printf("const RSHMEM_IBGDA_STATE_VERSION %u\n", RSHMEM_IBGDA_STATE_VERSION);
    std::printf("const RSHMEM_IBGDA_MAX_REGS %u\n", RSHMEM_IBGDA_MAX_REGS);
    std::printf("const RSHMEM_IBGDA_MODEL_VENDOR_DC_KEY %u\n", RSHMEM_IBGDA_MODEL_VENDOR_DC_KEY);
    std::printf("const RSHMEM_IBGDA_MODEL_VENDOR_NO_DCT %u\n", RSHMEM_IBGDA_MODEL_VENDOR_NO_DCT);
    return 0;
}
