// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * CQs and QPs of libsroce: the fast path.
 *
 * Posting writes WQEs into the mapped ring and publishes the producer index
 * (release); the kernel is kicked only when the engine worker serving the
 * QP said it is going to sleep. Polling reads CQEs by their owner byte
 * (acquire) and publishes the consumer index. Arming a CQ is a store into
 * its ring header. None of these makes a system call otherwise.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>
#include "sroce.h"

/* The ring's view of a mapping of the kernel's: header, then slots. */
static void sroce_ring_set_map(struct sroce_ring *r, void *map, size_t len,
			       uint32_t log_slots, uint32_t log_slot_size)
{
	r->map = map;
	r->map_len = len;
	r->hdr = map;
	r->slots = (uint8_t *)map + SROCE_QUEUE_SLOTS_OFFSET;
	r->log_slots = log_slots;
	r->log_slot_size = log_slot_size;
}

int sroce_ring_map(struct sroce_ring *r, int fd, uint64_t offset,
		   size_t len, uint32_t log_slots, uint32_t log_slot_size)
{
	void *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			 offset);

	if (map == MAP_FAILED) {
		r->map = MAP_FAILED;
		return errno;
	}
	sroce_ring_set_map(r, map, len, log_slots, log_slot_size);
	r->index = 0;
	pthread_spin_init(&r->lock, PTHREAD_PROCESS_PRIVATE);
	return 0;
}

/*
 * Moves the ring to the kernel's new mapping after a resize and unmaps the
 * old one; its lock and index are the caller's. On failure (errno) the
 * ring keeps the old mapping.
 */
int sroce_ring_remap(struct sroce_ring *r, int fd, uint64_t offset,
		     size_t len, uint32_t log_slots, uint32_t log_slot_size)
{
	void *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			 offset);

	if (map == MAP_FAILED)
		return errno;
	munmap(r->map, r->map_len);
	sroce_ring_set_map(r, map, len, log_slots, log_slot_size);
	return 0;
}

void sroce_ring_unmap(struct sroce_ring *r)
{
	if (r->map && r->map != MAP_FAILED)
		munmap(r->map, r->map_len);
	r->map = NULL;
	pthread_spin_destroy(&r->lock);
}

struct ibv_cq *sroce_create_cq(struct ibv_context *context, int cqe,
			       struct ibv_comp_channel *channel,
			       int comp_vector)
{
	struct sroce_cmd_create_cq_resp resp = {};
	struct ibv_create_cq cmd = {};
	struct sroce_cq *cq;
	int ret;

	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_create_cq(context, cqe, channel, comp_vector, &cq->vcq.cq,
				&cmd, sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret) {
		free(cq);
		errno = ret;
		return NULL;
	}
	if (sroce_cq_map(cq, context, &resp.drv, false))
		return NULL;
	return &cq->vcq.cq;
}

/*
 * Maps the ring of a CQ the kernel just created, whose slots hold a
 * struct sroce_cqe_ts if timestamps were asked for. On failure the CQ is
 * destroyed and freed, errno is set and -1 returned.
 */
int sroce_cq_map(struct sroce_cq *cq, struct ibv_context *context,
		 const struct sroce_create_cq_resp *drv, bool timestamps)
{
	uint32_t log_cqe_size = __builtin_ctz(sizeof(struct sroce_cqe));
	uint32_t want = timestamps ? __builtin_ctz(sizeof(struct sroce_cqe_ts)) :
				     log_cqe_size;
	int ret;

	if (drv->comp_mask & SROCE_CREATE_CQ_RESP_CQE_SIZE)
		log_cqe_size = drv->log_cqe_size;
	if (log_cqe_size != want)
		ret = EPROTO;
	else
		ret = sroce_ring_map(&cq->ring, context->cmd_fd,
				     drv->mmap_offset, drv->mmap_len,
				     drv->log_slots, log_cqe_size);
	if (!ret)
		return 0;
	ibv_cmd_destroy_cq(&cq->vcq.cq);
	free(cq);
	errno = ret;
	return -1;
}

int sroce_destroy_cq(struct ibv_cq *ibcq)
{
	struct sroce_cq *cq = to_scq(ibcq);
	int ret;

	ret = ibv_cmd_destroy_cq(ibcq);
	if (ret)
		return ret;
	sroce_ring_unmap(&cq->ring);
	free(cq);
	return 0;
}

int sroce_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct sroce_cmd_resize_cq_resp resp = {};
	struct sroce_cq *cq = to_scq(ibcq);
	struct sroce_ring *r = &cq->ring;
	struct ibv_resize_cq cmd = {};
	int ret;

	pthread_spin_lock(&r->lock);
	/* The kernel keeps exactly the CQEs past our consumer index. */
	store_release(&r->hdr->consumer, r->index);
	ret = ibv_cmd_resize_cq(ibcq, cqe, &cmd, sizeof(cmd), &resp.ibv_resp,
				sizeof(resp));
	if (ret)
		goto out;
	/*
	 * On failure the kernel moved on already: this CQ cannot be polled.
	 * The slots keep the size they had.
	 */
	if ((resp.drv.comp_mask & SROCE_CREATE_CQ_RESP_CQE_SIZE) &&
	    resp.drv.log_cqe_size != r->log_slot_size)
		ret = EPROTO;
	else
		ret = sroce_ring_remap(r, ibcq->context->cmd_fd,
				       resp.drv.mmap_offset, resp.drv.mmap_len,
				       resp.drv.log_slots, r->log_slot_size);
	if (!ret)
		r->index = 0;
out:
	pthread_spin_unlock(&r->lock);
	return ret;
}

int sroce_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct sroce_cq *cq = to_scq(ibcq);
	struct sroce_ring *r = &cq->ring;
	struct sroce_cqe *cqe;
	uint8_t owner;
	int n;

	pthread_spin_lock(&r->lock);
	for (n = 0; n < num_entries; n++) {
		cqe = sroce_ring_slot(r, r->index);
		owner = ((r->index >> r->log_slots) & 1) ^ 1;
		if (load_acquire(&cqe->owner) != owner)
			break;
		memset(&wc[n], 0, sizeof(wc[n]));
		wc[n].wr_id = cqe->wr_id;
		wc[n].status = cqe->status;
		wc[n].opcode = cqe->opcode;
		wc[n].vendor_err = cqe->vendor_err;
		wc[n].byte_len = cqe->byte_len;
		wc[n].qp_num = cqe->qp_num;
		wc[n].src_qp = cqe->src_qp;
		if (cqe->flags & SROCE_CQE_WITH_IMM) {
			wc[n].wc_flags |= IBV_WC_WITH_IMM;
			wc[n].imm_data = cqe->imm_data;
		} else if (cqe->flags & SROCE_CQE_WITH_INV) {
			wc[n].wc_flags |= IBV_WC_WITH_INV;
			wc[n].invalidated_rkey = cqe->imm_data;
		}
		if (cqe->flags & SROCE_CQE_WITH_GRH)
			wc[n].wc_flags |= IBV_WC_GRH;
		wc[n].sl = sroce_cqe_sl(cqe);
		r->index++;
	}
	if (n)
		store_release(&r->hdr->consumer, r->index);
	pthread_spin_unlock(&r->lock);
	return n;
}

int sroce_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct sroce_cq *cq = to_scq(ibcq);

	pthread_spin_lock(&cq->ring.lock);
	cq->arm_seq++;
	store_release(&cq->ring.hdr->cq_arm,
		      (cq->arm_seq << 1) | !!solicited_only);
	pthread_spin_unlock(&cq->ring.lock);
	/* The arm is visible before the caller polls once more. */
	atomic_thread_fence(memory_order_seq_cst);
	return 0;
}

/* Maps the rings the kernel answered with; errno value or 0. */
int sroce_qp_map(struct sroce_qp *qp, struct ibv_context *context,
		 enum ibv_qp_type qp_type,
		 const struct sroce_create_qp_resp *drv,
		 const struct ibv_qp_cap *cap)
{
	int ret;

	ret = sroce_ring_map(&qp->sq, context->cmd_fd, drv->sq_mmap_offset,
			     drv->sq_mmap_len, drv->sq_log_slots,
			     drv->sq_log_slot_size);
	if (ret)
		return ret;
	ret = sroce_ring_map(&qp->rq, context->cmd_fd, drv->rq_mmap_offset,
			     drv->rq_mmap_len, drv->rq_log_slots,
			     drv->rq_log_slot_size);
	if (ret) {
		sroce_ring_unmap(&qp->sq);
		return ret;
	}
	qp->max_send_sge = cap->max_send_sge;
	qp->max_recv_sge = cap->max_recv_sge;
	qp->max_inline = drv->max_inline_data;
	qp->status = to_sctx(context)->status;
	switch (qp_type) {
	case IBV_QPT_RC:
		qp->wqe_ops = SROCE_WQE_OPS_RC;
		/* A kernel that does not say it takes ATOMIC_WRITE fails it. */
		if (!(to_sctx(context)->kernel_caps &
		      SROCE_UCONTEXT_CAP_ATOMIC_WRITE))
			qp->wqe_ops &= ~(1U << SROCE_WQE_ATOMIC_WRITE);
		break;
	case IBV_QPT_UC:
		qp->wqe_ops = SROCE_WQE_OPS_UC;
		break;
	case IBV_QPT_UD:
		qp->wqe_ops = SROCE_WQE_OPS_UD;
		qp->ud = true;
		break;
	default:		/* no other type this provider can post to */
		qp->wqe_ops = 0;
		break;
	}
	return 0;
}

struct ibv_qp *sroce_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct sroce_cmd_create_qp_resp resp = {};
	struct sroce_cmd_create_qp cmd = {};
	struct sroce_qp *qp;
	int ret;

	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	sroce_qp_kick_fd_open(qp, pd->context, &cmd.drv);
	ret = ibv_cmd_create_qp(pd, &qp->vqp.qp, attr, &cmd.ibv_cmd,
				sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret) {
		sroce_qp_kick_fd_close(qp);
		free(qp);
		errno = ret;
		return NULL;
	}
	ret = sroce_qp_map(qp, pd->context, attr->qp_type, &resp.drv,
			   &attr->cap);
	if (ret) {
		ibv_cmd_destroy_qp(&qp->vqp.qp);
		sroce_qp_kick_fd_close(qp);
		free(qp);
		errno = ret;
		return NULL;
	}
	return &qp->vqp.qp;
}

/*
 * Removes the completions of QP qpn from a CQ: a QP moved to RESET leaves
 * none behind (as mlx5's provider does). The completions written so far
 * are compacted toward the newest and the consumer index moves past the
 * ones removed; the kernel writes only beyond them, and none for qpn any
 * more.
 */
static void sroce_cq_clean(struct sroce_cq *cq, uint32_t qpn)
{
	struct sroce_ring *r = &cq->ring;
	uint32_t slots = 1U << r->log_slots, prod, freed = 0;
	struct sroce_cqe *cqe, *dest;
	uint8_t owner;

	pthread_spin_lock(&r->lock);
	for (prod = r->index; prod - r->index < slots; prod++) {
		cqe = sroce_ring_slot(r, prod);
		if (load_acquire(&cqe->owner) !=
		    (((prod >> r->log_slots) & 1) ^ 1))
			break;
	}
	while (prod != r->index) {
		prod--;
		cqe = sroce_ring_slot(r, prod);
		if (cqe->qp_num == qpn) {
			freed++;
		} else if (freed) {
			/* The slot keeps the owner value of its own lap. */
			dest = sroce_ring_slot(r, prod + freed);
			owner = dest->owner;
			memcpy(dest, cqe, 1U << r->log_slot_size);
			dest->owner = owner;
		}
	}
	if (freed) {
		r->index += freed;
		store_release(&r->hdr->consumer, r->index);
	}
	pthread_spin_unlock(&r->lock);
}

int sroce_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	struct ibv_modify_qp cmd = {};
	struct sroce_qp *sqp = to_sqp(qp);
	int ret;

	ret = ibv_cmd_modify_qp(qp, attr, attr_mask, &cmd, sizeof(cmd));
	if (!ret && (attr_mask & IBV_QP_STATE)) {
		if (attr->qp_state == IBV_QPS_RESET) {
			sqp->sq.index = 0;
			sqp->rq.index = 0;
			sroce_cq_clean(to_scq(qp->send_cq), qp->qp_num);
			if (qp->recv_cq != qp->send_cq)
				sroce_cq_clean(to_scq(qp->recv_cq), qp->qp_num);
		}
		__atomic_store_n(&sqp->state, attr->qp_state,
				 __ATOMIC_RELAXED);
	}
	return ret;
}

int sroce_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		   struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd = {};

	return ibv_cmd_query_qp(qp, attr, attr_mask, init_attr, &cmd,
				sizeof(cmd));
}

int sroce_destroy_qp(struct ibv_qp *ibqp)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	int ret;

	ret = ibv_cmd_destroy_qp(ibqp);
	if (ret)
		return ret;
	sroce_ring_unmap(&qp->rq);
	sroce_ring_unmap(&qp->sq);
	sroce_qp_kick_fd_close(qp);
	free(qp);
	return 0;
}

/* The encoder takes the verbs' send flags as they are (wqe_enc.h). */
_Static_assert(SROCE_VERBS_SEND_FENCE == IBV_SEND_FENCE, "fence");
_Static_assert(SROCE_VERBS_SEND_SIGNALED == IBV_SEND_SIGNALED, "signaled");
_Static_assert(SROCE_VERBS_SEND_SOLICITED == IBV_SEND_SOLICITED, "solicited");
_Static_assert(SROCE_VERBS_SEND_INLINE == IBV_SEND_INLINE, "inline");

static const uint8_t sroce_wqe_opcode[] = {
	[IBV_WR_SEND] = SROCE_WQE_SEND,
	[IBV_WR_SEND_WITH_IMM] = SROCE_WQE_SEND_IMM,
	[IBV_WR_RDMA_WRITE] = SROCE_WQE_RDMA_WRITE,
	[IBV_WR_RDMA_WRITE_WITH_IMM] = SROCE_WQE_RDMA_WRITE_IMM,
	[IBV_WR_RDMA_READ] = SROCE_WQE_RDMA_READ,
	[IBV_WR_ATOMIC_CMP_AND_SWP] = SROCE_WQE_ATOMIC_CMP_SWP,
	[IBV_WR_ATOMIC_FETCH_AND_ADD] = SROCE_WQE_ATOMIC_FETCH_ADD,
	[IBV_WR_LOCAL_INV] = SROCE_WQE_LOCAL_INV,
	[IBV_WR_SEND_WITH_INV] = SROCE_WQE_SEND_INV,
	[IBV_WR_BIND_MW] = SROCE_WQE_BIND_MW,
};

/*
 * What a UD send must pass before its WQE is written: an address handle, a
 * 24-bit destination QPN and a message (gathered or inline) that fits the
 * port's path MTU.
 */
static int sroce_check_ud_send(struct sroce_qp *qp, struct ibv_send_wr *wr)
{
	uint64_t len = 0;
	int i;

	if (!wr->wr.ud.ah || wr->wr.ud.remote_qpn > SROCE_QPN_MASK)
		return EINVAL;
	for (i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	if (len > sroce_port_mtu(qp))
		return EINVAL;
	return 0;
}

void sroce_set_bind(struct sroce_send_wqe *wqe, uint32_t rkey,
		    const struct ibv_mw_bind_info *info)
{
	sroce_wqe_enc_bind(wqe, info->addr, info->length, rkey,
			   info->mw_access_flags, info->mr ? info->mr->lkey : 0);
}

static int sroce_write_send_wqe(struct sroce_qp *qp, struct ibv_send_wr *wr,
				struct sroce_send_wqe *wqe)
{
	int i;

	if ((unsigned int)wr->opcode >= sizeof(sroce_wqe_opcode) ||
	    (wr->opcode != IBV_WR_SEND && !sroce_wqe_opcode[wr->opcode]) ||
	    !(qp->wqe_ops & (1U << sroce_wqe_opcode[wr->opcode])) ||
	    !sroce_wqe_flags_ok(sroce_wqe_opcode[wr->opcode], wr->send_flags))
		return EINVAL;
	if (qp->ud && sroce_check_ud_send(qp, wr))
		return EINVAL;

	sroce_wqe_enc_start(wqe, sroce_wqe_opcode[wr->opcode], wr->wr_id,
			    wr->send_flags);
	switch (wr->opcode) {
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		sroce_wqe_enc_imm(wqe, wr->imm_data);
		break;
	case IBV_WR_LOCAL_INV:
		sroce_wqe_enc_imm(wqe, wr->invalidate_rkey);
		return 0;	/* no data */
	case IBV_WR_SEND_WITH_INV:
		sroce_wqe_enc_imm(wqe, wr->invalidate_rkey);
		break;
	case IBV_WR_BIND_MW:
		sroce_set_bind(wqe, wr->bind_mw.rkey, &wr->bind_mw.bind_info);
		return 0;	/* no data */
	default:
		break;
	}

	if (qp->ud)
		sroce_wqe_enc_ud(wqe, &to_sah(wr->wr.ud.ah)->av,
				 wr->wr.ud.remote_qpn, wr->wr.ud.remote_qkey);
	switch (wr->opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		sroce_wqe_enc_raddr(wqe, wr->wr.rdma.remote_addr,
				    wr->wr.rdma.rkey);
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		sroce_wqe_enc_atomic(wqe, wr->wr.atomic.remote_addr,
				     wr->wr.atomic.rkey, wr->wr.atomic.swap,
				     wr->wr.atomic.compare_add);
		break;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		sroce_wqe_enc_atomic(wqe, wr->wr.atomic.remote_addr,
				     wr->wr.atomic.rkey,
				     wr->wr.atomic.compare_add,
				     wr->wr.atomic.compare_add);
		break;
	default:
		break;
	}

	if (wr->send_flags & IBV_SEND_INLINE) {
		sroce_wqe_enc_inline_begin(wqe);
		for (i = 0; i < wr->num_sge; i++)
			if (sroce_wqe_enc_inline(wqe,
						 (void *)(uintptr_t)wr->sg_list[i].addr,
						 wr->sg_list[i].length,
						 qp->max_inline))
				return EINVAL;
		return 0;
	}
	if ((uint32_t)wr->num_sge > qp->max_send_sge)
		return EINVAL;
	for (i = 0; i < wr->num_sge; i++)
		sroce_wqe_enc_sge(wqe, wr->sg_list[i].addr,
				  wr->sg_list[i].length, wr->sg_list[i].lkey);
	return 0;
}

/* Whether the worker serving the QP said it is going to sleep. */
static bool sroce_engine_sleeps(struct sroce_qp *qp)
{
	uint32_t w = atomic_load_explicit(
		(_Atomic uint32_t *)&qp->sq.hdr->sq_worker,
		memory_order_relaxed);

	return atomic_load_explicit(
		       (_Atomic uint32_t *)&qp->status->words[w %
							SROCE_MAX_WORKERS],
		       memory_order_relaxed) & SROCE_WORKER_NEED_WAKEUP;
}

/*
 * The kick eventfd, if the kernel takes one: a failure leaves kick_fd at -1
 * and the QP kicks with a POST_SEND command instead.
 */
void sroce_qp_kick_fd_open(struct sroce_qp *qp, struct ibv_context *context,
			   struct sroce_create_qp_req *req)
{
	qp->kick_fd = -1;
	if (!(to_sctx(context)->kernel_caps & SROCE_UCONTEXT_CAP_KICK_EVENTFD))
		return;
	qp->kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (qp->kick_fd < 0)
		return;
	req->comp_mask |= SROCE_CREATE_QP_REQ_KICK_FD;
	req->kick_fd = qp->kick_fd;
}

void sroce_qp_kick_fd_close(struct sroce_qp *qp)
{
	if (qp->kick_fd >= 0)
		close(qp->kick_fd);
	qp->kick_fd = -1;
}

/*
 * The engine said it sleeps: one system call wakes it. If the call fails
 * the engine stays asleep and says so, and the next post kicks again.
 */
static void sroce_kick(struct sroce_qp *qp)
{
	struct ibv_post_send cmd = {};
	struct ib_uverbs_post_send_resp resp;
	uint64_t one = 1;
	ssize_t ret;

	if (qp->kick_fd >= 0) {
		ret = write(qp->kick_fd, &one, sizeof(one));
	} else {
		cmd.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
		cmd.hdr.in_words = sizeof(cmd) / 4;
		cmd.hdr.out_words = sizeof(resp) / 4;
		cmd.core_payload.response = (uintptr_t)&resp;
		cmd.core_payload.qp_handle = qp->vqp.qp.handle;
		cmd.core_payload.wqe_size = sizeof(struct ib_uverbs_send_wr);
		ret = write(qp->vqp.qp.context->cmd_fd, &cmd, sizeof(cmd));
	}
	(void)ret;
}

/*
 * Called after the SQ's producer index was published, and outside the
 * SQ's lock: a kick runs an engine pass before it returns, which other
 * posters to the QP must not wait for.
 */
void sroce_sq_doorbell(struct sroce_qp *qp)
{
	/* The index, then the flag; pairs with the engine's barrier. */
	atomic_thread_fence(memory_order_seq_cst);
	if (sroce_engine_sleeps(qp))
		sroce_kick(qp);
}

int sroce_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		    struct ibv_send_wr **bad_wr)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_ring *r = &qp->sq;
	uint32_t slots = 1U << r->log_slots;
	int ret = 0, posted = 0;

	if (!sroce_qp_can_send(qp)) {
		*bad_wr = wr;
		return EINVAL;
	}
	pthread_spin_lock(&r->lock);
	for (; wr; wr = wr->next) {
		if (r->index - load_acquire(&r->hdr->consumer) >= slots) {
			ret = ENOMEM;
			break;
		}
		ret = sroce_write_send_wqe(qp, wr, sroce_ring_slot(r, r->index));
		if (ret)
			break;
		r->index++;
		posted++;
	}
	if (posted)
		store_release(&r->hdr->producer, r->index);
	pthread_spin_unlock(&r->lock);
	if (posted)
		sroce_sq_doorbell(qp);
	if (ret)
		*bad_wr = wr;
	return ret;
}

int sroce_ring_post_recv(struct sroce_ring *r, uint32_t max_sge,
			 struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	uint32_t slots = 1U << r->log_slots;
	struct sroce_recv_wqe *rwqe;
	int ret = 0, posted = 0, i;

	pthread_spin_lock(&r->lock);
	for (; wr; wr = wr->next) {
		if (r->index - load_acquire(&r->hdr->consumer) >= slots) {
			ret = ENOMEM;
			break;
		}
		if ((uint32_t)wr->num_sge > max_sge) {
			ret = EINVAL;
			break;
		}
		rwqe = sroce_ring_slot(r, r->index);
		memset(rwqe, 0, sizeof(*rwqe));
		rwqe->wr_id = wr->wr_id;
		rwqe->num_sge = wr->num_sge;
		for (i = 0; i < wr->num_sge; i++) {
			rwqe->sge[i].addr = wr->sg_list[i].addr;
			rwqe->sge[i].length = wr->sg_list[i].length;
			rwqe->sge[i].lkey = wr->sg_list[i].lkey;
		}
		r->index++;
		posted++;
	}
	if (posted)
		store_release(&r->hdr->producer, r->index);
	pthread_spin_unlock(&r->lock);
	if (ret)
		*bad_wr = wr;
	return ret;
}

int sroce_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad_wr)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	enum ibv_qp_state state = __atomic_load_n(&qp->state, __ATOMIC_RELAXED);
	int ret;

	/* In RESET, or receiving through an SRQ: nothing to post here. */
	if (state == IBV_QPS_RESET || ibqp->srq) {
		*bad_wr = wr;
		return EINVAL;
	}
	ret = sroce_ring_post_recv(&qp->rq, qp->max_recv_sge, wr, bad_wr);
	/*
	 * A receive posted in the error state (as a drain does) is only ever
	 * flushed: a sleeping engine is woken for it. Otherwise a receive
	 * waits for a message, which wakes the engine itself.
	 */
	if (state == IBV_QPS_ERR)
		sroce_sq_doorbell(qp);
	return ret;
}
