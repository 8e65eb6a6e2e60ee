/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The engine's own state of a worker: what it counts of the worker's QPs
 * to place new ones and to decide whose kicks may run it, and the
 * binding to the CPU of its vector, and what the engine's files share.
 * Only the engine's files include this; the layers below see struct
 * sroce_worker (sroce.h), which is embedded here as pub, and never these
 * counts.
 */
#ifndef SROCE_ENGINE_H
#define SROCE_ENGINE_H

#include "sroce.h"
#include "sroce_transport.h"

struct sroce_engine_worker {
	struct sroce_worker pub;
	int cpu;		/* of vector index: where it runs if bound */
	/* The counts below change with the QP list, under pub.lock. */
	unsigned int num_qps;
	unsigned int num_binding_qps;	/* bound while there are any */
	unsigned int num_wire_qps;	/* its QPs with wire_counted set */
	/*
	 * Whose QPs it runs, for kicks (sroce_worker_kick_may_run()): kernel
	 * QPs, user QPs of the effective uid kick_uid, and user QPs of other
	 * uids (counted when their QP joined; kick_uid is that of the first
	 * user QP that found none of either).
	 */
	unsigned int num_kernel_qps;
	unsigned int num_uid_qps;
	unsigned int num_foreign_qps;
	kuid_t kick_uid;
	/*
	 * A bound worker yielding to load (sroce_worker_review_binding):
	 * bind_released says it runs where the scheduler puts it although
	 * it has binding QPs; it and the passes that found work in this
	 * window, with the packets and WQEs they took, are under pub.lock;
	 * the window and the hold only the worker uses.
	 */
	bool bind_released;
	unsigned int bind_passes;
	unsigned int bind_work;
	u64 bind_window_start;	/* local_clock() */
	u64 bind_release_until;	/* local_clock() */
	u64 bind_hold_ns;	/* how long the next release lasts */
};

/*
 * Unlocks w and says whether a kick left a note meanwhile, which the
 * caller honours (sroce_engine.c).
 */
bool sroce_worker_unlock_noted(struct sroce_worker *w);
/* Runs qp's contexts once (sroce_engine.c); under its worker's pass bit. */
int sroce_engine_run_qp(struct sroce_qp *qp);

static __always_inline bool sroce_qp_has_work(struct sroce_qp *qp)
{
	if (qp->transport->has_work(qp))
		return true;
	/* What sroce_wq_flush() would flush, or an SRQ event to raise. */
	return READ_ONCE(qp->state) == IB_QPS_ERR &&
	       (sroce_wq_flush_pending(qp) || (qp->srq && !qp->srq_last_wqe));
}

/* Work that does not wake the worker (sroce_engine_nowake.c). */
struct sroce_rx;
bool sroce_engine_take_now(struct sroce_qp *qp, struct sroce_rx *rx);
void sroce_engine_nowake_switches(struct dentry *dir);

static inline struct sroce_engine_worker *sroce_ew(struct sroce_worker *w)
{
	return container_of(w, struct sroce_engine_worker, pub);
}

#endif /* SROCE_ENGINE_H */
