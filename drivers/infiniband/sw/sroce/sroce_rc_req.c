// SPDX-License-Identifier: GPL-2.0
/*
 * The RC/UC requester: turns send WQEs into request packets, and ACKs,
 * NAKs and responses into completions. Runs in the QP's worker only, the
 * same on either link (sroce_link.h).
 *
 * Rules (the sequence rules themselves are in <sroce/rc_rules.h>):
 * - a WQE gets its PSNs when it is fetched: [psn, psn + npkts), npkts
 *   packets for a SEND or WRITE, the response packets for a READ, one
 *   for an atomic; its local memory is resolved then and held until it
 *   completes;
 * - una_psn is the oldest PSN not acknowledged; no packet goes out at
 *   SROCE_RC_WINDOW PSNs or more past it, and no more READs/atomics
 *   than max_rd_atomic are outstanding; UC has no window, as nothing
 *   acknowledges it: a message of any length goes out whole, and
 *   completes once its last packet left;
 * - an ACK of PSN p completes every SEND/WRITE that ends at or before p;
 *   a READ or atomic completes only with its own responses, which must
 *   arrive in PSN order. A gap, a timeout or a NAK sends the requester
 *   back (go-back-N) to the oldest PSN it must resend;
 * - the timer is lazy: it is moved only to fire earlier, and stopping a
 *   wait only clears resend_at;
 * - a local WQE (REG_MR, LOCAL_INV, BIND_MW) takes no PSN: it executes once, when
 *   the requester reaches it (after every READ/atomic before it with
 *   FENCE), and completes once every WQE before it has; a go-back passes
 *   over it without executing it again.
 */
#include <linux/jiffies.h>
#include <sroce/psn.h>
#include <sroce/rc_rules.h>
#include <sroce/rc_pkt.h>
#include <sroce/roce_hdr.h>
#include "sroce_rc.h"
#include "sroce_trace.h"

/* The RNR NAK timer values (IBTA table 45), in microseconds. */
static const u32 sroce_rnr_us[32] = {
	[IB_RNR_TIMER_655_36] = 655360, [IB_RNR_TIMER_000_01] = 10,
	[IB_RNR_TIMER_000_02] = 20, [IB_RNR_TIMER_000_03] = 30,
	[IB_RNR_TIMER_000_04] = 40, [IB_RNR_TIMER_000_06] = 60,
	[IB_RNR_TIMER_000_08] = 80, [IB_RNR_TIMER_000_12] = 120,
	[IB_RNR_TIMER_000_16] = 160, [IB_RNR_TIMER_000_24] = 240,
	[IB_RNR_TIMER_000_32] = 320, [IB_RNR_TIMER_000_48] = 480,
	[IB_RNR_TIMER_000_64] = 640, [IB_RNR_TIMER_000_96] = 960,
	[IB_RNR_TIMER_001_28] = 1280, [IB_RNR_TIMER_001_92] = 1920,
	[IB_RNR_TIMER_002_56] = 2560, [IB_RNR_TIMER_003_84] = 3840,
	[IB_RNR_TIMER_005_12] = 5120, [IB_RNR_TIMER_007_68] = 7680,
	[IB_RNR_TIMER_010_24] = 10240, [IB_RNR_TIMER_015_36] = 15360,
	[IB_RNR_TIMER_020_48] = 20480, [IB_RNR_TIMER_030_72] = 30720,
	[IB_RNR_TIMER_040_96] = 40960, [IB_RNR_TIMER_061_44] = 61440,
	[IB_RNR_TIMER_081_92] = 81920, [IB_RNR_TIMER_122_88] = 122880,
	[IB_RNR_TIMER_163_84] = 163840, [IB_RNR_TIMER_245_76] = 245760,
	[IB_RNR_TIMER_327_68] = 327680, [IB_RNR_TIMER_491_52] = 491520,
};

static unsigned long sroce_rnr_jiffies(u8 rnr_timer)
{
	return usecs_to_jiffies(sroce_rnr_us[rnr_timer & 31]);
}

/*
 * The timer is lazy: it is moved only to fire earlier, and stopping a wait
 * only clears resend_at. A timer that fires before resend_at re-arms
 * itself, one that finds no wait does nothing; so a stream of messages
 * costs about one timer event per timeout, not two timer updates each.
 */
static void sroce_arm_timer(struct sroce_qp *qp, unsigned long at)
{
	WRITE_ONCE(qp->req.resend_at, at ? at : 1);
	smp_mb();	/* resend_at, then the timer; pairs with the timer */
	if (!timer_pending(&qp->req.timer) ||
	    time_after(READ_ONCE(qp->req.timer.expires), at))
		mod_timer(&qp->req.timer, at);
}

static void sroce_stop_timer(struct sroce_qp *qp)
{
	WRITE_ONCE(qp->req.resend_at, 0);
}

/* Resolves the local memory of a fetched WQE and gives it its PSNs. */
static u8 sroce_rc_prepare(struct sroce_qp *qp, struct sroce_swqe *sw)
{
	struct sroce_wqe_ctrl *c = &sw->wqe->ctrl;

	sw->psn = qp->req.req_psn;
	sw->npkts = 0;
	if (sroce_wqe_is_local(c->opcode))
		return IB_WC_SUCCESS;
	if (c->flags & SROCE_WQE_INLINE) {
		sw->segs[0] = sroce_kseg(sw->wqe->sge, c->inline_len);
		sw->num_segs = 1;
	} else if (c->opcode == SROCE_WQE_ATOMIC_WRITE) {
		/* Its 8 bytes are in the WQE's copy, as inline data is. */
		sw->msg_len = sizeof(sw->wqe->atomic.swap_add);
		sw->segs[0] = sroce_kseg(&sw->wqe->atomic.swap_add, sw->msg_len);
		sw->num_segs = 1;
	} else {
		if (!sroce_sges_to_segs(qp, sw->wqe->sge, c->num_sge,
					sroce_rc_is_rd(c->opcode) ?
					IB_ACCESS_LOCAL_WRITE : 0, sw->segs))
			return IB_WC_LOC_PROT_ERR;
		sw->num_segs = c->num_sge;
	}
	sw->segs_held = true;
	sw->npkts = sroce_wqe_is_atomic(c->opcode) ||
		    c->opcode == SROCE_WQE_ATOMIC_WRITE ? 1 :
		    sroce_rc_npkts(sw->msg_len, qp->path.mtu);
	qp->req.req_psn = sroce_psn_add(qp->req.req_psn, sw->npkts);
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

	/* A READ from packet pkt_idx asks for the rest of its bytes. */
	pkt.opcode = sroce_rc_req_opcode(c->opcode, rd ? 0 : pkt_idx,
					 rd ? 1 : sw->npkts);
	if (sroce_qp_is_uc(qp))
		pkt.opcode |= IB_OPCODE_UC;
	info = sroce_opcode_info(pkt.opcode);
	if (!info)
		return -EINVAL;
	pkt.dest_qpn = qp->attr.dest_qp_num;
	pkt.psn = sroce_psn_add(sw->psn, pkt_idx);
	pkt.ack_req = !sroce_qp_is_uc(qp) &&
		      sroce_rc_ack_req(pkt.psn, info->flags & SROCE_HDR_LAST);
	pkt.solicited = (c->flags & SROCE_WQE_SOLICITED) &&
			(info->flags & SROCE_HDR_LAST);
	if (info->flags & SROCE_HDR_RETH) {
		pkt.reth_va = wqe->raddr.remote_addr;
		pkt.reth_rkey = wqe->raddr.rkey;
		pkt.reth_len = sw->msg_len;
		if (rd) {
			pkt.reth_va += (u64)pkt_idx * mtu;
			pkt.reth_len -= pkt_idx * mtu;
		}
	}
	if (info->flags & SROCE_HDR_ATMETH) {
		pkt.atm_va = wqe->raddr.remote_addr;
		pkt.atm_rkey = wqe->raddr.rkey;
		pkt.atm_swap_add = wqe->atomic.swap_add;
		pkt.atm_compare = wqe->atomic.compare;
	}
	if (info->flags & SROCE_HDR_IMMDT)
		pkt.imm = be32_to_cpu((__force __be32)c->imm_data);
	if (info->flags & SROCE_HDR_IETH)
		pkt.ieth_rkey = c->imm_data;
	if (info->flags & SROCE_HDR_PAYLOAD)
		len = sroce_rc_pkt_len(sw->msg_len, mtu, pkt_idx);
	return sroce_link_xmit(qp, &pkt, sw->segs, sw->num_segs, pkt_idx * mtu,
			       len);
}

static bool sroce_rc_outstanding(struct sroce_qp *qp)
{
	return sroce_psn_before(qp->req.una_psn, qp->req.sent_psn);
}

/* Inline: every answer that frees the window ends with it. */
static __always_inline void sroce_rc_rearm(struct sroce_qp *qp)
{
	if (!qp->attr.timeout || qp->req.rnr_wait)
		return;
	if (sroce_rc_outstanding(qp))
		sroce_arm_timer(qp, jiffies + qp->req.timeout_jiffies);
	else
		sroce_stop_timer(qp);
}

/*
 * Resends from psn: the requester's position moves back to psn's packet
 * of the WQE that holds it (a READ asks for the rest of its bytes from
 * there). Ignored unless psn was sent and not yet acknowledged. force:
 * even if we went back to psn before.
 */
static void sroce_rc_go_back(struct sroce_qp *qp, u32 psn, bool force)
{
	struct sroce_swqe *sw;
	u32 i;

	if (!force && qp->req.goback_valid && qp->req.goback_psn == psn)
		return;
	if (!sroce_rc_answers_outstanding(psn, qp->req.una_psn, qp->req.sent_psn))
		return;
	for (i = qp->req.sq_retire; i != qp->req.sq_fetched; i++) {
		sw = sroce_swqe_at(qp, i);
		if (sw->local_done)
			continue;	/* holds no PSN */
		if (!sw->npkts)
			break;
		if (sroce_psn_in(psn, sw->psn, sw->npkts)) {
			qp->req.sq_next = i;
			qp->req.sq_blocked = false;
			qp->req.tx_pkt = sroce_rc_goback_pkt(psn, sw->psn);
			qp->req.goback_psn = psn;
			qp->req.goback_valid = true;
			sroce_stat_add(qp->sdev, SROCE_STAT_RETRANSMITS, 1);
			trace_sroce_retransmit(qp->ibqp.qp_num, psn);
			return;
		}
	}
}

/* Completes the executed local WQEs at sq_retire: all before them are. */
static void sroce_rc_retire_local(struct sroce_qp *qp)
{
	struct sroce_swqe *sw;

	while (qp->req.sq_retire != qp->req.sq_fetched) {
		sw = sroce_swqe_at(qp, qp->req.sq_retire);
		if (!sw->local_done)
			return;
		if (qp->req.sq_next == qp->req.sq_retire) {
			qp->req.sq_next++;
			qp->req.tx_pkt = 0;
		}
		sroce_complete_send(qp, IB_WC_SUCCESS);
	}
}

/* Executes a local WQE; returns its completion status. */
static u8 sroce_rc_exec_local(struct sroce_qp *qp, struct sroce_swqe *sw)
{
	struct sroce_send_wqe *wqe = sw->wqe;

	if (wqe->ctrl.opcode == SROCE_WQE_REG_MR)
		return sroce_mr_fast_register(qp->sdev, qp->ibqp.pd, &wqe->reg);
	if (wqe->ctrl.opcode == SROCE_WQE_BIND_MW)
		return sroce_mw_bind(qp, &wqe->bind);
	if (sroce_mr_invalidate(qp->sdev, qp->ibqp.pd, wqe->ctrl.imm_data))
		return IB_WC_LOC_QP_OP_ERR;
	return IB_WC_SUCCESS;
}

/* Completes the WQE at sq_retire, which was acknowledged or answered. */
static void sroce_rc_retire(struct sroce_qp *qp, u8 status)
{
	struct sroce_swqe *sw = sroce_swqe_at(qp, qp->req.sq_retire);

	if (sroce_psn_before(qp->req.una_psn, sroce_psn_add(sw->psn, sw->npkts)))
		qp->req.una_psn = sroce_psn_add(sw->psn, sw->npkts);
	if (qp->req.sq_next == qp->req.sq_retire) {
		qp->req.sq_next++;
		qp->req.tx_pkt = 0;
	}
	qp->req.goback_valid = false;
	sroce_complete_send(qp, status);
	/* Most WQEs are followed by none executed locally: no call. */
	if (status == IB_WC_SUCCESS &&
	    qp->req.sq_retire != qp->req.sq_fetched &&
	    sroce_swqe_at(qp, qp->req.sq_retire)->local_done)
		sroce_rc_retire_local(qp);
}

/*
 * Acknowledges every PSN up to psn: completes the SEND/WRITE WQEs that end
 * there. Stops at a READ or atomic: coalesced ACKs never complete those,
 * and an ACK past one whose response is missing means it was lost.
 */
static void sroce_rc_ack_upto(struct sroce_qp *qp, u32 psn, bool implied_nak)
{
	struct sroce_swqe *sw;

	while (qp->req.sq_retire != qp->req.sq_fetched) {
		sw = sroce_swqe_at(qp, qp->req.sq_retire);
		if (!sw->npkts || !sroce_psn_before(sw->psn, qp->req.sent_psn))
			return;
		if (sroce_rc_is_rd(sw->wqe->ctrl.opcode)) {
			if (implied_nak && !sroce_psn_before(psn, sw->psn))
				sroce_rc_go_back(qp, qp->req.una_psn, false);
			return;
		}
		if (!sroce_rc_ack_covers(psn, sw->psn, sw->npkts)) {
			/* Part of a long message is through. */
			if (!sroce_psn_before(psn, qp->req.una_psn))
				qp->req.una_psn = sroce_psn_add(psn, 1);
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

	if (qp->req.sq_retire == qp->req.sq_fetched)
		return false;
	sw = sroce_swqe_at(qp, qp->req.sq_retire);
	return sw->npkts && sroce_psn_in(psn, sw->psn, sw->npkts);
}

void sroce_rc_handle_aeth(struct sroce_qp *qp, const struct sroce_pkt *pkt)
{
	u8 value = pkt->aeth_syndrome & SROCE_AETH_VALUE_MASK;
	u32 psn = pkt->psn;

	/*
	 * Every ACK, RNR NAK and NAK names a PSN this QP sent: one at or past
	 * sent_psn answers nothing and must not complete anything (a ghost).
	 * Older ones are stale duplicates and change nothing below.
	 */
	if (!sroce_psn_before(psn, qp->req.sent_psn)) {
		sroce_stat_add(qp->sdev, SROCE_STAT_RX_DROP_PROTOCOL, 1);
		return;
	}
	switch (sroce_aeth_kind(pkt->aeth_syndrome)) {
	case SROCE_AETH_KIND_ACK:
		sroce_rc_ack_upto(qp, psn, true);
		qp->req.retries = 0;
		qp->req.rnr_retries = 0;
		break;
	case SROCE_AETH_KIND_RNR:
		sroce_stat_add(qp->sdev, SROCE_STAT_RNR_NAKS_RCVD, 1);
		trace_sroce_nak(qp->ibqp.qp_num, psn, pkt->aeth_syndrome, false);
		sroce_rc_ack_upto(qp, sroce_psn_add(psn, -1), false);
		if (!sroce_rc_head_holds(qp, psn))
			return;
		if (sroce_rc_rnr_retries_spent(++qp->req.rnr_retries,
					       qp->attr.rnr_retry)) {
			sroce_rc_retire(qp, IB_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		sroce_rc_go_back(qp, psn, true);
		qp->req.rnr_wait = true;
		sroce_arm_timer(qp, jiffies + sroce_rnr_jiffies(value));
		return;
	case SROCE_AETH_KIND_NAK:
		sroce_stat_add(qp->sdev, value == SROCE_NAK_PSN_SEQUENCE ?
			       SROCE_STAT_SEQ_NAKS_RCVD :
			       SROCE_STAT_ERROR_NAKS_RCVD, 1);
		trace_sroce_nak(qp->ibqp.qp_num, psn, pkt->aeth_syndrome, false);
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
		sroce_stat_add(qp->sdev, SROCE_STAT_RX_DROP_PROTOCOL, 1);
		return;
	}
	sroce_rc_rearm(qp);
}

/*
 * A READ response, an atomic ACK or an ATOMIC_WRITE's empty READ response:
 * the answer for the WQE that holds its PSN.
 */
void sroce_rc_handle_read_data(struct sroce_qp *qp, const struct sroce_rx *rx)
{
	const struct sroce_pkt *pkt = rx->pkt;
	struct sroce_swqe *sw;
	struct sroce_seg_iter dst, src;
	enum sroce_copy_result copied = SROCE_COPY_OK;
	u32 psn = pkt->psn, idx, last;
	u64 orig;
	u8 op;

	if (!sroce_rc_answers_outstanding(psn, qp->req.una_psn, qp->req.sent_psn)) {
		/* A duplicate, or nothing we asked for. */
		sroce_stat_add(qp->sdev, SROCE_STAT_RX_DROP_PROTOCOL, 1);
		return;
	}
	/*
	 * Responses come in PSN order: SEND/WRITEs before psn are through.
	 * Then the WQE at sq_retire must hold psn (it ends at or after it).
	 */
	for (;;) {
		if (qp->req.sq_retire == qp->req.sq_fetched)
			return;
		sw = sroce_swqe_at(qp, qp->req.sq_retire);
		if (!sw->npkts)
			return;
		last = sroce_psn_add(sw->psn, sw->npkts - 1);
		if (!sroce_psn_before(last, psn))
			break;
		if (sroce_rc_is_rd(sw->wqe->ctrl.opcode)) {
			/* Its response was lost: ask again. */
			sroce_rc_go_back(qp, qp->req.una_psn, false);
			return;
		}
		sroce_rc_retire(qp, IB_WC_SUCCESS);
	}
	if (sroce_psn_before(psn, sw->psn))
		return;
	op = sw->wqe->ctrl.opcode;
	idx = sroce_psn_diff(psn, sw->psn);
	if (psn != qp->req.una_psn) {
		/* A response packet before this one was lost. */
		sroce_rc_go_back(qp, qp->req.una_psn, false);
		return;
	}
	if (op == SROCE_WQE_RDMA_READ) {
		u32 len = sroce_rc_pkt_len(sw->msg_len, qp->path.mtu, idx);

		if (!sroce_rc_read_resp_opcode_ok(pkt->opcode, idx, sw->npkts) ||
		    pkt->payload_len != len) {
			sroce_stat_add(qp->sdev, SROCE_STAT_RX_DROP_PROTOCOL, 1);
			return;
		}
		if (len) {
			sroce_seg_iter_init(&dst, sw->segs, sw->num_segs,
					    idx * qp->path.mtu);
			sroce_seg_iter_init(&src, rx->seg, rx->num_seg, 0);
			copied = sroce_seg_copy(&dst, &src, len);
		}
	} else if (sroce_wqe_is_atomic(op) &&
		   pkt->opcode == IB_OPCODE_ATOMIC_ACKNOWLEDGE) {
		orig = pkt->atmack_orig;
		copied = sroce_segs_write(sw->segs, sw->num_segs, &orig,
					  sizeof(orig));
	} else if (op == SROCE_WQE_ATOMIC_WRITE &&
		   pkt->opcode == IB_OPCODE_RDMA_READ_RESPONSE_ONLY &&
		   !pkt->payload_len) {
		copied = SROCE_COPY_OK;	/* stored there: nothing to copy */
	} else {
		sroce_stat_add(qp->sdev, SROCE_STAT_RX_DROP_PROTOCOL, 1);
		return;
	}
	if (copied) {
		/*
		 * The local buffer's key was revoked since the WQE was posted,
		 * or (on the shortcut, where this copy reads the responder's
		 * memory) the responder's.
		 */
		sroce_rc_retire(qp, copied == SROCE_COPY_DST_REVOKED ?
				IB_WC_LOC_PROT_ERR : IB_WC_REM_ACCESS_ERR);
		return;
	}
	qp->req.una_psn = sroce_psn_add(psn, 1);
	qp->req.retries = 0;
	qp->req.goback_valid = false;
	if (idx + 1 == sw->npkts)
		sroce_rc_retire(qp, IB_WC_SUCCESS);
	sroce_rc_rearm(qp);
}

/*
 * The answer a hand-over parked for the QP (sroce_link_take_answer()), if
 * one waits: an ACK or an atomic's ACK, taken as a response. Returns
 * whether there was one.
 */
bool sroce_rc_take_parked(struct sroce_qp *qp)
{
	struct sroce_rx rx __uninitialized;	/* take_answer sets it */

	if (!sroce_link_take_answer(qp, &rx))
		return false;
	trace_sroce_pkt_rx(qp->ibqp.qp_num, rx.pkt->dest_qpn, rx.pkt->opcode,
			   rx.pkt->psn, 0, false);
	sroce_rc_response(qp, &rx);
	return true;
}

noinline void sroce_rc_send_more(struct sroce_qp *qp, int *budget)
{
	u32 max_rd = max_t(u32, qp->attr.max_rd_atomic, 1);
	struct sroce_wqe_ctrl *c;
	struct sroce_swqe *sw;
	u32 producer, psn, end;
	bool rd;
	int err;

	if (qp->req.resend_at && !time_before(jiffies, qp->req.resend_at)) {
		WRITE_ONCE(qp->req.resend_at, 0);
		if (qp->req.rnr_wait) {
			qp->req.rnr_wait = false;
		} else if (sroce_rc_outstanding(qp)) {
			sroce_stat_add(qp->sdev, SROCE_STAT_TIMEOUTS, 1);
			/* retry_cnt counts resends; unlike rnr_retry, 7 is 7. */
			if (sroce_rc_retries_spent(++qp->req.retries,
						   qp->attr.retry_cnt)) {
				sroce_rc_retire(qp, IB_WC_RETRY_EXC_ERR);
				return;
			}
			sroce_rc_go_back(qp, qp->req.una_psn, true);
		}
	}
	if (qp->req.rnr_wait)
		return;

	if (!sroce_sq_producer(qp, &producer)) {
		sroce_qp_ring_error(qp);
		return;
	}
	while (qp->req.sq_next != producer && *budget > 0) {
		if (sroce_link_tx_full(qp) || !sroce_rc_may_send(qp))
			return;
		sw = sroce_swqe_at(qp, qp->req.sq_next);
		if (qp->req.sq_next == qp->req.sq_fetched) {
			sw->segs_held = false;
			sw->rd_counted = false;
			sw->local_done = false;
			sw->status = sroce_fetch_send(qp, qp->req.sq_next);
			if (sw->status == IB_WC_SUCCESS)
				sw->status = sroce_rc_prepare(qp, sw);
			qp->req.sq_fetched++;
			sroce_stat_add(qp->sdev, SROCE_STAT_WQES, 1);
			trace_sroce_wqe(qp->ibqp.qp_num, qp->req.sq_next,
					sw->wqe->ctrl.opcode, sw->status);
		}
		if (sw->status != IB_WC_SUCCESS) {
			/* Never sent: it fails once all before it are done. */
			if (qp->req.sq_retire == qp->req.sq_next) {
				qp->req.sq_next++;
				qp->req.tx_pkt = 0;
				sroce_complete_send(qp, sw->status);
			} else {
				qp->req.sq_blocked = true;
			}
			return;
		}
		c = &sw->wqe->ctrl;
		if (sroce_wqe_is_local(c->opcode)) {
			if (!sw->local_done) {
				if ((c->flags & SROCE_WQE_FENCE) &&
				    qp->req.rd_outstanding) {
					qp->req.sq_blocked = true;
					return;
				}
				sw->status = sroce_rc_exec_local(qp, sw);
				/* Work like a packet's: a pass's budget. */
				(*budget)--;
				if (sw->status != IB_WC_SUCCESS)
					continue;	/* fails as above */
				sw->local_done = true;
			}
			qp->req.sq_next++;
			qp->req.tx_pkt = 0;
			sroce_rc_retire_local(qp);
			continue;
		}
		rd = sroce_rc_is_rd(c->opcode);
		/*
		 * No more READs/atomics than max_rd_atomic; FENCE: every
		 * READ/atomic before it has completed.
		 */
		if ((rd && !sw->rd_counted && qp->req.rd_outstanding >= max_rd) ||
		    ((c->flags & SROCE_WQE_FENCE) &&
		     qp->req.rd_outstanding > (sw->rd_counted ? 1U : 0U))) {
			qp->req.sq_blocked = true;
			return;
		}
		err = sroce_rc_send_request(qp, sw, qp->req.tx_pkt);
		if (err == -EACCES) {
			/* An lkey revoked since the fetch: fails as above. */
			sw->status = IB_WC_LOC_PROT_ERR;
			continue;
		}
		if (err)
			return;
		(*budget)--;
		psn = sroce_psn_add(sw->psn, qp->req.tx_pkt);
		end = rd ? sroce_psn_add(sw->psn, sw->npkts) :
			   sroce_psn_add(psn, 1);
		if (sroce_psn_before(qp->req.sent_psn, end))
			qp->req.sent_psn = end;
		if (rd && !sw->rd_counted) {
			sw->rd_counted = true;
			qp->req.rd_outstanding++;
		}
		qp->req.tx_pkt++;
		if (rd || qp->req.tx_pkt == sw->npkts) {
			qp->req.sq_next++;
			qp->req.tx_pkt = 0;
			/* UC: a message is done once its last packet left. */
			if (sroce_qp_is_uc(qp)) {
				qp->req.una_psn = qp->req.sent_psn;
				sroce_complete_send(qp, IB_WC_SUCCESS);
				continue;
			}
		}
		/*
		 * Parked by this hand-over, the atomic's ACK (a READ's
		 * responses never are), or by an earlier one, an ACK owed
		 * for WRITEs before it. Taken before the next WQE goes, so
		 * that the next atomic's ACK can come back the same way, and
		 * before the timer: an atomic answered at once needs none.
		 */
		if (rd && sroce_rc_take_parked(qp) &&
		    (qp->req.rnr_wait || READ_ONCE(qp->state) != IB_QPS_RTS))
			return;
		if (qp->attr.timeout && !qp->req.resend_at &&
		    sroce_rc_outstanding(qp))
			sroce_arm_timer(qp, jiffies + qp->req.timeout_jiffies);
	}
}
