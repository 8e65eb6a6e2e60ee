// SPDX-License-Identifier: GPL-2.0
/*
 * Fast registration, invalidation and SEND with invalidate as a kernel
 * storage ULP uses them, on one sroce device (the same-host shortcut).
 *
 * Loading the module runs every check once, releases everything it made
 * and logs TAP-style lines,
 * "sroce_frwr_test: ok - ..." or "... not ok - ...", then a summary line
 * "sroce_frwr_test: N passed, M failed"; tests/vm/t_verbs_mr_ops.sh reads them.
 * Parameters: dev (the device, default sroce0) and gid_index (a GID of it
 * that routes to itself).
 *
 * With bench=N it runs no check but times N cycles of REG_MR + LOCAL_INV
 * (the register/invalidate pair of every storage I/O) on any device that
 * supports them, FT_BENCH_DEPTH cycles in flight, and logs
 * "sroce_frwr_test: bench: N cycles in T us"; scripts/lab/bench.sh uses it.
 *
 * QP pairs: a (the ULP's side, owning the MRs) and b (its peer) in one
 * PD; c and d in another. A check that puts a QP in the error state ends
 * by connecting its pair again.
 */
#include <linux/delay.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>
#include "kqp.h"

static char *dev_name_param = "sroce0";
module_param_named(dev, dev_name_param, charp, 0444);
static int gid_index;
module_param(gid_index, int, 0444);
static int bench;
module_param(bench, int, 0444);

#define FT_BUF 8192		/* each of the two blocks the MR maps */
#define FT_SG_OFFSET 100	/* the MR starts this far into block 0 */
#define FT_SRC 16384
#define FT_FILL 0xa5
#define FT_BENCH_DEPTH 4	/* MRs, each in one cycle at a time */

struct ft_pair {
	struct ib_qp *q[2];
	struct ib_cq *cq[2];
	u32 psn;
};

struct ft_ctx {
	struct ib_device *dev;
	struct ib_pd *pd, *pd2;
	struct ft_pair ab, cd;
	u8 *blk[2];		/* the fast-registration MR's memory */
	u8 *src;		/* b's memory: local_dma_lkey */
	struct scatterlist sg[2];
	u64 wr_id;
	int passed, failed;
};

static void ft_check(struct ft_ctx *t, bool cond, const char *fmt, ...)
{
	struct va_format vaf;
	va_list ap;

	va_start(ap, fmt);
	vaf.fmt = fmt;
	vaf.va = &ap;
	pr_info("sroce_frwr_test: %s - %pV\n", cond ? "ok" : "not ok", &vaf);
	va_end(ap);
	if (cond)
		t->passed++;
	else
		t->failed++;
}

/* RESET, then INIT, RTR and RTS aimed at peer; fresh PSNs each time. */
static int ft_connect_one(struct ft_ctx *t, struct ib_qp *qp, u32 peer_qpn,
			  u32 psn)
{
	struct ib_qp_attr attr = {};
	union ib_gid gid;
	int err;

	err = rdma_query_gid(t->dev, 1, gid_index, &gid);
	if (err)
		return err;
	attr.qp_state = IB_QPS_RESET;
	err = kqp_modify(qp, &attr, IB_QP_STATE) ?:
	      kqp_to_rtr(qp, peer_qpn, &gid, gid_index, psn);
	if (err)
		return err;
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTS;
	attr.sq_psn = psn;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.max_rd_atomic = 16;
	return kqp_modify(qp, &attr, IB_QP_STATE | IB_QP_SQ_PSN |
			  IB_QP_TIMEOUT | IB_QP_RETRY_CNT | IB_QP_RNR_RETRY |
			  IB_QP_MAX_QP_RD_ATOMIC);
}

static int ft_connect(struct ft_ctx *t, struct ft_pair *p)
{
	int err;

	p->psn = (p->psn + 0x1000) & 0xffffff;
	err = ft_connect_one(t, p->q[0], p->q[1]->qp_num, p->psn);
	return err ?: ft_connect_one(t, p->q[1], p->q[0]->qp_num, p->psn);
}

static int ft_pair_create(struct ft_ctx *t, struct ft_pair *p,
			  struct ib_pd *pd)
{
	struct ib_qp_init_attr init = {};
	int i;

	for (i = 0; i < 2; i++) {
		p->cq[i] = ib_alloc_cq(t->dev, NULL, 64, 0, IB_POLL_DIRECT);
		if (IS_ERR(p->cq[i]))
			return PTR_ERR(p->cq[i]);
		init.send_cq = p->cq[i];
		init.recv_cq = p->cq[i];
		init.qp_type = IB_QPT_RC;
		init.sq_sig_type = IB_SIGNAL_REQ_WR;
		init.cap.max_send_wr = 16;
		init.cap.max_recv_wr = 16;
		init.cap.max_send_sge = 2;
		init.cap.max_recv_sge = 2;
		p->q[i] = ib_create_qp(pd, &init);
		if (IS_ERR(p->q[i]))
			return PTR_ERR(p->q[i]);
	}
	return ft_connect(t, p);
}

static void ft_pair_destroy(struct ft_pair *p)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (!IS_ERR_OR_NULL(p->q[i]))
			ib_destroy_qp(p->q[i]);
		if (!IS_ERR_OR_NULL(p->cq[i]))
			ib_free_cq(p->cq[i]);
	}
}

/*
 * The completion of wr_id on cq (others, such as flushes of an earlier
 * check, are skipped); false after 5 s without it.
 */
static bool ft_wait(struct ib_cq *cq, u64 wr_id, struct ib_wc *wc)
{
	unsigned long deadline = jiffies + 5 * HZ;

	while (time_before(jiffies, deadline)) {
		if (ib_poll_cq(cq, 1, wc) == 1) {
			if (wc->wr_id == wr_id)
				return true;
			continue;
		}
		usleep_range(200, 1000);
	}
	return false;
}

/* Nothing more arrives on cq within 100 ms. */
static bool ft_quiet(struct ib_cq *cq)
{
	struct ib_wc wc;

	msleep(100);
	return ib_poll_cq(cq, 1, &wc) == 0;
}

/* Posts wr (signaled) on qp and returns its completion status, or -1. */
static int ft_run(struct ft_ctx *t, struct ib_qp *qp, struct ib_cq *cq,
		  struct ib_send_wr *wr, struct ib_wc *wc)
{
	const struct ib_send_wr *bad;

	wr->wr_id = ++t->wr_id;
	wr->send_flags |= IB_SEND_SIGNALED;
	if (ib_post_send(qp, wr, &bad))
		return -1;
	if (!ft_wait(cq, wr->wr_id, wc))
		return -1;
	return wc->status;
}

static int ft_reg(struct ft_ctx *t, struct ib_mr *mr, u32 key, int access,
		  struct ib_wc *wc)
{
	struct ib_reg_wr reg = {
		.wr.opcode = IB_WR_REG_MR,
		.mr = mr,
		.key = key,
		.access = access,
	};

	return ft_run(t, t->ab.q[0], t->ab.cq[0], &reg.wr, wc);
}

static int ft_local_inv(struct ft_ctx *t, u32 key, struct ib_wc *wc)
{
	struct ib_send_wr wr = {
		.opcode = IB_WR_LOCAL_INV,
		.ex.invalidate_rkey = key,
	};

	return ft_run(t, t->ab.q[0], t->ab.cq[0], &wr, wc);
}

/* b READs or WRITEs len bytes at iova under rkey from/to src + off. */
static int ft_rdma(struct ft_ctx *t, enum ib_wr_opcode op, u64 iova, u32 rkey,
		   u32 off, u32 len)
{
	struct ib_sge sge = {
		.addr = (uintptr_t)t->src + off,
		.length = len,
		.lkey = t->pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr.opcode = op,
		.wr.sg_list = &sge,
		.wr.num_sge = 1,
		.remote_addr = iova,
		.rkey = rkey,
	};
	struct ib_wc wc;

	return ft_run(t, t->ab.q[1], t->ab.cq[1], &wr.wr, &wc);
}

/* The byte the MR's iova + off lands on, across the two blocks. */
static u8 *ft_mr_byte(struct ft_ctx *t, u32 off)
{
	off += FT_SG_OFFSET;
	return off < FT_BUF ? t->blk[0] + off : t->blk[1] + off - FT_BUF;
}

/* Bytes [off, off + len) of the MR hold src + soff; the rest is FT_FILL. */
static bool ft_mr_holds(struct ft_ctx *t, u32 off, u32 len, u32 soff)
{
	u32 i;

	for (i = 0; i < 2 * FT_BUF - FT_SG_OFFSET; i++) {
		u8 want = i >= off && i < off + len ? t->src[soff + i - off] :
						      FT_FILL;

		if (*ft_mr_byte(t, i) != want)
			return false;
	}
	/* Before the MR's start, in block 0: never written. */
	return !memchr_inv(t->blk[0], FT_FILL, FT_SG_OFFSET);
}

static void ft_fill(struct ft_ctx *t)
{
	memset(t->blk[0], FT_FILL, FT_BUF);
	memset(t->blk[1], FT_FILL, FT_BUF);
}

/* The MR mapped to both blocks, from FT_SG_OFFSET on. */
static int ft_map(struct ft_ctx *t, struct ib_mr *mr)
{
	unsigned int off = FT_SG_OFFSET;

	return ib_map_mr_sg(mr, t->sg, 2, &off, PAGE_SIZE);
}

/* A SEND with invalidate from b (pair p) naming key; a takes it. */
static void ft_send_inv(struct ft_ctx *t, struct ft_pair *p, u32 key,
			int *send_status, struct ib_wc *rwc)
{
	struct ib_sge rsge = {
		.addr = (uintptr_t)t->src + FT_SRC / 2,
		.length = 64,
		.lkey = p->q[0]->pd->local_dma_lkey,
	};
	struct ib_recv_wr rwr = { .sg_list = &rsge, .num_sge = 1 };
	struct ib_sge sge = {
		.addr = (uintptr_t)t->src,
		.length = 32,
		.lkey = p->q[1]->pd->local_dma_lkey,
	};
	struct ib_send_wr wr = {
		.opcode = IB_WR_SEND_WITH_INV,
		.sg_list = &sge,
		.num_sge = 1,
		.ex.invalidate_rkey = key,
	};
	const struct ib_recv_wr *bad;
	struct ib_wc wc;

	rwr.wr_id = ++t->wr_id;
	rwc->status = -1;
	*send_status = -1;
	if (ib_post_recv(p->q[0], &rwr, &bad))
		return;
	*send_status = ft_run(t, p->q[1], p->cq[1], &wr, &wc);
	if (!ft_wait(p->cq[0], rwr.wr_id, rwc))
		rwc->status = -1;
}

static void ft_checks(struct ft_ctx *t)
{
	u32 len = 2 * FT_BUF - FT_SG_OFFSET, key;
	struct ib_mr *mr, *mr2, *big;
	int n, st, sst;
	struct ib_wc wc;
	u64 iova;

	big = ib_alloc_mr(t->pd, IB_MR_TYPE_MEM_REG,
			  t->dev->attrs.max_fast_reg_page_list_len + 1);
	ft_check(t, IS_ERR(big), "alloc_mr past max_fast_reg_page_list_len fails");
	if (!IS_ERR(big))
		ib_dereg_mr(big);
	ft_check(t, t->dev->attrs.max_fast_reg_page_list_len >= 512,
		 "max_fast_reg_page_list_len %u >= 512",
		 t->dev->attrs.max_fast_reg_page_list_len);
	mr = ib_alloc_mr(t->pd, IB_MR_TYPE_MEM_REG,
			 t->dev->attrs.max_fast_reg_page_list_len);
	ft_check(t, !IS_ERR(mr), "alloc_mr(MEM_REG, max)");
	if (IS_ERR(mr))
		return;
	mr2 = ib_alloc_mr(t->pd2, IB_MR_TYPE_MEM_REG, 4);
	if (IS_ERR(mr2)) {
		ft_check(t, false, "alloc_mr in a second PD");
		goto out_mr;
	}

	/* 2 blocks of 2 pages: 4 pages, the first from FT_SG_OFFSET. */
	n = ft_map(t, mr);
	ft_check(t, n == 2 && mr->length == len &&
		 mr->iova == (uintptr_t)t->blk[0] + FT_SG_OFFSET,
		 "map_mr_sg maps both entries (%d), length %llu", n, mr->length);

	ft_fill(t);
	st = ft_rdma(t, IB_WR_RDMA_WRITE, mr->iova, mr->rkey, 0, 16);
	ft_check(t, st == IB_WC_REM_ACCESS_ERR && ft_mr_holds(t, 0, 0, 0),
		 "a WRITE to a never registered MR fails (%d), nothing lands", st);
	ft_connect(t, &t->ab);

	/* The consumer's own iova upper bits, as xprtrdma sets them. */
	iova = (mr->iova & 0xffffffffULL) | (0x5a5a5a5aULL << 32);
	mr->iova = iova;
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	key = mr->rkey;
	st = ft_reg(t, mr, key, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
		    IB_ACCESS_REMOTE_READ, &wc);
	ft_check(t, st == IB_WC_SUCCESS && wc.opcode == IB_WC_REG_MR,
		 "REG_MR completes (status %d, opcode %d)", st, wc.opcode);

	/* Across the end of block 0 into block 1: the page list at work. */
	st = ft_rdma(t, IB_WR_RDMA_WRITE, iova + 7000, key, 5, 3000);
	ft_check(t, st == IB_WC_SUCCESS && ft_mr_holds(t, 7000, 3000, 5),
		 "a WRITE across both blocks lands there and nowhere else (%d)", st);
	memset(t->src + 8192, 0, 3000);
	st = ft_rdma(t, IB_WR_RDMA_READ, iova + 7000, key, 8192, 3000);
	ft_check(t, st == IB_WC_SUCCESS && !memcmp(t->src + 8192, t->src + 5, 3000),
		 "a READ returns those bytes (%d)", st);
	st = ft_rdma(t, IB_WR_RDMA_WRITE, iova + len - 8, key, 0, 16);
	ft_check(t, st == IB_WC_REM_ACCESS_ERR &&
		 ft_mr_holds(t, 7000, 3000, 5),
		 "a WRITE past the MR's end fails (%d), nothing lands", st);
	ft_connect(t, &t->ab);
	st = ft_rdma(t, IB_WR_RDMA_WRITE, iova, key ^ 1, 0, 16);
	ft_check(t, st == IB_WC_REM_ACCESS_ERR,
		 "a WRITE with another key variant fails (%d)", st);
	ft_connect(t, &t->ab);

	st = ft_reg(t, mr, key, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE,
		    &wc);
	ft_check(t, st == IB_WC_LOC_QP_OP_ERR,
		 "REG_MR of a valid MR fails (%d)", st);
	ft_connect(t, &t->ab);
	st = ft_rdma(t, IB_WR_RDMA_READ, iova, key, 0, 16);
	ft_check(t, st == IB_WC_SUCCESS,
		 "the MR stays valid with its access after that (%d)", st);

	/* Remote invalidation. */
	ft_send_inv(t, &t->ab, key, &sst, &wc);
	ft_check(t, sst == IB_WC_SUCCESS && wc.status == IB_WC_SUCCESS &&
		 (wc.wc_flags & IB_WC_WITH_INVALIDATE) &&
		 wc.ex.invalidate_rkey == key && wc.opcode == IB_WC_RECV &&
		 wc.byte_len == 32,
		 "SEND_WITH_INV: send %d, recv %d flags %#x rkey %#x", sst,
		 wc.status, wc.wc_flags, wc.ex.invalidate_rkey);
	ft_fill(t);
	st = ft_rdma(t, IB_WR_RDMA_WRITE, iova, key, 0, 16);
	ft_check(t, st == IB_WC_REM_ACCESS_ERR && ft_mr_holds(t, 0, 0, 0),
		 "a WRITE after remote invalidation fails (%d), nothing lands", st);
	ft_connect(t, &t->ab);

	/* Registered again under a new key: only the new key works. */
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	st = ft_reg(t, mr, mr->rkey, IB_ACCESS_LOCAL_WRITE |
		    IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ, &wc);
	ft_check(t, st == IB_WC_SUCCESS, "REG_MR after invalidation (%d)", st);
	st = ft_rdma(t, IB_WR_RDMA_WRITE, iova, key, 0, 16);
	ft_check(t, st == IB_WC_REM_ACCESS_ERR && ft_mr_holds(t, 0, 0, 0),
		 "the old key stays dead (%d)", st);
	ft_connect(t, &t->ab);
	key = mr->rkey;
	st = ft_rdma(t, IB_WR_RDMA_WRITE, iova + 100, key, 64, 200);
	ft_check(t, st == IB_WC_SUCCESS && ft_mr_holds(t, 100, 200, 64),
		 "the new key writes (%d)", st);

	/* Local invalidation. */
	st = ft_local_inv(t, key, &wc);
	ft_check(t, st == IB_WC_SUCCESS && wc.opcode == IB_WC_LOCAL_INV,
		 "LOCAL_INV completes (status %d, opcode %d)", st, wc.opcode);
	st = ft_rdma(t, IB_WR_RDMA_READ, iova, key, 0, 16);
	ft_check(t, st == IB_WC_REM_ACCESS_ERR,
		 "a READ after local invalidation fails (%d)", st);
	ft_connect(t, &t->ab);
	st = ft_local_inv(t, key ^ 0x80, &wc);
	ft_check(t, st == IB_WC_LOC_QP_OP_ERR,
		 "LOCAL_INV of a key the MR does not have fails (%d)", st);
	ft_connect(t, &t->ab);
	st = ft_local_inv(t, mr2->rkey, &wc);
	ft_check(t, st == IB_WC_LOC_QP_OP_ERR,
		 "LOCAL_INV of another PD's MR fails (%d)", st);
	ft_connect(t, &t->ab);
	st = ft_local_inv(t, t->pd->local_dma_lkey, &wc);
	ft_check(t, st == IB_WC_LOC_QP_OP_ERR,
		 "LOCAL_INV of the DMA MR's key fails (%d)", st);
	ft_connect(t, &t->ab);

	/* A REG_MR past the pages mapped, and one with a bad page size. */
	mr->length = 4 * PAGE_SIZE;
	st = ft_reg(t, mr, mr->rkey, IB_ACCESS_LOCAL_WRITE, &wc);
	ft_check(t, st == IB_WC_LOC_QP_OP_ERR,
		 "REG_MR longer than the pages mapped fails (%d)", st);
	ft_connect(t, &t->ab);
	mr->length = len;
	mr->page_size = 3000;
	st = ft_reg(t, mr, mr->rkey, IB_ACCESS_LOCAL_WRITE, &wc);
	ft_check(t, st == IB_WC_LOC_QP_OP_ERR,
		 "REG_MR with a page size not a power of two fails (%d)", st);
	ft_connect(t, &t->ab);
	mr->page_size = PAGE_SIZE;
	st = ft_reg(t, mr, mr->rkey, IB_ACCESS_REMOTE_WRITE, &wc);
	ft_check(t, st == IB_WC_LOC_QP_OP_ERR,
		 "REG_MR with remote write and no local write fails (%d)", st);
	ft_connect(t, &t->ab);
	st = ft_reg(t, mr2, mr2->rkey, IB_ACCESS_LOCAL_WRITE, &wc);
	ft_check(t, st == IB_WC_LOC_QP_OP_ERR,
		 "REG_MR of another PD's MR fails (%d)", st);
	ft_connect(t, &t->ab);

	/* Read-only: a WRITE fails, a READ works. */
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	key = mr->rkey;
	st = ft_reg(t, mr, key, IB_ACCESS_REMOTE_READ, &wc);
	ft_fill(t);
	ft_check(t, st == IB_WC_SUCCESS, "REG_MR read-only (%d)", st);
	st = ft_rdma(t, IB_WR_RDMA_WRITE, iova, key, 0, 16);
	ft_check(t, st == IB_WC_REM_ACCESS_ERR && ft_mr_holds(t, 0, 0, 0),
		 "a WRITE to a read-only MR fails (%d)", st);
	ft_connect(t, &t->ab);
	st = ft_rdma(t, IB_WR_RDMA_READ, iova + 4000, key, 0, 200);
	ft_check(t, st == IB_WC_SUCCESS && !memchr_inv(t->src, FT_FILL, 200),
		 "a READ of a read-only MR works (%d)", st);

	/*
	 * What iSER and the NFS client post: LOCAL_INV and REG_MR
	 * unsignaled, chained before a signaled SEND; one completion.
	 */
	{
		struct ib_reg_wr reg = {
			.wr.opcode = IB_WR_REG_MR,
			.mr = mr,
			.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE,
		};
		struct ib_send_wr inv = {
			.opcode = IB_WR_LOCAL_INV,
			.ex.invalidate_rkey = key,
			.next = &reg.wr,
		};
		struct ib_sge sge = {
			.addr = (uintptr_t)t->src,
			.length = 8,
			.lkey = t->pd->local_dma_lkey,
		};
		struct ib_send_wr send = {
			.opcode = IB_WR_SEND,
			.sg_list = &sge,
			.num_sge = 1,
			.send_flags = IB_SEND_SIGNALED,
		};
		struct ib_sge rsge = sge;
		struct ib_recv_wr rwr = { .sg_list = &rsge, .num_sge = 1 };
		const struct ib_send_wr *bad;
		const struct ib_recv_wr *rbad;

		rsge.addr += FT_SRC / 2;
		ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
		reg.key = mr->rkey;
		reg.wr.next = &send;
		send.wr_id = ++t->wr_id;
		rwr.wr_id = ++t->wr_id;
		st = ib_post_recv(t->ab.q[1], &rwr, &rbad) ?:
		     ib_post_send(t->ab.q[0], &inv, &bad);
		ft_check(t, !st && ft_wait(t->ab.cq[0], send.wr_id, &wc) &&
			 wc.status == IB_WC_SUCCESS && ft_quiet(t->ab.cq[0]),
			 "LOCAL_INV + REG_MR + SEND unsignaled but the SEND: one completion");
		ft_wait(t->ab.cq[1], rwr.wr_id, &wc);
		st = ft_rdma(t, IB_WR_RDMA_WRITE, iova, key, 0, 16);
		ft_check(t, st == IB_WC_REM_ACCESS_ERR,
			 "the chain's LOCAL_INV took the old key (%d)", st);
		ft_connect(t, &t->ab);
		ft_fill(t);
		st = ft_rdma(t, IB_WR_RDMA_WRITE, iova + 9000, mr->rkey, 0, 64);
		ft_check(t, st == IB_WC_SUCCESS && ft_mr_holds(t, 9000, 64, 0),
			 "the chain's REG_MR gave the new key (%d)", st);
	}

	/* SEND_WITH_INV naming a key the responder may not invalidate. */
	ft_send_inv(t, &t->ab, t->pd->local_dma_lkey, &sst, &wc);
	ft_check(t, sst == IB_WC_REM_INV_REQ_ERR &&
		 wc.status == IB_WC_REM_INV_REQ_ERR,
		 "SEND_WITH_INV of the DMA MR's key fails on both sides (%d, %d)",
		 sst, wc.status);
	ft_connect(t, &t->ab);
	/* mr2, valid in pd2 through c, named over the a/b pair in pd. */
	n = ib_map_mr_sg(mr2, t->sg, 1, NULL, PAGE_SIZE);
	{
		struct ib_reg_wr reg = {
			.wr.opcode = IB_WR_REG_MR,
			.mr = mr2,
			.key = mr2->rkey,
			.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE,
		};

		st = ft_run(t, t->cd.q[0], t->cd.cq[0], &reg.wr, &wc);
	}
	ft_check(t, n == 1 && st == IB_WC_SUCCESS, "REG_MR in the second PD (%d)",
		 st);
	ft_send_inv(t, &t->ab, mr2->rkey, &sst, &wc);
	ft_check(t, sst == IB_WC_REM_INV_REQ_ERR &&
		 wc.status == IB_WC_REM_INV_REQ_ERR,
		 "SEND_WITH_INV of another PD's key fails (%d, %d)", sst,
		 wc.status);
	ft_connect(t, &t->ab);
	ft_send_inv(t, &t->cd, mr2->rkey, &sst, &wc);
	ft_check(t, sst == IB_WC_SUCCESS && wc.status == IB_WC_SUCCESS &&
		 wc.ex.invalidate_rkey == mr2->rkey,
		 "which stayed valid: its own PD's SEND_WITH_INV takes it (%d, %d)",
		 sst, wc.status);

	ib_dereg_mr(mr2);
out_mr:
	ib_dereg_mr(mr);
}

/* The next completion on cq, busy-polled; false after 5 s or on an error. */
static bool ft_bench_reap(struct ib_cq *cq, u64 wr_id)
{
	unsigned long deadline = jiffies + 5 * HZ;
	struct ib_wc wc;

	while (ib_poll_cq(cq, 1, &wc) != 1) {
		if (time_after(jiffies, deadline))
			return false;
		cond_resched();
	}
	return wc.status == IB_WC_SUCCESS && wc.wr_id == wr_id;
}

/* bench cycles of REG_MR (unsignaled) + LOCAL_INV (signaled) on a's QP;
 * cycle i uses MR i % FT_BENCH_DEPTH once cycle i - FT_BENCH_DEPTH is done.
 */
static void ft_bench(struct ft_ctx *t)
{
	struct ib_mr *mr[FT_BENCH_DEPTH] = {};
	const struct ib_send_wr *bad;
	int i, done = 0, ok = 1;
	u64 t0;

	for (i = 0; i < FT_BENCH_DEPTH; i++) {
		mr[i] = ib_alloc_mr(t->pd, IB_MR_TYPE_MEM_REG, 8);
		if (IS_ERR(mr[i])) {
			pr_err("sroce_frwr_test: bench: alloc_mr %ld\n",
			       PTR_ERR(mr[i]));
			goto out;
		}
	}
	t0 = ktime_get_ns();
	for (i = 0; i < bench && ok; i++) {
		struct ib_mr *m = mr[i % FT_BENCH_DEPTH];
		struct ib_send_wr inv = {
			.opcode = IB_WR_LOCAL_INV,
			.send_flags = IB_SEND_SIGNALED,
			.wr_id = i,
		};
		struct ib_reg_wr reg = {
			.wr.opcode = IB_WR_REG_MR,
			.wr.next = &inv,
			.mr = m,
			.access = IB_ACCESS_LOCAL_WRITE |
				  IB_ACCESS_REMOTE_WRITE,
		};

		if (i >= FT_BENCH_DEPTH)
			ok = ft_bench_reap(t->ab.cq[0], done++);
		ib_update_fast_reg_key(m, ib_inc_rkey(m->rkey));
		reg.key = m->rkey;
		inv.ex.invalidate_rkey = m->rkey;
		if (ok && (ft_map(t, m) <= 0 ||
			   ib_post_send(t->ab.q[0], &reg.wr, &bad)))
			ok = 0;
	}
	while (ok && done < i)
		ok = ft_bench_reap(t->ab.cq[0], done++);
	if (ok)
		pr_info("sroce_frwr_test: bench: %d cycles in %llu us\n", bench,
			div_u64(ktime_get_ns() - t0, NSEC_PER_USEC));
	else
		pr_err("sroce_frwr_test: bench: failed after %d cycles\n", done);
out:
	for (i = 0; i < FT_BENCH_DEPTH; i++)
		if (!IS_ERR_OR_NULL(mr[i]))
			ib_dereg_mr(mr[i]);
}

static int __init ft_init(void)
{
	struct ft_ctx *t;
	int err = -ENODEV;

	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	t->dev = ib_device_get_by_name(dev_name_param, RDMA_DRIVER_UNKNOWN);
	if (!t->dev)
		goto out_free;
	t->blk[0] = kmalloc(FT_BUF, GFP_KERNEL);
	t->blk[1] = kmalloc(FT_BUF, GFP_KERNEL);
	t->src = kmalloc(FT_SRC, GFP_KERNEL);
	t->pd = ib_alloc_pd(t->dev, 0);
	t->pd2 = ib_alloc_pd(t->dev, 0);
	err = -ENOMEM;
	if (!t->blk[0] || !t->blk[1] || !t->src || IS_ERR(t->pd) ||
	    IS_ERR(t->pd2))
		goto out;
	get_random_bytes(t->src, FT_SRC);
	sg_init_table(t->sg, 2);
	sg_set_buf(&t->sg[0], t->blk[0], FT_BUF);
	sg_set_buf(&t->sg[1], t->blk[1], FT_BUF);
	if (ib_dma_map_sg(t->dev, t->sg, 2, DMA_BIDIRECTIONAL) != 2)
		goto out;
	err = ft_pair_create(t, &t->ab, t->pd) ?:
	      ft_pair_create(t, &t->cd, t->pd2);
	if (err) {
		pr_err("sroce_frwr_test: QP setup failed: %d\n", err);
	} else if (bench > 0) {
		ft_bench(t);
	} else {
		ft_checks(t);
		pr_info("sroce_frwr_test: %d passed, %d failed\n", t->passed,
			t->failed);
	}
	ft_pair_destroy(&t->ab);
	ft_pair_destroy(&t->cd);
	ib_dma_unmap_sg(t->dev, t->sg, 2, DMA_BIDIRECTIONAL);
out:
	if (!IS_ERR_OR_NULL(t->pd))
		ib_dealloc_pd(t->pd);
	if (!IS_ERR_OR_NULL(t->pd2))
		ib_dealloc_pd(t->pd2);
	kfree(t->src);
	kfree(t->blk[1]);
	kfree(t->blk[0]);
	ib_device_put(t->dev);
out_free:
	kfree(t);
	return err;
}

/* Everything was released when the checks ended. */
static void __exit ft_exit(void)
{
}

module_init(ft_init);
module_exit(ft_exit);
MODULE_DESCRIPTION("sroce: fast registration and invalidation checks");
MODULE_LICENSE("GPL");
