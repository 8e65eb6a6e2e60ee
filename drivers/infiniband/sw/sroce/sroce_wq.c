// SPDX-License-Identifier: GPL-2.0
/*
 * Work-queue services the transports share: copying a send WQE out of the
 * ring once, completing it, taking a receive WQE, and flushing both queues
 * in the error state. All run in the QP's worker, under worker->lock.
 *
 * Rules:
 * - a ring slot is handed back (consumer index) before its CQE is
 *   written, so a process that sees the completion can reuse the slot;
 * - an index the QP's owner cannot have written fails the QP
 *   (SROCE_STAT_QP_RING_ERRORS), it is never followed;
 * - send WQEs complete in SQ order.
 */
#include <sroce/ring.h>
#include "sroce_wq.h"
#include "sroce_trace.h"

/*
 * The completion opcode of an ATOMIC_WRITE: uverbs' IB_UVERBS_WC_ATOMIC_WRITE
 * (6.2 and later name it). Only user QPs post ATOMIC_WRITE, and only a user
 * CQ reads it; a kernel CQ never sees it (on 6.1, 9 is another opcode).
 */
#define SROCE_WC_ATOMIC_WRITE 9

static const u8 sroce_wc_opcode[SROCE_WQE_OPCODE_COUNT] = {
	[SROCE_WQE_SEND] = IB_WC_SEND,
	[SROCE_WQE_SEND_IMM] = IB_WC_SEND,
	[SROCE_WQE_RDMA_WRITE] = IB_WC_RDMA_WRITE,
	[SROCE_WQE_RDMA_WRITE_IMM] = IB_WC_RDMA_WRITE,
	[SROCE_WQE_RDMA_READ] = IB_WC_RDMA_READ,
	[SROCE_WQE_ATOMIC_CMP_SWP] = IB_WC_COMP_SWAP,
	[SROCE_WQE_ATOMIC_FETCH_ADD] = IB_WC_FETCH_ADD,
	[SROCE_WQE_LOCAL_INV] = IB_WC_LOCAL_INV,
	[SROCE_WQE_SEND_INV] = IB_WC_SEND,
	[SROCE_WQE_REG_MR] = IB_WC_REG_MR,
	[SROCE_WQE_BIND_MW] = IB_WC_BIND_MW,
	[SROCE_WQE_ATOMIC_WRITE] = SROCE_WC_ATOMIC_WRITE,
};

void sroce_qp_error(struct sroce_qp *qp)
{
	if (qp->state != IB_QPS_ERR)
		trace_sroce_qp_state(qp->ibqp.qp_num, qp->state, IB_QPS_ERR);
	WRITE_ONCE(qp->state, IB_QPS_ERR);
}

/* A ring index the QP's owner cannot have written: the QP fails. */
void sroce_qp_ring_error(struct sroce_qp *qp)
{
	sroce_stat_add(qp->sdev, SROCE_STAT_QP_RING_ERRORS, 1);
	sroce_qp_error(qp);
}

/* The SQ producer index, and whether the engine may take it (ring.h). */
bool sroce_sq_producer(struct sroce_qp *qp, u32 *producer)
{
	*producer = sroce_ring_read_index(&qp->sq.hdr->producer);
	return sroce_ring_sq_producer_ok(*producer, qp->req.sq_fetched,
					 qp->req.sq_retire,
					 sroce_queue_slots(&qp->sq));
}

/* Receive WQEs posted and not yet taken; -1 for an impossible producer. */
int sroce_rq_posted(struct sroce_qp *qp)
{
	return sroce_ring_posted(sroce_ring_read_index(&qp->rq.hdr->producer),
				 qp->rq.index, sroce_queue_slots(&qp->rq));
}

/*
 * Completes the oldest WQE in flight (qp->req.sq_retire) with status. The slot
 * is handed back (consumer index) before the CQE is written, so a process
 * that sees the completion can reuse the slot at once.
 */
void sroce_complete_send(struct sroce_qp *qp, u8 status)
{
	struct sroce_swqe *sw = sroce_swqe_at(qp, qp->req.sq_retire);
	/* The shadow: still this WQE's once the ring slot is handed back. */
	const struct sroce_wqe_ctrl *c = &sw->wqe->ctrl;
	struct sroce_cqe cqe;

	if (sw->segs_held) {
		sroce_segs_put(sw->segs, sw->num_segs);
		sw->segs_held = false;
	}
	if (sw->rd_counted) {
		qp->req.rd_outstanding--;
		sw->rd_counted = false;
	}
	qp->req.sq_retire++;
	qp->req.sq_blocked = false;
	if ((s32)(qp->req.sq_next - qp->req.sq_retire) < 0)
		qp->req.sq_next = qp->req.sq_retire;
	if ((s32)(qp->req.sq_fetched - qp->req.sq_retire) < 0)
		qp->req.sq_fetched = qp->req.sq_retire;
	sroce_ring_publish(&qp->sq.hdr->consumer, qp->req.sq_retire);
	if (status != IB_WC_SUCCESS || qp->sq_sig_all ||
	    (c->flags & SROCE_WQE_SIGNALED)) {
		cqe = (struct sroce_cqe){
			.wr_id = c->wr_id,
			.status = status,
			.opcode = c->opcode < SROCE_WQE_OPCODE_COUNT ?
				  sroce_wc_opcode[c->opcode] : IB_WC_SEND,
			.byte_len = c->opcode == SROCE_WQE_RDMA_READ ||
				    sroce_wqe_is_atomic(c->opcode) ?
				    sw->msg_len : 0,
			.qp_num = qp->ibqp.qp_num,
		};
		sroce_cq_post(to_scq(qp->ibqp.send_cq), &cqe,
			      sroce_qp_held_events(qp));
	}
	if (status != IB_WC_SUCCESS && status != IB_WC_WR_FLUSH_ERR)
		sroce_qp_error(qp);
}

/* Copies a send WQE out of the ring once, into its shadow. */
u8 sroce_fetch_send(struct sroce_qp *qp, u32 index)
{
	struct sroce_swqe *sw = sroce_swqe_at(qp, index);
	const struct sroce_send_wqe *ring = sroce_queue_slot(&qp->sq, index);
	size_t extra = 0;
	u8 status;

	memcpy(sw->wqe, ring, SROCE_SEND_WQE_BASE);
	status = sroce_wqe_status(sroce_wqe_check_ctrl(&sw->wqe->ctrl,
						       &qp->sq.lim, &extra));
	if (status != IB_WC_SUCCESS)
		return status;
	memcpy(sw->wqe->sge, ring->sge, extra);
	if (sroce_wqe_check_sges(&sw->wqe->ctrl, sw->wqe->sge, &sw->msg_len))
		return IB_WC_LOC_LEN_ERR;
	return IB_WC_SUCCESS;
}

static void sroce_flush_rq(struct sroce_qp *qp)
{
	struct sroce_queue *q = &qp->rq;
	int n = sroce_rq_posted(qp);
	struct sroce_recv_wqe *r;
	struct sroce_cqe cqe = {};

	/* An impossible producer flushes nothing (as flush_pending says). */
	while (n-- > 0) {
		r = sroce_queue_slot(q, q->index);
		cqe.wr_id = READ_ONCE(r->wr_id);
		cqe.status = IB_WC_WR_FLUSH_ERR;
		cqe.opcode = IB_WC_RECV;
		cqe.qp_num = qp->ibqp.qp_num;
		q->index++;
		sroce_ring_publish(&q->hdr->consumer, q->index);
		sroce_cq_post(to_scq(qp->ibqp.recv_cq), &cqe,
			      sroce_qp_held_events(qp));
	}
}

/*
 * In the error state every WQE completes with a flush error; the caller
 * then drops the transport's state.
 */
void sroce_wq_flush(struct sroce_qp *qp)
{
	u32 producer;

	/* An impossible producer: flush what was fetched, nothing more. */
	if (!sroce_sq_producer(qp, &producer))
		producer = qp->req.sq_fetched;
	while (qp->req.sq_retire != producer) {
		if (qp->req.sq_retire == qp->req.sq_fetched) {
			struct sroce_swqe *sw = sroce_swqe_at(qp, qp->req.sq_retire);

			/* Never fetched: its wr_id is all we take from it. */
			memcpy(sw->wqe, sroce_queue_slot(&qp->sq, qp->req.sq_retire),
			       sizeof(struct sroce_wqe_ctrl));
			qp->req.sq_fetched++;
		}
		if (qp->req.sq_retire == qp->req.sq_next)
			qp->req.sq_next++;
		sroce_complete_send(qp, IB_WC_WR_FLUSH_ERR);
	}
	qp->req.sq_next = qp->req.sq_retire;
	WRITE_ONCE(qp->req.resend_at, 0);
	qp->req.rnr_wait = false;
	sroce_flush_rq(qp);
}

/* Whether sroce_wq_flush() has anything to flush. */
bool sroce_wq_flush_pending(struct sroce_qp *qp)
{
	u32 producer;

	/* An impossible index is nothing to flush. */
	return qp->req.sq_fetched != qp->req.sq_retire ||
	       (sroce_sq_producer(qp, &producer) &&
		producer != qp->req.sq_retire) ||
	       sroce_rq_posted(qp) > 0;
}

/* Copies the receive WQE at index once and checks it; sge gets its SGEs. */
static u8 sroce_copy_recv(const struct sroce_queue *q,
			  const struct sroce_wqe_limits *lim, u32 index,
			  struct sroce_recv_wqe *hdr, struct sroce_sge *sge)
{
	const struct sroce_recv_wqe *ring = sroce_queue_slot(q, index);
	size_t extra;

	memcpy(hdr, ring, sizeof(*hdr));
	if (sroce_wqe_check_recv(hdr, lim, &extra))
		return IB_WC_LOC_LEN_ERR;
	memcpy(sge, ring->sge, extra);
	return IB_WC_SUCCESS;
}

static int sroce_srq_ring_posted(const struct sroce_queue *q)
{
	return sroce_ring_posted(sroce_ring_read_index(&q->hdr->producer),
				 READ_ONCE(q->index), sroce_queue_slots(q));
}

/* Lock-free (has_work): the ring is freed only after a grace period. */
static int sroce_srq_posted(struct sroce_srq *srq)
{
	int posted;

	rcu_read_lock();
	posted = sroce_srq_ring_posted(rcu_dereference(srq->ring));
	rcu_read_unlock();
	return posted;
}

/*
 * Takes the next WQE of an SRQ for a QP of any worker: copied, then its
 * slot handed back at once. Raises the armed limit event when fewer than
 * the limit are left. SROCE_RECV_NONE: nothing posted (any more).
 */
static u8 sroce_srq_take(struct sroce_srq *srq, struct sroce_recv_wqe *hdr,
			 struct sroce_sge *sge)
{
	struct ib_event ev = {
		.device = srq->ibsrq.device,
		.element.srq = &srq->ibsrq,
		.event = IB_EVENT_SRQ_LIMIT_REACHED,
	};
	struct sroce_queue *q;
	bool raise = false;
	int posted;
	u8 status;

	spin_lock(&srq->lock);
	q = rcu_dereference_protected(srq->ring, lockdep_is_held(&srq->lock));
	posted = sroce_srq_ring_posted(q);
	if (posted <= 0) {
		spin_unlock(&srq->lock);
		return SROCE_RECV_NONE;
	}
	status = sroce_copy_recv(q, &q->lim, q->index, hdr, sge);
	WRITE_ONCE(q->index, q->index + 1);
	sroce_ring_publish(&q->hdr->consumer, q->index);
	if (srq->limit && posted - 1 < srq->limit) {
		srq->limit = 0;
		raise = true;
	}
	spin_unlock(&srq->lock);
	if (raise && srq->ibsrq.event_handler)
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
	return status;
}

int sroce_recv_posted(struct sroce_qp *qp)
{
	return qp->srq ? sroce_srq_posted(qp->srq) : sroce_rq_posted(qp);
}

u8 sroce_take_recv(struct sroce_qp *qp, struct sroce_seg *segs,
		   unsigned int *nseg, u32 *cap, u64 *wr_id)
{
	struct sroce_recv_wqe hdr;
	/* Only the num_sge entries copied from the ring are read. */
	struct sroce_sge sge[SROCE_MAX_SGE] __uninitialized;
	u8 status;

	if (qp->srq) {
		status = sroce_srq_take(qp->srq, &hdr, sge);
		if (status == SROCE_RECV_NONE)
			return status;
	} else {
		status = sroce_copy_recv(&qp->rq, &qp->rq.lim, qp->rq.index,
					 &hdr, sge);
	}
	*wr_id = hdr.wr_id;
	if (status != IB_WC_SUCCESS)
		return status;
	*cap = sroce_wqe_recv_len(sge, hdr.num_sge);
	if (!sroce_sges_to_segs(qp, sge, hdr.num_sge, IB_ACCESS_LOCAL_WRITE,
				segs))
		return IB_WC_LOC_PROT_ERR;
	*nseg = hdr.num_sge;
	return IB_WC_SUCCESS;
}

/*
 * The receive slot is handed back before its CQE is written. An SRQ's was
 * handed back when it was taken.
 */
void sroce_recv_done(struct sroce_qp *qp)
{
	if (qp->srq)
		return;
	qp->rq.index++;
	sroce_ring_publish(&qp->rq.hdr->consumer, qp->rq.index);
}

/*
 * A QP that takes from an SRQ reached the error state and completed what
 * it had taken: IB_EVENT_QP_LAST_WQE_REACHED, once per error state.
 */
void sroce_srq_last_wqe(struct sroce_qp *qp)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = IB_EVENT_QP_LAST_WQE_REACHED,
	};

	if (!qp->srq || qp->srq_last_wqe)
		return;
	qp->srq_last_wqe = true;
	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}
