/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The producer half of the engine's sleep protocol (the worker's half is
 * in sroce_engine.c). Every producer in the kernel (the socket, the
 * shortcut, timers, kernel posters, modify_qp) publishes its work first
 * (a ring index, a queued packet, a state), then wakes the worker: what
 * it published is visible before it reads the worker's flag, so either
 * the worker's re-check sees the work or the producer sees the flag.
 */
#ifndef SROCE_WAKE_H
#define SROCE_WAKE_H

#include <linux/sched.h>
#include "sroce.h"

static inline void sroce_worker_wake(struct sroce_worker *w)
{
	smp_mb();	/* publish, then read the flag; pairs with the worker */
	if (READ_ONCE(w->sdev->status->words[w->index]) &
	    SROCE_WORKER_NEED_WAKEUP) {
		/* Seen by a worker that is not asleep yet (sroce_worker_fn). */
		set_bit(SROCE_WORKER_WOKEN, &w->pending);
		wake_up_process(w->task);
	}
}

/*
 * Wakes the worker of a QP something was queued to, unless the running
 * pass is that worker's: a pass that is running already sees it, and this
 * notes the QP for it (worker->queued_to; the first noted is kept), which
 * the engine then runs next (its chase). Called from a pass only (task
 * context), never from an interrupt that may have interrupted a runner.
 *
 * Only a QP still on the worker's list is noted: the runner holds the
 * lock its removal needs, so it outlives the pass. A QP that destroy has
 * taken off (a descriptor's reference can still reach it) may be freed
 * once the caller drops that reference; destroy drains its queue.
 */
static inline void sroce_worker_notify(struct sroce_qp *to)
{
	struct sroce_worker *w = to->worker;

	if (READ_ONCE(w->runner) != current) {
		sroce_worker_wake(w);
		return;
	}
	if (!w->queued_to && !list_empty(&to->sched.worker_node))
		w->queued_to = to;
}

#endif /* SROCE_WAKE_H */
