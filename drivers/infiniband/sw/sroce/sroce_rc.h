/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The RC/UC transport's parts: the requester (sroce_rc_req.c), the
 * responder (sroce_rc_resp.c: requests; sroce_rc_answer.c: answers) and
 * the packet dispatch (sroce_rc.c). All run in the QP's worker, under
 * worker->lock.
 */
#ifndef SROCE_RC_H
#define SROCE_RC_H

#include <sroce/psn.h>
#include <sroce/rc_rules.h>
#include "sroce_transport.h"
#include "sroce_link.h"

/*
 * The requests that take one of the responder's READ/atomic resources
 * (max_rd_atomic) and complete only with their own responses: READ, the
 * atomics, ATOMIC_WRITE.
 */
static inline bool sroce_rc_is_rd(u8 wqe_opcode)
{
	return wqe_opcode == SROCE_WQE_RDMA_READ ||
	       sroce_wqe_is_atomic(wqe_opcode) ||
	       wqe_opcode == SROCE_WQE_ATOMIC_WRITE;
}

/* sroce_rc_req.c */
/* Sends what the SQ holds and the window allows, after a timeout's go-back. */
void sroce_rc_send_more(struct sroce_qp *qp, int *budget);
void sroce_rc_handle_aeth(struct sroce_qp *qp, const struct sroce_pkt *pkt);
void sroce_rc_handle_read_data(struct sroce_qp *qp, const struct sroce_rx *rx);
bool sroce_rc_take_parked(struct sroce_qp *qp);

/* The PSN the requester sends next. */
static inline u32 sroce_rc_next_psn(struct sroce_qp *qp)
{
	if (qp->req.sq_next == qp->req.sq_fetched)
		return qp->req.req_psn;
	return sroce_psn_add(sroce_swqe_at(qp, qp->req.sq_next)->psn,
			     qp->req.tx_pkt);
}

/* Whether the window lets the next packet go; UC has no window. */
static inline bool sroce_rc_may_send(struct sroce_qp *qp)
{
	return sroce_qp_is_uc(qp) ||
	       sroce_rc_window_open(sroce_rc_next_psn(qp), qp->req.una_psn,
				    SROCE_RC_WINDOW);
}

/* A response from the QP's peer: an ACK, a NAK, READ data, an atomic ACK. */
static inline void sroce_rc_response(struct sroce_qp *qp,
				     const struct sroce_rx *rx)
{
	if (qp->state != IB_QPS_RTS && qp->state != IB_QPS_SQD) {
		sroce_stat_add(qp->sdev, SROCE_STAT_RX_DROP_PROTOCOL, 1);
		return;
	}
	if (rx->pkt->opcode == IB_OPCODE_ACKNOWLEDGE)
		sroce_rc_handle_aeth(qp, rx->pkt);
	else
		sroce_rc_handle_read_data(qp, rx);
}

/*
 * Whether the requester has anything to send: most runs have no timer
 * waiting, nothing fetched to resend and no new WQE (a producer equal to
 * sq_fetched is always valid).
 */
static inline bool sroce_rc_send_due(struct sroce_qp *qp)
{
	return qp->req.resend_at || qp->req.sq_next != qp->req.sq_fetched ||
	       sroce_ring_read_index(&qp->sq.hdr->producer) != qp->req.sq_next;
}

/* sroce_rc_resp.c */
void sroce_rc_request(struct sroce_qp *qp, const struct sroce_rx *rx);
void sroce_uc_request(struct sroce_qp *qp, const struct sroce_rx *rx);
void sroce_rc_drop_state(struct sroce_qp *qp);
void sroce_rc_fatal_nak(struct sroce_qp *qp, u8 nak, u32 psn);

/* sroce_rc_answer.c */
void sroce_rc_respond(struct sroce_qp *qp, int *budget);
bool sroce_rc_answer_now(struct sroce_qp *qp, struct sroce_pkt *answer);
void sroce_rc_duplicate(struct sroce_qp *qp, const struct sroce_pkt *pkt);
int sroce_rc_send_aeth(struct sroce_qp *qp, u8 syndrome, u32 psn);

/*
 * The responder's rd ring (struct sroce_responder): sroce_rc_resp.c
 * pushes the answers executed READs and atomics owe; sroce_rc_answer.c
 * queues duplicates' answers again and sends them all.
 */

/* Entry i (a free-running index: rd_head, rd_tail) of the rd ring. */
static inline struct sroce_rd_resp *sroce_rc_rd_at(struct sroce_qp *qp, u32 i)
{
	return &qp->resp.rd[i & (qp->resp.rd_slots - 1)];
}

static inline bool sroce_rc_rd_full(struct sroce_qp *qp)
{
	return qp->resp.rd_head - qp->resp.rd_tail >= qp->resp.rd_slots;
}

static __always_inline struct sroce_rd_resp *
sroce_rc_rd_push(struct sroce_qp *qp)
{
	struct sroce_rd_resp *e = sroce_rc_rd_at(qp, qp->resp.rd_head);

	qp->resp.rd_head++;
	memset(e, 0, sizeof(*e));
	return e;
}

#endif /* SROCE_RC_H */
