// SPDX-License-Identifier: GPL-2.0
/*
 * Producing CQEs: the transports post completions here, under cq->lock
 * (QPs of several workers may share a CQ), and raise the CQ's completion
 * event when the consumer armed it. The rules of the ring are in
 * sroce_cq.c.
 */
#include <linux/debugfs.h>
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
 * Completion events go where a NIC's interrupt for the CQ's vector would:
 * to the CPU of that vector (vector i: the i-th online CPU), so that the
 * consumer's handler, and the softirq or work item it schedules, run there
 * and not all on the CPU of the worker that posted the CQE. ULPs spread
 * their queues over the vectors as blk-mq spreads its hardware queues over
 * CPUs: nvme-rdma's completions then run on the CPU that submitted, beside
 * the worker instead of taking turns with it.
 *
 * By default (SROCE_CQ_EVENTS_KERNEL) only kernel CQs' events go; a user
 * CQ's handler only wakes a thread, and an IPI first would add a wakeup.
 * Writable, for comparisons and tests.
 */
enum {
	SROCE_CQ_EVENTS_HERE,	/* 0: every handler runs in the worker */
	SROCE_CQ_EVENTS_KERNEL,	/* 1: kernel CQs' on the vector's CPU */
	SROCE_CQ_EVENTS_VECTOR,	/* 2: every handler on the vector's CPU */
};

static u32 cq_event_affinity = SROCE_CQ_EVENTS_KERNEL;

/* In cq->event_flags: event_csd is on its way. */
#define SROCE_CQ_EVENT_QUEUED 0

/* In the IPI on event_cpu (hard interrupt, as a NIC's MSI-X handler). */
static void sroce_cq_event_remote(void *arg)
{
	struct sroce_cq *cq = arg;

	/*
	 * Cleared before the call: an event posted from here on sends the
	 * IPI again (the CSD is free already); a CQE posted before was
	 * published before the consumer this calls polls.
	 */
	clear_bit(SROCE_CQ_EVENT_QUEUED, &cq->event_flags);
	smp_mb__after_atomic();	/* cleared, then the consumer polls */
	cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	atomic_inc_return_release(&cq->events_done);
}

void sroce_cq_events_init(struct sroce_cq *cq, u32 comp_vector)
{
	cq->event_cpu = cpumask_local_spread(comp_vector, NUMA_NO_NODE);
	cq->event_flags = 0;
	atomic_set(&cq->events_sent, 0);
	atomic_set(&cq->events_done, 0);
	INIT_CSD(&cq->event_csd, sroce_cq_event_remote, cq);
}

/*
 * Waits for the events sent to another CPU (an IPI runs them shortly):
 * when a QP leaves its worker, so that no handler runs after its
 * destroy returns, and before the CQ is freed.
 */
void sroce_cq_events_quiesce(struct sroce_cq *cq)
{
	int sent = atomic_read(&cq->events_sent);

	/* Those sent so far only: others' events may keep coming. */
	while (atomic_read_acquire(&cq->events_done) - sent < 0)
		cpu_relax();
}

/*
 * On the CPU of the posting worker the handler runs there, bottom halves
 * off: a kernel CQ polled in softirq (IB_POLL_SOFTIRQ) schedules its
 * irq_poll, and local_bh_enable() runs it at once, where a softirq raised
 * from a task would wait for ksoftirqd. PREEMPT_RT runs every handler so
 * (its locks sleep in a hard interrupt).
 * Completions are posted from passes only: task context, interrupts on.
 */
static void sroce_cq_event(struct sroce_cq *cq)
{
	unsigned int mode = READ_ONCE(cq_event_affinity);
	int cpu = READ_ONCE(cq->event_cpu);

	sroce_stat_add(to_sdev(cq->ibcq.device), SROCE_STAT_CQ_EVENTS, 1);
	local_bh_disable();	/* and so no migration */
	if (IS_ENABLED(CONFIG_PREEMPT_RT) || mode == SROCE_CQ_EVENTS_HERE ||
	    cpu == smp_processor_id() ||
	    (mode == SROCE_CQ_EVENTS_KERNEL && cq->is_user)) {
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
		local_bh_enable();
		return;
	}
	local_bh_enable();
	/* One event on its way serves any number posted before it runs. */
	if (test_and_set_bit(SROCE_CQ_EVENT_QUEUED, &cq->event_flags))
		return;
	atomic_inc(&cq->events_sent);
	if (smp_call_function_single_async(cpu, &cq->event_csd)) {
		/* The CPU went offline: the handler runs here from now on. */
		WRITE_ONCE(cq->event_cpu, raw_smp_processor_id());
		clear_bit(SROCE_CQ_EVENT_QUEUED, &cq->event_flags);
		atomic_inc(&cq->events_done);
		sroce_cq_event(cq);
	}
}

/*
 * An engine pass holds a kernel CQ's event back until it is done with the
 * QP it runs and the peers it chased (sroce_cq_events_release, before
 * the worker's lock is released): at depth the handler, and the work
 * item or softirq it schedules, then finds the CQEs of that whole run
 * instead of one each time it re-arms, as after a NIC's interrupt
 * moderation; at QD1 a run completes one CQE anyway. The delay is one
 * run of a QP (SROCE_QP_BUDGET packets and WQEs at most). A held CQ
 * needs no reference: the QP that posted to it holds one, and it cannot
 * be destroyed during the pass. A user CQ's handler only queues an event
 * for a thread, and its event is raised at once.
 * Documentation/performance.rst has the measurements.
 */
static bool cq_event_hold = true;

/*
 * Where events run and whether they are held are the behaviour, not
 * tunables: these switches (debugfs sroce/NAME, root only) are for the
 * tests and benches that compare (cq_event_affinity 0, 1 or 2).
 */
void sroce_cq_switches(struct dentry *dir)
{
	debugfs_create_u32("cq_event_affinity", 0600, dir, &cq_event_affinity);
	debugfs_create_bool("cq_event_hold", 0600, dir, &cq_event_hold);
}

void sroce_cq_events_release(struct sroce_cq_events *held)
{
	unsigned int i;

	for (i = 0; i < held->n; i++)
		sroce_cq_event(held->cq[i]);
	held->n = 0;
}

void sroce_cq_post(struct sroce_cq *cq, struct sroce_cqe *cqe,
		   struct sroce_cq_events *held)
{
	struct sroce_queue *q = &cq->q;
	struct sroce_cqe *slot;
	bool event = false, overflow = false, written = false;
	unsigned long flags;
	u32 consumer, arm;

	spin_lock_irqsave(&cq->lock, flags);
	consumer = sroce_ring_read_index(&q->hdr->consumer);
	if (q->index - consumer >= sroce_queue_slots(q)) {
		overflow = !cq->overflowed && !cq->ignore_overrun;
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
	if (cq->timestamps)
		container_of(slot, struct sroce_cqe_ts, cqe)->timestamp =
			ktime_get_raw_ns();
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
	if (!event || !cq->ibcq.comp_handler)
		return;
	if (held && !cq->is_user && READ_ONCE(cq_event_hold)) {
		unsigned int i;

		for (i = 0; i < held->n; i++)
			if (held->cq[i] == cq)
				return;	/* the held one serves this CQE too */
		if (held->n < SROCE_CQ_EVENTS_HELD) {
			held->cq[held->n++] = cq;
			sroce_stat_add(to_sdev(cq->ibcq.device),
				       SROCE_STAT_CQ_EVENTS_HELD, 1);
			return;
		}
	}
	sroce_cq_event(cq);
}

