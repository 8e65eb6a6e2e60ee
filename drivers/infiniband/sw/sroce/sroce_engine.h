/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Engine internals shared by its two transports: sroce_engine.c (workers,
 * completions, the same-host shortcut) and sroce_rc.c (RC over RoCEv2
 * packets). Everything here runs in a QP's worker, under worker->lock.
 */
#ifndef SROCE_ENGINE_H
#define SROCE_ENGINE_H

#include "sroce.h"

/* Memory through segments ------------------------------------------------ */

struct sroce_seg_iter {
	const struct sroce_seg *seg;
	unsigned int num;
	unsigned int i;
	u32 off;
};

/* Positions it at byte off of the segment list (off <= total length). */
void sroce_seg_iter_init(struct sroce_seg_iter *it, const struct sroce_seg *seg,
			 unsigned int num, u32 off);
/* Copies len bytes; both sides were checked to hold at least len. */
void sroce_seg_copy(struct sroce_seg_iter *dst, struct sroce_seg_iter *src,
		    u32 len);
/*
 * The page pieces behind len bytes from it, for attaching to an skb
 * rather than copying: returns how many of vec they fill, or -EOPNOTSUPP
 * if the bytes are kernel memory or need more than max pieces. it does
 * not move.
 */
int sroce_seg_pages(const struct sroce_seg_iter *it, u32 len,
		    struct bio_vec *vec, unsigned int max);
void sroce_segs_put(const struct sroce_seg *segs, unsigned int num);
/* Copies len bytes between segment lists that both hold at least len. */
void sroce_segs_copy(const struct sroce_seg *dst, unsigned int ndst,
		     const struct sroce_seg *src, unsigned int nsrc, u32 len);
/*
 * A received packet's payload as kernel segments: what follows the
 * headers in the skb's linear part, then its page fragments.
 */
struct sroce_rx_payload {
	unsigned int num;
	struct sroce_seg seg[MAX_SKB_FRAGS + 1];
};

/* A buffer the module owns as a segment (see enum sroce_seg_kind). */
static inline struct sroce_seg sroce_kseg(void *p, u32 len)
{
	return (struct sroce_seg){
		.addr = (uintptr_t)p, .len = len, .kind = SROCE_SEG_KERNEL,
	};
}

struct sroce_mr *sroce_sge_mr(struct sroce_qp *qp, u32 key, u64 addr,
			      u32 len, int access, bool remote);
bool sroce_sges_to_segs(struct sroce_qp *qp, const struct sroce_sge *sge,
			unsigned int num, int access, struct sroce_seg *segs);
int sroce_rkey_seg(struct sroce_qp *qp, u32 rkey, u64 va, u32 len,
		   int access, struct sroce_seg *seg);
bool sroce_remote_atomic(struct sroce_qp *qp, u32 rkey, u64 va, u8 wqe_opcode,
			 u64 swap_add, u64 compare, u64 *orig);

/* Send and receive queues ------------------------------------------------ */

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
	return &qp->swqe[index & (sroce_queue_slots(&qp->sq) - 1)];
}

void sroce_qp_error(struct sroce_qp *qp);
void sroce_qp_ring_error(struct sroce_qp *qp);
bool sroce_sq_producer(struct sroce_qp *qp, u32 *producer);
int sroce_rq_posted(struct sroce_qp *qp);
u8 sroce_fetch_send(struct sroce_qp *qp, u32 index);
void sroce_complete_send(struct sroce_qp *qp, u8 status);
u8 sroce_take_recv(struct sroce_qp *qp, struct sroce_seg *segs,
		   unsigned int *nseg, u32 *cap, u64 *wr_id);
void sroce_recv_done(struct sroce_qp *qp);

unsigned long sroce_timeout_jiffies(u8 timeout);
unsigned long sroce_rnr_jiffies(u8 rnr_timer);
void sroce_arm_timer(struct sroce_qp *qp, unsigned long at);
void sroce_stop_timer(struct sroce_qp *qp);

/* Tells a QP's worker that something arrived for it. */
void sroce_engine_notify(struct sroce_qp *to);

/* sroce_rc.c: RC over packets -------------------------------------------- */

struct sroce_pkt;
/* Sends headers from pkt, then len bytes of segs from byte off, then pad. */
int sroce_xmit_pkt(struct sroce_qp *qp, struct sroce_pkt *pkt,
		   const struct sroce_seg *segs, unsigned int nsegs, u32 off,
		   u32 len);

void sroce_rc_send_context(struct sroce_qp *qp, int *budget);
int sroce_rc_receive_context(struct sroce_qp *qp, int *budget);
void sroce_rc_respond(struct sroce_qp *qp, int *budget);
bool sroce_rc_has_work(struct sroce_qp *qp);
/* Drops the wire state: in the error state, at reset and at destroy. */
void sroce_rc_drop_state(struct sroce_qp *qp);

/* sroce_ud.c: UD and GSI datagrams ---------------------------------------- */

void sroce_ud_send_context(struct sroce_qp *qp, int *budget);
int sroce_ud_receive_context(struct sroce_qp *qp, int *budget);
void sroce_ud_drop_rx(struct sroce_qp *qp);
void sroce_ud_forget_dest(struct sroce_qp *qp);

#endif /* SROCE_ENGINE_H */
