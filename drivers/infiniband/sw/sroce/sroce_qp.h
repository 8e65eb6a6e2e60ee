/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The queue pair as the module keeps it: struct sroce_qp and its parts
 * (the send WQE shadows, the requester's and the responder's state, the
 * path, the kick), its inlines, and the QP table (sroce_qp_table.c). Part
 * of sroce.h, which includes it after the objects a QP embeds: include
 * sroce.h, not this file.
 *
 * Rules:
 * - a QP's transport state (req, resp, the shadows, what it took from its
 *   receive queues) is its worker's: touched only under the worker's lock
 *   (a pass, modify_qp) or once the QP is off its worker (destroy);
 * - modify_qp writes the attributes under attr_lock and the worker's lock,
 *   so a pass never sees a QP half way through a transition;
 * - the QP lives while refs holds: the last sroce_qp_put() completes
 *   released, which destroy_qp waits for.
 */
#ifndef SROCE_QP_H
#define SROCE_QP_H

#ifndef SROCE_H
#error "include sroce.h, not sroce_qp.h"
#endif

/* A kernel-private copy of a send WQE and its execution state. */
struct sroce_swqe {
	struct sroce_send_wqe *wqe;	/* copied once from the ring */
	u32 msg_len;
	u8 status;			/* enum ib_wc_status when fetched */
	/* Wire: the local memory, held from fetch to completion. */
	bool segs_held;
	bool rd_counted;		/* READ/atomic sent, in rd_outstanding */
	bool local_done;		/* REG_MR/LOCAL_INV executed */
	u8 num_segs;
	struct sroce_seg *segs;		/* qp->sq.lim.max_sge of them */
	u32 psn;			/* wire: first PSN */
	u32 npkts;			/* wire: PSNs it occupies */
};

/*
 * A READ or atomic the wire responder answers, in PSN order. The ring
 * keeps answered entries as the history duplicate atomics replay from.
 */
struct sroce_rd_resp {
	u8 opcode;			/* IB_OPCODE_RDMA_READ_REQUEST or an atomic */
	u32 psn;			/* the request's, the first response's */
	u32 npkts;
	u32 sent;			/* response packets sent */
	u32 len;
	u64 va;
	u32 rkey;			/* READ: as the request named it */
	struct sroce_seg mem;		/* READ: held until sent */
	u64 orig;			/* atomic: the value before */
};

/* Where a wire QP sends; set by modify_qp from the address vector. */
struct sroce_path {
	bool ipv6;
	struct in6_addr saddr;		/* IPv4: v4-mapped */
	struct in6_addr daddr;
	u8 tos;
	u8 hop_limit;
	u32 flow_label;
	__be16 sport;			/* UDP source port: flow entropy */
	u32 mtu;			/* payload bytes per packet */
	struct dst_cache dst;
	bool dst_ready;
	/*
	 * The peer made progress since the last packet sent (it acknowledged
	 * new PSNs, or sent the next request): proof that it is reachable,
	 * which the next packet gives the neighbour entry (as TCP's ACKs
	 * do), so a busy link's ARP or ND probes cannot time out under the
	 * traffic and drop it. Worker only.
	 */
	bool peer_progress;
};

/*
 * Where the last UD send went, so a stream of datagrams to one peer pays
 * the GID and route lookups once a second. sgid holds a reference to the
 * source GID entry of that send; it is valid only while expires is set.
 */
struct sroce_ud_dest {
	const struct ib_gid_attr *sgid;
	u8 dgid[16];
	u8 sgid_index;
	u8 traffic_class;
	u8 hop_limit;
	u32 flow_label;
	int local_ifindex;		/* a sroce device here owns dgid; or 0 */
	unsigned long expires;		/* jiffies; 0: nothing cached */
};

struct sroce_transport;

/*
 * The requester's state (sroce_rc_req.c, and the UD send context), owned
 * by the QP's worker. SQ indices, in ring order: sq_retire <= sq_next <=
 * sq_fetched <= producer; [sq_retire, sq_next) are in flight, [sq_next,
 * sq_fetched) were copied and are to be (re)sent. WQE i occupies PSNs
 * [psn, psn + npkts); una_psn is the oldest PSN not acknowledged; tx_pkt
 * counts the packets of WQE sq_next already sent.
 */
struct sroce_requester {
	u32 sq_retire;
	u32 sq_next;
	u32 sq_fetched;
	/*
	 * The send context stopped at a WQE that only a completion can let
	 * go (a failed WQE behind others in flight, the READ/atomic limit, a
	 * fence): the next WQE is no work until one retires or it goes back.
	 */
	bool sq_blocked;
	u32 req_psn;			/* PSN the next fetched WQE gets */
	u32 una_psn;
	u32 sent_psn;			/* one past the furthest PSN sent */
	u32 tx_pkt;
	u32 rd_outstanding;		/* READs/atomics sent, not done */
	u32 goback_psn;			/* last go-back, to send it once */
	bool goback_valid;
	u32 rnr_retries;
	u32 retries;
	bool rnr_wait;			/* resend_at is an RNR wait */
	unsigned long resend_at;	/* jiffies; 0 when nothing waits */
	unsigned long timeout_jiffies;	/* attr.timeout, set by modify_qp */
	struct timer_list timer;
};

/*
 * The responder's state (sroce_rc_resp.c, sroce_rc_answer.c), owned by
 * the QP's worker: the message being received, what to answer, and the
 * READ/atomic history.
 */
struct sroce_responder {
	u32 rx_expected_psn;
	enum sroce_rc_seq rx_seq;
	u32 rx_off;
	u32 msn;
	bool nak_sent;			/* for rx_expected_psn; once */
	bool ack_pending;
	bool ctrl_pending;		/* a NAK/RNR NAK waits to be sent */
	u8 ctrl_syndrome;
	u32 ctrl_psn;
	bool rx_have_wqe;
	unsigned int rx_nseg;
	u32 rx_cap;
	u64 rx_wr_id;
	struct sroce_seg rx_segs[SROCE_MAX_SGE];
	struct sroce_seg rx_write;	/* a multi-packet WRITE's, whole */
	u32 rd_head;			/* next free entry of rd */
	u32 rd_tail;			/* next entry to answer */
	/*
	 * The READ/atomic ring: queued answers, then the history replays
	 * come from. rd_slots is a power of two, at least SROCE_RD_RING_MIN
	 * and the largest max_dest_rd_atomic given (rounded up); it only
	 * grows, under the worker's lock (sroce_modify_qp).
	 */
	struct sroce_rd_resp *rd;
	u32 rd_slots;
};

struct sroce_kick_work;

/* A user QP's kick: its eventfd and what a write to it runs (sroce_kick.c). */
struct sroce_kick {
	struct eventfd_ctx *ctx;	/* NULL without one */
	struct wait_queue_entry wait;
	struct sroce_kick_work *work;	/* with ctx */
	u32 rx_psn;	/* rx_expected_psn as the last kick began; a hint */
};

/* Who a QP belongs to, and what its user's calls may do. */
struct sroce_qp_owner {
	bool user;			/* created through uverbs */
	kuid_t uid;			/* a user QP's creator's euid */
	bool kick_foreign;		/* counted in num_foreign_qps */
	struct sroce_kick kick;
	/*
	 * The memory cgroup of a user QP's creator, charged with what its
	 * sends make the engine allocate (shortcut descriptors, copies);
	 * NULL for a kernel QP.
	 */
	struct mem_cgroup *memcg;
};

/* The engine's bookkeeping of a QP on its worker; the engine's alone. */
struct sroce_qp_sched {
	struct list_head worker_node;	/* on worker->qps */
	bool wire_counted;		/* in its worker's num_wire_qps */
	bool steered;			/* binds its worker on the shortcut */
	/*
	 * The QP the shortcut last handed a packet to, saving the lookup of
	 * dest_qp_num: set and read only under the worker's lock, and only
	 * while both QPs are on its list (a QP leaving a worker clears every
	 * pointer to it there, and its own).
	 */
	struct sroce_qp *handed_to;
};

/* The send queue's software side: one entry per SQ slot. */
struct sroce_swq {
	struct sroce_swqe *slots;
	void *mem;
	struct sroce_seg *segs;
};

/*
 * What arrives for a QP, by link, whatever its transport. The shortcut:
 * rx (descriptors), rx_batch (taken from rx, not yet handled). The wire:
 * rx_skbs (filled by the UDP socket), rx_pending (taken from rx_skbs, the
 * worker's).
 */
struct sroce_link_rx {
	struct llist_head rx;
	struct llist_node *rx_batch;
	struct sk_buff_head rx_skbs;
	struct sk_buff_head rx_pending;
	/* The wire: the payload of the packet being handled, in its skb. */
	struct sroce_seg rx_kseg[MAX_SKB_FRAGS + 1];
	/* Released shortcut descriptors, see sroce_lmsg_alloc(). */
	struct llist_head lmsg_cache;
	atomic_t lmsg_cached;
	/*
	 * Shortcut descriptors queued to the QP and the bytes they copied:
	 * at most SROCE_RX_QUEUE_MAX and SROCE_SHORTCUT_RX_BYTES_MAX.
	 */
	atomic_t shortcut_rx_len;
	atomic_t shortcut_rx_bytes;
	/*
	 * The shortcut: an answer a hand-over carried back (answer_parked),
	 * taken before anything queued to the QP; under the worker's lock.
	 */
	struct sroce_pkt answer;
	bool answer_parked;
};

struct sroce_qp {
	struct ib_qp ibqp;
	struct sroce_dev *sdev;
	struct sroce_worker *worker;
	const struct sroce_transport *transport;	/* set by the engine */
	struct sroce_qp_sched sched;
	refcount_t refs;		/* the engine's and in-flight packets' */
	struct completion released;
	struct sroce_qp_owner owner;

	struct sroce_queue sq;
	struct sroce_queue rq;
	bool sq_sig_all;
	/* Receives come from here if set (ibqp.srq), not from rq. */
	struct sroce_srq *srq;
	/* IB_EVENT_QP_LAST_WQE_REACHED was raised in this error state. */
	bool srq_last_wqe;
	struct sroce_swq swq;
	spinlock_t kpost_lock;		/* kernel posters */

	/* Attributes, written under attr_lock by modify_qp. */
	struct mutex attr_lock;
	enum ib_qp_state state;
	struct ib_qp_attr attr;
	int attr_mask;
	bool wire;			/* the peer is not on this host */
	struct sroce_path path;

	struct sroce_requester req;
	struct sroce_responder resp;
	struct sroce_link_rx lrx;
	/* UD: the last destination. */
	struct sroce_ud_dest ud_dest;
};

/* An ACK timeout attribute, 4.096 us * 2^timeout, in jiffies (at least 1). */
static inline unsigned long sroce_ack_timeout_jiffies(u8 timeout)
{
	return max_t(unsigned long,
		     nsecs_to_jiffies(4096ULL << min_t(u8, timeout, 31)), 1);
}

static inline struct sroce_qp *to_sqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct sroce_qp, ibqp);
}

/* Where a CQE qp completes holds its event: its worker's, in a pass. */
static inline struct sroce_cq_events *sroce_qp_held_events(struct sroce_qp *qp)
{
	struct sroce_worker *w = qp->worker;

	return w && READ_ONCE(w->runner) == current ? &w->cq_events : NULL;
}

static inline bool sroce_qp_is_uc(const struct sroce_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_UC;
}

static inline bool sroce_qp_is_ud(const struct sroce_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI;
}

/* sroce_qp_table.c */
int sroce_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp);
struct sroce_qp *sroce_qp_get(u32 qpn);
struct sroce_qp *sroce_qp_find_rcu(u32 qpn);
struct sroce_qp *sroce_gsi_qp_get(int ifindex);
struct sroce_qp *sroce_qp_get_on(u32 qpn, int ifindex);
struct ib_qp *sroce_cq_qp_of(struct sroce_cq *cq, u32 qpn);
int sroce_qp_table_reserve(struct sroce_qp *qp, enum ib_qp_type type, u32 *qpn);
void sroce_qp_table_publish(struct sroce_qp *qp);
void sroce_qp_table_erase(struct sroce_qp *qp);

/* Inline: every message holds its sender. destroy_qp waits for the last. */
static inline void sroce_qp_put(struct sroce_qp *qp)
{
	if (refcount_dec_and_test(&qp->refs))
		complete(&qp->released);
}

#endif /* SROCE_QP_H */
