// SPDX-License-Identifier: GPL-2.0
/*
 * Completion queues.
 *
 * The engine produces CQEs into the ring under cq->lock (QPs of several
 * workers may share a CQ); userspace consumes them from its mapping without
 * a system call, kernel consumers through sroce_poll_cq(). Rules:
 * - a CQE's owner byte is written last, with release semantics;
 * - the consumer index is untrusted: a producer that finds the ring full
 *   drops the CQE, marks the CQ overflowed and raises IB_EVENT_CQ_ERR once
 *   (none for a CQ created to ignore overruns, whose consumer sized it);
 * - arming is a store of a new sequence into hdr->cq_arm; the producer
 *   raises one completion event per new sequence it sees;
 * - a CQ created with IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION has 64-byte
 *   slots (struct sroce_cqe_ts): each CQE carries the time it was written.
 *   Only user CQs have them (struct ib_wc has no timestamp).
 */
#include <linux/overflow.h>
#include <linux/log2.h>
#include "sroce.h"
#include "sroce_verbs.h"

int sroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    SROCE_CREATE_CQ_ARG *arg)
{
	struct ib_udata *udata = sroce_create_cq_udata(arg);
	struct sroce_dev *sdev = to_sdev(ibcq->device);
	struct sroce_cq *cq = to_scq(ibcq);
	struct sroce_create_cq_resp resp = {};
	struct sroce_ucontext *uctx;
	bool timestamps = attr->flags & IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION;
	u32 log_slots, log_cqe_size;
	u64 offset;
	int err;

	if (attr->flags & ~(IB_UVERBS_CQ_FLAGS_IGNORE_OVERRUN |
			    IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION))
		return -EOPNOTSUPP;
	if (timestamps && !udata)
		return -EOPNOTSUPP;
	/* Without log_cqe_size the consumer would read 64-byte slots as 32. */
	if (timestamps && udata->outlen <
	    offsetofend(struct sroce_create_cq_resp, log_cqe_size))
		return -EINVAL;
	if (attr->cqe < 1 || attr->cqe > SROCE_MAX_CQE)
		return -EINVAL;
	err = sroce_udata_expect_no_req(udata);
	if (err)
		return err;
	if (!sroce_obj_take(&sdev->num_cq, sdev->lim.max_cq))
		return -ENOMEM;

	/* One slot more than asked: a full ring is told from an empty one. */
	log_slots = order_base_2(attr->cqe + 1);
	log_cqe_size = timestamps ? ilog2(sizeof(struct sroce_cqe_ts)) :
				    ilog2(sizeof(struct sroce_cqe));
	err = sroce_queue_init(&cq->q, log_slots, log_cqe_size);
	if (err)
		goto err_count;
	spin_lock_init(&cq->lock);
	sroce_cq_events_init(cq, attr->comp_vector);
	cq->ibcq.cqe = (1 << log_slots) - 1;
	cq->is_user = !!udata;
	cq->ignore_overrun = attr->flags & IB_UVERBS_CQ_FLAGS_IGNORE_OVERRUN;
	cq->timestamps = timestamps;

	if (udata) {
		uctx = rdma_udata_to_drv_context(udata, struct sroce_ucontext,
						 ibuc);
		err = sroce_queue_map(&uctx->ibuc, &cq->q, &offset);
		if (err)
			goto err_queue;
		resp.comp_mask = SROCE_CREATE_CQ_RESP_CQE_SIZE;
		resp.log_slots = log_slots;
		resp.log_cqe_size = log_cqe_size;
		resp.mmap_offset = offset;
		resp.mmap_len = cq->q.size;
		err = sroce_udata_copy_resp(udata, &resp, sizeof(resp));
		if (err)
			goto err_queue;
	}
	return 0;

err_queue:
	sroce_queue_free(&cq->q);
err_count:
	atomic_dec(&sdev->num_cq);
	return err;
}

/*
 * Moves the CQ to a ring of a new size, keeping the CQEs not yet consumed
 * (the consumer index comes from userspace: a ring it cannot have consumed
 * that far is refused). The old ring stays mapped in the process until the
 * provider unmaps it; its mmap entry goes away now. Slots keep their size.
 */
int sroce_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct sroce_cq *cq = to_scq(ibcq);
	struct sroce_create_cq_resp resp = {};
	struct sroce_queue nq, old;
	struct sroce_ucontext *uctx;
	struct sroce_cqe *from, *to;
	u32 log_cqe_size = cq->q.log_slot_size;	/* fixed at creation */
	unsigned long flags;
	u32 consumer, n, i;
	int err;

	if (cqe < 1 || cqe > SROCE_MAX_CQE)
		return -EINVAL;
	err = sroce_udata_expect_no_req(udata);
	if (err)
		return err;
	err = sroce_queue_init(&nq, order_base_2(cqe + 1), log_cqe_size);
	if (err)
		return err;
	if (udata) {
		uctx = rdma_udata_to_drv_context(udata, struct sroce_ucontext,
						 ibuc);
		err = sroce_queue_map(&uctx->ibuc, &nq, &resp.mmap_offset);
		if (err)
			goto err_free;
	}

	spin_lock_irqsave(&cq->lock, flags);
	consumer = sroce_ring_read_index(&cq->q.hdr->consumer);
	n = cq->q.index - consumer;
	if (n > sroce_queue_slots(&cq->q) || n >= sroce_queue_slots(&nq)) {
		spin_unlock_irqrestore(&cq->lock, flags);
		err = -EINVAL;
		goto err_free;
	}
	for (i = 0; i < n; i++) {
		from = sroce_queue_slot(&cq->q, consumer + i);
		to = sroce_queue_slot(&nq, i);
		memcpy(to, from, 1U << log_cqe_size);
		to->owner = sroce_cqe_owner(&nq, i);
	}
	nq.index = n;
	nq.hdr->producer = n;
	nq.hdr->consumer = 0;
	nq.hdr->cq_arm = READ_ONCE(cq->q.hdr->cq_arm);
	old = cq->q;
	cq->q = nq;
	cq->overflowed = false;
	spin_unlock_irqrestore(&cq->lock, flags);

	sroce_queue_free(&old);
	ibcq->cqe = sroce_queue_slots(&nq) - 1;
	resp.comp_mask = SROCE_CREATE_CQ_RESP_CQE_SIZE;
	resp.log_slots = nq.log_slots;
	resp.log_cqe_size = log_cqe_size;
	resp.mmap_len = nq.size;
	return sroce_udata_copy_resp(udata, &resp, sizeof(resp));

err_free:
	sroce_queue_free(&nq);
	return err;
}

/* The core destroys a CQ only after every QP using it is gone. */
int sroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct sroce_cq *cq = to_scq(ibcq);

	sroce_cq_events_quiesce(cq);
	sroce_queue_free(&cq->q);
	atomic_dec(&to_sdev(ibcq->device)->num_cq);
	return 0;
}

/* Kernel consumers only: user CQs are polled in userspace. */
int sroce_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct sroce_cq *cq = to_scq(ibcq);
	struct sroce_queue *q = &cq->q;
	struct sroce_cqe *cqe;
	unsigned long flags;
	u32 consumer;
	int n = 0;

	spin_lock_irqsave(&cq->lock, flags);
	consumer = q->hdr->consumer;
	while (n < num_entries) {
		cqe = sroce_queue_slot(q, consumer);
		/* Pairs with the release of the owner byte in sroce_cq_post(). */
		if (smp_load_acquire(&cqe->owner) != sroce_cqe_owner(q, consumer))
			break;
		memset(&wc[n], 0, sizeof(wc[n]));
		wc[n].wr_id = cqe->wr_id;
		wc[n].status = cqe->status;
		wc[n].opcode = cqe->opcode;
		wc[n].byte_len = cqe->byte_len;
		wc[n].qp = NULL;
		wc[n].src_qp = cqe->src_qp;
		wc[n].vendor_err = cqe->vendor_err;
		if (cqe->flags & SROCE_CQE_WITH_IMM) {
			wc[n].ex.imm_data = (__force __be32)cqe->imm_data;
			wc[n].wc_flags |= IB_WC_WITH_IMM;
		} else if (cqe->flags & SROCE_CQE_WITH_INV) {
			wc[n].ex.invalidate_rkey = cqe->imm_data;
			wc[n].wc_flags |= IB_WC_WITH_INVALIDATE;
		}
		if (cqe->flags & SROCE_CQE_WITH_GRH) {
			wc[n].wc_flags |= IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE;
			wc[n].network_hdr_type =
				(cqe->flags & SROCE_CQE_IPV4) ? RDMA_NETWORK_IPV4 :
								RDMA_NETWORK_IPV6;
		}
		wc[n].port_num = SROCE_PORT;
		wc[n].qp = sroce_cq_qp_of(cq, cqe->qp_num);
		consumer++;
		n++;
	}
	sroce_ring_publish(&q->hdr->consumer, consumer);
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

int sroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct sroce_cq *cq = to_scq(ibcq);
	struct sroce_queue *q = &cq->q;
	unsigned long irqflags;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	cq->kernel_arm_seq++;
	WRITE_ONCE(q->hdr->cq_arm,
		   (cq->kernel_arm_seq << 1) |
		   ((flags & IB_CQ_SOLICITED_MASK) == IB_CQ_SOLICITED));
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) &&
	    q->hdr->consumer != q->index)
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}
