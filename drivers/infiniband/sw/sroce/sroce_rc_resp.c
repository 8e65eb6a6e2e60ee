// SPDX-License-Identifier: GPL-2.0
/*
 * The RC/UC responder: receives and executes requests; the answers they
 * owe are queued and sent by sroce_rc_answer.c. Runs in the QP's worker
 * only, the same on either link (sroce_link.h).
 *
 * Rules:
 * - requests execute exactly once, in PSN order: the expected PSN, a
 *   duplicate (answered again, never re-executed, except READs, which
 *   are idempotent, and only as the history recorded them) or ahead (one
 *   PSN sequence NAK per expected PSN);
 * - UC: nothing is acknowledged; a message the responder cannot take is
 *   dropped and counted.
 */
#include <sroce/psn.h>
#include <sroce/rc_rules.h>
#include <sroce/rc_pkt.h>
#include <sroce/roce_hdr.h>
#include "sroce_rc.h"
#include "sroce_trace.h"

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

static void sroce_rc_post_recv_cqe(struct sroce_qp *qp, u8 status, u8 opcode,
				   u32 byte_len, const struct sroce_pkt *pkt);

/*
 * Drops a message in progress, and with it the receive WQE it took unless
 * keep_wqe (UC: the next message takes it). A dropped WQE of the RQ stays
 * in the ring (the error state flushes it), but one taken from an SRQ is
 * this QP's alone to complete: it is flushed now.
 */
static void sroce_rc_drop_message(struct sroce_qp *qp, bool keep_wqe)
{
	if (qp->resp.rx_have_wqe && !keep_wqe) {
		sroce_segs_put(qp->resp.rx_segs, qp->resp.rx_nseg);
		qp->resp.rx_have_wqe = false;
		qp->resp.rx_nseg = 0;
		if (qp->srq)
			sroce_rc_post_recv_cqe(qp, IB_WC_WR_FLUSH_ERR, IB_WC_RECV,
					       0, NULL);
	}
	sroce_segs_put(&qp->resp.rx_write, 1);
	qp->resp.rx_write = (struct sroce_seg){};
	qp->resp.rx_seq = SROCE_RC_SEQ_NONE;
}

static void sroce_rc_release_rx(struct sroce_qp *qp)
{
	sroce_rc_drop_message(qp, false);
}

static void sroce_rc_post_recv_cqe(struct sroce_qp *qp, u8 status, u8 opcode,
				   u32 byte_len, const struct sroce_pkt *pkt)
{
	struct sroce_cqe cqe = {
		.wr_id = qp->resp.rx_wr_id,
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
		if (sroce_opcode_info(pkt->opcode)->flags & SROCE_HDR_IETH) {
			cqe.flags |= SROCE_CQE_WITH_INV;
			cqe.imm_data = pkt->ieth_rkey;
		}
		if (pkt->solicited)
			cqe.flags |= SROCE_CQE_SOLICITED;
	}
	sroce_cq_post(to_scq(qp->ibqp.recv_cq), &cqe, sroce_qp_held_events(qp));
}

/* Completes the receive WQE taken for a message, with status. */
static void sroce_rc_finish_recv(struct sroce_qp *qp, u8 status, u8 opcode,
				 u32 byte_len, const struct sroce_pkt *pkt)
{
	sroce_segs_put(qp->resp.rx_segs, qp->resp.rx_nseg);
	qp->resp.rx_nseg = 0;
	qp->resp.rx_have_wqe = false;
	sroce_recv_done(qp);
	sroce_rc_post_recv_cqe(qp, status, opcode, byte_len, pkt);
}

/* Takes the next receive WQE for a message; RNR if there is none. */
static enum sroce_rc_verdict sroce_rc_take_recv(struct sroce_qp *qp,
						const struct sroce_pkt *pkt)
{
	int posted = sroce_recv_posted(qp);
	u8 status;

	if (posted < 0) {
		sroce_qp_ring_error(qp);
		return SROCE_RC_NAK_OPERATION;
	}
	if (!posted)
		return SROCE_RC_RNR;
	qp->resp.rx_nseg = 0;
	status = sroce_take_recv(qp, qp->resp.rx_segs, &qp->resp.rx_nseg, &qp->resp.rx_cap,
				 &qp->resp.rx_wr_id);
	if (status == SROCE_RECV_NONE)
		return SROCE_RC_RNR;	/* the SRQ ran dry meanwhile */
	if (status != IB_WC_SUCCESS) {
		sroce_rc_finish_recv(qp, status, IB_WC_RECV, 0, pkt);
		return status == IB_WC_LOC_LEN_ERR ? SROCE_RC_NAK_INVALID :
						     SROCE_RC_NAK_OPERATION;
	}
	qp->resp.rx_have_wqe = true;
	return SROCE_RC_DONE;
}

static enum sroce_rc_verdict sroce_rc_exec_send(struct sroce_qp *qp,
						const struct sroce_rx *rx)
{
	const struct sroce_pkt *pkt = rx->pkt;
	u16 flags = sroce_opcode_info(pkt->opcode)->flags;
	struct sroce_seg_iter dst, src;
	enum sroce_rc_verdict v;

	if (flags & SROCE_HDR_FIRST) {
		/* UC: a WQE kept from a dropped message serves this one. */
		if (!qp->resp.rx_have_wqe) {
			v = sroce_rc_take_recv(qp, pkt);
			if (v != SROCE_RC_DONE)
				return v;
		}
		qp->resp.rx_off = 0;
	}
	if (!qp->resp.rx_have_wqe)
		return SROCE_RC_NAK_INVALID;
	if (pkt->payload_len > qp->resp.rx_cap - qp->resp.rx_off) {
		sroce_rc_finish_recv(qp, IB_WC_LOC_LEN_ERR, IB_WC_RECV, 0, pkt);
		return SROCE_RC_NAK_INVALID;
	}
	if (pkt->payload_len) {
		sroce_seg_iter_init(&dst, qp->resp.rx_segs, qp->resp.rx_nseg, qp->resp.rx_off);
		sroce_seg_iter_init(&src, rx->seg, rx->num_seg, 0);
		if (sroce_seg_copy(&dst, &src, pkt->payload_len)) {
			/* The receive buffer's lkey (or the sender's) revoked. */
			sroce_rc_finish_recv(qp, IB_WC_LOC_PROT_ERR, IB_WC_RECV,
					     0, pkt);
			return SROCE_RC_NAK_OPERATION;
		}
	}
	qp->resp.rx_off += pkt->payload_len;
	if (flags & SROCE_HDR_LAST) {
		/*
		 * The requester's key to invalidate: one of this QP's PD that
		 * can be invalidated from here, else the message fails on
		 * both sides.
		 */
		if ((flags & SROCE_HDR_IETH) &&
		    sroce_mr_invalidate_remote(qp, pkt->ieth_rkey)) {
			sroce_stat_add(qp->sdev, SROCE_STAT_RX_BAD_INVALIDATE, 1);
			sroce_rc_finish_recv(qp, IB_WC_REM_INV_REQ_ERR, IB_WC_RECV,
					     0, pkt);
			return SROCE_RC_NAK_INVALID;
		}
		sroce_rc_finish_recv(qp, IB_WC_SUCCESS, IB_WC_RECV, qp->resp.rx_off,
				     pkt);
		qp->resp.msn = sroce_psn_add(qp->resp.msn, 1);
	}
	return SROCE_RC_DONE;
}

static enum sroce_rc_verdict sroce_rc_exec_write(struct sroce_qp *qp,
						 const struct sroce_rx *rx)
{
	const struct sroce_pkt *pkt = rx->pkt;
	u16 flags = sroce_opcode_info(pkt->opcode)->flags;
	bool imm = flags & SROCE_HDR_IMMDT;
	enum sroce_copy_result copied;
	enum sroce_rc_verdict v;
	struct sroce_seg to;
	u32 total;

	/*
	 * With immediate (on the last packet), the receive WQE is taken
	 * before that packet's data lands: no other QP can take it from an
	 * SRQ in between, and no RNR comes too late.
	 */
	if (imm && !qp->resp.rx_have_wqe) {
		v = sroce_rc_take_recv(qp, pkt);
		if (v != SROCE_RC_DONE)
			return v;
	}
	if ((flags & SROCE_HDR_ONLY) == SROCE_HDR_ONLY) {
		/* The whole message: no state kept between packets. */
		if (pkt->reth_len != pkt->payload_len)
			return SROCE_RC_NAK_INVALID;
		if (sroce_rkey_seg(qp, pkt->reth_rkey, pkt->reth_va,
				   pkt->reth_len, IB_ACCESS_REMOTE_WRITE, &to))
			return SROCE_RC_NAK_ACCESS;
		copied = pkt->payload_len ?
			 sroce_segs_copy(&to, 1, rx->seg, rx->num_seg,
					 pkt->payload_len) : SROCE_COPY_OK;
		sroce_segs_put(&to, 1);
		if (copied)
			return SROCE_RC_NAK_ACCESS;
		total = pkt->payload_len;
		goto done;
	}
	if (flags & SROCE_HDR_FIRST) {
		if (pkt->reth_len <= pkt->payload_len)
			return SROCE_RC_NAK_INVALID;
		if (sroce_rkey_seg(qp, pkt->reth_rkey, pkt->reth_va,
				   pkt->reth_len, IB_ACCESS_REMOTE_WRITE,
				   &qp->resp.rx_write))
			return SROCE_RC_NAK_ACCESS;
		qp->resp.rx_off = 0;
	}
	/* rx_write.len bounds every packet of a multi-packet WRITE. */
	if (pkt->payload_len > qp->resp.rx_write.len - qp->resp.rx_off ||
	    ((flags & SROCE_HDR_LAST) &&
	     qp->resp.rx_off + pkt->payload_len != qp->resp.rx_write.len))
		return SROCE_RC_NAK_INVALID;
	/*
	 * Each packet's copy checks the rkey again: one revoked since the
	 * first packet (invalidated, rebound, deregistered) takes no more.
	 */
	if (pkt->payload_len) {
		to = qp->resp.rx_write;
		to.addr += qp->resp.rx_off;
		to.len = pkt->payload_len;
		if (sroce_segs_copy(&to, 1, rx->seg, rx->num_seg,
				    pkt->payload_len))
			return SROCE_RC_NAK_ACCESS;
	}
	qp->resp.rx_off += pkt->payload_len;
	if (!(flags & SROCE_HDR_LAST))
		return SROCE_RC_DONE;
	total = qp->resp.rx_write.len;
	sroce_segs_put(&qp->resp.rx_write, 1);
	qp->resp.rx_write = (struct sroce_seg){};
done:
	qp->resp.msn = sroce_psn_add(qp->resp.msn, 1);
	if (imm)
		sroce_rc_finish_recv(qp, IB_WC_SUCCESS, IB_WC_RECV_RDMA_WITH_IMM,
				     total, pkt);
	return SROCE_RC_DONE;
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
	e->opcode = IB_OPCODE_RDMA_READ_REQUEST;
	e->psn = pkt->psn;
	e->len = pkt->reth_len;
	e->npkts = sroce_rc_npkts(e->len, qp->path.mtu);
	e->va = pkt->reth_va;
	e->rkey = pkt->reth_rkey;
	e->mem = mem;
	return SROCE_RC_DONE;
}

/*
 * The atomics and ATOMIC WRITE: 8 bytes at an 8-byte aligned va. An ATOMIC
 * WRITE carries exactly those 8 bytes (RETH length and payload) and needs
 * remote write access. The answer (an atomic's ACK with the value found,
 * an ATOMIC WRITE's empty READ response) is queued in the rd ring, so that
 * a duplicate is answered and never executed again.
 */
static enum sroce_rc_verdict sroce_rc_exec_atomic(struct sroce_qp *qp,
						  const struct sroce_rx *rx)
{
	const struct sroce_pkt *pkt = rx->pkt;
	u64 va = pkt->atm_va, swap_add = pkt->atm_swap_add, orig = 0;
	u32 rkey = pkt->atm_rkey;
	struct sroce_rd_resp *e;
	struct sroce_seg val;
	u8 op;
	int err;

	switch (pkt->opcode) {
	case IB_OPCODE_COMPARE_SWAP:
		op = SROCE_WQE_ATOMIC_CMP_SWP;
		break;
	case IB_OPCODE_FETCH_ADD:
		op = SROCE_WQE_ATOMIC_FETCH_ADD;
		break;
	default:	/* SROCE_OPCODE_ATOMIC_WRITE */
		op = SROCE_WQE_ATOMIC_WRITE;
		va = pkt->reth_va;
		rkey = pkt->reth_rkey;
		if (pkt->reth_len != sizeof(u64) ||
		    pkt->payload_len != sizeof(u64))
			return SROCE_RC_NAK_INVALID;
		break;
	}
	if (va & 7)
		return SROCE_RC_NAK_INVALID;
	if (sroce_rc_rd_full(qp))
		return SROCE_RC_DROP;
	if (op == SROCE_WQE_ATOMIC_WRITE) {
		val = sroce_kseg(&swap_add, sizeof(swap_add));
		if (sroce_segs_copy(&val, 1, rx->seg, rx->num_seg,
				    sizeof(swap_add)))
			return SROCE_RC_NAK_ACCESS;
	}
	err = sroce_remote_atomic(qp, rkey, va, op, swap_add, pkt->atm_compare,
				  &orig);
	if (err)	/* misaligned memory, as a misaligned va above */
		return err == -EINVAL ? SROCE_RC_NAK_INVALID :
					SROCE_RC_NAK_ACCESS;
	e = sroce_rc_rd_push(qp);
	e->opcode = pkt->opcode;
	e->psn = pkt->psn;
	e->npkts = 1;
	e->orig = orig;
	qp->resp.msn = sroce_psn_add(qp->resp.msn, 1);
	return SROCE_RC_DONE;
}

/* Fatal for the connection: says why (a NAK for psn), then stops. */
void sroce_rc_fatal_nak(struct sroce_qp *qp, u8 nak, u32 psn)
{
	if (!sroce_rc_send_aeth(qp, sroce_aeth_nak(nak), psn)) {
		sroce_stat_add(qp->sdev, SROCE_STAT_ERROR_NAKS, 1);
		trace_sroce_nak(qp->ibqp.qp_num, psn, sroce_aeth_nak(nak), true);
	}
	sroce_rc_release_rx(qp);
	sroce_qp_error(qp);
}

/* Sends an RNR NAK or NAK after the responses before it. */
static void sroce_rc_queue_nak(struct sroce_qp *qp, u8 syndrome, u32 psn)
{
	qp->resp.ctrl_pending = true;
	qp->resp.ctrl_syndrome = syndrome;
	qp->resp.ctrl_psn = psn;
	qp->resp.nak_sent = true;
}

/*
 * UC: nothing is acknowledged or resent. A packet after a gap, or one the
 * responder cannot take, drops the message it belongs to; the receive
 * WQE a dropped SEND had started stays for the next message. Only a FIRST
 * or ONLY packet starts a message again.
 */
static void sroce_uc_drop_message(struct sroce_qp *qp, enum sroce_stat why)
{
	sroce_stat_add(qp->sdev, why, 1);
	sroce_rc_drop_message(qp, true);
}

void sroce_uc_request(struct sroce_qp *qp, const struct sroce_rx *rx)
{
	const struct sroce_pkt *pkt = rx->pkt;
	enum sroce_rc_verdict v;
	enum sroce_rc_seq seq;

	if (qp->state != IB_QPS_RTR && qp->state != IB_QPS_RTS &&
	    qp->state != IB_QPS_SQD) {
		sroce_stat_add(qp->sdev, SROCE_STAT_RX_DROP_PROTOCOL, 1);
		return;
	}
	if (sroce_psn_classify(pkt->psn, qp->resp.rx_expected_psn) ==
	    SROCE_PSN_DUPLICATE) {
		sroce_stat_add(qp->sdev, SROCE_STAT_DUPLICATES, 1);
		return;
	}
	if (pkt->psn != qp->resp.rx_expected_psn && qp->resp.rx_seq != SROCE_RC_SEQ_NONE)
		sroce_uc_drop_message(qp, SROCE_STAT_RX_DROP_PROTOCOL);
	qp->resp.rx_expected_psn = sroce_psn_add(pkt->psn, 1);

	seq = sroce_rc_seq_next(qp->resp.rx_seq, pkt->opcode);
	if (seq == SROCE_RC_SEQ_INVALID ||
	    !sroce_rc_payload_ok(pkt->opcode, pkt->payload_len, qp->path.mtu)) {
		/* A message whose start was lost, or a bad packet. */
		sroce_uc_drop_message(qp, SROCE_STAT_RX_DROP_PROTOCOL);
		return;
	}
	if (pkt->opcode >= IB_OPCODE_RDMA_WRITE_FIRST &&
	    pkt->opcode <= IB_OPCODE_RDMA_WRITE_ONLY_WITH_IMMEDIATE)
		v = sroce_rc_exec_write(qp, rx);
	else
		v = sroce_rc_exec_send(qp, rx);
	if (v == SROCE_RC_DONE) {
		qp->resp.rx_seq = seq;
		return;
	}
	sroce_uc_drop_message(qp, v == SROCE_RC_RNR ?
				  SROCE_STAT_RX_DROP_NO_RECV :
				  SROCE_STAT_RX_DROP_PROTOCOL);
}

void sroce_rc_request(struct sroce_qp *qp, const struct sroce_rx *rx)
{
	const struct sroce_pkt *pkt = rx->pkt;
	enum sroce_psn_class class;
	enum sroce_rc_verdict v;
	enum sroce_rc_seq seq;
	u16 flags;

	if (qp->state != IB_QPS_RTR && qp->state != IB_QPS_RTS &&
	    qp->state != IB_QPS_SQD) {
		sroce_stat_add(qp->sdev, SROCE_STAT_RX_DROP_PROTOCOL, 1);
		return;
	}
	class = sroce_psn_classify(pkt->psn, qp->resp.rx_expected_psn);
	if (class == SROCE_PSN_AHEAD) {
		if (!qp->resp.nak_sent) {
			sroce_stat_add(qp->sdev, SROCE_STAT_SEQ_NAKS, 1);
			sroce_rc_queue_nak(qp,
					   sroce_aeth_nak(SROCE_NAK_PSN_SEQUENCE),
					   qp->resp.rx_expected_psn);
		}
		return;
	}
	if (class == SROCE_PSN_DUPLICATE) {
		sroce_rc_duplicate(qp, pkt);
		return;
	}
	if (qp->resp.ctrl_pending)
		return;		/* the same PSN again before we answered */

	flags = sroce_opcode_info(pkt->opcode)->flags;
	seq = sroce_rc_seq_next(qp->resp.rx_seq, pkt->opcode);
	if (seq == SROCE_RC_SEQ_INVALID ||
	    !sroce_rc_payload_ok(pkt->opcode, pkt->payload_len, qp->path.mtu)) {
		v = SROCE_RC_NAK_INVALID;
	} else {
		switch (pkt->opcode) {
		case IB_OPCODE_SEND_FIRST:
		case IB_OPCODE_SEND_MIDDLE:
		case IB_OPCODE_SEND_LAST:
		case IB_OPCODE_SEND_LAST_WITH_IMMEDIATE:
		case IB_OPCODE_SEND_ONLY:
		case IB_OPCODE_SEND_ONLY_WITH_IMMEDIATE:
		case IB_OPCODE_SEND_LAST_WITH_INVALIDATE:
		case IB_OPCODE_SEND_ONLY_WITH_INVALIDATE:
			v = sroce_rc_exec_send(qp, rx);
			break;
		case IB_OPCODE_RDMA_WRITE_FIRST:
		case IB_OPCODE_RDMA_WRITE_MIDDLE:
		case IB_OPCODE_RDMA_WRITE_LAST:
		case IB_OPCODE_RDMA_WRITE_LAST_WITH_IMMEDIATE:
		case IB_OPCODE_RDMA_WRITE_ONLY:
		case IB_OPCODE_RDMA_WRITE_ONLY_WITH_IMMEDIATE:
			v = sroce_rc_exec_write(qp, rx);
			break;
		case IB_OPCODE_RDMA_READ_REQUEST:
			v = sroce_rc_exec_read(qp, pkt);
			if (v == SROCE_RC_DONE)
				qp->resp.msn = sroce_psn_add(qp->resp.msn, 1);
			break;
		case IB_OPCODE_COMPARE_SWAP:
		case IB_OPCODE_FETCH_ADD:
		case SROCE_OPCODE_ATOMIC_WRITE:
			v = sroce_rc_exec_atomic(qp, rx);
			break;
		default:
			v = SROCE_RC_NAK_INVALID;
			break;
		}
	}

	switch (v) {
	case SROCE_RC_DONE:
		qp->resp.nak_sent = false;
		qp->resp.rx_seq = seq;
		qp->resp.rx_expected_psn =
			sroce_rc_next_expected(pkt->psn,
					       pkt->opcode == IB_OPCODE_RDMA_READ_REQUEST,
					       sroce_rc_rd_at(qp, qp->resp.rd_head - 1)->npkts);
		/*
		 * READs, atomics and ATOMIC WRITEs are acknowledged by their
		 * responses. An ACK request that finds one owed already is
		 * answered by that one ACK, sent at the end of the pass for
		 * everything up to rx_expected_psn: counted as coalesced.
		 */
		if (pkt->ack_req && (flags & SROCE_HDR_PAYLOAD) &&
		    pkt->opcode != SROCE_OPCODE_ATOMIC_WRITE) {
			if (qp->resp.ack_pending)
				sroce_stat_add(qp->sdev,
					       SROCE_STAT_ACKS_COALESCED, 1);
			qp->resp.ack_pending = true;
		}
		return;
	case SROCE_RC_RNR:
		sroce_stat_add(qp->sdev, SROCE_STAT_RNR_NAKS, 1);
		sroce_rc_queue_nak(qp, sroce_aeth_rnr(qp->attr.min_rnr_timer),
				   pkt->psn);
		return;
	case SROCE_RC_DROP:
		return;
	default:
		sroce_rc_fatal_nak(qp, sroce_rc_verdict_nak[v], pkt->psn);
		return;
	}
}

/* Drops the responder's state: in the error state and at reset. */
void sroce_rc_drop_state(struct sroce_qp *qp)
{
	struct sroce_rd_resp *e;
	u32 i;

	sroce_rc_release_rx(qp);
	for (i = 0; i < qp->resp.rd_slots; i++) {
		e = &qp->resp.rd[i];
		sroce_segs_put(&e->mem, 1);
		e->mem = (struct sroce_seg){};
	}
	memset(qp->resp.rd, 0, qp->resp.rd_slots * sizeof(*qp->resp.rd));
	qp->resp.rd_head = 0;
	qp->resp.rd_tail = 0;
	qp->resp.ctrl_pending = false;
	qp->resp.ack_pending = false;
	qp->resp.nak_sent = false;
}
