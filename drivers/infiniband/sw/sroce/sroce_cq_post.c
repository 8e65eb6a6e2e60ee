// SPDX-License-Identifier: GPL-2.0
/*
 * Producing CQEs: the transports post completions here, under cq->lock
 * (QPs of several workers may share a CQ). The rules of the ring are in
 * sroce_cq.c.
 */
#include "sroce.h"
#include "sroce_trace.h"

static bool sroce_cqe_wants_event(u32 arm, const struct sroce_cqe *cqe)
{
	if (!(arm & 1))
		return true;
	return (cqe->flags & SROCE_CQE_SOLICITED) ||
	       cqe->status != IB_WC_SUCCESS;
}

/*
 * The consumer's handler runs with bottom halves off. A kernel CQ polled in
 * softirq (IB_POLL_SOFTIRQ) schedules its irq_poll there; raised from a
 * task, the softirq would wait for ksoftirqd or the CPU's next interrupt,
 * while local_bh_enable() runs it at once. Completions are posted from
 * passes only: task context, interrupts on.
 */
static void sroce_cq_event(struct sroce_cq *cq)
{
	local_bh_disable();
	cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	local_bh_enable();
}

void sroce_cq_post(struct sroce_cq *cq, struct sroce_cqe *cqe)
{
	struct sroce_queue *q = &cq->q;
	struct sroce_cqe *slot;
	bool event = false, overflow = false, written = false;
	unsigned long flags;
	u32 consumer, arm;

	spin_lock_irqsave(&cq->lock, flags);
	consumer = sroce_ring_read_index(&q->hdr->consumer);
	if (q->index - consumer >= sroce_queue_slots(q)) {
		overflow = !cq->overflowed;
		cq->overflowed = true;
		goto unlock;
	}
	slot = sroce_queue_slot(q, q->index);
	slot->wr_id = cqe->wr_id;
	slot->status = cqe->status;
	slot->opcode = cqe->opcode;
	slot->flags = cqe->flags;
	slot->byte_len = cqe->byte_len;
	slot->imm_data = cqe->imm_data;
	slot->qp_num = cqe->qp_num;
	slot->src_qp = cqe->src_qp;
	slot->vendor_err = cqe->vendor_err;
	/* The CQE before its owner byte; pairs with the consumer's acquire. */
	smp_store_release(&slot->owner, sroce_cqe_owner(q, q->index));
	q->index++;
	sroce_ring_publish(&q->hdr->producer, q->index);
	written = true;

	/* Pairs with the consumer's barrier between arming and polling. */
	smp_mb();
	arm = READ_ONCE(q->hdr->cq_arm);
	if ((arm >> 1) != cq->armed_seq && sroce_cqe_wants_event(arm, cqe)) {
		cq->armed_seq = arm >> 1;
		event = true;
	}
unlock:
	spin_unlock_irqrestore(&cq->lock, flags);
	if (written)
		trace_sroce_cqe(cq->ibcq.res.id, cqe->qp_num, cqe->wr_id,
				cqe->status, cqe->opcode, cqe->byte_len);

	if (overflow && cq->ibcq.event_handler) {
		struct ib_event ev = {
			.device = cq->ibcq.device,
			.element.cq = &cq->ibcq,
			.event = IB_EVENT_CQ_ERR,
		};

		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
	}
	if (event && cq->ibcq.comp_handler)
		sroce_cq_event(cq);
}

