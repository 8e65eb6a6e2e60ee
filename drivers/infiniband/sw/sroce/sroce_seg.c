// SPDX-License-Identifier: GPL-2.0
/*
 * Memory through segments: how the transports and links read and write
 * the memory a message names, and how a key becomes a segment.
 *
 * Rules:
 * - a segment's address is read as its kind says (enum sroce_seg_kind)
 *   and never derived from a key or any value a user or packet chooses;
 * - an MR segment holds a reference on its MR, taken when the key was
 *   checked for PD, range and access, and dropped by sroce_segs_put();
 * - the key is checked again at every access to the segment's memory:
 *   against the generation it was checked at (sroce_mr_table.c), so a
 *   copy after an invalidation, a rebind or a deregistration fails;
 * - an atomic is applied with an atomic64_t operation on the mapped,
 *   aligned 8 bytes, so it is atomic against every other atomic sroce
 *   applies (on x86-64 a locked instruction: against the CPU's too).
 */
#include <linux/atomic.h>
#include <linux/highmem.h>
#include "sroce_seg.h"

void sroce_seg_iter_init(struct sroce_seg_iter *it, const struct sroce_seg *seg,
			 unsigned int num, u32 off)
{
	it->seg = seg;
	it->num = num;
	it->i = 0;
	while (it->i + 1 < num && off >= seg[it->i].len) {
		off -= seg[it->i].len;
		it->i++;
	}
	it->off = off;
}

/*
 * Maps the next bytes of it: *p their address, *chunk how many. false if
 * the segment's key no longer grants them; a WARN (a bug in the caller's
 * bounds) past the end of the list or on a segment without memory.
 */
static bool sroce_seg_map(struct sroce_seg_iter *it, void **p, u32 *chunk)
{
	const struct sroce_seg *s;
	u32 left;

	*p = NULL;
	while (it->i < it->num && it->off == it->seg[it->i].len) {
		it->i++;
		it->off = 0;
	}
	if (WARN_ON_ONCE(it->i == it->num))
		return true;
	s = &it->seg[it->i];
	left = s->len - it->off;
	switch (s->kind) {
	case SROCE_SEG_KERNEL:
		*chunk = left;
		*p = (void *)(uintptr_t)(s->addr + it->off);
		return true;
	case SROCE_SEG_MR:
		*p = sroce_mr_access_begin(s, s->addr + it->off, chunk,
					   &it->acc);
		*chunk = min(*chunk, left);
		return *p;
	default:
		WARN_ON_ONCE(1);
		return true;
	}
}

static void sroce_seg_unmap(struct sroce_seg_iter *it, void *p)
{
	if (it->seg[it->i].kind == SROCE_SEG_MR)
		sroce_mr_access_end(&it->acc, p);
}

enum sroce_copy_result sroce_seg_copy(struct sroce_seg_iter *dst,
				      struct sroce_seg_iter *src, u32 len)
{
	u32 dc, sc, n, since_resched = 0;
	void *d, *s;
	bool granted;

	while (len) {
		granted = sroce_seg_map(src, &s, &sc);
		if (!s)		/* revoked, or warned */
			return granted ? SROCE_COPY_OK : SROCE_COPY_SRC_REVOKED;
		granted = sroce_seg_map(dst, &d, &dc);
		if (!d) {
			sroce_seg_unmap(src, s);
			return granted ? SROCE_COPY_OK : SROCE_COPY_DST_REVOKED;
		}
		n = min3(len, sc, dc);
		memcpy(d, s, n);
		sroce_seg_unmap(dst, d);
		sroce_seg_unmap(src, s);
		src->off += n;
		dst->off += n;
		len -= n;
		since_resched += n;
		if (since_resched >= SROCE_COPY_RESCHED_BYTES) {
			since_resched = 0;
			cond_resched();
		}
	}
	return SROCE_COPY_OK;
}

int sroce_seg_pages(const struct sroce_seg_iter *start, u32 len,
		    struct bio_vec *vec, unsigned int max)
{
	struct sroce_seg_iter it = *start;
	const struct sroce_seg *s;
	unsigned int n = 0;
	u32 in_page, chunk;

	while (len) {
		while (it.i < it.num && it.off == it.seg[it.i].len) {
			it.i++;
			it.off = 0;
		}
		if (it.i == it.num || n == max)
			return -EOPNOTSUPP;
		s = &it.seg[it.i];
		if (s->kind != SROCE_SEG_MR)
			return -EOPNOTSUPP;
		vec[n].bv_page = sroce_mr_seg_page(s, s->addr + it.off,
						   &in_page);
		if (!vec[n].bv_page)
			return -EOPNOTSUPP;	/* the copy says why */
		chunk = min3(len, s->len - it.off, (u32)PAGE_SIZE - in_page);
		vec[n].bv_offset = in_page;
		vec[n].bv_len = chunk;
		n++;
		it.off += chunk;
		len -= chunk;
	}
	return n;
}

enum sroce_copy_result sroce_segs_copy(const struct sroce_seg *dst,
				       unsigned int ndst,
				       const struct sroce_seg *src,
				       unsigned int nsrc, u32 len)
{
	struct sroce_seg_iter d, s;

	sroce_seg_iter_init(&d, dst, ndst, 0);
	sroce_seg_iter_init(&s, src, nsrc, 0);
	return sroce_seg_copy(&d, &s, len);
}

enum sroce_copy_result sroce_segs_write(const struct sroce_seg *dst,
					unsigned int ndst, const void *src,
					u32 len)
{
	struct sroce_seg in = sroce_kseg((void *)src, len);
	struct sroce_mr_access acc;
	u32 chunk;
	void *p;

	/* Most such bytes (an atomic's 8) land in one page of one MR. */
	if (ndst && dst->kind == SROCE_SEG_MR && dst->len >= len) {
		p = sroce_mr_access_begin(dst, dst->addr, &chunk, &acc);
		if (!p)
			return SROCE_COPY_DST_REVOKED;
		if (chunk >= len)
			memcpy(p, src, len);
		sroce_mr_access_end(&acc, p);
		if (chunk >= len)
			return SROCE_COPY_OK;
	}
	return sroce_segs_copy(dst, ndst, &in, 1, len);
}

/*
 * The MR (or window) for [addr, addr + len), len > 0, under key, with a
 * reference and *gen its generation: checked for this QP's PD, the range
 * and the access. Remote access may name a memory window, whose segment
 * is translated through it at each access. No key value is special: key 0
 * names no MR (index 0 is never allocated), a kernel DMA MR grants no
 * remote access and a window's key no local access. Inline: each caller
 * runs it once per WQE or request, with remote a constant.
 */
static __always_inline struct sroce_mr *
sroce_sge_mr(struct sroce_qp *qp, u32 key, u64 addr, u32 len, int access,
	     bool remote, u64 *gen)
{
	struct sroce_mr *mr;

	mr = sroce_mr_get(qp->sdev, key, gen);
	if (!mr)
		return ERR_PTR(-ENOENT);
	if (mr->kind == SROCE_MR_MW && remote) {
		if (sroce_mw_grants(mr, *gen, qp, addr, len, access))
			return mr;
		sroce_mr_put(mr);
		return ERR_PTR(-EACCES);
	}
	if (mr->kind == SROCE_MR_MW ||
	    !sroce_mr_allows(mr, qp->ibqp.pd, addr, len, access) ||
	    (remote && mr->kind == SROCE_MR_DMA)) {
		sroce_mr_put(mr);
		return ERR_PTR(-EACCES);
	}
	return mr;
}

/* Fills segs from SGEs; false if a key is bad for the access wanted. */
bool sroce_sges_to_segs(struct sroce_qp *qp, const struct sroce_sge *sge,
			unsigned int num, int access, struct sroce_seg *segs)
{
	struct sroce_mr *mr;
	unsigned int i;
	u64 gen;

	for (i = 0; i < num; i++) {
		segs[i] = (struct sroce_seg){};
		if (!sge[i].length)
			continue;	/* touches nothing: no key check */
		mr = sroce_sge_mr(qp, sge[i].lkey, sge[i].addr, sge[i].length,
				  access, false, &gen);
		if (IS_ERR(mr)) {
			sroce_segs_put(segs, i);
			return false;
		}
		segs[i].mr = mr;
		segs[i].addr = sge[i].addr;
		segs[i].gen = gen;
		segs[i].len = sge[i].length;
		segs[i].kind = SROCE_SEG_MR;
	}
	return true;
}

/*
 * The responder's memory at (rkey, va, len), checked for the QP's access
 * flags, the MR's PD, range and access: 0 or -EACCES. A zero-length access
 * touches no memory and checks no key (IBTA C9-88): an empty segment.
 */
int sroce_rkey_seg(struct sroce_qp *qp, u32 rkey, u64 va, u32 len,
		   int access, struct sroce_seg *seg)
{
	struct sroce_mr *mr;
	u64 gen;

	*seg = (struct sroce_seg){};
	if (!(qp->attr.qp_access_flags & access))
		return -EACCES;
	if (!len)
		return 0;
	mr = sroce_sge_mr(qp, rkey, va, len, access, true, &gen);
	if (IS_ERR(mr))
		return -EACCES;
	*seg = (struct sroce_seg){
		.mr = mr, .addr = va, .gen = gen, .len = len,
		.kind = SROCE_SEG_MR,
	};
	return 0;
}

/*
 * Applies an atomic (wqe_opcode: CMP_SWP, FETCH_ADD, or ATOMIC_WRITE, which
 * stores swap_add with release order and finds nothing) to the responder's
 * 8 bytes at (rkey, va): 0, -EACCES if the rkey does not grant it (remote
 * atomic; remote write for ATOMIC_WRITE), or -EINVAL if the memory behind
 * va is not 8-byte aligned (a zero-based window or an MR registered at
 * another iova can put an aligned va on any byte). The CPU's atomic
 * instruction orders it against every other atomic; atomic64_t's, so that
 * all opcodes share one implementation where 64-bit atomics are emulated.
 */
int sroce_remote_atomic(struct sroce_qp *qp, u32 rkey, u64 va, u8 wqe_opcode,
			u64 swap_add, u64 compare, u64 *orig)
{
	struct sroce_mr_access acc;
	struct sroce_seg seg;
	atomic64_t *p;
	u32 chunk;
	int err = 0;

	if (sroce_rkey_seg(qp, rkey, va, sizeof(u64),
			   wqe_opcode == SROCE_WQE_ATOMIC_WRITE ?
			   IB_ACCESS_REMOTE_WRITE : IB_ACCESS_REMOTE_ATOMIC,
			   &seg))
		return -EACCES;
	p = sroce_mr_access_begin(&seg, seg.addr, &chunk, &acc);
	if (!p) {
		err = -EACCES;
		goto out;
	}
	/* Aligned, so all 8 bytes are in the page mapped. */
	if ((uintptr_t)p & (sizeof(u64) - 1))
		err = -EINVAL;
	else if (wqe_opcode == SROCE_WQE_ATOMIC_WRITE)
		atomic64_set_release(p, swap_add);
	else if (wqe_opcode == SROCE_WQE_ATOMIC_CMP_SWP)
		*orig = atomic64_cmpxchg(p, compare, swap_add);
	else
		*orig = atomic64_fetch_add(swap_add, p);
	sroce_mr_access_end(&acc, p);
out:
	sroce_segs_put(&seg, 1);
	return err;
}
