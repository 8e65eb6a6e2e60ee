// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel posting: post_send and post_recv of a kernel ULP's QP. A user
 * QP's post_send is its kick (the provider wrote the WQEs already).
 *
 * Rules:
 * - kernel posters write the WQE format a provider writes, into the same
 *   rings, through the provider's encoder (include/sroce/wqe_enc.h), and the
 *   engine validates them the same way (include/sroce/wqe.h);
 * - posters of one QP are serialized by qp->kpost_lock; a WQE is
 *   published (the producer moves) only once it is complete, then the
 *   worker is woken (sroce_wake.h): for a send WQE always, for a receive
 *   WQE only in error (it waits for a packet otherwise).
 */
#include "sroce.h"
#include "sroce_verbs.h"
#include "sroce_wake.h"
#include <sroce/wqe_enc.h>

/* The encoder takes the verbs' send flags as they are. */
static_assert(SROCE_VERBS_SEND_FENCE == IB_SEND_FENCE);
static_assert(SROCE_VERBS_SEND_SIGNALED == IB_SEND_SIGNALED);
static_assert(SROCE_VERBS_SEND_SOLICITED == IB_SEND_SOLICITED);
static_assert(SROCE_VERBS_SEND_INLINE == IB_SEND_INLINE);
static_assert(sizeof(struct sroce_send_wqe) == SROCE_SEND_WQE_BASE);

static const u8 sroce_wr_opcode[] = {
	[IB_WR_SEND] = SROCE_WQE_SEND,
	[IB_WR_SEND_WITH_IMM] = SROCE_WQE_SEND_IMM,
	[IB_WR_RDMA_WRITE] = SROCE_WQE_RDMA_WRITE,
	[IB_WR_RDMA_WRITE_WITH_IMM] = SROCE_WQE_RDMA_WRITE_IMM,
	[IB_WR_RDMA_READ] = SROCE_WQE_RDMA_READ,
	[IB_WR_ATOMIC_CMP_AND_SWP] = SROCE_WQE_ATOMIC_CMP_SWP,
	[IB_WR_ATOMIC_FETCH_AND_ADD] = SROCE_WQE_ATOMIC_FETCH_ADD,
	[IB_WR_LOCAL_INV] = SROCE_WQE_LOCAL_INV,
	[IB_WR_SEND_WITH_INV] = SROCE_WQE_SEND_INV,
	[IB_WR_REG_MR] = SROCE_WQE_REG_MR,
};

static int sroce_post_publish(struct sroce_queue *q, u32 producer)
{
	sroce_ring_publish(&q->hdr->producer, producer + 1);
	return 0;
}

/* Kernel posters write the same WQE format into the same ring. */
static int sroce_post_one_send(struct sroce_qp *qp, const struct ib_send_wr *wr)
{
	struct sroce_queue *q = &qp->sq;
	struct sroce_send_wqe *wqe;
	u32 producer = q->hdr->producer;
	int i;

	if (producer - READ_ONCE(q->hdr->consumer) >= sroce_queue_slots(q))
		return -ENOMEM;
	if (wr->opcode >= ARRAY_SIZE(sroce_wr_opcode) ||
	    (wr->opcode != IB_WR_SEND && !sroce_wr_opcode[wr->opcode]) ||
	    !(qp->sq.lim.opcodes & BIT(sroce_wr_opcode[wr->opcode])) ||
	    !sroce_wqe_flags_ok(sroce_wr_opcode[wr->opcode], wr->send_flags))
		return -EINVAL;
	if (wr->num_sge > qp->sq.lim.max_sge)
		return -EINVAL;

	wqe = sroce_queue_slot(q, producer);
	sroce_wqe_enc_start(wqe, sroce_wr_opcode[wr->opcode], wr->wr_id,
			    wr->send_flags);
	switch (wr->opcode) {
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		sroce_wqe_enc_imm(wqe, (__force u32)wr->ex.imm_data);
		break;
	case IB_WR_LOCAL_INV:
	case IB_WR_SEND_WITH_INV:
		sroce_wqe_enc_imm(wqe, wr->ex.invalidate_rkey);
		break;
	default:
		break;
	}

	switch (wr->opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		sroce_wqe_enc_raddr(wqe, rdma_wr(wr)->remote_addr,
				    rdma_wr(wr)->rkey);
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		sroce_wqe_enc_atomic(wqe, atomic_wr(wr)->remote_addr,
				     atomic_wr(wr)->rkey, atomic_wr(wr)->swap,
				     atomic_wr(wr)->compare_add);
		break;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		sroce_wqe_enc_atomic(wqe, atomic_wr(wr)->remote_addr,
				     atomic_wr(wr)->rkey,
				     atomic_wr(wr)->compare_add,
				     atomic_wr(wr)->compare_add);
		break;
	case IB_WR_REG_MR: {
		const struct ib_reg_wr *reg = reg_wr(wr);

		/* Taken now: the consumer may rewrite iova until it posts. */
		if (!reg->mr || reg->mr->device != qp->ibqp.device)
			return -EINVAL;
		sroce_wqe_enc_reg(wqe, reg->mr->iova, reg->mr->length, reg->key,
				  reg->access, reg->mr->page_size);
		return sroce_post_publish(q, producer);
	}
	case IB_WR_LOCAL_INV:
		return sroce_post_publish(q, producer);
	default:
		break;
	}
	if (sroce_qp_is_ud(qp)) {
		const struct ib_ud_wr *ud = ud_wr(wr);

		if (!ud->ah || ud->ah->device != qp->ibqp.device)
			return -EINVAL;
		sroce_wqe_enc_ud(wqe, &to_sah(ud->ah)->av, ud->remote_qpn,
				 ud->remote_qkey);
	}

	if (wr->send_flags & IB_SEND_INLINE)
		sroce_wqe_enc_inline_begin(wqe);
	for (i = 0; i < wr->num_sge; i++) {
		const struct ib_sge *sge = &wr->sg_list[i];

		if (!(wr->send_flags & IB_SEND_INLINE))
			sroce_wqe_enc_sge(wqe, sge->addr, sge->length,
					  sge->lkey);
		else if (sroce_wqe_enc_inline(wqe, (void *)(uintptr_t)sge->addr,
					      sge->length,
					      qp->sq.lim.max_inline))
			return -EINVAL;
	}
	sroce_ring_publish(&q->hdr->producer, producer + 1);
	return 0;
}

int sroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	unsigned long flags;
	int err = 0;

	/* A user QP's producer lives in its mapping: this is the kick. */
	if (qp->owner.user) {
		sroce_engine_run(qp);
		return 0;
	}
	if (READ_ONCE(qp->state) < IB_QPS_RTS) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&qp->kpost_lock, flags);
	for (; wr; wr = wr->next) {
		err = sroce_post_one_send(qp, wr);
		if (err) {
			*bad_wr = wr;
			break;
		}
	}
	spin_unlock_irqrestore(&qp->kpost_lock, flags);
	if (!sroce_engine_post_inline(qp))
		sroce_worker_wake(qp->worker);
	return err;
}

int sroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	unsigned long flags;
	int err;

	if (qp->owner.user)
		return -EOPNOTSUPP;
	if (qp->srq) {
		*bad_wr = wr;
		return -EINVAL;	/* post to its SRQ */
	}
	spin_lock_irqsave(&qp->kpost_lock, flags);
	err = sroce_queue_post_recv(&qp->rq, qp->rq.lim.max_sge, wr, bad_wr);
	spin_unlock_irqrestore(&qp->kpost_lock, flags);
	/*
	 * A receive WQE is work only for a QP in error, which flushes it: no
	 * packet waits for one (a SEND that found none was NAKed RNR and is
	 * resent; a datagram was dropped). Waking the worker for every
	 * repost would cost a ULP a wakeup per message it received.
	 * Published, then the state read; pairs with modify_qp's wake after
	 * it set ERR.
	 */
	smp_mb();
	if (READ_ONCE(qp->state) == IB_QPS_ERR)
		sroce_worker_wake(qp->worker);
	return err;
}
