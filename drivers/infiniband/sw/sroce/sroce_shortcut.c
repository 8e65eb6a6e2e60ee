// SPDX-License-Identifier: GPL-2.0
/*
 * The shortcut: the link between two RC or UC QPs of this host, and the
 * way of a datagram between UD/GSI QPs of this host.
 *
 * A packet travels as a descriptor (struct sroce_lmsg) queued to the
 * destination QP's rx list: the parsed headers the wire would carry and
 * the payload as segments. Rules:
 * - one packet per message: the link's MTU is the largest message
 *   (SROCE_SHORTCUT_MTU), so a byte is copied once, by the receiver;
 * - payload in an MR is referred to, not copied: the descriptor holds
 *   its own references on the MRs, so neither side's teardown can pull
 *   memory from under the other. Bytes in kernel memory (inline data)
 *   are copied into the descriptor. A UC packet is copied: UC completes
 *   as it is sent, and the sender may reuse its buffer then; its MTU
 *   (SROCE_SHORTCUT_UC_MTU) bounds each copy. A datagram is copied too
 *   (it completes as it is sent; the port MTU bounds it), with the GRH
 *   its receiver sees behind the payload, and holds nothing of its
 *   sender: no reference, no cached descriptor;
 * - an RC/UC descriptor is queued only to a QP that names the sender as
 *   its peer (checked again when it is taken), a datagram only to a
 *   UD/GSI QP (which checks its Q_Key as from the wire); a QP holds at most
 *   SROCE_RX_QUEUE_MAX of them with SROCE_SHORTCUT_RX_BYTES_MAX bytes
 *   copied; beyond that a packet is lost and counted
 *   (rx_drop_queue_full), as a NIC out of buffers loses it. Descriptors
 *   are charged to the sending user QP's memory cgroup;
 * - nothing is lost or reordered between two QPs that stay up; a packet
 *   to a QP that is not there is lost, as on a wire, and the requester's
 *   timer recovers;
 * - a QPN proves nothing by itself (a local user may own the QPN a
 *   remote peer has), so an RC/UC receiver takes a descriptor only from
 *   the QP its path names: the same transport, the QPN and the GIDs the
 *   descriptor travelled between.
 *
 * Handing over: a packet for a QP that the running pass could run next
 * goes straight to its transport (the handler registered for its QP type),
 * with no descriptor, when nothing could tell it from a queued one:
 * - the sender runs in a pass of the destination's worker (runner is
 *   current: the pass holds the lock, so the destination can neither move
 *   nor leave the worker's list meanwhile), and it is on that list;
 * - the destination is not the running QP (the sender) and no hand-over
 *   is under way: what a transport sends while it takes a packet is
 *   queued, so a QP never takes a packet inside its own run or inside
 *   another hand-over;
 * - nothing is queued to the destination (the order stays);
 * - the packet starts at byte 0 of the segments (the whole message).
 * The transport copies the payload before the handler returns, so the
 * sender's memory needs no references and its kernel buffers no copy; the
 * same peer checks apply. Unless the hand-over carried the answer back
 * (below), the pass then runs the destination next (the chase), for
 * the answers the packet asked for. A sender keeps
 * the QP it handed a packet to (struct sroce_qp handed_to) for the next
 * packet to the same QPN, and checks these rules again each time.
 *
 * Answering back: when the one answer the destination then owes is an ACK
 * or an atomic's answer (an atomic's ACK, an ATOMIC WRITE's empty READ
 * response; sroce_link_take_fn), the hand-over carries it back
 * at once, parked for the sender (qp->lrx.answer), instead of the
 * destination's run sending it:
 * - only while nothing else is queued to the sender, so the order stays;
 *   the parked answer is the first packet the sender takes, and nothing
 *   is handed to the sender while it is parked;
 * - one at a time: while one is parked, the destination answers later
 *   requests from its own run (one ACK for all its SENDs and WRITEs,
 *   each atomic its own);
 * - the sender's transport takes it as a received packet, in place
 *   (rx->pkt is qp->lrx.answer: only the QP's own sends park an answer for
 *   it, and it sends nothing while it takes a packet); the RC send step
 *   does so after a READ or atomic, before its next WQE, and before its
 *   run ends, and a pass finds one parked while the sender answered (it
 *   is queued, see sroce_shortcut_queued()); a reset or destroy drops it.
 * The answer comes from the sender's peer: the hand-over checked the pair.
 */
#include <linux/debugfs.h>
#include <linux/slab.h>
#include <net/ipv6.h>
#include "sroce_link.h"

static bool shortcut_hand_over = true;

static sroce_link_take_fn *sroce_shortcut_takers[IB_QPT_MAX];

/*
 * The hand-over is the behaviour; the switch (debugfs
 * sroce/shortcut_hand_over, root only) lets the tests run the descriptor
 * path alone (0).
 */
void sroce_shortcut_switches(struct dentry *dir)
{
	debugfs_create_bool("shortcut_hand_over", 0600, dir,
			    &shortcut_hand_over);
}

/* At module load, before any device exists. */
void sroce_shortcut_register(enum ib_qp_type type, sroce_link_take_fn *take)
{
	sroce_shortcut_takers[type] = take;
}

/*
 * A packet descriptor. A datagram's (to a UD/GSI QP) has its payload
 * copied, and the GRH its receiver sees after that copy.
 */
struct sroce_lmsg {
	struct llist_node node;
	struct sroce_qp *sender;	/* holds a reference */
	/* The sender's path when it sent: the GIDs it sent from and to. */
	struct in6_addr sgid;
	struct in6_addr dgid;
	bool grh_ipv4;			/* a datagram's GRH holds IPv4 */
	struct sroce_pkt pkt;
	bool spare_sized;		/* SROCE_LMSG_SPARE_SIZE bytes: reusable */
	u32 copied;			/* bytes of the payload copied in */
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
	struct mem_cgroup *old_memcg;
	struct llist_node *node;
	struct sroce_lmsg *msg;
	bool spare = size <= SROCE_LMSG_SPARE_SIZE;

	if (spare) {
		node = llist_del_first(&qp->lrx.lmsg_cache);
		if (node) {
			atomic_dec(&qp->lrx.lmsg_cached);
			msg = llist_entry(node, struct sroce_lmsg, node);
			msg->spare_sized = true;
			return msg;
		}
		size = SROCE_LMSG_SPARE_SIZE;
	}
	old_memcg = set_active_memcg(qp->owner.memcg);
	msg = kvmalloc(size, GFP_KERNEL_ACCOUNT);
	set_active_memcg(old_memcg);
	if (msg)
		msg->spare_sized = spare;
	return msg;
}

static void sroce_lmsg_release(struct sroce_qp *qp, struct sroce_lmsg *msg)
{
	if (msg->spare_sized) {
		if (atomic_inc_return(&qp->lrx.lmsg_cached) <= SROCE_LMSG_CACHE) {
			llist_add(&msg->node, &qp->lrx.lmsg_cache);
			return;
		}
		atomic_dec(&qp->lrx.lmsg_cached);
	}
	kvfree(msg);
}

void sroce_shortcut_cache_free(struct sroce_qp *qp)
{
	struct llist_node *list = llist_del_all(&qp->lrx.lmsg_cache);
	struct sroce_lmsg *msg, *next;

	llist_for_each_entry_safe(msg, next, list, node) {
		atomic_dec(&qp->lrx.lmsg_cached);
		kvfree(msg);
	}
}

/* Frees a descriptor that was queued to qp. */
static void sroce_lmsg_free(struct sroce_qp *qp, struct sroce_lmsg *msg)
{
	struct sroce_qp *sender = msg->sender;

	atomic_dec(&qp->lrx.shortcut_rx_len);
	atomic_sub(msg->copied, &qp->lrx.shortcut_rx_bytes);
	sroce_segs_put(msg->segs, msg->num_segs);
	msg->num_segs = 0;
	if (!sender) {
		kvfree(msg);	/* a datagram's (see the rules above) */
		return;
	}
	sroce_lmsg_release(sender, msg);
	sroce_qp_put(sender);
}

/*
 * Walks the pieces of len bytes of segs from byte off. Without msg it only
 * counts them (the return value) and the bytes that must be copied (kernel
 * memory, or everything when copy_all) into *copy. With msg it fills msg's
 * payload: a reference to each MR piece, the copied ones in data; -EACCES
 * if a key no longer grants what a piece to copy holds.
 */
static __always_inline int
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
				if (sroce_segs_copy(out, 1, &piece, 1,
						    piece.len))
					return -EACCES;
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

/*
 * Whether a packet that sender sent between the GIDs sgid and dgid comes
 * from qp's peer (see the rules above); counts the drop if not.
 */
static __always_inline bool
sroce_shortcut_from_peer(struct sroce_qp *qp, const struct sroce_qp *sender,
			 const struct in6_addr *sgid,
			 const struct in6_addr *dgid)
{
	if (qp->ibqp.qp_type != sender->ibqp.qp_type ||
	    sender->ibqp.qp_num != qp->attr.dest_qp_num ||
	    !ipv6_addr_equal(sgid, &qp->path.daddr) ||
	    !ipv6_addr_equal(dgid, &qp->path.saddr)) {
		sroce_stat_add(qp->sdev, SROCE_STAT_SHORTCUT_DROP_PEER, 1);
		return false;
	}
	return true;
}

/*
 * Room in dest's queue for a descriptor from qp that copies copy bytes,
 * taken; false (counted) if dest is full, or if it is an RC/UC QP that
 * does not name qp as its peer. dest's path is read without its lock: a
 * filter, which the receiver's own check when it takes the descriptor
 * makes exact.
 */
static bool sroce_shortcut_reserve(struct sroce_qp *qp, struct sroce_qp *dest,
				   u32 copy)
{
	if (!sroce_qp_is_ud(dest) &&
	    !sroce_shortcut_from_peer(dest, qp, &qp->path.saddr,
				      &qp->path.daddr))
		return false;
	if (atomic_inc_return(&dest->lrx.shortcut_rx_len) > SROCE_RX_QUEUE_MAX)
		goto full;
	if (atomic_add_return(copy, &dest->lrx.shortcut_rx_bytes) >
	    SROCE_SHORTCUT_RX_BYTES_MAX) {
		atomic_sub(copy, &dest->lrx.shortcut_rx_bytes);
		goto full;
	}
	return true;
full:
	atomic_dec(&dest->lrx.shortcut_rx_len);
	sroce_stat_add(dest->sdev, SROCE_STAT_RX_DROP_QUEUE, 1);
	return false;
}

static void sroce_shortcut_unreserve(struct sroce_qp *dest, u32 copy)
{
	atomic_dec(&dest->lrx.shortcut_rx_len);
	atomic_sub(copy, &dest->lrx.shortcut_rx_bytes);
}

/*
 * Whether the rules above let dest be handed a packet that starts at byte
 * off of its segments. dest is qp->sched.handed_to, or was found in an RCU
 * read-side section and may be going.
 */
static __always_inline bool
sroce_shortcut_may_hand_over(struct sroce_qp *qp, struct sroce_qp *dest,
			     u32 off)
{
	struct sroce_worker *w = READ_ONCE(dest->worker);

	return sroce_shortcut_takers[dest->ibqp.qp_type] && !off &&
	       READ_ONCE(w->runner) == current && !w->handing_over &&
	       dest != qp && !list_empty(&dest->sched.worker_node) &&
	       !sroce_shortcut_queued(dest) && READ_ONCE(shortcut_hand_over);
}

/* Hands the packet to dest, which sroce_shortcut_may_hand_over() allowed. */
static void sroce_shortcut_hand_over(struct sroce_qp *qp,
				     struct sroce_qp *dest,
				     struct sroce_pkt *pkt,
				     const struct sroce_seg *segs,
				     unsigned int nsegs, u32 len)
{
	struct sroce_worker *w = dest->worker;
	/* Not zeroed: every member that is read is set below. */
	struct sroce_rx rx __uninitialized;
	struct sroce_pkt *answer;
	bool answered;

	if (READ_ONCE(dest->wire)) {
		sroce_stat_add(qp->sdev, SROCE_STAT_RX_DROP_PROTOCOL, 1);
		return;
	}
	if (!sroce_shortcut_from_peer(dest, qp, &qp->path.saddr,
				      &qp->path.daddr))
		return;
	pkt->payload_len = len;
	rx.pkt = pkt;
	rx.seg = segs;
	rx.num_seg = nsegs;
	rx.skb = NULL;
	rx.msg = NULL;
	/* Behind a queued descriptor, the answer would overtake it. */
	answer = sroce_shortcut_queued(qp) ? NULL : &qp->lrx.answer;
	w->handing_over = true;
	answered = sroce_shortcut_takers[dest->ibqp.qp_type](dest, &rx, answer);
	w->handing_over = false;
	sroce_stat_add(qp->sdev, SROCE_STAT_SHORTCUT_HAND_OVERS, 1);
	if (!answered) {
		sroce_worker_notify(dest);
		return;
	}
	/* Taken by the sender's run, which is under way. */
	trace_sroce_pkt_tx(dest->ibqp.qp_num, answer->dest_qpn, answer->opcode,
			   answer->psn, 0, false);
	qp->lrx.answer_parked = true;
	sroce_stat_add(qp->sdev, SROCE_STAT_SHORTCUT_ANSWERS_BACK, 1);
}

/*
 * Fills msg (allocated for that many pieces, copy bytes of them copied,
 * and reserved in dest's queue) with pkt and len bytes of segs from byte
 * off, and
 * queues it to dest: a datagram with grh after its payload (ipv4: an IPv4
 * header in it), else grh is NULL. -EACCES (nothing queued, msg and the
 * reservation given back) if a key no longer grants a piece to copy.
 */
static int sroce_shortcut_queue(struct sroce_qp *qp, struct sroce_qp *dest,
				struct sroce_lmsg *msg, struct sroce_pkt *pkt,
				const struct sroce_seg *segs,
				unsigned int nsegs, u32 off, u32 len,
				bool copy_all, int pieces, u32 copy,
				const u8 *grh, bool ipv4)
{
	u8 *data = (u8 *)&msg->segs[pieces];

	/* Every member is written here: a descriptor is not zeroed. */
	msg->num_segs = 0;
	msg->copied = copy;
	if (sroce_shortcut_pieces(segs, nsegs, off, len, copy_all, &copy, msg,
				  data) < 0) {
		/* Not sent: a descriptor with no sender to put. */
		sroce_shortcut_unreserve(dest, msg->copied);
		sroce_segs_put(msg->segs, msg->num_segs);
		sroce_lmsg_release(qp, msg);
		return -EACCES;
	}
	msg->pkt = *pkt;
	msg->pkt.payload_len = len;
	if (grh) {
		memcpy(data + msg->copied, grh, IB_GRH_BYTES);
		msg->grh_ipv4 = ipv4;
		msg->sender = NULL;
	} else {
		refcount_inc(&qp->refs);
		msg->sender = qp;
		msg->sgid = qp->path.saddr;
		msg->dgid = qp->path.daddr;
	}
	llist_add(&msg->node, &dest->lrx.rx);
	sroce_worker_notify(dest);
	return 0;
}

int sroce_shortcut_xmit(struct sroce_qp *qp, struct sroce_pkt *pkt,
			const struct sroce_seg *segs, unsigned int nsegs,
			u32 off, u32 len)
{
	bool copy_all = sroce_qp_is_uc(qp);
	struct sroce_lmsg *msg;
	bool hand_over, in_pass;
	struct sroce_qp *dest;
	int pieces, err;
	size_t size;
	u32 copy;

	/*
	 * The QP handed the last packet, while it and its worker qualify:
	 * in a pass of qp's worker (which holds its lock), handed_to is on
	 * its list, so it is alive (struct sroce_qp).
	 */
	in_pass = READ_ONCE(qp->worker->runner) == current;
	if (in_pass) {
		dest = qp->sched.handed_to;
		if (dest && dest->ibqp.qp_num == qp->attr.dest_qp_num &&
		    sroce_shortcut_may_hand_over(qp, dest, off)) {
			sroce_shortcut_hand_over(qp, dest, pkt, segs, nsegs, len);
			return 0;
		}
	}
	rcu_read_lock();
	dest = sroce_qp_find_rcu(qp->attr.dest_qp_num);
	if (dest && dest->ibqp.qp_type != qp->ibqp.qp_type)
		dest = NULL;	/* another transport has no such QP */
	/*
	 * A QP that may be handed the packet needs no reference: it is on
	 * the list of the worker whose lock this pass holds, and destroy
	 * takes it off under that lock before it frees it.
	 */
	hand_over = dest && sroce_shortcut_may_hand_over(qp, dest, off);
	if (dest && !hand_over && !refcount_inc_not_zero(&dest->refs))
		dest = NULL;
	rcu_read_unlock();
	if (!dest)
		return 0;	/* nobody there: lost, as on a wire */
	if (hand_over) {
		/* Both on the list of the worker whose lock is held. */
		if (in_pass)
			qp->sched.handed_to = dest;
		sroce_shortcut_hand_over(qp, dest, pkt, segs, nsegs, len);
		return 0;
	}
	pieces = sroce_shortcut_pieces(segs, nsegs, off, len, copy_all, &copy,
				       NULL, NULL);
	if (!sroce_shortcut_reserve(qp, dest, copy)) {
		sroce_qp_put(dest);
		return 0;	/* lost, as on a wire */
	}
	size = struct_size(msg, segs, pieces) + copy;
	msg = sroce_lmsg_alloc(qp, size);
	if (!msg) {
		sroce_shortcut_unreserve(dest, copy);
		sroce_qp_put(dest);
		return -ENOMEM;
	}
	err = sroce_shortcut_queue(qp, dest, msg, pkt, segs, nsegs, off, len,
				   copy_all, pieces, copy, NULL, false);
	sroce_qp_put(dest);
	return err;
}

int sroce_shortcut_xmit_datagram(struct sroce_qp *qp, struct sroce_pkt *pkt,
				 const struct sroce_seg *segs,
				 unsigned int nsegs, u32 len, int ifindex,
				 const u8 *grh, bool ipv4)
{
	struct mem_cgroup *old_memcg;
	struct sroce_lmsg *msg;
	struct sroce_qp *dest;
	int pieces, err = 0;
	u32 copy;

	dest = sroce_qp_get_on(pkt->dest_qpn, ifindex);
	if (dest && !sroce_qp_is_ud(dest)) {
		sroce_qp_put(dest);
		dest = NULL;	/* only a UD/GSI QP takes datagrams */
	}
	if (!dest) {
		sroce_stat_add(qp->sdev, SROCE_STAT_UD_NO_DEST, 1);
		return 0;
	}
	/* The payload is copied: the send completes as it leaves. */
	pieces = sroce_shortcut_pieces(segs, nsegs, 0, len, true, &copy, NULL,
				       NULL);
	if (!sroce_shortcut_reserve(qp, dest, copy))
		goto out;	/* lost: a receiver that does not keep up */
	old_memcg = set_active_memcg(qp->owner.memcg);
	msg = kvmalloc(struct_size(msg, segs, pieces) + copy + IB_GRH_BYTES,
		       GFP_KERNEL_ACCOUNT);
	set_active_memcg(old_memcg);
	if (!msg) {
		sroce_shortcut_unreserve(dest, copy);
		goto out;	/* lost, as by a NIC out of buffers */
	}
	msg->spare_sized = false;
	err = sroce_shortcut_queue(qp, dest, msg, pkt, segs, nsegs, 0, len,
				   true, pieces, copy, grh, ipv4);
out:
	sroce_qp_put(dest);
	return err;
}

/* The next descriptor queued to qp, in the order they were sent. */
static struct sroce_lmsg *sroce_shortcut_pop(struct sroce_qp *qp)
{
	struct llist_node *node = sroce_llist_pop(&qp->lrx.rx, &qp->lrx.rx_batch);

	return node ? llist_entry(node, struct sroce_lmsg, node) : NULL;
}

bool sroce_shortcut_rx_next(struct sroce_qp *qp, struct sroce_rx *rx)
{
	struct sroce_lmsg *msg;

	/* Parked only on the shortcut: a reset to the wire drops it. */
	if (sroce_link_take_answer(qp, rx))
		return true;
	while ((msg = sroce_shortcut_pop(qp))) {
		if (sroce_qp_is_ud(qp)) {
			/* Behind the payload copied in (see above). */
			rx->grh = (u8 *)&msg->segs[msg->num_segs] +
				  msg->copied;
			rx->grh_ipv4 = msg->grh_ipv4;
		} else if (READ_ONCE(qp->wire)) {
			/* Queued before a reset put the QP on the wire. */
			sroce_stat_add(qp->sdev, SROCE_STAT_RX_DROP_PROTOCOL, 1);
			sroce_lmsg_free(qp, msg);
			continue;
		} else if (!sroce_shortcut_from_peer(qp, msg->sender,
						     &msg->sgid, &msg->dgid)) {
			sroce_lmsg_free(qp, msg);
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
	sroce_lmsg_free(qp, rx->msg);
	rx->msg = NULL;
}

void sroce_shortcut_drop_rx(struct sroce_qp *qp)
{
	struct sroce_lmsg *msg;

	qp->lrx.answer_parked = false;
	while ((msg = sroce_shortcut_pop(qp)))
		sroce_lmsg_free(qp, msg);
}
