// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cq_overrun DEV GID_INDEX: the send CQ of an RC pair on DEV is not polled
 * while more SENDs complete than it holds. It keeps the completions it had
 * room for, in order, and drops the rest. Created without flags it raises
 * IBV_EVENT_CQ_ERR; created with IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN (its
 * consumer sized it) it raises none. Either way every message arrives, the
 * QPs stay in RTS and the CQ takes completions again once it is polled.
 */
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include "testlib.h"

#define MORE 5			/* SENDs beyond what the CQ holds */

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_mr *mr;
static union ibv_gid gid;
static int gid_index;
static uint8_t buf[4096];

/* The async events within ms: how many were CQ_ERR of cq, how many other. */
static void async_events(struct ibv_cq *cq, int ms, int *cq_err, int *other)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;

	*cq_err = *other = 0;
	while (poll(&pfd, 1, ms) > 0) {
		if (ibv_get_async_event(ctx, &ev))
			tl_die("ibv_get_async_event");
		if (ev.event_type == IBV_EVENT_CQ_ERR && ev.element.cq == cq)
			(*cq_err)++;
		else
			(*other)++;
		ibv_ack_async_event(&ev);
		ms = 200;	/* anything that follows comes soon */
	}
}

static int post_send(struct ibv_qp *qp, uint64_t id)
{
	struct ibv_sge sge = { (uintptr_t)buf, 16, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	return ibv_post_send(qp, &wr, &bad);
}

static int post_recv(struct ibv_qp *qp, uint64_t id)
{
	struct ibv_sge sge = { (uintptr_t)buf + 2048, 64, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 },
			   *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

static void overrun(bool ignore)
{
	struct ibv_cq_init_attr_ex cattr = {
		.cqe = 4, .wc_flags = IBV_WC_STANDARD_FLAGS,
	};
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 32, .max_recv_wr = 32,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	const char *how = ignore ? "IGNORE_OVERRUN" : "no flag";
	struct ibv_qp_init_attr qi;
	struct ibv_qp_attr qa;
	struct ibv_cq_ex *cqx;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *a, *b;
	struct ibv_wc wc;
	int i, n, slots, got, in_order, cq_err, other;

	if (ignore) {
		cattr.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
		cattr.flags = IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN;
	}
	cqx = ibv_create_cq_ex(ctx, &cattr);
	if (!cqx)
		tl_die("ibv_create_cq_ex");
	scq = ibv_cq_ex_to_cq(cqx);
	/* The ring is a power of two; the CQ reports one less (cqe). */
	slots = scq->cqe + 1;
	n = slots + MORE;
	rcq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	init.send_cq = scq;
	init.recv_cq = rcq;
	a = rcq ? ibv_create_qp(pd, &init) : NULL;
	init.send_cq = rcq;
	b = a ? ibv_create_qp(pd, &init) : NULL;
	if (!b || n > 32 || tl_connect_rc_pair(a, b, &gid, gid_index, 9))
		tl_die("an RC pair");

	for (i = 0; i < n; i++)
		if (post_recv(b, i) || post_send(a, i))
			tl_die("posting");
	for (got = 0; got < n && tl_wait_wc(rcq, &wc, 10); got++)
		if (wc.status != IBV_WC_SUCCESS)
			break;
	tl_check(got == n, "%s: all %d SENDs arrive (%d)", how, n, got);

	async_events(scq, ignore ? 2000 : 5000, &cq_err, &other);
	if (ignore)
		tl_check(!cq_err && !other,
			 "%s: no asynchronous event (%d CQ_ERR, %d other)", how,
			 cq_err, other);
	else
		tl_check(cq_err == 1 && !other,
			 "%s: one IBV_EVENT_CQ_ERR for the CQ (%d, %d other)", how,
			 cq_err, other);

	for (got = 0, in_order = 1; ibv_poll_cq(scq, 1, &wc) == 1; got++)
		if (wc.status != IBV_WC_SUCCESS || wc.wr_id != (uint64_t)got)
			in_order = 0;
	tl_check(got == slots && in_order,
		 "%s: the CQ kept its first %d completions, in order (%d)", how,
		 slots, got);
	tl_check(!ibv_query_qp(a, &qa, IBV_QP_STATE, &qi) &&
		 qa.qp_state == IBV_QPS_RTS, "%s: the requester is in RTS", how);

	if (post_recv(b, 100) || post_send(a, 100))
		tl_die("posting");
	tl_check(tl_wait_wc(scq, &wc, 10) && wc.wr_id == 100 &&
		 wc.status == IBV_WC_SUCCESS && tl_wait_wc(rcq, &wc, 10),
		 "%s: polled, the CQ takes completions again", how);

	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_destroy_cq(scq);
	ibv_destroy_cq(rcq);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: cq_overrun DEV GID_INDEX\n");
		return 2;
	}
	gid_index = atoi(argv[2]);
	ctx = tl_open_with_gid(argv[1], gid_index, &gid);
	pd = ibv_alloc_pd(ctx);
	mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!mr)
		tl_die("setup");

	overrun(false);
	overrun(true);

	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return tl_exit_status();
}
