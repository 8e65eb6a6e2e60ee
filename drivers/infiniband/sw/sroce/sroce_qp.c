// SPDX-License-Identifier: GPL-2.0
/*
 * Queue pairs: the verbs side (create, modify, query, destroy; kernel
 * posting is sroce_qp_post.c). The engine (sroce_engine.c) runs their
 * send and receive contexts.
 *
 * Rules:
 * - QPNs are unique across every sroce device of the host (sroce_qps), so
 *   the same-host shortcut finds a destination QP by its number alone;
 * - state changes happen under the owning worker's lock, so the engine
 *   never sees a QP half way through a transition;
 * - a QP is freed only after it left sroce_qps and its worker, and every
 *   in-flight message that names it is gone (qp->refs).
 */
#include <linux/log2.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>
#include <sroce/mtu.h>
#include <sroce/psn.h>
#include <sroce/uabi.h>
#include "sroce.h"
#include "sroce_verbs.h"
#include "sroce_link.h"
#include "sroce_trace.h"
#include "sroce_wake.h"

static int sroce_check_caps(struct ib_qp_cap *cap)
{
	if (cap->max_send_wr > SROCE_MAX_QP_WR ||
	    cap->max_recv_wr > SROCE_MAX_QP_WR ||
	    cap->max_send_sge > SROCE_MAX_SGE ||
	    cap->max_recv_sge > SROCE_MAX_SGE ||
	    cap->max_inline_data > SROCE_MAX_INLINE)
		return -EINVAL;
	return 0;
}

static int sroce_qp_init_queues(struct sroce_qp *qp, struct ib_qp_cap *cap)
{
	u32 sq_slots = roundup_pow_of_two(max(cap->max_send_wr, 1U));
	u32 rq_slots = roundup_pow_of_two(max(cap->max_recv_wr, 1U));
	u32 sq_slot = roundup_pow_of_two(SROCE_SEND_WQE_BASE +
				max(cap->max_send_sge * (u32)sizeof(struct sroce_sge),
				    cap->max_inline_data));
	u32 rq_slot = roundup_pow_of_two(SROCE_RECV_WQE_BASE +
				max(cap->max_recv_sge, 1U) *
				(u32)sizeof(struct sroce_sge));
	u32 i, seg_slots;
	int err;

	sq_slot = max(sq_slot, 128U);
	err = sroce_queue_init(&qp->sq, ilog2(sq_slots), ilog2(sq_slot));
	if (err)
		return err;
	err = sroce_queue_init(&qp->rq, ilog2(rq_slots), ilog2(rq_slot));
	if (err)
		goto err_sq;

	qp->sq.lim.slot_size = sq_slot;
	qp->sq.lim.max_sge = min_t(u32, (sq_slot - SROCE_SEND_WQE_BASE) /
				   sizeof(struct sroce_sge), SROCE_MAX_SGE);
	qp->sq.lim.max_inline = min_t(u32, sq_slot - SROCE_SEND_WQE_BASE,
				      SROCE_MAX_INLINE);
	qp->rq.lim.slot_size = rq_slot;
	qp->rq.lim.max_sge = min_t(u32, (rq_slot - SROCE_RECV_WQE_BASE) /
				   sizeof(struct sroce_sge), SROCE_MAX_SGE);
	qp->rq.lim.max_inline = 0;

	seg_slots = max(qp->sq.lim.max_sge, 1U);
	qp->swq.slots = kvcalloc(sq_slots, sizeof(*qp->swq.slots),
				 GFP_KERNEL_ACCOUNT);
	qp->swq.mem = kvzalloc((size_t)sq_slots * sq_slot, GFP_KERNEL_ACCOUNT);
	qp->swq.segs = kvcalloc((size_t)sq_slots * seg_slots,
				sizeof(*qp->swq.segs), GFP_KERNEL_ACCOUNT);
	qp->resp.rd_slots = SROCE_RD_RING_MIN;
	qp->resp.rd = kvcalloc(qp->resp.rd_slots, sizeof(*qp->resp.rd),
			       GFP_KERNEL_ACCOUNT);
	if (!qp->swq.slots || !qp->swq.mem || !qp->swq.segs || !qp->resp.rd) {
		err = -ENOMEM;
		goto err_rq;
	}
	for (i = 0; i < sq_slots; i++) {
		qp->swq.slots[i].wqe = qp->swq.mem + (size_t)i * sq_slot;
		qp->swq.slots[i].segs = qp->swq.segs + (size_t)i * seg_slots;
	}

	cap->max_send_wr = sq_slots;
	cap->max_recv_wr = rq_slots;
	cap->max_send_sge = qp->sq.lim.max_sge;
	cap->max_recv_sge = qp->rq.lim.max_sge;
	cap->max_inline_data = qp->sq.lim.max_inline;
	return 0;

err_rq:
	kvfree(qp->resp.rd);
	kvfree(qp->swq.slots);
	kvfree(qp->swq.mem);
	kvfree(qp->swq.segs);
	sroce_queue_free(&qp->rq);
err_sq:
	sroce_queue_free(&qp->sq);
	return err;
}

static void sroce_qp_free_queues(struct sroce_qp *qp)
{
	mem_cgroup_put(qp->owner.memcg);
	kvfree(qp->resp.rd);
	kvfree(qp->swq.slots);
	kvfree(qp->swq.mem);
	kvfree(qp->swq.segs);
	sroce_queue_free(&qp->rq);
	sroce_queue_free(&qp->sq);
}

static int sroce_qp_map_queues(struct sroce_qp *qp, struct ib_udata *udata)
{
	struct sroce_ucontext *uctx =
		rdma_udata_to_drv_context(udata, struct sroce_ucontext, ibuc);
	struct sroce_create_qp_resp resp = {};
	int err;

	err = sroce_queue_map(&uctx->ibuc, &qp->sq, &resp.sq_mmap_offset);
	if (err)
		return err;
	err = sroce_queue_map(&uctx->ibuc, &qp->rq, &resp.rq_mmap_offset);
	if (err)
		return err;
	resp.qpn = qp->ibqp.qp_num;
	resp.sq_mmap_len = qp->sq.size;
	resp.rq_mmap_len = qp->rq.size;
	resp.sq_log_slots = qp->sq.log_slots;
	resp.sq_log_slot_size = qp->sq.log_slot_size;
	resp.rq_log_slots = qp->rq.log_slots;
	resp.rq_log_slot_size = qp->rq.log_slot_size;
	resp.max_inline_data = qp->sq.lim.max_inline;
	return sroce_udata_copy_resp(udata, &resp, sizeof(resp));
}

int sroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_create_qp_req req;
	struct sroce_ucontext *uctx;
	u32 qpn;
	int err;

	switch (init->qp_type) {
	case IB_QPT_RC:
		qp->sq.lim.opcodes = udata ? SROCE_WQE_OPS_RC :
					       SROCE_WQE_OPS_RC_KERNEL;
		break;
	case IB_QPT_UC:
		qp->sq.lim.opcodes = SROCE_WQE_OPS_UC;
		break;
	case IB_QPT_UD:
		qp->sq.lim.opcodes = SROCE_WQE_OPS_UD;
		break;
	case IB_QPT_GSI:
		if (udata)
			return -EINVAL;
		qp->sq.lim.opcodes = SROCE_WQE_OPS_UD;
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (udata && init->qp_type != IB_QPT_RC) {
		/* A provider that cannot write UD WQEs gets no UD QP. */
		uctx = rdma_udata_to_drv_context(udata, struct sroce_ucontext,
						 ibuc);
		if (!(uctx->provider_caps & SROCE_UCONTEXT_CAP_UD_UC))
			return -EOPNOTSUPP;
	}
	if (init->create_flags || init->rwq_ind_tbl)
		return -EOPNOTSUPP;
	if (init->srq) {
		/* Receives come from the SRQ; the RQ keeps one unused slot. */
		init->cap.max_recv_wr = 0;
		init->cap.max_recv_sge = 0;
	}
	err = sroce_check_caps(&init->cap);
	if (err)
		return err;
	err = sroce_udata_copy_req(udata, &req, sizeof(req));
	if (err)
		return err;
	err = sroce_uabi_check_create_qp_req(&req);
	if (err)
		return err;
	if (!sroce_obj_take(&to_sdev(ibqp->device)->num_qp,
			    to_sdev(ibqp->device)->lim.max_qp))
		return -ENOMEM;

	qp->sdev = to_sdev(ibqp->device);
	qp->owner.user = !!udata;
	qp->owner.uid = current_euid();
	/* What its sends make the engine allocate is charged here. */
	if (udata)
		qp->owner.memcg = get_mem_cgroup_from_mm(current->mm);
	qp->sq_sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->srq = init->srq ? to_ssrq(init->srq) : NULL;
	qp->state = IB_QPS_RESET;
	refcount_set(&qp->refs, 1);
	init_completion(&qp->released);
	mutex_init(&qp->attr_lock);
	spin_lock_init(&qp->kpost_lock);
	init_llist_head(&qp->lrx.rx);
	init_llist_head(&qp->lrx.lmsg_cache);
	skb_queue_head_init(&qp->lrx.rx_skbs);
	__skb_queue_head_init(&qp->lrx.rx_pending);

	err = sroce_qp_init_queues(qp, &init->cap);
	if (err) {
		mem_cgroup_put(qp->owner.memcg);
		goto err_count;
	}
	if (qp->srq) {
		init->cap.max_recv_wr = 0;
		init->cap.max_recv_sge = 0;
	}

	err = sroce_qp_table_reserve(qp, init->qp_type, &qpn);
	if (err < 0)
		goto err_queues;
	ibqp->qp_num = qpn;

	sroce_engine_add_qp(qp);
	if (udata) {
		err = sroce_qp_map_queues(qp, udata);
		if (err)
			goto err_engine;
	}
	/* Last: a kick may run the engine for this QP at once. */
	if (req.comp_mask & SROCE_CREATE_QP_REQ_KICK_FD) {
		err = sroce_kick_attach(qp, req.kick_fd);
		if (err)
			goto err_engine;
	}
	/* Visible to the shortcut only once complete. */
	sroce_qp_table_publish(qp);
	return 0;

err_engine:
	sroce_engine_remove_qp(qp);
	sroce_qp_table_erase(qp);
err_queues:
	sroce_qp_free_queues(qp);
err_count:
	atomic_dec(&qp->sdev->num_qp);
	return err;
}

int sroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct sroce_qp *qp = to_sqp(ibqp);

	sroce_kick_detach(qp);
	sroce_qp_table_erase(qp);
	sroce_mcast_detach_all(qp);
	sroce_engine_remove_qp(qp);
	/*
	 * Off its worker, the QP posts no more CQEs; an event it raised may
	 * still be on its way to another CPU. The consumer frees its CQ
	 * after this returns (ib_free_cq cancels the CQ's work first), so
	 * the event must have run by then.
	 */
	sroce_cq_events_quiesce(to_scq(ibqp->send_cq));
	sroce_cq_events_quiesce(to_scq(ibqp->recv_cq));
	/*
	 * Messages that name this QP hold references: those queued to it
	 * (responses to its requests) are dropped here, the others are
	 * answered or dropped by their own workers.
	 */
	sroce_qp_put(qp);
	do {
		sroce_engine_drop_rx(qp);
	} while (!wait_for_completion_timeout(&qp->released,
					      msecs_to_jiffies(10)));
	sroce_engine_drop_rx(qp);
	synchronize_rcu();	/* lookups that saw the QP in sroce_qps */
	sroce_engine_reset_qp(qp);
	sroce_net_path_clear(qp);

	sroce_qp_free_queues(qp);
	atomic_dec(&qp->sdev->num_qp);
	return 0;
}

/* Payload bytes per packet: the path MTU, within what the port carries. */
static u32 sroce_qp_path_mtu(struct sroce_qp *qp)
{
	u32 port = sroce_path_mtu_for_netdev_mtu(READ_ONCE(qp->sdev->ndev->mtu));
	u32 path = qp->attr.path_mtu ? ib_mtu_enum_to_int(qp->attr.path_mtu) :
				       port;

	return max(min(path, port), SROCE_MIN_PATH_MTU);
}

static int sroce_check_modify(struct sroce_qp *qp, struct ib_qp_attr *attr,
			      int mask)
{
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > SROCE_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > SROCE_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096))
		return -EINVAL;
	if ((mask & IB_QP_PORT) && attr->port_num != SROCE_PORT)
		return -EINVAL;
	/*
	 * RoCE has no alternate path (the core refuses IB_QP_ALT_PATH on
	 * it), so there is no migration state to load or arm: refused.
	 */
	if (mask & (IB_QP_ALT_PATH | IB_QP_PATH_MIG_STATE))
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index >= SROCE_PKEY_TABLE_LEN)
		return -EINVAL;
	if ((mask & IB_QP_AV) &&
	    !(rdma_ah_get_ah_flags(&attr->ah_attr) & IB_AH_GRH))
		return -EINVAL;
	/* A privileged Q_Key (MSB set) is for privileged users only. */
	if ((mask & IB_QP_QKEY) && (attr->qkey & SROCE_QKEY_PRIVILEGED) &&
	    qp->owner.user && !capable(CAP_NET_RAW))
		return -EPERM;
	return 0;
}

/*
 * A READ/atomic ring for max_dest_rd_atomic answers, or NULL if the
 * QP's ring holds them already (it never shrinks). Allocated before the
 * worker's lock is taken; sroce_rd_ring_swap() puts it in place.
 */
static struct sroce_rd_resp *sroce_rd_ring_alloc(struct sroce_qp *qp,
						 u32 max_dest_rd_atomic,
						 u32 *slots)
{
	*slots = roundup_pow_of_two(max_t(u32, max_dest_rd_atomic,
					  SROCE_RD_RING_MIN));
	if (*slots <= qp->resp.rd_slots)
		return NULL;
	return kvcalloc(*slots, sizeof(struct sroce_rd_resp),
			GFP_KERNEL_ACCOUNT);
}

/*
 * Under the worker's lock: moves every entry (queued answers and
 * history, with the references they hold) to the same position of the
 * larger ring and returns the old ring, to be freed after unlocking.
 */
static struct sroce_rd_resp *sroce_rd_ring_swap(struct sroce_qp *qp,
						struct sroce_rd_resp *ring,
						u32 slots)
{
	struct sroce_rd_resp *old = qp->resp.rd;
	u32 i, n = qp->resp.rd_slots;

	lockdep_assert_held(&qp->worker->lock);
	for (i = qp->resp.rd_head - n; i != qp->resp.rd_head; i++)
		ring[i & (slots - 1)] = old[i & (n - 1)];
	qp->resp.rd = ring;
	qp->resp.rd_slots = slots;
	return old;
}

int sroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata)
{
	struct sroce_rd_resp *rd_ring = NULL;
	u32 rd_slots = 0;
	struct sroce_qp *qp = to_sqp(ibqp);
	const struct ib_global_route *grh = NULL;
	enum ib_qp_state cur, new;
	bool wire = qp->wire;
	int err;

	err = sroce_udata_expect_no_req(udata);
	if (err)
		return err;

	mutex_lock(&qp->attr_lock);
	cur = (mask & IB_QP_CUR_STATE) ? attr->cur_qp_state : qp->state;
	new = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	err = -EINVAL;
	if (cur != qp->state)
		goto out;
	if (!ib_modify_qp_is_ok(cur, new, ibqp->qp_type, mask))
		goto out;
	err = sroce_check_modify(qp, attr, mask);
	if (err)
		goto out;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC) {
		rd_ring = sroce_rd_ring_alloc(qp, attr->max_dest_rd_atomic,
					      &rd_slots);
		if (!rd_ring && rd_slots > qp->resp.rd_slots) {
			err = -ENOMEM;
			goto out;
		}
	}

	/*
	 * A destination GID of a sroce device of this host takes the
	 * shortcut; any other goes on the wire. The link is chosen once, as
	 * the QP leaves INIT: an address given later (SQD to SQD) must keep
	 * it, since WQEs in flight carry the state of the link they left on.
	 */
	if (mask & IB_QP_AV) {
		grh = rdma_ah_read_grh(&attr->ah_attr);
		wire = !sroce_ifindex_by_gid(&grh->dgid);
		if ((cur != IB_QPS_INIT && wire != qp->wire) ||
		    !grh->sgid_attr) {
			err = -EINVAL;
			goto out;
		}
	}
	/*
	 * Peers on the shortcut share a worker, so a message and its answer
	 * never cross threads. Only before RTS: the provider reads the worker
	 * from the SQ header when it posts.
	 */
	if ((mask & IB_QP_DEST_QPN) && new == IB_QPS_RTR && !wire)
		sroce_engine_pair_qp(qp, attr->dest_qp_num);

	sroce_worker_lock(qp->worker);
	/*
	 * The engine may have failed the QP since cur was read (it takes
	 * only the worker's lock): the error state stays unless the
	 * transition is one that leaves it (to RESET or ERR).
	 */
	if (qp->state != cur &&
	    !ib_modify_qp_is_ok(qp->state, new, ibqp->qp_type, mask)) {
		err = -EINVAL;
		sroce_worker_unlock(qp->worker);
		goto out;
	}
	if ((mask & IB_QP_AV) && wire) {
		err = sroce_net_path_set(qp, attr);
		if (err) {
			sroce_worker_unlock(qp->worker);
			goto out;
		}
	}
	if (mask & IB_QP_AV) {
		/* The shortcut's peer check compares these (sroce_shortcut.c). */
		memcpy(&qp->path.saddr, grh->sgid_attr->gid.raw,
		       sizeof(qp->path.saddr));
		memcpy(&qp->path.daddr, grh->dgid.raw, sizeof(qp->path.daddr));
		/* The core holds the source GID entry, not this copy. */
		qp->attr.ah_attr = attr->ah_attr;
		qp->attr.ah_attr.grh.sgid_attr = NULL;
		WRITE_ONCE(qp->wire, wire);
		sroce_engine_set_wire(qp, wire);
	}
	if (mask & IB_QP_ACCESS_FLAGS)
		qp->attr.qp_access_flags = attr->qp_access_flags;
	if (mask & IB_QP_PKEY_INDEX)
		qp->attr.pkey_index = attr->pkey_index;
	if (mask & IB_QP_PORT)
		qp->attr.port_num = attr->port_num;
	if (mask & IB_QP_PATH_MTU)
		qp->attr.path_mtu = attr->path_mtu;
	if (mask & IB_QP_TIMEOUT) {
		qp->attr.timeout = attr->timeout;
		qp->req.timeout_jiffies = sroce_ack_timeout_jiffies(attr->timeout);
	}
	if (mask & IB_QP_RETRY_CNT)
		qp->attr.retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		qp->attr.rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_RQ_PSN) {
		qp->attr.rq_psn = attr->rq_psn & SROCE_PSN_MASK;
		qp->resp.rx_expected_psn = qp->attr.rq_psn;
	}
	if (mask & IB_QP_SQ_PSN) {
		qp->attr.sq_psn = attr->sq_psn & SROCE_PSN_MASK;
		qp->req.req_psn = attr->sq_psn & SROCE_PSN_MASK;
		qp->req.una_psn = qp->req.req_psn;
		qp->req.sent_psn = qp->req.req_psn;
	}
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		qp->attr.max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC) {
		qp->attr.max_dest_rd_atomic = attr->max_dest_rd_atomic;
		if (rd_ring)
			rd_ring = sroce_rd_ring_swap(qp, rd_ring, rd_slots);
	}
	if (mask & IB_QP_MIN_RNR_TIMER)
		qp->attr.min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_DEST_QPN)
		qp->attr.dest_qp_num = attr->dest_qp_num;
	if (mask & IB_QP_QKEY)
		qp->attr.qkey = attr->qkey;
	qp->attr_mask |= mask;
	if (qp->wire) {
		u16 sport = rdma_get_udp_sport(qp->path.flow_label,
					       ibqp->qp_num,
					       qp->attr.dest_qp_num);

		qp->path.mtu = sroce_qp_path_mtu(qp);
		qp->path.sport = cpu_to_be16(sport);
	} else {
		qp->path.mtu = sroce_qp_is_uc(qp) ? SROCE_SHORTCUT_UC_MTU :
						    SROCE_SHORTCUT_MTU;
	}

	if (new == IB_QPS_RESET) {
		sroce_engine_qp_to_reset(qp);
		qp->sq.index = 0;
		qp->rq.index = 0;
		qp->sq.hdr->producer = 0;
		qp->sq.hdr->consumer = 0;
		qp->rq.hdr->producer = 0;
		qp->rq.hdr->consumer = 0;
		qp->srq_last_wqe = false;
		qp->attr_mask = 0;
	}
	trace_sroce_qp_state(qp->ibqp.qp_num, qp->state, new);
	WRITE_ONCE(qp->state, new);
	/* The kick below also serves any note left meanwhile. */
	sroce_worker_mutex_unlock(qp->worker);
	sroce_worker_wake(qp->worker);
	err = 0;
out:
	mutex_unlock(&qp->attr_lock);
	kvfree(rd_ring);	/* the old ring, or the new one unused */
	return err;
}

int sroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init)
{
	struct sroce_qp *qp = to_sqp(ibqp);

	mutex_lock(&qp->attr_lock);
	*attr = qp->attr;
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->path_mig_state = IB_MIG_MIGRATED;
	attr->cap.max_send_wr = sroce_queue_slots(&qp->sq);
	attr->cap.max_recv_wr = qp->srq ? 0 : sroce_queue_slots(&qp->rq);
	attr->cap.max_send_sge = qp->sq.lim.max_sge;
	attr->cap.max_recv_sge = qp->srq ? 0 : qp->rq.lim.max_sge;
	attr->cap.max_inline_data = qp->sq.lim.max_inline;
	mutex_unlock(&qp->attr_lock);

	memset(init, 0, sizeof(*init));
	init->qp_type = ibqp->qp_type;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sq_sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	return 0;
}
