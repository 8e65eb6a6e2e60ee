// SPDX-License-Identifier: GPL-2.0
/*
 * Queue memory and its mappings into user contexts.
 *
 * Rules:
 * - the kernel allocates every ring (zeroed pages charged to the memory
 *   cgroup of the process that creates the queue, mapped with
 *   VM_USERMAP) and maps it through an rdma_user_mmap_entry;
 * - a ring that has an mmap entry belongs to the entry and is freed by
 *   sroce_mmap_free() once the entry is removed and no sroce_mmap() holds
 *   it, so sroce_mmap() can never map pages that destroy or resize freed
 *   meanwhile; a mapping that outlives the entry keeps the pages alone
 *   (remap_vmalloc_range() takes a reference on each), so no process ever
 *   maps freed memory. The core neither tracks nor zaps these mappings
 *   (they are not made with rdma_user_mmap_io()): after the device is
 *   removed a process still sees its rings as the engine left them;
 * - mappings of read-only entries (the engine status page) refuse
 *   VM_WRITE; entries that do not own their memory (that page) leave it
 *   to its owner.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include "sroce.h"

/* Zeroed, accounted pages in one virtual range that can be mapped. */
static void *sroce_ring_alloc(size_t size)
{
	unsigned int i, n = size >> PAGE_SHIFT;
	struct page **pages;
	void *buf;

	pages = kvcalloc(n, sizeof(*pages), GFP_KERNEL_ACCOUNT);
	if (!pages)
		return NULL;
	for (i = 0; i < n; i++) {
		pages[i] = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
		if (!pages[i])
			goto err;
	}
	/* VM_MAP_PUT_PAGES: vfree() frees the pages and the array. */
	buf = vmap(pages, n, VM_MAP | VM_USERMAP | VM_MAP_PUT_PAGES,
		   PAGE_KERNEL);
	if (buf)
		return buf;
err:
	while (i--)
		__free_page(pages[i]);
	kvfree(pages);
	return NULL;
}

int sroce_queue_init(struct sroce_queue *q, u32 log_slots, u32 log_slot_size)
{
	q->log_slots = log_slots;
	q->log_slot_size = log_slot_size;
	q->size = PAGE_ALIGN(SROCE_QUEUE_SLOTS_OFFSET +
			     ((size_t)1 << (log_slots + log_slot_size)));
	q->buf = sroce_ring_alloc(q->size);
	if (!q->buf)
		return -ENOMEM;
	q->hdr = q->buf;
	q->index = 0;
	q->mmap = NULL;
	return 0;
}

/*
 * A kernel consumer's receive WQEs written into an RQ or SRQ ring and
 * published one by one; the caller serializes posters. -ENOMEM for a full
 * ring or too many SGEs (*bad_wr is the first WR not posted).
 */
int sroce_queue_post_recv(struct sroce_queue *q, u32 max_sge,
			  const struct ib_recv_wr *wr,
			  const struct ib_recv_wr **bad_wr)
{
	struct sroce_recv_wqe *rwqe;
	u32 producer;
	int i;

	for (; wr; wr = wr->next) {
		producer = q->hdr->producer;
		if (producer - sroce_ring_read_index(&q->hdr->consumer) >=
		    sroce_queue_slots(q) || wr->num_sge > max_sge) {
			*bad_wr = wr;
			return -ENOMEM;
		}
		rwqe = sroce_queue_slot(q, producer);
		memset(rwqe, 0, SROCE_RECV_WQE_BASE);
		rwqe->wr_id = wr->wr_id;
		rwqe->num_sge = wr->num_sge;
		for (i = 0; i < wr->num_sge; i++) {
			rwqe->sge[i].addr = wr->sg_list[i].addr;
			rwqe->sge[i].length = wr->sg_list[i].length;
			rwqe->sge[i].lkey = wr->sg_list[i].lkey;
		}
		sroce_ring_publish(&q->hdr->producer, producer + 1);
	}
	return 0;
}

/* The ring goes with its mmap entry, if it has one. */
void sroce_queue_free(struct sroce_queue *q)
{
	if (q->mmap)
		sroce_mmap_remove(q->mmap);
	else
		vfree(q->buf);
	q->mmap = NULL;
	q->buf = NULL;
	q->hdr = NULL;
}

static int sroce_mmap_add(struct ib_ucontext *uctx, void *kaddr, size_t size,
			  bool read_only, bool owns,
			  struct rdma_user_mmap_entry **entry, u64 *offset)
{
	struct sroce_mmap_entry *e;
	int err;

	e = kzalloc(sizeof(*e), GFP_KERNEL_ACCOUNT);
	if (!e)
		return -ENOMEM;
	e->kaddr = kaddr;
	e->read_only = read_only;
	e->owns = owns;
	err = rdma_user_mmap_entry_insert(uctx, &e->rdma, PAGE_ALIGN(size));
	if (err) {
		kfree(e);
		return err;
	}
	*entry = &e->rdma;
	*offset = rdma_user_mmap_get_offset(&e->rdma);
	return 0;
}

/* Maps memory the caller keeps (and frees after sroce_mmap_remove()). */
int sroce_mmap_insert(struct ib_ucontext *uctx, void *kaddr, size_t size,
		      bool read_only, struct rdma_user_mmap_entry **entry,
		      u64 *offset)
{
	return sroce_mmap_add(uctx, kaddr, size, read_only, false, entry,
			      offset);
}

/* Maps a ring, which from now on belongs to its mmap entry. */
int sroce_queue_map(struct ib_ucontext *uctx, struct sroce_queue *q,
		    u64 *offset)
{
	return sroce_mmap_add(uctx, q->buf, q->size, false, true, &q->mmap,
			      offset);
}

void sroce_mmap_remove(struct rdma_user_mmap_entry *entry)
{
	rdma_user_mmap_entry_remove(entry);
}

int sroce_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rdma;
	struct sroce_mmap_entry *e;
	int err = -EINVAL;

	/* The reference keeps the entry's memory until this returns. */
	rdma = rdma_user_mmap_entry_get(uctx, vma);
	if (!rdma)
		return -EINVAL;
	e = container_of(rdma, struct sroce_mmap_entry, rdma);

	if (e->read_only) {
		if (vma->vm_flags & VM_WRITE) {
			err = -EPERM;
			goto out;
		}
		sroce_vma_clear_flags(vma, VM_MAYWRITE);
	}
	err = remap_vmalloc_range(vma, e->kaddr, 0);
out:
	rdma_user_mmap_entry_put(rdma);
	return err;
}

/* The entry is gone and so is every mapping of it. */
void sroce_mmap_free(struct rdma_user_mmap_entry *entry)
{
	struct sroce_mmap_entry *e =
		container_of(entry, struct sroce_mmap_entry, rdma);

	if (e->owns)
		vfree(e->kaddr);
	kfree(e);
}
