// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mr_rereg DEV GID_INDEX: ibv_rereg_mr in every mode. A peer QP WRITEs and
 * READs through the MR's keys after each re-registration: the bytes land
 * in the new buffer and nowhere else, access follows the new rights, the
 * MR serves QPs of its new PD only, and the old keys are dead. Bad
 * requests fail with the documented errors.
 */
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>
#include "testlib.h"

#define LEN 8192

static struct ibv_context *ctx;
static struct ibv_pd *pd, *pd2;
static union ibv_gid gid;
static int gid_index;
static uint8_t *a_buf, *b_buf, *src;

struct pair {
	struct ibv_qp *qp[2];	/* 0 owns the MR under test, 1 is the peer */
	struct ibv_cq *cq[2];
	struct ibv_mr *src_mr;
};

static void make_pair(struct pair *p, struct ibv_pd *owner)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	int i;

	for (i = 0; i < 2; i++) {
		p->cq[i] = ibv_create_cq(ctx, 8, NULL, NULL, 0);
		init.send_cq = init.recv_cq = p->cq[i];
		p->qp[i] = ibv_create_qp(i ? pd : owner, &init);
		if (!p->cq[i] || !p->qp[i])
			tl_die("creating a QP");
	}
	p->src_mr = ibv_reg_mr(pd, src, LEN, IBV_ACCESS_LOCAL_WRITE);
	if (!p->src_mr ||
	    tl_connect_rc_pair(p->qp[0], p->qp[1], &gid, gid_index, 1))
		tl_die("connecting");
}

static void free_pair(struct pair *p)
{
	int i;

	for (i = 0; i < 2; i++) {
		ibv_destroy_qp(p->qp[i]);
		ibv_destroy_cq(p->cq[i]);
	}
	ibv_dereg_mr(p->src_mr);
}

/* The peer's WRITE or READ of len bytes at raddr under rkey: the status. */
static int peer_op(struct ibv_pd *owner, enum ibv_wr_opcode op, uint64_t raddr,
		   uint32_t rkey, uint32_t len)
{
	struct pair p;
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .opcode = op, .num_sge = 1, .sg_list = &sge,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	int st = -1;

	make_pair(&p, owner);
	sge = (struct ibv_sge){ .addr = (uintptr_t)src, .length = len,
				.lkey = p.src_mr->lkey };
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (!ibv_post_send(p.qp[1], &wr, &bad) && tl_wait_wc(p.cq[1], &wc, 10))
		st = wc.status;
	free_pair(&p);
	return st;
}

static void fill(uint8_t *b, uint8_t v)
{
	memset(b, v, LEN);
}

/* b[off, off + len) holds src, the rest of b is v. */
static bool holds(const uint8_t *b, uint32_t off, uint32_t len, uint8_t v)
{
	uint32_t i;

	for (i = 0; i < LEN; i++)
		if (b[i] != (i >= off && i < off + len ? src[i - off] : v))
			return false;
	return true;
}

int main(int argc, char **argv)
{
	uint32_t old_rkey;
	struct ibv_mr *mr;
	int st, ret, i;

	if (argc != 3) {
		fprintf(stderr, "usage: mr_rereg DEV GID_INDEX\n");
		return 2;
	}
	ctx = tl_open_device(argv[1]);
	gid_index = atoi(argv[2]);
	if (ibv_query_gid(ctx, 1, gid_index, &gid))
		tl_die("ibv_query_gid");
	pd = ibv_alloc_pd(ctx);
	pd2 = ibv_alloc_pd(ctx);
	a_buf = aligned_alloc(4096, LEN);
	b_buf = aligned_alloc(4096, LEN);
	src = aligned_alloc(4096, LEN);
	if (!pd || !pd2 || !a_buf || !b_buf || !src)
		tl_die("setup");
	for (i = 0; i < LEN; i++)
		src[i] = (uint8_t)(i * 13 + 5);
	fill(a_buf, 0xaa);
	fill(b_buf, 0xbb);
	mr = ibv_reg_mr(pd, a_buf, LEN, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!mr)
		tl_die("ibv_reg_mr");
	st = peer_op(pd, IBV_WR_RDMA_WRITE, (uintptr_t)a_buf + 100, mr->rkey, 300);
	tl_check(st == IBV_WC_SUCCESS && holds(a_buf, 100, 300, 0xaa),
		 "before: a WRITE lands in the first buffer (%d)", st);

	/* Translation: the second buffer. */
	old_rkey = mr->rkey;
	fill(a_buf, 0xaa);
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, b_buf,
			   LEN, 0);
	tl_check(!ret && mr->addr == b_buf, "rereg: translation (%d)", ret);
	st = peer_op(pd, IBV_WR_RDMA_WRITE, (uintptr_t)b_buf + 4000, mr->rkey,
		     500);
	tl_check(st == IBV_WC_SUCCESS && holds(b_buf, 4000, 500, 0xbb) &&
		 holds(a_buf, 0, 0, 0xaa),
		 "a WRITE lands in the new buffer only (%d)", st);
	if (mr->rkey != old_rkey) {
		st = peer_op(pd, IBV_WR_RDMA_WRITE, (uintptr_t)a_buf, old_rkey, 8);
		tl_check(st == IBV_WC_REM_ACCESS_ERR && holds(a_buf, 0, 0, 0xaa),
			 "the old rkey is dead (%d)", st);
	}

	/* Access: read only. */
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   IBV_ACCESS_REMOTE_READ);
	tl_check(!ret, "rereg: access to remote read only (%d)", ret);
	fill(b_buf, 0xbb);
	st = peer_op(pd, IBV_WR_RDMA_WRITE, (uintptr_t)b_buf, mr->rkey, 64);
	tl_check(st == IBV_WC_REM_ACCESS_ERR && holds(b_buf, 0, 0, 0xbb),
		 "a WRITE is refused now (%d)", st);
	st = peer_op(pd, IBV_WR_RDMA_READ, (uintptr_t)b_buf + 64, mr->rkey, 64);
	tl_check(st == IBV_WC_SUCCESS, "a READ still works (%d)", st);

	/* PD: only QPs of the new PD may use it. */
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0);
	tl_check(!ret && mr->pd == pd2, "rereg: PD (%d)", ret);
	st = peer_op(pd, IBV_WR_RDMA_READ, (uintptr_t)b_buf, mr->rkey, 64);
	tl_check(st == IBV_WC_REM_ACCESS_ERR,
		 "a QP of the old PD is refused (%d)", st);
	st = peer_op(pd2, IBV_WR_RDMA_READ, (uintptr_t)b_buf, mr->rkey, 64);
	tl_check(st == IBV_WC_SUCCESS, "a QP of the new PD is served (%d)", st);

	/* All three at once: back to the first buffer, pd, all rights. */
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION |
			   IBV_REREG_MR_CHANGE_PD | IBV_REREG_MR_CHANGE_ACCESS,
			   pd, a_buf, LEN / 2, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE);
	tl_check(!ret, "rereg: translation, PD and access together (%d)", ret);
	fill(a_buf, 0xaa);
	st = peer_op(pd, IBV_WR_RDMA_WRITE, (uintptr_t)a_buf + 10, mr->rkey, 100);
	tl_check(st == IBV_WC_SUCCESS && holds(a_buf, 10, 100, 0xaa),
		 "a WRITE lands there (%d)", st);
	st = peer_op(pd, IBV_WR_RDMA_WRITE, (uintptr_t)a_buf + LEN / 2 - 8,
		     mr->rkey, 16);
	tl_check(st == IBV_WC_REM_ACCESS_ERR && holds(a_buf, 10, 100, 0xaa),
		 "past the new length is refused (%d)", st);

	/* Requests the kernel refuses; the MR stays as it was. */
	ret = ibv_rereg_mr(mr, 0, NULL, NULL, 0, 0);
	tl_check(ret != 0, "rereg with no flag fails (%d)", ret);
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, NULL, NULL, 0, 0);
	tl_check(ret != 0, "a new PD that is NULL fails, without a crash (%d)",
		 ret);
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   IBV_ACCESS_REMOTE_WRITE);
	tl_check(ret != 0, "remote write without local write fails (%d)", ret);
	st = peer_op(pd, IBV_WR_RDMA_WRITE, (uintptr_t)a_buf + 200, mr->rkey, 8);
	tl_check(st == IBV_WC_SUCCESS, "the MR still works after them (%d)", st);

	tl_check(!ibv_dereg_mr(mr), "the MR is deregistered");
	ibv_dealloc_pd(pd2);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return tl_exit_status();
}
