// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * wr_ops DEV GID_INDEX: every operation of the extended send API
 * (ibv_wr_*) on DEV, each checked by its completion and by the bytes it
 * moved (and those around them, which must not change):
 * - on two RC QPs of one host: send, send_imm, send_inv, rdma_write,
 *   rdma_write_imm, rdma_read, atomic_cmp_swp, atomic_fetch_add, bind_mw
 *   and local_inv (a type 2 window of the responder), with set_sge,
 *   set_sge_list, set_inline_data and set_inline_data_list;
 * - on two UD QPs: send with set_ud_addr;
 * - the responder's memory is registered with ibv_reg_mr_iova at an iova
 *   other than its address, and every remote access names the iova;
 * - IBV_SEND_FENCE: a WRITE fenced behind a READ sends the bytes the READ
 *   brought into its source buffer;
 * - solicited-only completion events: a SEND without the solicited flag
 *   raises no event, the next one with it raises one;
 * - what sroce does not support is refused at the post with EINVAL, through
 *   ibv_post_send and ibv_wr_*, and nothing of it is sent: a send flag
 *   outside FENCE, SIGNALED, SOLICITED and INLINE, inline data on a READ
 *   or an atomic; modify_qp refuses IBV_QP_PATH_MIG_STATE (no alternate
 *   path on RoCE).
 */
#include <arpa/inet.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include "testlib.h"

#define LEN 16384
#define IOVA 0x7e5500000000ULL		/* the remote MR's iova */
#define RCV_LEN 4096
#define FILL_REM 0x5a
#define FILL_RCV 0xcc
#define QKEY 0x2222

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static union ibv_gid gid;
static int gid_index;
static struct ibv_qp *qa, *qb;		/* requester, responder */
static struct ibv_qp_ex *xa, *xb;
static struct ibv_cq *cqa, *cqb;
static struct ibv_comp_channel *chb;	/* cqb's events */
static uint8_t *loc, *rem, *rcv, rem_want[LEN];
static struct ibv_mr *lmr, *rmr, *rcvmr;

static struct ibv_qp *rc_qp(struct ibv_cq *cq)
{
	struct ibv_qp_init_attr_ex init = {
		.qp_type = IBV_QPT_RC, .send_cq = cq, .recv_cq = cq, .pd = pd,
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_SEND |
			IBV_QP_EX_WITH_SEND_WITH_IMM |
			IBV_QP_EX_WITH_SEND_WITH_INV |
			IBV_QP_EX_WITH_RDMA_WRITE |
			IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
			IBV_QP_EX_WITH_RDMA_READ |
			IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
			IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
			IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 4, .max_recv_sge = 1,
			 .max_inline_data = 64 },
	};
	struct ibv_qp *qp = ibv_create_qp_ex(ctx, &init);

	if (!qp)
		tl_die("ibv_create_qp_ex (RC)");
	return qp;
}

static void post_recv(struct ibv_qp *qp, uint64_t id, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)rcv, .length = len,
			       .lkey = rcvmr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 },
			   *bad;

	memset(rcv, FILL_RCV, RCV_LEN);
	if (ibv_post_recv(qp, &wr, &bad))
		tl_die("ibv_post_recv");
}

/* The next completion of cq is wr_id id, opcode op, success. */
static bool done(struct ibv_cq *cq, uint64_t id, enum ibv_wc_opcode op,
		 struct ibv_wc *wc)
{
	if (!tl_wait_wc(cq, wc, 10))
		return false;
	return wc->wr_id == id && wc->status == IBV_WC_SUCCESS &&
	       wc->opcode == op;
}

static void start(struct ibv_qp_ex *x, uint64_t id, unsigned int flags)
{
	ibv_wr_start(x);
	x->wr_id = id;
	x->wr_flags = IBV_SEND_SIGNALED | flags;
}

static void complete(struct ibv_qp_ex *x)
{
	if (ibv_wr_complete(x))
		tl_die("ibv_wr_complete");
}

/* rem holds rem_want; rcv[len..] still holds FILL_RCV. */
static bool rem_as_wanted(void)
{
	return !memcmp(rem, rem_want, LEN);
}

static bool rcv_holds(const void *data, uint32_t len)
{
	uint32_t i;

	if (memcmp(rcv, data, len))
		return false;
	for (i = len; i < RCV_LEN; i++)
		if (rcv[i] != FILL_RCV)
			return false;
	return true;
}

static void sends(void)
{
	struct ibv_sge list[3] = {
		{ (uintptr_t)loc + 0, 10, lmr->lkey },
		{ (uintptr_t)loc + 1000, 20, lmr->lkey },
		{ (uintptr_t)loc + 3000, 30, lmr->lkey },
	};
	uint8_t gathered[60], inl[40], inl_copy[40];
	struct ibv_data_buf bufs[2] = { { inl, 16 }, { inl + 16, 24 } };
	struct ibv_wc wc, rwc;
	bool ok;

	post_recv(qb, 100, RCV_LEN);
	start(xa, 1, 0);
	ibv_wr_send(xa);
	ibv_wr_set_sge(xa, lmr->lkey, (uintptr_t)loc, 100);
	complete(xa);
	ok = done(cqa, 1, IBV_WC_SEND, &wc);
	tl_check(ok && done(cqb, 100, IBV_WC_RECV, &rwc) &&
		 rwc.byte_len == 100 && !(rwc.wc_flags & IBV_WC_WITH_IMM) &&
		 rcv_holds(loc, 100), "wr_send with set_sge: 100 bytes");

	post_recv(qb, 101, RCV_LEN);
	start(xa, 2, 0);
	ibv_wr_send_imm(xa, htonl(0x12345678));
	ibv_wr_set_sge(xa, lmr->lkey, (uintptr_t)loc + 100, 50);
	complete(xa);
	ok = done(cqa, 2, IBV_WC_SEND, &wc);
	tl_check(ok && done(cqb, 101, IBV_WC_RECV, &rwc) &&
		 rwc.byte_len == 50 && (rwc.wc_flags & IBV_WC_WITH_IMM) &&
		 rwc.imm_data == htonl(0x12345678) && rcv_holds(loc + 100, 50),
		 "wr_send_imm: the bytes and the immediate");

	post_recv(qb, 102, RCV_LEN);
	start(xa, 3, 0);
	ibv_wr_send(xa);
	ibv_wr_set_sge_list(xa, 3, list);
	complete(xa);
	memcpy(gathered, loc, 10);
	memcpy(gathered + 10, loc + 1000, 20);
	memcpy(gathered + 30, loc + 3000, 30);
	ok = done(cqa, 3, IBV_WC_SEND, &wc);
	tl_check(ok && done(cqb, 102, IBV_WC_RECV, &rwc) &&
		 rwc.byte_len == 60 && rcv_holds(gathered, 60),
		 "wr_set_sge_list: three pieces gathered in order");

	/* Inline: the bytes are taken at post time, not later. */
	memcpy(inl, loc + 200, sizeof(inl));
	memcpy(inl_copy, inl, sizeof(inl));
	post_recv(qb, 103, RCV_LEN);
	start(xa, 4, 0);
	ibv_wr_send(xa);
	ibv_wr_set_inline_data(xa, inl, 40);
	complete(xa);
	memset(inl, 0, sizeof(inl));
	ok = done(cqa, 4, IBV_WC_SEND, &wc);
	tl_check(ok && done(cqb, 103, IBV_WC_RECV, &rwc) &&
		 rwc.byte_len == 40 && rcv_holds(inl_copy, 40),
		 "wr_set_inline_data: the bytes as they were at post time");

	memcpy(inl, loc + 300, sizeof(inl));
	memcpy(inl_copy, inl, sizeof(inl));
	post_recv(qb, 104, RCV_LEN);
	start(xa, 5, 0);
	ibv_wr_send(xa);
	ibv_wr_set_inline_data_list(xa, 2, bufs);
	complete(xa);
	memset(inl, 0, sizeof(inl));
	ok = done(cqa, 5, IBV_WC_SEND, &wc);
	tl_check(ok && done(cqb, 104, IBV_WC_RECV, &rwc) &&
		 rwc.byte_len == 40 && rcv_holds(inl_copy, 40),
		 "wr_set_inline_data_list: two pieces in order");
}

static void rdma(void)
{
	uint64_t orig = 0, word;
	struct ibv_wc wc, rwc;
	bool ok;

	start(xa, 10, 0);
	ibv_wr_rdma_write(xa, rmr->rkey, IOVA + 512);
	ibv_wr_set_sge(xa, lmr->lkey, (uintptr_t)loc, 256);
	complete(xa);
	memcpy(rem_want + 512, loc, 256);
	tl_check(done(cqa, 10, IBV_WC_RDMA_WRITE, &wc) && rem_as_wanted(),
		 "wr_rdma_write at iova + 512: those 256 bytes only");

	post_recv(qb, 110, RCV_LEN);
	start(xa, 11, 0);
	ibv_wr_rdma_write_imm(xa, rmr->rkey, IOVA + 1024, htonl(0xabcdef01));
	ibv_wr_set_sge(xa, lmr->lkey, (uintptr_t)loc + 256, 128);
	complete(xa);
	memcpy(rem_want + 1024, loc + 256, 128);
	ok = done(cqa, 11, IBV_WC_RDMA_WRITE, &wc);
	tl_check(ok && done(cqb, 110, IBV_WC_RECV_RDMA_WITH_IMM, &rwc) &&
		 (rwc.wc_flags & IBV_WC_WITH_IMM) &&
		 rwc.imm_data == htonl(0xabcdef01) && rem_as_wanted() &&
		 rcv_holds("", 0),
		 "wr_rdma_write_imm: the bytes, the immediate, no receive data");

	memset(loc + 4096, 0, 512);
	start(xa, 12, 0);
	ibv_wr_rdma_read(xa, rmr->rkey, IOVA + 2048);
	ibv_wr_set_sge(xa, lmr->lkey, (uintptr_t)loc + 4096, 300);
	complete(xa);
	tl_check(done(cqa, 12, IBV_WC_RDMA_READ, &wc) &&
		 !memcmp(loc + 4096, rem + 2048, 300) && loc[4096 + 300] == 0 &&
		 rem_as_wanted(), "wr_rdma_read of iova + 2048: 300 bytes");

	memcpy(&word, rem + 3072, 8);
	start(xa, 13, 0);
	ibv_wr_atomic_cmp_swp(xa, rmr->rkey, IOVA + 3072, word,
			      0x1122334455667788ULL);
	ibv_wr_set_sge(xa, lmr->lkey, (uintptr_t)&loc[8192], 8);
	complete(xa);
	ok = done(cqa, 13, IBV_WC_COMP_SWAP, &wc);
	memcpy(&orig, loc + 8192, 8);
	tl_check(ok && orig == word,
		 "wr_atomic_cmp_swp with the right compare returns the word");
	word = 0x1122334455667788ULL;
	memcpy(rem_want + 3072, &word, 8);
	tl_check(rem_as_wanted(), "and swaps it");

	start(xa, 14, 0);
	ibv_wr_atomic_cmp_swp(xa, rmr->rkey, IOVA + 3072, 1, 2);
	ibv_wr_set_sge(xa, lmr->lkey, (uintptr_t)&loc[8192], 8);
	complete(xa);
	ok = done(cqa, 14, IBV_WC_COMP_SWAP, &wc);
	memcpy(&orig, loc + 8192, 8);
	tl_check(ok && orig == word && rem_as_wanted(),
		 "one with a wrong compare returns the word and changes nothing");

	memcpy(&word, rem + 3080, 8);
	start(xa, 15, 0);
	ibv_wr_atomic_fetch_add(xa, rmr->rkey, IOVA + 3080, 7);
	ibv_wr_set_sge(xa, lmr->lkey, (uintptr_t)&loc[8192], 8);
	complete(xa);
	ok = done(cqa, 15, IBV_WC_FETCH_ADD, &wc);
	memcpy(&orig, loc + 8192, 8);
	tl_check(ok && orig == word, "wr_atomic_fetch_add returns the word");
	word += 7;
	memcpy(rem_want + 3080, &word, 8);
	tl_check(rem_as_wanted(), "and adds 7 to it");
}

/* A READ into loc + 12288, then a WRITE from there, fenced. */
static void fence(void)
{
	struct ibv_wc wc1, wc2;
	bool ok;

	memset(loc + 12288, 0, 64);
	start(xa, 20, 0);
	ibv_wr_rdma_read(xa, rmr->rkey, IOVA + 2560);
	ibv_wr_set_sge(xa, lmr->lkey, (uintptr_t)loc + 12288, 64);
	xa->wr_id = 21;
	xa->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE;
	ibv_wr_rdma_write(xa, rmr->rkey, IOVA + 3584);
	ibv_wr_set_sge(xa, lmr->lkey, (uintptr_t)loc + 12288, 64);
	complete(xa);
	memcpy(rem_want + 3584, rem + 2560, 64);
	ok = done(cqa, 20, IBV_WC_RDMA_READ, &wc1) &&
	     done(cqa, 21, IBV_WC_RDMA_WRITE, &wc2);
	tl_check(ok && rem_as_wanted(),
		 "IBV_SEND_FENCE: the WRITE after a READ sends what the READ brought");
}

/* The responder binds its type 2 window mw under key over bi. */
static bool bind_window(struct ibv_mw *mw, uint32_t key,
		 const struct ibv_mw_bind_info *bi, uint64_t id)
{
	struct ibv_wc wc;

	start(xb, id, 0);
	ibv_wr_bind_mw(xb, mw, key, bi);
	complete(xb);
	return done(cqb, id, IBV_WC_BIND_MW, &wc);
}

/* The responder invalidates key itself. */
static bool local_inv(uint32_t key, uint64_t id)
{
	struct ibv_wc wc;

	start(xb, id, 0);
	ibv_wr_local_inv(xb, key);
	complete(xb);
	return done(cqb, id, IBV_WC_LOCAL_INV, &wc);
}

/* The responder's type 2 window: bind, SEND with invalidate, LOCAL_INV. */
static void windows(void)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_mw_bind_info bi = {
		.mr = rmr, .addr = IOVA + 4096, .length = 256,
		.mw_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	uint32_t key;
	struct ibv_wc wc, rwc;
	bool ok;

	if (!mw)
		tl_die("ibv_alloc_mw");
	key = ibv_inc_rkey(mw->rkey);
	tl_check(bind_window(mw, key, &bi, 30),
		 "wr_bind_mw: a type 2 window over 256 bytes of the MR");
	start(xa, 31, 0);
	ibv_wr_rdma_write(xa, key, IOVA + 4096 + 16);
	ibv_wr_set_sge(xa, lmr->lkey, (uintptr_t)loc + 500, 64);
	complete(xa);
	memcpy(rem_want + 4096 + 16, loc + 500, 64);
	tl_check(done(cqa, 31, IBV_WC_RDMA_WRITE, &wc) && rem_as_wanted(),
		 "a WRITE through the window lands inside it");

	post_recv(qb, 130, RCV_LEN);
	start(xa, 32, 0);
	ibv_wr_send_inv(xa, key);
	ibv_wr_set_sge(xa, lmr->lkey, (uintptr_t)loc + 600, 16);
	complete(xa);
	ok = done(cqa, 32, IBV_WC_SEND, &wc);
	tl_check(ok && done(cqb, 130, IBV_WC_RECV, &rwc) &&
		 (rwc.wc_flags & IBV_WC_WITH_INV) &&
		 rwc.invalidated_rkey == key && rcv_holds(loc + 600, 16),
		 "wr_send_inv: the receiver is told the key it invalidated");

	/* Binding over a valid type 2 window fails: these binds show the
	 * window was invalid each time. */
	key = ibv_inc_rkey(key);
	tl_check(bind_window(mw, key, &bi, 33),
		 "the invalidated window binds again under a new key");
	tl_check(local_inv(key, 34), "wr_local_inv of the window");
	key = ibv_inc_rkey(key);
	tl_check(bind_window(mw, key, &bi, 35),
		 "and it binds again after LOCAL_INV");
	tl_check(local_inv(key, 36), "LOCAL_INV of it again");
	ibv_dealloc_mw(mw);
}

/* An event of chb within ms milliseconds, consumed and re-armed never. */
static bool event_within(int ms)
{
	struct pollfd p = { .fd = chb->fd, .events = POLLIN };
	struct ibv_cq *cq;
	void *cq_ctx;

	if (poll(&p, 1, ms) != 1)
		return false;
	if (ibv_get_cq_event(chb, &cq, &cq_ctx))
		return false;
	ibv_ack_cq_events(cq, 1);
	return cq == cqb;
}

static void solicited(void)
{
	struct ibv_recv_wr wr[2] = {}, *bad;
	struct ibv_sge sge[2];
	struct ibv_wc wc, rwc[2];
	int i, n = 0;

	for (i = 0; i < 2; i++) {
		sge[i] = (struct ibv_sge){ (uintptr_t)rcv + i * 64, 64,
					   rcvmr->lkey };
		wr[i] = (struct ibv_recv_wr){ .wr_id = 140 + i,
					      .sg_list = &sge[i],
					      .num_sge = 1 };
		if (ibv_post_recv(qb, &wr[i], &bad))
			tl_die("ibv_post_recv");
	}
	if (ibv_req_notify_cq(cqb, 1))
		tl_die("ibv_req_notify_cq (solicited only)");
	start(xa, 40, 0);
	ibv_wr_send(xa);
	ibv_wr_set_sge(xa, lmr->lkey, (uintptr_t)loc, 8);
	complete(xa);
	tl_check(done(cqa, 40, IBV_WC_SEND, &wc) && !event_within(500),
		 "solicited-only arming: a SEND without the flag raises no event");
	start(xa, 41, IBV_SEND_SOLICITED);
	ibv_wr_send(xa);
	ibv_wr_set_sge(xa, lmr->lkey, (uintptr_t)loc, 8);
	complete(xa);
	tl_check(done(cqa, 41, IBV_WC_SEND, &wc) && event_within(5000),
		 "the next SEND, solicited, raises one");
	while (n < 2 && tl_wait_wc(cqb, &rwc[n], 5))
		n++;
	tl_check(n == 2 && rwc[0].wr_id == 140 && rwc[1].wr_id == 141 &&
		 !(rwc[0].wc_flags & IBV_WC_WITH_IMM) &&
		 rwc[0].status == IBV_WC_SUCCESS &&
		 rwc[1].status == IBV_WC_SUCCESS,
		 "both receives completed, in order");
}

static void ud(void)
{
	struct ibv_qp_init_attr_ex init = {
		.qp_type = IBV_QPT_UD, .send_cq = cqa, .recv_cq = cqa,
		.pd = pd,
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_SEND,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_ah_attr aa = {};
	struct ibv_qp *u0, *u1;
	struct ibv_qp_ex *ux;
	struct ibv_ah *ah;
	struct ibv_wc wc, rwc;
	bool ok;

	u0 = ibv_create_qp_ex(ctx, &init);
	u1 = ibv_create_qp_ex(ctx, &init);
	if (!u0 || !u1 || tl_connect_ud(u0, QKEY, 0) ||
	    tl_connect_ud(u1, QKEY, 0))
		tl_die("UD QPs");
	tl_set_av(&aa, &gid, gid_index);
	ah = ibv_create_ah(pd, &aa);
	if (!ah)
		tl_die("ibv_create_ah");
	post_recv(u1, 150, 40 + 200);
	ux = ibv_qp_to_qp_ex(u0);
	start(ux, 50, 0);
	ibv_wr_send(ux);
	ibv_wr_set_ud_addr(ux, ah, u1->qp_num, QKEY);
	ibv_wr_set_sge(ux, lmr->lkey, (uintptr_t)loc + 700, 200);
	complete(ux);
	/* One CQ: the send's and the receive's completions in any order. */
	ok = tl_wait_wc(cqa, &wc, 10) && tl_wait_wc(cqa, &rwc, 10);
	if (ok && wc.wr_id == 150) {
		struct ibv_wc t = wc;

		wc = rwc;
		rwc = t;
	}
	tl_check(ok && wc.wr_id == 50 && wc.status == IBV_WC_SUCCESS &&
		 rwc.wr_id == 150 && rwc.status == IBV_WC_SUCCESS &&
		 rwc.byte_len == 40 + 200 && rwc.src_qp == u0->qp_num &&
		 !memcmp(rcv + 40, loc + 700, 200) && rcv[240] == FILL_RCV,
		 "UD wr_send with wr_set_ud_addr: 200 bytes after the GRH");
	ibv_destroy_ah(ah);
	ibv_destroy_qp(u0);
	ibv_destroy_qp(u1);
}

struct refused {
	enum ibv_wr_opcode op;
	unsigned int flags;
	const char *what;
};

static const struct refused not_supported[] = {
	{ IBV_WR_SEND, IBV_SEND_IP_CSUM, "SEND with IBV_SEND_IP_CSUM" },
	{ IBV_WR_SEND, 1U << 5, "SEND with the unknown flag 1 << 5" },
	{ IBV_WR_RDMA_WRITE, 1U << 31, "RDMA_WRITE with the flag 1 << 31" },
	{ IBV_WR_RDMA_READ, IBV_SEND_INLINE, "RDMA_READ with IBV_SEND_INLINE" },
	{ IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_SEND_INLINE,
	  "FETCH_AND_ADD with IBV_SEND_INLINE" },
	{ IBV_WR_ATOMIC_CMP_AND_SWP, IBV_SEND_INLINE,
	  "CMP_AND_SWP with IBV_SEND_INLINE" },
};

/* r through ibv_wr_*: the status of ibv_wr_complete(). */
static int wr_refused(const struct refused *r, uint64_t id)
{
	ibv_wr_start(xa);
	xa->wr_id = id;
	xa->wr_flags = IBV_SEND_SIGNALED | r->flags;
	switch (r->op) {
	case IBV_WR_SEND:
		ibv_wr_send(xa);
		break;
	case IBV_WR_RDMA_WRITE:
		ibv_wr_rdma_write(xa, rmr->rkey, IOVA);
		break;
	case IBV_WR_RDMA_READ:
		ibv_wr_rdma_read(xa, rmr->rkey, IOVA);
		break;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		ibv_wr_atomic_fetch_add(xa, rmr->rkey, IOVA, 1);
		break;
	default:
		ibv_wr_atomic_cmp_swp(xa, rmr->rkey, IOVA, 0, 1);
		break;
	}
	ibv_wr_set_sge(xa, lmr->lkey, (uintptr_t)loc, 8);
	return ibv_wr_complete(xa);
}

static void refusals(void)
{
	struct ibv_sge sge = { (uintptr_t)loc, 8, lmr->lkey };
	struct ibv_qp_attr attr = { .path_mig_state = IBV_MIG_MIGRATED };
	struct ibv_send_wr wr, *bad;
	struct ibv_qp_init_attr init;
	struct ibv_wc wc, rwc;
	size_t i;
	int ret;

	post_recv(qb, 200, RCV_LEN);
	for (i = 0; i < sizeof(not_supported) / sizeof(not_supported[0]); i++) {
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 300 + i;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = not_supported[i].op;
		wr.send_flags = IBV_SEND_SIGNALED | not_supported[i].flags;
		if (wr.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD ||
		    wr.opcode == IBV_WR_ATOMIC_CMP_AND_SWP) {
			wr.wr.atomic.remote_addr = IOVA;
			wr.wr.atomic.rkey = rmr->rkey;
		} else {
			wr.wr.rdma.remote_addr = IOVA;
			wr.wr.rdma.rkey = rmr->rkey;
		}
		bad = NULL;
		ret = ibv_post_send(qa, &wr, &bad);
		tl_check(ret == EINVAL && bad == &wr,
			 "ibv_post_send of a %s: EINVAL at the post (%d)",
			 not_supported[i].what, ret);
		ret = wr_refused(&not_supported[i], 400 + i);
		tl_check(ret == EINVAL,
			 "ibv_wr_* of a %s: ibv_wr_complete fails with EINVAL (%d)",
			 not_supported[i].what, ret);
	}
	ibv_wr_start(xa);
	xa->wr_id = 450;
	xa->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_read(xa, rmr->rkey, IOVA);
	ibv_wr_set_inline_data(xa, loc, 8);
	ret = ibv_wr_complete(xa);
	tl_check(ret == EINVAL,
		 "ibv_wr_set_inline_data on an RDMA_READ: EINVAL (%d)", ret);
	tl_check(!tl_wait_wc(cqa, &wc, 1) && !tl_wait_wc(cqb, &rwc, 1) &&
		 rem_as_wanted() && rcv_holds("", 0),
		 "nothing refused was sent: no completion on either side, the memory unchanged");

	start(xa, 460, 0);
	ibv_wr_send(xa);
	ibv_wr_set_sge(xa, lmr->lkey, (uintptr_t)loc, 8);
	complete(xa);
	tl_check(done(cqa, 460, IBV_WC_SEND, &wc) &&
		 done(cqb, 200, IBV_WC_RECV, &rwc) && rcv_holds(loc, 8),
		 "after the refusals the QP sends: the 8 bytes arrive");

	ret = ibv_modify_qp(qa, &attr, IBV_QP_PATH_MIG_STATE);
	tl_check(ret == EINVAL && !ibv_query_qp(qa, &attr, IBV_QP_STATE, &init) &&
		 attr.qp_state == IBV_QPS_RTS,
		 "modify_qp with IBV_QP_PATH_MIG_STATE: EINVAL, the QP stays in RTS (%d)",
		 ret);
}

int main(int argc, char **argv)
{
	int i;

	if (argc != 3) {
		fprintf(stderr, "usage: wr_ops DEV GID_INDEX\n");
		return 2;
	}
	gid_index = atoi(argv[2]);
	ctx = tl_open_with_gid(argv[1], gid_index, &gid);
	pd = ibv_alloc_pd(ctx);
	loc = aligned_alloc(4096, LEN);
	rem = aligned_alloc(4096, LEN);
	rcv = aligned_alloc(4096, RCV_LEN);
	chb = ibv_create_comp_channel(ctx);
	if (!pd || !loc || !rem || !rcv || !chb)
		tl_die("setup");
	for (i = 0; i < LEN; i++) {
		loc[i] = (uint8_t)(i * 13 + 1);
		rem[i] = FILL_REM + (i % 3);
	}
	memcpy(rem_want, rem, LEN);
	lmr = ibv_reg_mr(pd, loc, LEN, IBV_ACCESS_LOCAL_WRITE);
	rmr = ibv_reg_mr_iova(pd, rem, LEN, IOVA, IBV_ACCESS_LOCAL_WRITE |
			      IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			      IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND);
	rcvmr = ibv_reg_mr(pd, rcv, RCV_LEN, IBV_ACCESS_LOCAL_WRITE);
	cqa = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	cqb = ibv_create_cq(ctx, 32, NULL, chb, 0);
	if (!lmr || !rmr || !rcvmr || !cqa || !cqb)
		tl_die("MRs and CQs");
	qa = rc_qp(cqa);
	qb = rc_qp(cqb);
	if (tl_connect_rc_pair(qa, qb, &gid, gid_index, 5))
		tl_die("connecting the RC QPs");
	xa = ibv_qp_to_qp_ex(qa);
	xb = ibv_qp_to_qp_ex(qb);

	sends();
	rdma();
	fence();
	windows();
	solicited();
	ud();
	refusals();

	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	ibv_destroy_cq(cqa);
	ibv_destroy_cq(cqb);
	ibv_destroy_comp_channel(chb);
	ibv_dereg_mr(lmr);
	ibv_dereg_mr(rmr);
	ibv_dereg_mr(rcvmr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return tl_exit_status();
}
