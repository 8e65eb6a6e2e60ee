/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sroce: a software RoCEv2 HCA. The objects (device, CQ, MR, worker, QP,
 * SRQ, AH, PD) and the functions of the objects layer; the QP and the QP
 * table are in sroce_qp.h, which this header includes. The verbs entry
 * points are in sroce_verbs.h, the rings in sroce_queue.h, the counters in
 * sroce_stats.h. The layers and their rules: Documentation/architecture.rst.
 */
#ifndef SROCE_H
#define SROCE_H

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/highmem.h>
#include <linux/list.h>
#include <linux/llist.h>
#include <linux/memcontrol.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/percpu.h>
#include <linux/refcount.h>
#include <linux/seq_file.h>
#include <linux/smp.h>
#include <linux/timer.h>
#include <linux/workqueue.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>
#include <net/dst_cache.h>
#include <rdma/sroce-abi.h>
#include <sroce/compat.h>
#include <sroce/mtu.h>
#include <sroce/rc_pkt.h>
#include <sroce/roce_hdr.h>
#include <sroce/wqe.h>
#include "sroce_queue.h"
#include "sroce_defer.h"
#include "sroce_stats.h"

struct dentry;
struct page_pool;

#define SROCE_NODE_DESC "sroce"
#define SROCE_PORT 1
#define SROCE_GID_TABLE_LEN 128
#define SROCE_PKEY_TABLE_LEN 1
#define SROCE_MAX_PD 0x10000
#define SROCE_MAX_CQ 0x10000
/*
 * 2^20 ring slots, one kept free: 32 MiB of ring at most. libfabric's
 * rxm asks for 262144 CQEs with its defaults (128 sends and 128 receives
 * for each of 1024 peers); ConnectX offers 4194303.
 */
#define SROCE_MAX_CQE 0xfffff
#define SROCE_MAX_QP 0x10000
#define SROCE_MAX_QP_WR 0x4000
#define SROCE_MAX_SGE 32
#define SROCE_MAX_INLINE 512
#define SROCE_MAX_MR 0x40000
#define SROCE_MAX_MR_SIZE BIT_ULL(40)
/* Pages of a fast-registration MR: max_fast_reg_page_list_len. */
#define SROCE_MAX_FAST_REG_PAGES 1024
/*
 * READs and atomics a QP keeps outstanding or answers at once; rdma_rxe
 * and RoCE NICs offer this many, and perftest asks the peer's maximum.
 */
#define SROCE_MAX_RD_ATOMIC 128
/* Entries of the responder's ring before max_dest_rd_atomic asks more. */
#define SROCE_RD_RING_MIN 16
#define SROCE_MAX_AH 0x10000
#define SROCE_MAX_SRQ 0x10000
#define SROCE_MAX_MCAST_GRP 64
#define SROCE_MAX_MCAST_QP_ATTACH 16
/* The destination QPN of a datagram to a multicast group. */
#define SROCE_MCAST_QPN 0xffffff
/*
 * RC: unacknowledged PSNs a requester may have in flight. On the wire at a
 * 4096-byte MTU that is 4 MiB, the device's TX limit (sroce_link.h); on
 * the shortcut a PSN is a whole message.
 */
#define SROCE_RC_WINDOW 1024
/* QPNs are unique across all sroce devices; 0 and 1 are SMI and GSI. */
#define SROCE_GSI_QPN 1
/* Q_Keys with the MSB set are privileged (IB_QP1_QKEY is one). */
#define SROCE_QKEY_PRIVILEGED 0x80000000U
#define SROCE_MIN_QPN 2
#define SROCE_MAX_QPN 0xffffff
/* Packets or datagrams a QP's receive queue holds before it drops. */
#define SROCE_RX_QUEUE_MAX 4096

/*
 * How many objects of each kind a device holds at once, kernel consumers'
 * included (the MAD layer owns a PD, a CQ, an MR and QP1 of each device).
 * Module parameters of the same names set them for devices added later.
 */
struct sroce_limits {
	u32 max_qp;
	u32 max_cq;
	u32 max_mr;
	u32 max_pd;
	u32 max_ah;
	u32 max_srq;
};

/*
 * Takes one of the objects counted by count, limited by max: false (and
 * nothing taken) when max are live already.
 */
static inline bool sroce_obj_take(atomic_t *count, u32 max)
{
	return atomic_add_unless(count, 1, max);
}

struct sroce_engine_worker;

struct sroce_dev {
	struct ib_device ibdev;
	/* Holds a reference (netdev_hold) for the life of sroce_dev. */
	struct net_device *ndev;
	netdevice_tracker ndev_tracker;
	/* Entry in the module's device list; guarded by sroce_devices_lock. */
	struct list_head list;
	/* Unregistration requested from atomic/RTNL context runs here. */
	struct work_struct unregister_work;
	/* The netdev is unregistering; guarded by sroce_devices_lock. */
	bool ndev_gone;
	/* Port state last reported in an event; guarded likewise. */
	bool port_was_active;
	/* Object limits, fixed when the device is added (sroce_main.c). */
	struct sroce_limits lim;
	/* Numbers of live PDs, 1 to lim.max_pd. */
	struct ida pdn_ida;
	/* MRs by key index (key >> 8); readers use RCU plus the MR refcount. */
	struct xarray mr_xa;
	u32 mr_next;
	atomic_t num_qp;
	atomic_t num_cq;
	atomic_t num_mr;
	atomic_t num_ah;
	atomic_t num_srq;
	/* The engine: workers and the status page mapped to every context. */
	struct sroce_engine_status *status;
	unsigned int num_workers;
	bool workers_bound;	/* worker_bind when the device was added */
	struct sroce_engine_worker *workers;	/* the engine's (sroce_engine.h) */
	/* The wire (sroce_net.c): owner of our TX skbs (sk_wmem_alloc). */
	struct socket *tx_sock;
	/* Heads of large linear TX packets (sroce_net.c). */
	struct page_pool *tx_pool;
	/* Serializes allocations from tx_pool, which allows one at a time. */
	spinlock_t tx_pool_lock;
	bool net_open;
	/* Event counts, per CPU; from newlink to dealloc_driver. */
	struct sroce_stats __percpu *stats;
};

/*
 * Takes the oldest node of a lock-free list that any context adds to and
 * one consumer takes from: batch holds what the consumer took from head
 * (in the order added) and has not yet returned. NULL when both are empty.
 */
static inline struct llist_node *sroce_llist_pop(struct llist_head *head,
						 struct llist_node **batch)
{
	struct llist_node *node = *batch;

	if (!node) {
		if (llist_empty(head))
			return NULL;
		node = llist_reverse_order(llist_del_all(head));
	}
	*batch = node->next;
	return node;
}

struct sroce_cq {
	struct ib_cq ibcq;
	struct sroce_queue q;
	spinlock_t lock;	/* producers, and kernel pollers */
	u32 armed_seq;		/* last cq_arm sequence that raised an event */
	u32 kernel_arm_seq;	/* kernel CQs: the sequence req_notify uses */
	bool overflowed;
	bool ignore_overrun;	/* IB_UVERBS_CQ_FLAGS_IGNORE_OVERRUN: no CQ_ERR */
	bool timestamps;	/* 64-byte slots with the time of each CQE */
	bool is_user;
	/* Completion events: on event_cpu, the CPU of the CQ's vector. */
	int event_cpu;
	unsigned long event_flags;	/* SROCE_CQ_EVENT_* */
	atomic_t events_sent;	/* IPIs sent to event_cpu */
	atomic_t events_done;	/* of those, handlers returned */
	call_single_data_t event_csd;
};

/*
 * Completion events a pass holds back until the QP it runs is done (see
 * sroce_cq_post.c): only the pass's runner touches it; empty whenever the
 * worker's lock is free.
 */
#define SROCE_CQ_EVENTS_HELD 4
struct sroce_cq_events {
	unsigned int n;
	struct sroce_cq *cq[SROCE_CQ_EVENTS_HELD];
};

enum sroce_mr_kind {
	SROCE_MR_USER,		/* ib_umem pages of a user buffer */
	SROCE_MR_DMA,		/* kernel DMA MR: iova is a kernel address */
	SROCE_MR_FAST,		/* fast registration: REG_MR sets it up */
	SROCE_MR_MW,		/* a memory window: BIND_MW sets it up */
};

/*
 * Whether a key may be used. A user or DMA MR is valid from registration
 * to deregistration; a fast-registration MR is valid from a REG_MR to an
 * invalidation (local or remote), free before its first REG_MR.
 */
enum sroce_mr_state {
	SROCE_MR_FREE,
	SROCE_MR_VALID,
	SROCE_MR_INVALID,
};

struct sroce_mr {
	struct ib_mr ibmr;
	/*
	 * The key a lookup must name, and the state. A fast-registration
	 * MR's key is the one its last REG_MR gave (its consumer rewrites
	 * ibmr.lkey/rkey before that); every other MR's is ibmr.lkey. Only
	 * changed under state_lock; readers load state (acquire) first.
	 */
	u32 key;
	u8 state;		/* enum sroce_mr_state */
	u8 kind;		/* enum sroce_mr_kind */
	spinlock_t state_lock;
	/*
	 * The generation: every change of what a key grants (REG_MR, an
	 * invalidation, a bind, deregistration) bumps it under state_lock,
	 * then waits until copiers is 0; every copy compares the generation
	 * its segment was checked at, and one into a fast-registration MR
	 * or through a window counts itself in copiers (sroce_mr_table.c).
	 */
	u64 gen;
	atomic_t copiers;
	/* A fast-registration MR's are set by REG_MR while it is not valid. */
	u64 iova;
	u64 length;
	int access;
	struct rcu_head rcu;
	struct ib_umem *umem;
	struct page **pages;		/* SROCE_MR_USER */
	unsigned long npages;
	unsigned int first_page_offset;
	/*
	 * SROCE_MR_FAST: map_mr_sg fills page_list (kernel addresses of
	 * page_size-aligned blocks, at most max_pages) and page_count; a
	 * REG_MR checks its range against page_count and takes page_shift.
	 */
	u64 *page_list;
	u32 max_pages;
	u32 page_count;
	u8 page_shift;
	/*
	 * SROCE_MR_MW, set by a bind while it is not being looked up under
	 * state_lock: the MR it is bound to (a reference), the iova of the
	 * window's first byte in it, its type (1 or 2) and, type 2, the QP
	 * it is bound to. iova/length/access above are the window's; iova is
	 * 0 for a zero-based window.
	 */
	struct sroce_mr *parent;
	u64 parent_gen;			/* the parent's gen, checked at bind */
	u64 parent_iova;
	u32 bound_qpn;
	u8 mw_type;
	/*
	 * Registration holds one reference and engine users one each (a
	 * WQE in flight, a WRITE being received). Deregistration unpublishes
	 * the key, marks the MR dead and drops its own; the last reference
	 * releases the pages, from sroce_wq if it is not deregistration's.
	 */
	refcount_t refs;
	bool dead;
	struct work_struct release_work;
};

/* The bit a kick sets in pending when it finds the lock taken. */
#define SROCE_WORKER_KICK_NOTED 0
/* The bit a wake sets before it wakes a worker that said it sleeps. */
#define SROCE_WORKER_WOKEN 1
/*
 * The pass bit: whoever holds it may change the engine state of the
 * worker's QPs. Every holder of worker->lock takes it right after the
 * lock and gives it back right before unlocking (sroce_worker_lock(),
 * sroce_worker_mutex_unlock()), and keeps it while it sleeps; a softirq
 * that takes an ACK at once (sroce_engine_take_now()) only tries it, and
 * holds it for one packet without sleeping. So a lock holder waits for
 * it at most that long, and a softirq never waits.
 */
#define SROCE_WORKER_PASS 2

/*
 * An engine worker: owns a set of QPs and runs their contexts. This is
 * what the layers below the engine see (qp->worker): its QPs, its lock,
 * the sleep protocol's state (sroce_wake.h) and the running pass's. The
 * engine's own state (placement counts, binding) is in struct
 * sroce_engine_worker (sroce_engine.h), which embeds this one.
 */
struct sroce_worker {
	struct sroce_dev *sdev;
	unsigned int index;
	struct task_struct *task;
	struct mutex lock;	/* qps */
	struct list_head qps;
	/* The task running a pass now (the worker or a kicking process). */
	struct task_struct *runner;
	/*
	 * The sleep protocol's note to the running pass (sroce_wake.h): a
	 * QP of this worker that the pass queued work to (the shortcut's
	 * peer). What the pass does with it (the chase) is the engine's
	 * (sroce_qp_process). Only the runner reads or writes it, and it is
	 * NULL whenever the lock is free. It is only ever a QP on the list,
	 * which leaves it only under the lock: it needs no reference.
	 */
	struct sroce_qp *queued_to;
	/* The shortcut is handing a packet over (sroce_shortcut.c); runner only. */
	bool handing_over;
	/* A kick found the lock taken: a kicking runner goes again. */
	unsigned long pending;	/* bits SROCE_WORKER_KICK_NOTED, _WOKEN, _PASS */
	/*
	 * A QP's wire work waited for the TX socket during the last check
	 * before sleeping: the stack frees our skbs without telling us, so
	 * the worker then sleeps a jiffy at most. Written under lock.
	 */
	bool tx_blocked;
	/*
	 * The running pass may not sleep: a kernel poster's own pass, run
	 * with preemption off, or a softirq's ACK (sroce_engine_nowake.c).
	 * Its allocations then take atomic reserves (sroce_pass_gfp). The
	 * pass bit's holder only.
	 */
	bool atomic_pass;
	struct sroce_cq_events cq_events;	/* runner only */
};

/* Takes w's pass bit, which a softirq may hold for one packet. */
static inline void sroce_worker_claim(struct sroce_worker *w)
{
	while (test_and_set_bit_lock(SROCE_WORKER_PASS, &w->pending))
		cpu_relax();
}

static inline void sroce_worker_release(struct sroce_worker *w)
{
	clear_bit_unlock(SROCE_WORKER_PASS, &w->pending);
}

static inline void sroce_worker_lock(struct sroce_worker *w)
{
	mutex_lock(&w->lock);
	sroce_worker_claim(w);
}

static inline bool sroce_worker_trylock(struct sroce_worker *w)
{
	if (!mutex_trylock(&w->lock))
		return false;
	sroce_worker_claim(w);
	return true;
}

/* Unlocks w; its holders look for a kick's note (sroce_worker_unlock). */
static inline void sroce_worker_mutex_unlock(struct sroce_worker *w)
{
	sroce_worker_release(w);
	mutex_unlock(&w->lock);
}

/* The allocation flags of w's running pass (see atomic_pass). */
static inline gfp_t sroce_pass_gfp(const struct sroce_worker *w)
{
	return w->atomic_pass ? GFP_ATOMIC | __GFP_NOWARN : GFP_KERNEL;
}

/*
 * How a segment's addr is read. Never derived from a key or any other
 * value a user or a packet chooses:
 * - SROCE_SEG_EMPTY (a zeroed segment): no memory at all, len is 0;
 * - SROCE_SEG_MR: an iova of mr (an MR or a window), which the segment
 *   holds a reference on and which was checked for PD, range and access
 *   at generation gen; each copy checks that gen is still mr's;
 * - SROCE_SEG_KERNEL: a kernel address of a buffer the module owns
 *   (inline data it copied, a received payload, an atomic's result). Only
 *   sroce_kseg() makes one.
 */
enum sroce_seg_kind {
	SROCE_SEG_EMPTY,
	SROCE_SEG_MR,
	SROCE_SEG_KERNEL,
};

/* A piece of memory a message reads or writes. */
struct sroce_seg {
	struct sroce_mr *mr;	/* SROCE_SEG_MR only */
	u64 addr;
	u64 gen;		/* SROCE_SEG_MR: mr->gen when checked */
	u32 len;
	u8 kind;		/* enum sroce_seg_kind */
};

/*
 * The QP and its parts (sroce_qp.h): here, as they embed the segments
 * above.
 */
#include "sroce_qp.h"

static inline struct sroce_cq *to_scq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct sroce_cq, ibcq);
}

/*
 * A shared receive queue: a ring in the receive WQE format that the QPs
 * using it take from, in whichever workers they run. A resize replaces
 * the ring under both locks; a reader without them (sroce_srq_posted)
 * holds rcu_read_lock(), and the old ring is freed after a grace period.
 */
struct sroce_srq {
	struct ib_srq ibsrq;
	struct sroce_queue __rcu *ring;
	spinlock_t lock;	/* takers: ring, its consumer (index), limit */
	spinlock_t kpost_lock;	/* kernel posters: the producer; ring */
	/* Armed: raise IB_EVENT_SRQ_LIMIT_REACHED below this many; 0: not. */
	u32 limit;
	bool is_user;
};

/* A memory window: its key, range and rights live in an MR entry, win. */
struct sroce_mw {
	struct ib_mw ibmw;
	struct sroce_mr *win;
};

static inline struct sroce_mw *to_smw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct sroce_mw, ibmw);
}

static inline struct sroce_srq *to_ssrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct sroce_srq, ibsrq);
}

static inline struct sroce_mr *to_smr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct sroce_mr, ibmr);
}

struct sroce_ucontext {
	struct ib_ucontext ibuc;
	struct rdma_user_mmap_entry *status_mmap;
	u64 provider_caps;	/* enum sroce_ucontext_cap, as announced */
};

/* A kernel address handle: the UD address vector it stands for. */
struct sroce_ah {
	struct ib_ah ibah;
	struct sroce_wqe_ud av;		/* remote_qpn and remote_qkey unused */
};

static inline struct sroce_ah *to_sah(struct ib_ah *ibah)
{
	return container_of(ibah, struct sroce_ah, ibah);
}

struct sroce_pd {
	struct ib_pd ibpd;
	u32 pdn;
};

static inline struct sroce_dev *to_sdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct sroce_dev, ibdev);
}

static inline struct sroce_pd *to_spd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct sroce_pd, ibpd);
}

static inline void sroce_stat_add(struct sroce_dev *sdev, enum sroce_stat stat,
				  u64 n)
{
	this_cpu_add(sdev->stats->n[stat], n);
}

/* sroce_dev_table.c */
extern struct list_head sroce_devices;
extern struct mutex sroce_devices_lock;

int sroce_ifindex_by_gid(const union ib_gid *gid);
void sroce_dev_table_debugfs(struct dentry *dir);

/* sroce_mcast_table.c */
#define SROCE_MCAST_MAX_ATTACH 16	/* QPs per group */

struct sroce_mcg {
	struct list_head node;		/* on sroce_mcgs */
	int ifindex;
	union ib_gid mgid;
	unsigned int num_qps;
	struct sroce_qp *qps[SROCE_MCAST_MAX_ATTACH];
};

extern spinlock_t sroce_mcast_lock;	/* sroce_mcgs and each group's qps */
extern struct list_head sroce_mcgs;
bool sroce_gid_is_v4(const union ib_gid *gid);
bool sroce_mcast_gid_ok(const union ib_gid *gid);
struct sroce_mcg *sroce_mcg_find(int ifindex, const union ib_gid *mgid);
int sroce_mcg_count(int ifindex);
unsigned int sroce_mcast_members(int ifindex, const union ib_gid *mgid,
				 struct sroce_qp **members);

/* sroce_cq_post.c */
void sroce_cq_post(struct sroce_cq *cq, struct sroce_cqe *cqe,
		   struct sroce_cq_events *held);
void sroce_cq_events_release(struct sroce_cq_events *held);
void sroce_cq_switches(struct dentry *dir);
void sroce_cq_events_init(struct sroce_cq *cq, u32 comp_vector);
void sroce_cq_events_quiesce(struct sroce_cq *cq);

/* sroce_mr_table.c */
/*
 * The valid MR key names, with a reference, or NULL; *gen its generation,
 * read before the MR was found valid.
 */
struct sroce_mr *sroce_mr_get(struct sroce_dev *sdev, u32 key, u64 *gen);
u8 sroce_mr_fast_register(struct sroce_dev *sdev, struct ib_pd *pd,
			  const struct sroce_wqe_reg *reg);
/*
 * LOCAL_INV of key posted on a QP of pd: a valid or invalidated
 * fast-registration MR or type 2 window of pd under that key becomes
 * invalid. -ENOENT: no such MR in pd; -EINVAL: not its key.
 */
int sroce_mr_invalidate(struct sroce_dev *sdev, struct ib_pd *pd, u32 key);
/*
 * The same for a SEND with invalidate that arrived on qp; a bound window
 * only if it is bound to qp (-EACCES otherwise, and it stays valid).
 */
int sroce_mr_invalidate_remote(struct sroce_qp *qp, u32 key);
/* Executes a BIND_MW of qp; returns a completion status. */
u8 sroce_mw_bind(struct sroce_qp *qp, const struct sroce_wqe_bind *bind);
/*
 * Whether the window win, found valid at generation gen, grants qp remote
 * access to [iova, iova + len) with access, through an MR it is bound to.
 */
bool sroce_mw_grants(struct sroce_mr *win, u64 gen, struct sroce_qp *qp,
		     u64 iova, u32 len, int access);
/* Ends what a key granted at its current generation (deregistration). */
void sroce_mr_retire(struct sroce_mr *mr);

/*
 * xa_load() for a caller inside an RCU read-side section, which xa_load()
 * would enter a second time: the entry at index, or NULL.
 */
static inline void *sroce_xa_load_rcu(struct xarray *xa, unsigned long index)
{
	XA_STATE(xas, xa, index);
	void *entry;

	do {
		entry = xas_load(&xas);
		if (xa_is_zero(entry))
			entry = NULL;
	} while (xas_retry(&xas, entry));
	return entry;
}

/* Inline: every message puts the MRs it named. The last put defers. */
static inline void sroce_mr_put(struct sroce_mr *mr)
{
	if (refcount_dec_and_test(&mr->refs))
		sroce_defer_work(&mr->release_work);
}

/*
 * Overflow-safe: [iova, iova + len) inside the MR, same PD, access given.
 * Inline: every WQE and request checks its keys with it.
 */
static inline bool sroce_mr_allows(struct sroce_mr *mr, struct ib_pd *pd,
				   u64 iova, u64 len, int access)
{
	if (mr->ibmr.pd != pd)
		return false;
	if ((mr->access & access) != access)
		return false;
	if (iova < mr->iova || iova - mr->iova > mr->length ||
	    len > mr->length - (iova - mr->iova))
		return false;
	return true;
}

/*
 * An access to an MR segment's memory at the moment of a copy: the MR
 * mapped and, for a window's segment, the window; both entered.
 */
struct sroce_mr_access {
	struct sroce_mr *mr;
	struct sroce_mr *win;
	bool counted;		/* among copiers: sroce_mr_exit() leaves */
};

/*
 * Begins an access to byte iova of the segment seg (an MR segment, iova
 * inside it): its kernel address, *chunk the bytes from there to the end
 * of its page or block; or NULL if the key no longer grants what it did
 * when seg was checked. The access ends with sroce_mr_access_end(); in
 * between the caller copies and neither sleeps nor begins another access
 * to the same segment.
 */
void *sroce_mr_access_begin(const struct sroce_seg *seg, u64 iova, u32 *chunk,
			    struct sroce_mr_access *a);
void sroce_mr_exit(struct sroce_mr_access *a);

/* Ends an access begun with sroce_mr_access_begin() at addr. */
static inline void sroce_mr_access_end(struct sroce_mr_access *a, void *addr)
{
	if (a->mr->kind == SROCE_MR_USER)
		kunmap_local(addr);
	if (a->counted)
		sroce_mr_exit(a);
}

/*
 * The page of a user MR segment at iova and the offset in it, checked as
 * sroce_mr_access_begin() checks; NULL if the key no longer grants it or
 * the segment is not a user MR's.
 */
struct page *sroce_mr_seg_page(const struct sroce_seg *seg, u64 iova,
			       u32 *in_page);

/* sroce_engine.c */
int sroce_engine_start(struct sroce_dev *sdev);
void sroce_engine_stop(struct sroce_dev *sdev);
void sroce_engine_switches(struct dentry *dir);
void sroce_worker_unlock(struct sroce_worker *w);
void sroce_engine_run(struct sroce_qp *qp);
bool sroce_engine_post_inline(struct sroce_qp *qp);
void sroce_engine_drop_rx(struct sroce_qp *qp);
void sroce_engine_reset_qp(struct sroce_qp *qp);
void sroce_engine_qp_to_reset(struct sroce_qp *qp);

/* sroce_engine_place.c */
void sroce_engine_add_qp(struct sroce_qp *qp);
void sroce_engine_remove_qp(struct sroce_qp *qp);
void sroce_engine_pair_qp(struct sroce_qp *qp, u32 dest_qpn);
/* Counts qp as a wire QP of its worker or not; under the worker's lock. */
void sroce_engine_set_wire(struct sroce_qp *qp, bool wire);
void sroce_engine_register(enum ib_qp_type type,
			   const struct sroce_transport *transport);

/* sroce_net.c (receive, sockets) */
int sroce_net_open(struct sroce_dev *sdev);
void sroce_net_close(struct sroce_dev *sdev);
void sroce_wire_rx_enqueue(struct sroce_qp *qp, struct sk_buff *skb);

/* sroce_net_tx.c (paths, packets out) */
int sroce_net_path_set(struct sroce_qp *qp, const struct ib_qp_attr *attr);
int sroce_net_path_fill(struct sroce_path *path,
			const struct ib_gid_attr *sgid, const u8 *dgid,
			u8 traffic_class, u8 hop_limit, u32 flow_label);
void sroce_net_path_clear(struct sroce_qp *qp);
struct sk_buff *sroce_net_alloc(struct sroce_qp *qp, u32 roce_len);
struct sk_buff *sroce_net_alloc_paged(struct sroce_qp *qp, u32 hdr_len,
				      const struct bio_vec *payload,
				      unsigned int npieces, u32 len, u8 pad);
int sroce_net_send(struct sroce_qp *qp, struct sk_buff *skb);
bool sroce_net_tx_full(struct sroce_dev *sdev);

/* The port's path MTU in bytes, the largest UD message. */
static inline u32 sroce_port_mtu(struct sroce_dev *sdev)
{
	return sroce_path_mtu_for_netdev_mtu(READ_ONCE(sdev->ndev->mtu));
}

#endif /* SROCE_H */
