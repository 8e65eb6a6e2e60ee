/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Links: how a QP's packets travel. An RC/UC QP uses one link, chosen as
 * it leaves INIT (qp->wire); a UD/GSI QP's datagrams take either, each by
 * where its destination is (sroce_link_xmit_datagram()):
 * - the wire (sroce_net.c, sroce_net_tx.c): RoCEv2 packets in UDP;
 * - the shortcut (sroce_shortcut.c): a QP on this host gets the same
 *   packet descriptors (parsed headers plus payload segments) without an
 *   skb or an ICRC, one packet per message (its MTU is the largest
 *   message), an RC payload referring to the sender's memory (UC and
 *   datagram payloads are copied).
 * The transport above sees the same descriptors from both: it pulls them
 * with sroce_link_rx_next() and sends with sroce_link_xmit() (RC/UC) or
 * sroce_link_xmit_datagram() (UD/GSI). A link checks that an RC/UC
 * packet comes from the QP's peer before it hands it up; a datagram
 * comes with the GRH its receiver sees.
 * The shortcut may also hand a packet straight to the destination QP's
 * transport, through the handler the transport registered for its QP
 * types (sroce_shortcut_register(), from the engine's registration): the
 * one way a link reaches a transport, and never by name. The ACK such a
 * packet asked for may come back the same way, parked for the sender
 * (see sroce_shortcut.c). The wire offers an RC QP's plain ACKs to the
 * engine from the softirq they arrived in, through the handler the engine
 * registered (sroce_wire_register()), and queues what it declines.
 */
#ifndef SROCE_LINK_H
#define SROCE_LINK_H

#include <sroce/roce_hdr.h>
#include "sroce_seg.h"
#include "sroce_trace.h"
#include "sroce_wake.h"

/*
 * Payload bytes per packet on the shortcut: a whole message for RC (its
 * payload is referred to, not copied); for UC, whose payload is copied
 * (it completes as it is sent), pieces that bound each copy.
 */
#define SROCE_SHORTCUT_MTU SROCE_MAX_MSG_SIZE
#define SROCE_SHORTCUT_UC_MTU (64U << 10)
/* Bytes the shortcut's descriptors queued to one QP may have copied. */
#define SROCE_SHORTCUT_RX_BYTES_MAX (16U << 20)

struct sroce_lmsg;

/* A received packet, as a link hands it to the transport. */
struct sroce_rx {
	/*
	 * The headers: the shortcut's point into its descriptor (or, handed
	 * over, to the sender's scratch; parked, to qp->lrx.answer), the wire's
	 * are parsed into "parsed". The transport may rewrite them. An rx is
	 * never copied (pkt may point into it).
	 */
	struct sroce_pkt *pkt;
	struct sroce_pkt parsed;
	const struct sroce_seg *seg;	/* the payload: pkt->payload_len bytes */
	unsigned int num_seg;
	/* Which link it came by, and what holds it until sroce_link_rx_done. */
	struct sk_buff *skb;
	struct sroce_lmsg *msg;
	/*
	 * A datagram (a UD/GSI QP's): the GRH its receiver sees, the IP
	 * header it came with (IPv4 behind 20 zero bytes), and whether
	 * that is IPv4. grh points into grh_buf (the wire) or into the
	 * descriptor (the shortcut).
	 */
	const u8 *grh;
	bool grh_ipv4;
	u8 grh_buf[IB_GRH_BYTES];
};

/* Where an IPv4 header sits in a GRH. */
#define SROCE_IPV4_IN_GRH 20

/* The wire (sroce_net.c, sroce_net_tx.c). */
/* Back-pressure: a device stops sending at this many bytes in the stack. */
#define SROCE_TX_BYTES_MAX (4U << 20)

/* TX pool heads: order-1 pages hold a 4096-byte MTU's packet. */
#define SROCE_TX_POOL_ORDER 1
#define SROCE_TX_POOL_SIZE 512
#define SROCE_TX_POOL_MIN 512

/*
 * Packets sroce_wire_rx_next() drops before it returns none: the rest wait
 * for the worker's next pass (which sees them queued).
 */
#define SROCE_RX_DROPS_PER_CALL 64

int sroce_wire_xmit(struct sroce_qp *qp, struct sroce_pkt *pkt,
		    const struct sroce_seg *segs, unsigned int nsegs, u32 off,
		    u32 len);
struct sock *sroce_net_sk6(void);
bool sroce_wire_rx_next(struct sroce_qp *qp, struct sroce_rx *rx);
void sroce_wire_drop_rx(struct sroce_qp *qp);

/* The shortcut (sroce_shortcut.c). */
/*
 * A transport's handler of one packet that the shortcut hands over instead
 * of queueing it: called in a pass of the QP's worker, which holds its
 * lock; rx and its payload are valid only during the call. With answer
 * set, the handler may write into it the answer the QP owes the sender,
 * if that is the only one it owes and a header-only packet (an ACK or an
 * atomic's ACK), and return true: the shortcut carries it back in place
 * of a send.
 */
typedef bool sroce_link_take_fn(struct sroce_qp *qp, struct sroce_rx *rx,
				struct sroce_pkt *answer);
void sroce_shortcut_register(enum ib_qp_type type, sroce_link_take_fn *take);
/*
 * The handler the wire offers an RC QP's plain ACK to from the softirq it
 * arrived in (the engine's, registered at module load): true if it took
 * the packet, which the wire then frees; false, and the wire queues it
 * for the QP's worker.
 */
typedef bool sroce_link_take_now_fn(struct sroce_qp *qp, struct sroce_rx *rx);
struct sroce_wire_up {
	sroce_link_take_now_fn *take_now;
};

void sroce_wire_register(const struct sroce_wire_up *up);
void sroce_shortcut_switches(struct dentry *dir);
int sroce_shortcut_xmit(struct sroce_qp *qp, struct sroce_pkt *pkt,
			const struct sroce_seg *segs, unsigned int nsegs,
			u32 off, u32 len);
int sroce_shortcut_xmit_datagram(struct sroce_qp *qp, struct sroce_pkt *pkt,
				 const struct sroce_seg *segs,
				 unsigned int nsegs, u32 len, int ifindex,
				 const u8 *grh, bool ipv4);
bool sroce_shortcut_rx_next(struct sroce_qp *qp, struct sroce_rx *rx);
void sroce_shortcut_rx_done(struct sroce_qp *qp, struct sroce_rx *rx);
void sroce_shortcut_drop_rx(struct sroce_qp *qp);
/* Frees the QP's cache of released descriptors; under the worker's lock. */
void sroce_shortcut_cache_free(struct sroce_qp *qp);

/*
 * Sends one packet: headers from pkt, then len payload bytes of segs from
 * byte off. 0, or an error with nothing sent: -EACCES if a key of segs no
 * longer grants the bytes (trying again cannot help), else the caller
 * tries again. pkt is the caller's scratch: the link and a transport it
 * hands the packet to may change it.
 */
static inline int sroce_link_xmit(struct sroce_qp *qp, struct sroce_pkt *pkt,
				  const struct sroce_seg *segs,
				  unsigned int nsegs, u32 off, u32 len)
{
	/*
	 * Before the send: a packet handed over is taken, and answered,
	 * inside it. A send the link refuses shows once per try.
	 */
	trace_sroce_pkt_tx(qp->ibqp.qp_num, pkt->dest_qpn, pkt->opcode,
			   pkt->psn, len, qp->wire);
	if (qp->wire)
		return sroce_wire_xmit(qp, pkt, segs, nsegs, off, len);
	return sroce_shortcut_xmit(qp, pkt, segs, nsegs, off, len);
}

/*
 * Sends one datagram of a UD/GSI QP (pkt->dest_qpn, its DETH filled):
 * len bytes of segs, on the wire by qp->path if ifindex is 0, else to that
 * QP of the sroce device with ifindex on this host, whose receiver sees
 * grh (ipv4: an IPv4 header in it) as the datagram's GRH. 0 once it left
 * or was lost, as a datagram may be; -EACCES if a key of segs no longer
 * grants the bytes.
 */
static inline int sroce_link_xmit_datagram(struct sroce_qp *qp,
					   struct sroce_pkt *pkt,
					   const struct sroce_seg *segs,
					   unsigned int nsegs, u32 len,
					   int ifindex, const u8 *grh,
					   bool ipv4)
{
	int err;

	trace_sroce_pkt_tx(qp->ibqp.qp_num, pkt->dest_qpn, pkt->opcode,
			   pkt->psn, len, !ifindex);
	if (ifindex)
		return sroce_shortcut_xmit_datagram(qp, pkt, segs, nsegs, len,
						    ifindex, grh, ipv4);
	err = sroce_wire_xmit(qp, pkt, segs, nsegs, 0, len);
	return err == -EACCES ? err : 0;
}

/* Whether the link can take no packet now (the wire's TX limit). */
static inline bool sroce_link_tx_full(struct sroce_qp *qp)
{
	return qp->wire && sroce_net_tx_full(qp->sdev);
}

/*
 * What each link has queued to the QP (read without a lock: a hint); the
 * shortcut's answer parked for it comes first.
 */
static inline bool sroce_shortcut_queued(struct sroce_qp *qp)
{
	return qp->lrx.answer_parked || qp->lrx.rx_batch || !llist_empty(&qp->lrx.rx);
}

/*
 * The answer a hand-over carried back to the QP (sroce_shortcut.c), if
 * one waits: taken as a received packet, in place.
 */
static inline bool sroce_link_take_answer(struct sroce_qp *qp,
					  struct sroce_rx *rx)
{
	if (!qp->lrx.answer_parked)
		return false;
	qp->lrx.answer_parked = false;
	rx->pkt = &qp->lrx.answer;
	rx->seg = NULL;
	rx->num_seg = 0;
	rx->skb = NULL;
	rx->msg = NULL;
	return true;
}

static inline bool sroce_wire_queued(struct sroce_qp *qp)
{
	return !skb_queue_empty_lockless(&qp->lrx.rx_skbs) ||
	       !skb_queue_empty(&qp->lrx.rx_pending);
}

/*
 * The next packet for the QP from its links: an RC/UC QP's checked to come
 * from its peer (what arrived by the other link, queued before a reset
 * changed the link, is dropped and counted), a UD/GSI QP's from either
 * link, with its GRH.
 */
static inline bool sroce_link_rx_next(struct sroce_qp *qp, struct sroce_rx *rx)
{
	return (sroce_shortcut_queued(qp) && sroce_shortcut_rx_next(qp, rx)) ||
	       (sroce_wire_queued(qp) && sroce_wire_rx_next(qp, rx));
}

static inline void sroce_link_rx_done(struct sroce_qp *qp, struct sroce_rx *rx)
{
	if (rx->skb)
		consume_skb(rx->skb);
	else if (rx->msg)
		sroce_shortcut_rx_done(qp, rx);
}

static inline bool sroce_link_rx_pending(struct sroce_qp *qp)
{
	return sroce_shortcut_queued(qp) || sroce_wire_queued(qp);
}

/* Drops every packet queued to the QP, on both links. */
static inline void sroce_link_drop_rx(struct sroce_qp *qp)
{
	sroce_shortcut_drop_rx(qp);
	sroce_wire_drop_rx(qp);
}

#endif /* SROCE_LINK_H */
