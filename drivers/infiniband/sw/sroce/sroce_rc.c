// SPDX-License-Identifier: GPL-2.0
/*
 * The RC/UC transport: what the engine runs for an RC or UC QP (struct
 * sroce_transport). Packets from the QP's link go to the requester
 * (sroce_rc_req.c: ACKs, NAKs, responses) or the responder
 * (sroce_rc_resp.c: requests); both run in the QP's worker only.
 */
#include <sroce/psn.h>
#include <sroce/rc_rules.h>
#include <sroce/rc_pkt.h>
#include <sroce/roce_hdr.h>
#include "sroce_rc.h"
#include "sroce_trace.h"

/* A packet from either link, from the QP's peer (the link checked). */
static void sroce_rc_rx_packet(struct sroce_qp *qp, struct sroce_rx *rx)
{
	struct sroce_pkt *pkt = rx->pkt;

	trace_sroce_pkt_rx(qp->ibqp.qp_num, pkt->dest_qpn, pkt->opcode,
			   pkt->psn, pkt->payload_len, READ_ONCE(qp->wire));
	if ((pkt->opcode & SROCE_OPC_SERVICE_MASK) !=
	    (sroce_qp_is_uc(qp) ? IB_OPCODE_UC : IB_OPCODE_RC)) {
		sroce_stat_add(qp->sdev, SROCE_STAT_RX_DROP_MALFORMED, 1);
		return;
	}
	if (sroce_qp_is_uc(qp)) {
		/* UC packets are laid out as the RC ones of the same name. */
		pkt->opcode &= ~SROCE_OPC_SERVICE_MASK;
		sroce_uc_request(qp, rx);
		return;
	}
	if (sroce_opcode_info(pkt->opcode)->flags & SROCE_HDR_REQUEST) {
		sroce_rc_request(qp, rx);
		return;
	}
	sroce_rc_response(qp, rx);
}

/*
 * One packet from the QP's link, queued or handed over (by the shortcut,
 * or by the wire's softirq for a plain ACK). With answer (a hand-over,
 * see sroce_link_take_fn), the ACK the responder owes (for this request,
 * or for earlier ones) or this atomic's ACK may go back at once.
 */
static bool sroce_rc_take(struct sroce_qp *qp, struct sroce_rx *rx,
			  struct sroce_pkt *answer)
{
	u32 una = qp->req.una_psn;

	if (READ_ONCE(qp->state) == IB_QPS_ERR)
		return false;
	sroce_rc_rx_packet(qp, rx);
	/* An ACK the wire handed over confirms the neighbour too. */
	if (qp->req.una_psn != una)
		qp->path.peer_progress = true;
	/* Nothing owed (a middle packet): no call. */
	return answer &&
	       (qp->resp.ack_pending || qp->resp.rd_tail != qp->resp.rd_head) &&
	       sroce_rc_answer_now(qp, answer);
}

/*
 * Takes at most *budget packets from the QP's link; what is left waits
 * for the next pass, so one busy QP cannot starve its worker's others.
 */
static noinline int sroce_rc_receive_queued(struct sroce_qp *qp, int *budget)
{
	/* Not zeroed on every call: rx_next sets all that is read of it. */
	struct sroce_rx rx __uninitialized;
	u32 una = qp->req.una_psn, expected = qp->resp.rx_expected_psn;
	int n = 0;

	while (*budget > 0 && sroce_link_rx_next(qp, &rx)) {
		sroce_rc_take(qp, &rx, NULL);
		sroce_link_rx_done(qp, &rx);
		(*budget)--;
		n++;
	}
	/*
	 * The peer's progress confirms its neighbour (struct sroce_path).
	 * Every wire packet comes this way; a hand-over is never the wire's.
	 */
	if (qp->req.una_psn != una || qp->resp.rx_expected_psn != expected)
		qp->path.peer_progress = true;
	return n;
}

/* Most runs find nothing queued: they skip the loop's frame. */
static int sroce_rc_receive(struct sroce_qp *qp, int *budget)
{
	return sroce_link_rx_pending(qp) ? sroce_rc_receive_queued(qp, budget) : 0;
}

/*
 * The send step. The ACK that a hand-over carried back while the QP sent
 * (the link parked it) frees the window and completes WQEs: taken before
 * the run ends rather than in another (after a READ or atomic, before the
 * next WQE goes: sroce_rc_send_more()). It was parked only with nothing queued
 * before it, so it is the QP's next packet.
 */
static void sroce_rc_send(struct sroce_qp *qp, int *budget)
{
	if (!sroce_rc_send_due(qp))
		return;
	sroce_rc_send_more(qp, budget);
	sroce_rc_take_parked(qp);
}

static bool sroce_rc_has_work(struct sroce_qp *qp)
{
	enum ib_qp_state state = READ_ONCE(qp->state);

	if (sroce_link_rx_pending(qp))
		return true;
	if (state != IB_QPS_RTR && state != IB_QPS_RTS && state != IB_QPS_SQD)
		return false;
	/*
	 * Nothing leaves while the link is full, answers included (an ACK
	 * waits behind the READ responses before it): no work to spin on.
	 */
	if (sroce_link_tx_full(qp)) {
		qp->worker->tx_blocked = true;	/* looks again a jiffy later */
		return false;
	}
	if (qp->resp.ctrl_pending || qp->resp.ack_pending ||
	    qp->resp.rd_tail != qp->resp.rd_head)
		return true;
	if (state != IB_QPS_RTS)
		return false;
	/*
	 * A timer armed for WQEs in flight does not hold back new ones (nor
	 * the check of a producer index nobody could have written); only an
	 * RNR wait does.
	 */
	if (qp->req.resend_at) {
		if (!time_before(jiffies, qp->req.resend_at))
			return true;
		if (qp->req.rnr_wait)
			return false;
	}
	return READ_ONCE(qp->sq.hdr->producer) != qp->req.sq_next &&
	       !qp->req.sq_blocked && sroce_rc_may_send(qp);
}

static void sroce_rc_reset(struct sroce_qp *qp)
{
	qp->req.req_psn = 0;
	qp->req.una_psn = 0;
	qp->req.sent_psn = 0;
	qp->req.tx_pkt = 0;
	qp->req.goback_valid = false;
	qp->req.retries = 0;
	qp->req.rnr_retries = 0;
	qp->req.rnr_wait = false;
	WRITE_ONCE(qp->req.resend_at, 0);
	qp->resp.rx_seq = SROCE_RC_SEQ_NONE;
	qp->resp.rx_expected_psn = 0;
	qp->resp.msn = 0;
}

const struct sroce_transport sroce_rc_transport = {
	.receive = sroce_rc_receive,
	.send = sroce_rc_send,
	.respond = sroce_rc_respond,
	.has_work = sroce_rc_has_work,
	.drop_state = sroce_rc_drop_state,
	.reset = sroce_rc_reset,
	.drop_rx = sroce_link_drop_rx,
	.take = sroce_rc_take,
};
