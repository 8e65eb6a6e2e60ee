/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The one encoder of send WQEs. The kernel's posters (sroce_qp_post.c) and
 * the provider (providers/sroce: ibv_post_send and the ibv_wr_* builders)
 * write every WQE through these, so the ring format of uapi/rdma/sroce-abi.h
 * is written in one place; the engine reads it back through wqe.h.
 *
 * Both sides include this file: it uses the ABI's types and memset()/
 * memcpy() only, no ib_core and no libibverbs. The callers check what is
 * theirs to check (opcode for the QP type, the number of SGEs, address
 * handles) and map their verbs' opcodes; the send flags are the verbs'
 * own, whose values the kernel and libibverbs share (each caller asserts
 * it against SROCE_VERBS_SEND_*).
 */
#ifndef SROCE_WQE_ENC_H
#define SROCE_WQE_ENC_H

#ifdef __KERNEL__
#include <linux/string.h>
#else
#include <string.h>
#endif
#include <linux/types.h>
#include <rdma/sroce-abi.h>

/* IB_SEND_* and IBV_SEND_*: the same bits in the kernel and in userspace. */
#define SROCE_VERBS_SEND_FENCE 1U
#define SROCE_VERBS_SEND_SIGNALED 2U
#define SROCE_VERBS_SEND_SOLICITED 4U
#define SROCE_VERBS_SEND_INLINE 8U
/* Every send flag sroce takes; any other (IP_CSUM among them) is refused. */
#define SROCE_VERBS_SEND_FLAGS                                          \
	(SROCE_VERBS_SEND_FENCE | SROCE_VERBS_SEND_SIGNALED |           \
	 SROCE_VERBS_SEND_SOLICITED | SROCE_VERBS_SEND_INLINE)

/*
 * Whether a work request's send flags may be posted with opcode (enum
 * sroce_wqe_opcode): no flag outside SROCE_VERBS_SEND_FLAGS, and inline
 * only where the requester sends its own data (SENDs and WRITEs), not on
 * a READ, an atomic or a local operation. Both posters refuse the work
 * request at the post (EINVAL) when this is 0, and write no WQE.
 */
static inline int sroce_wqe_flags_ok(__u8 opcode, unsigned int send_flags)
{
	if (send_flags & ~SROCE_VERBS_SEND_FLAGS)
		return 0;
	if (!(send_flags & SROCE_VERBS_SEND_INLINE))
		return 1;
	switch (opcode) {
	case SROCE_WQE_SEND:
	case SROCE_WQE_SEND_IMM:
	case SROCE_WQE_SEND_INV:
	case SROCE_WQE_RDMA_WRITE:
	case SROCE_WQE_RDMA_WRITE_IMM:
		return 1;
	default:
		return 0;
	}
}

/*
 * Starts a WQE: clears its fixed part (the SGEs or inline bytes that
 * follow are written by the calls below), sets opcode, wr_id and the
 * flags the send flags ask for. Inline is not one of them: only a WQE
 * that carries data takes it, from sroce_wqe_enc_inline_begin().
 */
static inline void sroce_wqe_enc_start(struct sroce_send_wqe *wqe, __u8 opcode,
				       __u64 wr_id, unsigned int send_flags)
{
	memset(wqe, 0, sizeof(*wqe));
	wqe->ctrl.opcode = opcode;
	wqe->ctrl.wr_id = wr_id;
	if (send_flags & SROCE_VERBS_SEND_SIGNALED)
		wqe->ctrl.flags |= SROCE_WQE_SIGNALED;
	if (send_flags & SROCE_VERBS_SEND_FENCE)
		wqe->ctrl.flags |= SROCE_WQE_FENCE;
	if (send_flags & SROCE_VERBS_SEND_SOLICITED)
		wqe->ctrl.flags |= SROCE_WQE_SOLICITED;
}

/*
 * The immediate of SEND_IMM and RDMA_WRITE_IMM, as it goes on the wire
 * (big-endian, passed through unchanged), or the key that LOCAL_INV and
 * SEND_INV invalidate (host order).
 */
static inline void sroce_wqe_enc_imm(struct sroce_send_wqe *wqe, __u32 imm)
{
	wqe->ctrl.imm_data = imm;
}

/* The remote address of an RDMA WRITE or READ. */
static inline void sroce_wqe_enc_raddr(struct sroce_send_wqe *wqe,
				       __u64 remote_addr, __u32 rkey)
{
	wqe->raddr.remote_addr = remote_addr;
	wqe->raddr.rkey = rkey;
}

/*
 * An atomic's target and operands: swap_add is the value swapped in by
 * COMPARE_SWAP or added by FETCH_ADD; compare is COMPARE_SWAP's only.
 */
static inline void sroce_wqe_enc_atomic(struct sroce_send_wqe *wqe,
					__u64 remote_addr, __u32 rkey,
					__u64 swap_add, __u64 compare)
{
	sroce_wqe_enc_raddr(wqe, remote_addr, rkey);
	wqe->atomic.swap_add = swap_add;
	wqe->atomic.compare = compare;
}

/*
 * An ATOMIC_WRITE's target and the 8 bytes at value, copied as they are in
 * memory (the responder stores them so, in one access).
 */
static inline void sroce_wqe_enc_atomic_write(struct sroce_send_wqe *wqe,
					      __u64 remote_addr, __u32 rkey,
					      const void *value)
{
	sroce_wqe_enc_raddr(wqe, remote_addr, rkey);
	memcpy(&wqe->atomic.swap_add, value, sizeof(wqe->atomic.swap_add));
}

/* A UD destination: the address handle's vector, QPN and Q_Key. */
static inline void sroce_wqe_enc_ud(struct sroce_send_wqe *wqe,
				    const struct sroce_wqe_ud *av,
				    __u32 remote_qpn, __u32 remote_qkey)
{
	wqe->ud = *av;
	wqe->ud.remote_qpn = remote_qpn;
	wqe->ud.remote_qkey = remote_qkey;
}

/* A type 2 window's bind: no data segment follows. */
static inline void sroce_wqe_enc_bind(struct sroce_send_wqe *wqe, __u64 addr,
				      __u64 length, __u32 rkey, __u32 access,
				      __u32 mr_key)
{
	wqe->bind.addr = addr;
	wqe->bind.length = length;
	wqe->bind.key = rkey;
	wqe->bind.access = access;
	wqe->bind.mr_key = mr_key;
}

/* A fast registration (kernel posters only): no data segment follows. */
static inline void sroce_wqe_enc_reg(struct sroce_send_wqe *wqe, __u64 iova,
				     __u64 length, __u32 key, __u32 access,
				     __u32 page_size)
{
	wqe->reg.addr = iova;
	wqe->reg.length = length;
	wqe->reg.key = key;
	wqe->reg.access = access;
	wqe->reg.page_size = page_size;
}

/*
 * Appends a gather entry; the caller has checked the count against the
 * QP's max_send_sge, which the ring's WQE size holds.
 */
static inline void sroce_wqe_enc_sge(struct sroce_send_wqe *wqe, __u64 addr,
				     __u32 length, __u32 lkey)
{
	struct sroce_sge *sge = &wqe->sge[wqe->ctrl.num_sge++];

	sge->addr = addr;
	sge->length = length;
	sge->lkey = lkey;
}

/* The data follows inline, in place of gather entries (none, maybe). */
static inline void sroce_wqe_enc_inline_begin(struct sroce_send_wqe *wqe)
{
	wqe->ctrl.flags |= SROCE_WQE_INLINE;
}

/*
 * Appends len bytes of inline data after those already there; 0, or -1
 * (and nothing written) if they would not fit in max_inline, the QP's
 * inline size that the ring's WQE size holds. No sum can wrap:
 * inline_len never exceeds max_inline.
 */
static inline int sroce_wqe_enc_inline(struct sroce_send_wqe *wqe,
				       const void *data, __u32 len,
				       __u32 max_inline)
{
	__u32 off = wqe->ctrl.inline_len;

	if (off > max_inline || len > max_inline - off)
		return -1;
	sroce_wqe_enc_inline_begin(wqe);
	if (len)
		memcpy((__u8 *)wqe->sge + off, data, len);
	wqe->ctrl.inline_len = off + len;
	return 0;
}

#endif /* SROCE_WQE_ENC_H */
