/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sroce: the queue memory, rings shared with user space (sroce_queue.c);
 * the index rules are those of uapi/rdma/sroce-abi.h.
 */
#ifndef SROCE_QUEUE_H
#define SROCE_QUEUE_H

#include <linux/types.h>
#include <asm/barrier.h>
#include <rdma/ib_verbs.h>
#include <rdma/sroce-abi.h>
#include <sroce/wqe.h>

/* A piece of kernel memory mapped into user contexts. */
struct sroce_mmap_entry {
	struct rdma_user_mmap_entry rdma;
	void *kaddr;
	bool read_only;
	bool owns;		/* kaddr is a ring freed with the entry */
};

/*
 * A ring (see the queue memory rules in sroce-abi.h). index is the
 * kernel's private copy of the index it owns: the consumer for a work
 * queue, the producer for a CQ.
 */
struct sroce_queue {
	void *buf;
	struct sroce_queue_hdr *hdr;
	size_t size;
	u32 log_slots;
	u32 log_slot_size;
	u32 index;
	struct rdma_user_mmap_entry *mmap;	/* owns buf; NULL: not mapped */
	/* A work queue's: what one of its WQEs may carry. */
	struct sroce_wqe_limits lim;
};

/*
 * Ring indices. The other side's index is read with acquire semantics, so
 * the slots it covers are visible after the read; our own index is
 * published with release semantics, after the slot contents it covers.
 */
static inline u32 sroce_ring_read_index(const u32 *index)
{
	/* Pairs with the other side's sroce_ring_publish(). */
	return smp_load_acquire(index);
}

static inline void sroce_ring_publish(u32 *index, u32 value)
{
	/* Pairs with the other side's sroce_ring_read_index(). */
	smp_store_release(index, value);
}

static inline u32 sroce_queue_slots(const struct sroce_queue *q)
{
	return 1U << q->log_slots;
}

static inline void *sroce_queue_slot(const struct sroce_queue *q, u32 index)
{
	return q->buf + SROCE_QUEUE_SLOTS_OFFSET +
	       ((size_t)(index & (sroce_queue_slots(q) - 1)) << q->log_slot_size);
}

/* The owner byte a CQE at index carries: flips with every lap. */
static inline u8 sroce_cqe_owner(const struct sroce_queue *q, u32 index)
{
	return ((index >> q->log_slots) & 1) ^ 1;
}

/* sroce_queue.c */
int sroce_queue_init(struct sroce_queue *q, u32 log_slots, u32 log_slot_size);
int sroce_queue_post_recv(struct sroce_queue *q, u32 max_sge,
			  const struct ib_recv_wr *wr,
			  const struct ib_recv_wr **bad_wr);
void sroce_queue_free(struct sroce_queue *q);
int sroce_mmap_insert(struct ib_ucontext *uctx, void *kaddr, size_t size,
		      bool read_only, struct rdma_user_mmap_entry **entry,
		      u64 *offset);
int sroce_queue_map(struct ib_ucontext *uctx, struct sroce_queue *q,
		    u64 *offset);
void sroce_mmap_remove(struct rdma_user_mmap_entry *entry);
int sroce_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma);
void sroce_mmap_free(struct rdma_user_mmap_entry *entry);

#endif /* SROCE_QUEUE_H */
