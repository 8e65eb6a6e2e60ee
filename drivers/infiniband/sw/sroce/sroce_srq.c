// SPDX-License-Identifier: GPL-2.0
/*
 * Shared receive queues: the verbs side (create, modify, query, destroy,
 * kernel posting). The QPs that use an SRQ take from it in the engine
 * (sroce_wq.c).
 *
 * Rules:
 * - an SRQ is a ring in the receive WQE format (struct sroce_recv_wqe),
 *   allocated and, for a user SRQ, mapped like an RQ; userspace writes
 *   the producer index, the engine the consumer index, and a taker copies
 *   a WQE before it hands the slot back;
 * - the limit (IB_SRQ_LIMIT) arms one IB_EVENT_SRQ_LIMIT_REACHED, raised
 *   by the engine when a take leaves fewer WQEs posted than the limit;
 * - ib_core refuses to destroy an SRQ that a QP still uses, so the engine
 *   never takes from a destroyed one; its ring goes with its mmap entry.
 */
#include <linux/log2.h>
#include "sroce.h"
#include "sroce_verbs.h"

static int sroce_srq_check_attr(struct ib_srq_attr *attr)
{
	if (!attr->max_wr || attr->max_wr > SROCE_MAX_QP_WR ||
	    attr->max_sge > SROCE_MAX_SGE || attr->srq_limit > attr->max_wr)
		return -EINVAL;
	return 0;
}

int sroce_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibsrq->device);
	struct sroce_srq *srq = to_ssrq(ibsrq);
	struct sroce_create_srq_resp resp = {};
	struct ib_srq_attr *attr = &init->attr;
	struct sroce_ucontext *uctx;
	u32 slots, slot;
	int err;

	if (init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	err = sroce_srq_check_attr(attr);
	if (err)
		return err;
	if (udata) {
		err = sroce_udata_expect_no_req(udata);
		if (err)
			return err;
	}
	if (!sroce_obj_take(&sdev->num_srq, sdev->lim.max_srq))
		return -ENOMEM;

	slots = roundup_pow_of_two(attr->max_wr);
	slot = roundup_pow_of_two(SROCE_RECV_WQE_BASE + max(attr->max_sge, 1U) *
				  (u32)sizeof(struct sroce_sge));
	err = sroce_queue_init(&srq->q, ilog2(slots), ilog2(slot));
	if (err)
		goto err_count;
	srq->q.lim.slot_size = slot;
	srq->q.lim.max_sge = min_t(u32, (slot - SROCE_RECV_WQE_BASE) /
				 sizeof(struct sroce_sge), SROCE_MAX_SGE);
	spin_lock_init(&srq->lock);
	spin_lock_init(&srq->kpost_lock);
	srq->limit = attr->srq_limit;
	srq->is_user = !!udata;
	attr->max_wr = slots;
	attr->max_sge = srq->q.lim.max_sge;

	if (udata) {
		uctx = rdma_udata_to_drv_context(udata, struct sroce_ucontext,
						 ibuc);
		err = sroce_queue_map(&uctx->ibuc, &srq->q, &resp.mmap_offset);
		if (err)
			goto err_queue;
		resp.mmap_len = srq->q.size;
		resp.log_slots = srq->q.log_slots;
		resp.log_slot_size = srq->q.log_slot_size;
		err = sroce_udata_copy_resp(udata, &resp, sizeof(resp));
		if (err)
			goto err_queue;
	}
	return 0;

err_queue:
	sroce_queue_free(&srq->q);
err_count:
	atomic_dec(&sdev->num_srq);
	return err;
}

int sroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);

	/* The ring is not resized: it was sized at creation. */
	if (mask & ~IB_SRQ_LIMIT)
		return -EOPNOTSUPP;
	if (!(mask & IB_SRQ_LIMIT))
		return 0;
	if (attr->srq_limit > sroce_queue_slots(&srq->q))
		return -EINVAL;
	spin_lock(&srq->lock);
	srq->limit = attr->srq_limit;
	spin_unlock(&srq->lock);
	return 0;
}

int sroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);

	attr->max_wr = sroce_queue_slots(&srq->q);
	attr->max_sge = srq->q.lim.max_sge;
	attr->srq_limit = READ_ONCE(srq->limit);
	return 0;
}

int sroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibsrq->device);
	struct sroce_srq *srq = to_ssrq(ibsrq);

	sroce_queue_free(&srq->q);
	atomic_dec(&sdev->num_srq);
	return 0;
}

/* Kernel posters write the same WQE format into the same ring. */
int sroce_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	unsigned long flags;
	int err;

	if (srq->is_user)
		return -EOPNOTSUPP;
	spin_lock_irqsave(&srq->kpost_lock, flags);
	err = sroce_queue_post_recv(&srq->q, srq->q.lim.max_sge, wr, bad_wr);
	spin_unlock_irqrestore(&srq->kpost_lock, flags);
	return err;
}
