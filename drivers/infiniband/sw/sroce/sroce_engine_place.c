// SPDX-License-Identifier: GPL-2.0
/*
 * Where a QP runs: the transport and the worker it gets as it joins the
 * engine, its moves (to its shortcut peer's worker, on or off the wire),
 * and the counts each worker keeps of its QPs: their owners (for kicks),
 * those on the wire (for its nice value), those that bind it to its CPU.
 *
 * Rules:
 * - a QP in the engine is on exactly one worker's list; it joins, leaves
 *   or moves only under that worker's lock (both workers' for a move, the
 *   lower index first), and the worker's counts change with it;
 * - a worker runs at worker_nice while any of its QPs is on the wire, and
 *   is bound to its CPU while any of its QPs binds it (steered, on the
 *   shortcut; see worker_bind in sroce_engine.c, which also releases a
 *   bound worker under load).
 */
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/sched/isolation.h>
#include "sroce_transport.h"
#include "sroce_link.h"
#include "sroce_wake.h"
#include "sroce_engine.h"

/*
 * A worker that serves a QP on the wire is the only processor of its
 * packets, and an application busy-polling its CQ on the same CPU must
 * not starve it. A worker with shortcut QPs only stays at nice 0: there
 * the posting processes run the engine through their kicks, and a
 * heavier worker would take their CPU. A worker with nothing to do
 * sleeps, so the weight costs no one.
 */
static int worker_nice = -10;
module_param(worker_nice, int, 0444);
MODULE_PARM_DESC(worker_nice,
		 "Nice value of engine workers serving wire QPs (-20..19)");

static const struct sroce_transport *sroce_transports[IB_QPT_MAX];

/* What the wire offers a plain ACK to, from softirq. */
static const struct sroce_wire_up sroce_engine_wire_up = {
	.take_now = sroce_engine_take_now,
};

/* At module load, before any device exists. */
void sroce_engine_register(enum ib_qp_type type,
			   const struct sroce_transport *transport)
{
	sroce_transports[type] = transport;
	if (transport->take) {
		sroce_shortcut_register(type, transport->take);
		sroce_wire_register(&sroce_engine_wire_up);
	}
}

/* Whether qp holds its worker on the worker's CPU: steered, on the shortcut. */
static bool sroce_qp_binds(const struct sroce_qp *qp)
{
	return qp->sched.steered && !qp->sched.wire_counted;
}

/*
 * Binds w to its CPU while any of its QPs binds it (see worker_bind), and
 * gives it back the CPUs of any kthread after; under w->lock, which the
 * worker does not need to be moved. A first binding QP ends a release
 * (sroce_worker_review_binding). If the CPU went offline, the worker
 * stays where the scheduler puts it.
 */
static void sroce_worker_count_binding(struct sroce_worker *w, int delta)
{
	struct sroce_engine_worker *ew = sroce_ew(w);
	bool was_bound = ew->num_binding_qps;

	lockdep_assert_held(&w->lock);
	ew->num_binding_qps += delta;
	if (!was_bound && ew->num_binding_qps) {
		set_cpus_allowed_ptr(w->task, cpumask_of(ew->cpu));
		ew->bind_released = false;
		ew->bind_passes = 0;
		ew->bind_work = 0;
	} else if (was_bound && !ew->num_binding_qps) {
		set_cpus_allowed_ptr(w->task,
				     housekeeping_cpumask(HK_TYPE_KTHREAD));
	}
}

/* Counts qp as a QP of w's owners (see sroce_engine.h), under lock. */
static void sroce_worker_count_owner(struct sroce_worker *w,
				     struct sroce_qp *qp, int delta)
{
	struct sroce_engine_worker *ew = sroce_ew(w);

	if (!qp->owner.user) {
		ew->num_kernel_qps += delta;
		return;
	}
	if (delta > 0) {
		if (!ew->num_uid_qps && !ew->num_foreign_qps)
			ew->kick_uid = qp->owner.uid;
		qp->owner.kick_foreign = !uid_eq(qp->owner.uid, ew->kick_uid);
	}
	if (qp->owner.kick_foreign)
		ew->num_foreign_qps += delta;
	else
		ew->num_uid_qps += delta;
}

static void sroce_worker_count_qp(struct sroce_worker *w, struct sroce_qp *qp,
				  int delta)
{
	lockdep_assert_held(&w->lock);
	sroce_ew(w)->num_qps += delta;
	sroce_worker_count_owner(w, qp, delta);
	if (sroce_qp_binds(qp))
		sroce_worker_count_binding(w, delta);
}

void sroce_engine_set_wire(struct sroce_qp *qp, bool wire)
{
	struct sroce_worker *w = qp->worker;
	struct sroce_engine_worker *ew = sroce_ew(w);

	lockdep_assert_held(&w->lock);
	if (qp->sched.wire_counted == wire)
		return;
	if (qp->sched.steered)
		sroce_worker_count_binding(w, wire ? -1 : 1);
	qp->sched.wire_counted = wire;
	if (wire ? ew->num_wire_qps++ == 0 : --ew->num_wire_qps == 0)
		set_user_nice(w->task,
			      wire ? clamp(worker_nice, MIN_NICE, MAX_NICE) : 0);
}

/* Takes qp off w's list, under w->lock; see sroce_qp.sched.handed_to. */
static void sroce_engine_leave_worker(struct sroce_qp *qp,
				      struct sroce_worker *w)
{
	struct sroce_qp *other;

	lockdep_assert_held(&w->lock);
	list_del_init(&qp->sched.worker_node);
	sroce_worker_count_qp(w, qp, -1);
	qp->sched.handed_to = NULL;
	list_for_each_entry(other, &w->qps, sched.worker_node)
		if (other->sched.handed_to == qp)
			other->sched.handed_to = NULL;
}

static void sroce_engine_set_worker(struct sroce_qp *qp, struct sroce_worker *w)
{
	qp->worker = w;
	list_add_tail(&qp->sched.worker_node, &w->qps);
	sroce_worker_count_qp(w, qp, 1);
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
		sroce_worker_lock(first);
		mutex_lock_nested(&second->lock, SINGLE_DEPTH_NESTING);
		sroce_worker_claim(second);
		/* The peer may have moved meanwhile: follow it. */
		to = dest->worker;
		if (to == first || to == second) {
			sroce_engine_set_wire(qp, false);
			sroce_engine_leave_worker(qp, from);
			sroce_engine_set_worker(qp, to);
		}
		sroce_worker_unlock(second);
		sroce_worker_unlock(first);
	}
	sroce_qp_put(dest);
}

static void sroce_qp_timer_fn(struct timer_list *t)
{
	struct sroce_qp *qp = from_timer(qp, t, req.timer);
	unsigned long at;

	smp_mb();	/* off the timer list, then resend_at; pairs with arm */
	at = READ_ONCE(qp->req.resend_at);
	if (!at)
		return;
	if (time_before(jiffies, at))
		mod_timer(&qp->req.timer, at);
	else
		sroce_worker_wake(qp->worker);
}

/*
 * Whether qp should start on w: a user QP where its owner's kicks may
 * run (no kernel QP, no other user's), a kernel QP where no user QP is
 * and, unless spare says another worker without kernel QPs is left,
 * where kernel QPs already are: the last worker free of them stays free
 * for users' QPs (on a one-CPU host, the one beside QP1's). The counts
 * are read without w's lock: a placement hint.
 */
static bool sroce_worker_suits(struct sroce_worker *w, struct sroce_qp *qp,
			       bool spare)
{
	struct sroce_engine_worker *ew = sroce_ew(w);
	unsigned int kernel, uid, foreign;
	kuid_t kick_uid;

	kernel = data_race(ew->num_kernel_qps);	/* a hint, see above */
	uid = data_race(ew->num_uid_qps);	/* likewise */
	foreign = data_race(ew->num_foreign_qps);	/* likewise */
	kick_uid = data_race(ew->kick_uid);	/* likewise */
	if (!qp->owner.user)
		return !uid && !foreign && (kernel || spare);
	return !kernel && !foreign && (!uid || uid_eq(kick_uid, qp->owner.uid));
}

/*
 * A kernel RC QP (a ULP's connection; not QP1) is steered to the worker
 * of its send CQ's vector (see worker_bind), if the device has one; any
 * other QP starts on the least loaded worker that suits it (ties go to
 * the lowest index; sroce_worker_suits()), or the least loaded. A
 * shortcut QP then joins its peer's worker when it connects
 * (sroce_engine_pair_qp).
 */
static struct sroce_worker *sroce_engine_pick_worker(struct sroce_qp *qp)
{
	struct sroce_dev *sdev = qp->sdev;
	struct sroce_worker *w = NULL;
	unsigned int i, kernel_free = 0;
	int cpu;

	if (sdev->workers_bound && !qp->owner.user &&
	    qp->ibqp.qp_type == IB_QPT_RC) {
		cpu = READ_ONCE(to_scq(qp->ibqp.send_cq)->event_cpu);
		for (i = 0; i < sdev->num_workers; i++) {
			if (sdev->workers[i].cpu == cpu) {
				qp->sched.steered = true;
				return &sdev->workers[i].pub;
			}
		}
	}
	for (i = 0; i < sdev->num_workers; i++)	/* a hint, as in _suits */
		kernel_free += !data_race(sdev->workers[i].num_kernel_qps);
	/* The least loaded that suits it, else the least loaded. */
	for (i = 0; i < sdev->num_workers; i++)
		if (sroce_worker_suits(&sdev->workers[i].pub, qp,
				       kernel_free > 1) &&
		    (!w || sdev->workers[i].num_qps < sroce_ew(w)->num_qps))
			w = &sdev->workers[i].pub;
	if (w)
		return w;
	w = &sdev->workers[0].pub;
	for (i = 1; i < sdev->num_workers; i++)
		if (sdev->workers[i].num_qps < sroce_ew(w)->num_qps)
			w = &sdev->workers[i].pub;
	return w;
}

void sroce_engine_add_qp(struct sroce_qp *qp)
{
	struct sroce_worker *w;

	qp->transport = sroce_transports[qp->ibqp.qp_type];
	w = sroce_engine_pick_worker(qp);
	timer_setup(&qp->req.timer, sroce_qp_timer_fn, 0);
	sroce_worker_lock(w);
	sroce_engine_set_worker(qp, w);
	sroce_worker_unlock(w);
}

/*
 * Time a UD QP's destroy gives its worker to send the datagrams posted
 * before it (sroce_engine_drain_ud).
 */
#define SROCE_UD_DRAIN_MS 250

/*
 * Datagrams a UD QP posted before its destroy leave, as a NIC would have
 * sent them by then (mckey posts and destroys at once). The worker sends
 * them: a destroy may not run passes of a worker that kernel or other
 * users' QPs share (sroce_worker_kick_may_run), so it wakes the worker and
 * waits for the kernel thread, a jiffy at a time and SROCE_UD_DRAIN_MS at
 * most, until the ring's producer index read here is reached or the QP
 * leaves RTS (a bad index puts it in ERR). What is posted meanwhile, or
 * posted to a QP that is not in RTS, is not waited for.
 */
static void sroce_engine_drain_ud(struct sroce_qp *qp)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(SROCE_UD_DRAIN_MS);
	u32 producer;

	if (!sroce_qp_is_ud(qp) || READ_ONCE(qp->state) != IB_QPS_RTS)
		return;
	producer = READ_ONCE(qp->sq.hdr->producer);
	/* sq_next is the worker's, under its lock: a stale read waits a jiffy. */
	while (data_race(qp->req.sq_next) != producer &&
	       READ_ONCE(qp->state) == IB_QPS_RTS &&
	       time_before(jiffies, deadline)) {
		sroce_worker_wake(qp->worker);
		schedule_timeout_uninterruptible(1);
	}
}

void sroce_engine_remove_qp(struct sroce_qp *qp)
{
	struct sroce_worker *w = qp->worker;

	sroce_engine_drain_ud(qp);
	sroce_worker_lock(w);
	sroce_engine_leave_worker(qp, w);
	/* Gone from the worker: leaving the wire must not bind it again. */
	qp->sched.steered = false;
	sroce_engine_set_wire(qp, false);
	sroce_worker_unlock(w);
	del_timer_sync(&qp->req.timer);
}
