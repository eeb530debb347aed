/* rshmem device library, IBGDA route: the device RMA / AMO / signal / quiet / fence / barrier
 * routines send their operations as mlx5 WQEs (ibgda_post.h) toward every peer that is not
 * reachable by loads and stores (NVSHMEM_DISABLE_P2P=1). Included by rshmem_p2p.cuh; the public
 * routines reach it through rshmem_remote.cuh (rshmemi_remote_*), which picks it by the PE's
 * route byte.
 *
 * The route is compiled in only when the program defines RSHMEM_IBGDA_ROUTE (nvcc
 * -DRSHMEM_IBGDA_ROUTE; rshmem_remote.cuh tests it). Why not always: a kernel needs registers for the largest device function
 * it can reach plus what its callers keep live across the call (ptxas allocates across calls in
 * one unit), and with the route an RMA needs 54-76 per thread, a collective 94-130; a P2P-only
 * kernel of 1024 threads per block (at most 64 registers each) would no longer launch. Nothing in
 * a header can cap a device function: out-of-line pieces, indirect calls and nv_abi preserve
 * counts were tried, and ptxas, uncapped, always spends more. A kernel of more than 480 threads
 * that uses the route says __launch_bounds__(threads), which caps it (ctest/ibgda/gpu_bounds.cu).
 * Without the route, a kernel that addresses a peer reached only through IBGDA stops with a
 * message saying to rebuild with -DRSHMEM_IBGDA_ROUTE (never a silent P2P store).
 *
 * Semantics on this route (see DESIGN.md §5):
 *   p               one inline WQE; lanes of a warp writing consecutive words of one PE share
 *                   one inline WQE per 192 bytes (ibgda_coalesce.h)
 *   put, put_nbi    inline when small; an RDMA WRITE when the NIC may read the source (the
 *                   symmetric heap, or a buffer registered by nvshmemx_buffer_register; the
 *                   call waits for its completion, so the source may be reused: the _nbi
 *                   forms wait too); otherwise the bytes travel inline, 192 per WQE
 *   get, g          an RDMA READ, waited for; into memory neither in the heap nor registered
 *                   8 bytes at a time through the thread's landing slot
 *   AMOs            one atomic WQE; fetching forms wait for the old value
 *   put_signal      the data, then the signal atomic on the same QP (the NIC keeps their order)
 *   quiet           every QP of this PE that has carried work has completed it
 * Transport: RC QPs per remote PE, or DC initiators shared by all targets
 * (NVSHMEM_IBGDA_NUM_RC_PER_PE=0); see ibgda_pe.h.
 *   fence           a fenced NOP on the QPs this thread uses
 *   barrier         quiet, then the barrier counter add as an atomic WQE
 * Errors (an error CQE, an address outside the heap) print what failed, from which PE to which,
 * and stop the kernel (__trap), like the device argument checks. */
#ifndef RSHMEM_IBGDA_DEVICE_CUH
#define RSHMEM_IBGDA_DEVICE_CUH

#include "rshmem/device/ibgda/ibgda_pe.h"

RSHMEMI_DEV rshmem_ibgda_state *rshmemi_ibgda() { return (rshmem_ibgda_state *)RSHMEMI_STATE.ibgda; }

RSHMEMI_DEV const char *rshmemi_ibgda_opcode_name(unsigned op) {
    switch (op) {
        case RSHMEM_MLX5_OPCODE_NOP: return "NOP";
        case RSHMEM_MLX5_OPCODE_RDMA_WRITE: return "RDMA WRITE (put)";
        case RSHMEM_MLX5_OPCODE_RDMA_READ: return "RDMA READ (get)";
        case RSHMEM_MLX5_OPCODE_ATOMIC_CS: return "ATOMIC compare-swap";
        case RSHMEM_MLX5_OPCODE_ATOMIC_FA: return "ATOMIC fetch-add";
        case RSHMEM_MLX5_OPCODE_ATOMIC_MASKED_CS: return "ATOMIC masked compare-swap";
        case RSHMEM_MLX5_OPCODE_ATOMIC_MASKED_FA: return "ATOMIC masked fetch-add";
        default: return "WQE";
    }
}
RSHMEMI_DEV const char *rshmemi_ibgda_syndrome_name(unsigned s) {
    switch (s) {
        case 0x01: return "local length error";
        case 0x02: return "local QP operation error (malformed WQE)";
        case 0x04: return "local protection error (local address or key not registered)";
        case 0x05: return "flushed after an earlier error";
        case 0x12: return "remote invalid request (misaligned atomic?)";
        case 0x13: return "remote access error (remote address or key not registered)";
        case 0x14: return "remote operation error";
        case 0x15: return "transport retry counter exceeded (the target never answered)";
        default: return "error";
    }
}
/* The software HCA model's vendor syndromes (RSHMEM_IBGDA_MODEL_VENDOR_*), else "". */
RSHMEMI_DEV const char *rshmemi_ibgda_vendor_note(unsigned v) {
    switch (v) {
        case RSHMEM_IBGDA_MODEL_VENDOR_DC_KEY: return ": the DC target rejected the DC access key";
        case RSHMEM_IBGDA_MODEL_VENDOR_NO_DCT: return ": no DC target with that number at that address (LID)";
        default: return "";
    }
}

/* Reports a failed IBGDA operation and stops the kernel. */
static __device__ __noinline__ void rshmemi_ibgda_report(int rc, const char *who, int pe, const void *addr, size_t bytes) {
    const RshmemDeviceState &s = RSHMEMI_STATE;
    if (rc == rshmem_ibgda::ERR_ARGUMENT) {
        printf("rshmem: %s: PE %d to PE %d over IBGDA: address %p (%llu bytes) is not inside the symmetric heap "
               "(or not aligned to its size); the NIC reaches only symmetric memory\n",
               who, s.mype, pe, addr, (unsigned long long)bytes);
        __trap();
    }
    const rshmem_ibgda_state *st = rshmemi_ibgda();
    rshmem_ibgda_qp *qp = rshmem_ibgda::failed_qp(st);
    if (qp && qp->kind == RSHMEM_IBGDA_QP_DCI)
        printf("rshmem: %s: IBGDA %s from PE %d to PE %d over DC (DCT 0x%06x at LID %u) failed: %s%s (CQE syndrome "
               "0x%02x, vendor syndrome 0x%02x, DCI 0x%06x, WQE index %u; %u error CQE(s))\n",
               who, rshmemi_ibgda_opcode_name(qp->err_opcode), s.mype, rshmem_ibgda::dct_owner(st, qp->err_rlid, qp->err_dct),
               qp->err_dct, (unsigned)qp->err_rlid, rshmemi_ibgda_syndrome_name(qp->err_syndrome),
               rshmemi_ibgda_vendor_note(qp->err_vendor), qp->err_syndrome, qp->err_vendor, qp->qpn, qp->err_wqe_index,
               qp->err_count);
    else if (qp)
        printf("rshmem: %s: IBGDA %s from PE %d to PE %d failed: %s%s (CQE syndrome 0x%02x, vendor syndrome 0x%02x, "
               "QP 0x%06x, WQE index %u; %u error CQE(s))\n",
               who, rshmemi_ibgda_opcode_name(qp->err_opcode), s.mype, (int)qp->peer_pe,
               rshmemi_ibgda_syndrome_name(qp->err_syndrome), rshmemi_ibgda_vendor_note(qp->err_vendor), qp->err_syndrome,
               qp->err_vendor, qp->qpn, qp->err_wqe_index, qp->err_count);
    else
        printf("rshmem: %s: IBGDA operation from PE %d to PE %d failed (status %d)\n", who, s.mype, pe, rc);
    __trap();
}
RSHMEMI_DEV void rshmemi_ibgda_fail(int rc, const char *who, int pe, const void *addr, size_t bytes) {
    if (rc != rshmem_ibgda::OK) rshmemi_ibgda_report(rc, who, pe, addr, bytes);
}

/* The bodies are out of line (__noinline__) and typed only by size: each translation unit
 * compiles the posting path a handful of times, not once per routine and type, and the P2P
 * routines keep their register budget (the IBGDA branch is a call). */
#define RSHMEMI_IBGDA_FN_OOL static __device__ __noinline__

RSHMEMI_IBGDA_FN_OOL void rshmemi_ibgda_put_bytes(void *dest, const void *src, size_t bytes, int pe, const char *who) {
    rshmemi_ibgda_fail(rshmem_ibgda::put(rshmemi_ibgda(), dest, src, bytes, (uint32_t)pe, true), who, pe, dest, bytes);
}
RSHMEMI_IBGDA_FN_OOL void rshmemi_ibgda_get_bytes(void *dest, const void *src, size_t bytes, int pe, const char *who) {
    rshmemi_ibgda_fail(rshmem_ibgda::getmem(rshmemi_ibgda(), dest, src, bytes, (uint32_t)pe), who, pe, src, bytes);
}
RSHMEMI_IBGDA_FN_OOL void rshmemi_ibgda_put_signal_bytes(void *dest, const void *src, size_t bytes, uint64_t *sig,
                                                         uint64_t signal, int sig_op, int pe, const char *who) {
    rshmemi_ibgda_fail(rshmem_ibgda::put_signal(rshmemi_ibgda(), dest, src, bytes, sig, signal, sig_op == NVSHMEM_SIGNAL_ADD,
                                                (uint32_t)pe, true),
                       who, pe, dest, bytes);
}
/* p of a 1, 2, 4 or 8-byte value given by its bits (little-endian); lanes of a warp writing
 * consecutive words share inline WQEs (ibgda_coalesce.h). */
RSHMEMI_IBGDA_FN_OOL void rshmemi_ibgda_p_bits(void *dest, uint64_t bits, uint32_t size, int pe, const char *who) {
    rshmemi_ibgda_fail(rshmem_ibgda::p_bits(rshmemi_ibgda(), dest, bits, size, (uint32_t)pe), who, pe, dest, size);
}
RSHMEMI_IBGDA_FN_OOL uint64_t rshmemi_ibgda_g_bits(const void *src, uint32_t size, int pe, const char *who) {
    uint64_t v = 0;
    rshmemi_ibgda_fail(rshmem_ibgda::getmem(rshmemi_ibgda(), &v, src, size, (uint32_t)pe), who, pe, src, size);
    return v;
}
/* An AMO on a 4- or 8-byte word, operands and result by their bits. */
RSHMEMI_IBGDA_FN_OOL uint64_t rshmemi_ibgda_amo_bits(int op, void *dest, uint64_t value, uint64_t cond, uint32_t size, int pe,
                                                     const char *who) {
    const rshmem_ibgda_state *st = rshmemi_ibgda();
    int rc;
    uint64_t old = 0;
    if (size == 8) {
        rc = rshmem_ibgda::amo<uint64_t>(st, (rshmem_ibgda::amo_op)op, (uint64_t *)dest, value, cond, (uint32_t)pe, &old);
    } else {
        uint32_t o32 = 0;
        rc = rshmem_ibgda::amo<uint32_t>(st, (rshmem_ibgda::amo_op)op, (uint32_t *)dest, (uint32_t)value, (uint32_t)cond,
                                         (uint32_t)pe, &o32);
        old = o32;
    }
    rshmemi_ibgda_fail(rc, who, pe, dest, size);
    return old;
}
RSHMEMI_IBGDA_FN_OOL void rshmemi_ibgda_quiet_all(const char *who) {
    rshmemi_ibgda_fail(rshmem_ibgda::quiet_all(rshmemi_ibgda()), who, -1, nullptr, 0);
}
RSHMEMI_IBGDA_FN_OOL void rshmemi_ibgda_fence_thread() { rshmem_ibgda::fence_thread(rshmemi_ibgda()); }

/* The group forms, quiet, fence and the barrier's signal are the neutral layer's
 * (rshmem_remote.cuh), which calls the leaves above for PEs reached through IBGDA. */

#endif /* RSHMEM_IBGDA_DEVICE_CUH */
