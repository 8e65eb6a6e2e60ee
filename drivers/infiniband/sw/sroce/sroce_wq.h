/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Work-queue services the transports share (sroce_wq.c). Runs in a QP's
 * worker, under worker->lock.
 */
#ifndef SROCE_WQ_H
#define SROCE_WQ_H

#include "sroce_seg.h"

/* The completion status of a WQE that failed validation. */
static inline u8 sroce_wqe_status(enum sroce_wqe_verdict v)
{
	switch (v) {
	case SROCE_WQE_OK:
		return IB_WC_SUCCESS;
	case SROCE_WQE_BAD_LENGTH:
		return IB_WC_LOC_LEN_ERR;
	default:
		return IB_WC_LOC_QP_OP_ERR;
	}
}

static inline struct sroce_swqe *sroce_swqe_at(struct sroce_qp *qp, u32 index)
{
	return &qp->swq.slots[index & (sroce_queue_slots(&qp->sq) - 1)];
}

void sroce_qp_error(struct sroce_qp *qp);
void sroce_qp_ring_error(struct sroce_qp *qp);
bool sroce_sq_producer(struct sroce_qp *qp, u32 *producer);
/* Receive WQEs in the QP's own RQ; -1 for an impossible producer. */
int sroce_rq_posted(struct sroce_qp *qp);
/* The same for where its receives come from: its SRQ, else its RQ. */
int sroce_recv_posted(struct sroce_qp *qp);
/* sroce_take_recv(): nothing was posted (another QP took the SRQ's last). */
#define SROCE_RECV_NONE 0xff
u8 sroce_fetch_send(struct sroce_qp *qp, u32 index);
void sroce_complete_send(struct sroce_qp *qp, u8 status);
u8 sroce_take_recv(struct sroce_qp *qp, struct sroce_seg *segs,
		   unsigned int *nseg, u32 *cap, u64 *wr_id);
void sroce_recv_done(struct sroce_qp *qp);
void sroce_srq_last_wqe(struct sroce_qp *qp);
void sroce_wq_flush(struct sroce_qp *qp);
bool sroce_wq_flush_pending(struct sroce_qp *qp);

#endif /* SROCE_WQ_H */
