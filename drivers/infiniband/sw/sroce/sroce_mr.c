// SPDX-License-Identifier: GPL-2.0
/*
 * Memory regions.
 *
 * Keys: lkey == rkey == (index << 8) | variant, index >= 1 in sdev->mr_xa,
 * so no key value, 0 included, stands for anything but an MR. A kernel
 * PD's local_dma_lkey is the key of its DMA MR (iova == kernel address,
 * local access only). An MR becomes visible to lookups only once it is
 * complete. A fast-registration MR (kernel consumers only) is published
 * free: no key reaches it until a REG_MR on one of its owner's QPs gives
 * it a key of its index, a range and access (sroce_mr_table.c). The
 * engine looks MRs up under RCU and holds a reference while it touches the
 * memory. Deregistration unpublishes the key and does not
 * wait for those references (a peer can keep a WRITE open for as long as
 * it likes): the last one unpins the pages, so they stay pinned for as
 * long as the engine may copy into or out of them. It waits only for a
 * copy under way (sroce_mr_retire()): no copy into or out of the MR
 * starts after deregistration or re-registration returned.
 */
#include <linux/highmem.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include "sroce.h"
#include "sroce_verbs.h"

#define SROCE_ACCESS_KNOWN                                              \
	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |               \
	 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC |              \
	 IB_ACCESS_MW_BIND)

/*
 * The last reference went, after deregistration: unpins the pages and
 * drops the device reference deregistration took. Runs from sroce_wq when
 * an engine user's put was the last, else in deregistration itself.
 */
static void sroce_mr_release_work(struct work_struct *work)
{
	struct sroce_mr *mr = container_of(work, struct sroce_mr, release_work);
	struct ib_device *ibdev = mr->ibmr.device;

	if (mr->umem)
		ib_umem_release(mr->umem);
	if (mr->parent)
		sroce_mr_put(mr->parent);
	kvfree(mr->pages);
	kvfree(mr->page_list);
	kfree_rcu(mr, rcu);
	put_device(&ibdev->dev);
}

/*
 * A new MR of ibpd; its key takes a fresh index, or is reuse_key (not 0)
 * when re-registration hands an MR's keys on.
 */
static struct sroce_mr *sroce_mr_alloc(struct sroce_dev *sdev,
				       struct ib_pd *ibpd, int access,
				       u32 reuse_key)
{
	struct sroce_mr *mr;
	u32 index;
	int err;

	if (access & ~(SROCE_ACCESS_KNOWN | IB_ACCESS_OPTIONAL))
		return ERR_PTR(-EOPNOTSUPP);
	if (!sroce_obj_take(&sdev->num_mr, sdev->lim.max_mr))
		return ERR_PTR(-ENOMEM);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL_ACCOUNT);
	if (!mr) {
		err = -ENOMEM;
		goto err_count;
	}
	mr->access = access;
	spin_lock_init(&mr->state_lock);
	refcount_set(&mr->refs, 1);
	INIT_WORK(&mr->release_work, sroce_mr_release_work);

	/* The index is reserved now and published once the MR is whole. */
	if (reuse_key) {
		mr->ibmr.lkey = reuse_key;
	} else {
		err = xa_alloc_cyclic(&sdev->mr_xa, &index, NULL,
				      XA_LIMIT(1, SROCE_MAX_MR),
				      &sdev->mr_next, GFP_KERNEL);
		if (err < 0)
			goto err_free;
		mr->ibmr.lkey = (index << 8) | (get_random_u32() & 0xff);
	}
	mr->ibmr.rkey = mr->ibmr.lkey;
	mr->key = mr->ibmr.lkey;
	mr->state = SROCE_MR_VALID;
	mr->ibmr.pd = ibpd;
	mr->ibmr.device = ibpd->device;
	return mr;

err_free:
	kfree(mr);
err_count:
	atomic_dec(&sdev->num_mr);
	return ERR_PTR(err);
}

/*
 * Makes a fully initialised MR visible to key lookups (in place of the MR
 * it took the key from, if any); the release store pairs with the lookup's
 * xa_load (RCU dereference).
 */
static void sroce_mr_publish(struct sroce_dev *sdev, struct sroce_mr *mr)
{
	xa_store(&sdev->mr_xa, mr->ibmr.lkey >> 8, mr, GFP_KERNEL);
}

/*
 * Undoes sroce_mr_alloc() for an MR never published: no reader saw it. A
 * reserved index is released; a reused one still belongs to its MR.
 */
static void sroce_mr_unreserve(struct sroce_dev *sdev, struct sroce_mr *mr)
{
	xa_release(&sdev->mr_xa, mr->ibmr.lkey >> 8);
	atomic_dec(&sdev->num_mr);
	kvfree(mr->page_list);
	kfree(mr);
}

struct ib_mr *sroce_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct sroce_mr *mr;

	mr = sroce_mr_alloc(to_sdev(ibpd->device), ibpd, access, 0);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->kind = SROCE_MR_DMA;
	mr->iova = 0;
	mr->length = U64_MAX;
	sroce_mr_publish(to_sdev(ibpd->device), mr);
	return &mr->ibmr;
}

/* A user MR, complete but not yet published, under reuse_key if not 0. */
static struct sroce_mr *sroce_user_mr_create(struct ib_pd *ibpd, u64 start,
					     u64 length, u64 iova, int access,
					     struct ib_udata *udata,
					     u32 reuse_key)
{
	struct sroce_dev *sdev = to_sdev(ibpd->device);
	struct sg_page_iter iter;
	struct ib_umem *umem;
	struct sroce_mr *mr;
	unsigned long i = 0;
	int err;

	err = sroce_udata_expect_no_req(udata);
	if (err)
		return ERR_PTR(err);
	if (!length || length > SROCE_MAX_MR_SIZE ||
	    iova + length < iova || start + length < start)
		return ERR_PTR(-EINVAL);
	/* The first page offset of iova must match that of the buffer. */
	if ((start ^ iova) & ~PAGE_MASK)
		return ERR_PTR(-EINVAL);

	mr = sroce_mr_alloc(sdev, ibpd, access, reuse_key);
	if (IS_ERR(mr))
		return mr;

	umem = ib_umem_get(ibpd->device, start, length, access);
	if (IS_ERR(umem)) {
		err = PTR_ERR(umem);
		goto err_mr;
	}
	mr->umem = umem;
	mr->npages = ib_umem_num_pages(umem);
	mr->pages = kvmalloc_array(mr->npages, sizeof(*mr->pages),
				   GFP_KERNEL_ACCOUNT);
	if (!mr->pages) {
		err = -ENOMEM;
		goto err_umem;
	}
	for_each_sgtable_page(&umem->sgt_append.sgt, &iter, 0) {
		if (i >= mr->npages)
			break;
		mr->pages[i++] = sg_page_iter_page(&iter);
	}
	mr->first_page_offset = ib_umem_offset(umem);
	mr->iova = iova;
	mr->length = length;
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
	return mr;

err_umem:
	ib_umem_release(umem);
err_mr:
	sroce_mr_unreserve(sdev, mr);
	return ERR_PTR(err);
}

struct ib_mr *sroce_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata)
{
	struct sroce_mr *mr;

	mr = sroce_user_mr_create(ibpd, start, length, iova, access, udata, 0);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	sroce_mr_publish(to_sdev(ibpd->device), mr);
	return &mr->ibmr;
}

/*
 * Re-registration makes a new MR from what changes and what the old one
 * had, and hands it the old one's keys: from the moment it is published,
 * the keys find it, and the old one is dead (ib_core then destroys it).
 * WQEs in flight keep the old MR's pages as deregistration allows; no MR
 * is ever changed under the engine. On failure nothing changed.
 */
struct ib_mr *sroce_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				  u64 length, u64 iova, int access,
				  struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct sroce_mr *mr = to_smr(ibmr), *new;

	if (mr->kind != SROCE_MR_USER)
		return ERR_PTR(-EOPNOTSUPP);
	if (!(flags & IB_MR_REREG_TRANS)) {
		start = mr->umem->address;
		length = mr->length;
		iova = mr->iova;
	}
	if (!(flags & IB_MR_REREG_ACCESS))
		access = mr->access;
	if (!(flags & IB_MR_REREG_PD))
		ibpd = ibmr->pd;
	new = sroce_user_mr_create(ibpd, start, length, iova, access, udata,
				   mr->key);
	if (IS_ERR(new))
		return ERR_CAST(new);
	sroce_mr_retire(mr);
	sroce_mr_publish(to_sdev(ibpd->device), new);
	return &new->ibmr;
}

struct ib_mr *sroce_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			     u32 max_num_sg)
{
	struct sroce_dev *sdev = to_sdev(ibpd->device);
	struct sroce_mr *mr;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > SROCE_MAX_FAST_REG_PAGES)
		return ERR_PTR(-EINVAL);
	mr = sroce_mr_alloc(sdev, ibpd, 0, 0);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->page_list = kvcalloc(max_num_sg, sizeof(*mr->page_list),
				 GFP_KERNEL);
	if (!mr->page_list) {
		sroce_mr_unreserve(sdev, mr);
		return ERR_PTR(-ENOMEM);
	}
	mr->kind = SROCE_MR_FAST;
	mr->max_pages = max_num_sg;
	mr->state = SROCE_MR_FREE;
	sroce_mr_publish(sdev, mr);
	return &mr->ibmr;
}

static int sroce_mr_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct sroce_mr *mr = to_smr(ibmr);

	if (mr->page_count == mr->max_pages)
		return -ENOMEM;
	mr->page_list[mr->page_count++] = addr;
	return 0;
}

/*
 * The consumer's scatterlist (kernel addresses: sroce has no DMA device)
 * into the page list a later REG_MR reads. A short count is the
 * consumer's error to handle, as with any device.
 */
int sroce_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset)
{
	struct sroce_mr *mr = to_smr(ibmr);

	mr->page_count = 0;
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, sroce_mr_set_page);
}

/*
 * Deregistration (of an MR or a window): the key is gone at once; the
 * engine's references keep the memory until the last is put.
 */
static void sroce_mr_unpublish(struct sroce_dev *sdev, struct sroce_mr *mr)
{
	struct ib_device *ibdev = &sdev->ibdev;

	sroce_mr_retire(mr);
	/* Unless re-registration handed the key on already. */
	xa_cmpxchg(&sdev->mr_xa, mr->key >> 8, mr, NULL, 0);
	atomic_dec(&sdev->num_mr);
	/*
	 * The umem's release needs the device: a late release holds it.
	 * Taken before the reference is dropped, which may be the last.
	 */
	get_device(&ibdev->dev);
	if (refcount_dec_and_test(&mr->refs))
		sroce_mr_release_work(&mr->release_work);
}

/*
 * A memory window is an entry of the key table (counted against max_mr),
 * free until a bind; its rkey is (index << 8) | variant like an MR's.
 */
int sroce_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibmw->device);
	struct sroce_mw *mw = to_smw(ibmw);
	struct sroce_mr *win;
	int err;

	if (udata) {
		err = sroce_udata_expect_no_req(udata);
		if (err)
			return err;
	}
	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;
	win = sroce_mr_alloc(sdev, ibmw->pd, 0, 0);
	if (IS_ERR(win))
		return PTR_ERR(win);
	win->kind = SROCE_MR_MW;
	win->mw_type = ibmw->type == IB_MW_TYPE_1 ? 1 : 2;
	win->state = SROCE_MR_FREE;
	mw->win = win;
	ibmw->rkey = win->key;
	sroce_mr_publish(sdev, win);
	return 0;
}

int sroce_dealloc_mw(struct ib_mw *ibmw)
{
	sroce_mr_unpublish(to_sdev(ibmw->device), to_smw(ibmw)->win);
	return 0;
}

int sroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	sroce_mr_unpublish(to_sdev(ibmr->device), to_smr(ibmr));
	return 0;
}
