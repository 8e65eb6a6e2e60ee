// SPDX-License-Identifier: GPL-2.0
/*
 * The RC/UC responder's answers: the rd ring of READ responses and atomic
 * ACKs (an ATOMIC WRITE's among them), duplicates answered again from it,
 * and the sending of what the responder owes. Runs in the QP's worker
 * only, the same on either link (sroce_link.h); sroce_rc_resp.c executes
 * the requests.
 *
 * Rules:
 * - the rd ring holds, from rd_tail to rd_head, the answers still to
 *   send in PSN order; the entries behind them are the history that
 *   duplicates are answered from, and hold no memory;
 * - answers leave in PSN order: READ responses and atomic ACKs from the
 *   rd ring first, then a pending NAK or one coalesced ACK for
 *   everything executed so far;
 * - a duplicate is never executed again: a READ is answered again only
 *   as the history recorded it, an atomic with its saved result, an
 *   ATOMIC WRITE with its empty READ response.
 */
#include <sroce/psn.h>
#include <sroce/rc_rules.h>
#include <sroce/rc_pkt.h>
#include <sroce/roce_hdr.h>
#include "sroce_rc.h"
#include "sroce_trace.h"

/*
 * An ACK, RNR NAK or NAK for psn, with the responder's current MSN; also
 * the start of a READ response or an atomic ACK, whose opcode the caller
 * sets.
 */
static void sroce_rc_aeth_pkt(struct sroce_qp *qp, struct sroce_pkt *pkt,
			      u8 syndrome, u32 psn)
{
	*pkt = (struct sroce_pkt){
		.opcode = IB_OPCODE_ACKNOWLEDGE,
		.dest_qpn = qp->attr.dest_qp_num,
		.psn = psn & SROCE_PSN_MASK,
		.aeth_syndrome = syndrome,
		.aeth_msn = qp->resp.msn,
	};
}

/* Sends it: 0, or an error with nothing sent. */
int sroce_rc_send_aeth(struct sroce_qp *qp, u8 syndrome, u32 psn)
{
	struct sroce_pkt pkt;

	sroce_rc_aeth_pkt(qp, &pkt, syndrome, psn);
	return sroce_link_xmit(qp, &pkt, NULL, 0, 0, 0);
}

/*
 * Queues an answer again for PSN psn (a duplicate), not full: before the
 * first queued answer for later PSNs, as the requester takes answers in
 * PSN order only and drops the later ones until it has psn's. The
 * answers behind it move up one slot, over the oldest of the history
 * (which holds no memory: only queued answers do).
 */
static struct sroce_rd_resp *sroce_rc_rd_insert(struct sroce_qp *qp, u32 psn)
{
	struct sroce_rd_resp *e;
	u32 at, i;

	for (at = qp->resp.rd_tail; at != qp->resp.rd_head; at++) {
		e = sroce_rc_rd_at(qp, at);
		if (sroce_rc_answer_order(psn, e->psn, e->npkts) ==
		    SROCE_RC_ANSWER_AFTER)
			break;
	}
	for (i = qp->resp.rd_head; i != at; i--)
		*sroce_rc_rd_at(qp, i) = *sroce_rc_rd_at(qp, i - 1);
	qp->resp.rd_head++;
	e = sroce_rc_rd_at(qp, at);
	memset(e, 0, sizeof(*e));
	return e;
}

/*
 * The queued answer that holds PSN psn, or NULL: the one the requester
 * gets psn from if it is asked for again.
 */
static struct sroce_rd_resp *sroce_rc_rd_queued_for(struct sroce_qp *qp,
						    u32 psn)
{
	struct sroce_rd_resp *e;
	u32 i;

	for (i = qp->resp.rd_tail; i != qp->resp.rd_head; i++) {
		e = sroce_rc_rd_at(qp, i);
		if (sroce_rc_answer_order(psn, e->psn, e->npkts) ==
		    SROCE_RC_ANSWER_HOLDS)
			return e;
	}
	return NULL;
}

static struct sroce_rc_read sroce_rc_rd_read(const struct sroce_rd_resp *e)
{
	return (struct sroce_rc_read){
		.psn = e->psn, .va = e->va, .len = e->len, .rkey = e->rkey,
	};
}

/*
 * A duplicate READ is answered again only as the responder's history
 * recorded it (sroce_rc_read_replay_ok: the READ whose responses hold its
 * PSN, the rest of the same bytes through the same rkey), and only if
 * that rkey still grants them. Anything else is no READ this QP executed.
 * If the answer holding its PSN is still queued, that answer goes back to
 * the packet asked for (the requester missed one it sent) and keeps the
 * memory it holds; otherwise a new answer is queued in PSN order.
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

	e = sroce_rc_rd_queued_for(qp, dup.psn);
	if (e) {
		orig = sroce_rc_rd_read(e);
		if (e->opcode != IB_OPCODE_RDMA_READ_REQUEST ||
		    !sroce_rc_read_replay_ok(&orig, &dup, qp->path.mtu, &off))
			goto drop;
		e->sent = sroce_rc_answer_resume(e->sent,
						 sroce_psn_diff(dup.psn, e->psn));
		return;
	}
	for (i = 0; i < qp->resp.rd_slots; i++) {
		e = &qp->resp.rd[i];
		if (e->opcode != IB_OPCODE_RDMA_READ_REQUEST || !e->npkts)
			continue;
		orig = sroce_rc_rd_read(e);
		if (sroce_rc_read_replay_ok(&orig, &dup, qp->path.mtu, &off))
			found = e;
	}
	if (!found)
		goto drop;
	if (sroce_rc_rd_full(qp))
		return;		/* no room: the requester asks again */
	if (sroce_rkey_seg(qp, dup.rkey, dup.va, dup.len,
			   IB_ACCESS_REMOTE_READ, &mem))
		goto drop;
	e = sroce_rc_rd_insert(qp, dup.psn);
	e->opcode = IB_OPCODE_RDMA_READ_REQUEST;
	e->psn = dup.psn;
	e->len = dup.len;
	e->npkts = sroce_rc_npkts(e->len, qp->path.mtu);
	e->va = dup.va;
	e->rkey = dup.rkey;
	e->mem = mem;
	return;
drop:
	sroce_stat_add(qp->sdev, SROCE_STAT_RX_DROP_REPLAY, 1);
}

/*
 * A duplicate: SEND and WRITE packets are acknowledged again; a READ is
 * answered again from the history (sroce_rc_replay_read); an atomic's
 * saved result, or an ATOMIC WRITE's empty response, is sent again.
 * Nothing is executed twice.
 */
void sroce_rc_duplicate(struct sroce_qp *qp, const struct sroce_pkt *pkt)
{
	struct sroce_rd_resp *e, *found = NULL;
	u32 i;

	sroce_stat_add(qp->sdev, SROCE_STAT_DUPLICATES, 1);
	switch (pkt->opcode) {
	case IB_OPCODE_RDMA_READ_REQUEST:
		sroce_rc_replay_read(qp, pkt);
		return;
	case IB_OPCODE_COMPARE_SWAP:
	case IB_OPCODE_FETCH_ADD:
	case SROCE_OPCODE_ATOMIC_WRITE:
		e = sroce_rc_rd_queued_for(qp, pkt->psn);
		if (e) {
			/* Still queued: it will be sent anyway. */
			if (e->opcode != pkt->opcode)
				sroce_stat_add(qp->sdev, SROCE_STAT_RX_DROP_REPLAY, 1);
			return;
		}
		for (i = 0; i < qp->resp.rd_slots; i++) {
			e = &qp->resp.rd[i];
			if (e->opcode == pkt->opcode && e->psn == pkt->psn &&
			    e->npkts)
				found = e;
		}
		if (!found) {
			sroce_stat_add(qp->sdev, SROCE_STAT_RX_DROP_REPLAY, 1);
			return;
		}
		if (sroce_rc_rd_full(qp))
			return;
		{
			struct sroce_rd_resp copy = *found;

			e = sroce_rc_rd_insert(qp, copy.psn);
			*e = copy;
			e->sent = 0;
		}
		return;
	default:
		qp->resp.ack_pending = true;
		return;
	}
}

/* The rd ring's oldest entry got one more answer packet. */
static void sroce_rc_rd_answered(struct sroce_qp *qp, struct sroce_rd_resp *e)
{
	if (++e->sent == e->npkts) {
		sroce_segs_put(&e->mem, 1);
		e->mem = (struct sroce_seg){};
		qp->resp.rd_tail++;
	}
}

/*
 * The answer of the atomic e, a header-only packet: an atomic's ACK with
 * the value it found, or an ATOMIC WRITE's READ response without payload.
 */
static void sroce_rc_atomic_ack_pkt(struct sroce_qp *qp,
				    const struct sroce_rd_resp *e,
				    struct sroce_pkt *pkt)
{
	sroce_rc_aeth_pkt(qp, pkt, sroce_aeth_ack(), e->psn);
	if (e->opcode == SROCE_OPCODE_ATOMIC_WRITE) {
		pkt->opcode = IB_OPCODE_RDMA_READ_RESPONSE_ONLY;
		return;
	}
	pkt->opcode = IB_OPCODE_ATOMIC_ACKNOWLEDGE;
	pkt->atmack_orig = e->orig;
}

/* Answers: READ responses and atomic ACKs, then a NAK or an ACK. */
static noinline void sroce_rc_send_answers(struct sroce_qp *qp, int *budget)
{
	struct sroce_rd_resp *e;
	struct sroce_pkt pkt __uninitialized;	/* zeroed for each answer */
	u32 len, mtu = qp->path.mtu;
	struct sroce_seg seg;
	int err;

	while (qp->resp.rd_tail != qp->resp.rd_head) {
		if (*budget <= 0 || sroce_link_tx_full(qp))
			return;
		e = sroce_rc_rd_at(qp, qp->resp.rd_tail);
		len = 0;
		seg = (struct sroce_seg){};
		if (e->opcode == IB_OPCODE_RDMA_READ_REQUEST) {
			sroce_rc_aeth_pkt(qp, &pkt, sroce_aeth_ack(),
					  sroce_psn_add(e->psn, e->sent));
			pkt.opcode = sroce_rc_read_resp_opcode(e->sent, e->npkts);
			len = sroce_rc_pkt_len(e->len, mtu, e->sent);
			seg = e->mem;
			seg.addr += (u64)e->sent * mtu;
			seg.len = len;
		} else {
			sroce_rc_atomic_ack_pkt(qp, e, &pkt);
		}
		err = sroce_link_xmit(qp, &pkt, &seg, 1, 0, len);
		if (err == -EACCES) {
			/*
			 * The READ's rkey was revoked (invalidated, unbound,
			 * deregistered) since it was admitted: no more of
			 * its bytes leave.
			 */
			sroce_rc_fatal_nak(qp, SROCE_NAK_REMOTE_ACCESS,
					   pkt.psn);
			return;
		}
		if (err)
			return;
		(*budget)--;
		sroce_rc_rd_answered(qp, e);
	}
	if (qp->resp.ctrl_pending) {
		if (sroce_rc_send_aeth(qp, qp->resp.ctrl_syndrome, qp->resp.ctrl_psn))
			return;
		trace_sroce_nak(qp->ibqp.qp_num, qp->resp.ctrl_psn,
				qp->resp.ctrl_syndrome, true);
		qp->resp.ctrl_pending = false;
		qp->resp.ack_pending = false;
	} else if (qp->resp.ack_pending) {
		if (sroce_rc_send_aeth(qp, sroce_aeth_ack(),
				       sroce_psn_add(qp->resp.rx_expected_psn, -1)))
			return;
		qp->resp.ack_pending = false;
	}
}

/*
 * For a hand-over that may carry an answer back (sroce_link_take_fn): the
 * one answer the responder owes now, built into answer and sent as far as
 * the responder is concerned, if it is a header-only packet:
 * - the coalesced ACK, with no READ response, atomic ACK, NAK or RNR NAK
 *   waiting before it;
 * - or an atomic's answer (sroce_rc_atomic_ack_pkt), the only entry of
 *   the rd ring, with no ACK and no NAK owed behind it.
 */
bool sroce_rc_answer_now(struct sroce_qp *qp, struct sroce_pkt *answer)
{
	enum ib_qp_state state = READ_ONCE(qp->state);
	struct sroce_rd_resp *e;

	if (qp->resp.ctrl_pending ||
	    (state != IB_QPS_RTR && state != IB_QPS_RTS &&
	     state != IB_QPS_SQD))
		return false;
	if (qp->resp.rd_tail == qp->resp.rd_head) {
		if (!qp->resp.ack_pending)
			return false;
		sroce_rc_aeth_pkt(qp, answer, sroce_aeth_ack(),
				  sroce_psn_add(qp->resp.rx_expected_psn, -1));
		qp->resp.ack_pending = false;
		return true;
	}
	if (qp->resp.ack_pending || qp->resp.rd_head - qp->resp.rd_tail != 1)
		return false;
	e = sroce_rc_rd_at(qp, qp->resp.rd_tail);
	if (e->opcode == IB_OPCODE_RDMA_READ_REQUEST)
		return false;
	sroce_rc_atomic_ack_pkt(qp, e, answer);
	sroce_rc_rd_answered(qp, e);
	return true;
}

void sroce_rc_respond(struct sroce_qp *qp, int *budget)
{
	/* Most runs have nothing to answer: they skip the sender's frame. */
	if (qp->resp.rd_tail != qp->resp.rd_head || qp->resp.ctrl_pending ||
	    qp->resp.ack_pending)
		sroce_rc_send_answers(qp, budget);
}
