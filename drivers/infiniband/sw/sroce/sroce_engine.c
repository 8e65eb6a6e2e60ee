// SPDX-License-Identifier: GPL-2.0
/*
 * The engine: the part of sroce that plays the NIC.
 *
 * Each device runs a few workers (kthreads). Every QP belongs to exactly
 * one worker, which alone runs the QP's send context (consuming WQEs,
 * retries, completions) and its receive context (requests and responses
 * that arrive for it), so no QP state is shared between threads: the only
 * cross-thread inputs are the rings' producer indices, the QP's rx list
 * (a lock-free llist) and its state, changed under worker->lock.
 *
 * Sleep protocol (io_uring SQPOLL style): a worker with nothing to do
 * spins briefly, then sets SROCE_WORKER_NEED_WAKEUP in its status word,
 * issues a full barrier, checks every QP once more and only then sleeps. A
 * producer publishes its index, issues a full barrier and kicks the worker
 * only if the flag is set.
 *
 * The same-host shortcut: a request to a QP on any sroce device of this
 * host travels as a struct sroce_lmsg instead of packets. It keeps the
 * transport's semantics: the responder checks sequence, keys, access and
 * receive queue exactly as for packets, answers with ACK, RNR NAK or an
 * error NAK, and the requester retries, times out and completes in order.
 * A message carries its own references to the MRs it reads or writes, so
 * neither side's teardown can pull memory from under the other.
 */
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/stat.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>
#include <sroce/psn.h>
#include <sroce/ring.h>
#include "sroce_engine.h"

/*
 * An idle worker polls only while its CPU has nothing else to run: the
 * next post or packet then needs no wakeup, and the poll costs nobody.
 * A worker that polled beside a runnable task took the CPU the task
 * needed to post or to consume completions (at nice -10, cond_resched()
 * does not give it back): between two one-CPU lab VMs the 64 B
 * ib_write_bw rate was a quarter of what it was without the poll.
 */
static unsigned int worker_spin_us = 50;
module_param(worker_spin_us, uint, 0644);
MODULE_PARM_DESC(worker_spin_us,
		 "How long an idle engine worker polls, on an otherwise idle CPU, before it sleeps (us)");
/*
 * A worker that serves a QP on the wire is the only processor of its
 * packets, and an application busy-polling its CQ on the same CPU must
 * not starve it: at nice 0, perftest's polling took 57% of a one-CPU VM
 * from the worker and bounded the wire bandwidth. A worker with shortcut
 * QPs only stays at nice 0: there the posting processes run the engine
 * through their kicks, and a heavier worker cost the 64 B message rate of
 * two polling processes on two CPUs about a fifth. A worker with nothing
 * to do sleeps, so the weight costs no one.
 */
static int worker_nice = -10;
module_param(worker_nice, int, 0444);
MODULE_PARM_DESC(worker_nice,
		 "Nice value of engine workers serving wire QPs (-20..19)");
#define SROCE_QP_BUDGET 64
#define SROCE_MAX_WORKERS_USED 4

static DEFINE_SPINLOCK(sroce_atomic_lock);

enum sroce_lmsg_kind {
	SROCE_LMSG_REQUEST,
	SROCE_LMSG_RESPONSE,
};

enum sroce_lmsg_result {
	SROCE_LMSG_ACK,
	SROCE_LMSG_RNR,
	SROCE_LMSG_NAK_INVALID,		/* IB_WC_REM_INV_REQ_ERR */
	SROCE_LMSG_NAK_ACCESS,		/* IB_WC_REM_ACCESS_ERR */
	SROCE_LMSG_NAK_OPERATION,	/* IB_WC_REM_OP_ERR */
};

struct sroce_lmsg {
	struct llist_node node;
	u8 kind;
	u8 result;
	u8 opcode;		/* enum sroce_wqe_opcode */
	u8 flags;		/* enum sroce_wqe_flags */
	u8 rnr_timer;		/* with an RNR NAK: the responder's timer */
	bool spare_sized;	/* SROCE_LMSG_SPARE_SIZE bytes: reusable */
	u32 psn;		/* one per message on the shortcut */
	u32 index;		/* the requester's SQ index */
	u32 reset_gen;		/* the requester's, when it sent */
	u32 imm;
	u32 len;
	u64 raddr;
	u32 rkey;
	u64 swap_add;
	u64 compare;
	struct sroce_qp *requester;	/* holds a reference */
	/* The requester's path when it sent: the GIDs it sent from and to. */
	struct in6_addr sgid;
	struct in6_addr dgid;
	unsigned int num_segs;
	struct sroce_seg segs[];	/* then inline data, if any */
};

void sroce_segs_put(const struct sroce_seg *segs, unsigned int num)
{
	unsigned int i;

	for (i = 0; i < num; i++)
		if (segs[i].kind == SROCE_SEG_MR)
			sroce_mr_put(segs[i].mr);
}

static void sroce_lmsg_put_segs(struct sroce_lmsg *msg)
{
	sroce_segs_put(msg->segs, msg->num_segs);
	msg->num_segs = 0;
}

/*
 * Each requester keeps up to SROCE_LMSG_CACHE released messages of
 * SROCE_LMSG_SPARE_SIZE bytes, so neither a stream of small messages nor
 * a ping-pong allocates. Only the QP's send context takes from the cache
 * (llist_del_first() wants one consumer; the worker's lock serializes the
 * send context and sroce_engine_reset_qp()); any context gives back.
 * lmsg_cached counts a message before it is added and after it is taken,
 * so it never falls below the length of the list. A message goes back
 * before its requester reference, so destroy_qp, which waits for every
 * reference, frees the whole cache.
 */
#define SROCE_LMSG_SPARE_SIZE 256
#define SROCE_LMSG_CACHE 32

static struct sroce_lmsg *sroce_lmsg_alloc(struct sroce_qp *qp, size_t size)
{
	struct llist_node *node;
	struct sroce_lmsg *msg;

	if (size > SROCE_LMSG_SPARE_SIZE)
		return kzalloc(size, GFP_KERNEL);
	node = llist_del_first(&qp->lmsg_cache);
	if (node) {
		atomic_dec(&qp->lmsg_cached);
		msg = llist_entry(node, struct sroce_lmsg, node);
	} else {
		msg = kmalloc(SROCE_LMSG_SPARE_SIZE, GFP_KERNEL);
	}
	if (msg) {
		memset(msg, 0, size);
		msg->spare_sized = true;
	}
	return msg;
}

static void sroce_lmsg_release(struct sroce_qp *qp, struct sroce_lmsg *msg)
{
	if (msg->spare_sized) {
		if (atomic_inc_return(&qp->lmsg_cached) <= SROCE_LMSG_CACHE) {
			llist_add(&msg->node, &qp->lmsg_cache);
			return;
		}
		atomic_dec(&qp->lmsg_cached);
	}
	kfree(msg);
}

static void sroce_lmsg_cache_free(struct sroce_qp *qp)
{
	struct llist_node *list = llist_del_all(&qp->lmsg_cache);
	struct sroce_lmsg *msg, *next;

	llist_for_each_entry_safe(msg, next, list, node) {
		atomic_dec(&qp->lmsg_cached);
		kfree(msg);
	}
}

static void sroce_lmsg_free(struct sroce_lmsg *msg)
{
	struct sroce_qp *requester = msg->requester;

	sroce_lmsg_put_segs(msg);
	sroce_lmsg_release(requester, msg);
	sroce_qp_put(requester);
}

/*
 * The producer side of the sleep protocol, for every producer in the
 * kernel (the socket, the shortcut, timers, kernel posters, modify_qp):
 * what it published is visible before it reads the flag, so either the
 * worker's re-check sees the work or this sees the flag and wakes it.
 */
void sroce_engine_kick(struct sroce_worker *w)
{
	smp_mb();	/* publish, then read the flag; pairs with the worker */
	if (READ_ONCE(w->sdev->status->words[w->index]) &
	    SROCE_WORKER_NEED_WAKEUP) {
		/* Seen by a worker that is not asleep yet (sroce_worker_fn). */
		set_bit(SROCE_WORKER_WOKEN, &w->kick_pending);
		wake_up_process(w->task);
	}
}

/* A pass that is running already sees what it delivers to its own QPs. */
void sroce_engine_notify(struct sroce_qp *to)
{
	if (READ_ONCE(to->worker->runner) != current)
		sroce_engine_kick(to->worker);
}

static void sroce_deliver(struct sroce_qp *to, struct sroce_lmsg *msg)
{
	llist_add(&msg->node, &to->rx);
	sroce_engine_notify(to);
}

/*
 * A request becomes its answer, which travels back to the requester. The
 * message's reference to the requester may be gone (its worker consumed
 * the answer) by the time sroce_deliver() wakes that worker: the wake-up
 * holds a reference of its own.
 */
static void sroce_respond(struct sroce_qp *qp, struct sroce_lmsg *msg, u8 result)
{
	struct sroce_qp *requester = msg->requester;

	sroce_lmsg_put_segs(msg);
	msg->kind = SROCE_LMSG_RESPONSE;
	msg->result = result;
	msg->rnr_timer = qp->attr.min_rnr_timer;
	refcount_inc(&requester->refs);
	sroce_deliver(requester, msg);
	sroce_qp_put(requester);
}

/* Memory access through segments ---------------------------------------- */

void sroce_seg_iter_init(struct sroce_seg_iter *it, const struct sroce_seg *seg,
			 unsigned int num, u32 off)
{
	it->seg = seg;
	it->num = num;
	it->i = 0;
	while (it->i + 1 < num && off >= seg[it->i].len) {
		off -= seg[it->i].len;
		it->i++;
	}
	it->off = off;
}

/*
 * Maps the next bytes of it; NULL (a bug in the caller's bounds) past the
 * end of the list or on a segment without memory.
 */
static void *sroce_seg_map(struct sroce_seg_iter *it, u32 *chunk)
{
	const struct sroce_seg *s;
	void *p;
	u32 left;

	while (it->i < it->num && it->off == it->seg[it->i].len) {
		it->i++;
		it->off = 0;
	}
	if (WARN_ON_ONCE(it->i == it->num))
		return NULL;
	s = &it->seg[it->i];
	left = s->len - it->off;
	switch (s->kind) {
	case SROCE_SEG_KERNEL:
		*chunk = left;
		return (void *)(uintptr_t)(s->addr + it->off);
	case SROCE_SEG_MR:
		p = sroce_mr_map(s->mr, s->addr + it->off, chunk);
		*chunk = min(*chunk, left);
		return p;
	default:
		WARN_ON_ONCE(1);
		return NULL;
	}
}

static void sroce_seg_unmap(struct sroce_seg_iter *it, void *p)
{
	if (it->seg[it->i].kind == SROCE_SEG_MR)
		sroce_mr_unmap(it->seg[it->i].mr, p);
}

void sroce_seg_copy(struct sroce_seg_iter *dst, struct sroce_seg_iter *src,
		    u32 len)
{
	void *d, *s;
	u32 dc, sc, n;

	while (len) {
		s = sroce_seg_map(src, &sc);
		if (!s)
			return;
		d = sroce_seg_map(dst, &dc);
		if (!d) {
			sroce_seg_unmap(src, s);
			return;
		}
		n = min3(len, sc, dc);
		memcpy(d, s, n);
		sroce_seg_unmap(dst, d);
		sroce_seg_unmap(src, s);
		src->off += n;
		dst->off += n;
		len -= n;
		cond_resched();
	}
}

int sroce_seg_pages(const struct sroce_seg_iter *start, u32 len,
		    struct bio_vec *vec, unsigned int max)
{
	struct sroce_seg_iter it = *start;
	const struct sroce_seg *s;
	unsigned int n = 0;
	u32 in_page, chunk;

	while (len) {
		while (it.i < it.num && it.off == it.seg[it.i].len) {
			it.i++;
			it.off = 0;
		}
		if (it.i == it.num || n == max)
			return -EOPNOTSUPP;
		s = &it.seg[it.i];
		if (s->kind != SROCE_SEG_MR || s->mr->dma)
			return -EOPNOTSUPP;
		vec[n].bv_page = sroce_mr_page(s->mr, s->addr + it.off,
					       &in_page);
		chunk = min3(len, s->len - it.off, (u32)PAGE_SIZE - in_page);
		vec[n].bv_offset = in_page;
		vec[n].bv_len = chunk;
		n++;
		it.off += chunk;
		len -= chunk;
	}
	return n;
}

void sroce_segs_copy(const struct sroce_seg *dst, unsigned int ndst,
		     const struct sroce_seg *src, unsigned int nsrc, u32 len)
{
	struct sroce_seg_iter d, s;

	sroce_seg_iter_init(&d, dst, ndst, 0);
	sroce_seg_iter_init(&s, src, nsrc, 0);
	sroce_seg_copy(&d, &s, len);
}

/*
 * Looks up the MR of key for [addr, addr + len), len > 0, and checks it for
 * this QP's PD, the range and the access. No key value is special: key 0
 * names no MR (index 0 is never allocated), and a kernel DMA MR grants no
 * remote access.
 */
struct sroce_mr *sroce_sge_mr(struct sroce_qp *qp, u32 key, u64 addr,
			      u32 len, int access, bool remote)
{
	struct sroce_mr *mr;

	mr = sroce_mr_get(qp->sdev, key);
	if (!mr)
		return ERR_PTR(-ENOENT);
	if (!sroce_mr_allows(mr, qp->ibqp.pd, addr, len, access) ||
	    (remote && mr->dma)) {
		sroce_mr_put(mr);
		return ERR_PTR(-EACCES);
	}
	return mr;
}

/* Fills segs from SGEs; false if a key is bad for the access wanted. */
bool sroce_sges_to_segs(struct sroce_qp *qp, const struct sroce_sge *sge,
			unsigned int num, int access, struct sroce_seg *segs)
{
	struct sroce_mr *mr;
	unsigned int i;

	for (i = 0; i < num; i++) {
		segs[i] = (struct sroce_seg){};
		if (!sge[i].length)
			continue;	/* touches nothing: no key check */
		mr = sroce_sge_mr(qp, sge[i].lkey, sge[i].addr, sge[i].length,
				  access, false);
		if (IS_ERR(mr)) {
			sroce_segs_put(segs, i);
			return false;
		}
		segs[i].mr = mr;
		segs[i].addr = sge[i].addr;
		segs[i].len = sge[i].length;
		segs[i].kind = SROCE_SEG_MR;
	}
	return true;
}

/* Completions ------------------------------------------------------------ */

static const u8 sroce_wc_opcode[SROCE_WQE_OPCODE_COUNT] = {
	[SROCE_WQE_SEND] = IB_WC_SEND,
	[SROCE_WQE_SEND_IMM] = IB_WC_SEND,
	[SROCE_WQE_RDMA_WRITE] = IB_WC_RDMA_WRITE,
	[SROCE_WQE_RDMA_WRITE_IMM] = IB_WC_RDMA_WRITE,
	[SROCE_WQE_RDMA_READ] = IB_WC_RDMA_READ,
	[SROCE_WQE_ATOMIC_CMP_SWP] = IB_WC_COMP_SWAP,
	[SROCE_WQE_ATOMIC_FETCH_ADD] = IB_WC_FETCH_ADD,
};

void sroce_qp_error(struct sroce_qp *qp)
{
	WRITE_ONCE(qp->state, IB_QPS_ERR);
}

/* A ring index the QP's owner cannot have written: the QP fails. */
void sroce_qp_ring_error(struct sroce_qp *qp)
{
	sroce_stat_add(SROCE_STAT_QP_RING_ERRORS, 1);
	sroce_qp_error(qp);
}

/* The SQ producer index, and whether the engine may take it (ring.h). */
bool sroce_sq_producer(struct sroce_qp *qp, u32 *producer)
{
	*producer = sroce_ring_read_index(&qp->sq.hdr->producer);
	return sroce_ring_sq_producer_ok(*producer, qp->sq_fetched,
					 qp->sq_retire,
					 sroce_queue_slots(&qp->sq));
}

/* Receive WQEs posted and not yet taken; -1 for an impossible producer. */
int sroce_rq_posted(struct sroce_qp *qp)
{
	return sroce_ring_posted(sroce_ring_read_index(&qp->rq.hdr->producer),
				 qp->rq.index, sroce_queue_slots(&qp->rq));
}

/*
 * Completes the oldest WQE in flight (qp->sq_retire) with status. The slot
 * is handed back (consumer index) before the CQE is written, so a process
 * that sees the completion can reuse the slot at once.
 */
void sroce_complete_send(struct sroce_qp *qp, u8 status)
{
	struct sroce_swqe *sw = sroce_swqe_at(qp, qp->sq_retire);
	struct sroce_wqe_ctrl *c = &sw->wqe->ctrl;
	bool signaled = status != IB_WC_SUCCESS || qp->sq_sig_all ||
			(c->flags & SROCE_WQE_SIGNALED);
	struct sroce_cqe cqe = {};

	if (signaled) {
		cqe.wr_id = c->wr_id;
		cqe.status = status;
		cqe.opcode = c->opcode < SROCE_WQE_OPCODE_COUNT ?
			     sroce_wc_opcode[c->opcode] : IB_WC_SEND;
		if (c->opcode == SROCE_WQE_RDMA_READ ||
		    sroce_wqe_is_atomic(c->opcode))
			cqe.byte_len = sw->msg_len;
		cqe.qp_num = qp->ibqp.qp_num;
	}
	if (sw->segs_held) {
		sroce_segs_put(sw->segs, sw->num_segs);
		sw->segs_held = false;
	}
	if (sw->rd_counted) {
		qp->rd_outstanding--;
		sw->rd_counted = false;
	}
	qp->sq_retire++;
	qp->sq_blocked = false;
	if ((s32)(qp->sq_next - qp->sq_retire) < 0)
		qp->sq_next = qp->sq_retire;
	if ((s32)(qp->sq_fetched - qp->sq_retire) < 0)
		qp->sq_fetched = qp->sq_retire;
	sroce_ring_publish(&qp->sq.hdr->consumer, qp->sq_retire);
	if (signaled)
		sroce_cq_post(to_scq(qp->ibqp.send_cq), &cqe);
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
						       &qp->sq_lim, &extra));
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

	/* An impossible producer flushes nothing (sroce_qp_has_work agrees). */
	while (n-- > 0) {
		r = sroce_queue_slot(q, q->index);
		cqe.wr_id = READ_ONCE(r->wr_id);
		cqe.status = IB_WC_WR_FLUSH_ERR;
		cqe.opcode = IB_WC_RECV;
		cqe.qp_num = qp->ibqp.qp_num;
		q->index++;
		sroce_ring_publish(&q->hdr->consumer, q->index);
		sroce_cq_post(to_scq(qp->ibqp.recv_cq), &cqe);
	}
}

/* In the error state every WQE completes with a flush error. */
static void sroce_flush(struct sroce_qp *qp)
{
	u32 producer;

	/* An impossible producer: flush what was fetched, nothing more. */
	if (!sroce_sq_producer(qp, &producer))
		producer = qp->sq_fetched;
	while (qp->sq_retire != producer) {
		if (qp->sq_retire == qp->sq_fetched) {
			struct sroce_swqe *sw = sroce_swqe_at(qp, qp->sq_retire);

			/* Never fetched: its wr_id is all we take from it. */
			memcpy(sw->wqe, sroce_queue_slot(&qp->sq, qp->sq_retire),
			       sizeof(struct sroce_wqe_ctrl));
			qp->sq_fetched++;
		}
		if (qp->sq_retire == qp->sq_next)
			qp->sq_next++;
		sroce_complete_send(qp, IB_WC_WR_FLUSH_ERR);
	}
	qp->sq_next = qp->sq_retire;
	WRITE_ONCE(qp->resend_at, 0);
	qp->rnr_wait = false;
	sroce_flush_rq(qp);
	if (qp->wire)
		sroce_rc_drop_state(qp);
}

/* Send context ----------------------------------------------------------- */

unsigned long sroce_timeout_jiffies(u8 timeout)
{
	/* 4.096 us * 2^timeout, at least one jiffy. */
	u64 ns = 4096ULL << min_t(u8, timeout, 31);

	return max_t(unsigned long, nsecs_to_jiffies(ns), 1);
}

/* IBTA table of RNR NAK timer values, in microseconds. */
static const u32 sroce_rnr_us[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
	1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

unsigned long sroce_rnr_jiffies(u8 rnr_timer)
{
	return usecs_to_jiffies(sroce_rnr_us[rnr_timer & 31]);
}

/*
 * The timer is lazy: it is moved only to fire earlier, and stopping a wait
 * only clears resend_at. A timer that fires before resend_at re-arms
 * itself, one that finds no wait does nothing; so a stream of messages
 * costs about one timer event per timeout, not two timer updates each.
 */
void sroce_arm_timer(struct sroce_qp *qp, unsigned long at)
{
	WRITE_ONCE(qp->resend_at, at ? at : 1);
	smp_mb();	/* resend_at, then the timer; pairs with the timer */
	if (!timer_pending(&qp->timer) ||
	    time_after(READ_ONCE(qp->timer.expires), at))
		mod_timer(&qp->timer, at);
}

void sroce_stop_timer(struct sroce_qp *qp)
{
	WRITE_ONCE(qp->resend_at, 0);
}

static struct sroce_lmsg *sroce_build_request(struct sroce_qp *qp, u32 index,
					      u8 *status)
{
	struct sroce_swqe *sw = &qp->swqe[index & (sroce_queue_slots(&qp->sq) - 1)];
	struct sroce_send_wqe *wqe = sw->wqe;
	struct sroce_wqe_ctrl *c = &wqe->ctrl;
	unsigned int nseg = (c->flags & SROCE_WQE_INLINE) ? 1 : c->num_sge;
	struct sroce_lmsg *msg;
	int access = 0;

	msg = sroce_lmsg_alloc(qp, struct_size(msg, segs, nseg) +
			       ((c->flags & SROCE_WQE_INLINE) ?
				c->inline_len : 0));
	if (!msg) {
		*status = IB_WC_LOC_QP_OP_ERR;
		return NULL;
	}
	msg->kind = SROCE_LMSG_REQUEST;
	msg->opcode = c->opcode;
	msg->flags = c->flags;
	msg->imm = c->imm_data;
	msg->len = sw->msg_len;
	msg->raddr = wqe->raddr.remote_addr;
	msg->rkey = wqe->raddr.rkey;
	msg->swap_add = wqe->atomic.swap_add;
	msg->compare = wqe->atomic.compare;
	msg->index = index;
	msg->reset_gen = qp->reset_gen;
	msg->psn = sroce_psn_add(qp->attr.sq_psn, index);

	if (c->flags & SROCE_WQE_INLINE) {
		void *data = &msg->segs[1];

		memcpy(data, wqe->sge, c->inline_len);
		msg->segs[0] = sroce_kseg(data, c->inline_len);
		msg->num_segs = 1;
	} else {
		if (c->opcode == SROCE_WQE_RDMA_READ ||
		    sroce_wqe_is_atomic(c->opcode))
			access = IB_ACCESS_LOCAL_WRITE;
		if (!sroce_sges_to_segs(qp, wqe->sge, c->num_sge, access,
					msg->segs)) {
			sroce_lmsg_release(qp, msg);
			*status = IB_WC_LOC_PROT_ERR;
			return NULL;
		}
		msg->num_segs = c->num_sge;
	}
	refcount_inc(&qp->refs);
	msg->requester = qp;
	msg->sgid = qp->path.saddr;
	msg->dgid = qp->path.daddr;
	return msg;
}

static void sroce_handle_request(struct sroce_qp *qp, struct sroce_lmsg *msg);

/*
 * A request to a QP of the same worker whose receive queue of messages is
 * empty is handled at once: the running pass owns both QPs (the worker's
 * lock; a QP changes workers only under both workers' locks), and nothing
 * queued earlier can be overtaken. The answer is queued to the requester,
 * whose receive context runs again right after its send context, so a
 * request and its answer take one pass instead of three.
 */
static void sroce_deliver_request(struct sroce_qp *qp, struct sroce_qp *dest,
				  struct sroce_lmsg *msg)
{
	if (dest->worker == qp->worker &&
	    READ_ONCE(qp->worker->runner) == current && llist_empty(&dest->rx))
		sroce_handle_request(dest, msg);
	else
		sroce_deliver(dest, msg);
}

static void sroce_send_context(struct sroce_qp *qp, int *budget)
{
	u32 slots = sroce_queue_slots(&qp->sq);
	struct sroce_lmsg *msg;
	struct sroce_swqe *sw;
	struct sroce_qp *dest;
	u32 producer;
	u8 status;

	if (qp->resend_at) {
		if (time_before(jiffies, qp->resend_at))
			return;
		/* A timeout or an RNR wait ended: resend what is in flight. */
		WRITE_ONCE(qp->resend_at, 0);
		if (qp->sq_next != qp->sq_retire) {
			/* retry_cnt counts resends; unlike rnr_retry, 7 is 7. */
			if (!qp->rnr_wait &&
			    ++qp->retries > qp->attr.retry_cnt) {
				sroce_complete_send(qp, IB_WC_RETRY_EXC_ERR);
				return;
			}
			qp->sq_next = qp->sq_retire;
			qp->sq_blocked = false;
		}
		qp->rnr_wait = false;
	}

	if (!sroce_sq_producer(qp, &producer)) {
		sroce_qp_ring_error(qp);
		return;
	}
	while (qp->sq_next != producer && *budget > 0) {
		sw = &qp->swqe[qp->sq_next & (slots - 1)];
		if (qp->sq_next == qp->sq_fetched) {
			sw->status = sroce_fetch_send(qp, qp->sq_next);
			qp->sq_fetched++;
			sroce_stat_add(SROCE_STAT_WQES, 1);
		}
		/*
		 * A WQE that failed validation is never sent: it completes
		 * with its error once everything before it has completed.
		 */
		status = sw->status;
		msg = status == IB_WC_SUCCESS ?
		      sroce_build_request(qp, qp->sq_next, &status) : NULL;
		if (!msg) {
			if (qp->sq_retire == qp->sq_next) {
				qp->sq_next++;
				sroce_complete_send(qp, status);
			} else {
				qp->sq_blocked = true;
			}
			return;
		}
		qp->sq_next++;
		(*budget)--;

		dest = sroce_qp_get(qp->attr.dest_qp_num);
		if (dest && dest->ibqp.qp_type != qp->ibqp.qp_type) {
			/* Another transport has no such QP. */
			sroce_qp_put(dest);
			dest = NULL;
		}
		if (!dest && sroce_qp_is_uc(qp)) {
			/* Lost; UC tells nobody and completes the WQE. */
			sroce_respond(qp, msg, SROCE_LMSG_ACK);
		} else if (!dest) {
			/* Nobody there: lost, as on a wire. */
			sroce_lmsg_free(msg);
		} else {
			sroce_deliver_request(qp, dest, msg);
			sroce_qp_put(dest);
		}
		if (qp->attr.timeout && !qp->resend_at)
			sroce_arm_timer(qp, jiffies +
					sroce_timeout_jiffies(qp->attr.timeout));
	}
}

/* Receive context: requests --------------------------------------------- */

u8 sroce_take_recv(struct sroce_qp *qp, struct sroce_seg *segs,
		   unsigned int *nseg, u32 *cap, u64 *wr_id)
{
	struct sroce_queue *q = &qp->rq;
	struct sroce_recv_wqe hdr, *ring;
	struct sroce_sge sge[SROCE_MAX_SGE];
	size_t extra;

	ring = sroce_queue_slot(q, q->index);
	memcpy(&hdr, ring, sizeof(hdr));
	*wr_id = hdr.wr_id;
	if (sroce_wqe_check_recv(&hdr, &qp->rq_lim, &extra))
		return IB_WC_LOC_LEN_ERR;
	memcpy(sge, ring->sge, extra);
	*cap = sroce_wqe_recv_len(sge, hdr.num_sge);
	if (!sroce_sges_to_segs(qp, sge, hdr.num_sge, IB_ACCESS_LOCAL_WRITE,
				segs))
		return IB_WC_LOC_PROT_ERR;
	*nseg = hdr.num_sge;
	return IB_WC_SUCCESS;
}

/* The receive slot is handed back before its CQE is written. */
void sroce_recv_done(struct sroce_qp *qp)
{
	qp->rq.index++;
	sroce_ring_publish(&qp->rq.hdr->consumer, qp->rq.index);
}

static void sroce_post_recv_cqe(struct sroce_qp *qp, u64 wr_id, u8 status,
				u8 opcode, const struct sroce_lmsg *msg)
{
	struct sroce_cqe cqe = {
		.wr_id = wr_id,
		.status = status,
		.opcode = opcode,
		.qp_num = qp->ibqp.qp_num,
		.src_qp = msg->requester->ibqp.qp_num,
	};

	if (status == IB_WC_SUCCESS) {
		cqe.byte_len = msg->len;
		if (msg->opcode == SROCE_WQE_SEND_IMM ||
		    msg->opcode == SROCE_WQE_RDMA_WRITE_IMM) {
			cqe.flags |= SROCE_CQE_WITH_IMM;
			cqe.imm_data = msg->imm;
		}
		if (msg->flags & SROCE_WQE_SOLICITED)
			cqe.flags |= SROCE_CQE_SOLICITED;
	}
	sroce_cq_post(to_scq(qp->ibqp.recv_cq), &cqe);
}

/* SEND, or the receive part of WRITE with immediate. */
static u8 sroce_exec_recv(struct sroce_qp *qp, struct sroce_lmsg *msg,
			  bool with_data)
{
	struct sroce_seg segs[SROCE_MAX_SGE];
	unsigned int nseg = 0;
	int posted = sroce_rq_posted(qp);
	u32 cap = 0;
	u64 wr_id = 0;
	u8 status;

	if (posted < 0) {
		sroce_qp_ring_error(qp);
		return SROCE_LMSG_NAK_OPERATION;
	}
	if (!posted)
		return SROCE_LMSG_RNR;

	status = sroce_take_recv(qp, segs, &nseg, &cap, &wr_id);
	if (status == IB_WC_SUCCESS && with_data && msg->len > cap)
		status = IB_WC_LOC_LEN_ERR;
	if (status != IB_WC_SUCCESS) {
		sroce_segs_put(segs, nseg);
		sroce_recv_done(qp);
		sroce_post_recv_cqe(qp, wr_id, status, IB_WC_RECV, msg);
		if (!sroce_qp_is_uc(qp) || status != IB_WC_LOC_LEN_ERR)
			sroce_qp_error(qp);
		return status == IB_WC_LOC_LEN_ERR ? SROCE_LMSG_NAK_INVALID :
						     SROCE_LMSG_NAK_OPERATION;
	}
	if (with_data)
		sroce_segs_copy(segs, nseg, msg->segs, msg->num_segs, msg->len);
	sroce_segs_put(segs, nseg);
	sroce_recv_done(qp);
	sroce_post_recv_cqe(qp, wr_id, IB_WC_SUCCESS,
			    with_data ? IB_WC_RECV : IB_WC_RECV_RDMA_WITH_IMM,
			    msg);
	return SROCE_LMSG_ACK;
}

/*
 * The responder's memory at (rkey, va, len), checked for the QP's access
 * flags, the MR's PD, range and access: 0 or -EACCES. A zero-length access
 * touches no memory and checks no key (IBTA C9-88): an empty segment.
 */
int sroce_rkey_seg(struct sroce_qp *qp, u32 rkey, u64 va, u32 len,
		   int access, struct sroce_seg *seg)
{
	struct sroce_mr *mr;

	*seg = (struct sroce_seg){};
	if (!(qp->attr.qp_access_flags & access))
		return -EACCES;
	if (!len)
		return 0;
	mr = sroce_sge_mr(qp, rkey, va, len, access, true);
	if (IS_ERR(mr))
		return -EACCES;
	*seg = (struct sroce_seg){
		.mr = mr, .addr = va, .len = len, .kind = SROCE_SEG_MR,
	};
	return 0;
}

/*
 * Moves msg->len bytes between the responder's memory at (rkey, raddr) and
 * the message's segments: into the responder for a WRITE, out of it for a
 * READ. NAK_ACCESS if the rkey does not grant that.
 */
static u8 sroce_rdma_copy(struct sroce_qp *qp, struct sroce_lmsg *msg,
			  int access)
{
	struct sroce_seg seg;

	if (sroce_rkey_seg(qp, msg->rkey, msg->raddr, msg->len, access, &seg))
		return SROCE_LMSG_NAK_ACCESS;
	if (access == IB_ACCESS_REMOTE_WRITE)
		sroce_segs_copy(&seg, 1, msg->segs, msg->num_segs, msg->len);
	else
		sroce_segs_copy(msg->segs, msg->num_segs, &seg, 1, msg->len);
	sroce_segs_put(&seg, 1);
	return SROCE_LMSG_ACK;
}

static u8 sroce_exec_write(struct sroce_qp *qp, struct sroce_lmsg *msg)
{
	u8 result;

	/* With immediate, the receive WQE must be there before data moves. */
	if (msg->opcode == SROCE_WQE_RDMA_WRITE_IMM && !sroce_rq_posted(qp))
		return SROCE_LMSG_RNR;

	result = sroce_rdma_copy(qp, msg, IB_ACCESS_REMOTE_WRITE);
	if (result == SROCE_LMSG_ACK &&
	    msg->opcode == SROCE_WQE_RDMA_WRITE_IMM)
		return sroce_exec_recv(qp, msg, false);
	return result;
}

static u8 sroce_exec_read(struct sroce_qp *qp, struct sroce_lmsg *msg)
{
	return sroce_rdma_copy(qp, msg, IB_ACCESS_REMOTE_READ);
}

/*
 * Applies an atomic to the responder's 8 bytes at (rkey, va), which the
 * caller checked are aligned; false if the rkey does not grant it. One
 * lock orders every atomic of the host, as a NIC orders its own.
 */
bool sroce_remote_atomic(struct sroce_qp *qp, u32 rkey, u64 va, u8 wqe_opcode,
			 u64 swap_add, u64 compare, u64 *orig)
{
	struct sroce_seg seg;
	u64 *p;
	u32 chunk;

	if (sroce_rkey_seg(qp, rkey, va, sizeof(u64), IB_ACCESS_REMOTE_ATOMIC,
			   &seg))
		return false;
	p = sroce_mr_map(seg.mr, va, &chunk);
	spin_lock(&sroce_atomic_lock);
	*orig = READ_ONCE(*p);
	if (wqe_opcode == SROCE_WQE_ATOMIC_CMP_SWP) {
		if (*orig == compare)
			WRITE_ONCE(*p, swap_add);
	} else {
		WRITE_ONCE(*p, *orig + swap_add);
	}
	spin_unlock(&sroce_atomic_lock);
	sroce_mr_unmap(seg.mr, p);
	sroce_segs_put(&seg, 1);
	return true;
}

static u8 sroce_exec_atomic(struct sroce_qp *qp, struct sroce_lmsg *msg,
			    bool duplicate)
{
	struct sroce_seg orig_seg;
	u64 orig;

	if (msg->raddr & 7)
		return SROCE_LMSG_NAK_INVALID;
	if (duplicate) {
		if (msg->psn != qp->last_atomic_psn)
			return SROCE_LMSG_ACK;	/* older than we remember */
		orig = qp->last_atomic_orig;
	} else {
		if (!sroce_remote_atomic(qp, msg->rkey, msg->raddr, msg->opcode,
					 msg->swap_add, msg->compare, &orig))
			return SROCE_LMSG_NAK_ACCESS;
		qp->last_atomic_psn = msg->psn;
		qp->last_atomic_orig = orig;
	}
	/* The original value lands in the requester's buffer. */
	orig_seg = sroce_kseg(&orig, sizeof(orig));
	sroce_segs_copy(msg->segs, msg->num_segs, &orig_seg, 1, sizeof(orig));
	return SROCE_LMSG_ACK;
}

/*
 * Whether a shortcut request comes from the QP's peer. A QPN proves
 * nothing by itself (a local user may own the QPN of a remote peer), so
 * the QP must be on the shortcut itself, of the same transport, and its
 * path must name the requester's QPN and the GIDs the request travelled
 * between.
 */
static bool sroce_shortcut_from_peer(struct sroce_qp *qp,
				     const struct sroce_lmsg *msg)
{
	if (READ_ONCE(qp->wire) ||
	    qp->ibqp.qp_type != msg->requester->ibqp.qp_type ||
	    msg->requester->ibqp.qp_num != qp->attr.dest_qp_num ||
	    !ipv6_addr_equal(&msg->sgid, &qp->path.daddr) ||
	    !ipv6_addr_equal(&msg->dgid, &qp->path.saddr)) {
		sroce_stat_add(SROCE_STAT_SHORTCUT_DROP_PEER, 1);
		return false;
	}
	return true;
}

/*
 * UC on the shortcut: the requester's WQE completes when the responder is
 * done with its memory, whatever became of the message; a message the
 * responder cannot take is dropped and counted, and nobody is told.
 */
static void sroce_uc_request(struct sroce_qp *qp, struct sroce_lmsg *msg)
{
	enum ib_qp_state state = READ_ONCE(qp->state);
	u8 result = SROCE_LMSG_NAK_INVALID;

	if ((state == IB_QPS_RTR || state == IB_QPS_RTS) &&
	    sroce_shortcut_from_peer(qp, msg)) {
		if (msg->opcode == SROCE_WQE_SEND ||
		    msg->opcode == SROCE_WQE_SEND_IMM)
			result = sroce_exec_recv(qp, msg, true);
		else
			result = sroce_exec_write(qp, msg);
		qp->rx_expected_psn = sroce_psn_add(msg->psn, 1);
	}
	if (result == SROCE_LMSG_RNR)
		sroce_stat_add(SROCE_STAT_RX_DROP_NO_RECV, 1);
	else if (result != SROCE_LMSG_ACK)
		sroce_stat_add(SROCE_STAT_RX_DROP_PROTOCOL, 1);
	sroce_respond(qp, msg, SROCE_LMSG_ACK);
}

static void sroce_handle_request(struct sroce_qp *qp, struct sroce_lmsg *msg)
{
	enum sroce_psn_class class;
	u8 result;

	if (sroce_qp_is_uc(msg->requester)) {
		sroce_uc_request(qp, msg);
		return;
	}
	if (qp->state != IB_QPS_RTR && qp->state != IB_QPS_RTS) {
		sroce_lmsg_free(msg);	/* not listening: dropped */
		return;
	}
	if (!sroce_shortcut_from_peer(qp, msg)) {
		sroce_lmsg_free(msg);	/* not our peer */
		return;
	}
	class = sroce_psn_classify(msg->psn, qp->rx_expected_psn);
	if (class == SROCE_PSN_AHEAD) {
		sroce_lmsg_free(msg);	/* a gap: the requester resends */
		return;
	}

	switch (msg->opcode) {
	case SROCE_WQE_SEND:
	case SROCE_WQE_SEND_IMM:
		result = class == SROCE_PSN_DUPLICATE ? SROCE_LMSG_ACK :
			 sroce_exec_recv(qp, msg, true);
		break;
	case SROCE_WQE_RDMA_WRITE:
	case SROCE_WQE_RDMA_WRITE_IMM:
		result = class == SROCE_PSN_DUPLICATE ? SROCE_LMSG_ACK :
			 sroce_exec_write(qp, msg);
		break;
	case SROCE_WQE_RDMA_READ:
		result = sroce_exec_read(qp, msg);
		break;
	default:
		result = sroce_exec_atomic(qp, msg,
					   class == SROCE_PSN_DUPLICATE);
		break;
	}
	if (class == SROCE_PSN_EXPECTED && result != SROCE_LMSG_RNR)
		qp->rx_expected_psn = sroce_psn_add(qp->rx_expected_psn, 1);
	/* A NAKed request stops the responder as well, as on the wire. */
	if (result != SROCE_LMSG_ACK && result != SROCE_LMSG_RNR)
		sroce_qp_error(qp);
	sroce_respond(qp, msg, result);
}

/* Receive context: responses -------------------------------------------- */

static const u8 sroce_nak_status[] = {
	[SROCE_LMSG_NAK_INVALID] = IB_WC_REM_INV_REQ_ERR,
	[SROCE_LMSG_NAK_ACCESS] = IB_WC_REM_ACCESS_ERR,
	[SROCE_LMSG_NAK_OPERATION] = IB_WC_REM_OP_ERR,
};

static void sroce_handle_response(struct sroce_qp *qp, struct sroce_lmsg *msg)
{
	u32 index = msg->index;
	u32 reset_gen = msg->reset_gen;
	u8 result = msg->result;
	u8 rnr_timer = msg->rnr_timer;

	sroce_lmsg_free(msg);
	if (qp->state != IB_QPS_RTS && qp->state != IB_QPS_SQD)
		return;
	/* From before a reset, which may also have put the QP on the wire. */
	if (reset_gen != qp->reset_gen || qp->wire)
		return;
	/* Only the oldest WQE in flight can be answered: others are stale. */
	if (index != qp->sq_retire || qp->sq_next == qp->sq_retire)
		return;

	switch (result) {
	case SROCE_LMSG_ACK:
		qp->retries = 0;
		qp->rnr_retries = 0;
		sroce_complete_send(qp, IB_WC_SUCCESS);
		if (qp->sq_next == qp->sq_retire) {
			sroce_stop_timer(qp);
		} else if (qp->attr.timeout) {
			sroce_arm_timer(qp, jiffies +
					sroce_timeout_jiffies(qp->attr.timeout));
		}
		break;
	case SROCE_LMSG_RNR:
		if (qp->attr.rnr_retry < 7 &&
		    ++qp->rnr_retries > qp->attr.rnr_retry) {
			sroce_complete_send(qp, IB_WC_RNR_RETRY_EXC_ERR);
			break;
		}
		qp->sq_next = qp->sq_retire;
		qp->sq_blocked = false;
		qp->rnr_wait = true;
		sroce_arm_timer(qp, jiffies +
				sroce_rnr_jiffies(rnr_timer));
		break;
	default:
		sroce_complete_send(qp, sroce_nak_status[result]);
		break;
	}
}

static int sroce_receive_context(struct sroce_qp *qp)
{
	struct llist_node *list;
	struct sroce_lmsg *msg, *next;
	int n = 0;

	list = llist_reverse_order(llist_del_all(&qp->rx));
	llist_for_each_entry_safe(msg, next, list, node) {
		if (msg->kind == SROCE_LMSG_REQUEST)
			sroce_handle_request(qp, msg);
		else
			sroce_handle_response(qp, msg);
		n++;
	}
	return n;
}

void sroce_engine_drop_rx(struct sroce_qp *qp)
{
	struct llist_node *list = llist_del_all(&qp->rx);
	struct sroce_lmsg *msg, *next;

	llist_for_each_entry_safe(msg, next, list, node) {
		/* A UC requester waits for no timer: tell it the news. */
		if (msg->kind == SROCE_LMSG_REQUEST &&
		    sroce_qp_is_uc(msg->requester))
			sroce_respond(qp, msg, SROCE_LMSG_ACK);
		else
			sroce_lmsg_free(msg);
	}
	sroce_ud_drop_rx(qp);
	skb_queue_purge(&qp->rx_skbs);
}

/*
 * Releases what fetched send WQEs hold and the wire state. The QP is
 * under its worker's lock or off its worker.
 */
void sroce_engine_reset_qp(struct sroce_qp *qp)
{
	struct sroce_swqe *sw;
	u32 i;

	for (i = qp->sq_retire; i != qp->sq_fetched; i++) {
		sw = sroce_swqe_at(qp, i);
		if (sw->segs_held)
			sroce_segs_put(sw->segs, sw->num_segs);
		sw->segs_held = false;
		sw->rd_counted = false;
	}
	qp->rd_outstanding = 0;
	sroce_rc_drop_state(qp);
	sroce_ud_forget_dest(qp);
	sroce_lmsg_cache_free(qp);
}

/* Workers ---------------------------------------------------------------- */

static int sroce_qp_process(struct sroce_qp *qp)
{
	int budget = SROCE_QP_BUDGET;
	int done;

	/* A UD QP's rx holds nothing a peer check lets through. */
	done = sroce_receive_context(qp);
	/*
	 * RC/UC packets are drained even off the wire: some may have been
	 * queued before a reset made the QP a shortcut one.
	 */
	if (sroce_qp_is_ud(qp))
		done += sroce_ud_receive_context(qp, &budget);
	else
		done += sroce_rc_receive_context(qp, &budget);
	switch (READ_ONCE(qp->state)) {
	case IB_QPS_RTS:
		if (sroce_qp_is_ud(qp)) {
			sroce_ud_send_context(qp, &budget);
		} else if (qp->wire) {
			sroce_rc_send_context(qp, &budget);
		} else {
			sroce_send_context(qp, &budget);
			/* Answers to what was just handled at once. */
			if (!llist_empty(&qp->rx))
				done += sroce_receive_context(qp);
		}
		fallthrough;
	case IB_QPS_RTR:
	case IB_QPS_SQD:
		/* On the shortcut, answers go out as requests are handled. */
		if (qp->wire)
			sroce_rc_respond(qp, &budget);
		break;
	case IB_QPS_ERR:
		sroce_flush(qp);
		break;
	default:
		break;
	}
	return done + SROCE_QP_BUDGET - budget;
}

static bool sroce_qp_has_work(struct sroce_qp *qp)
{
	enum ib_qp_state state = READ_ONCE(qp->state);
	u32 producer;

	if (!llist_empty(&qp->rx) || !llist_empty(&qp->ud_rx) ||
	    !skb_queue_empty_lockless(&qp->rx_skbs))
		return true;
	if (qp->wire && state != IB_QPS_ERR)
		return sroce_rc_has_work(qp);
	if (state == IB_QPS_RTS) {
		if (qp->resend_at)
			return !time_before(jiffies, qp->resend_at);
		if (sroce_qp_is_ud(qp) && sroce_net_tx_full(qp->sdev)) {
			qp->worker->tx_blocked = true;
			return false;
		}
		return READ_ONCE(qp->sq.hdr->producer) != qp->sq_next &&
		       !qp->sq_blocked;
	}
	/* What sroce_flush() would flush; an impossible index is nothing. */
	if (state == IB_QPS_ERR)
		return qp->sq_fetched != qp->sq_retire ||
		       (sroce_sq_producer(qp, &producer) &&
			producer != qp->sq_retire) ||
		       sroce_rq_posted(qp) > 0;
	return false;
}

static int sroce_worker_pass_locked(struct sroce_worker *w)
{
	struct sroce_qp *qp;
	int done = 0;

	/* A QP with nothing to do costs a few reads, not a pass. */
	list_for_each_entry(qp, &w->qps, worker_node)
		if (sroce_qp_has_work(qp))
			done += sroce_qp_process(qp);
	return done;
}

static bool sroce_worker_has_work_locked(struct sroce_worker *w)
{
	struct sroce_qp *qp;

	list_for_each_entry(qp, &w->qps, worker_node)
		if (sroce_qp_has_work(qp))
			return true;
	return false;
}

/* Passes until nothing is left to do; false if max_passes ran out. */
static bool sroce_worker_run_locked(struct sroce_worker *w, int max_passes)
{
	bool idle = false;

	WRITE_ONCE(w->runner, current);
	while (max_passes-- > 0) {
		if (!sroce_worker_pass_locked(w)) {
			idle = true;
			break;
		}
	}
	WRITE_ONCE(w->runner, NULL);
	return idle;
}

/*
 * Every holder of a worker's lock honours the notes that kicks leave while
 * it holds it (see sroce_engine_run): after unlocking it looks for one.
 */
static bool sroce_worker_unlock_noted(struct sroce_worker *w)
{
	mutex_unlock(&w->lock);
	smp_mb();	/* unlocked, then the note; pairs with sroce_engine_run */
	return test_bit(SROCE_KICK_NOTED, &w->kick_pending);
}

/* For holders that run no passes: the worker takes a noted kick's work. */
void sroce_worker_unlock(struct sroce_worker *w)
{
	if (sroce_worker_unlock_noted(w))
		sroce_engine_kick(w);
}

static int sroce_worker_fn(void *arg)
{
	struct sroce_worker *w = arg;
	u32 *status = &w->sdev->status->words[w->index];
	u64 idle_since = local_clock();
	bool idle, tx_blocked;

	while (!kthread_should_stop()) {
		mutex_lock(&w->lock);
		/* This pass reads every ring: it serves any kick's note. */
		clear_bit(SROCE_KICK_NOTED, &w->kick_pending);
		smp_mb__after_atomic();	/* the note, then the rings */
		idle = sroce_worker_run_locked(w, 1);
		if (sroce_worker_unlock_noted(w))
			idle = false;
		if (!idle) {
			idle_since = local_clock();
			cond_resched();
			continue;
		}
		if (single_task_running() &&
		    local_clock() - idle_since <
		    (u64)READ_ONCE(worker_spin_us) * NSEC_PER_USEC) {
			cond_resched();
			continue;
		}

		/*
		 * The re-check takes the lock, so it runs in TASK_RUNNING; a
		 * kick between it and the sleep sets WOKEN before its
		 * wakeup, and the state is set before WOKEN is looked at.
		 */
		clear_bit(SROCE_WORKER_WOKEN, &w->kick_pending);
		WRITE_ONCE(*status, SROCE_WORKER_NEED_WAKEUP);
		smp_mb();	/* flag, then re-check; pairs with producers */
		mutex_lock(&w->lock);
		w->tx_blocked = false;
		idle = !sroce_worker_has_work_locked(w);
		tx_blocked = w->tx_blocked;
		if (sroce_worker_unlock_noted(w))
			idle = false;
		set_current_state(TASK_INTERRUPTIBLE);
		if (!idle || kthread_should_stop() ||
		    test_bit(SROCE_WORKER_WOKEN, &w->kick_pending)) {
			__set_current_state(TASK_RUNNING);
		} else {
			sroce_stat_add(SROCE_STAT_SLEEPS, 1);
			if (tx_blocked)
				schedule_timeout(1);
			else
				schedule();
		}
		WRITE_ONCE(*status, 0);
		idle_since = local_clock();
	}
	return 0;
}

/*
 * The kick of a user QP (its process saw the worker going to sleep): the
 * caller runs the worker's passes itself, under the worker's lock, so the
 * work request does not wait for a wakeup, and then wakes the worker to
 * poll for what follows (unless the QP is answering, see below).
 *
 * A kick that finds the lock taken leaves a note (kick_pending) and
 * returns; every holder looks for a note after it unlocks: a kicking
 * runner runs again, the worker does not sleep, and a holder that runs no
 * passes (modify_qp, QP moves) wakes the worker. So in a ping-pong the
 * peer's answer is carried by the kick that is still in the kernel
 * instead of waiting for a wakeup.
 */
#define SROCE_KICK_ROUNDS 4

void sroce_engine_run(struct sroce_qp *qp)
{
	struct sroce_worker *w = qp->worker;
	unsigned int round;
	bool idle, answering;
	u32 rx_psn;

	sroce_stat_add(SROCE_STAT_KICKS, 1);
	/*
	 * Sampled before the passes: an answer that arrives during this
	 * kick's own passes (the peer posted it meanwhile) makes the next
	 * kick an answering one, as it is.
	 */
	rx_psn = READ_ONCE(qp->rx_expected_psn);
	answering = rx_psn != READ_ONCE(qp->kick_rx_psn);
	WRITE_ONCE(qp->kick_rx_psn, rx_psn);
	set_bit(SROCE_KICK_NOTED, &w->kick_pending);
	smp_mb__after_atomic();	/* the note, then the lock; pairs below */
	for (round = 0; round < SROCE_KICK_ROUNDS; round++) {
		if (!mutex_trylock(&w->lock))
			return;	/* the holder finds the note */
		clear_bit(SROCE_KICK_NOTED, &w->kick_pending);
		smp_mb__after_atomic();	/* the note, then the rings */
		idle = sroce_worker_run_locked(w, 4);
		if (!sroce_worker_unlock_noted(w) || !idle)
			break;
	}
	/*
	 * The worker takes over polling, so the next posts need no kick;
	 * unless the QP is answering (it received requests between the
	 * start of its previous kick and the start of this one): in a
	 * ping-pong the next post comes only after the peer's next message,
	 * and a polling worker would take a CPU from the peer.
	 */
	if (!idle || round == SROCE_KICK_ROUNDS || !answering)
		sroce_engine_kick(w);
}

void sroce_engine_set_wire(struct sroce_qp *qp, bool wire)
{
	struct sroce_worker *w = qp->worker;

	lockdep_assert_held(&w->lock);
	if (qp->wire_counted == wire)
		return;
	qp->wire_counted = wire;
	if (wire ? w->num_wire_qps++ == 0 : --w->num_wire_qps == 0)
		set_user_nice(w->task,
			      wire ? clamp(worker_nice, MIN_NICE, MAX_NICE) : 0);
}

static void sroce_engine_set_worker(struct sroce_qp *qp, struct sroce_worker *w)
{
	qp->worker = w;
	list_add_tail(&qp->worker_node, &w->qps);
	w->num_qps++;
	WRITE_ONCE(qp->sq.hdr->sq_worker, w->index);
}

void sroce_engine_pair_qp(struct sroce_qp *qp, u32 dest_qpn)
{
	struct sroce_worker *from = qp->worker, *to, *first, *second;
	struct sroce_qp *dest;

	dest = sroce_qp_get(dest_qpn);
	if (!dest)
		return;
	to = dest->worker;
	if (dest->sdev == qp->sdev && to != from) {
		first = from->index < to->index ? from : to;
		second = first == from ? to : from;
		mutex_lock(&first->lock);
		mutex_lock_nested(&second->lock, SINGLE_DEPTH_NESTING);
		/* The peer may have moved meanwhile: follow it. */
		to = dest->worker;
		if (to == first || to == second) {
			sroce_engine_set_wire(qp, false);
			list_del(&qp->worker_node);
			from->num_qps--;
			sroce_engine_set_worker(qp, to);
		}
		sroce_worker_unlock(second);
		sroce_worker_unlock(first);
	}
	sroce_qp_put(dest);
}

static void sroce_qp_timer_fn(struct timer_list *t)
{
	struct sroce_qp *qp = from_timer(qp, t, timer);
	unsigned long at;

	smp_mb();	/* off the timer list, then resend_at; pairs with arm */
	at = READ_ONCE(qp->resend_at);
	if (!at)
		return;
	if (time_before(jiffies, at))
		mod_timer(&qp->timer, at);
	else
		sroce_engine_kick(qp->worker);
}

void sroce_engine_add_qp(struct sroce_qp *qp)
{
	struct sroce_dev *sdev = qp->sdev;
	struct sroce_worker *w = &sdev->workers[0];
	unsigned int i;

	/* The least loaded worker; ties go to the lowest index. */
	for (i = 1; i < sdev->num_workers; i++)
		if (sdev->workers[i].num_qps < w->num_qps)
			w = &sdev->workers[i];
	timer_setup(&qp->timer, sroce_qp_timer_fn, 0);
	mutex_lock(&w->lock);
	sroce_engine_set_worker(qp, w);
	sroce_worker_unlock(w);
}

void sroce_engine_remove_qp(struct sroce_qp *qp)
{
	struct sroce_worker *w = qp->worker;

	mutex_lock(&w->lock);
	sroce_engine_set_wire(qp, false);
	list_del(&qp->worker_node);
	w->num_qps--;
	sroce_worker_unlock(w);
	del_timer_sync(&qp->timer);
}

int sroce_engine_start(struct sroce_dev *sdev)
{
	struct sroce_worker *w;
	unsigned int i;

	sdev->status = vmalloc_user(PAGE_SIZE);
	if (!sdev->status)
		return -ENOMEM;
	sdev->num_workers = clamp_t(unsigned int, num_online_cpus(), 1,
				    SROCE_MAX_WORKERS_USED);
	sdev->workers = kcalloc(sdev->num_workers, sizeof(*w), GFP_KERNEL);
	if (!sdev->workers)
		goto err_status;

	for (i = 0; i < sdev->num_workers; i++) {
		w = &sdev->workers[i];
		w->sdev = sdev;
		w->index = i;
		mutex_init(&w->lock);
		INIT_LIST_HEAD(&w->qps);
		w->task = kthread_create(sroce_worker_fn, w, "sroce/%s/%u",
					 netdev_name(sdev->ndev), i);
		if (IS_ERR(w->task))
			goto err_workers;
		wake_up_process(w->task);
	}
	return 0;

err_workers:
	while (i--)
		kthread_stop(sdev->workers[i].task);
	kfree(sdev->workers);
	sdev->workers = NULL;
err_status:
	vfree(sdev->status);
	sdev->status = NULL;
	return -ENOMEM;
}

/* Called after every QP of the device is gone. */
void sroce_engine_stop(struct sroce_dev *sdev)
{
	unsigned int i;

	if (!sdev->workers)
		return;
	for (i = 0; i < sdev->num_workers; i++)
		kthread_stop(sdev->workers[i].task);
	kfree(sdev->workers);
	sdev->workers = NULL;
	vfree(sdev->status);
	sdev->status = NULL;
}
