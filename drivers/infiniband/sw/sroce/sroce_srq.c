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
 * - a resize (IB_SRQ_MAX_WR) moves the WQEs not yet taken to a new ring
 *   under both locks; the old one is freed after an RCU grace period,
 *   since a QP's has_work reads the ring without the locks;
 * - ib_core refuses to destroy an SRQ that a QP still uses, so the engine
 *   never takes from a destroyed one; its ring goes with its mmap entry.
 */
#include <linux/log2.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include "sroce.h"
#include "sroce_verbs.h"

static int sroce_srq_check_attr(struct ib_srq_attr *attr)
{
	if (!attr->max_wr || attr->max_wr > SROCE_MAX_QP_WR ||
	    attr->max_sge > SROCE_MAX_SGE || attr->srq_limit > attr->max_wr)
		return -EINVAL;
	return 0;
}

/*
 * A ring of at least max_wr receive WQEs of slot bytes each, mapped into
 * the caller (udata) and described in *resp; freed by sroce_srq_ring_free.
 */
static struct sroce_queue *sroce_srq_ring_new(struct ib_udata *udata,
					      u32 max_wr, u32 slot,
					      struct sroce_create_srq_resp *resp)
{
	struct sroce_ucontext *uctx;
	struct sroce_queue *q;
	int err;

	q = kzalloc(sizeof(*q), GFP_KERNEL_ACCOUNT);
	if (!q)
		return ERR_PTR(-ENOMEM);
	err = sroce_queue_init(q, ilog2(roundup_pow_of_two(max_wr)),
			       ilog2(slot));
	if (err)
		goto err_free;
	q->lim.slot_size = slot;
	q->lim.max_sge = min_t(u32, (slot - SROCE_RECV_WQE_BASE) /
			       sizeof(struct sroce_sge), SROCE_MAX_SGE);
	if (udata) {
		uctx = rdma_udata_to_drv_context(udata, struct sroce_ucontext,
						 ibuc);
		err = sroce_queue_map(&uctx->ibuc, q, &resp->mmap_offset);
		if (err)
			goto err_queue;
		resp->mmap_len = q->size;
		resp->log_slots = q->log_slots;
		resp->log_slot_size = q->log_slot_size;
	}
	return q;

err_queue:
	sroce_queue_free(q);
err_free:
	kfree(q);
	return ERR_PTR(err);
}

static void sroce_srq_ring_free(struct sroce_queue *q)
{
	sroce_queue_free(q);
	kfree(q);
}

int sroce_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibsrq->device);
	struct sroce_srq *srq = to_ssrq(ibsrq);
	struct sroce_create_srq_resp resp = {};
	struct ib_srq_attr *attr = &init->attr;
	struct sroce_queue *q;
	u32 slot;
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

	slot = roundup_pow_of_two(SROCE_RECV_WQE_BASE + max(attr->max_sge, 1U) *
				  (u32)sizeof(struct sroce_sge));
	q = sroce_srq_ring_new(udata, attr->max_wr, slot, &resp);
	if (IS_ERR(q)) {
		err = PTR_ERR(q);
		goto err_count;
	}
	RCU_INIT_POINTER(srq->ring, q);
	spin_lock_init(&srq->lock);
	spin_lock_init(&srq->kpost_lock);
	srq->limit = attr->srq_limit;
	srq->is_user = !!udata;
	attr->max_wr = sroce_queue_slots(q);
	attr->max_sge = q->lim.max_sge;

	err = sroce_udata_copy_resp(udata, &resp, sizeof(resp));
	if (err)
		goto err_queue;
	return 0;

err_queue:
	sroce_srq_ring_free(q);
err_count:
	atomic_dec(&sdev->num_srq);
	return err;
}

/*
 * Moves the SRQ to a ring of at least max_wr WQEs, the WQEs posted and not
 * yet taken first. The producer index is the poster's: one beyond what
 * the old ring holds, or more WQEs than the new one holds, is refused.
 * A user SRQ learns its new ring through req.resp_addr, written before
 * the move; the old ring stays mapped in the process until the provider
 * unmaps it.
 */
static int sroce_srq_resize(struct sroce_srq *srq, u32 max_wr,
			    struct ib_udata *udata)
{
	struct sroce_create_srq_resp resp = {};
	struct sroce_modify_srq_req req;
	struct sroce_queue *old, *q;
	unsigned long flags;
	u32 slot, n, i;
	int err;

	if (!max_wr || max_wr > SROCE_MAX_QP_WR)
		return -EINVAL;
	err = sroce_udata_copy_req(udata, &req, sizeof(req));
	if (err)
		return err;
	if (req.comp_mask || req.reserved_20 || (srq->is_user && !req.resp_addr))
		return -EINVAL;
	rcu_read_lock();
	slot = rcu_dereference(srq->ring)->lim.slot_size;	/* fixed */
	rcu_read_unlock();
	q = sroce_srq_ring_new(udata, max_wr, slot, &resp);
	if (IS_ERR(q))
		return PTR_ERR(q);
	if (udata && copy_to_user(u64_to_user_ptr(req.resp_addr), &resp,
				  sizeof(resp))) {
		err = -EFAULT;
		goto err_free;
	}

	spin_lock_irqsave(&srq->kpost_lock, flags);
	spin_lock(&srq->lock);
	old = rcu_dereference_protected(srq->ring, lockdep_is_held(&srq->lock));
	n = sroce_ring_read_index(&old->hdr->producer) - old->index;
	if (n > sroce_queue_slots(old) || n > sroce_queue_slots(q)) {
		spin_unlock(&srq->lock);
		spin_unlock_irqrestore(&srq->kpost_lock, flags);
		err = -EINVAL;
		goto err_free;
	}
	for (i = 0; i < n; i++)
		memcpy(sroce_queue_slot(q, i),
		       sroce_queue_slot(old, old->index + i), slot);
	sroce_ring_publish(&q->hdr->producer, n);
	rcu_assign_pointer(srq->ring, q);
	spin_unlock(&srq->lock);
	spin_unlock_irqrestore(&srq->kpost_lock, flags);

	synchronize_rcu();	/* sroce_srq_posted() may still read old */
	sroce_srq_ring_free(old);
	return 0;

err_free:
	sroce_srq_ring_free(q);
	return err;
}

int sroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	struct sroce_queue *q;
	int err;

	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EOPNOTSUPP;
	if (mask & IB_SRQ_MAX_WR) {
		if ((mask & IB_SRQ_LIMIT) && attr->srq_limit > attr->max_wr)
			return -EINVAL;
		err = sroce_srq_resize(srq, attr->max_wr, udata);
	} else {
		err = sroce_udata_expect_no_req(udata);
	}
	if (err || !(mask & IB_SRQ_LIMIT))
		return err;
	spin_lock(&srq->lock);
	q = rcu_dereference_protected(srq->ring, lockdep_is_held(&srq->lock));
	if (attr->srq_limit > sroce_queue_slots(q))
		err = -EINVAL;
	else
		srq->limit = attr->srq_limit;
	spin_unlock(&srq->lock);
	return err;
}

int sroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	struct sroce_queue *q;

	rcu_read_lock();
	q = rcu_dereference(srq->ring);
	attr->max_wr = sroce_queue_slots(q);
	attr->max_sge = q->lim.max_sge;
	rcu_read_unlock();
	attr->srq_limit = READ_ONCE(srq->limit);
	return 0;
}

int sroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibsrq->device);
	struct sroce_srq *srq = to_ssrq(ibsrq);

	/* No QP takes from it any more, and no modify runs beside destroy. */
	sroce_srq_ring_free(rcu_dereference_protected(srq->ring, true));
	atomic_dec(&sdev->num_srq);
	return 0;
}

/* Kernel posters write the same WQE format into the same ring. */
int sroce_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	struct sroce_queue *q;
	unsigned long flags;
	int err;

	if (srq->is_user)
		return -EOPNOTSUPP;
	spin_lock_irqsave(&srq->kpost_lock, flags);
	q = rcu_dereference_protected(srq->ring,
				      lockdep_is_held(&srq->kpost_lock));
	err = sroce_queue_post_recv(q, q->lim.max_sge, wr, bad_wr);
	spin_unlock_irqrestore(&srq->kpost_lock, flags);
	return err;
}
