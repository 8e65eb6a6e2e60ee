/* SPDX-License-Identifier: GPL-2.0 */
/*
 * InfiniBand transport headers as RoCEv2 carries them in UDP (IBTA vol. 1
 * ch. 9 and annex A17): the base transport header (BTH), its extension
 * headers and the opcode table that says which of them each packet has.
 *
 * Pure layer: no ib_core, no skb. Parsing works on an untrusted byte
 * buffer (the UDP payload, ICRC included) and either fully validates the
 * layout or names why the packet must be dropped.
 */
#ifndef SROCE_ROCE_HDR_H
#define SROCE_ROCE_HDR_H

#include <linux/bits.h>
#include <linux/types.h>
#include <rdma/ib_pack.h>

/* Lengths <rdma/ib_pack.h> has no name for (IB_BTH_BYTES and others). */
#define SROCE_RETH_LEN 16
#define SROCE_AETH_LEN 4
#define SROCE_ATMACK_LEN 8
#define SROCE_IMMDT_LEN 4
#define SROCE_IETH_LEN 4

/*
 * Opcodes are <rdma/ib_pack.h>'s: the transport service (IB_OPCODE_RC,
 * _UC, _UD) in the top three bits, the operation (IB_OPCODE_SEND_FIRST
 * and the rest) in the low five.
 */
#define SROCE_OPC_SERVICE_MASK 0xe0
/*
 * RC ATOMIC WRITE (IBTA 1.5): RETH and 8 bytes of payload, answered by an
 * RDMA READ RESPONSE ONLY without payload. <rdma/ib_pack.h> names it from
 * 6.2 on (IB_OPCODE_RC_ATOMIC_WRITE), as an enum constant.
 */
#define SROCE_OPCODE_ATOMIC_WRITE 0x1d

/*
 * The P_Key table holds the default key alone (0xffff, full member): a
 * packet matches it when its 15 key bits are all ones, whatever its
 * membership bit says.
 */
#define SROCE_PKEY_KEY_MASK 0x7fff

static inline bool sroce_pkey_matches_default(u16 pkey)
{
	return (pkey & SROCE_PKEY_KEY_MASK) == SROCE_PKEY_KEY_MASK;
}

/* What a packet of an opcode carries after the BTH, in wire order. */
enum sroce_hdr_flag {
	SROCE_HDR_DETH = BIT(0),
	SROCE_HDR_RETH = BIT(1),
	SROCE_HDR_ATMETH = BIT(2),
	SROCE_HDR_AETH = BIT(3),
	SROCE_HDR_ATMACK = BIT(4),
	SROCE_HDR_IMMDT = BIT(5),
	SROCE_HDR_IETH = BIT(6),
	SROCE_HDR_PAYLOAD = BIT(7),	/* may carry payload */
	/* Position of the packet in its message. */
	SROCE_HDR_FIRST = BIT(8),
	SROCE_HDR_MIDDLE = BIT(9),
	SROCE_HDR_LAST = BIT(10),
	SROCE_HDR_ONLY = SROCE_HDR_FIRST | SROCE_HDR_LAST,
	/* Direction: a request (requester -> responder) or a response. */
	SROCE_HDR_REQUEST = BIT(11),
	SROCE_HDR_RESPONSE = BIT(12),
};

struct sroce_opcode_info {
	const char *name;
	u16 flags;		/* enum sroce_hdr_flag */
};

/* NULL for an opcode sroce does not speak (RD, XRC, CNP, reserved). */
/* Indexed by opcode; an opcode sroce does not speak has no name. */
extern const struct sroce_opcode_info sroce_opcodes[256];

/* Inline: every packet asks several times. NULL for an unknown opcode. */
static inline const struct sroce_opcode_info *sroce_opcode_info(u8 opcode)
{
	const struct sroce_opcode_info *info = &sroce_opcodes[opcode];

	return info->name ? info : NULL;
}

/* Length of the BTH and the extension headers of an opcode. */
size_t sroce_opcode_hdr_len(const struct sroce_opcode_info *info);

/* A parsed packet: every field in host order. */
struct sroce_pkt {
	u8 opcode;
	bool solicited;		/* BTH.SE */
	bool migreq;		/* BTH.M */
	u8 pad;			/* BTH.PadCnt */
	u16 pkey;
	bool fecn;
	bool becn;
	u32 dest_qpn;
	bool ack_req;		/* BTH.A */
	u32 psn;

	u32 deth_qkey;
	u32 deth_src_qpn;
	u64 reth_va;
	u32 reth_rkey;
	u32 reth_len;
	u64 atm_va;
	u32 atm_rkey;
	u64 atm_swap_add;
	u64 atm_compare;
	u8 aeth_syndrome;
	u32 aeth_msn;
	u64 atmack_orig;
	u32 imm;		/* ImmDt, as the 32 bits appear on the wire */
	u32 ieth_rkey;

	u16 hdr_len;		/* BTH and extension headers */
	u32 payload_len;	/* payload without pad and ICRC */
};

/* Why a packet was dropped; each reason has its own counter. */
enum sroce_pkt_drop {
	SROCE_PKT_OK = 0,
	SROCE_PKT_TOO_SHORT,	/* shorter than its headers and ICRC */
	SROCE_PKT_BAD_OPCODE,	/* opcode sroce does not speak */
	SROCE_PKT_BAD_TVER,	/* transport header version not 0 */
	SROCE_PKT_BAD_PAD,	/* pad on a packet without payload */
	SROCE_PKT_BAD_PAYLOAD,	/* payload where the opcode has none */
	SROCE_PKT_DROP_REASONS
};

enum sroce_pkt_drop sroce_pkt_parse(const u8 *buf, size_t len,
				    struct sroce_pkt *pkt);
/* The destination QP of a packet of at least IB_BTH_BYTES bytes. */
u32 sroce_bth_dest_qpn(const u8 *buf);
/* The opcode of a packet of at least IB_BTH_BYTES bytes. */
u8 sroce_bth_opcode(const u8 *buf);
/*
 * Writes the BTH and extension headers of pkt->opcode into buf (which has
 * room for the opcode's hdr_len) and returns that length, or 0 for an
 * opcode sroce does not speak.
 */
size_t sroce_pkt_build_hdrs(u8 *buf, const struct sroce_pkt *pkt);

#endif /* SROCE_ROCE_HDR_H */
