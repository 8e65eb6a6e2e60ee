/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The packets of a reliable-connected message (IBTA vol. 1 ch. 9):
 * how a message is cut at the path MTU, which opcode each packet carries,
 * which opcode may follow which inside a message, and the AETH syndrome.
 *
 * Pure layer: no ib_core, no skb.
 */
#ifndef SROCE_RC_PKT_H
#define SROCE_RC_PKT_H

#include <linux/minmax.h>
#include <linux/types.h>
#include <sroce/roce_hdr.h>

/* AETH credit field meaning "no end-to-end credits are used". */
#define SROCE_AETH_NO_CREDITS 0x1f
#define SROCE_AETH_RNR 0x20
#define SROCE_AETH_NAK 0x60
#define SROCE_AETH_KIND_MASK 0x60
#define SROCE_AETH_VALUE_MASK 0x1f

enum sroce_aeth_kind {
	SROCE_AETH_KIND_ACK,
	SROCE_AETH_KIND_RNR,	/* value: the responder's RNR timer */
	SROCE_AETH_KIND_NAK,	/* value: enum sroce_nak_code */
	SROCE_AETH_KIND_RESERVED,
};

enum sroce_nak_code {
	SROCE_NAK_PSN_SEQUENCE = 0,
	SROCE_NAK_INVALID_REQUEST = 1,
	SROCE_NAK_REMOTE_ACCESS = 2,
	SROCE_NAK_REMOTE_OPERATION = 3,
	SROCE_NAK_INVALID_RD_REQUEST = 4,
};

static inline u8 sroce_aeth_ack(void)
{
	return SROCE_AETH_NO_CREDITS;
}

static inline u8 sroce_aeth_rnr(u8 rnr_timer)
{
	return SROCE_AETH_RNR | (rnr_timer & SROCE_AETH_VALUE_MASK);
}

static inline u8 sroce_aeth_nak(enum sroce_nak_code code)
{
	return SROCE_AETH_NAK | code;
}

static inline enum sroce_aeth_kind sroce_aeth_kind(u8 syndrome)
{
	switch (syndrome & SROCE_AETH_KIND_MASK) {
	case 0:
		return SROCE_AETH_KIND_ACK;
	case SROCE_AETH_RNR:
		return SROCE_AETH_KIND_RNR;
	case SROCE_AETH_NAK:
		return SROCE_AETH_KIND_NAK;
	default:
		return SROCE_AETH_KIND_RESERVED;
	}
}

/* PSNs a message of len bytes occupies: one per packet, at least one. */
static inline u32 sroce_rc_npkts(u32 len, u32 mtu)
{
	return len ? len / mtu + !!(len % mtu) : 1;
}

/* Payload bytes of packet pkt (from 0) of a len-byte message. */
static inline u32 sroce_rc_pkt_len(u32 len, u32 mtu, u32 pkt)
{
	u64 off = (u64)pkt * mtu;

	if (off >= len)
		return 0;
	return min_t(u64, len - off, mtu);
}

/* SROCE_RC_NO_OPCODE where no packet fits. */
#define SROCE_RC_NO_OPCODE 0xff

/*
 * The request opcode of packet pkt of npkts for a send WQE opcode (enum
 * sroce_wqe_opcode). READ and atomics are always one request packet.
 */
u8 sroce_rc_req_opcode(u8 wqe_opcode, u32 pkt, u32 npkts);
/* The opcode of packet pkt of an npkts-packet READ response. */
u8 sroce_rc_read_resp_opcode(u32 pkt, u32 npkts);
/*
 * Whether a requester takes opcode for packet pkt of an npkts-packet READ
 * response: the opcode of that packet, or the first of an answer to the
 * READ asked again from pkt (FIRST, or ONLY for its last packet): a
 * responder answers such a request either way (rdma_rxe: MIDDLE/LAST
 * from its history, FIRST/ONLY as a new READ).
 */
bool sroce_rc_read_resp_opcode_ok(u8 opcode, u32 pkt, u32 npkts);

/*
 * Where a responder is inside a multi-packet message: a FIRST packet
 * opens a SEND or WRITE, MIDDLE packets continue it, a LAST packet ends it.
 */
enum sroce_rc_seq {
	SROCE_RC_SEQ_NONE,
	SROCE_RC_SEQ_SEND,
	SROCE_RC_SEQ_WRITE,
	SROCE_RC_SEQ_INVALID,	/* the opcode cannot come here */
};

/* Where the responder is after opcode; inline, as every request passes. */
static inline enum sroce_rc_seq
sroce_rc_seq_next(enum sroce_rc_seq cur, u8 opcode)
{
	const struct sroce_opcode_info *info = sroce_opcode_info(opcode);

	if (!info || (opcode & SROCE_OPC_SERVICE_MASK) != IB_OPCODE_RC ||
	    !(info->flags & SROCE_HDR_REQUEST))
		return SROCE_RC_SEQ_INVALID;

	switch (cur) {
	case SROCE_RC_SEQ_NONE:
		if (!(info->flags & SROCE_HDR_FIRST))
			return SROCE_RC_SEQ_INVALID;
		if (info->flags & SROCE_HDR_LAST)
			return SROCE_RC_SEQ_NONE;
		return opcode == IB_OPCODE_SEND_FIRST ? SROCE_RC_SEQ_SEND :
						       SROCE_RC_SEQ_WRITE;
	case SROCE_RC_SEQ_SEND:
		switch (opcode) {
		case IB_OPCODE_SEND_MIDDLE:
			return SROCE_RC_SEQ_SEND;
		case IB_OPCODE_SEND_LAST:
		case IB_OPCODE_SEND_LAST_WITH_IMMEDIATE:
		case IB_OPCODE_SEND_LAST_WITH_INVALIDATE:
			return SROCE_RC_SEQ_NONE;
		default:
			return SROCE_RC_SEQ_INVALID;
		}
	case SROCE_RC_SEQ_WRITE:
		switch (opcode) {
		case IB_OPCODE_RDMA_WRITE_MIDDLE:
			return SROCE_RC_SEQ_WRITE;
		case IB_OPCODE_RDMA_WRITE_LAST:
		case IB_OPCODE_RDMA_WRITE_LAST_WITH_IMMEDIATE:
			return SROCE_RC_SEQ_NONE;
		default:
			return SROCE_RC_SEQ_INVALID;
		}
	default:
		return SROCE_RC_SEQ_INVALID;
	}
}

/*
 * Whether a request packet's payload length fits its place in the message:
 * FIRST and MIDDLE carry exactly mtu bytes, LAST 1..mtu, ONLY 0..mtu.
 */
static inline bool sroce_rc_payload_ok(u8 opcode, u32 payload_len, u32 mtu)
{
	const struct sroce_opcode_info *info = sroce_opcode_info(opcode);
	u16 pos;

	if (!info)
		return false;
	if (!(info->flags & SROCE_HDR_PAYLOAD))
		return payload_len == 0;
	pos = info->flags & (SROCE_HDR_ONLY | SROCE_HDR_MIDDLE);
	switch (pos) {
	case SROCE_HDR_ONLY:
		return payload_len <= mtu;
	case SROCE_HDR_LAST:
		return payload_len >= 1 && payload_len <= mtu;
	default:	/* FIRST or MIDDLE */
		return payload_len == mtu;
	}
}

/* A READ request as the responder executed it, or as a duplicate asks. */
struct sroce_rc_read {
	u32 psn;
	u64 va;
	u32 len;
	u32 rkey;
};

/*
 * Whether dup, a duplicate READ request, asks again for what orig (a READ
 * the responder executed, answered in packets of mtu bytes) returned: its
 * PSN names one of orig's response packets, and it asks through the same
 * rkey for the bytes from that packet's offset to the end of orig's.
 * *off gets that offset. Anything else was never executed and must not be
 * (a requester cannot widen a READ by resending it).
 */
bool sroce_rc_read_replay_ok(const struct sroce_rc_read *orig,
			     const struct sroce_rc_read *dup, u32 mtu,
			     u32 *off);

#endif /* SROCE_RC_PKT_H */
