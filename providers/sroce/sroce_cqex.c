// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The extended CQ of libsroce: ibv_create_cq_ex() and the ibv_start_poll()
 * family. It reads the same ring as ibv_poll_cq(): a CQE is consumed when
 * the next one is asked for or polling ends. A CQ with completion
 * timestamps has 64-byte slots (struct sroce_cqe_ts).
 */
#include <errno.h>
#include <stdlib.h>
#include "sroce.h"

#define SROCE_WC_FLAGS                                                        \
	(IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM | \
	 IBV_WC_EX_WITH_SRC_QP | IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL |      \
	 IBV_WC_EX_WITH_DLID_PATH_BITS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)

static struct sroce_cq *cqx_to_scq(struct ibv_cq_ex *cqx)
{
	return container_of(cqx, struct sroce_cq, vcq.cq_ex);
}

/* Loads the CQE at the ring's index, if the kernel has written it. */
static int sroce_cqx_load(struct sroce_cq *cq)
{
	struct sroce_ring *r = &cq->ring;
	struct sroce_cqe *cqe = sroce_ring_slot(r, r->index);
	uint8_t owner = ((r->index >> r->log_slots) & 1) ^ 1;

	if (load_acquire(&cqe->owner) != owner) {
		cq->cur = NULL;
		return ENOENT;
	}
	cq->cur = cqe;
	cq->vcq.cq_ex.wr_id = cqe->wr_id;
	cq->vcq.cq_ex.status = cqe->status;
	return 0;
}

static int sroce_start_poll(struct ibv_cq_ex *cqx,
			    struct ibv_poll_cq_attr *attr)
{
	struct sroce_cq *cq = cqx_to_scq(cqx);
	int ret;

	if (attr->comp_mask)
		return EINVAL;
	pthread_spin_lock(&cq->ring.lock);
	ret = sroce_cqx_load(cq);
	if (ret)
		pthread_spin_unlock(&cq->ring.lock);
	return ret;
}

static int sroce_next_poll(struct ibv_cq_ex *cqx)
{
	struct sroce_cq *cq = cqx_to_scq(cqx);

	cq->ring.index++;
	return sroce_cqx_load(cq);
}

static void sroce_end_poll(struct ibv_cq_ex *cqx)
{
	struct sroce_cq *cq = cqx_to_scq(cqx);

	if (cq->cur)
		cq->ring.index++;
	cq->cur = NULL;
	store_release(&cq->ring.hdr->consumer, cq->ring.index);
	pthread_spin_unlock(&cq->ring.lock);
}

static enum ibv_wc_opcode sroce_read_opcode(struct ibv_cq_ex *cqx)
{
	return cqx_to_scq(cqx)->cur->opcode;
}

static uint32_t sroce_read_vendor_err(struct ibv_cq_ex *cqx)
{
	return cqx_to_scq(cqx)->cur->vendor_err;
}

static uint32_t sroce_read_byte_len(struct ibv_cq_ex *cqx)
{
	return cqx_to_scq(cqx)->cur->byte_len;
}

static __be32 sroce_read_imm_data(struct ibv_cq_ex *cqx)
{
	return cqx_to_scq(cqx)->cur->imm_data;
}

static uint32_t sroce_read_qp_num(struct ibv_cq_ex *cqx)
{
	return cqx_to_scq(cqx)->cur->qp_num;
}

static uint32_t sroce_read_src_qp(struct ibv_cq_ex *cqx)
{
	return cqx_to_scq(cqx)->cur->src_qp;
}

static unsigned int sroce_read_wc_flags(struct ibv_cq_ex *cqx)
{
	uint8_t flags = cqx_to_scq(cqx)->cur->flags;

	return ((flags & SROCE_CQE_WITH_IMM) ? IBV_WC_WITH_IMM : 0) |
	       ((flags & SROCE_CQE_WITH_INV) ? IBV_WC_WITH_INV : 0) |
	       ((flags & SROCE_CQE_WITH_GRH) ? IBV_WC_GRH : 0);
}

static uint8_t sroce_read_sl(struct ibv_cq_ex *cqx)
{
	return sroce_cqe_sl(cqx_to_scq(cqx)->cur);
}

/* Nanoseconds of CLOCK_MONOTONIC_RAW, as sroce_query_rt_values reads. */
static uint64_t sroce_read_completion_ts(struct ibv_cq_ex *cqx)
{
	return container_of(cqx_to_scq(cqx)->cur, struct sroce_cqe_ts, cqe)
		->timestamp;
}

/* RoCE has no LIDs: these read as zero. */
static uint32_t sroce_read_zero32(struct ibv_cq_ex *cqx)
{
	return 0;
}

static uint8_t sroce_read_zero8(struct ibv_cq_ex *cqx)
{
	return 0;
}

struct ibv_cq_ex *sroce_create_cq_ex(struct ibv_context *context,
				     struct ibv_cq_init_attr_ex *attr)
{
	struct ibv_cq_init_attr_ex core_attr = *attr;
	struct sroce_cmd_create_cq_ex_resp resp = {};
	struct ibv_create_cq_ex cmd = {};
	struct ibv_cq_ex *cqx;
	struct sroce_cq *cq;
	int ret;

	/* Of the creation flags, the kernel takes IGNORE_OVERRUN. */
	if ((attr->comp_mask & ~(IBV_CQ_INIT_ATTR_MASK_FLAGS |
				 IBV_CQ_INIT_ATTR_MASK_PD)) ||
	    (attr->wc_flags & ~SROCE_WC_FLAGS) ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	     (attr->flags & ~(IBV_CREATE_CQ_ATTR_SINGLE_THREADED |
			      IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN)))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* A CQ names a parent domain (only) for its allocators: none here. */
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) &&
	    (!sroce_is_parent_domain(attr->parent_domain) ||
	     attr->parent_domain->context != context)) {
		errno = EINVAL;
		return NULL;
	}
	core_attr.comp_mask &= ~IBV_CQ_INIT_ATTR_MASK_PD;
	core_attr.parent_domain = NULL;
	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_create_cq_ex(context, &core_attr, &cq->vcq, &cmd,
				   sizeof(cmd), &resp.ibv_resp, sizeof(resp), 0);
	if (ret) {
		free(cq);
		errno = ret;
		return NULL;
	}
	if (sroce_cq_map(cq, context, &resp.drv,
			 attr->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP))
		return NULL;

	cqx = &cq->vcq.cq_ex;
	cqx->start_poll = sroce_start_poll;
	cqx->next_poll = sroce_next_poll;
	cqx->end_poll = sroce_end_poll;
	cqx->read_opcode = sroce_read_opcode;
	cqx->read_vendor_err = sroce_read_vendor_err;
	cqx->read_wc_flags = sroce_read_wc_flags;
	cqx->read_byte_len = sroce_read_byte_len;
	cqx->read_imm_data = sroce_read_imm_data;
	cqx->read_qp_num = sroce_read_qp_num;
	cqx->read_src_qp = sroce_read_src_qp;
	cqx->read_slid = sroce_read_zero32;
	cqx->read_sl = sroce_read_sl;
	cqx->read_dlid_path_bits = sroce_read_zero8;
	if (attr->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
		cqx->read_completion_ts = sroce_read_completion_ts;
	return cqx;
}
