// SPDX-License-Identifier: GPL-2.0
/*
 * The packets of an RC message (see include/sroce/rc_pkt.h).
 */
#include <linux/kernel.h>
#include <rdma/sroce-abi.h>
#include <sroce/psn.h>
#include <sroce/rc_pkt.h>
#include <sroce/roce_hdr.h>

/* Opcodes of a SEND or WRITE family by position: first, middle, last, only. */
struct sroce_rc_family {
	u8 first, middle, last, only;
};

static const struct sroce_rc_family sroce_rc_families[] = {
	[SROCE_WQE_SEND] = { IB_OPCODE_SEND_FIRST, IB_OPCODE_SEND_MIDDLE,
			     IB_OPCODE_SEND_LAST, IB_OPCODE_SEND_ONLY },
	[SROCE_WQE_SEND_IMM] = { IB_OPCODE_SEND_FIRST, IB_OPCODE_SEND_MIDDLE,
				 IB_OPCODE_SEND_LAST_WITH_IMMEDIATE,
				 IB_OPCODE_SEND_ONLY_WITH_IMMEDIATE },
	[SROCE_WQE_RDMA_WRITE] = { IB_OPCODE_RDMA_WRITE_FIRST, IB_OPCODE_RDMA_WRITE_MIDDLE,
				   IB_OPCODE_RDMA_WRITE_LAST, IB_OPCODE_RDMA_WRITE_ONLY },
	[SROCE_WQE_RDMA_WRITE_IMM] = { IB_OPCODE_RDMA_WRITE_FIRST,
				       IB_OPCODE_RDMA_WRITE_MIDDLE,
				       IB_OPCODE_RDMA_WRITE_LAST_WITH_IMMEDIATE,
				       IB_OPCODE_RDMA_WRITE_ONLY_WITH_IMMEDIATE },
	[SROCE_WQE_SEND_INV] = { IB_OPCODE_SEND_FIRST, IB_OPCODE_SEND_MIDDLE,
				 IB_OPCODE_SEND_LAST_WITH_INVALIDATE,
				 IB_OPCODE_SEND_ONLY_WITH_INVALIDATE },
};

static u8 sroce_rc_family_opcode(const struct sroce_rc_family *f, u32 pkt,
				 u32 npkts)
{
	if (npkts == 1)
		return f->only;
	if (!pkt)
		return f->first;
	return pkt + 1 == npkts ? f->last : f->middle;
}

u8 sroce_rc_req_opcode(u8 wqe_opcode, u32 pkt, u32 npkts)
{
	if (!npkts || pkt >= npkts)
		return SROCE_RC_NO_OPCODE;
	switch (wqe_opcode) {
	case SROCE_WQE_SEND:
	case SROCE_WQE_SEND_IMM:
	case SROCE_WQE_RDMA_WRITE:
	case SROCE_WQE_RDMA_WRITE_IMM:
	case SROCE_WQE_SEND_INV:
		return sroce_rc_family_opcode(&sroce_rc_families[wqe_opcode],
					      pkt, npkts);
	case SROCE_WQE_RDMA_READ:
		return pkt ? SROCE_RC_NO_OPCODE : IB_OPCODE_RDMA_READ_REQUEST;
	case SROCE_WQE_ATOMIC_CMP_SWP:
		return pkt ? SROCE_RC_NO_OPCODE : IB_OPCODE_COMPARE_SWAP;
	case SROCE_WQE_ATOMIC_FETCH_ADD:
		return pkt ? SROCE_RC_NO_OPCODE : IB_OPCODE_FETCH_ADD;
	case SROCE_WQE_ATOMIC_WRITE:
		return pkt ? SROCE_RC_NO_OPCODE : SROCE_OPCODE_ATOMIC_WRITE;
	default:
		return SROCE_RC_NO_OPCODE;
	}
}

u8 sroce_rc_read_resp_opcode(u32 pkt, u32 npkts)
{
	static const struct sroce_rc_family read = {
		IB_OPCODE_RDMA_READ_RESPONSE_FIRST, IB_OPCODE_RDMA_READ_RESPONSE_MIDDLE,
		IB_OPCODE_RDMA_READ_RESPONSE_LAST, IB_OPCODE_RDMA_READ_RESPONSE_ONLY,
	};

	if (!npkts || pkt >= npkts)
		return SROCE_RC_NO_OPCODE;
	return sroce_rc_family_opcode(&read, pkt, npkts);
}

bool sroce_rc_read_resp_opcode_ok(u8 opcode, u32 pkt, u32 npkts)
{
	if (opcode == SROCE_RC_NO_OPCODE || pkt >= npkts)
		return false;
	return opcode == sroce_rc_read_resp_opcode(pkt, npkts) ||
	       opcode == sroce_rc_read_resp_opcode(0, npkts - pkt);
}

bool sroce_rc_read_replay_ok(const struct sroce_rc_read *orig,
			     const struct sroce_rc_read *dup, u32 mtu,
			     u32 *off)
{
	s32 idx = sroce_psn_diff(dup->psn, orig->psn);
	u64 o;

	if (idx < 0 || (u32)idx >= sroce_rc_npkts(orig->len, mtu))
		return false;
	o = (u64)idx * mtu;
	if (dup->rkey != orig->rkey || o > orig->len ||
	    dup->va != orig->va + o || dup->len != orig->len - o)
		return false;
	*off = o;
	return true;
}
