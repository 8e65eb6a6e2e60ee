/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The transport interface: how the engine (sroce_engine.c) runs a QP's
 * transport (sroce_rc.c for RC and UC, sroce_ud.c for UD and GSI) without
 * naming it.
 */
#ifndef SROCE_TRANSPORT_H
#define SROCE_TRANSPORT_H

#include "sroce_link.h"
#include "sroce_wq.h"

/* Transports ------------------------------------------------------------- */

/*
 * A transport, as the engine runs it for each of its QPs. Each pass over
 * a QP with work runs receive, then (in RTS) send, then (in RTR, RTS and
 * SQD) respond; in the error state the engine flushes the work queues and
 * calls drop_state. budget counts packets or WQEs: a transport stops at 0
 * and leaves the rest for the next pass.
 */
struct sroce_transport {
	int (*receive)(struct sroce_qp *qp, int *budget);
	void (*send)(struct sroce_qp *qp, int *budget);
	void (*respond)(struct sroce_qp *qp, int *budget);	/* or NULL */
	/* Whether a pass would do anything; may set worker->tx_blocked. */
	bool (*has_work)(struct sroce_qp *qp);
	/* Drops the transport's state: in the error state and at reset. */
	void (*drop_state)(struct sroce_qp *qp);
	/*
	 * At RESET, after drop_state, with the QP's worker locked: the
	 * transport's sequence numbers, retries and timers as a new QP's.
	 */
	void (*reset)(struct sroce_qp *qp);
	/*
	 * Drops what is queued to the QP: under the worker's lock, or with
	 * the QP off its worker.
	 */
	void (*drop_rx)(struct sroce_qp *qp);
	/* Takes one packet a link hands over (sroce_link.h), or NULL. */
	sroce_link_take_fn *take;
};

extern const struct sroce_transport sroce_rc_transport;	/* RC and UC */
extern const struct sroce_transport sroce_ud_transport;	/* UD and GSI */

#endif /* SROCE_TRANSPORT_H */
