// SPDX-License-Identifier: GPL-2.0
/*
 * RoCEv2 transport headers: opcode table, parser, builder
 * (see include/sroce/roce_hdr.h).
 *
 * The BTH is three big-endian words; <rdma/ib_hdrs.h> names their fields:
 *   word 0  OpCode(31:24) SE(23) M(22) PadCnt(21:20) TVer(19:16) P_Key(15:0)
 *   word 1  FECN(31) BECN(30) reserved(29:24) DestQP(23:0)
 *   word 2  AckReq(31) reserved(30:24) PSN(23:0)
 */
#include <linux/bitfield.h>
#include <linux/bits.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <rdma/ib_hdrs.h>
#include <sroce/compat.h>
#include <sroce/roce_hdr.h>

#define BTH0_SE		BIT(IB_BTH_SE_SHIFT)
#define BTH0_M		BIT(IB_BTH_M_SHIFT)
#define BTH0_PAD	(IB_BTH_PAD_MASK << IB_BTH_PAD_SHIFT)
#define BTH0_TVER	(IB_BTH_TVER_MASK << IB_BTH_TVER_SHIFT)
#define BTH0_PKEY	IB_BTH_PKEY_MASK
#define BTH1_FECN	IB_FECN_SMASK
#define BTH1_BECN	IB_BECN_SMASK
#define BTH1_QPN	IB_QPN_MASK
#define BTH2_ACK_REQ	IB_BTH_REQ_ACK
#define BTH2_PSN	GENMASK(23, 0)
/* DETH word 1, AETH. */
#define DETH1_SRC_QPN	IB_QPN_MASK
#define AETH_SYNDROME	GENMASK(31, 24)
#define AETH_MSN	IB_MSN_MASK

/* Short names for the table below only. */
#define REQ SROCE_HDR_REQUEST
#define RSP SROCE_HDR_RESPONSE
#define PL SROCE_HDR_PAYLOAD
#define UC IB_OPCODE_UC
#define UD IB_OPCODE_UD
#define DETH SROCE_HDR_DETH
#define RETH SROCE_HDR_RETH
#define ATMETH SROCE_HDR_ATMETH
#define AETH SROCE_HDR_AETH
#define ATMACK SROCE_HDR_ATMACK
#define IMMDT SROCE_HDR_IMMDT
#define IETH SROCE_HDR_IETH
#define FIRST SROCE_HDR_FIRST
#define MIDDLE SROCE_HDR_MIDDLE
#define LAST SROCE_HDR_LAST
#define ONLY SROCE_HDR_ONLY

const struct sroce_opcode_info sroce_opcodes[256] = {
	[IB_OPCODE_SEND_FIRST] = { "RC_SEND_FIRST", REQ | PL | FIRST },
	[IB_OPCODE_SEND_MIDDLE] = { "RC_SEND_MIDDLE", REQ | PL | MIDDLE },
	[IB_OPCODE_SEND_LAST] = { "RC_SEND_LAST", REQ | PL | LAST },
	[IB_OPCODE_SEND_LAST_WITH_IMMEDIATE] = { "RC_SEND_LAST_IMM", REQ | PL | LAST | IMMDT },
	[IB_OPCODE_SEND_ONLY] = { "RC_SEND_ONLY", REQ | PL | ONLY },
	[IB_OPCODE_SEND_ONLY_WITH_IMMEDIATE] = { "RC_SEND_ONLY_IMM", REQ | PL | ONLY | IMMDT },
	[IB_OPCODE_RDMA_WRITE_FIRST] = { "RC_WRITE_FIRST", REQ | PL | FIRST | RETH },
	[IB_OPCODE_RDMA_WRITE_MIDDLE] = { "RC_WRITE_MIDDLE", REQ | PL | MIDDLE },
	[IB_OPCODE_RDMA_WRITE_LAST] = { "RC_WRITE_LAST", REQ | PL | LAST },
	[IB_OPCODE_RDMA_WRITE_LAST_WITH_IMMEDIATE] = {
		"RC_WRITE_LAST_IMM", REQ | PL | LAST | IMMDT },
	[IB_OPCODE_RDMA_WRITE_ONLY] = { "RC_WRITE_ONLY", REQ | PL | ONLY | RETH },
	[IB_OPCODE_RDMA_WRITE_ONLY_WITH_IMMEDIATE] = {
		"RC_WRITE_ONLY_IMM", REQ | PL | ONLY | RETH | IMMDT },
	[IB_OPCODE_RDMA_READ_REQUEST] = { "RC_READ_REQUEST", REQ | ONLY | RETH },
	[IB_OPCODE_RDMA_READ_RESPONSE_FIRST] = { "RC_READ_RESP_FIRST", RSP | PL | FIRST | AETH },
	[IB_OPCODE_RDMA_READ_RESPONSE_MIDDLE] = { "RC_READ_RESP_MIDDLE", RSP | PL | MIDDLE },
	[IB_OPCODE_RDMA_READ_RESPONSE_LAST] = { "RC_READ_RESP_LAST", RSP | PL | LAST | AETH },
	[IB_OPCODE_RDMA_READ_RESPONSE_ONLY] = { "RC_READ_RESP_ONLY", RSP | PL | ONLY | AETH },
	[IB_OPCODE_ACKNOWLEDGE] = { "RC_ACK", RSP | ONLY | AETH },
	[IB_OPCODE_ATOMIC_ACKNOWLEDGE] = { "RC_ATOMIC_ACK", RSP | ONLY | AETH | ATMACK },
	[IB_OPCODE_COMPARE_SWAP] = { "RC_CMP_SWAP", REQ | ONLY | ATMETH },
	[IB_OPCODE_FETCH_ADD] = { "RC_FETCH_ADD", REQ | ONLY | ATMETH },
	[IB_OPCODE_SEND_LAST_WITH_INVALIDATE] = { "RC_SEND_LAST_INV", REQ | PL | LAST | IETH },
	[IB_OPCODE_SEND_ONLY_WITH_INVALIDATE] = { "RC_SEND_ONLY_INV", REQ | PL | ONLY | IETH },
	[SROCE_OPCODE_ATOMIC_WRITE] = { "RC_ATOMIC_WRITE", REQ | PL | ONLY | RETH },
	[UC | IB_OPCODE_SEND_FIRST] = { "UC_SEND_FIRST", REQ | PL | FIRST },
	[UC | IB_OPCODE_SEND_MIDDLE] = { "UC_SEND_MIDDLE", REQ | PL | MIDDLE },
	[UC | IB_OPCODE_SEND_LAST] = { "UC_SEND_LAST", REQ | PL | LAST },
	[UC | IB_OPCODE_SEND_LAST_WITH_IMMEDIATE] = { "UC_SEND_LAST_IMM", REQ | PL | LAST | IMMDT },
	[UC | IB_OPCODE_SEND_ONLY] = { "UC_SEND_ONLY", REQ | PL | ONLY },
	[UC | IB_OPCODE_SEND_ONLY_WITH_IMMEDIATE] = { "UC_SEND_ONLY_IMM", REQ | PL | ONLY | IMMDT },
	[UC | IB_OPCODE_RDMA_WRITE_FIRST] = { "UC_WRITE_FIRST", REQ | PL | FIRST | RETH },
	[UC | IB_OPCODE_RDMA_WRITE_MIDDLE] = { "UC_WRITE_MIDDLE", REQ | PL | MIDDLE },
	[UC | IB_OPCODE_RDMA_WRITE_LAST] = { "UC_WRITE_LAST", REQ | PL | LAST },
	[UC | IB_OPCODE_RDMA_WRITE_LAST_WITH_IMMEDIATE] = {
		"UC_WRITE_LAST_IMM", REQ | PL | LAST | IMMDT },
	[UC | IB_OPCODE_RDMA_WRITE_ONLY] = { "UC_WRITE_ONLY", REQ | PL | ONLY | RETH },
	[UC | IB_OPCODE_RDMA_WRITE_ONLY_WITH_IMMEDIATE] = {
		"UC_WRITE_ONLY_IMM", REQ | PL | ONLY | RETH | IMMDT },
	[UD | IB_OPCODE_SEND_ONLY] = { "UD_SEND_ONLY", REQ | PL | ONLY | DETH },
	[UD | IB_OPCODE_SEND_ONLY_WITH_IMMEDIATE] = {
		"UD_SEND_ONLY_IMM", REQ | PL | ONLY | DETH | IMMDT },
};

#undef REQ
#undef RSP
#undef PL
#undef UC
#undef UD
#undef DETH
#undef RETH
#undef ATMETH
#undef AETH
#undef ATMACK
#undef IMMDT
#undef IETH
#undef FIRST
#undef MIDDLE
#undef LAST
#undef ONLY

/* Length of each extension header, by its bit in enum sroce_hdr_flag. */
static const u8 sroce_ext_hdr_len[] = {
	IB_DETH_BYTES, SROCE_RETH_LEN, IB_EXT_ATOMICETH_BYTES, SROCE_AETH_LEN,
	SROCE_ATMACK_LEN, SROCE_IMMDT_LEN, SROCE_IETH_LEN,
};

size_t sroce_opcode_hdr_len(const struct sroce_opcode_info *info)
{
	size_t len = IB_BTH_BYTES;
	int i;

	for (i = 0; i < ARRAY_SIZE(sroce_ext_hdr_len); i++)
		if (info->flags & BIT(i))
			len += sroce_ext_hdr_len[i];
	return len;
}

/*
 * Rule: extension headers follow the BTH in the order of enum
 * sroce_hdr_flag (DETH, RETH, AtomicETH, AETH, AtomicAckETH, ImmDt, IETH),
 * each present only when the opcode's flags say so.
 */
enum sroce_pkt_drop sroce_pkt_parse(const u8 *buf, size_t len,
				    struct sroce_pkt *pkt)
{
	const struct sroce_opcode_info *info;
	const u8 *p;
	u32 w0, w1, w2;
	size_t rest;

	memset(pkt, 0, sizeof(*pkt));
	if (len < IB_BTH_BYTES + IB_ICRC_BYTES)
		return SROCE_PKT_TOO_SHORT;

	w0 = get_unaligned_be32(buf);
	w1 = get_unaligned_be32(buf + 4);
	w2 = get_unaligned_be32(buf + 8);
	pkt->opcode = sroce_bth_opcode(buf);
	info = sroce_opcode_info(pkt->opcode);
	if (!info)
		return SROCE_PKT_BAD_OPCODE;
	if (FIELD_GET(BTH0_TVER, w0))
		return SROCE_PKT_BAD_TVER;
	if (len < sroce_opcode_hdr_len(info) + IB_ICRC_BYTES)
		return SROCE_PKT_TOO_SHORT;

	pkt->solicited = w0 & BTH0_SE;
	pkt->migreq = w0 & BTH0_M;
	pkt->pad = FIELD_GET(BTH0_PAD, w0);
	pkt->pkey = FIELD_GET(BTH0_PKEY, w0);
	pkt->fecn = w1 & BTH1_FECN;
	pkt->becn = w1 & BTH1_BECN;
	pkt->dest_qpn = FIELD_GET(BTH1_QPN, w1);
	pkt->ack_req = w2 & BTH2_ACK_REQ;
	pkt->psn = FIELD_GET(BTH2_PSN, w2);

	p = buf + IB_BTH_BYTES;
	if (info->flags & SROCE_HDR_DETH) {
		pkt->deth_qkey = get_unaligned_be32(p);
		pkt->deth_src_qpn = FIELD_GET(DETH1_SRC_QPN,
					      get_unaligned_be32(p + 4));
		p += IB_DETH_BYTES;
	}
	if (info->flags & SROCE_HDR_RETH) {
		pkt->reth_va = get_unaligned_be64(p);
		pkt->reth_rkey = get_unaligned_be32(p + 8);
		pkt->reth_len = get_unaligned_be32(p + 12);
		p += SROCE_RETH_LEN;
	}
	if (info->flags & SROCE_HDR_ATMETH) {
		pkt->atm_va = get_unaligned_be64(p);
		pkt->atm_rkey = get_unaligned_be32(p + 8);
		pkt->atm_swap_add = get_unaligned_be64(p + 12);
		pkt->atm_compare = get_unaligned_be64(p + 20);
		p += IB_EXT_ATOMICETH_BYTES;
	}
	if (info->flags & SROCE_HDR_AETH) {
		w0 = get_unaligned_be32(p);
		pkt->aeth_syndrome = FIELD_GET(AETH_SYNDROME, w0);
		pkt->aeth_msn = FIELD_GET(AETH_MSN, w0);
		p += SROCE_AETH_LEN;
	}
	if (info->flags & SROCE_HDR_ATMACK) {
		pkt->atmack_orig = get_unaligned_be64(p);
		p += SROCE_ATMACK_LEN;
	}
	if (info->flags & SROCE_HDR_IMMDT) {
		pkt->imm = get_unaligned_be32(p);
		p += SROCE_IMMDT_LEN;
	}
	if (info->flags & SROCE_HDR_IETH) {
		pkt->ieth_rkey = get_unaligned_be32(p);
		p += SROCE_IETH_LEN;
	}
	pkt->hdr_len = p - buf;

	rest = len - pkt->hdr_len - IB_ICRC_BYTES;
	if (!(info->flags & SROCE_HDR_PAYLOAD)) {
		if (pkt->pad)
			return SROCE_PKT_BAD_PAD;
		if (rest)
			return SROCE_PKT_BAD_PAYLOAD;
	}
	if (rest < pkt->pad)
		return SROCE_PKT_TOO_SHORT;
	pkt->payload_len = rest - pkt->pad;
	return SROCE_PKT_OK;
}

u32 sroce_bth_dest_qpn(const u8 *buf)
{
	return FIELD_GET(BTH1_QPN, get_unaligned_be32(buf + 4));
}

u8 sroce_bth_opcode(const u8 *buf)
{
	return buf[0];
}

size_t sroce_pkt_build_hdrs(u8 *buf, const struct sroce_pkt *pkt)
{
	const struct sroce_opcode_info *info = sroce_opcode_info(pkt->opcode);
	u8 *p;

	if (!info)
		return 0;

	/* FIELD_PREP cuts a value wider than its field to the field's bits. */
	put_unaligned_be32((u32)pkt->opcode << IB_BTH_OPCODE_SHIFT |
			   (pkt->solicited ? BTH0_SE : 0) |
			   (pkt->migreq ? BTH0_M : 0) |
			   FIELD_PREP(BTH0_PAD, pkt->pad) |
			   FIELD_PREP(BTH0_PKEY, pkt->pkey), buf);
	put_unaligned_be32((pkt->fecn ? BTH1_FECN : 0) |
			   (pkt->becn ? BTH1_BECN : 0) |
			   FIELD_PREP(BTH1_QPN, pkt->dest_qpn),
			   buf + 4);
	put_unaligned_be32((pkt->ack_req ? BTH2_ACK_REQ : 0) |
			   FIELD_PREP(BTH2_PSN, pkt->psn), buf + 8);

	p = buf + IB_BTH_BYTES;
	if (info->flags & SROCE_HDR_DETH) {
		put_unaligned_be32(pkt->deth_qkey, p);
		put_unaligned_be32(FIELD_PREP(DETH1_SRC_QPN, pkt->deth_src_qpn),
				   p + 4);
		p += IB_DETH_BYTES;
	}
	if (info->flags & SROCE_HDR_RETH) {
		put_unaligned_be64(pkt->reth_va, p);
		put_unaligned_be32(pkt->reth_rkey, p + 8);
		put_unaligned_be32(pkt->reth_len, p + 12);
		p += SROCE_RETH_LEN;
	}
	if (info->flags & SROCE_HDR_ATMETH) {
		put_unaligned_be64(pkt->atm_va, p);
		put_unaligned_be32(pkt->atm_rkey, p + 8);
		put_unaligned_be64(pkt->atm_swap_add, p + 12);
		put_unaligned_be64(pkt->atm_compare, p + 20);
		p += IB_EXT_ATOMICETH_BYTES;
	}
	if (info->flags & SROCE_HDR_AETH) {
		put_unaligned_be32(FIELD_PREP(AETH_SYNDROME, pkt->aeth_syndrome) |
				   FIELD_PREP(AETH_MSN, pkt->aeth_msn),
				   p);
		p += SROCE_AETH_LEN;
	}
	if (info->flags & SROCE_HDR_ATMACK) {
		put_unaligned_be64(pkt->atmack_orig, p);
		p += SROCE_ATMACK_LEN;
	}
	if (info->flags & SROCE_HDR_IMMDT) {
		put_unaligned_be32(pkt->imm, p);
		p += SROCE_IMMDT_LEN;
	}
	if (info->flags & SROCE_HDR_IETH) {
		put_unaligned_be32(pkt->ieth_rkey, p);
		p += SROCE_IETH_LEN;
	}
	return p - buf;
}
