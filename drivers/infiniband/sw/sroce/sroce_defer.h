/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The module's workqueue (sroce_defer.c, a leaf): work deferred from the
 * data path or from contexts that may not sleep; module exit drains it.
 */
#ifndef SROCE_DEFER_H
#define SROCE_DEFER_H

#include <linux/types.h>

struct work_struct;

int sroce_defer_init(void);
void sroce_defer_exit(void);
/* Queues work; false if it was queued already. */
bool sroce_defer_work(struct work_struct *work);

#endif /* SROCE_DEFER_H */
