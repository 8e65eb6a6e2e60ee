// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mw_test DEV GID_INDEX: memory windows on DEV. The owner QP binds windows
 * of its MR; a peer QP writes and reads through the windows' rkeys.
 *
 * - type 1 (ibv_bind_mw): data lands inside the window only, access is
 *   the window's, a rebind moves it and kills the old key;
 * - type 2 (IBV_WR_BIND_MW, ibv_wr_bind_mw): bound to the owner QP (no
 *   other QP may use it), zero-based addressing, invalidation by
 *   LOCAL_INV and by SEND with invalidate, no bind over a valid one;
 * - bind errors (IBV_WC_MW_BIND_ERR): an MR without MW_BIND, a window
 *   past the MR, remote write over an MR without local write, another
 *   PD's window; a type 1 window cannot be invalidated; a window key is
 *   no lkey; a deallocated window's key is dead;
 * - atomics through zero-based windows: one on aligned memory adds, one
 *   whose aligned offset lands on memory that is not 8-byte aligned is
 *   refused (IBV_WC_REM_INV_REQ_ERR) and changes nothing;
 * - on UC QPs: binds of both types and LOCAL_INV work as on RC (a WRITE
 *   through a bound window lands, one through an invalidated key lands
 *   nowhere); SEND with invalidate is refused at the post (no UC opcode
 *   carries it).
 */
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>
#include "testlib.h"

#define LEN 16384

static struct ibv_context *ctx;
static struct ibv_pd *pd, *pd2;
static union ibv_gid gid;
static int gid_index;
static uint8_t *buf, *src;
static struct ibv_mr *mr, *src_mr;

/* qp[0]: the owner of the MR and windows; qp[1]: its peer. */
static void make_pair(struct tl_rc_pair *p)
{
	if (tl_rc_pair_create(p, ctx, pd, pd, IBV_QP_EX_WITH_BIND_MW |
			      IBV_QP_EX_WITH_RDMA_WRITE, &gid, gid_index))
		tl_die("creating and connecting a pair of QPs");
}

static int wait(struct ibv_cq *cq, struct ibv_wc *wc)
{
	return tl_wait_wc(cq, wc, 10) ? (int)wc->status : -1;
}

/* The peer of p WRITEs (or READs) len bytes of src at raddr under rkey. */
static int peer_op(struct tl_rc_pair *p, enum ibv_wr_opcode op, uint64_t raddr,
		   uint32_t rkey, uint32_t len)
{
	/* A READ lands in the second half: the first is what WRITEs send. */
	struct ibv_sge sge = { .addr = (uintptr_t)src, .length = len,
			       .lkey = src_mr->lkey };
	struct ibv_send_wr wr = { .opcode = op, .num_sge = 1, .sg_list = &sge,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;

	if (op == IBV_WR_RDMA_READ)
		sge.addr += LEN / 2;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (ibv_post_send(p->qp[1], &wr, &bad))
		return -1;
	return wait(p->cq[1], &wc);
}

/* The same on a fresh pair, for an access that is to fail. */
static int fresh_op(enum ibv_wr_opcode op, uint64_t raddr, uint32_t rkey,
		    uint32_t len)
{
	struct tl_rc_pair p;
	int st;

	make_pair(&p);
	st = peer_op(&p, op, raddr, rkey, len);
	tl_rc_pair_destroy(&p);
	return st;
}

/* buf[off, off + len) holds src, the rest is 0x5a. */
static bool holds(uint32_t off, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < LEN; i++)
		if (buf[i] != (i >= off && i < off + len ? src[i - off] : 0x5a))
			return false;
	return true;
}

/* Every byte of buf outside [off, off + len) is still 0x5a. */
static bool untouched_but(uint32_t off, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < LEN; i++)
		if ((i < off || i >= off + len) && buf[i] != 0x5a)
			return false;
	return true;
}

static struct ibv_mw_bind_info info(struct ibv_mr *m, uint32_t off,
				    uint32_t len, unsigned int access)
{
	return (struct ibv_mw_bind_info){ .mr = m, .addr = (uintptr_t)buf + off,
					  .length = len,
					  .mw_access_flags = access };
}

static int bind1(struct tl_rc_pair *p, struct ibv_mw *mw,
		 struct ibv_mw_bind_info bi)
{
	struct ibv_mw_bind b = { .wr_id = 11, .send_flags = IBV_SEND_SIGNALED,
				 .bind_info = bi };
	struct ibv_wc wc;

	if (ibv_bind_mw(p->qp[0], mw, &b))
		return -1;
	return wait(p->cq[0], &wc) == IBV_WC_SUCCESS &&
	       wc.opcode == IBV_WC_BIND_MW ? 0 : (int)wc.status;
}

/* A type 2 bind through the ibv_wr_* API (or ibv_post_send). */
static int bind2(struct tl_rc_pair *p, struct ibv_mw *mw, uint32_t rkey,
		 struct ibv_mw_bind_info bi, bool wr_api)
{
	struct ibv_send_wr wr = { .wr_id = 12, .opcode = IBV_WR_BIND_MW,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(p->qp[0]);
	struct ibv_wc wc;

	if (wr_api) {
		ibv_wr_start(qpx);
		qpx->wr_id = 12;
		qpx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_bind_mw(qpx, mw, rkey, &bi);
		if (ibv_wr_complete(qpx))
			return -1;
	} else {
		wr.bind_mw.mw = mw;
		wr.bind_mw.rkey = rkey;
		wr.bind_mw.bind_info = bi;
		if (ibv_post_send(p->qp[0], &wr, &bad))
			return -1;
	}
	return wait(p->cq[0], &wc);
}

static int local_inv(struct tl_rc_pair *p, uint32_t key)
{
	struct ibv_send_wr wr = { .wr_id = 13, .opcode = IBV_WR_LOCAL_INV,
				  .send_flags = IBV_SEND_SIGNALED,
				  .invalidate_rkey = key }, *bad;
	struct ibv_wc wc;

	if (ibv_post_send(p->qp[0], &wr, &bad))
		return -1;
	return wait(p->cq[0], &wc);
}

/*
 * The peer of x SENDs 16 bytes that invalidate key into a receive of x's
 * owner; returns the send's status, *rwc: the receive's completion.
 */
static int send_inv(struct tl_rc_pair *x, uint32_t key, struct ibv_wc *rwc)
{
	struct ibv_sge rsge = { .addr = (uintptr_t)buf + 8192, .length = 64,
				.lkey = mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 21, .sg_list = &rsge,
				   .num_sge = 1 }, *rbad;
	struct ibv_sge sge = { .addr = (uintptr_t)src, .length = 16,
			       .lkey = src_mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 22, .opcode = IBV_WR_SEND_WITH_INV,
				  .sg_list = &sge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED,
				  .invalidate_rkey = key }, *bad;
	struct ibv_wc wc;
	int st;

	memset(rwc, 0, sizeof(*rwc));
	rwc->status = IBV_WC_GENERAL_ERR;
	if (ibv_post_recv(x->qp[0], &rwr, &rbad) ||
	    ibv_post_send(x->qp[1], &wr, &bad))
		return -1;
	st = wait(x->cq[1], &wc);
	if (wait(x->cq[0], rwc) < 0)
		rwc->status = IBV_WC_GENERAL_ERR;
	return st;
}

static void type1(void)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	uint32_t old;
	struct tl_rc_pair p;
	int st;

	if (!mw)
		tl_die("ibv_alloc_mw type 1");
	make_pair(&p);
	memset(buf, 0x5a, LEN);
	st = bind1(&p, mw, info(mr, 4096, 4096, IBV_ACCESS_REMOTE_WRITE |
				IBV_ACCESS_REMOTE_READ));
	tl_check(!st, "type 1: bound (%d)", st);
	st = peer_op(&p, IBV_WR_RDMA_WRITE, (uintptr_t)buf + 4096 + 100,
		     mw->rkey, 3000);
	tl_check(!st && holds(4096 + 100, 3000),
		 "a WRITE through it lands there only (%d)", st);
	st = peer_op(&p, IBV_WR_RDMA_READ, (uintptr_t)buf + 4096 + 100,
		     mw->rkey, 3000);
	tl_check(!st, "a READ through it works (%d)", st);
	tl_rc_pair_destroy(&p);
	st = fresh_op(IBV_WR_RDMA_WRITE, (uintptr_t)buf + 100, mw->rkey, 16);
	tl_check(st == IBV_WC_REM_ACCESS_ERR && holds(4096 + 100, 3000),
		 "outside the window: remote access error (%d)", st);

	/* Rebind read-only elsewhere: the old key dies. */
	make_pair(&p);
	old = mw->rkey;
	st = bind1(&p, mw, info(mr, 8192, 1024, IBV_ACCESS_REMOTE_READ));
	tl_check(!st && mw->rkey != old, "rebound read-only (%d)", st);
	st = peer_op(&p, IBV_WR_RDMA_READ, (uintptr_t)buf + 8192, mw->rkey, 512);
	tl_check(!st, "a READ through the new binding (%d)", st);
	st = peer_op(&p, IBV_WR_RDMA_WRITE, (uintptr_t)buf + 8192, mw->rkey, 8);
	tl_check(st == IBV_WC_REM_ACCESS_ERR && holds(4096 + 100, 3000),
		 "no WRITE through it (%d)", st);
	tl_rc_pair_destroy(&p);
	/* Inside the new binding: only the key can refuse it. */
	st = fresh_op(IBV_WR_RDMA_READ, (uintptr_t)buf + 8192, old, 8);
	tl_check(st == IBV_WC_REM_ACCESS_ERR, "the old key is dead (%d)", st);

	make_pair(&p);
	st = local_inv(&p, mw->rkey);
	tl_check(st == IBV_WC_LOC_QP_OP_ERR,
		 "LOCAL_INV of a type 1 window fails (%d)", st);
	tl_rc_pair_destroy(&p);

	/* Deallocated: its key names nothing. */
	old = mw->rkey;
	tl_check(!ibv_dealloc_mw(mw), "type 1 window deallocated");
	st = fresh_op(IBV_WR_RDMA_READ, (uintptr_t)buf + 8192, old, 8);
	tl_check(st == IBV_WC_REM_ACCESS_ERR,
		 "a deallocated window's key is dead (%d)", st);
}

static void bind_errors(void)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	struct ibv_mw *mw2 = ibv_alloc_mw(pd2, IBV_MW_TYPE_1);
	struct ibv_mr *nobind, *ro;
	struct tl_rc_pair p;
	int st;

	nobind = ibv_reg_mr(pd, buf, LEN, IBV_ACCESS_LOCAL_WRITE |
			    IBV_ACCESS_REMOTE_WRITE);
	ro = ibv_reg_mr(pd, buf, LEN, IBV_ACCESS_REMOTE_READ |
			IBV_ACCESS_MW_BIND);
	if (!mw || !mw2 || !nobind || !ro)
		tl_die("bind_errors setup");
	make_pair(&p);
	st = bind1(&p, mw, info(nobind, 0, 64, IBV_ACCESS_REMOTE_WRITE));
	tl_check(st == IBV_WC_MW_BIND_ERR,
		 "an MR without MW_BIND cannot be bound (%d)", st);
	tl_rc_pair_destroy(&p);
	make_pair(&p);
	st = bind1(&p, mw, info(mr, LEN - 64, 128, IBV_ACCESS_REMOTE_READ));
	tl_check(st == IBV_WC_MW_BIND_ERR, "a window past the MR fails (%d)", st);
	tl_rc_pair_destroy(&p);
	make_pair(&p);
	st = bind1(&p, mw, info(ro, 0, 64, IBV_ACCESS_REMOTE_WRITE));
	tl_check(st == IBV_WC_MW_BIND_ERR,
		 "remote write over an MR without local write fails (%d)", st);
	tl_rc_pair_destroy(&p);
	make_pair(&p);
	st = bind2(&p, mw2, ibv_inc_rkey(mw2->rkey),
		   info(mr, 0, 64, IBV_ACCESS_REMOTE_READ), false);
	tl_check(st == IBV_WC_MW_BIND_ERR, "another PD's window fails (%d)", st);
	tl_rc_pair_destroy(&p);

	/* A window's key used as an lkey. */
	make_pair(&p);
	st = bind1(&p, mw, info(mr, 0, 4096, IBV_ACCESS_REMOTE_READ));
	{
		struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 8,
				       .lkey = mw->rkey };
		struct ibv_send_wr wr = { .opcode = IBV_WR_RDMA_WRITE,
					  .num_sge = 1, .sg_list = &sge,
					  .send_flags = IBV_SEND_SIGNALED },
				   *bad;
		struct ibv_wc wc;

		wr.wr.rdma.remote_addr = (uintptr_t)buf;
		wr.wr.rdma.rkey = mr->rkey;
		st = ibv_post_send(p.qp[0], &wr, &bad) ? -1 :
		     wait(p.cq[0], &wc);
	}
	tl_check(st == IBV_WC_LOC_PROT_ERR, "a window's key is no lkey (%d)", st);
	tl_rc_pair_destroy(&p);
	ibv_dealloc_mw(mw);
	ibv_dealloc_mw(mw2);
	ibv_dereg_mr(nobind);
	ibv_dereg_mr(ro);
}

static void type2(bool wr_api)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	const char *how = wr_api ? "ibv_wr_bind_mw" : "IBV_WR_BIND_MW";
	struct ibv_wc wc;
	struct tl_rc_pair p, q;
	uint32_t key;
	int st;

	if (!mw)
		tl_die("ibv_alloc_mw type 2");
	make_pair(&p);
	memset(buf, 0x5a, LEN);
	key = ibv_inc_rkey(mw->rkey);
	st = bind2(&p, mw, key, info(mr, 2048, 4096, IBV_ACCESS_REMOTE_WRITE |
				     IBV_ACCESS_ZERO_BASED), wr_api);
	tl_check(!st, "type 2 (%s): bound, zero-based (%d)", how, st);
	st = peer_op(&p, IBV_WR_RDMA_WRITE, 1000, key, 2000);
	tl_check(!st && holds(2048 + 1000, 2000),
		 "a WRITE at window offset 1000 lands at 2048 + 1000 (%d)", st);
	st = bind2(&p, mw, ibv_inc_rkey(key),
		   info(mr, 0, 64, IBV_ACCESS_REMOTE_WRITE), wr_api);
	tl_check(st == IBV_WC_MW_BIND_ERR,
		 "no second bind over a valid type 2 window (%d)", st);
	tl_rc_pair_destroy(&p);
	st = fresh_op(IBV_WR_RDMA_WRITE, 0, key, 8);
	tl_check(st == IBV_WC_REM_ACCESS_ERR && holds(2048 + 1000, 2000),
		 "another QP cannot use a type 2 window (%d)", st);

	/* LOCAL_INV, then a bind again, then a SEND with invalidate. */
	make_pair(&p);
	st = bind2(&p, mw, key, info(mr, 0, 4096, IBV_ACCESS_REMOTE_READ),
		   wr_api);
	tl_check(st == IBV_WC_MW_BIND_ERR, "nor from another QP (%d)", st);
	tl_rc_pair_destroy(&p);
	ibv_dealloc_mw(mw);

	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	make_pair(&p);
	key = ibv_inc_rkey(mw->rkey);
	st = bind2(&p, mw, key, info(mr, 0, 4096, IBV_ACCESS_REMOTE_READ),
		   wr_api);
	tl_check(!st, "type 2 window bound for READs at buf (%d)", st);
	st = peer_op(&p, IBV_WR_RDMA_READ, (uintptr_t)buf, key, 8);
	tl_check(!st, "a READ through it works (%d)", st);
	make_pair(&q);
	st = local_inv(&q, key);
	tl_check(!st, "LOCAL_INV of a bound type 2 window on any QP of its PD (%d)",
		 st);
	tl_rc_pair_destroy(&q);
	st = peer_op(&p, IBV_WR_RDMA_READ, (uintptr_t)buf, key, 8);
	tl_check(st == IBV_WC_REM_ACCESS_ERR, "its key is dead after (%d)", st);
	tl_rc_pair_destroy(&p);

	make_pair(&p);
	key = ibv_inc_rkey(key);
	st = bind2(&p, mw, key, info(mr, 0, 4096, IBV_ACCESS_REMOTE_READ),
		   wr_api);
	tl_check(!st, "bound again under a new key (%d)", st);
	/* A SEND with invalidate ends a window only on the QP it is bound to. */
	make_pair(&q);
	st = send_inv(&q, key, &wc);
	tl_check(st == IBV_WC_REM_INV_REQ_ERR &&
		 wc.status == IBV_WC_REM_INV_REQ_ERR,
		 "a SEND_WITH_INV naming it on another QP of the PD fails (%d, receive %d)",
		 st, (int)wc.status);
	tl_rc_pair_destroy(&q);
	st = peer_op(&p, IBV_WR_RDMA_READ, (uintptr_t)buf, key, 8);
	tl_check(!st, "the window still works on its own QP (%d)", st);
	st = send_inv(&p, key, &wc);
	tl_check(!st, "SEND_WITH_INV naming it on its own QP completes (%d)", st);
	tl_check(wc.status == IBV_WC_SUCCESS && (wc.wc_flags & IBV_WC_WITH_INV) &&
		 wc.invalidated_rkey == key,
		 "the receive reports the window's key invalidated");
	st = peer_op(&p, IBV_WR_RDMA_READ, (uintptr_t)buf, key, 8);
	tl_check(st == IBV_WC_REM_ACCESS_ERR,
		 "its key is dead after remote invalidation (%d)", st);
	tl_rc_pair_destroy(&p);
	tl_check(!ibv_dealloc_mw(mw), "type 2 window deallocated");
}

/* The peer of p adds 1 at raddr under rkey; *orig: the value it found. */
static int peer_fetch_add(struct tl_rc_pair *p, uint64_t raddr, uint32_t rkey,
			  uint64_t *orig)
{
	/* The original value lands in src's second half, as READs do. */
	struct ibv_sge sge = { .addr = (uintptr_t)src + LEN / 2, .length = 8,
			       .lkey = src_mr->lkey };
	struct ibv_send_wr wr = { .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
				  .num_sge = 1, .sg_list = &sge,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	int st;

	wr.wr.atomic.remote_addr = raddr;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = 1;
	if (ibv_post_send(p->qp[1], &wr, &bad))
		return -1;
	st = wait(p->cq[1], &wc);
	memcpy(orig, src + LEN / 2, sizeof(*orig));
	return st;
}

/*
 * An atomic's va must be 8-byte aligned, and so must the memory behind it:
 * a zero-based window bound 4 bytes before a page boundary puts window
 * offset 0 on 8 bytes across two pages, which the responder refuses
 * (invalid request) without touching a byte.
 */
static void atomic_alignment(void)
{
	struct ibv_mw *ok = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_mw *off = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	uint64_t orig = 0, want;
	uint32_t key_ok, key_off;
	struct tl_rc_pair p;
	int st;

	if (!ok || !off)
		tl_die("ibv_alloc_mw type 2");
	make_pair(&p);
	memset(buf, 0x5a, LEN);
	memset(&want, 0x5a, sizeof(want));
	key_ok = ibv_inc_rkey(ok->rkey);
	key_off = ibv_inc_rkey(off->rkey);
	st = bind2(&p, ok, key_ok, info(mr, 4096, 64, IBV_ACCESS_REMOTE_ATOMIC |
					IBV_ACCESS_ZERO_BASED), false);
	st = st ?: bind2(&p, off, key_off,
			 info(mr, 4096 - 4, 64, IBV_ACCESS_REMOTE_ATOMIC |
			      IBV_ACCESS_ZERO_BASED), false);
	tl_check(!st, "zero-based windows for atomics at buf + 4096 and + 4092 (%d)",
		 st);
	st = peer_fetch_add(&p, 0, key_ok, &orig);
	want += 1;
	tl_check(!st && orig == want - 1 && !memcmp(buf + 4096, &want, 8) &&
		 untouched_but(4096, 8),
		 "a fetch-and-add through the aligned one adds (%d)", st);
	st = peer_fetch_add(&p, 0, key_off, &orig);
	tl_check(st == IBV_WC_REM_INV_REQ_ERR &&
		 !memcmp(buf + 4096, &want, 8) && untouched_but(4096, 8),
		 "one at offset 0 of the other (buf + 4092) is refused, nothing changed (%d)",
		 st);
	tl_rc_pair_destroy(&p);
	ibv_dealloc_mw(off);
	ibv_dealloc_mw(ok);
}

/* qp[0] owns the windows, as in make_pair(), over UC. */
static void make_uc_pair(struct tl_rc_pair *p)
{
	struct ibv_qp_init_attr_ex init = {
		.qp_type = IBV_QPT_UC, .pd = pd,
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_BIND_MW |
				  IBV_QP_EX_WITH_LOCAL_INV |
				  IBV_QP_EX_WITH_RDMA_WRITE,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct tl_rc_conn c = { .dgid = &gid, .sgid_index = gid_index,
				.sq_psn = 7, .rq_psn = 7,
				.access = IBV_ACCESS_REMOTE_WRITE };
	int i;

	for (i = 0; i < 2; i++) {
		p->cq[i] = ibv_create_cq(ctx, 16, NULL, NULL, 0);
		init.send_cq = init.recv_cq = p->cq[i];
		p->qp[i] = p->cq[i] ? ibv_create_qp_ex(ctx, &init) : NULL;
		if (!p->qp[i])
			tl_die("creating a UC QP");
	}
	c.dest_qpn = p->qp[1]->qp_num;
	if (tl_connect_uc(p->qp[0], &c))
		tl_die("connecting a UC QP");
	c.dest_qpn = p->qp[0]->qp_num;
	if (tl_connect_uc(p->qp[1], &c))
		tl_die("connecting a UC QP");
}

/* Up to 5 s for holds(off, len): a UC WRITE's sender learns nothing. */
static bool lands(uint32_t off, uint32_t len)
{
	int i;

	for (i = 0; i < 500; i++) {
		if (holds(off, len))
			return true;
		usleep(10000);
	}
	return false;
}

static void uc_windows(void)
{
	struct ibv_mw *mw1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	struct ibv_mw *mw2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_sge sge = { (uintptr_t)src, 16, src_mr->lkey };
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND_WITH_INV,
				  .sg_list = &sge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct tl_rc_pair p;
	uint32_t key;
	int st;

	if (!mw1 || !mw2)
		tl_die("ibv_alloc_mw");
	make_uc_pair(&p);
	memset(buf, 0x5a, LEN);
	st = bind1(&p, mw1, info(mr, 4096, 4096, IBV_ACCESS_REMOTE_WRITE));
	tl_check(!st, "UC: a type 1 window is bound (%d)", st);
	st = peer_op(&p, IBV_WR_RDMA_WRITE, (uintptr_t)buf + 4096 + 64,
		     mw1->rkey, 1000);
	tl_check(!st && lands(4096 + 64, 1000),
		 "UC: a WRITE through it lands there only (%d)", st);

	key = ibv_inc_rkey(mw2->rkey);
	st = bind2(&p, mw2, key, info(mr, 12288, 2048, IBV_ACCESS_REMOTE_WRITE |
				      IBV_ACCESS_ZERO_BASED), true);
	tl_check(!st, "UC: a type 2 window is bound to the QP (%d)", st);
	memset(buf, 0x5a, LEN);
	st = peer_op(&p, IBV_WR_RDMA_WRITE, 100, key, 500);
	tl_check(!st && lands(12288 + 100, 500),
		 "UC: a WRITE at its offset 100 lands at 12288 + 100 (%d)", st);
	st = local_inv(&p, key);
	tl_check(!st, "UC: LOCAL_INV of the type 2 window completes (%d)", st);
	memset(buf, 0x5a, LEN);
	st = peer_op(&p, IBV_WR_RDMA_WRITE, 100, key, 500);
	usleep(500000);
	tl_check(!st && untouched_but(0, 0),
		 "UC: a WRITE through the invalidated key lands nowhere (%d)",
		 st);

	wr.invalidate_rkey = key;
	st = ibv_post_send(p.qp[1], &wr, &bad);
	tl_check(st == EINVAL, "UC: SEND_WITH_INV is refused at the post (%d)",
		 st);
	tl_rc_pair_destroy(&p);
	tl_check(!ibv_dealloc_mw(mw1) && !ibv_dealloc_mw(mw2),
		 "UC: windows deallocated");
}

int main(int argc, char **argv)
{
	int i;

	if (argc != 3) {
		fprintf(stderr, "usage: mw_test DEV GID_INDEX\n");
		return 2;
	}
	gid_index = atoi(argv[2]);
	ctx = tl_open_with_gid(argv[1], gid_index, &gid);
	pd = ibv_alloc_pd(ctx);
	pd2 = ibv_alloc_pd(ctx);
	buf = aligned_alloc(4096, LEN);
	src = aligned_alloc(4096, LEN);
	if (!pd || !pd2 || !buf || !src)
		tl_die("setup");
	for (i = 0; i < LEN; i++)
		src[i] = (uint8_t)(i * 7 + 3);
	mr = ibv_reg_mr(pd, buf, LEN, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			IBV_ACCESS_MW_BIND);
	src_mr = ibv_reg_mr(pd, src, LEN, IBV_ACCESS_LOCAL_WRITE);
	if (!mr || !src_mr)
		tl_die("ibv_reg_mr");

	type1();
	bind_errors();
	type2(false);
	type2(true);
	atomic_alignment();
	uc_windows();

	ibv_dereg_mr(src_mr);
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd2);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return tl_exit_status();
}
