// SPDX-License-Identifier: GPL-2.0
/*
 * The module's workqueue: work deferred from the data path (an MR's last
 * reference) or from contexts that may not sleep (unregistration). Module
 * exit destroys it, which runs everything queued. A leaf.
 */
#include <linux/workqueue.h>
#include "sroce_defer.h"

static struct workqueue_struct *sroce_wq;

int sroce_defer_init(void)
{
	sroce_wq = alloc_workqueue("sroce", WQ_UNBOUND, 0);
	return sroce_wq ? 0 : -ENOMEM;
}

/* Runs everything queued, then frees the workqueue. */
void sroce_defer_exit(void)
{
	destroy_workqueue(sroce_wq);
}

/* Runs work from the module's workqueue, which module exit drains. */
bool sroce_defer_work(struct work_struct *work)
{
	return queue_work(sroce_wq, work);
}

