// SPDX-License-Identifier: GPL-2.0
/*
 * The engine: the part of sroce that plays the NIC.
 *
 * Each device runs a few workers (kthreads). Every QP belongs to exactly
 * one worker, which alone runs the QP's send context (consuming WQEs,
 * retries, completions) and its receive context (the packets its link
 * queued for it), so no QP state is shared between threads: the only
 * cross-thread inputs are the rings' producer indices, the queues the
 * links fill and the QP's state, changed under worker->lock.
 *
 * Sleep protocol (io_uring SQPOLL style): a worker with nothing to do
 * spins briefly, then sets SROCE_WORKER_NEED_WAKEUP in its status word,
 * issues a full barrier, checks every QP once more and only then sleeps. A
 * producer publishes its work, issues a full barrier and wakes the worker
 * only if the flag is set (sroce_wake.h). A kick is a user QP's system
 * call that runs the worker's passes itself (sroce_engine_run); a kernel
 * ULP's post on the wire runs its own QP's work itself while the worker
 * sleeps (sroce_engine_post_inline).
 *
 * Passes carry block I/O (NVMe-oF, iSER, SRP, NFS over RDMA), so they run
 * with I/O reclaim off (PF_MEMALLOC_NOIO): an allocation in a pass that
 * wrote pages back through a ULP on this device would wait for itself.
 * Workers set it for their whole life, kicks for their passes.
 *
 * The engine does not know the transports by name: each registers an ops
 * table (struct sroce_transport) for its QP types at module load, and a
 * QP's passes call it through that table. Which worker serves a QP, and
 * the counts that bind a worker or set its nice value, are
 * sroce_engine_place.c's.
 */
#include <linux/debugfs.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/isolation.h>
#include <linux/sched/mm.h>
#include <linux/sched/stat.h>
#include <linux/vmalloc.h>
#include "sroce_transport.h"
#include "sroce_link.h"
#include "sroce_wake.h"
#include "sroce_engine.h"

/*
 * An idle worker polls only while its CPU has nothing else to run: the
 * next post or packet then needs no wakeup, and the poll costs nobody. A
 * worker must not poll beside a runnable task: it would take the CPU the
 * task needs to post or to consume completions (at nice -10,
 * cond_resched() does not give it back). Documentation/performance.rst
 * has the measurements.
 */
static u32 worker_spin_us = 50;
/*
 * A worker bound to a ULP's I/O queue (see worker_bind) waits between a
 * request and its answer while the target's work item runs on another
 * CPU. Had it slept, the answer must wake its idle CPU, which under a
 * hypervisor costs about as much as the answer itself. So its poll
 * adapts as the kernel's halt polling does (KVM's halt_poll_ns,
 * cpuidle-haltpoll): doubled after a poll that ran to its end and an
 * idle spell within worker_spin_max_us (a longer poll would have caught
 * it), halved after a longer one, and never below worker_spin_us. It
 * still polls only while nothing else can run on its CPU, and a sleep
 * that began because something could (at depth, the submitter) does not
 * grow it. 0 (or a value not above worker_spin_us) turns the adaptation
 * off.
 */
static u32 worker_spin_max_us = 1000;
/* Where a grown poll starts, and below which a shrunk one is dropped. */
#define SROCE_SPIN_GROW_START_NS (10 * NSEC_PER_USEC)
/*
 * A kernel RC QP starts on worker i of its send CQ's vector i, and a
 * worker serving one on the shortcut is bound to the CPU of vector i (the
 * i-th online CPU), where that vector's completion events run too
 * (sroce_cq_post.c): as a NIC steers a queue's interrupts, a ULP's I/O
 * queue is then served on the CPU that submits to it and takes its
 * completions, and a request and its completion need not wake another
 * CPU (unbound, the scheduler moves a woken worker to an idle CPU, which
 * the completion then wakes back). A QP on the wire does not bind its
 * worker: its packets arrive on the CPU of the netdev's interrupt, and a
 * bound worker would be woken from there to take turns with the
 * submitter on its CPU. A worker with user QPs only is left to the
 * scheduler: bound, it would take turns with an application busy-polling
 * on its CPU while another CPU idles. Read when a device is added.
 */
static bool worker_bind = true;
/*
 * At depth the submitter keeps the bound worker's CPU busy, and the
 * worker takes turns with it while the other CPUs idle: requests pile up
 * while it waits, and its passes grow. A bound worker whose passes averaged
 * more than worker_release_batch over a window lets the scheduler place
 * it for a hold (100 ms), then binds again to look, the hold doubling (up
 * to 1 s) while the passes stay large (sroce_worker_review_binding).
 * Documentation/performance.rst has the measurements.
 */
static u32 worker_release_batch = 4;

/*
 * The scheduling choices above are the engine's behaviour, not tunables:
 * these switches (debugfs sroce/NAME, root only) let the tests and the
 * benches turn each one off or change it to compare; nothing else should.
 */
void sroce_engine_switches(struct dentry *dir)
{
	debugfs_create_u32("worker_spin_us", 0600, dir, &worker_spin_us);
	debugfs_create_u32("worker_spin_max_us", 0600, dir,
			   &worker_spin_max_us);
	debugfs_create_bool("worker_bind", 0600, dir, &worker_bind);
	debugfs_create_u32("worker_release_batch", 0600, dir,
			   &worker_release_batch);
	sroce_engine_nowake_switches(dir);
}

#define SROCE_BIND_WINDOW_NS (10 * NSEC_PER_MSEC)
#define SROCE_BIND_HOLD_MIN_NS (100 * NSEC_PER_MSEC)
#define SROCE_BIND_HOLD_MAX_NS NSEC_PER_SEC
/* Packets and WQEs one pass takes from a QP; the rest wait for the next. */
#define SROCE_QP_BUDGET 64
#define SROCE_MAX_WORKERS_USED 4
/*
 * At least two, one a CPU otherwise: QP1 (the GSI QP every device has) is
 * a kernel QP, and with a single worker it would share it with every
 * user QP, so that no user's kick could ever run its own passes
 * (sroce_worker_kick_may_run()); a second worker lets user QPs start
 * apart from the kernel's (sroce_worker_suits()).
 */
#define SROCE_MIN_WORKERS 2

/* Workers ---------------------------------------------------------------- */

int sroce_engine_run_qp(struct sroce_qp *qp)
{
	const struct sroce_transport *t = qp->transport;
	int budget = SROCE_QP_BUDGET;
	int done;

	done = t->receive(qp, &budget);
	switch (READ_ONCE(qp->state)) {
	case IB_QPS_RTS:
		t->send(qp, &budget);
		fallthrough;
	case IB_QPS_RTR:
	case IB_QPS_SQD:
		if (t->respond)
			t->respond(qp, &budget);
		break;
	case IB_QPS_ERR:
		sroce_wq_flush(qp);
		t->drop_state(qp);
		sroce_srq_last_wqe(qp);
		break;
	default:
		break;
	}
	return done + SROCE_QP_BUDGET - budget;
}

/* Drops what is queued to the QP: at reset and at destroy. */
void sroce_engine_drop_rx(struct sroce_qp *qp)
{
	qp->transport->drop_rx(qp);
}

/*
 * Releases what fetched send WQEs hold and the transport's state. The QP
 * is under its worker's lock or off its worker.
 */
void sroce_engine_reset_qp(struct sroce_qp *qp)
{
	struct sroce_swqe *sw;
	u32 i;

	for (i = qp->req.sq_retire; i != qp->req.sq_fetched; i++) {
		sw = sroce_swqe_at(qp, i);
		if (sw->segs_held)
			sroce_segs_put(sw->segs, sw->num_segs);
		sw->segs_held = false;
		sw->rd_counted = false;
	}
	qp->req.rd_outstanding = 0;
	qp->transport->drop_state(qp);
	sroce_shortcut_cache_free(qp);
}

/*
 * At RESET (modify_qp, with the QP's worker locked): what the engine and
 * the transport keep of the QP becomes a new QP's, and nothing queued to
 * it stays. The rings' indices are the verbs layer's.
 */
void sroce_engine_qp_to_reset(struct sroce_qp *qp)
{
	sroce_engine_reset_qp(qp);
	qp->req.sq_next = 0;
	qp->req.sq_retire = 0;
	qp->req.sq_fetched = 0;
	qp->req.sq_blocked = false;
	qp->transport->reset(qp);
	sroce_engine_drop_rx(qp);
}

/*
 * Hops a pass follows from a QP to the QPs of its worker it queued work
 * to (the chase; worker->queued_to is the sleep protocol's note of each):
 * a request to its peer, and the answer back.
 */
#define SROCE_CHASE_HOPS 2

/* Runs qp, then the peers its run queued work to, in that order. */
static int sroce_qp_process(struct sroce_worker *w, struct sroce_qp *qp)
{
	int done = sroce_engine_run_qp(qp);
	unsigned int hop;

	for (hop = 0; hop < SROCE_CHASE_HOPS && w->queued_to; hop++) {
		qp = w->queued_to;
		w->queued_to = NULL;
		if (sroce_qp_has_work(qp))
			done += sroce_engine_run_qp(qp);
	}
	w->queued_to = NULL;	/* the pass's order reaches it */
	sroce_cq_events_release(&w->cq_events);
	return done;
}

static int sroce_worker_pass_locked(struct sroce_worker *w)
{
	struct sroce_qp *qp;
	int done = 0;

	/* A QP with nothing to do costs a few reads, not a pass. */
	list_for_each_entry(qp, &w->qps, sched.worker_node)
		if (sroce_qp_has_work(qp))
			done += sroce_qp_process(w, qp);
	return done;
}

static bool sroce_worker_has_work_locked(struct sroce_worker *w)
{
	struct sroce_qp *qp;

	list_for_each_entry(qp, &w->qps, sched.worker_node)
		if (sroce_qp_has_work(qp))
			return true;
	return false;
}

/*
 * Passes until nothing is left to do; false if max_passes ran out. A pass
 * that took nothing is idle only if nothing is left queued either: a
 * receive that dropped its call's share of bad packets took nothing, and
 * the packets behind them still wait (a kick then wakes the worker).
 */
static bool sroce_worker_run_locked(struct sroce_worker *w, int max_passes)
{
	struct sroce_engine_worker *ew = sroce_ew(w);
	bool idle = false;
	int done;

	WRITE_ONCE(w->runner, current);
	while (max_passes-- > 0) {
		done = sroce_worker_pass_locked(w);
		if (!done) {
			idle = !sroce_worker_has_work_locked(w);
			break;
		}
		ew->bind_passes++;
		ew->bind_work += done;
	}
	WRITE_ONCE(w->runner, NULL);
	return idle;
}

/*
 * Every holder of a worker's lock honours the notes that kicks leave while
 * it holds it (see sroce_engine_run): after unlocking it looks for one.
 */
bool sroce_worker_unlock_noted(struct sroce_worker *w)
{
	sroce_worker_mutex_unlock(w);
	smp_mb();	/* unlocked, then the note; pairs with sroce_engine_run */
	return test_bit(SROCE_WORKER_KICK_NOTED, &w->pending);
}

/* For holders that run no passes: the worker takes a noted kick's work. */
void sroce_worker_unlock(struct sroce_worker *w)
{
	if (sroce_worker_unlock_noted(w))
		sroce_worker_wake(w);
}

/*
 * The idle poll of w after an idle spell of idle_ns under a poll of
 * spin_ns; polled: the poll ran to its end (it did not yield to a task).
 */
static u64 sroce_worker_next_spin(struct sroce_worker *w, u64 spin_ns,
				  u64 idle_ns, bool polled)
{
	struct sroce_engine_worker *ew = sroce_ew(w);
	u64 base = (u64)READ_ONCE(worker_spin_us) * NSEC_PER_USEC;
	u64 max = (u64)READ_ONCE(worker_spin_max_us) * NSEC_PER_USEC;

	/* Changed under w->lock; a stale read costs one poll at most. */
	if (!data_race(ew->num_binding_qps) || max <= base)
		return base;
	if (idle_ns > max)
		spin_ns /= 2;
	else if (polled && idle_ns > spin_ns)
		spin_ns = max(spin_ns * 2, SROCE_SPIN_GROW_START_NS);
	if (spin_ns < SROCE_SPIN_GROW_START_NS)
		spin_ns = 0;
	return clamp(spin_ns, base, max);
}

/*
 * Run by the worker itself, once per window of SROCE_BIND_WINDOW_NS: a
 * bound worker whose passes did more than worker_release_batch packets
 * and WQEs each on average (work piled up while it waited for its CPU)
 * is released (see worker_bind) until bind_release_until, and bound
 * again after; the window after a rebinding decides whether the next
 * release holds twice as long or the hold starts over. @restart (the
 * worker idled for a window or longer) starts a new window at once and
 * judges nothing: the passes counted before the idle time belong to an
 * earlier load.
 */
static void sroce_worker_review_binding(struct sroce_worker *w, u64 now,
					bool restart)
{
	struct sroce_engine_worker *ew = sroce_ew(w);
	unsigned int limit = READ_ONCE(worker_release_batch);
	unsigned int passes, work;

	if (!restart && now - ew->bind_window_start < SROCE_BIND_WINDOW_NS)
		return;
	ew->bind_window_start = now;
	/* Changed under w->lock; a stale read delays a review by a window. */
	if (!data_race(ew->num_binding_qps))
		return;
	sroce_worker_lock(w);
	passes = ew->bind_passes;
	work = ew->bind_work;
	ew->bind_passes = 0;
	ew->bind_work = 0;
	if (!ew->num_binding_qps) {
		/* unbound by sroce_worker_count_binding */
	} else if (ew->bind_released) {
		if (now >= ew->bind_release_until) {
			set_cpus_allowed_ptr(current, cpumask_of(ew->cpu));
			ew->bind_released = false;
		}
	} else if (restart) {
		/* the counts are from before the idle time: dropped */
	} else if (limit && work > (u64)passes * limit) {
		set_cpus_allowed_ptr(current,
				     housekeeping_cpumask(HK_TYPE_KTHREAD));
		ew->bind_released = true;
		ew->bind_release_until = now + ew->bind_hold_ns;
		ew->bind_hold_ns = min_t(u64, ew->bind_hold_ns * 2,
					 SROCE_BIND_HOLD_MAX_NS);
		sroce_stat_add(w->sdev, SROCE_STAT_WORKER_RELEASES, 1);
	} else {
		ew->bind_hold_ns = SROCE_BIND_HOLD_MIN_NS;
	}
	sroce_worker_unlock(w);
}

static int sroce_worker_fn(void *arg)
{
	struct sroce_worker *w = arg;
	struct sroce_engine_worker *ew = sroce_ew(w);
	u32 *status = &w->sdev->status->words[w->index];
	u64 idle_since = local_clock();
	u64 spin_ns = (u64)READ_ONCE(worker_spin_us) * NSEC_PER_USEC;
	bool idle, tx_blocked, polled, idled_a_window = false, polling = false;
	u64 idle_ns;

	memalloc_noio_save();	/* for good: see the top of this file */
	ew->bind_window_start = idle_since;
	ew->bind_hold_ns = SROCE_BIND_HOLD_MIN_NS;
	while (!kthread_should_stop()) {
		sroce_worker_review_binding(w, local_clock(), idled_a_window);
		idled_a_window = false;
		sroce_worker_lock(w);
		/* This pass reads every ring: it serves any kick's note. */
		clear_bit(SROCE_WORKER_KICK_NOTED, &w->pending);
		smp_mb__after_atomic();	/* the note, then the rings */
		idle = sroce_worker_run_locked(w, 1);
		if (sroce_worker_unlock_noted(w))
			idle = false;
		if (!idle) {
			/* An idle poll that found work spared a sleep. */
			if (polling)
				sroce_stat_add(w->sdev, SROCE_STAT_POLL_HITS, 1);
			polling = false;
			idle_since = local_clock();
			cond_resched();
			continue;
		}
		polled = single_task_running();
		if (polled && local_clock() - idle_since < spin_ns) {
			polling = true;
			cond_resched();
			continue;
		}
		polling = false;

		/*
		 * The re-check takes the lock, so it runs in TASK_RUNNING; a
		 * kick between it and the sleep sets WOKEN before its
		 * wakeup, and the state is set before WOKEN is looked at.
		 */
		clear_bit(SROCE_WORKER_WOKEN, &w->pending);
		WRITE_ONCE(*status, SROCE_WORKER_NEED_WAKEUP);
		smp_mb();	/* flag, then re-check; pairs with producers */
		sroce_worker_lock(w);
		w->tx_blocked = false;
		idle = !sroce_worker_has_work_locked(w);
		tx_blocked = w->tx_blocked;
		if (sroce_worker_unlock_noted(w))
			idle = false;
		set_current_state(TASK_INTERRUPTIBLE);
		if (!idle || kthread_should_stop() ||
		    test_bit(SROCE_WORKER_WOKEN, &w->pending)) {
			__set_current_state(TASK_RUNNING);
		} else {
			sroce_stat_add(w->sdev, SROCE_STAT_SLEEPS, 1);
			if (tx_blocked)
				schedule_timeout(1);
			else
				schedule();
		}
		WRITE_ONCE(*status, 0);
		idle_ns = local_clock() - idle_since;
		spin_ns = sroce_worker_next_spin(w, spin_ns, idle_ns, polled);
		idled_a_window = idle_ns >= SROCE_BIND_WINDOW_NS;
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
 * A kick that finds the lock taken leaves a note (pending) and
 * returns; every holder looks for a note after it unlocks: a kicking
 * runner runs again, the worker does not sleep, and a holder that runs no
 * passes (modify_qp, QP moves) wakes the worker. So in a ping-pong the
 * peer's answer is carried by the kick that is still in the kernel
 * instead of waiting for a wakeup.
 */
#define SROCE_KICK_ROUNDS 4
/*
 * Whether a user's kick may run w's passes in the kicking task: only if
 * every QP w serves is a user QP of the kicker's effective uid. A kernel
 * ULP's QP, or another user's, never waits on a task that a user may
 * throttle, starve or stop; the worker runs them. Under w->lock.
 */
static bool sroce_worker_kick_may_run(struct sroce_worker *w)
{
	struct sroce_engine_worker *ew = sroce_ew(w);

	lockdep_assert_held(&w->lock);
	return !ew->num_kernel_qps && !ew->num_foreign_qps &&
	       uid_eq(ew->kick_uid, current_euid());
}

/*
 * Passes a kick's round runs at most: on the shortcut a request, its
 * answer and the completion take one pass between QPs of one worker
 * (the chase) and up to three otherwise, and a kick that stops
 * before its QPs are idle hands them to the worker, which costs a wakeup.
 */
#define SROCE_KICK_PASSES 8

void sroce_engine_run(struct sroce_qp *qp)
{
	struct sroce_worker *w = qp->worker;
	unsigned int round, noio;
	bool idle, answering;
	u32 rx_psn;

	sroce_stat_add(qp->sdev, SROCE_STAT_KICKS, 1);
	/*
	 * Sampled before the passes: an answer that arrives during this
	 * kick's own passes (the peer posted it meanwhile) makes the next
	 * kick an answering one, as it is.
	 */
	rx_psn = READ_ONCE(qp->resp.rx_expected_psn);
	answering = rx_psn != READ_ONCE(qp->owner.kick.rx_psn);
	WRITE_ONCE(qp->owner.kick.rx_psn, rx_psn);
	set_bit(SROCE_WORKER_KICK_NOTED, &w->pending);
	smp_mb__after_atomic();	/* the note, then the lock; pairs below */
	for (round = 0; round < SROCE_KICK_ROUNDS; round++) {
		if (!sroce_worker_trylock(w))
			return;	/* the holder finds the note */
		if (!sroce_worker_kick_may_run(w)) {
			sroce_stat_add(qp->sdev, SROCE_STAT_KICKS_DEFERRED, 1);
			sroce_worker_unlock(w);	/* wakes it: the note is set */
			return;
		}
		clear_bit(SROCE_WORKER_KICK_NOTED, &w->pending);
		smp_mb__after_atomic();	/* the note, then the rings */
		noio = memalloc_noio_save();
		idle = sroce_worker_run_locked(w, SROCE_KICK_PASSES);
		memalloc_noio_restore(noio);
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
		sroce_worker_wake(w);
}

int sroce_engine_start(struct sroce_dev *sdev)
{
	struct sroce_worker *w;
	unsigned int i;

	sdev->status = vmalloc_user(PAGE_SIZE);
	if (!sdev->status)
		return -ENOMEM;
	sdev->num_workers = clamp_t(unsigned int, num_online_cpus(),
				    SROCE_MIN_WORKERS, SROCE_MAX_WORKERS_USED);
	sdev->workers_bound = READ_ONCE(worker_bind);
	sdev->workers = kcalloc(sdev->num_workers, sizeof(*sdev->workers),
				GFP_KERNEL);
	if (!sdev->workers)
		goto err_status;

	for (i = 0; i < sdev->num_workers; i++) {
		w = &sdev->workers[i].pub;
		w->sdev = sdev;
		w->index = i;
		mutex_init(&w->lock);
		INIT_LIST_HEAD(&w->qps);
		w->task = kthread_create(sroce_worker_fn, w, "sroce/%s/%u",
					 netdev_name(sdev->ndev), i);
		if (IS_ERR(w->task))
			goto err_workers;
		sdev->workers[i].cpu = cpumask_local_spread(i, NUMA_NO_NODE);
		wake_up_process(w->task);
	}
	return 0;

err_workers:
	while (i--)
		kthread_stop(sdev->workers[i].pub.task);
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
		kthread_stop(sdev->workers[i].pub.task);
	kfree(sdev->workers);
	sdev->workers = NULL;
	vfree(sdev->status);
	sdev->status = NULL;
}
