// SPDX-License-Identifier: GPL-2.0
/*
 * The kick eventfd of a user QP: a doorbell that costs the provider one
 * write(2) to an eventfd instead of a uverbs command.
 *
 * The eventfd wakes its waiters under its own spinlock with interrupts off,
 * so the wake callback only queues a task_work on the writing thread; the
 * engine runs from that task_work on the thread's way back to user space,
 * exactly as it runs inside the POST_SEND kick (sroce_engine_run). A wake
 * that does not come from a user thread's system call (an AIO completion,
 * a kernel thread, an exiting task, a task_work already queued) wakes the
 * worker instead.
 *
 * Lifetime rules:
 * - the wait entry is on the eventfd only between sroce_kick_attach() and
 *   sroce_kick_detach(), and detach runs first in destroy_qp;
 * - a queued task_work holds a QP reference, which destroy_qp waits for,
 *   and its sroce_qp_put() is its last access to the QP and to this
 *   module's data; the module's exit waits for an RCU-tasks grace period,
 *   so no task is still on its way out of the callback's code then.
 */
#include <linux/eventfd.h>
#include <linux/file.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/task_work.h>
#include "sroce.h"
#include "sroce_verbs.h"
#include "sroce_engine.h"
#include "sroce_wake.h"

#define SROCE_KICK_QUEUED 0

struct sroce_kick_poll {
	poll_table pt;
	struct sroce_qp *qp;
};

static void sroce_kick_task_work(struct callback_head *cb)
{
	struct sroce_qp *qp = container_of(cb, struct sroce_qp, kick.work);

	/* A write from here on queues a new pass. */
	clear_bit(SROCE_KICK_QUEUED, &qp->kick.flags);
	smp_mb__after_atomic();	/* the flag, then the rings the pass reads */
	sroce_engine_run(qp);
	sroce_qp_put(qp);
}

static bool sroce_kick_from_user_thread(void)
{
	return in_task() &&
	       !(current->flags & (PF_KTHREAD | PF_IO_WORKER | PF_EXITING));
}

static int sroce_kick_wake(struct wait_queue_entry *wait, unsigned int mode,
			   int sync, void *key)
{
	struct sroce_qp *qp = container_of(wait, struct sroce_qp, kick.wait);
	u64 count;

	if (!(key_to_poll(key) & EPOLLIN))
		return 0;
	/* The count means nothing: keep it from ever blocking a writer. */
	eventfd_ctx_do_read(qp->kick.ctx, &count);

	if (sroce_kick_from_user_thread() &&
	    !test_and_set_bit(SROCE_KICK_QUEUED, &qp->kick.flags)) {
		refcount_inc(&qp->refs);
		init_task_work(&qp->kick.work, sroce_kick_task_work);
		if (!task_work_add(current, &qp->kick.work, TWA_RESUME))
			return 0;
		clear_bit(SROCE_KICK_QUEUED, &qp->kick.flags);
		sroce_qp_put(qp);
	}
	sroce_stat_add(qp->sdev, SROCE_STAT_KICK_WAKES, 1);
	sroce_worker_wake(qp->worker);
	return 0;
}

static void sroce_kick_queue(struct file *file, wait_queue_head_t *wqh,
			     poll_table *pt)
{
	struct sroce_kick_poll *kp = container_of(pt, struct sroce_kick_poll, pt);

	add_wait_queue(wqh, &kp->qp->kick.wait);
}

/* The QP must be ready for the engine: a write may come at once. */
int sroce_kick_attach(struct sroce_qp *qp, int fd)
{
	struct sroce_kick_poll kp = { .qp = qp };
	struct eventfd_ctx *ctx;
	struct fd f;

	f = fdget(fd);
	if (!fd_file(f))
		return -EBADF;
	ctx = eventfd_ctx_fileget(fd_file(f));
	if (IS_ERR(ctx)) {
		fdput(f);
		return PTR_ERR(ctx);
	}
	qp->kick.ctx = ctx;
	init_waitqueue_func_entry(&qp->kick.wait, sroce_kick_wake);
	init_poll_funcptr(&kp.pt, sroce_kick_queue);
	vfs_poll(fd_file(f), &kp.pt);
	fdput(f);
	return 0;
}

void sroce_kick_detach(struct sroce_qp *qp)
{
	u64 count;

	if (!qp->kick.ctx)
		return;
	eventfd_ctx_remove_wait_queue(qp->kick.ctx, &qp->kick.wait, &count);
	eventfd_ctx_put(qp->kick.ctx);
	qp->kick.ctx = NULL;
}
