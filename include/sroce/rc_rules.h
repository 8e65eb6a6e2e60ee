/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The sequence rules of an RC connection (IBTA vol. 1 ch. 9.7), as pure
 * functions of PSNs and counters: the requester's window, which packets
 * ask for an ACK, what an ACK or a response may answer, where a go-back
 * resumes, and when retries are spent. The transport (sroce_rc*.c) keeps
 * the state; these decide.
 *
 * Pure layer: no ib_core.
 */
#ifndef SROCE_RC_RULES_H
#define SROCE_RC_RULES_H

#include <sroce/psn.h>

/* A request asks for an ACK at its last packet and at every PSN 0 mod this. */
#define SROCE_ACK_REQ_EVERY 64
/* rnr_retry 7 means "retry for ever" (IBTA 9.7.5.2.8). */
#define SROCE_RNR_RETRY_INFINITE 7

/* Whether psn is one of the n PSNs from first: [first, first + n). */
static inline bool sroce_psn_in(u32 psn, u32 first, u32 n)
{
	return !sroce_psn_before(psn, first) &&
	       sroce_psn_diff(psn, first) < (s32)n;
}

/*
 * Requester: whether the packet with PSN next may go out while una is the
 * oldest PSN not acknowledged.
 */
static inline bool sroce_rc_window_open(u32 next, u32 una, u32 window)
{
	return sroce_psn_diff(next, una) < (s32)window;
}

/*
 * Requester: whether a request packet sets the AckReq bit. The responder
 * may coalesce ACKs for the others, so a long message still gets an ACK
 * every SROCE_ACK_REQ_EVERY packets and the window keeps moving.
 */
static inline bool sroce_rc_ack_req(u32 psn, bool last_of_message)
{
	return last_of_message || !(psn % SROCE_ACK_REQ_EVERY);
}

/*
 * Requester: whether an ACK, NAK or response for psn answers a packet this
 * QP has sent and not seen acknowledged: psn in [una, sent). One at or
 * past sent answers nothing (a ghost); one before una is stale.
 */
static inline bool sroce_rc_answers_outstanding(u32 psn, u32 una, u32 sent)
{
	return !sroce_psn_before(psn, una) && sroce_psn_before(psn, sent);
}

/* Requester: whether an ACK of ack completes a message of n PSNs at first. */
static inline bool sroce_rc_ack_covers(u32 ack, u32 first, u32 n)
{
	return !sroce_psn_before(ack, sroce_psn_add(first, n - 1));
}

/*
 * Requester: the packet of a message (its PSNs from first, holding psn)
 * where a go-back to psn resumes: psn's own. A READ is asked for again
 * from the response packet that is missing, for the rest of its bytes
 * (asked whole, its answer would resend what arrived, and a long READ on
 * a slow link could then never get past its timeout); an atomic is one
 * packet.
 */
static inline u32 sroce_rc_goback_pkt(u32 psn, u32 first)
{
	return sroce_psn_diff(psn, first);
}

/*
 * Requester: whether one more RNR retry (count, after incrementing) is
 * past what rnr_retry allows; 7 never is.
 */
static inline bool sroce_rc_rnr_retries_spent(u32 count, u8 rnr_retry)
{
	return rnr_retry < SROCE_RNR_RETRY_INFINITE && count > rnr_retry;
}

/* Requester: whether count resends are past retry_cnt (where 7 is 7). */
static inline bool sroce_rc_retries_spent(u32 count, u8 retry_cnt)
{
	return count > retry_cnt;
}

/*
 * Responder: the PSN expected after a request executed at psn: a READ
 * consumes one PSN per response packet, any other request one.
 */
static inline u32 sroce_rc_next_expected(u32 psn, bool read, u32 read_npkts)
{
	return sroce_psn_add(psn, read ? read_npkts : 1);
}

/* Responder: where an answer queued for PSN p stands beside another answer. */
enum sroce_rc_answer_order {
	SROCE_RC_ANSWER_BEFORE,		/* the other answers only PSNs before p */
	SROCE_RC_ANSWER_HOLDS,		/* the other is the answer for p */
	SROCE_RC_ANSWER_AFTER,		/* the other answers only PSNs after p */
};

/*
 * Responder: how the answer for PSN p (a duplicate READ or atomic) orders
 * against another answer of n PSNs from first. The requester takes
 * answers in PSN order only, so one for p goes before every answer that
 * is AFTER it; an answer that HOLDS p already is the one to (re)send.
 */
static inline enum sroce_rc_answer_order
sroce_rc_answer_order(u32 p, u32 first, u32 n)
{
	if (sroce_psn_in(p, first, n))
		return SROCE_RC_ANSWER_HOLDS;
	return sroce_psn_before(p, first) ? SROCE_RC_ANSWER_AFTER :
					    SROCE_RC_ANSWER_BEFORE;
}

/*
 * Responder: the packet an answer being sent (sent of its packets gone)
 * resumes at when the requester asks again from its packet idx. A
 * requester asks again after it missed a packet, so the stream goes back
 * to idx at once rather than after the requester's timeout; a packet not
 * yet sent is simply still to come.
 */
static inline u32 sroce_rc_answer_resume(u32 sent, u32 idx)
{
	return idx < sent ? idx : sent;
}

#endif /* SROCE_RC_RULES_H */
