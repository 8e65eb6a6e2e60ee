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
 * - a queued task_work runs only when its thread returns to user space,
 *   which a thread asleep in a system call may never do: so it holds no
 *   QP reference, and no destroy waits for it. It lives in a struct
 *   sroce_kick_work of its own, which the QP and each queued task_work
 *   hold a reference on; detach clears its QP pointer, and the task_work
 *   takes a QP reference only from a QP that destroy_qp's RCU grace
 *   period has not passed yet;
 * - a task_work still queued when its QP is destroyed is orphaned: from
 *   then on it holds a module reference (rmmod fails while one is
 *   pending, rather than waiting), and its module_put() is its last
 *   access to this module's data. Only rmmod itself, which can no longer
 *   refuse, waits for a queued task_work to run. A task_work that is not
 *   queued any more holds none; the module's exit waits for an RCU-tasks
 *   grace period, so no task is still on its way out of the callback's
 *   code then.
 */
#include <linux/eventfd.h>
#include <linux/file.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/task_work.h>
#include <linux/wait_bit.h>
#include "sroce.h"
#include "sroce_verbs.h"
#include "sroce_transport.h"
#include "sroce_wake.h"

/* Where a kick's task_work is: changed with atomic exchanges only. */
enum sroce_kick_state {
	SROCE_KICK_IDLE,
	SROCE_KICK_QUEUED,
	SROCE_KICK_ORPHANED,	/* queued, its QP destroyed: holds the module */
	SROCE_KICK_AWAITED,	/* queued, its QP destroyed by rmmod, which waits */
};

struct sroce_kick_work {
	struct callback_head cb;
	struct sroce_qp __rcu *qp;	/* NULL once detached */
	atomic_t state;			/* enum sroce_kick_state */
	refcount_t refs;		/* the QP's, and a queued task_work's */
};

struct sroce_kick_poll {
	poll_table pt;
	struct sroce_qp *qp;
};

static void sroce_kick_work_put(struct sroce_kick_work *kw)
{
	if (refcount_dec_and_test(&kw->refs))
		kfree(kw);
}

static void sroce_kick_task_work(struct callback_head *cb)
{
	struct sroce_kick_work *kw = container_of(cb, struct sroce_kick_work,
						  cb);
	struct sroce_qp *qp;
	/* A write from here on queues a new pass; a full barrier. */
	int was = atomic_xchg(&kw->state, SROCE_KICK_IDLE);
	bool orphaned = was == SROCE_KICK_ORPHANED;

	if (was == SROCE_KICK_AWAITED)
		wake_up_var(&kw->state);	/* a detach in rmmod waits */
	rcu_read_lock();
	qp = rcu_dereference(kw->qp);
	if (qp && !refcount_inc_not_zero(&qp->refs))
		qp = NULL;	/* being destroyed */
	rcu_read_unlock();
	if (qp) {
		sroce_engine_run(qp);
		sroce_qp_put(qp);
	}
	sroce_kick_work_put(kw);
	if (orphaned)
		module_put(THIS_MODULE);
}

static bool sroce_kick_from_user_thread(void)
{
	return in_task() &&
	       !(current->flags & (PF_KTHREAD | PF_IO_WORKER | PF_EXITING));
}

static int sroce_kick_wake(struct wait_queue_entry *wait, unsigned int mode,
			   int sync, void *key)
{
	struct sroce_qp *qp = container_of(wait, struct sroce_qp,
					   owner.kick.wait);
	struct sroce_kick_work *kw = qp->owner.kick.work;
	u64 count;

	if (!(key_to_poll(key) & EPOLLIN))
		return 0;
	/* The count means nothing: keep it from ever blocking a writer. */
	eventfd_ctx_do_read(qp->owner.kick.ctx, &count);

	if (sroce_kick_from_user_thread() &&
	    atomic_cmpxchg(&kw->state, SROCE_KICK_IDLE, SROCE_KICK_QUEUED) ==
	    SROCE_KICK_IDLE) {
		refcount_inc(&kw->refs);
		init_task_work(&kw->cb, sroce_kick_task_work);
		if (!task_work_add(current, &kw->cb, TWA_RESUME))
			return 0;
		atomic_set(&kw->state, SROCE_KICK_IDLE);
		sroce_kick_work_put(kw);
	}
	sroce_stat_add(qp->sdev, SROCE_STAT_KICK_WAKES, 1);
	sroce_worker_wake(qp->worker);
	return 0;
}

static void sroce_kick_queue(struct file *file, wait_queue_head_t *wqh,
			     poll_table *pt)
{
	struct sroce_kick_poll *kp = container_of(pt, struct sroce_kick_poll, pt);

	add_wait_queue(wqh, &kp->qp->owner.kick.wait);
}

/* The QP must be ready for the engine: a write may come at once. */
int sroce_kick_attach(struct sroce_qp *qp, int fd)
{
	struct sroce_kick_poll kp = { .qp = qp };
	struct sroce_kick_work *kw;
	struct eventfd_ctx *ctx;
	struct fd f;

	kw = kzalloc(sizeof(*kw), GFP_KERNEL_ACCOUNT);
	if (!kw)
		return -ENOMEM;
	f = fdget(fd);
	if (!fd_file(f)) {
		kfree(kw);
		return -EBADF;
	}
	ctx = eventfd_ctx_fileget(fd_file(f));
	if (IS_ERR(ctx)) {
		fdput(f);
		kfree(kw);
		return PTR_ERR(ctx);
	}
	refcount_set(&kw->refs, 1);
	RCU_INIT_POINTER(kw->qp, qp);
	qp->owner.kick.work = kw;
	qp->owner.kick.ctx = ctx;
	init_waitqueue_func_entry(&qp->owner.kick.wait, sroce_kick_wake);
	init_poll_funcptr(&kp.pt, sroce_kick_queue);
	vfs_poll(fd_file(f), &kp.pt);
	fdput(f);
	return 0;
}

void sroce_kick_detach(struct sroce_qp *qp)
{
	struct sroce_kick_work *kw = qp->owner.kick.work;
	u64 count;

	if (!qp->owner.kick.ctx)
		return;
	eventfd_ctx_remove_wait_queue(qp->owner.kick.ctx, &qp->owner.kick.wait, &count);
	eventfd_ctx_put(qp->owner.kick.ctx);
	qp->owner.kick.ctx = NULL;
	/*
	 * No wake queues a task_work any more. One still queued finds no
	 * QP, and holds the module until it runs; destroy_qp's RCU grace
	 * period covers one that found the QP already.
	 */
	RCU_INIT_POINTER(kw->qp, NULL);
	if (!try_module_get(THIS_MODULE)) {
		/* rmmod: the module's code must outlive a queued task_work. */
		if (atomic_cmpxchg(&kw->state, SROCE_KICK_QUEUED,
				   SROCE_KICK_AWAITED) == SROCE_KICK_QUEUED)
			wait_var_event(&kw->state, atomic_read(&kw->state) !=
					SROCE_KICK_AWAITED);
	} else if (atomic_cmpxchg(&kw->state, SROCE_KICK_QUEUED,
				  SROCE_KICK_ORPHANED) != SROCE_KICK_QUEUED) {
		module_put(THIS_MODULE);
	}
	sroce_kick_work_put(kw);
	qp->owner.kick.work = NULL;
}
