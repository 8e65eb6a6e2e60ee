// SPDX-License-Identifier: GPL-2.0
/*
 * MRs as the data path uses them: a key to an MR with a reference, the
 * checks of a range against it, and its pages (see sroce_mr.c for the key
 * rules and the lifetime of an MR's pages).
 */
#include <linux/highmem.h>
#include "sroce.h"

struct sroce_mr *sroce_mr_get(struct sroce_dev *sdev, u32 key)
{
	struct sroce_mr *mr;

	rcu_read_lock();
	mr = xa_load(&sdev->mr_xa, key >> 8);
	if (mr && (mr->ibmr.lkey != key || !refcount_inc_not_zero(&mr->refs)))
		mr = NULL;
	rcu_read_unlock();
	/* Found just before deregistration erased it: gone all the same. */
	if (mr && READ_ONCE(mr->dead)) {
		sroce_mr_put(mr);
		mr = NULL;
	}
	return mr;
}

/* Only an engine user's reference can be the last one here. */
/* Overflow-safe: [iova, iova + len) inside the MR, same PD, access given. */
bool sroce_mr_allows(struct sroce_mr *mr, struct ib_pd *pd, u64 iova,
		     u64 len, int access)
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
 * Maps the page holding iova (checked by sroce_mr_allows()) and returns its
 * address; *chunk gets the bytes left in that page.
 */
struct page *sroce_mr_page(struct sroce_mr *mr, u64 iova, u32 *in_page)
{
	u64 off = iova - mr->iova + mr->first_page_offset;

	*in_page = off & ~PAGE_MASK;
	return mr->pages[off >> PAGE_SHIFT];
}

void *sroce_mr_map(struct sroce_mr *mr, u64 iova, u32 *chunk)
{
	struct page *page;
	u32 in_page;

	if (mr->dma) {
		*chunk = PAGE_SIZE - offset_in_page(iova);
		return (void *)(uintptr_t)iova;
	}
	page = sroce_mr_page(mr, iova, &in_page);
	*chunk = PAGE_SIZE - in_page;
	return kmap_local_page(page) + in_page;
}

void sroce_mr_unmap(struct sroce_mr *mr, void *addr)
{
	if (!mr->dma)
		kunmap_local(addr);
}
