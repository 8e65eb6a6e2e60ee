// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * atomic_write DEV GID_INDEX: ATOMIC_WRITE (ibv_wr_atomic_write) between two
 * RC QPs of one host, each case checked by its completion and by the
 * responder's memory (the 8 bytes written, nothing around them):
 * - the device says it offers it (bit 40 of device_cap_flags_ex);
 * - one write lands, completed as IBV_WC_ATOMIC_WRITE; 32 writes in a
 *   row to 32 words, with one READ/atomic resource each way, land in
 *   order;
 * - refused by the responder, with the memory unchanged: a va that is not
 *   8-byte aligned (IBV_WC_REM_INV_REQ_ERR), an rkey without remote write,
 *   a range past the MR's end, the rkey of an MR deregistered before
 *   (IBV_WC_REM_ACCESS_ERR);
 * - refused at the post: inline data (EINVAL at ibv_wr_complete),
 *   IBV_WR_ATOMIC_WRITE through ibv_post_send (EINVAL), a UC QP asking
 *   for it (EOPNOTSUPP).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include "testlib.h"

#define LEN 4096
#define FILL 0x5a
#define SEND_OPS (IBV_QP_EX_WITH_ATOMIC_WRITE | IBV_QP_EX_WITH_SEND)
#define DEVICE_ATOMIC_WRITE (1ULL << 40)

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static union ibv_gid gid;
static int gid_index;
static uint8_t *rem, want[LEN];
static struct ibv_mr *rmr;

static bool rem_as_wanted(void)
{
	return !memcmp(rem, want, LEN);
}

/* A connected pair; qp[0] posts, qp[1]'s memory is rem. */
static void make_pair(struct tl_rc_pair *p)
{
	if (tl_rc_pair_create(p, ctx, pd, pd, SEND_OPS, &gid, gid_index))
		tl_die("an RC pair with ATOMIC_WRITE");
}

/* Posts one signaled ATOMIC_WRITE of value to (rkey, va). */
static int post_write(struct tl_rc_pair *p, uint64_t id, uint32_t rkey,
		      uint64_t va, const void *value, unsigned int flags)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(p->qp[0]);

	ibv_wr_start(x);
	x->wr_id = id;
	x->wr_flags = IBV_SEND_SIGNALED | flags;
	ibv_wr_atomic_write(x, rkey, va, value);
	return ibv_wr_complete(x);
}

/* The status of the next completion of cq, -1 if none came. */
static int status_of(struct ibv_cq *cq, struct ibv_wc *wc)
{
	return tl_wait_wc(cq, wc, 10) ? (int)wc->status : -1;
}

static void device_cap(void)
{
	struct ibv_device_attr_ex attr = {};

	tl_check(!ibv_query_device_ex(ctx, NULL, &attr) &&
		 (attr.device_cap_flags_ex & DEVICE_ATOMIC_WRITE),
		 "the device offers ATOMIC_WRITE (device_cap_flags_ex bit 40)");
}

static void writes(void)
{
	const uint8_t value[8] = "ABCDEFGH";
	struct tl_rc_pair p;
	struct ibv_wc wc;
	uint64_t v, i, j;
	bool ok = true;
	int st;

	make_pair(&p);
	st = post_write(&p, 1, rmr->rkey, (uintptr_t)rem + 64, value, 0);
	tl_check(!st, "ibv_wr_atomic_write posts (%d)", st);
	st = status_of(p.cq[0], &wc);
	memcpy(want + 64, value, 8);
	tl_check(st == IBV_WC_SUCCESS && wc.wr_id == 1 &&
		 wc.opcode == IBV_WC_ATOMIC_WRITE && rem_as_wanted(),
		 "one ATOMIC_WRITE: IBV_WC_ATOMIC_WRITE, its 8 bytes at va + 64 and nothing else (%d, opcode %d)",
		 st, st == IBV_WC_SUCCESS ? (int)wc.opcode : -1);

	/* 32 in a row, 8 posted at a time: the requester's rd limit is 1. */
	for (i = 0; i < 32 && ok; i += 8) {
		for (j = i; j < i + 8 && ok; j++) {
			v = 0x0102030405060708ULL * (j + 1);
			ok = !post_write(&p, 100 + j, rmr->rkey,
					 (uintptr_t)rem + 1024 + 8 * j, &v, 0);
			memcpy(want + 1024 + 8 * j, &v, 8);
		}
		for (j = i; j < i + 8 && ok; j++)
			ok = status_of(p.cq[0], &wc) == IBV_WC_SUCCESS &&
			     wc.wr_id == 100 + j &&
			     wc.opcode == IBV_WC_ATOMIC_WRITE;
	}
	tl_check(ok && rem_as_wanted(),
		 "32 ATOMIC_WRITEs in a row complete in order and each word holds its value");
	tl_check(!tl_wait_wc(p.cq[1], &wc, 0),
		 "the responder's CQ has no completion: ATOMIC_WRITE takes no receive");
	tl_rc_pair_destroy(&p);
}

/* An ATOMIC_WRITE the responder refuses: status want, memory unchanged. */
static void refused(const char *what, uint32_t rkey, uint64_t va, int want_st)
{
	const uint64_t v = 0xfeedfacecafebeefULL;
	struct tl_rc_pair p;
	struct ibv_wc wc;
	int st;

	make_pair(&p);
	st = post_write(&p, 7, rkey, va, &v, 0);
	if (!st)
		st = status_of(p.cq[0], &wc);
	else
		st = -2;
	tl_check(st == want_st && rem_as_wanted(), "%s: %s, memory unchanged (%s)",
		 what, ibv_wc_status_str(want_st),
		 st >= 0 ? ibv_wc_status_str(st) : "no completion");
	tl_rc_pair_destroy(&p);
}

static void responder_refusals(void)
{
	struct ibv_mr *ro, *gone;
	uint32_t gone_key;

	refused("a va 4 bytes past a word", rmr->rkey, (uintptr_t)rem + 68,
		IBV_WC_REM_INV_REQ_ERR);
	refused("a range past the MR's end", rmr->rkey, (uintptr_t)rem + LEN,
		IBV_WC_REM_ACCESS_ERR);
	ro = ibv_reg_mr(pd, rem, LEN, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	gone = ibv_reg_mr(pd, rem, LEN, IBV_ACCESS_LOCAL_WRITE |
			  IBV_ACCESS_REMOTE_WRITE);
	if (!ro || !gone)
		tl_die("ibv_reg_mr");
	refused("an rkey with remote read and atomic, no remote write",
		ro->rkey, (uintptr_t)rem + 8, IBV_WC_REM_ACCESS_ERR);
	gone_key = gone->rkey;
	ibv_dereg_mr(gone);
	refused("the rkey of an MR deregistered before", gone_key,
		(uintptr_t)rem + 8, IBV_WC_REM_ACCESS_ERR);
	ibv_dereg_mr(ro);
}

static void post_refusals(void)
{
	const uint64_t v = 1;
	struct ibv_sge sge = { (uintptr_t)&v, 8, 0 };
	struct ibv_send_wr wr = {
		.wr_id = 9, .opcode = IBV_WR_ATOMIC_WRITE, .sg_list = &sge,
		.num_sge = 1, .send_flags = IBV_SEND_SIGNALED,
	}, *bad = NULL;
	struct ibv_qp_init_attr_ex init = {
		.qp_type = IBV_QPT_UC, .pd = pd,
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE |
				  IBV_QP_EX_WITH_ATOMIC_WRITE,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct tl_rc_pair p;
	struct ibv_qp *uc;
	struct ibv_wc wc;
	int ret;

	make_pair(&p);
	ret = post_write(&p, 8, rmr->rkey, (uintptr_t)rem + 8, &v,
			 IBV_SEND_INLINE);
	tl_check(ret == EINVAL, "ATOMIC_WRITE with IBV_SEND_INLINE: EINVAL at ibv_wr_complete (%d)",
		 ret);
	wr.wr.rdma.remote_addr = (uintptr_t)rem + 8;
	wr.wr.rdma.rkey = rmr->rkey;
	ret = ibv_post_send(p.qp[0], &wr, &bad);
	tl_check(ret == EINVAL && bad == &wr,
		 "IBV_WR_ATOMIC_WRITE through ibv_post_send: EINVAL (%d)", ret);
	tl_check(!tl_wait_wc(p.cq[0], &wc, 1) && rem_as_wanted(),
		 "nothing refused was sent: no completion, the memory unchanged");
	tl_rc_pair_destroy(&p);

	init.send_cq = init.recv_cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	if (!init.send_cq)
		tl_die("ibv_create_cq");
	errno = 0;
	uc = ibv_create_qp_ex(ctx, &init);
	tl_check(!uc && errno == EOPNOTSUPP,
		 "a UC QP asking for ATOMIC_WRITE is refused with EOPNOTSUPP (%d)",
		 errno);
	if (uc)
		ibv_destroy_qp(uc);
	ibv_destroy_cq(init.send_cq);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: atomic_write DEV GID_INDEX\n");
		return 2;
	}
	gid_index = atoi(argv[2]);
	ctx = tl_open_with_gid(argv[1], gid_index, &gid);
	pd = ibv_alloc_pd(ctx);
	rem = aligned_alloc(4096, LEN);
	if (!pd || !rem)
		tl_die("setup");
	memset(rem, FILL, LEN);
	memcpy(want, rem, LEN);
	rmr = ibv_reg_mr(pd, rem, LEN, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE);
	if (!rmr)
		tl_die("ibv_reg_mr");

	device_cap();
	writes();
	responder_refusals();
	post_refusals();

	ibv_dereg_mr(rmr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return tl_exit_status();
}
