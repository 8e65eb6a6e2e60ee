// SPDX-License-Identifier: GPL-2.0
/*
 * MRs as the data path uses them: a key to an MR with a reference, the
 * checks of a range against it, and its pages (see sroce_mr.c for the key
 * rules and the lifetime of an MR's pages).
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
static struct sroce_mr *sroce_mr_hold(struct sroce_mr *mr)
{
	if (!refcount_inc_not_zero(&mr->refs))
		return NULL;
	if (READ_ONCE(mr->dead)) {
		sroce_mr_put(mr);
		return NULL;
	}
	return mr;
}

struct sroce_mr *sroce_mr_get(struct sroce_dev *sdev, u32 key)
{
	struct sroce_mr *mr;

	rcu_read_lock();
	mr = sroce_xa_load_rcu(&sdev->mr_xa, key >> 8);
	mr = mr && sroce_mr_names(mr, key) ? sroce_mr_hold(mr) : NULL;
	rcu_read_unlock();
	return mr;
}

bool sroce_mr_in_use(struct sroce_mr *mr)
{
	return !READ_ONCE(mr->dead) &&
	       READ_ONCE(mr->state) == SROCE_MR_VALID;
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

int sroce_mr_invalidate(struct sroce_dev *sdev, struct ib_pd *pd, u32 key)
{
	struct sroce_mr *mr;
	int err = -EINVAL;

	mr = sroce_mr_get_index(sdev, key, pd, sroce_mr_invalidatable);
	if (!mr)
		return -ENOENT;
	spin_lock(&mr->state_lock);
	if (mr->state != SROCE_MR_FREE && mr->key == key) {
		WRITE_ONCE(mr->state, SROCE_MR_INVALID);
		err = 0;
		sroce_stat_add(sdev, SROCE_STAT_INVALIDATES, 1);
	}
	spin_unlock(&mr->state_lock);
	sroce_mr_put(mr);
	return err;
}

/*
 * Maps the page holding iova (checked by sroce_mr_allows()) and returns its
 * address; *chunk gets the bytes left in that page.
 */
struct page *sroce_mr_page(struct sroce_mr *mr, u64 iova, u32 *in_page)
{
	u64 off = iova - mr->iova + mr->first_page_offset;

	*in_page = off & ~PAGE_MASK;
	return mr->pages[off >> PAGE_SHIFT];
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

	if (sroce_wqe_check_bind(b) || (b->access & ~SROCE_MW_ACCESS))
		return status;
	win = sroce_mr_get_index(qp->sdev, b->key, pd, sroce_mr_is_mw);
	if (!win)
		return status;
	if (b->length) {
		mr = sroce_mr_get(qp->sdev, b->mr_key);
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
	old = win->parent;
	win->parent = mr;
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

struct sroce_mr *sroce_mw_target(struct sroce_mr *win, struct sroce_qp *qp,
				 u64 *iova, u32 len, int access)
{
	struct sroce_mr *mr;

	if (!sroce_mr_allows(win, qp->ibqp.pd, *iova, len, access))
		return NULL;
	spin_lock(&win->state_lock);
	mr = win->parent;
	if (win->state != SROCE_MR_VALID || !mr ||
	    (win->mw_type == 2 && win->bound_qpn != qp->ibqp.qp_num) ||
	    !refcount_inc_not_zero(&mr->refs)) {
		spin_unlock(&win->state_lock);
		return NULL;
	}
	*iova = win->parent_iova + (*iova - win->iova);
	spin_unlock(&win->state_lock);
	if (!sroce_mr_in_use(mr)) {
		sroce_mr_put(mr);
		return NULL;
	}
	return mr;
}

/*
 * A fast-registration MR's kernel address for iova (checked against the
 * MR), *chunk the bytes up to the end of its block or kernel page. The
 * block index is clamped to the page list: a consumer that maps or
 * registers the MR again while a peer uses it gets its own memory wrong,
 * never memory outside the list.
 */
static void *sroce_mr_fast_addr(struct sroce_mr *mr, u64 iova, u32 *chunk)
{
	u64 block = BIT_ULL(mr->page_shift);
	u64 off = iova - mr->iova + (mr->iova & (block - 1));
	u64 idx = min_t(u64, off >> mr->page_shift, mr->max_pages - 1);
	u64 addr = mr->page_list[idx] + (off & (block - 1));

	*chunk = min_t(u64, block - (off & (block - 1)),
		       PAGE_SIZE - offset_in_page(addr));
	return (void *)(uintptr_t)addr;
}

void *sroce_mr_map(struct sroce_mr *mr, u64 iova, u32 *chunk)
{
	struct page *page;
	u32 in_page;

	if (mr->kind == SROCE_MR_DMA) {
		*chunk = PAGE_SIZE - offset_in_page(iova);
		return (void *)(uintptr_t)iova;
	}
	if (mr->kind == SROCE_MR_FAST)
		return sroce_mr_fast_addr(mr, iova, chunk);
	page = sroce_mr_page(mr, iova, &in_page);
	*chunk = PAGE_SIZE - in_page;
	return kmap_local_page(page) + in_page;
}
