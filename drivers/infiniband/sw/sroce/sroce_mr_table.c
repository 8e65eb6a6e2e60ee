// SPDX-License-Identifier: GPL-2.0
/*
 * MRs as the data path uses them: a key to an MR with a reference, the
 * checks of a range against it, its changes, and access to its memory
 * (see sroce_mr.c for the key rules and the lifetime of an MR's pages).
 *
 * Keys are checked at the moment of every copy (Documentation/security.rst):
 * - a change of what a key grants (REG_MR, an invalidation, a bind or
 *   unbind of a window, deregistration, re-registration's end of the old
 *   MR) bumps the MR's gen under state_lock, then waits until no copy is
 *   inside the MR, and only then writes the new range, access and key;
 * - a segment records the gen read before its key was checked; every
 *   access to its memory compares the gen: a segment of an older
 *   generation gives no memory, so a copy that starts after a change
 *   returns fails;
 * - an access to memory whose lifetime is not the segment's (a
 *   fast-registration MR's pages, which its kernel consumer frees once
 *   the invalidation completed; a window, whose bind drops the MR it
 *   was bound to) also counts itself in the MR's copiers first, and a
 *   change waits for the copy it overlaps (one page at most: such an
 *   access neither sleeps nor is preempted). A user MR's pages stay
 *   pinned while a segment holds the MR, and a DMA MR's fields never
 *   change: their accesses compare the gen only, and cost no atomic;
 * - a window's segment is translated at each access, through the parent
 *   the window is bound to now, whose own gen must still be the one the
 *   bind checked; the final address is checked against the parent's
 *   range and page list again, and nothing is clamped.
 */
#include <linux/highmem.h>
#include <linux/log2.h>
#include "sroce.h"

/* Whether key names mr now: valid, with that very key. */
static bool sroce_mr_names(struct sroce_mr *mr, u32 key)
{
	/*
	 * Pairs with REG_MR's release of the state: a valid state comes
	 * with the key, range and access the REG_MR wrote before it.
	 */
	return smp_load_acquire(&mr->state) == SROCE_MR_VALID &&
	       READ_ONCE(mr->key) == key;
}

/*
 * A reference on mr, found under RCU, or NULL if it is going: its last
 * reference went, or deregistration marked it dead just after the lookup.
 */
static __always_inline struct sroce_mr *sroce_mr_hold(struct sroce_mr *mr)
{
	if (!refcount_inc_not_zero(&mr->refs))
		return NULL;
	if (READ_ONCE(mr->dead)) {
		sroce_mr_put(mr);
		return NULL;
	}
	return mr;
}

struct sroce_mr *sroce_mr_get(struct sroce_dev *sdev, u32 key, u64 *gen)
{
	struct sroce_mr *mr;

	rcu_read_lock();
	mr = sroce_xa_load_rcu(&sdev->mr_xa, key >> 8);
	if (mr) {
		/* First: fields read below are of this gen or a later one. */
		*gen = smp_load_acquire(&mr->gen);
		mr = sroce_mr_names(mr, key) ? sroce_mr_hold(mr) : NULL;
	}
	rcu_read_unlock();
	return mr;
}

/*
 * Starts a change of what mr's key grants, under state_lock: no access
 * that begins from now on gets in, and none is inside when it returns.
 */
static void sroce_mr_change(struct sroce_mr *mr)
{
	lockdep_assert_held(&mr->state_lock);
	/* The state written before, then gen: pairs with sroce_mr_get(). */
	smp_store_release(&mr->gen, mr->gen + 1);
	smp_mb();	/* gen, then copiers; pairs with sroce_mr_enter() */
	while (atomic_read_acquire(&mr->copiers))
		cpu_relax();
}

void sroce_mr_retire(struct sroce_mr *mr)
{
	spin_lock(&mr->state_lock);
	WRITE_ONCE(mr->dead, true);
	sroce_mr_change(mr);
	spin_unlock(&mr->state_lock);
}

/* Whether an access to mr must be counted (see the rules above). */
static bool sroce_mr_counted(const struct sroce_mr *mr)
{
	return mr->kind == SROCE_MR_FAST || mr->kind == SROCE_MR_MW;
}

/*
 * Enters mr for an access if mr is still at gen: counted, with preemption
 * off, where sroce_mr_counted() says.
 */
static __always_inline bool sroce_mr_enter(struct sroce_mr *mr, u64 gen)
{
	if (!sroce_mr_counted(mr))
		return READ_ONCE(mr->gen) == gen;
	preempt_disable();
	atomic_inc(&mr->copiers);
	smp_mb__after_atomic();	/* copiers, then gen; pairs with the change */
	if (likely(READ_ONCE(mr->gen) == gen))
		return true;
	atomic_dec(&mr->copiers);
	preempt_enable();
	return false;
}

static __always_inline void sroce_mr_leave(struct sroce_mr *mr)
{
	if (!sroce_mr_counted(mr))
		return;
	/* The access's loads and stores, then the count. */
	smp_mb__before_atomic();
	atomic_dec(&mr->copiers);
	preempt_enable();
}

/*
 * The entry of key's index in pd, if kind_ok says it is of a kind the
 * caller may change, with a reference; or NULL.
 */
static struct sroce_mr *sroce_mr_get_index(struct sroce_dev *sdev, u32 key,
					   struct ib_pd *pd,
					   bool (*kind_ok)(struct sroce_mr *))
{
	struct sroce_mr *mr;

	rcu_read_lock();
	mr = sroce_xa_load_rcu(&sdev->mr_xa, key >> 8);
	mr = mr && kind_ok(mr) && mr->ibmr.pd == pd ? sroce_mr_hold(mr) : NULL;
	rcu_read_unlock();
	return mr;
}

static bool sroce_mr_is_fast(struct sroce_mr *mr)
{
	return mr->kind == SROCE_MR_FAST;
}

/* What LOCAL_INV and SEND with invalidate may take: IBTA 10.6.7. */
static bool sroce_mr_invalidatable(struct sroce_mr *mr)
{
	return mr->kind == SROCE_MR_FAST ||
	       (mr->kind == SROCE_MR_MW && mr->mw_type == 2);
}

static bool sroce_mr_is_mw(struct sroce_mr *mr)
{
	return mr->kind == SROCE_MR_MW;
}

#define SROCE_MR_REG_ACCESS                                             \
	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |               \
	 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC)

/*
 * Executes a REG_MR of a kernel QP in pd: the fast-registration MR of
 * reg->key's index, in pd and not valid, becomes valid under reg->key for
 * [addr, addr + length) of the page list it was last mapped to. Remote
 * write or atomic access needs local write (IBTA). Returns a completion
 * status.
 */
u8 sroce_mr_fast_register(struct sroce_dev *sdev, struct ib_pd *pd,
			  const struct sroce_wqe_reg *reg)
{
	u32 page_size = reg->page_size;
	struct sroce_mr *mr;
	u64 first;
	u8 status = IB_WC_LOC_QP_OP_ERR;

	if (sroce_wqe_check_reg(reg) || (reg->access & ~SROCE_MR_REG_ACCESS) ||
	    ((reg->access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	     !(reg->access & IB_ACCESS_LOCAL_WRITE)) ||
	    reg->length > SROCE_MAX_MR_SIZE)
		return status;
	mr = sroce_mr_get_index(sdev, reg->key, pd, sroce_mr_is_fast);
	if (!mr)
		return status;
	/* The range from the first page's start, in the pages mapped. */
	first = reg->addr & (page_size - 1);
	spin_lock(&mr->state_lock);
	if (mr->state != SROCE_MR_VALID &&
	    first + reg->length <= (u64)mr->page_count * page_size) {
		sroce_mr_change(mr);
		mr->iova = reg->addr;
		mr->length = reg->length;
		mr->access = reg->access;
		mr->page_shift = ilog2(page_size);
		WRITE_ONCE(mr->key, reg->key);
		/* Publishes the fields above; pairs with sroce_mr_names(). */
		smp_store_release(&mr->state, SROCE_MR_VALID);
		status = IB_WC_SUCCESS;
		sroce_stat_add(sdev, SROCE_STAT_FAST_REGS, 1);
	}
	spin_unlock(&mr->state_lock);
	sroce_mr_put(mr);
	return status;
}

/*
 * Invalidates key for a LOCAL_INV (receiver NULL: any QP of pd may) or for
 * a SEND with invalidate that arrived on receiver: a bound type 2B window
 * only on the QP it is bound to, the one QP its remote peer can use it
 * through, so that no peer of the PD ends another connection's window.
 */
static int sroce_mr_invalidate_from(struct sroce_dev *sdev, struct ib_pd *pd,
				    u32 key, const struct sroce_qp *receiver)
{
	struct sroce_mr *mr;
	int err = -EINVAL;

	mr = sroce_mr_get_index(sdev, key, pd, sroce_mr_invalidatable);
	if (!mr)
		return -ENOENT;
	spin_lock(&mr->state_lock);
	if (receiver && sroce_mr_is_mw(mr) && mr->state == SROCE_MR_VALID &&
	    mr->bound_qpn != receiver->ibqp.qp_num) {
		err = -EACCES;
	} else if (mr->state != SROCE_MR_FREE && mr->key == key) {
		WRITE_ONCE(mr->state, SROCE_MR_INVALID);
		sroce_mr_change(mr);
		err = 0;
		sroce_stat_add(sdev, SROCE_STAT_INVALIDATES, 1);
	}
	spin_unlock(&mr->state_lock);
	sroce_mr_put(mr);
	return err;
}

int sroce_mr_invalidate(struct sroce_dev *sdev, struct ib_pd *pd, u32 key)
{
	return sroce_mr_invalidate_from(sdev, pd, key, NULL);
}

int sroce_mr_invalidate_remote(struct sroce_qp *qp, u32 key)
{
	return sroce_mr_invalidate_from(qp->sdev, qp->ibqp.pd, key, qp);
}

/* Local write means nothing for a window; consumers pass it all the same. */
#define SROCE_MW_ACCESS                                                 \
	(IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ |               \
	 IB_ACCESS_REMOTE_ATOMIC | IB_ZERO_BASED | IB_ACCESS_LOCAL_WRITE)

/*
 * A bind's checks (IBTA 10.6.7.2): the window and the MR belong to the
 * QP's PD; the MR is valid, allows binding and holds the whole range;
 * remote write or atomic rights need the MR's local write; a type 2
 * window is not valid already, and only it may be zero-based. A type 1
 * window may be bound again over a valid binding. length 0 unbinds.
 */
u8 sroce_mw_bind(struct sroce_qp *qp, const struct sroce_wqe_bind *b)
{
	struct ib_pd *pd = qp->ibqp.pd;
	struct sroce_mr *win, *mr = NULL, *old;
	u8 status = IB_WC_MW_BIND_ERR;
	u64 mr_gen = 0;

	if (sroce_wqe_check_bind(b) || (b->access & ~SROCE_MW_ACCESS))
		return status;
	win = sroce_mr_get_index(qp->sdev, b->key, pd, sroce_mr_is_mw);
	if (!win)
		return status;
	if (b->length) {
		mr = sroce_mr_get(qp->sdev, b->mr_key, &mr_gen);
		if (!mr || mr->kind == SROCE_MR_MW || mr->kind == SROCE_MR_DMA ||
		    !(mr->access & IB_ACCESS_MW_BIND) ||
		    !sroce_mr_allows(mr, pd, b->addr, b->length, 0) ||
		    ((b->access & (IB_ACCESS_REMOTE_WRITE |
				   IB_ACCESS_REMOTE_ATOMIC)) &&
		     !(mr->access & IB_ACCESS_LOCAL_WRITE)) ||
		    (win->mw_type == 1 && (b->access & IB_ZERO_BASED)))
			goto out;
	}
	spin_lock(&win->state_lock);
	if (win->mw_type == 2 && win->state == SROCE_MR_VALID) {
		spin_unlock(&win->state_lock);
		goto out;
	}
	/* Invalid first: no lookup sees the old key with the new fields. */
	WRITE_ONCE(win->state, SROCE_MR_INVALID);
	sroce_mr_change(win);
	old = win->parent;
	win->parent = mr;
	win->parent_gen = mr_gen;
	win->parent_iova = b->addr;
	win->iova = (b->access & IB_ZERO_BASED) ? 0 : b->addr;
	win->length = b->length;
	win->access = b->access & ~(IB_ZERO_BASED | IB_ACCESS_LOCAL_WRITE);
	win->bound_qpn = qp->ibqp.qp_num;
	WRITE_ONCE(win->key, b->key);
	if (mr)		/* Publishes the fields; pairs with sroce_mr_names(). */
		smp_store_release(&win->state, SROCE_MR_VALID);
	spin_unlock(&win->state_lock);
	mr = old;	/* the reference the window held, if any, goes */
	status = IB_WC_SUCCESS;
out:
	if (mr)
		sroce_mr_put(mr);
	sroce_mr_put(win);
	return status;
}

bool sroce_mw_grants(struct sroce_mr *win, u64 gen, struct sroce_qp *qp,
		     u64 iova, u32 len, int access)
{
	struct sroce_mr *parent;
	bool ok;

	if (!sroce_mr_enter(win, gen))
		return false;
	/* Entered: the bind's fields and its parent stay as they are. */
	parent = win->parent;
	ok = parent && sroce_mr_allows(win, qp->ibqp.pd, iova, len, access) &&
	     (win->mw_type == 1 || win->bound_qpn == qp->ibqp.qp_num) &&
	     READ_ONCE(parent->gen) == win->parent_gen;
	sroce_mr_leave(win);
	return ok;
}

/*
 * The page of a user MR that holds iova, *in_page the offset of iova in
 * it; NULL if iova is outside the MR's range.
 */
static __always_inline struct page *
sroce_mr_user_page(const struct sroce_mr *mr, u64 iova, u32 *in_page)
{
	u64 off;

	if (iova < mr->iova || iova - mr->iova >= mr->length)
		return NULL;
	off = iova - mr->iova + mr->first_page_offset;
	if ((off >> PAGE_SHIFT) >= mr->npages)
		return NULL;
	*in_page = offset_in_page(off);
	return mr->pages[off >> PAGE_SHIFT];
}

/*
 * The kernel address of iova in mr (entered), *chunk the bytes up to the
 * end of its page or block; NULL if iova is outside the MR's range or
 * page list. A user MR's page is mapped (sroce_mr_access_end() unmaps).
 */
static __always_inline void *
sroce_mr_addr(struct sroce_mr *mr, u64 iova, u32 *chunk)
{
	u64 off, block, idx, addr;
	struct page *page;
	u32 in_page;

	if (mr->kind == SROCE_MR_USER) {
		page = sroce_mr_user_page(mr, iova, &in_page);
		if (!page)
			return NULL;
		*chunk = PAGE_SIZE - in_page;
		return kmap_local_page(page) + in_page;
	}
	if (mr->kind == SROCE_MR_DMA) {
		*chunk = PAGE_SIZE - offset_in_page(iova);
		return (void *)(uintptr_t)iova;
	}
	if (mr->kind != SROCE_MR_FAST ||
	    iova < mr->iova || iova - mr->iova >= mr->length)
		return NULL;
	block = BIT_ULL(mr->page_shift);
	off = iova - mr->iova + (mr->iova & (block - 1));
	idx = off >> mr->page_shift;
	if (idx >= READ_ONCE(mr->page_count))
		return NULL;
	addr = mr->page_list[idx] + (off & (block - 1));
	*chunk = min_t(u64, block - (off & (block - 1)),
		       PAGE_SIZE - offset_in_page(addr));
	return (void *)(uintptr_t)addr;
}

/* An access found its key revoked or rebound since it was admitted. */
static void sroce_mr_count_revoked(struct sroce_mr *mr)
{
	sroce_stat_add(to_sdev(mr->ibmr.device), SROCE_STAT_KEYS_REVOKED, 1);
}

/*
 * Enters seg's MR and, for a window, the MR it is bound to now; returns
 * that MR with *iova translated into it, or NULL with nothing entered.
 * Until sroce_mr_exit() the caller neither sleeps nor begins another
 * access to the same segment.
 */
static __always_inline struct sroce_mr *
sroce_mr_enter_seg(const struct sroce_seg *seg, u64 *iova,
		   struct sroce_mr_access *a)
{
	struct sroce_mr *mr = seg->mr, *win;

	if (!sroce_mr_enter(mr, seg->gen))
		goto fail;
	a->win = NULL;
	a->counted = sroce_mr_counted(mr);	/* a window is */
	if (mr->kind == SROCE_MR_MW) {
		win = mr;
		mr = win->parent;
		if (!mr || !sroce_mr_enter(mr, win->parent_gen)) {
			sroce_mr_leave(win);
			goto fail;
		}
		*iova = win->parent_iova + (*iova - win->iova);
		a->win = win;
	}
	a->mr = mr;
	return mr;
fail:
	sroce_mr_count_revoked(seg->mr);
	return NULL;
}

/* Leaves what an access entered, if it counted itself in (a->counted). */
void sroce_mr_exit(struct sroce_mr_access *a)
{
	sroce_mr_leave(a->mr);
	if (a->win)
		sroce_mr_leave(a->win);
}

void *sroce_mr_access_begin(const struct sroce_seg *seg, u64 iova, u32 *chunk,
			    struct sroce_mr_access *a)
{
	struct sroce_mr *mr = seg->mr;
	void *p;

	/* The common case first: a user MR counts nothing, checks gen. */
	if (likely(mr->kind == SROCE_MR_USER)) {
		a->mr = mr;
		a->counted = false;
		if (likely(READ_ONCE(mr->gen) == seg->gen))
			return sroce_mr_addr(mr, iova, chunk);
		sroce_mr_count_revoked(mr);
		return NULL;
	}
	mr = sroce_mr_enter_seg(seg, &iova, a);
	if (!mr)
		return NULL;
	p = sroce_mr_addr(mr, iova, chunk);
	if (!p && a->counted)
		sroce_mr_exit(a);
	return p;
}

struct page *sroce_mr_seg_page(const struct sroce_seg *seg, u64 iova,
			       u32 *in_page)
{
	struct sroce_mr_access a;
	struct page *page;
	struct sroce_mr *mr;

	if (seg->mr->kind != SROCE_MR_USER)
		return NULL;
	mr = sroce_mr_enter_seg(seg, &iova, &a);
	if (!mr)
		return NULL;
	page = sroce_mr_user_page(mr, iova, in_page);
	if (a.counted)
		sroce_mr_exit(&a);
	return page;
}
