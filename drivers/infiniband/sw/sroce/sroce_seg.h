/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Memory through segments (sroce_seg.c): how the transports and links
 * read and write the memory a message names. Runs in a QP's worker.
 */
#ifndef SROCE_SEG_H
#define SROCE_SEG_H

#include <linux/sizes.h>
#include "sroce.h"

struct sroce_seg_iter {
	const struct sroce_seg *seg;
	unsigned int num;
	unsigned int i;
	u32 off;
	struct sroce_mr_access acc;	/* of the piece mapped now */
};

/*
 * What a copy found. A key that no longer grants what it granted when
 * its segment was checked stops the copy (sroce_mr_table.c); the bytes
 * before it were copied.
 */
enum sroce_copy_result {
	SROCE_COPY_OK,
	SROCE_COPY_SRC_REVOKED,		/* a source segment's key */
	SROCE_COPY_DST_REVOKED,		/* a destination segment's key */
};

/* Positions it at byte off of the segment list (off <= total length). */
void sroce_seg_iter_init(struct sroce_seg_iter *it, const struct sroce_seg *seg,
			 unsigned int num, u32 off);
/*
 * Copies len bytes; both sides were checked to hold at least len. It
 * offers the CPU after each SROCE_COPY_RESCHED_BYTES copied only: a copy
 * of one wire packet (the path MTU, 4096 bytes at most) never does, and
 * may run with preemption off (an atomic pass, sroce_engine_nowake.c).
 */
#define SROCE_COPY_RESCHED_BYTES SZ_64K
enum sroce_copy_result sroce_seg_copy(struct sroce_seg_iter *dst,
				      struct sroce_seg_iter *src, u32 len);
/*
 * The page pieces behind len bytes from it, for attaching to an skb
 * rather than copying: returns how many of vec they fill, or -EOPNOTSUPP
 * if the bytes are kernel memory, a window's, revoked keys' or need more
 * than max pieces. it does not move.
 */
int sroce_seg_pages(const struct sroce_seg_iter *it, u32 len,
		    struct bio_vec *vec, unsigned int max);
static inline void sroce_segs_put(const struct sroce_seg *segs,
				  unsigned int num)
{
	unsigned int i;

	for (i = 0; i < num; i++)
		if (segs[i].kind == SROCE_SEG_MR)
			sroce_mr_put(segs[i].mr);
}

/* Another reference to the memory of seg, for a second holder. */
static inline void sroce_seg_hold(const struct sroce_seg *seg)
{
	if (seg->kind == SROCE_SEG_MR)
		refcount_inc(&seg->mr->refs);
}

/* Copies len bytes between segment lists that both hold at least len. */
enum sroce_copy_result sroce_segs_copy(const struct sroce_seg *dst,
				       unsigned int ndst,
				       const struct sroce_seg *src,
				       unsigned int nsrc, u32 len);
/* Writes len bytes of kernel memory into segments that hold at least len. */
enum sroce_copy_result sroce_segs_write(const struct sroce_seg *dst,
					unsigned int ndst, const void *src,
					u32 len);
/* A buffer the module owns as a segment (see enum sroce_seg_kind). */
static inline struct sroce_seg sroce_kseg(void *p, u32 len)
{
	return (struct sroce_seg){
		.addr = (uintptr_t)p, .len = len, .kind = SROCE_SEG_KERNEL,
	};
}

bool sroce_sges_to_segs(struct sroce_qp *qp, const struct sroce_sge *sge,
			unsigned int num, int access, struct sroce_seg *segs);
int sroce_rkey_seg(struct sroce_qp *qp, u32 rkey, u64 va, u32 len,
		   int access, struct sroce_seg *seg);
int sroce_remote_atomic(struct sroce_qp *qp, u32 rkey, u64 va, u8 wqe_opcode,
			u64 swap_add, u64 compare, u64 *orig);

#endif /* SROCE_SEG_H */
