// SPDX-License-Identifier: GPL-2.0
/*
 * Engine work that does not wake the worker: a kernel poster that runs
 * its own QP's work while the worker sleeps, and a plain ACK taken in
 * the softirq it arrived in. Both run without the worker's lock or with
 * it only tried, each for one QP, without sleeping (an atomic pass: see
 * struct sroce_worker.atomic_pass), under the worker's pass bit
 * (SROCE_WORKER_PASS); whatever they leave wakes the worker.
 */
#include <linux/debugfs.h>
#include "sroce_transport.h"
#include "sroce_link.h"
#include "sroce_wake.h"
#include "sroce_engine.h"

/*
 * A kernel ULP's post to a QP on the wire sends from the posting task
 * when the worker sleeps (sroce_engine_post_inline), as nvme-tcp sends
 * from the submitting task: the request leaves without waiting for the
 * worker's wakeup, which under a hypervisor wakes an idle vCPU first.
 * Off by default: measured across two lab VMs in one boot it halved the
 * wake-ups per QD1 I/O but not the latency, and QD32 did worse with it
 * and ack_in_softirq on (Documentation/performance.rst).
 */
static bool post_inline;
/*
 * A plain ACK that finds its QP's worker asleep is taken in the softirq
 * it arrived in (sroce_engine_take_now), as rdma_rxe takes its packets:
 * it only completes WQEs, and waking the worker for it would cost more
 * than that. Off by default, as post_inline.
 */
static bool ack_in_softirq;

/*
 * Switches for the tests and benches that compare (debugfs sroce/NAME,
 * root only), as sroce_engine_switches().
 */
void sroce_engine_nowake_switches(struct dentry *dir)
{
	debugfs_create_bool("post_inline", 0600, dir, &post_inline);
	debugfs_create_bool("ack_in_softirq", 0600, dir, &ack_in_softirq);
}

/*
 * Whether a one-QP pass of w left work for the worker: the QP's own, or
 * work that waits for the TX socket, which has_work does not count (only
 * the worker's sleep looks again, a jiffy later: tx_blocked). The state
 * the pass wrote (an error) is ordered before the rings read here; pairs
 * with sroce_post_recv(), which publishes, then reads the state.
 */
static bool sroce_nowake_left_work(struct sroce_worker *w, struct sroce_qp *qp)
{
	smp_mb();	/* the pass's state, then the rings */
	w->tx_blocked = false;
	return sroce_qp_has_work(qp) || w->tx_blocked;
}

/*
 * A kernel post to an RC or UC QP on the wire, its WQEs published: runs
 * that QP's work in the posting task if its worker sleeps, so that the
 * post costs no wakeup; false if the worker must be woken instead.
 *
 * Rules:
 * - only where the poster may take a mutex (preemptible(): not under a
 *   spinlock, in softirq or with interrupts off), and not on PREEMPT_RT,
 *   where the pass's spinlocks sleep;
 * - only the QP posted to: the posting task does its own work, no other
 *   QP's (the worker's lock is held for one QP's budget);
 * - with preemption off (an atomic pass: allocations from atomic reserves,
 *   copies of one packet that never reschedule): the lock is the worker's,
 *   and kernel QPs never wait on a task the scheduler holds back (a
 *   throttled or SCHED_IDLE submitter, Documentation/security.rst);
 * - work left over (the budget ran out, an allocation failed, the TX
 *   socket full, work noted for another QP of the worker, a kick's note)
 *   wakes the worker.
 * The worker sleeps only after a re-check under its lock, so the post
 * either finds it sleeping here or is seen by that re-check.
 */
bool sroce_engine_post_inline(struct sroce_qp *qp)
{
	struct sroce_worker *w = READ_ONCE(qp->worker);
	bool more, noted;

	if (IS_ENABLED(CONFIG_PREEMPT_RT) || !READ_ONCE(post_inline) ||
	    !preemptible() || qp->owner.user || sroce_qp_is_ud(qp) ||
	    !READ_ONCE(qp->wire))
		return false;
	smp_mb();	/* published, then the flag: as sroce_worker_wake() */
	if (!(READ_ONCE(w->sdev->status->words[w->index]) &
	      SROCE_WORKER_NEED_WAKEUP))
		return false;
	/* Off from before the lock is taken until it is given back. */
	preempt_disable();
	if (!sroce_worker_trylock(w)) {
		preempt_enable();
		return false;
	}
	/*
	 * A move or a destroy takes the QP off w under w->lock, and a reset
	 * may have put it on the shortcut since (whose copies may sleep); a
	 * QP in error is left to the worker (a flush is not a post's to send).
	 */
	if (READ_ONCE(qp->worker) != w ||
	    list_empty(&qp->sched.worker_node) ||
	    READ_ONCE(qp->state) != IB_QPS_RTS || !READ_ONCE(qp->wire)) {
		sroce_worker_unlock(w);
		preempt_enable();
		return false;
	}
	w->atomic_pass = true;
	WRITE_ONCE(w->runner, current);
	sroce_engine_run_qp(qp);
	more = sroce_nowake_left_work(w, qp) || w->queued_to;
	w->queued_to = NULL;
	sroce_cq_events_release(&w->cq_events);
	WRITE_ONCE(w->runner, NULL);
	w->atomic_pass = false;
	noted = sroce_worker_unlock_noted(w);
	preempt_enable();
	if (noted || more)
		return false;
	sroce_stat_add(qp->sdev, SROCE_STAT_POSTS_INLINE, 1);
	return true;
}

/*
 * A packet the wire offers from the softirq it arrived in instead of
 * queuing it (a plain ACK, sroce_net.c): taken now if the QP's worker
 * sleeps, by the transport as a hand-over (struct sroce_transport.take),
 * so that it costs no wakeup. Only with the pass bit (tried, never waited
 * for; see SROCE_WORKER_PASS) and with the QP on the worker, in RTS, with
 * nothing queued before the packet. The softirq neither sleeps (an atomic
 * pass) nor sends: what the ACK leaves (the window opened for more WQEs)
 * wakes the worker. False: not taken, the caller queues it.
 */
bool sroce_engine_take_now(struct sroce_qp *qp, struct sroce_rx *rx)
{
	struct sroce_worker *w = READ_ONCE(qp->worker);
	bool more;

	if (IS_ENABLED(CONFIG_PREEMPT_RT) || !READ_ONCE(ack_in_softirq))
		return false;
	/* A worker that is not asleep takes it from the queue soon. */
	if (!(READ_ONCE(w->sdev->status->words[w->index]) &
	      SROCE_WORKER_NEED_WAKEUP) ||
	    mutex_is_locked(&w->lock) ||
	    test_and_set_bit_lock(SROCE_WORKER_PASS, &w->pending))
		return false;
	/* The worker drops what a reset took off the wire (and counts it). */
	if (READ_ONCE(qp->worker) != w ||
	    list_empty(&qp->sched.worker_node) ||
	    READ_ONCE(qp->state) != IB_QPS_RTS || !READ_ONCE(qp->wire) ||
	    sroce_link_rx_pending(qp)) {
		sroce_worker_release(w);
		return false;
	}
	w->atomic_pass = true;
	qp->transport->take(qp, rx, NULL);
	more = sroce_nowake_left_work(w, qp);
	sroce_cq_events_release(&w->cq_events);
	w->atomic_pass = false;
	sroce_worker_release(w);
	sroce_stat_add(qp->sdev, SROCE_STAT_ACKS_IN_SOFTIRQ, 1);
	if (more)
		sroce_worker_wake(w);
	return true;
}
