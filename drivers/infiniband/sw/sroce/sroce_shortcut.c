// SPDX-License-Identifier: GPL-2.0
/*
 * The shortcut: the link between two RC or UC QPs of this host.
 *
 * A packet travels as a descriptor (struct sroce_lmsg) queued to the
 * destination QP's rx list: the parsed headers the wire would carry and
 * the payload as segments. Rules:
 * - one packet per message: the link's MTU is the largest message
 *   (SROCE_SHORTCUT_MTU), so a byte is copied once, by the receiver;
 * - payload in an MR is referred to, not copied: the descriptor holds
 *   its own references on the MRs, so neither side's teardown can pull
 *   memory from under the other. Bytes in kernel memory (inline data)
 *   are copied into the descriptor. A UC message is copied whole: UC
 *   completes as it is sent, and the sender may reuse its buffer then;
 * - nothing is lost or reordered between two QPs that stay up; a packet
 *   to a QP that is not there is lost, as on a wire, and the requester's
 *   timer recovers;
 * - a QPN proves nothing by itself (a local user may own the QPN a
 *   remote peer has), so the receiver takes a descriptor only from the
 *   QP its path names: the same transport, the QPN and the GIDs the
 *   descriptor travelled between.
 */
#include <linux/slab.h>
#include <net/ipv6.h>
#include "sroce_link.h"

struct sroce_lmsg {
	struct llist_node node;
	struct sroce_qp *sender;	/* holds a reference */
	/* The sender's path when it sent: the GIDs it sent from and to. */
	struct in6_addr sgid;
	struct in6_addr dgid;
	struct sroce_pkt pkt;
	bool spare_sized;		/* SROCE_LMSG_SPARE_SIZE bytes: reusable */
	unsigned int num_segs;
	struct sroce_seg segs[];	/* the payload; then bytes it copied */
};

/*
 * Each sender keeps up to SROCE_LMSG_CACHE released descriptors of
 * SROCE_LMSG_SPARE_SIZE bytes, so neither a stream of small messages nor
 * a ping-pong allocates. Only the sender's worker takes from the cache
 * (llist_del_first() wants one consumer; the worker's lock serializes it
 * with sroce_shortcut_cache_free()); any context gives back. lmsg_cached
 * counts a descriptor before it is added and after it is taken, so it
 * never falls below the length of the list. A descriptor goes back before
 * its sender reference, so destroy_qp, which waits for every reference,
 * frees the whole cache.
 */
#define SROCE_LMSG_SPARE_SIZE 512
#define SROCE_LMSG_CACHE 32

static struct sroce_lmsg *sroce_lmsg_alloc(struct sroce_qp *qp, size_t size)
{
	struct llist_node *node;
	struct sroce_lmsg *msg;

	if (size > SROCE_LMSG_SPARE_SIZE) {
		msg = kvmalloc(size, GFP_KERNEL);
		if (msg)
			msg->spare_sized = false;
		return msg;
	}
	node = llist_del_first(&qp->lmsg_cache);
	if (node) {
		atomic_dec(&qp->lmsg_cached);
		msg = llist_entry(node, struct sroce_lmsg, node);
	} else {
		msg = kmalloc(SROCE_LMSG_SPARE_SIZE, GFP_KERNEL);
	}
	if (msg)
		msg->spare_sized = true;
	return msg;
}

static void sroce_lmsg_release(struct sroce_qp *qp, struct sroce_lmsg *msg)
{
	if (msg->spare_sized) {
		if (atomic_inc_return(&qp->lmsg_cached) <= SROCE_LMSG_CACHE) {
			llist_add(&msg->node, &qp->lmsg_cache);
			return;
		}
		atomic_dec(&qp->lmsg_cached);
	}
	kvfree(msg);
}

void sroce_shortcut_cache_free(struct sroce_qp *qp)
{
	struct llist_node *list = llist_del_all(&qp->lmsg_cache);
	struct sroce_lmsg *msg, *next;

	llist_for_each_entry_safe(msg, next, list, node) {
		atomic_dec(&qp->lmsg_cached);
		kfree(msg);
	}
}

static void sroce_lmsg_free(struct sroce_lmsg *msg)
{
	struct sroce_qp *sender = msg->sender;

	sroce_segs_put(msg->segs, msg->num_segs);
	msg->num_segs = 0;
	sroce_lmsg_release(sender, msg);
	sroce_qp_put(sender);
}

/*
 * Walks the pieces of len bytes of segs from byte off. Without msg it only
 * counts them (the return value) and the bytes that must be copied (kernel
 * memory, or everything when copy_all) into *copy. With msg it fills msg's
 * payload: a reference to each MR piece, the copied ones in data.
 */
static __always_inline unsigned int
sroce_shortcut_pieces(const struct sroce_seg *segs, unsigned int nsegs,
		      u32 off, u32 len, bool copy_all, u32 *copy,
		      struct sroce_lmsg *msg, void *data)
{
	struct sroce_seg piece, *out;
	unsigned int i, pieces = 0;
	bool copied;

	*copy = 0;
	for (i = 0; i < nsegs && len; i++) {
		if (off >= segs[i].len) {
			off -= segs[i].len;
			continue;
		}
		piece = segs[i];
		piece.addr += off;
		piece.len = min(segs[i].len - off, len);
		copied = copy_all || piece.kind != SROCE_SEG_MR;
		if (msg) {
			out = &msg->segs[msg->num_segs++];
			if (copied) {
				*out = sroce_kseg(data + *copy, piece.len);
				sroce_segs_copy(out, 1, &piece, 1, piece.len);
			} else {
				sroce_seg_hold(&piece);
				*out = piece;
			}
		}
		if (copied)
			*copy += piece.len;
		pieces++;
		len -= piece.len;
		off = 0;
	}
	return pieces;
}

int sroce_shortcut_xmit(struct sroce_qp *qp, struct sroce_pkt *pkt,
			const struct sroce_seg *segs, unsigned int nsegs,
			u32 off, u32 len)
{
	bool copy_all = sroce_qp_is_uc(qp);
	struct sroce_lmsg *msg;
	struct sroce_qp *dest;
	unsigned int pieces;
	size_t size;
	u32 copy;

	pieces = sroce_shortcut_pieces(segs, nsegs, off, len, copy_all, &copy,
				       NULL, NULL);
	size = struct_size(msg, segs, pieces) + copy;
	dest = sroce_qp_get(qp->attr.dest_qp_num);
	if (dest && dest->ibqp.qp_type != qp->ibqp.qp_type) {
		/* Another transport has no such QP. */
		sroce_qp_put(dest);
		dest = NULL;
	}
	if (!dest)
		return 0;	/* nobody there: lost, as on a wire */
	msg = sroce_lmsg_alloc(qp, size);
	if (!msg) {
		sroce_qp_put(dest);
		return -ENOMEM;
	}
	/* Every member is written here: a descriptor is not zeroed. */
	msg->num_segs = 0;
	sroce_shortcut_pieces(segs, nsegs, off, len, copy_all, &copy, msg,
			      &msg->segs[pieces]);
	msg->pkt = *pkt;
	msg->pkt.payload_len = len;
	refcount_inc(&qp->refs);
	msg->sender = qp;
	msg->sgid = qp->path.saddr;
	msg->dgid = qp->path.daddr;
	llist_add(&msg->node, &dest->rx);
	sroce_worker_notify(dest);
	sroce_qp_put(dest);
	return 0;
}

/* Whether a descriptor comes from the QP's peer (see the rules above). */
static bool sroce_shortcut_from_peer(struct sroce_qp *qp,
				     const struct sroce_lmsg *msg)
{
	if (qp->ibqp.qp_type != msg->sender->ibqp.qp_type ||
	    msg->sender->ibqp.qp_num != qp->attr.dest_qp_num ||
	    !ipv6_addr_equal(&msg->sgid, &qp->path.daddr) ||
	    !ipv6_addr_equal(&msg->dgid, &qp->path.saddr)) {
		sroce_stat_add(SROCE_STAT_SHORTCUT_DROP_PEER, 1);
		return false;
	}
	return true;
}

/* The next descriptor queued to qp, in the order they were sent. */
static struct sroce_lmsg *sroce_shortcut_pop(struct sroce_qp *qp)
{
	struct llist_node *node = sroce_llist_pop(&qp->rx, &qp->rx_batch);

	return node ? llist_entry(node, struct sroce_lmsg, node) : NULL;
}

bool sroce_shortcut_rx_next(struct sroce_qp *qp, struct sroce_rx *rx)
{
	struct sroce_lmsg *msg;

	while ((msg = sroce_shortcut_pop(qp))) {
		if (READ_ONCE(qp->wire)) {
			/* Queued before a reset put the QP on the wire. */
			sroce_stat_add(SROCE_STAT_RX_DROP_PROTOCOL, 1);
			sroce_lmsg_free(msg);
			continue;
		}
		if (!sroce_shortcut_from_peer(qp, msg)) {
			sroce_lmsg_free(msg);
			continue;
		}
		rx->pkt = &msg->pkt;
		rx->seg = msg->segs;
		rx->num_seg = msg->num_segs;
		rx->msg = msg;
		rx->skb = NULL;
		return true;
	}
	return false;
}

void sroce_shortcut_rx_done(struct sroce_qp *qp, struct sroce_rx *rx)
{
	sroce_lmsg_free(rx->msg);
	rx->msg = NULL;
}

void sroce_shortcut_drop_rx(struct sroce_qp *qp)
{
	struct sroce_lmsg *msg;

	while ((msg = sroce_shortcut_pop(qp)))
		sroce_lmsg_free(msg);
}
