// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rc_errors DEV GID_INDEX: the error paths of RC QPs on DEV, each on a
 * fresh QP pair: bad keys, access rights and ranges, RNR with and without
 * retries, a receive buffer too small, a peer that is gone, misaligned
 * atomics, flushing, invalidation where a user has no key to invalidate
 * (LOCAL_INV, SEND_WITH_INV, a REG_MR written into the ring), and
 * creation flags.
 * Checks the completion statuses each side gets.
 */
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include "rings.h"
#include "testlib.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static union ibv_gid gid;
static int gid_index;

struct end {
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	struct ibv_mr *mr;	/* all access rights */
	struct ibv_mr *ro_mr;	/* local write only */
	uint8_t buf[8192];
	uint8_t ro_buf[4096];
};

struct pair_cfg {
	uint8_t rnr_retry;
	uint8_t retry_cnt;
	uint8_t timeout;
};

static void make_end(struct end *e)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 2, .max_recv_sge = 2 },
	};

	e->cq = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	e->mr = ibv_reg_mr(pd, e->buf, sizeof(e->buf),
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	e->ro_mr = ibv_reg_mr(pd, e->ro_buf, sizeof(e->ro_buf),
			      IBV_ACCESS_LOCAL_WRITE);
	init.send_cq = e->cq;
	init.recv_cq = e->cq;
	e->qp = ibv_create_qp(pd, &init);
	if (!e->cq || !e->mr || !e->ro_mr || !e->qp)
		tl_die("creating a QP end");
}

static void free_end(struct end *e)
{
	ibv_destroy_qp(e->qp);
	ibv_dereg_mr(e->mr);
	ibv_dereg_mr(e->ro_mr);
	ibv_destroy_cq(e->cq);
}

static int to_rts(struct ibv_qp *qp, uint32_t dest, const struct pair_cfg *c)
{
	struct tl_rc_conn conn = {
		.dest_qpn = dest, .dgid = &gid, .sgid_index = gid_index,
		.sq_psn = 100, .rq_psn = 100, .access = TL_REMOTE_ALL,
		.timeout = c->timeout, .retry_cnt = c->retry_cnt,
		.rnr_retry = c->rnr_retry, .min_rnr_timer = 1,	/* 10 us */
		.rd_atomic = 1,
	};

	return tl_connect_rc(qp, &conn);
}

static void connect_pair(struct end *a, struct end *b, const struct pair_cfg *c)
{
	make_end(a);
	make_end(b);
	if (to_rts(a->qp, b->qp->qp_num, c) || to_rts(b->qp, a->qp->qp_num, c))
		tl_die("connecting a pair");
}

/* One completion within seconds; status -1 if none came. */
static int wait_status(struct ibv_cq *cq, int seconds, struct ibv_wc *wc)
{
	time_t end = time(NULL) + seconds;

	while (time(NULL) <= end)
		if (ibv_poll_cq(cq, 1, wc) == 1)
			return wc->status;
	return -1;
}

static int post(struct end *e, enum ibv_wr_opcode op, uint64_t laddr,
		uint32_t len, uint32_t lkey, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { .addr = laddr, .length = len, .lkey = lkey };
	struct ibv_send_wr wr = {
		.wr_id = 7, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD || op == IBV_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 1;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	return ibv_post_send(e->qp, &wr, &bad);
}

static int post_recv(struct end *e, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)e->buf, .length = len,
			       .lkey = e->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 9, .sg_list = &sge, .num_sge = 1 },
			   *bad;

	return ibv_post_recv(e->qp, &wr, &bad);
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr i;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &i))
		return -1;
	return a.qp_state;
}

static const struct pair_cfg dflt = { .rnr_retry = 7, .retry_cnt = 7,
				      .timeout = 14 };

#define EXPECT_STATUS(cq, want, what)                                         \
	do {                                                                 \
		struct ibv_wc wc_;                                           \
		int s_ = wait_status(cq, 10, &wc_);                          \
		tl_check(s_ == (want), "%s: %s (got %s)", what,              \
			 ibv_wc_status_str(want),                            \
			 s_ < 0 ? "nothing" : ibv_wc_status_str(s_));        \
	} while (0)

static void bad_lkey(void)
{
	struct end a, b;

	connect_pair(&a, &b, &dflt);
	post_recv(&b, 64);
	post(&a, IBV_WR_SEND, (uintptr_t)a.buf, 64, a.mr->lkey ^ 0x5500, 0, 0);
	post(&a, IBV_WR_SEND, (uintptr_t)a.buf, 64, a.mr->lkey, 0, 0);
	EXPECT_STATUS(a.cq, IBV_WC_LOC_PROT_ERR, "SEND with a bad lkey");
	EXPECT_STATUS(a.cq, IBV_WC_WR_FLUSH_ERR, "the WQE after it");
	tl_check(qp_state(a.qp) == IBV_QPS_ERR, "requester QP in error");
	free_end(&a);
	free_end(&b);
}

static void local_range(void)
{
	struct end a, b;

	connect_pair(&a, &b, &dflt);
	post_recv(&b, 64);
	post(&a, IBV_WR_SEND, (uintptr_t)a.buf + sizeof(a.buf) - 8, 64,
	     a.mr->lkey, 0, 0);
	EXPECT_STATUS(a.cq, IBV_WC_LOC_PROT_ERR, "SEND past the end of its MR");
	free_end(&a);
	free_end(&b);
}

static void remote_errors(void)
{
	struct end a, b;

	connect_pair(&a, &b, &dflt);
	post(&a, IBV_WR_RDMA_WRITE, (uintptr_t)a.buf, 64, a.mr->lkey,
	     (uintptr_t)b.buf, b.mr->rkey ^ 0x3300);
	EXPECT_STATUS(a.cq, IBV_WC_REM_ACCESS_ERR, "WRITE with a bad rkey");
	{
		struct ibv_qp_attr qa;
		struct ibv_qp_init_attr qi;
		int i, state = -1;

		/* The responder stops too, as IBTA class C errors require. */
		for (i = 0; i < 100 && state != IBV_QPS_ERR; i++) {
			if (!ibv_query_qp(b.qp, &qa, IBV_QP_STATE, &qi))
				state = qa.qp_state;
			usleep(10000);
		}
		tl_check(state == IBV_QPS_ERR,
			 "the responder is in the error state after the bad rkey (state %d)",
			 state);
	}
	free_end(&a);
	free_end(&b);

	connect_pair(&a, &b, &dflt);
	post(&a, IBV_WR_RDMA_WRITE, (uintptr_t)a.buf, 64, a.mr->lkey,
	     (uintptr_t)b.buf + sizeof(b.buf) - 32, b.mr->rkey);
	EXPECT_STATUS(a.cq, IBV_WC_REM_ACCESS_ERR, "WRITE past the end of the remote MR");
	free_end(&a);
	free_end(&b);

	connect_pair(&a, &b, &dflt);
	post(&a, IBV_WR_RDMA_READ, (uintptr_t)a.buf, 64, a.mr->lkey,
	     (uintptr_t)b.ro_buf, b.ro_mr->rkey);
	EXPECT_STATUS(a.cq, IBV_WC_REM_ACCESS_ERR, "READ of an MR without remote read");
	free_end(&a);
	free_end(&b);

	connect_pair(&a, &b, &dflt);
	post(&a, IBV_WR_ATOMIC_FETCH_AND_ADD, (uintptr_t)a.buf, 8, a.mr->lkey,
	     (uintptr_t)b.buf + 4, b.mr->rkey);
	EXPECT_STATUS(a.cq, IBV_WC_REM_INV_REQ_ERR, "misaligned atomic");
	free_end(&a);
	free_end(&b);

	connect_pair(&a, &b, &dflt);
	post(&a, IBV_WR_ATOMIC_FETCH_AND_ADD, (uintptr_t)a.buf, 8, a.mr->lkey,
	     (uintptr_t)b.ro_buf, b.ro_mr->rkey);
	EXPECT_STATUS(a.cq, IBV_WC_REM_ACCESS_ERR, "atomic on an MR without remote atomic");
	free_end(&a);
	free_end(&b);
}

static void rnr(void)
{
	struct pair_cfg no_retry = dflt;
	struct end a, b;

	no_retry.rnr_retry = 0;
	connect_pair(&a, &b, &no_retry);
	post(&a, IBV_WR_SEND, (uintptr_t)a.buf, 64, a.mr->lkey, 0, 0);
	EXPECT_STATUS(a.cq, IBV_WC_RNR_RETRY_EXC_ERR, "SEND, no receive, rnr_retry 0");
	free_end(&a);
	free_end(&b);

	connect_pair(&a, &b, &dflt);
	post(&a, IBV_WR_SEND, (uintptr_t)a.buf, 64, a.mr->lkey, 0, 0);
	usleep(100000);
	post_recv(&b, 64);
	EXPECT_STATUS(a.cq, IBV_WC_SUCCESS, "SEND retried after RNR until a receive came");
	EXPECT_STATUS(b.cq, IBV_WC_SUCCESS, "and the receive completed");
	free_end(&a);
	free_end(&b);
}

static void too_small(void)
{
	struct end a, b;

	connect_pair(&a, &b, &dflt);
	post_recv(&b, 16);
	post(&a, IBV_WR_SEND, (uintptr_t)a.buf, 64, a.mr->lkey, 0, 0);
	EXPECT_STATUS(a.cq, IBV_WC_REM_INV_REQ_ERR, "SEND larger than the receive buffer");
	EXPECT_STATUS(b.cq, IBV_WC_LOC_LEN_ERR, "the receive side");
	free_end(&a);
	free_end(&b);
}

static void dead_peer(void)
{
	struct pair_cfg quick = { .rnr_retry = 7, .retry_cnt = 2, .timeout = 10 };
	struct end a, b;
	time_t t0;

	connect_pair(&a, &b, &quick);
	/*
	 * One message first: on the shortcut the sender then holds the peer
	 * it handed the packet to (qp->sched.handed_to), which destroy must clear.
	 */
	post_recv(&b, 64);
	post(&a, IBV_WR_SEND, (uintptr_t)a.buf, 64, a.mr->lkey, 0, 0);
	EXPECT_STATUS(a.cq, IBV_WC_SUCCESS, "SEND before the peer goes");
	EXPECT_STATUS(b.cq, IBV_WC_SUCCESS, "its receive");
	ibv_destroy_qp(b.qp);
	b.qp = NULL;
	t0 = time(NULL);
	post(&a, IBV_WR_SEND, (uintptr_t)a.buf, 64, a.mr->lkey, 0, 0);
	EXPECT_STATUS(a.cq, IBV_WC_RETRY_EXC_ERR, "SEND to a QP that is gone");
	tl_check(time(NULL) - t0 <= 5, "retries exhausted in bounded time (%ld s)",
		 (long)(time(NULL) - t0));
	free_end(&a);
	ibv_dereg_mr(b.mr);
	ibv_dereg_mr(b.ro_mr);
	ibv_destroy_cq(b.cq);
}

static void flush_on_error(void)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	struct end a, b;

	connect_pair(&a, &b, &dflt);
	post_recv(&b, 64);
	post_recv(&b, 64);
	ibv_modify_qp(b.qp, &attr, IBV_QP_STATE);
	EXPECT_STATUS(b.cq, IBV_WC_WR_FLUSH_ERR, "posted receive flushed in error");
	EXPECT_STATUS(b.cq, IBV_WC_WR_FLUSH_ERR, "and the second one");
	free_end(&a);
	free_end(&b);
}

/*
 * A QP moved to RESET leaves no completion behind in its CQ (a consumer
 * that restarts a failed QP must not find the old flushes), and another
 * QP's completions in that CQ stay, in order.
 */
static void reset_cleans_cq(void)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *other;
	struct ibv_wc wc[8];
	struct end a, b;
	int n, i, ok;

	connect_pair(&a, &b, &dflt);
	init.send_cq = init.recv_cq = b.cq;
	other = ibv_create_qp(pd, &init);
	if (!other)
		tl_die("ibv_create_qp");
	post_recv(&b, 64);
	post_recv(&b, 64);
	ibv_modify_qp(b.qp, &attr, IBV_QP_STATE);
	if (tl_to_init(other, 0) || ibv_modify_qp(other, &attr, IBV_QP_STATE))
		tl_die("another QP to the error state");
	{
		/* other's receives, posted in error: flushed after b's. */
		struct ibv_sge sge = { .addr = (uintptr_t)b.buf, .length = 8,
				       .lkey = b.mr->lkey };
		struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

		for (i = 0; i < 2; i++) {
			wr.wr_id = 100 + i;
			ibv_post_recv(other, &wr, &bad);
		}
	}
	usleep(200000);		/* every flush is in the CQ */
	attr.qp_state = IBV_QPS_RESET;
	tl_check(!ibv_modify_qp(b.qp, &attr, IBV_QP_STATE), "QP to RESET");
	n = ibv_poll_cq(b.cq, 8, wc);
	ok = n == 2;
	for (i = 0; i < n && ok; i++)
		ok = wc[i].qp_num == other->qp_num && wc[i].wr_id == 100U + i &&
		     wc[i].status == IBV_WC_WR_FLUSH_ERR;
	tl_check(ok, "RESET took the QP's flushes out of the CQ, another QP's "
		 "stayed in order (%d left)", n);
	ibv_destroy_qp(other);
	free_end(&a);
	free_end(&b);
}

/* query_qp reports the PSNs as they were set, whatever was sent since. */
static void query_psns(void)
{
	struct ibv_qp_attr qa = {};
	struct ibv_qp_init_attr qi;
	struct ibv_wc wc;
	struct end a, b;
	int i, ok = 1;

	connect_pair(&a, &b, &dflt);
	for (i = 0; i < 3; i++) {
		post(&a, IBV_WR_RDMA_WRITE, (uintptr_t)a.buf, 64, a.mr->lkey,
		     (uintptr_t)b.buf, b.mr->rkey);
		ok &= wait_status(a.cq, 10, &wc) == IBV_WC_SUCCESS;
	}
	tl_check(ok, "three RDMA WRITEs completed");
	tl_check(!ibv_query_qp(a.qp, &qa, IBV_QP_SQ_PSN | IBV_QP_RQ_PSN, &qi),
		 "ibv_query_qp");
	tl_check(qa.sq_psn == 100 && qa.rq_psn == 100,
		 "query_qp: sq_psn %u and rq_psn %u as set (100), after three messages",
		 qa.sq_psn, qa.rq_psn);
	free_end(&a);
	free_end(&b);
}

/*
 * A user MR cannot be invalidated, by its owner or by a peer, and a user
 * ring takes no REG_MR (fast registration is for kernel consumers).
 */
static void invalidation(void)
{
	struct sroce_qp *sqp;
	struct sroce_send_wqe *w;
	struct ibv_send_wr wr = { .wr_id = 5, .opcode = IBV_WR_LOCAL_INV,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_sge sge;
	struct end a, b;
	struct ibv_wc wc;
	int st;

	connect_pair(&a, &b, &dflt);
	wr.invalidate_rkey = a.mr->rkey;
	tl_check(!ibv_post_send(a.qp, &wr, &bad), "LOCAL_INV of a user MR posts");
	EXPECT_STATUS(a.cq, IBV_WC_LOC_QP_OP_ERR, "LOCAL_INV of a user MR");
	free_end(&a);
	free_end(&b);

	connect_pair(&a, &b, &dflt);
	post_recv(&b, 64);
	sge = (struct ibv_sge){ .addr = (uintptr_t)a.buf, .length = 16,
				.lkey = a.mr->lkey };
	wr = (struct ibv_send_wr){ .wr_id = 6, .opcode = IBV_WR_SEND_WITH_INV,
				   .sg_list = &sge, .num_sge = 1,
				   .send_flags = IBV_SEND_SIGNALED,
				   .invalidate_rkey = b.mr->rkey };
	tl_check(!ibv_post_send(a.qp, &wr, &bad), "SEND_WITH_INV posts");
	EXPECT_STATUS(a.cq, IBV_WC_REM_INV_REQ_ERR,
		      "SEND_WITH_INV naming the peer's user MR");
	EXPECT_STATUS(b.cq, IBV_WC_REM_INV_REQ_ERR,
		      "the receive it consumed");
	free_end(&a);
	free_end(&b);

	/* The kernel-only opcode, written behind the provider's back. */
	connect_pair(&a, &b, &dflt);
	sqp = to_sqp(a.qp);
	w = sroce_ring_slot(&sqp->sq, sqp->sq.index);
	memset(w, 0, sizeof(*w));
	w->ctrl.opcode = SROCE_WQE_REG_MR;
	w->ctrl.flags = SROCE_WQE_SIGNALED;
	w->ctrl.wr_id = 8;
	w->reg.addr = (uintptr_t)a.buf;
	w->reg.length = sizeof(a.buf);
	w->reg.key = a.mr->lkey;
	w->reg.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	w->reg.page_size = 4096;
	sqp->sq.index++;
	__atomic_store_n(&sqp->sq.hdr->producer, sqp->sq.index,
			 __ATOMIC_RELEASE);
	tl_kick(a.qp);
	st = wait_status(a.cq, 10, &wc);
	tl_check(st == IBV_WC_LOC_QP_OP_ERR && wc.wr_id == 8,
		 "a REG_MR WQE in a user ring fails: %s",
		 st < 0 ? "nothing" : ibv_wc_status_str(st));
	free_end(&a);
	free_end(&b);
}

/*
 * Creation flags: a request that names the mask bit but no flag creates a
 * QP (pyverbs' random init masks do this); any flag is refused.
 */
static void create_flags(void)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_qp_init_attr_ex init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_CREATE_FLAGS,
		.pd = pd,
		.send_cq = cq,
		.recv_cq = cq,
	};
	struct ibv_qp *qp;

	if (!cq)
		tl_die("ibv_create_cq");
	qp = ibv_create_qp_ex(ctx, &init);
	tl_check(qp && init.cap.max_send_wr >= 4,
		 "the creation-flags mask bit with no flag creates a QP (%s)",
		 qp ? "ok" : strerror(errno));
	if (qp)
		ibv_destroy_qp(qp);
	init.create_flags = IBV_QP_CREATE_SCATTER_FCS;
	errno = 0;
	qp = ibv_create_qp_ex(ctx, &init);
	tl_check(!qp && errno == EOPNOTSUPP,
		 "a creation flag is refused with EOPNOTSUPP (%s)",
		 qp ? "created" : strerror(errno));
	if (qp)
		ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: rc_errors DEV GID_INDEX\n");
		return 2;
	}
	ctx = tl_open_device(argv[1]);
	gid_index = atoi(argv[2]);
	if (ibv_query_gid(ctx, 1, gid_index, &gid))
		tl_die("ibv_query_gid");
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		tl_die("ibv_alloc_pd");

	bad_lkey();
	local_range();
	remote_errors();
	rnr();
	too_small();
	dead_peer();
	flush_on_error();
	reset_cleans_cq();
	query_psns();
	invalidation();
	create_flags();

	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return tl_exit_status();
}
