// SPDX-License-Identifier: GPL-2.0
/*
 * Queue memory and its mappings into user contexts.
 *
 * Rules: the kernel allocates every ring (vmalloc_user, zeroed) and maps it
 * through an rdma_user_mmap_entry; the core keeps an offset valid until the
 * last mapping is gone, and the mapped pages hold their own references, so
 * freeing a ring while a process still maps it is safe. Mappings of
 * read-only entries (the engine status page) refuse VM_WRITE.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include "sroce.h"

int sroce_queue_init(struct sroce_queue *q, u32 log_slots, u32 log_slot_size)
{
	q->log_slots = log_slots;
	q->log_slot_size = log_slot_size;
	q->size = PAGE_ALIGN(SROCE_QUEUE_SLOTS_OFFSET +
			     ((size_t)1 << (log_slots + log_slot_size)));
	q->buf = vmalloc_user(q->size);
	if (!q->buf)
		return -ENOMEM;
	q->hdr = q->buf;
	q->index = 0;
	q->mmap = NULL;
	return 0;
}

void sroce_queue_free(struct sroce_queue *q)
{
	if (q->mmap)
		sroce_mmap_remove(q->mmap);
	q->mmap = NULL;
	vfree(q->buf);
	q->buf = NULL;
}

int sroce_mmap_insert(struct ib_ucontext *uctx, void *kaddr, size_t size,
		      bool read_only, struct rdma_user_mmap_entry **entry,
		      u64 *offset)
{
	struct sroce_mmap_entry *e;
	int err;

	e = kzalloc(sizeof(*e), GFP_KERNEL);
	if (!e)
		return -ENOMEM;
	e->kaddr = kaddr;
	e->read_only = read_only;
	err = rdma_user_mmap_entry_insert(uctx, &e->rdma, PAGE_ALIGN(size));
	if (err) {
		kfree(e);
		return err;
	}
	*entry = &e->rdma;
	*offset = rdma_user_mmap_get_offset(&e->rdma);
	return 0;
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

	rdma = rdma_user_mmap_entry_get(uctx, vma);
	if (!rdma)
		return -EINVAL;
	e = container_of(rdma, struct sroce_mmap_entry, rdma);

	if (e->read_only) {
		if (vma->vm_flags & VM_WRITE) {
			err = -EPERM;
			goto out;
		}
		vma->vm_flags &= ~VM_MAYWRITE;
	}
	err = remap_vmalloc_range(vma, e->kaddr, 0);
out:
	rdma_user_mmap_entry_put(rdma);
	return err;
}

void sroce_mmap_free(struct rdma_user_mmap_entry *entry)
{
	kfree(container_of(entry, struct sroce_mmap_entry, rdma));
}
