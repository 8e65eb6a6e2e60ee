// SPDX-License-Identifier: GPL-2.0
/*
 * RC over RoCEv2 packets: the requester and the responder of a QP whose
 * peer is not on this host. Both run in the QP's worker only.
 *
 * Requester rules:
 * - a WQE gets its PSNs when it is fetched: [psn, psn + npkts), npkts
 *   packets for a SEND or WRITE, the response packets for a READ, one
 *   for an atomic; its local memory is resolved then and held until it
 *   completes;
 * - una_psn is the oldest PSN not acknowledged; no packet goes out at
 *   SROCE_WIRE_WINDOW PSNs or more past it, and no more READs/atomics
 *   than max_rd_atomic are outstanding; UC has no window, as nothing
 *   acknowledges it: a message of any length goes out whole;
 * - an ACK of PSN p completes every SEND/WRITE that ends at or before p;
 *   a READ or atomic completes only with its own responses, which must
 *   arrive in PSN order. A gap, a timeout or a NAK sends the requester
 *   back (go-back-N) to the oldest PSN it must resend.
 *
 * Responder rules:
 * - requests execute exactly once, in PSN order: the expected PSN, a
 *   duplicate (answered again, never re-executed, except READs, which
 *   are idempotent) or ahead (one PSN sequence NAK per expected PSN);
 * - answers leave in PSN order: READ responses and atomic ACKs from the
 *   rd ring first, then a pending NAK or one coalesced ACK for
 *   everything executed so far.
 */
#include <linux/skbuff.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <sroce/psn.h>
#include <sroce/rc_pkt.h>
#include <sroce/roce_hdr.h>
#include "sroce_engine.h"

/* A request asks for an ACK at its last packet and at every PSN 0 mod this. */
#define SROCE_ACK_REQ_EVERY 64
#define SROCE_DEFAULT_PKEY 0xffff

static bool sroce_rc_is_rd(u8 wqe_opcode)
{
	return wqe_opcode == SROCE_WQE_RDMA_READ ||
	       sroce_wqe_is_atomic(wqe_opcode);
}

/* The socket side ---------------------------------------------------------- */

/*
 * Whether a packet came from the QP's peer to the QP's own address: the IP
 * addresses are all that names the two ends of a connection, so a packet
 * from anywhere else (a forged ACK, NAK or request) is not the peer's.
 */
static bool sroce_rc_rx_from_peer(struct sroce_qp *qp, struct sk_buff *skb)
{
	const struct sroce_path *path = &qp->path;
	struct in6_addr saddr, daddr;

	if (ip_hdr(skb)->version == 4) {
		ipv6_addr_set_v4mapped(ip_hdr(skb)->saddr, &saddr);
		ipv6_addr_set_v4mapped(ip_hdr(skb)->daddr, &daddr);
	} else {
		saddr = ipv6_hdr(skb)->saddr;
		daddr = ipv6_hdr(skb)->daddr;
	}
	return ipv6_addr_equal(&saddr, &path->daddr) &&
	       ipv6_addr_equal(&daddr, &path->saddr);
}

/*
 * Queues a packet for the QP's worker. An RC/UC packet from anywhere but
 * the QP's peer is dropped here already, so that forged packets cannot
 * fill the queue the peer's packets need (the worker checks again: the
 * path may change under it).
 */
void sroce_rc_rx_enqueue(struct sroce_qp *qp, struct sk_buff *skb)
{
	if (!sroce_qp_is_ud(qp) && !sroce_rc_rx_from_peer(qp, skb)) {
		sroce_stat_add(SROCE_STAT_RX_DROP_ADDRESS, 1);
		kfree_skb(skb);
		return;
	}
	if (skb_queue_len(&qp->rx_skbs) >= SROCE_RX_QUEUE_MAX) {
		sroce_stat_add(SROCE_STAT_RX_DROP_QUEUE, 1);
		kfree_skb(skb);
		return;
	}
	skb_queue_tail(&qp->rx_skbs, skb);
	sroce_engine_kick(READ_ONCE(qp->worker));
}

/* Sending ------------------------------------------------------------------ */

/*
 * An RC request's payload longer than this travels in the MR's own pages,
 * not copied: copying 4 KiB, and zeroing the kmalloc'ed buffer first where
 * init_on_alloc is on, cost more than the rest of building the packet.
 * The pages are read when the NIC below sends them, later than now, so
 * - only RC requests attach them: a SEND or WRITE completes on its ACK,
 *   after its packets left (a resent copy still queued then carries an
 *   ICRC that no longer matches, and is dropped as a corrupted packet);
 * - a UC message or a UD datagram completes as its last packet is
 *   queued, and the application may rewrite its buffer at once;
 * - a READ response must carry the memory as it was when the READ
 *   executed, not as a WRITE executed after it left it;
 * - only through a netdev that does scatter-gather: for one that does not
 *   (virtio-net without checksum offload) the stack would allocate, clear
 *   and copy a linear packet anyway, and a copy into a head from the TX
 *   pool (sroce_net.c) costs less.
 */
#define SROCE_TX_COPY_MAX 512

/*
 * Sends one packet: headers from pkt, then len payload bytes taken from
 * segs at byte off (or none), then the pad.
 */
int sroce_xmit_pkt(struct sroce_qp *qp, struct sroce_pkt *pkt,
		   const struct sroce_seg *segs, unsigned int nsegs, u32 off,
		   u32 len)
{
	const struct sroce_opcode_info *info = sroce_opcode_info(pkt->opcode);
	struct sroce_seg_iter src, dst;
	struct sroce_seg out;
	struct bio_vec pieces[MAX_SKB_FRAGS - 1];
	struct sk_buff *skb;
	size_t hdr_len;
	int npieces;
	u8 pad;

	if (WARN_ON_ONCE(!info))
		return -EINVAL;
	hdr_len = sroce_opcode_hdr_len(info);
	pad = -len & 3;
	pkt->pad = pad;
	pkt->pkey = SROCE_DEFAULT_PKEY;
	if (len > SROCE_TX_COPY_MAX && qp->ibqp.qp_type == IB_QPT_RC &&
	    (info->flags & SROCE_HDR_REQUEST) &&
	    (qp->sdev->ndev->features & NETIF_F_SG)) {
		sroce_seg_iter_init(&src, segs, nsegs, off);
		npieces = sroce_seg_pages(&src, len, pieces,
					  ARRAY_SIZE(pieces));
		if (npieces > 0) {
			skb = sroce_net_alloc_paged(qp, hdr_len, pieces,
						    npieces, len, pad);
			if (skb) {
				sroce_pkt_build_hdrs(skb->data, pkt);
				sroce_net_send(qp, skb);
				return 0;
			}
		}
	}
	skb = sroce_net_alloc(qp, hdr_len + len + pad);
	if (!skb)
		return -ENOMEM;
	sroce_pkt_build_hdrs(skb->data, pkt);
	if (len) {
		out = sroce_kseg(skb->data + hdr_len, len);
		sroce_seg_iter_init(&dst, &out, 1, 0);
		sroce_seg_iter_init(&src, segs, nsegs, off);
		sroce_seg_copy(&dst, &src, len);
	}
	memset(skb->data + hdr_len + len, 0, pad);
	sroce_net_send(qp, skb);
	return 0;
}

/* An ACK, RNR NAK or NAK for psn, with the responder's current MSN. */
static int sroce_rc_send_aeth(struct sroce_qp *qp, u8 syndrome, u32 psn)
{
	struct sroce_pkt pkt = {
		.opcode = SROCE_OP_ACK,
		.dest_qpn = qp->attr.dest_qp_num,
		.psn = psn & SROCE_PSN_MASK,
		.aeth_syndrome = syndrome,
		.aeth_msn = qp->msn,
	};

	return sroce_xmit_pkt(qp, &pkt, NULL, 0, 0, 0);
}

/* Requester ---------------------------------------------------------------- */

/* Resolves the local memory of a fetched WQE and gives it its PSNs. */
static u8 sroce_rc_prepare(struct sroce_qp *qp, struct sroce_swqe *sw)
{
	struct sroce_wqe_ctrl *c = &sw->wqe->ctrl;

	sw->psn = qp->req_psn;
	sw->npkts = 0;
	if (c->flags & SROCE_WQE_INLINE) {
		sw->segs[0] = sroce_kseg(sw->wqe->sge, c->inline_len);
		sw->num_segs = 1;
	} else {
		if (!sroce_sges_to_segs(qp, sw->wqe->sge, c->num_sge,
					sroce_rc_is_rd(c->opcode) ?
					IB_ACCESS_LOCAL_WRITE : 0, sw->segs))
			return IB_WC_LOC_PROT_ERR;
		sw->num_segs = c->num_sge;
	}
	sw->segs_held = true;
	sw->npkts = sroce_wqe_is_atomic(c->opcode) ? 1 :
		    sroce_rc_npkts(sw->msg_len, qp->path.mtu);
	qp->req_psn = sroce_psn_add(qp->req_psn, sw->npkts);
	return IB_WC_SUCCESS;
}

/* Packet pkt_idx of a WQE: a request packet with its slice of the data. */
static int sroce_rc_send_request(struct sroce_qp *qp, struct sroce_swqe *sw,
				 u32 pkt_idx)
{
	struct sroce_send_wqe *wqe = sw->wqe;
	struct sroce_wqe_ctrl *c = &wqe->ctrl;
	bool rd = sroce_rc_is_rd(c->opcode);
	const struct sroce_opcode_info *info;
	struct sroce_pkt pkt = {};
	u32 mtu = qp->path.mtu, len = 0;

	pkt.opcode = sroce_rc_req_opcode(c->opcode, pkt_idx,
					 rd ? 1 : sw->npkts);
	if (sroce_qp_is_uc(qp))
		pkt.opcode |= SROCE_OPC_UC;
	info = sroce_opcode_info(pkt.opcode);
	if (!info)
		return -EINVAL;
	pkt.dest_qpn = qp->attr.dest_qp_num;
	pkt.psn = sroce_psn_add(sw->psn, pkt_idx);
	pkt.ack_req = !sroce_qp_is_uc(qp) &&
		      ((info->flags & SROCE_HDR_LAST) ||
		       !(pkt.psn % SROCE_ACK_REQ_EVERY));
	pkt.solicited = (c->flags & SROCE_WQE_SOLICITED) &&
			(info->flags & SROCE_HDR_LAST);
	if (info->flags & SROCE_HDR_RETH) {
		pkt.reth_va = wqe->raddr.remote_addr;
		pkt.reth_rkey = wqe->raddr.rkey;
		pkt.reth_len = sw->msg_len;
	}
	if (info->flags & SROCE_HDR_ATMETH) {
		pkt.atm_va = wqe->raddr.remote_addr;
		pkt.atm_rkey = wqe->raddr.rkey;
		pkt.atm_swap_add = wqe->atomic.swap_add;
		pkt.atm_compare = wqe->atomic.compare;
	}
	if (info->flags & SROCE_HDR_IMMDT)
		pkt.imm = be32_to_cpu((__force __be32)c->imm_data);
	if (info->flags & SROCE_HDR_PAYLOAD)
		len = sroce_rc_pkt_len(sw->msg_len, mtu, pkt_idx);
	return sroce_xmit_pkt(qp, &pkt, sw->segs, sw->num_segs, pkt_idx * mtu,
			      len);
}

static bool sroce_rc_outstanding(struct sroce_qp *qp)
{
	return sroce_psn_before(qp->una_psn, qp->sent_psn);
}

static void sroce_rc_rearm(struct sroce_qp *qp)
{
	if (!qp->attr.timeout || qp->rnr_wait)
		return;
	if (sroce_rc_outstanding(qp)) {
		sroce_arm_timer(qp, jiffies +
				sroce_timeout_jiffies(qp->attr.timeout));
	} else {
		sroce_stop_timer(qp);
	}
}

/*
 * Resends from psn: the requester's position moves back to the WQE that
 * holds it (to the start of a READ or atomic). Ignored unless psn was sent
 * and not yet acknowledged. force: even if we went back to psn before.
 */
static void sroce_rc_go_back(struct sroce_qp *qp, u32 psn, bool force)
{
	struct sroce_swqe *sw;
	u32 i;

	if (!force && qp->goback_valid && qp->goback_psn == psn)
		return;
	if (sroce_psn_before(psn, qp->una_psn) ||
	    !sroce_psn_before(psn, qp->sent_psn))
		return;
	for (i = qp->sq_retire; i != qp->sq_fetched; i++) {
		sw = sroce_swqe_at(qp, i);
		if (!sw->npkts)
			break;
		if (sroce_psn_diff(psn, sw->psn) < (s32)sw->npkts) {
			qp->sq_next = i;
			qp->sq_blocked = false;
			qp->tx_pkt = sroce_rc_is_rd(sw->wqe->ctrl.opcode) ? 0 :
				     sroce_psn_diff(psn, sw->psn);
			qp->goback_psn = psn;
			qp->goback_valid = true;
			sroce_stat_add(SROCE_STAT_RETRANSMITS, 1);
			return;
		}
	}
}

/* Completes the WQE at sq_retire, which was acknowledged or answered. */
static void sroce_rc_retire(struct sroce_qp *qp, u8 status)
{
	struct sroce_swqe *sw = sroce_swqe_at(qp, qp->sq_retire);

	if (sroce_psn_before(qp->una_psn, sroce_psn_add(sw->psn, sw->npkts)))
		qp->una_psn = sroce_psn_add(sw->psn, sw->npkts);
	if (qp->sq_next == qp->sq_retire) {
		qp->sq_next++;
		qp->tx_pkt = 0;
	}
	qp->goback_valid = false;
	sroce_complete_send(qp, status);
}

/*
 * Acknowledges every PSN up to psn: completes the SEND/WRITE WQEs that end
 * there. Stops at a READ or atomic: coalesced ACKs never complete those,
 * and an ACK past one whose response is missing means it was lost.
 */
static void sroce_rc_ack_upto(struct sroce_qp *qp, u32 psn, bool implied_nak)
{
	struct sroce_swqe *sw;
	u32 last;

	while (qp->sq_retire != qp->sq_fetched) {
		sw = sroce_swqe_at(qp, qp->sq_retire);
		if (!sw->npkts || !sroce_psn_before(sw->psn, qp->sent_psn))
			return;
		last = sroce_psn_add(sw->psn, sw->npkts - 1);
		if (sroce_rc_is_rd(sw->wqe->ctrl.opcode)) {
			if (implied_nak && !sroce_psn_before(psn, sw->psn))
				sroce_rc_go_back(qp, qp->una_psn, false);
			return;
		}
		if (sroce_psn_before(psn, last)) {
			/* Part of a long message is through. */
			if (!sroce_psn_before(psn, qp->una_psn))
				qp->una_psn = sroce_psn_add(psn, 1);
			return;
		}
		sroce_rc_retire(qp, IB_WC_SUCCESS);
	}
}

static const u8 sroce_rc_nak_status[] = {
	[SROCE_NAK_INVALID_REQUEST] = IB_WC_REM_INV_REQ_ERR,
	[SROCE_NAK_REMOTE_ACCESS] = IB_WC_REM_ACCESS_ERR,
	[SROCE_NAK_REMOTE_OPERATION] = IB_WC_REM_OP_ERR,
	[SROCE_NAK_INVALID_RD_REQUEST] = IB_WC_REM_INV_RD_REQ_ERR,
};

/* Whether the WQE at sq_retire holds psn. */
static bool sroce_rc_head_holds(struct sroce_qp *qp, u32 psn)
{
	struct sroce_swqe *sw;

	if (qp->sq_retire == qp->sq_fetched)
		return false;
	sw = sroce_swqe_at(qp, qp->sq_retire);
	return sw->npkts && !sroce_psn_before(psn, sw->psn) &&
	       sroce_psn_diff(psn, sw->psn) < (s32)sw->npkts;
}

static void sroce_rc_handle_aeth(struct sroce_qp *qp,
				 const struct sroce_pkt *pkt)
{
	u8 value = pkt->aeth_syndrome & SROCE_AETH_VALUE_MASK;
	u32 psn = pkt->psn;

	/*
	 * Every ACK, RNR NAK and NAK names a PSN this QP sent: one at or past
	 * sent_psn answers nothing and must not complete anything (a ghost).
	 * Older ones are stale duplicates and change nothing below.
	 */
	if (!sroce_psn_before(psn, qp->sent_psn)) {
		sroce_stat_add(SROCE_STAT_RX_DROP_PROTOCOL, 1);
		return;
	}
	switch (sroce_aeth_kind(pkt->aeth_syndrome)) {
	case SROCE_AETH_KIND_ACK:
		sroce_rc_ack_upto(qp, psn, true);
		qp->retries = 0;
		qp->rnr_retries = 0;
		break;
	case SROCE_AETH_KIND_RNR:
		sroce_rc_ack_upto(qp, sroce_psn_add(psn, -1), false);
		if (!sroce_rc_head_holds(qp, psn))
			return;
		if (qp->attr.rnr_retry < 7 &&
		    ++qp->rnr_retries > qp->attr.rnr_retry) {
			sroce_rc_retire(qp, IB_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		sroce_rc_go_back(qp, psn, true);
		qp->rnr_wait = true;
		sroce_arm_timer(qp, jiffies + sroce_rnr_jiffies(value));
		return;
	case SROCE_AETH_KIND_NAK:
		sroce_rc_ack_upto(qp, sroce_psn_add(psn, -1), false);
		if (value == SROCE_NAK_PSN_SEQUENCE) {
			sroce_rc_go_back(qp, psn, false);
			break;
		}
		if (!sroce_rc_head_holds(qp, psn))
			return;
		sroce_rc_retire(qp, value < ARRAY_SIZE(sroce_rc_nak_status) &&
				sroce_rc_nak_status[value] ?
				sroce_rc_nak_status[value] : IB_WC_REM_OP_ERR);
		return;
	default:
		sroce_stat_add(SROCE_STAT_RX_DROP_PROTOCOL, 1);
		return;
	}
	sroce_rc_rearm(qp);
}

/* A READ response or an atomic ACK: data for the WQE that holds its PSN. */
static void sroce_rc_handle_read_data(struct sroce_qp *qp,
				      const struct sroce_pkt *pkt,
				      const struct sroce_rx_payload *pl)
{
	struct sroce_swqe *sw;
	struct sroce_seg_iter dst, src;
	struct sroce_seg in;
	u32 psn = pkt->psn, idx, last;
	u64 orig;
	u8 op;

	if (sroce_psn_before(psn, qp->una_psn) ||
	    !sroce_psn_before(psn, qp->sent_psn)) {
		/* A duplicate, or nothing we asked for. */
		sroce_stat_add(SROCE_STAT_RX_DROP_PROTOCOL, 1);
		return;
	}
	/* Responses come in PSN order: SEND/WRITEs before psn are through. */
	while (qp->sq_retire != qp->sq_fetched) {
		sw = sroce_swqe_at(qp, qp->sq_retire);
		if (!sw->npkts)
			return;
		last = sroce_psn_add(sw->psn, sw->npkts - 1);
		if (!sroce_psn_before(last, psn))
			break;
		if (sroce_rc_is_rd(sw->wqe->ctrl.opcode)) {
			/* Its response was lost: ask again. */
			sroce_rc_go_back(qp, qp->una_psn, false);
			return;
		}
		sroce_rc_retire(qp, IB_WC_SUCCESS);
	}
	if (!sroce_rc_head_holds(qp, psn))
		return;
	sw = sroce_swqe_at(qp, qp->sq_retire);
	op = sw->wqe->ctrl.opcode;
	idx = sroce_psn_diff(psn, sw->psn);
	if (psn != qp->una_psn) {
		/* A response packet before this one was lost. */
		sroce_rc_go_back(qp, qp->una_psn, false);
		return;
	}
	if (op == SROCE_WQE_RDMA_READ) {
		u32 len = sroce_rc_pkt_len(sw->msg_len, qp->path.mtu, idx);

		if (pkt->opcode != sroce_rc_read_resp_opcode(idx, sw->npkts) ||
		    pkt->payload_len != len) {
			sroce_stat_add(SROCE_STAT_RX_DROP_PROTOCOL, 1);
			return;
		}
		if (len) {
			sroce_seg_iter_init(&dst, sw->segs, sw->num_segs,
					    idx * qp->path.mtu);
			sroce_seg_iter_init(&src, pl->seg, pl->num, 0);
			sroce_seg_copy(&dst, &src, len);
		}
	} else if (sroce_wqe_is_atomic(op) &&
		   pkt->opcode == SROCE_OP_ATOMIC_ACK) {
		orig = pkt->atmack_orig;
		in = sroce_kseg(&orig, sizeof(orig));
		sroce_segs_copy(sw->segs, sw->num_segs, &in, 1, sizeof(orig));
	} else {
		sroce_stat_add(SROCE_STAT_RX_DROP_PROTOCOL, 1);
		return;
	}
	qp->una_psn = sroce_psn_add(psn, 1);
	qp->retries = 0;
	qp->goback_valid = false;
	if (idx + 1 == sw->npkts)
		sroce_rc_retire(qp, IB_WC_SUCCESS);
	sroce_rc_rearm(qp);
}

/* The PSN the requester sends next. */
static u32 sroce_rc_next_psn(struct sroce_qp *qp)
{
	if (qp->sq_next == qp->sq_fetched)
		return qp->req_psn;
	return sroce_psn_add(sroce_swqe_at(qp, qp->sq_next)->psn, qp->tx_pkt);
}

static bool sroce_rc_window_open(struct sroce_qp *qp)
{
	if (sroce_qp_is_uc(qp))
		return true;
	return sroce_psn_diff(sroce_rc_next_psn(qp), qp->una_psn) <
	       SROCE_WIRE_WINDOW;
}

void sroce_rc_send_context(struct sroce_qp *qp, int *budget)
{
	u32 max_rd = max_t(u32, qp->attr.max_rd_atomic, 1);
	struct sroce_wqe_ctrl *c;
	struct sroce_swqe *sw;
	u32 producer, psn, end;
	bool rd;

	if (qp->resend_at && !time_before(jiffies, qp->resend_at)) {
		WRITE_ONCE(qp->resend_at, 0);
		if (qp->rnr_wait) {
			qp->rnr_wait = false;
		} else if (sroce_rc_outstanding(qp)) {
			sroce_stat_add(SROCE_STAT_TIMEOUTS, 1);
			/* retry_cnt counts resends; unlike rnr_retry, 7 is 7. */
			if (++qp->retries > qp->attr.retry_cnt) {
				sroce_rc_retire(qp, IB_WC_RETRY_EXC_ERR);
				return;
			}
			sroce_rc_go_back(qp, qp->una_psn, true);
		}
	}
	if (qp->rnr_wait)
		return;

	if (!sroce_sq_producer(qp, &producer)) {
		sroce_qp_ring_error(qp);
		return;
	}
	while (qp->sq_next != producer && *budget > 0) {
		if (sroce_net_tx_full(qp->sdev) || !sroce_rc_window_open(qp))
			return;
		sw = sroce_swqe_at(qp, qp->sq_next);
		if (qp->sq_next == qp->sq_fetched) {
			sw->segs_held = false;
			sw->rd_counted = false;
			sw->status = sroce_fetch_send(qp, qp->sq_next);
			if (sw->status == IB_WC_SUCCESS)
				sw->status = sroce_rc_prepare(qp, sw);
			qp->sq_fetched++;
			sroce_stat_add(SROCE_STAT_WQES, 1);
		}
		if (sw->status != IB_WC_SUCCESS) {
			/* Never sent: it fails once all before it are done. */
			if (qp->sq_retire == qp->sq_next) {
				qp->sq_next++;
				qp->tx_pkt = 0;
				sroce_complete_send(qp, sw->status);
			} else {
				qp->sq_blocked = true;
			}
			return;
		}
		c = &sw->wqe->ctrl;
		rd = sroce_rc_is_rd(c->opcode);
		/*
		 * No more READs/atomics than max_rd_atomic; FENCE: every
		 * READ/atomic before it has completed.
		 */
		if ((rd && !sw->rd_counted && qp->rd_outstanding >= max_rd) ||
		    ((c->flags & SROCE_WQE_FENCE) &&
		     qp->rd_outstanding > (sw->rd_counted ? 1U : 0U))) {
			qp->sq_blocked = true;
			return;
		}
		if (sroce_rc_send_request(qp, sw, qp->tx_pkt))
			return;
		(*budget)--;
		psn = sroce_psn_add(sw->psn, qp->tx_pkt);
		end = rd ? sroce_psn_add(sw->psn, sw->npkts) :
			   sroce_psn_add(psn, 1);
		if (sroce_psn_before(qp->sent_psn, end))
			qp->sent_psn = end;
		if (rd && !sw->rd_counted) {
			sw->rd_counted = true;
			qp->rd_outstanding++;
		}
		qp->tx_pkt++;
		if (rd || qp->tx_pkt == sw->npkts) {
			qp->sq_next++;
			qp->tx_pkt = 0;
			/* UC: a message is done once its last packet left. */
			if (sroce_qp_is_uc(qp)) {
				qp->una_psn = qp->sent_psn;
				sroce_complete_send(qp, IB_WC_SUCCESS);
				continue;
			}
		}
		if (qp->attr.timeout && !qp->resend_at)
			sroce_arm_timer(qp, jiffies +
					sroce_timeout_jiffies(qp->attr.timeout));
	}
}

/* Responder ---------------------------------------------------------------- */

enum sroce_rc_verdict {
	SROCE_RC_DONE,		/* executed: the PSN is consumed */
	SROCE_RC_RNR,		/* no receive WQE: RNR NAK */
	SROCE_RC_DROP,		/* no resources now: the requester resends */
	SROCE_RC_NAK_INVALID,
	SROCE_RC_NAK_ACCESS,
	SROCE_RC_NAK_OPERATION,
};

static const u8 sroce_rc_verdict_nak[] = {
	[SROCE_RC_NAK_INVALID] = SROCE_NAK_INVALID_REQUEST,
	[SROCE_RC_NAK_ACCESS] = SROCE_NAK_REMOTE_ACCESS,
	[SROCE_RC_NAK_OPERATION] = SROCE_NAK_REMOTE_OPERATION,
};

static void sroce_rc_release_rx(struct sroce_qp *qp)
{
	if (qp->rx_have_wqe) {
		sroce_segs_put(qp->rx_segs, qp->rx_nseg);
		qp->rx_have_wqe = false;
		qp->rx_nseg = 0;
	}
	sroce_segs_put(&qp->rx_write, 1);
	qp->rx_write = (struct sroce_seg){};
	qp->rx_seq = SROCE_RC_SEQ_NONE;
}

static void sroce_rc_post_recv_cqe(struct sroce_qp *qp, u8 status, u8 opcode,
				   u32 byte_len, const struct sroce_pkt *pkt)
{
	struct sroce_cqe cqe = {
		.wr_id = qp->rx_wr_id,
		.status = status,
		.opcode = opcode,
		.qp_num = qp->ibqp.qp_num,
		.src_qp = qp->attr.dest_qp_num,
	};

	if (status == IB_WC_SUCCESS) {
		cqe.byte_len = byte_len;
		if (sroce_opcode_info(pkt->opcode)->flags & SROCE_HDR_IMMDT) {
			cqe.flags |= SROCE_CQE_WITH_IMM;
			cqe.imm_data = (__force u32)cpu_to_be32(pkt->imm);
		}
		if (pkt->solicited)
			cqe.flags |= SROCE_CQE_SOLICITED;
	}
	sroce_cq_post(to_scq(qp->ibqp.recv_cq), &cqe);
}

/* Completes the receive WQE taken for a message, with status. */
static void sroce_rc_finish_recv(struct sroce_qp *qp, u8 status, u8 opcode,
				 u32 byte_len, const struct sroce_pkt *pkt)
{
	sroce_segs_put(qp->rx_segs, qp->rx_nseg);
	qp->rx_nseg = 0;
	qp->rx_have_wqe = false;
	sroce_recv_done(qp);
	sroce_rc_post_recv_cqe(qp, status, opcode, byte_len, pkt);
}

/* Takes the next receive WQE for a message; RNR if there is none. */
static enum sroce_rc_verdict sroce_rc_take_recv(struct sroce_qp *qp,
						const struct sroce_pkt *pkt)
{
	u8 status;

	int posted = sroce_rq_posted(qp);

	if (posted < 0) {
		sroce_qp_ring_error(qp);
		return SROCE_RC_NAK_OPERATION;
	}
	if (!posted)
		return SROCE_RC_RNR;
	qp->rx_nseg = 0;
	status = sroce_take_recv(qp, qp->rx_segs, &qp->rx_nseg, &qp->rx_cap,
				 &qp->rx_wr_id);
	if (status != IB_WC_SUCCESS) {
		sroce_rc_finish_recv(qp, status, IB_WC_RECV, 0, pkt);
		return status == IB_WC_LOC_LEN_ERR ? SROCE_RC_NAK_INVALID :
						     SROCE_RC_NAK_OPERATION;
	}
	qp->rx_have_wqe = true;
	return SROCE_RC_DONE;
}

static enum sroce_rc_verdict sroce_rc_exec_send(struct sroce_qp *qp,
						const struct sroce_pkt *pkt,
						const struct sroce_rx_payload *pl)
{
	u16 flags = sroce_opcode_info(pkt->opcode)->flags;
	struct sroce_seg_iter dst, src;
	enum sroce_rc_verdict v;

	if (flags & SROCE_HDR_FIRST) {
		v = sroce_rc_take_recv(qp, pkt);
		if (v != SROCE_RC_DONE)
			return v;
		qp->rx_off = 0;
	}
	if (!qp->rx_have_wqe)
		return SROCE_RC_NAK_INVALID;
	if (pkt->payload_len > qp->rx_cap - qp->rx_off) {
		sroce_rc_finish_recv(qp, IB_WC_LOC_LEN_ERR, IB_WC_RECV, 0, pkt);
		return SROCE_RC_NAK_INVALID;
	}
	if (pkt->payload_len) {
		sroce_seg_iter_init(&dst, qp->rx_segs, qp->rx_nseg, qp->rx_off);
		sroce_seg_iter_init(&src, pl->seg, pl->num, 0);
		sroce_seg_copy(&dst, &src, pkt->payload_len);
	}
	qp->rx_off += pkt->payload_len;
	if (flags & SROCE_HDR_LAST) {
		sroce_rc_finish_recv(qp, IB_WC_SUCCESS, IB_WC_RECV, qp->rx_off,
				     pkt);
		qp->msn = sroce_psn_add(qp->msn, 1);
	}
	return SROCE_RC_DONE;
}

static enum sroce_rc_verdict sroce_rc_exec_write(struct sroce_qp *qp,
						 const struct sroce_pkt *pkt,
						 const struct sroce_rx_payload *pl)
{
	u16 flags = sroce_opcode_info(pkt->opcode)->flags;
	bool imm = flags & SROCE_HDR_IMMDT;
	struct sroce_seg to;
	u32 total;

	/* With immediate, the receive WQE must be there before data lands. */
	if (imm && !sroce_rq_posted(qp))
		return SROCE_RC_RNR;
	if (flags & SROCE_HDR_FIRST) {
		if ((flags & SROCE_HDR_LAST) ?
		    pkt->reth_len != pkt->payload_len :
		    pkt->reth_len <= pkt->payload_len)
			return SROCE_RC_NAK_INVALID;
		if (sroce_rkey_seg(qp, pkt->reth_rkey, pkt->reth_va,
				   pkt->reth_len, IB_ACCESS_REMOTE_WRITE,
				   &qp->rx_write))
			return SROCE_RC_NAK_ACCESS;
		qp->rx_off = 0;
	} else if (qp->rx_write.kind == SROCE_SEG_MR &&
		   READ_ONCE(qp->rx_write.mr->dead)) {
		/* Its MR was deregistered since the WRITE began. */
		return SROCE_RC_NAK_ACCESS;
	}
	/* rx_write.len bounds every packet: 0 for a zero-length WRITE. */
	if (pkt->payload_len > qp->rx_write.len - qp->rx_off ||
	    ((flags & SROCE_HDR_LAST) &&
	     qp->rx_off + pkt->payload_len != qp->rx_write.len))
		return SROCE_RC_NAK_INVALID;
	if (pkt->payload_len) {
		to = qp->rx_write;
		to.addr += qp->rx_off;
		to.len = pkt->payload_len;
		sroce_segs_copy(&to, 1, pl->seg, pl->num, pkt->payload_len);
	}
	qp->rx_off += pkt->payload_len;
	if (!(flags & SROCE_HDR_LAST))
		return SROCE_RC_DONE;
	total = qp->rx_write.len;
	sroce_segs_put(&qp->rx_write, 1);
	qp->rx_write = (struct sroce_seg){};
	qp->msn = sroce_psn_add(qp->msn, 1);
	if (imm) {
		enum sroce_rc_verdict v = sroce_rc_take_recv(qp, pkt);

		/*
		 * The data has landed and the message is counted: too late to
		 * ask for it again. Only an RQ producer that went back since
		 * the check above gets here.
		 */
		if (v == SROCE_RC_RNR)
			return SROCE_RC_NAK_OPERATION;
		if (v != SROCE_RC_DONE)
			return v;
		sroce_rc_finish_recv(qp, IB_WC_SUCCESS, IB_WC_RECV_RDMA_WITH_IMM,
				     total, pkt);
	}
	return SROCE_RC_DONE;
}

static bool sroce_rc_rd_full(struct sroce_qp *qp)
{
	return qp->rd_head - qp->rd_tail >= SROCE_MAX_RD_ATOMIC;
}

static struct sroce_rd_resp *sroce_rc_rd_push(struct sroce_qp *qp)
{
	struct sroce_rd_resp *e = &qp->rd[qp->rd_head % SROCE_MAX_RD_ATOMIC];

	qp->rd_head++;
	memset(e, 0, sizeof(*e));
	return e;
}

static enum sroce_rc_verdict sroce_rc_exec_read(struct sroce_qp *qp,
						const struct sroce_pkt *pkt)
{
	struct sroce_rd_resp *e;
	struct sroce_seg mem;

	if (sroce_rc_rd_full(qp))
		return SROCE_RC_DROP;
	if (pkt->reth_len > SROCE_MAX_MSG_SIZE)
		return SROCE_RC_NAK_INVALID;
	if (sroce_rkey_seg(qp, pkt->reth_rkey, pkt->reth_va, pkt->reth_len,
			   IB_ACCESS_REMOTE_READ, &mem))
		return SROCE_RC_NAK_ACCESS;
	e = sroce_rc_rd_push(qp);
	e->opcode = SROCE_OP_READ_REQUEST;
	e->psn = pkt->psn;
	e->len = pkt->reth_len;
	e->npkts = sroce_rc_npkts(e->len, qp->path.mtu);
	e->va = pkt->reth_va;
	e->rkey = pkt->reth_rkey;
	e->mem = mem;
	return SROCE_RC_DONE;
}

/* Whether entry e of the rd ring is still queued to be answered. */
static bool sroce_rc_rd_queued(struct sroce_qp *qp,
			       const struct sroce_rd_resp *e)
{
	u32 slot = e - qp->rd;

	return (u32)(slot - qp->rd_tail) % SROCE_MAX_RD_ATOMIC <
	       qp->rd_head - qp->rd_tail;
}

/*
 * A duplicate READ is answered again only as the responder's history
 * recorded it (sroce_rc_read_replay_ok: the READ whose responses hold its
 * PSN, the rest of the same bytes through the same rkey), and only if
 * that rkey still grants them. Anything else is no READ this QP executed.
 */
static void sroce_rc_replay_read(struct sroce_qp *qp,
				 const struct sroce_pkt *pkt)
{
	const struct sroce_rc_read dup = {
		.psn = pkt->psn, .va = pkt->reth_va, .len = pkt->reth_len,
		.rkey = pkt->reth_rkey,
	};
	struct sroce_rd_resp *e, *found = NULL;
	struct sroce_rc_read orig;
	struct sroce_seg mem;
	u32 i, off;

	for (i = 0; i < SROCE_MAX_RD_ATOMIC; i++) {
		e = &qp->rd[i];
		if (e->opcode != SROCE_OP_READ_REQUEST || !e->npkts)
			continue;
		orig = (struct sroce_rc_read){
			.psn = e->psn, .va = e->va, .len = e->len,
			.rkey = e->rkey,
		};
		if (sroce_rc_read_replay_ok(&orig, &dup, qp->path.mtu, &off))
			found = e;
	}
	if (!found)
		goto drop;
	if (sroce_rc_rd_queued(qp, found))
		return;		/* its responses are still to be sent */
	if (sroce_rc_rd_full(qp))
		return;		/* no room: the requester asks again */
	if (sroce_rkey_seg(qp, dup.rkey, dup.va, dup.len,
			   IB_ACCESS_REMOTE_READ, &mem))
		goto drop;
	e = sroce_rc_rd_push(qp);
	e->opcode = SROCE_OP_READ_REQUEST;
	e->psn = dup.psn;
	e->len = dup.len;
	e->npkts = sroce_rc_npkts(e->len, qp->path.mtu);
	e->va = dup.va;
	e->rkey = dup.rkey;
	e->mem = mem;
	return;
drop:
	sroce_stat_add(SROCE_STAT_RX_DROP_REPLAY, 1);
}

static enum sroce_rc_verdict sroce_rc_exec_atomic(struct sroce_qp *qp,
						  const struct sroce_pkt *pkt)
{
	struct sroce_rd_resp *e;
	u64 orig;

	if (pkt->atm_va & 7)
		return SROCE_RC_NAK_INVALID;
	if (sroce_rc_rd_full(qp))
		return SROCE_RC_DROP;
	if (!sroce_remote_atomic(qp, pkt->atm_rkey, pkt->atm_va,
				 pkt->opcode == SROCE_OP_CMP_SWAP ?
				 SROCE_WQE_ATOMIC_CMP_SWP :
				 SROCE_WQE_ATOMIC_FETCH_ADD,
				 pkt->atm_swap_add, pkt->atm_compare, &orig))
		return SROCE_RC_NAK_ACCESS;
	e = sroce_rc_rd_push(qp);
	e->opcode = pkt->opcode;
	e->psn = pkt->psn;
	e->npkts = 1;
	e->orig = orig;
	qp->msn = sroce_psn_add(qp->msn, 1);
	return SROCE_RC_DONE;
}

/* Sends an RNR NAK or NAK after the responses before it. */
static void sroce_rc_queue_nak(struct sroce_qp *qp, u8 syndrome, u32 psn)
{
	qp->ctrl_pending = true;
	qp->ctrl_syndrome = syndrome;
	qp->ctrl_psn = psn;
	qp->nak_sent = true;
}

/*
 * A duplicate: SEND and WRITE packets are acknowledged again; a READ is
 * answered again from the history (sroce_rc_replay_read); an atomic's
 * saved result is sent again. Nothing is executed twice.
 */
static void sroce_rc_duplicate(struct sroce_qp *qp, const struct sroce_pkt *pkt)
{
	struct sroce_rd_resp *e, *found = NULL;
	u32 i;

	sroce_stat_add(SROCE_STAT_DUPLICATES, 1);
	switch (pkt->opcode) {
	case SROCE_OP_READ_REQUEST:
		sroce_rc_replay_read(qp, pkt);
		return;
	case SROCE_OP_CMP_SWAP:
	case SROCE_OP_FETCH_ADD:
		for (i = 0; i < SROCE_MAX_RD_ATOMIC; i++) {
			e = &qp->rd[i];
			if (e->opcode == pkt->opcode && e->psn == pkt->psn &&
			    e->npkts)
				found = e;
		}
		if (!found) {
			sroce_stat_add(SROCE_STAT_RX_DROP_REPLAY, 1);
			return;
		}
		/* Still queued: it will be sent anyway. */
		if (sroce_rc_rd_queued(qp, found))
			return;
		if (sroce_rc_rd_full(qp))
			return;
		{
			struct sroce_rd_resp copy = *found;

			e = sroce_rc_rd_push(qp);
			*e = copy;
			e->sent = 0;
		}
		return;
	default:
		qp->ack_pending = true;
		return;
	}
}

/*
 * UC: nothing is acknowledged or resent. A packet after a gap, or one the
 * responder cannot take, drops the message it belongs to; the receive
 * WQE a dropped SEND had started stays for the next message. Only a FIRST
 * or ONLY packet starts a message again.
 */
static void sroce_uc_drop_message(struct sroce_qp *qp, enum sroce_stat why)
{
	sroce_stat_add(why, 1);
	sroce_rc_release_rx(qp);
}

static void sroce_uc_request(struct sroce_qp *qp, const struct sroce_pkt *pkt,
			     const struct sroce_rx_payload *pl)
{
	enum sroce_rc_verdict v;
	enum sroce_rc_seq seq;

	if (qp->state != IB_QPS_RTR && qp->state != IB_QPS_RTS &&
	    qp->state != IB_QPS_SQD) {
		sroce_stat_add(SROCE_STAT_RX_DROP_PROTOCOL, 1);
		return;
	}
	if (sroce_psn_classify(pkt->psn, qp->rx_expected_psn) ==
	    SROCE_PSN_DUPLICATE) {
		sroce_stat_add(SROCE_STAT_DUPLICATES, 1);
		return;
	}
	if (pkt->psn != qp->rx_expected_psn && qp->rx_seq != SROCE_RC_SEQ_NONE)
		sroce_uc_drop_message(qp, SROCE_STAT_RX_DROP_PROTOCOL);
	qp->rx_expected_psn = sroce_psn_add(pkt->psn, 1);

	seq = sroce_rc_seq_next(qp->rx_seq, pkt->opcode);
	if (seq == SROCE_RC_SEQ_INVALID ||
	    !sroce_rc_payload_ok(pkt->opcode, pkt->payload_len, qp->path.mtu)) {
		/* A message whose start was lost, or a bad packet. */
		sroce_uc_drop_message(qp, SROCE_STAT_RX_DROP_PROTOCOL);
		return;
	}
	if (pkt->opcode >= SROCE_OP_WRITE_FIRST &&
	    pkt->opcode <= SROCE_OP_WRITE_ONLY_IMM)
		v = sroce_rc_exec_write(qp, pkt, pl);
	else
		v = sroce_rc_exec_send(qp, pkt, pl);
	if (v == SROCE_RC_DONE) {
		qp->rx_seq = seq;
		return;
	}
	sroce_uc_drop_message(qp, v == SROCE_RC_RNR ?
				  SROCE_STAT_RX_DROP_NO_RECV :
				  SROCE_STAT_RX_DROP_PROTOCOL);
}

static void sroce_rc_request(struct sroce_qp *qp, const struct sroce_pkt *pkt,
			     const struct sroce_rx_payload *pl)
{
	enum sroce_psn_class class;
	enum sroce_rc_verdict v;
	enum sroce_rc_seq seq;
	u16 flags;

	if (qp->state != IB_QPS_RTR && qp->state != IB_QPS_RTS &&
	    qp->state != IB_QPS_SQD) {
		sroce_stat_add(SROCE_STAT_RX_DROP_PROTOCOL, 1);
		return;
	}
	class = sroce_psn_classify(pkt->psn, qp->rx_expected_psn);
	if (class == SROCE_PSN_AHEAD) {
		if (!qp->nak_sent) {
			sroce_stat_add(SROCE_STAT_SEQ_NAKS, 1);
			sroce_rc_queue_nak(qp,
					   sroce_aeth_nak(SROCE_NAK_PSN_SEQUENCE),
					   qp->rx_expected_psn);
		}
		return;
	}
	if (class == SROCE_PSN_DUPLICATE) {
		sroce_rc_duplicate(qp, pkt);
		return;
	}
	if (qp->ctrl_pending)
		return;		/* the same PSN again before we answered */

	flags = sroce_opcode_info(pkt->opcode)->flags;
	seq = sroce_rc_seq_next(qp->rx_seq, pkt->opcode);
	if (seq == SROCE_RC_SEQ_INVALID ||
	    !sroce_rc_payload_ok(pkt->opcode, pkt->payload_len, qp->path.mtu)) {
		v = SROCE_RC_NAK_INVALID;
	} else {
		switch (pkt->opcode) {
		case SROCE_OP_SEND_FIRST:
		case SROCE_OP_SEND_MIDDLE:
		case SROCE_OP_SEND_LAST:
		case SROCE_OP_SEND_LAST_IMM:
		case SROCE_OP_SEND_ONLY:
		case SROCE_OP_SEND_ONLY_IMM:
			v = sroce_rc_exec_send(qp, pkt, pl);
			break;
		case SROCE_OP_WRITE_FIRST:
		case SROCE_OP_WRITE_MIDDLE:
		case SROCE_OP_WRITE_LAST:
		case SROCE_OP_WRITE_LAST_IMM:
		case SROCE_OP_WRITE_ONLY:
		case SROCE_OP_WRITE_ONLY_IMM:
			v = sroce_rc_exec_write(qp, pkt, pl);
			break;
		case SROCE_OP_READ_REQUEST:
			v = sroce_rc_exec_read(qp, pkt);
			if (v == SROCE_RC_DONE)
				qp->msn = sroce_psn_add(qp->msn, 1);
			break;
		case SROCE_OP_CMP_SWAP:
		case SROCE_OP_FETCH_ADD:
			v = sroce_rc_exec_atomic(qp, pkt);
			break;
		default:	/* SEND with invalidate: not offered */
			v = SROCE_RC_NAK_INVALID;
			break;
		}
	}

	switch (v) {
	case SROCE_RC_DONE:
		qp->nak_sent = false;
		qp->rx_seq = seq;
		if (pkt->opcode == SROCE_OP_READ_REQUEST)
			qp->rx_expected_psn =
				sroce_psn_add(qp->rx_expected_psn,
					      qp->rd[(qp->rd_head - 1) %
						     SROCE_MAX_RD_ATOMIC].npkts);
		else
			qp->rx_expected_psn =
				sroce_psn_add(qp->rx_expected_psn, 1);
		/* READs and atomics are acknowledged by their responses. */
		if (pkt->ack_req && (flags & SROCE_HDR_PAYLOAD))
			qp->ack_pending = true;
		return;
	case SROCE_RC_RNR:
		sroce_stat_add(SROCE_STAT_RNR_NAKS, 1);
		sroce_rc_queue_nak(qp, sroce_aeth_rnr(qp->attr.min_rnr_timer),
				   pkt->psn);
		return;
	case SROCE_RC_DROP:
		return;
	default:
		/* Fatal for the connection: say why, then stop. */
		sroce_rc_send_aeth(qp, sroce_aeth_nak(sroce_rc_verdict_nak[v]),
				   pkt->psn);
		sroce_rc_release_rx(qp);
		sroce_qp_error(qp);
		return;
	}
}

/* Receiving ---------------------------------------------------------------- */

/*
 * The payload of a parsed packet whose headers sroce_udp_encap_recv()
 * made linear, where it lies: the payload is not copied out of the skb.
 * Fragments the kernel may not address directly (a frag list, highmem)
 * are made linear first. Returns false on a failed allocation.
 */
static bool sroce_rc_rx_payload(struct sk_buff *skb,
				const struct sroce_pkt *pkt,
				struct sroce_rx_payload *pl)
{
	struct skb_shared_info *shinfo;
	u32 left = pkt->payload_len, n;
	unsigned int i;

	if ((skb_has_frag_list(skb) ||
	     (IS_ENABLED(CONFIG_HIGHMEM) && skb_is_nonlinear(skb))) &&
	    skb_linearize(skb))
		return false;
	shinfo = skb_shinfo(skb);
	pl->num = 0;
	n = min(left, skb_headlen(skb) - pkt->hdr_len);
	if (n)
		pl->seg[pl->num++] = sroce_kseg(skb->data + pkt->hdr_len, n);
	left -= n;
	for (i = 0; left && i < shinfo->nr_frags; i++) {
		n = min(left, skb_frag_size(&shinfo->frags[i]));
		pl->seg[pl->num++] =
			sroce_kseg(skb_frag_address(&shinfo->frags[i]), n);
		left -= n;
	}
	return !left;
}

static void sroce_rc_rx_packet(struct sroce_qp *qp, struct sk_buff *skb)
{
	const struct sroce_opcode_info *info;
	struct sroce_rx_payload pl;
	struct sroce_pkt pkt;

	if (!qp->wire) {
		/* Queued while the QP was on the wire, before a reset. */
		sroce_stat_add(SROCE_STAT_RX_DROP_PROTOCOL, 1);
		return;
	}
	if (!sroce_rc_rx_from_peer(qp, skb)) {
		sroce_stat_add(SROCE_STAT_RX_DROP_ADDRESS, 1);
		return;
	}
	if (sroce_pkt_parse(skb->data, skb->len, &pkt) != SROCE_PKT_OK ||
	    (pkt.opcode & SROCE_OPC_SERVICE_MASK) !=
	    (sroce_qp_is_uc(qp) ? SROCE_OPC_UC : SROCE_OPC_RC) ||
	    !sroce_rc_rx_payload(skb, &pkt, &pl)) {
		sroce_stat_add(SROCE_STAT_RX_DROP_MALFORMED, 1);
		return;
	}
	if (!sroce_pkey_matches_default(pkt.pkey)) {
		sroce_stat_add(SROCE_STAT_RX_DROP_PKEY, 1);
		return;
	}
	sroce_stat_add(SROCE_STAT_RX_PKTS, 1);
	if (sroce_qp_is_uc(qp)) {
		/* UC packets are laid out as the RC ones of the same name. */
		pkt.opcode &= ~SROCE_OPC_SERVICE_MASK;
		sroce_uc_request(qp, &pkt, &pl);
		return;
	}
	info = sroce_opcode_info(pkt.opcode);
	if (info->flags & SROCE_HDR_REQUEST) {
		sroce_rc_request(qp, &pkt, &pl);
		return;
	}
	if (qp->state != IB_QPS_RTS && qp->state != IB_QPS_SQD) {
		sroce_stat_add(SROCE_STAT_RX_DROP_PROTOCOL, 1);
		return;
	}
	if (pkt.opcode == SROCE_OP_ACK)
		sroce_rc_handle_aeth(qp, &pkt);
	else
		sroce_rc_handle_read_data(qp, &pkt, &pl);
}

int sroce_rc_receive_context(struct sroce_qp *qp, int *budget)
{
	struct sk_buff_head list;
	struct sk_buff *skb;
	int n = 0;

	if (skb_queue_empty_lockless(&qp->rx_skbs))
		return 0;
	__skb_queue_head_init(&list);
	spin_lock_bh(&qp->rx_skbs.lock);
	skb_queue_splice_init(&qp->rx_skbs, &list);
	spin_unlock_bh(&qp->rx_skbs.lock);
	while ((skb = __skb_dequeue(&list))) {
		if (READ_ONCE(qp->state) != IB_QPS_ERR)
			sroce_rc_rx_packet(qp, skb);
		consume_skb(skb);
		n++;
	}
	return n;
}

/* Answers: READ responses and atomic ACKs, then a NAK or an ACK. */
void sroce_rc_respond(struct sroce_qp *qp, int *budget)
{
	struct sroce_rd_resp *e;
	struct sroce_pkt pkt;
	u32 len, mtu = qp->path.mtu;
	struct sroce_seg seg;

	while (qp->rd_tail != qp->rd_head) {
		if (*budget <= 0 || sroce_net_tx_full(qp->sdev))
			return;
		e = &qp->rd[qp->rd_tail % SROCE_MAX_RD_ATOMIC];
		memset(&pkt, 0, sizeof(pkt));
		pkt.dest_qpn = qp->attr.dest_qp_num;
		pkt.psn = sroce_psn_add(e->psn, e->sent);
		pkt.aeth_syndrome = sroce_aeth_ack();
		pkt.aeth_msn = qp->msn;
		len = 0;
		if (e->opcode == SROCE_OP_READ_REQUEST) {
			pkt.opcode = sroce_rc_read_resp_opcode(e->sent, e->npkts);
			len = sroce_rc_pkt_len(e->len, mtu, e->sent);
			seg = e->mem;
			seg.addr += (u64)e->sent * mtu;
			seg.len = len;
		} else {
			pkt.opcode = SROCE_OP_ATOMIC_ACK;
			pkt.atmack_orig = e->orig;
			seg = (struct sroce_seg){};
		}
		if (sroce_xmit_pkt(qp, &pkt, &seg, 1, 0, len))
			return;
		(*budget)--;
		if (++e->sent == e->npkts) {
			sroce_segs_put(&e->mem, 1);
			e->mem = (struct sroce_seg){};
			qp->rd_tail++;
		}
	}
	if (qp->ctrl_pending) {
		if (sroce_rc_send_aeth(qp, qp->ctrl_syndrome, qp->ctrl_psn))
			return;
		qp->ctrl_pending = false;
		qp->ack_pending = false;
	} else if (qp->ack_pending) {
		if (sroce_rc_send_aeth(qp, sroce_aeth_ack(),
				       sroce_psn_add(qp->rx_expected_psn, -1)))
			return;
		qp->ack_pending = false;
	}
}

bool sroce_rc_has_work(struct sroce_qp *qp)
{
	enum ib_qp_state state = READ_ONCE(qp->state);

	if (!skb_queue_empty_lockless(&qp->rx_skbs))
		return true;
	if (state != IB_QPS_RTR && state != IB_QPS_RTS && state != IB_QPS_SQD)
		return false;
	if (qp->ctrl_pending || qp->ack_pending)
		return true;
	if (sroce_net_tx_full(qp->sdev)) {
		qp->worker->tx_blocked = true;	/* looks again a jiffy later */
		return false;
	}
	if (qp->rd_tail != qp->rd_head)
		return true;
	if (state != IB_QPS_RTS)
		return false;
	/*
	 * A timer armed for WQEs in flight does not hold back new ones (nor
	 * the check of a producer index nobody could have written); only an
	 * RNR wait does.
	 */
	if (qp->resend_at) {
		if (!time_before(jiffies, qp->resend_at))
			return true;
		if (qp->rnr_wait)
			return false;
	}
	return READ_ONCE(qp->sq.hdr->producer) != qp->sq_next &&
	       !qp->sq_blocked && sroce_rc_window_open(qp);
}

void sroce_rc_drop_state(struct sroce_qp *qp)
{
	struct sroce_rd_resp *e;
	u32 i;

	skb_queue_purge(&qp->rx_skbs);
	sroce_rc_release_rx(qp);
	for (i = 0; i < SROCE_MAX_RD_ATOMIC; i++) {
		e = &qp->rd[i];
		sroce_segs_put(&e->mem, 1);
		e->mem = (struct sroce_seg){};
	}
	memset(qp->rd, 0, sizeof(qp->rd));
	qp->rd_head = 0;
	qp->rd_tail = 0;
	qp->ctrl_pending = false;
	qp->ack_pending = false;
	qp->nak_sent = false;
}
