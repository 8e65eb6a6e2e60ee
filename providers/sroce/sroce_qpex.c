// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The extended QP of libsroce: ibv_create_qp_ex() and the ibv_wr_* post
 * API. Work requests are built straight into the SQ ring between
 * ibv_wr_start() and ibv_wr_complete(), which publishes them at once (and
 * kicks the engine only if it sleeps); ibv_wr_abort() drops them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "sroce.h"

/* The ibv_wr_* operations each QP type offers (send_ops_flags). */
#define SROCE_SEND_OPS_UD                                                     \
	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM)
#define SROCE_SEND_OPS_UC                                                     \
	(SROCE_SEND_OPS_UD | IBV_QP_EX_WITH_RDMA_WRITE |                      \
	 IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_LOCAL_INV |      \
	 IBV_QP_EX_WITH_BIND_MW)
#define SROCE_SEND_OPS                                                        \
	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |                 \
	 IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |     \
	 IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |       \
	 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_LOCAL_INV |      \
	 IBV_QP_EX_WITH_SEND_WITH_INV | IBV_QP_EX_WITH_BIND_MW)

static struct sroce_qp *qpx_to_sqp(struct ibv_qp_ex *qpx)
{
	return container_of(qpx, struct sroce_qp, vqp.qp_ex);
}

/*
 * A new WQE at the ring's next slot; NULL (and a batch error) if full or
 * if the QP's type does not take the opcode.
 */
static struct sroce_send_wqe *sroce_wr_new(struct ibv_qp_ex *qpx, uint8_t opcode)
{
	struct sroce_qp *qp = qpx_to_sqp(qpx);
	struct sroce_ring *r = &qp->sq;
	struct sroce_send_wqe *w;

	qp->cur = NULL;
	if (qp->batch_err)
		return NULL;
	if (!(qp->wqe_ops & (1U << opcode)) ||
	    !sroce_wqe_flags_ok(opcode, qpx->wr_flags)) {
		qp->batch_err = EINVAL;
		return NULL;
	}
	if (r->index - load_acquire(&r->hdr->consumer) >= (1U << r->log_slots)) {
		qp->batch_err = ENOMEM;
		return NULL;
	}
	w = sroce_ring_slot(r, r->index++);
	sroce_wqe_enc_start(w, opcode, qpx->wr_id, qpx->wr_flags);
	qp->cur = w;
	return w;
}

static void sroce_wr_send(struct ibv_qp_ex *qpx)
{
	sroce_wr_new(qpx, SROCE_WQE_SEND);
}

static void sroce_wr_send_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	struct sroce_send_wqe *w = sroce_wr_new(qpx, SROCE_WQE_SEND_INV);

	if (w)
		sroce_wqe_enc_imm(w, invalidate_rkey);
}

/* No data segment follows: the WQE is complete as it is. */
static void sroce_wr_local_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	struct sroce_qp *qp = qpx_to_sqp(qpx);
	struct sroce_send_wqe *w = sroce_wr_new(qpx, SROCE_WQE_LOCAL_INV);

	if (w)
		sroce_wqe_enc_imm(w, invalidate_rkey);
	qp->cur = NULL;
}

/* A type 2 bind; no data segment follows. */
static void sroce_wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw,
			     uint32_t rkey,
			     const struct ibv_mw_bind_info *bind_info)
{
	struct sroce_qp *qp = qpx_to_sqp(qpx);
	struct sroce_send_wqe *w = sroce_wr_new(qpx, SROCE_WQE_BIND_MW);

	if (w)
		sroce_set_bind(w, rkey, bind_info);
	qp->cur = NULL;
}

static void sroce_wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm)
{
	struct sroce_send_wqe *w = sroce_wr_new(qpx, SROCE_WQE_SEND_IMM);

	if (w)
		sroce_wqe_enc_imm(w, imm);
}

static void sroce_wr_rdma(struct ibv_qp_ex *qpx, uint8_t op, uint32_t rkey,
			  uint64_t addr, __be32 imm)
{
	struct sroce_send_wqe *w = sroce_wr_new(qpx, op);

	if (!w)
		return;
	sroce_wqe_enc_raddr(w, addr, rkey);
	sroce_wqe_enc_imm(w, imm);
}

static void sroce_wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey,
				uint64_t addr)
{
	sroce_wr_rdma(qpx, SROCE_WQE_RDMA_WRITE, rkey, addr, 0);
}

static void sroce_wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey,
				    uint64_t addr, __be32 imm)
{
	sroce_wr_rdma(qpx, SROCE_WQE_RDMA_WRITE_IMM, rkey, addr, imm);
}

static void sroce_wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey,
			       uint64_t addr)
{
	sroce_wr_rdma(qpx, SROCE_WQE_RDMA_READ, rkey, addr, 0);
}

static void sroce_wr_atomic(struct ibv_qp_ex *qpx, uint8_t op, uint32_t rkey,
			    uint64_t addr, uint64_t swap_add, uint64_t compare)
{
	struct sroce_send_wqe *w = sroce_wr_new(qpx, op);

	if (w)
		sroce_wqe_enc_atomic(w, addr, rkey, swap_add, compare);
}

static void sroce_wr_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey,
			     uint64_t addr, uint64_t compare, uint64_t swap)
{
	sroce_wr_atomic(qpx, SROCE_WQE_ATOMIC_CMP_SWP, rkey, addr, swap, compare);
}

static void sroce_wr_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey,
			       uint64_t addr, uint64_t add)
{
	sroce_wr_atomic(qpx, SROCE_WQE_ATOMIC_FETCH_ADD, rkey, addr,
			add, 0);
}

/* ATOMIC_WRITE carries its 8 bytes in the WQE: no data setter follows. */
static void sroce_wr_atomic_write(struct ibv_qp_ex *qpx, uint32_t rkey,
				  uint64_t addr, const void *atomic_wr)
{
	struct sroce_qp *qp = qpx_to_sqp(qpx);
	struct sroce_send_wqe *w = sroce_wr_new(qpx, SROCE_WQE_ATOMIC_WRITE);

	if (w)
		sroce_wqe_enc_atomic_write(w, addr, rkey, atomic_wr);
	qp->cur = NULL;
}

static void sroce_wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah,
				 uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct sroce_qp *qp = qpx_to_sqp(qpx);

	if (!qp->cur)
		return;
	if (!qp->ud || !ah || remote_qpn > SROCE_QPN_MASK) {
		qp->batch_err = EINVAL;
		return;
	}
	sroce_wqe_enc_ud(qp->cur, &to_sah(ah)->av, remote_qpn, remote_qkey);
}

/*
 * A UD message must fit the port's path MTU: the data setters check it,
 * so that ibv_wr_complete() fails the batch.
 */
static bool sroce_wr_too_long(struct sroce_qp *qp, uint64_t len)
{
	return qp->ud && len > sroce_port_mtu(qp);
}

static void sroce_wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num,
				  const struct ibv_sge *sge)
{
	struct sroce_qp *qp = qpx_to_sqp(qpx);
	uint64_t len = 0;
	size_t i;

	if (!qp->cur)
		return;
	if (num > qp->max_send_sge) {
		qp->batch_err = EINVAL;
		return;
	}
	if (qp->ud) {
		for (i = 0; i < num; i++)
			len += sge[i].length;
		if (sroce_wr_too_long(qp, len)) {
			qp->batch_err = EINVAL;
			return;
		}
	}
	/* One data setter per work request: a second replaces the first. */
	qp->cur->ctrl.num_sge = 0;
	for (i = 0; i < num; i++)
		sroce_wqe_enc_sge(qp->cur, sge[i].addr, sge[i].length,
				  sge[i].lkey);
}

static void sroce_wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey,
			     uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	sroce_wr_set_sge_list(qpx, 1, &sge);
}

static void sroce_wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t num,
					  const struct ibv_data_buf *buf)
{
	struct sroce_qp *qp = qpx_to_sqp(qpx);
	size_t i;

	if (!qp->cur)
		return;
	if (!sroce_wqe_flags_ok(qp->cur->ctrl.opcode, SROCE_VERBS_SEND_INLINE)) {
		qp->batch_err = EINVAL;	/* a READ, an atomic: no data of its own */
		return;
	}
	qp->cur->ctrl.inline_len = 0;	/* a second setter replaces the first */
	sroce_wqe_enc_inline_begin(qp->cur);
	for (i = 0; i < num; i++) {
		/* A length over max_inline would not survive the cast. */
		if (buf[i].length > qp->max_inline ||
		    sroce_wr_too_long(qp, (uint64_t)qp->cur->ctrl.inline_len +
					      buf[i].length) ||
		    sroce_wqe_enc_inline(qp->cur, buf[i].addr,
					 (uint32_t)buf[i].length,
					 qp->max_inline)) {
			qp->batch_err = EINVAL;
			return;
		}
	}
}

static void sroce_wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr,
				     size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	sroce_wr_set_inline_data_list(qpx, 1, &buf);
}

static void sroce_wr_start(struct ibv_qp_ex *qpx)
{
	struct sroce_qp *qp = qpx_to_sqp(qpx);

	pthread_spin_lock(&qp->sq.lock);
	qp->batch_start = qp->sq.index;
	qp->batch_err = sroce_qp_can_send(qp) ? 0 : EINVAL;
	qp->cur = NULL;
}

static void sroce_wr_abort(struct ibv_qp_ex *qpx)
{
	struct sroce_qp *qp = qpx_to_sqp(qpx);

	qp->sq.index = qp->batch_start;
	qp->cur = NULL;
	pthread_spin_unlock(&qp->sq.lock);
}

static int sroce_wr_complete(struct ibv_qp_ex *qpx)
{
	struct sroce_qp *qp = qpx_to_sqp(qpx);
	int err = qp->batch_err;
	bool posted;

	if (err) {
		sroce_wr_abort(qpx);
		return err;
	}
	posted = qp->sq.index != qp->batch_start;
	if (posted)
		store_release(&qp->sq.hdr->producer, qp->sq.index);
	qp->cur = NULL;
	pthread_spin_unlock(&qp->sq.lock);
	if (posted)
		sroce_sq_doorbell(qp);
	return 0;
}

static void sroce_qpex_init(struct sroce_qp *qp)
{
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;

	qpx->wr_send = sroce_wr_send;
	qpx->wr_send_imm = sroce_wr_send_imm;
	qpx->wr_send_inv = sroce_wr_send_inv;
	qpx->wr_local_inv = sroce_wr_local_inv;
	qpx->wr_bind_mw = sroce_wr_bind_mw;
	qpx->wr_rdma_write = sroce_wr_rdma_write;
	qpx->wr_rdma_write_imm = sroce_wr_rdma_write_imm;
	qpx->wr_rdma_read = sroce_wr_rdma_read;
	qpx->wr_atomic_cmp_swp = sroce_wr_cmp_swp;
	qpx->wr_atomic_fetch_add = sroce_wr_fetch_add;
	qpx->wr_atomic_write = sroce_wr_atomic_write;
	qpx->wr_set_ud_addr = sroce_wr_set_ud_addr;
	qpx->wr_set_sge = sroce_wr_set_sge;
	qpx->wr_set_sge_list = sroce_wr_set_sge_list;
	qpx->wr_set_inline_data = sroce_wr_set_inline_data;
	qpx->wr_set_inline_data_list = sroce_wr_set_inline_data_list;
	qpx->wr_start = sroce_wr_start;
	qpx->wr_complete = sroce_wr_complete;
	qpx->wr_abort = sroce_wr_abort;
	qp->vqp.comp_mask |= VERBS_QP_EX;
}

struct ibv_qp *sroce_create_qp_ex(struct ibv_context *context,
				  struct ibv_qp_init_attr_ex *attr)
{
	struct sroce_cmd_create_qp_resp resp = {};
	struct sroce_cmd_create_qp cmd = {};
	struct ibv_qp_init_attr_ex core;
	uint64_t send_ops;
	struct sroce_qp *qp;
	int ret;

	switch (attr->qp_type) {
	case IBV_QPT_RC:
		send_ops = SROCE_SEND_OPS;
		if (to_sctx(context)->kernel_caps &
		    SROCE_UCONTEXT_CAP_ATOMIC_WRITE)
			send_ops |= IBV_QP_EX_WITH_ATOMIC_WRITE;
		break;
	case IBV_QPT_UC:
		send_ops = SROCE_SEND_OPS_UC;
		break;
	case IBV_QPT_UD:
		send_ops = SROCE_SEND_OPS_UD;
		break;
	default:
		send_ops = 0;
		break;
	}
	/* No creation flag is supported; naming none of them is fine. */
	if (attr->comp_mask & ~(IBV_QP_INIT_ATTR_PD |
				IBV_QP_INIT_ATTR_SEND_OPS_FLAGS |
				IBV_QP_INIT_ATTR_CREATE_FLAGS) ||
	    !(attr->comp_mask & IBV_QP_INIT_ATTR_PD) ||
	    ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	     attr->create_flags)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    (!send_ops || (attr->send_ops_flags & ~send_ops))) {
		errno = EOPNOTSUPP;
		return NULL;
	}

	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	sroce_qp_kick_fd_open(qp, context, &cmd.drv);
	/* The core's command takes no creation-flags mask bit. */
	core = *attr;
	core.comp_mask &= ~IBV_QP_INIT_ATTR_CREATE_FLAGS;
	ret = ibv_cmd_create_qp_ex(context, &qp->vqp, &core, &cmd.ibv_cmd,
				   sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	attr->cap = core.cap;
	if (ret) {
		sroce_qp_kick_fd_close(qp);
		free(qp);
		errno = ret;
		return NULL;
	}
	ret = sroce_qp_map(qp, context, attr->qp_type, &resp.drv, &attr->cap);
	if (ret) {
		ibv_cmd_destroy_qp(&qp->vqp.qp);
		sroce_qp_kick_fd_close(qp);
		free(qp);
		errno = ret;
		return NULL;
	}
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
		sroce_qpex_init(qp);
	return &qp->vqp.qp;
}
