// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cq_timestamp DEV GID_INDEX: completion timestamps.
 * - The device reports hca_core_clock 1000000 kHz and a 64-bit timestamp
 *   mask; ibv_query_rt_values_ex reads that clock (CLOCK_MONOTONIC_RAW in
 *   nanoseconds).
 * - Messages go one at a time over RC pairs whose CQs were created with
 *   IBV_WC_EX_WITH_COMPLETION_TIMESTAMP: message i is posted at p[i] and
 *   message i + 1 only after message i's send completion, which the
 *   responder sends after writing the receive completion. So the receive
 *   completion of message i has a timestamp in [p[i], p[i + 1]), as does
 *   its send completion, read as it arrives.
 * - Receive completions held in the CQ keep their timestamps when the CQ
 *   is resized, and when the QP of other completions held with them is
 *   moved to RESET (the provider removes its completions and moves the
 *   remaining ones in the ring).
 * - ibv_poll_cq reads a CQ with timestamps (its slots are larger) as any.
 * - IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK fails with EOPNOTSUPP.
 */
#include <stdint.h>
#include "testlib.h"

#define MSGS 12

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_mr *mr;
static union ibv_gid gid;
static int gid_index;
static uint8_t buf[8192];
static uint64_t posted[MSGS + 1];	/* p[i]; p[MSGS]: after the last */

static uint64_t raw_clock(void)
{
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };

	if (ibv_query_rt_values_ex(ctx, &v) ||
	    !(v.comp_mask & IBV_VALUES_MASK_RAW_CLOCK))
		tl_die("ibv_query_rt_values_ex");
	return (uint64_t)v.raw_clock.tv_nsec;
}

static struct ibv_cq_ex *ts_cq(int cqe)
{
	struct ibv_cq_init_attr_ex a = {
		.cqe = cqe,
		.wc_flags = IBV_WC_STANDARD_FLAGS |
			    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP,
	};
	struct ibv_cq_ex *cq = ibv_create_cq_ex(ctx, &a);

	if (!cq)
		tl_die("ibv_create_cq_ex with timestamps");
	return cq;
}

static struct ibv_qp *rc_qp(struct ibv_cq *scq, struct ibv_cq *rcq)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC, .send_cq = scq, .recv_cq = rcq,
		.cap = { .max_send_wr = 32, .max_recv_wr = 32,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &init);

	if (!qp)
		tl_die("ibv_create_qp");
	return qp;
}

static void post_recv(struct ibv_qp *qp, uint64_t id)
{
	struct ibv_sge sge = { (uintptr_t)buf + 4096 + 64 * id, 64, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 },
			   *bad;

	if (ibv_post_recv(qp, &wr, &bad))
		tl_die("ibv_post_recv");
}

/* Sends message id (id + 1 bytes) and returns once it is acknowledged. */
static void send_one(struct ibv_qp *qp, struct ibv_cq_ex *scq, uint64_t id,
		     int *bad_sends)
{
	struct ibv_sge sge = { (uintptr_t)buf + 64 * id, id + 1, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_poll_cq_attr pa = {};
	struct timespec t0, t;
	uint64_t ts;
	int ret;

	posted[id] = raw_clock();
	if (ibv_post_send(qp, &wr, &bad))
		tl_die("ibv_post_send");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while ((ret = ibv_start_poll(scq, &pa)) == ENOENT) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 10)
			tl_die("no send completion in 10 s");
	}
	if (ret)
		tl_die("ibv_start_poll");
	ts = ibv_wc_read_completion_ts(scq);
	if (scq->wr_id != id || scq->status != IBV_WC_SUCCESS ||
	    ts < posted[id] || ts > raw_clock())
		(*bad_sends)++;
	ibv_end_poll(scq);
}

/*
 * Reads every completion held in cq: they must be the receives of the
 * messages for which want[i] is set, in order, each with its length and a
 * timestamp in [p[i], p[i + 1]).
 */
static void check_held(struct ibv_cq_ex *cq, const int *want, const char *how)
{
	struct ibv_poll_cq_attr pa = {};
	int i = 0, n = 0, expected = 0, bad = 0, ret;
	uint64_t ts, id;

	for (i = 0; i < MSGS; i++)
		expected += want[i];
	i = 0;
	for (ret = ibv_start_poll(cq, &pa); !ret; ret = ibv_next_poll(cq)) {
		while (i < MSGS && !want[i])
			i++;
		id = cq->wr_id;
		ts = ibv_wc_read_completion_ts(cq);
		if (i == MSGS || id != (uint64_t)i ||
		    cq->status != IBV_WC_SUCCESS ||
		    ibv_wc_read_opcode(cq) != IBV_WC_RECV ||
		    ibv_wc_read_byte_len(cq) != id + 1 ||
		    ts < posted[i] || ts >= posted[i + 1]) {
			if (bad++ < 3)
				printf("# %s: completion %d: wr_id %llu, status %d, timestamp %llu, message %d posted at %llu, the next at %llu\n",
				       how, n, (unsigned long long)id,
				       cq->status, (unsigned long long)ts, i,
				       (unsigned long long)posted[i < MSGS ? i : 0],
				       (unsigned long long)posted[i < MSGS ? i + 1 : 0]);
		}
		n++;
		i++;
	}
	if (ret != ENOENT)
		tl_die("ibv_start_poll/ibv_next_poll");
	if (n)
		ibv_end_poll(cq);
	tl_check(n == expected && !bad,
		 "%s: the CQ holds the %d receive completions, each timestamped between its message's post and the next's (%d held, %d wrong)",
		 how, expected, n, bad);
}

static void device_clock(void)
{
	struct ibv_device_attr_ex attr = {};
	uint64_t a, b;
	struct timespec now;

	if (ibv_query_device_ex(ctx, NULL, &attr))
		tl_die("ibv_query_device_ex");
	tl_check(attr.hca_core_clock == 1000000 &&
		 attr.completion_timestamp_mask == UINT64_MAX,
		 "hca_core_clock is 1000000 kHz, completion_timestamp_mask 64 bits (%llu, %#llx)",
		 (unsigned long long)attr.hca_core_clock,
		 (unsigned long long)attr.completion_timestamp_mask);
	a = raw_clock();
	clock_gettime(CLOCK_MONOTONIC_RAW, &now);
	b = raw_clock();
	tl_check(a <= b &&
		 (uint64_t)now.tv_sec * 1000000000 + now.tv_nsec >= a &&
		 (uint64_t)now.tv_sec * 1000000000 + now.tv_nsec <= b,
		 "ibv_query_rt_values_ex reads CLOCK_MONOTONIC_RAW in nanoseconds");
}

static void wallclock_refused(void)
{
	struct ibv_cq_init_attr_ex a = {
		.cqe = 4,
		.wc_flags = IBV_WC_STANDARD_FLAGS |
			    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK,
	};
	struct ibv_cq_ex *cq;

	errno = 0;
	cq = ibv_create_cq_ex(ctx, &a);
	tl_check(!cq && errno == EOPNOTSUPP,
		 "a CQ with wall-clock timestamps fails with EOPNOTSUPP (%s)",
		 cq ? "created" : strerror(errno));
	if (cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
}

int main(int argc, char **argv)
{
	struct ibv_cq_ex *scq, *rcq;
	struct ibv_cq *plain;
	struct ibv_qp *a[2], *b[2];
	struct ibv_wc wc[MSGS];
	int want[MSGS], i, n, bad_sends = 0, in_order;

	if (argc != 3) {
		fprintf(stderr, "usage: cq_timestamp DEV GID_INDEX\n");
		return 2;
	}
	gid_index = atoi(argv[2]);
	ctx = tl_open_with_gid(argv[1], gid_index, &gid);
	pd = ibv_alloc_pd(ctx);
	mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) :
		  NULL;
	if (!mr)
		tl_die("setup");
	device_clock();
	wallclock_refused();

	/* a[k] sends to b[k]; the receives of both b go to rcq. */
	scq = ts_cq(4 * MSGS);
	rcq = ts_cq(MSGS);
	plain = ibv_create_cq(ctx, 4 * MSGS, NULL, NULL, 0);
	if (!plain)
		tl_die("ibv_create_cq");
	for (i = 0; i < 2; i++) {
		a[i] = rc_qp(ibv_cq_ex_to_cq(scq), plain);
		b[i] = rc_qp(plain, ibv_cq_ex_to_cq(rcq));
		if (tl_connect_rc_pair(a[i], b[i], &gid, gid_index, 5 + i))
			tl_die("connecting an RC pair");
	}
	for (i = 0; i < MSGS; i++)
		buf[64 * i] = i;

	/* Round 1: MSGS messages over pair 0, then the CQ grows. */
	for (i = 0; i < MSGS; i++)
		post_recv(b[0], i);
	for (i = 0; i < MSGS; i++)
		send_one(a[0], scq, i, &bad_sends);
	posted[MSGS] = raw_clock();
	tl_check(!bad_sends,
		 "every send completion is timestamped between its post and its poll (%d wrong)",
		 bad_sends);
	if (ibv_resize_cq(ibv_cq_ex_to_cq(rcq), 4 * MSGS))
		tl_die("ibv_resize_cq");
	for (i = 0; i < MSGS; i++)
		want[i] = 1;
	check_held(rcq, want, "after a resize");

	/* Round 2: the pairs take turns, then b[0]'s completions go (RESET). */
	bad_sends = 0;
	for (i = 0; i < MSGS; i++)
		post_recv(b[i % 2], i);
	for (i = 0; i < MSGS; i++)
		send_one(a[i % 2], scq, i, &bad_sends);
	posted[MSGS] = raw_clock();
	tl_check(!bad_sends, "round 2: every send completion timestamped (%d wrong)",
		 bad_sends);
	if (ibv_modify_qp(b[0], &(struct ibv_qp_attr){ .qp_state = IBV_QPS_RESET },
			  IBV_QP_STATE))
		tl_die("moving a QP to RESET");
	for (i = 0; i < MSGS; i++)
		want[i] = i % 2;
	check_held(rcq, want,
		   "after the QP of every other completion moved to RESET");

	/* Round 3: plain ibv_poll_cq over the larger slots. */
	bad_sends = 0;
	for (i = 0; i < MSGS; i++)
		post_recv(b[1], i);
	for (i = 0; i < MSGS; i++)
		send_one(a[1], scq, i, &bad_sends);
	for (n = 0; n < MSGS && tl_wait_wc(ibv_cq_ex_to_cq(rcq), &wc[n], 10);)
		n++;
	for (i = 0, in_order = 1; i < n; i++)
		if (wc[i].wr_id != (uint64_t)i || wc[i].status != IBV_WC_SUCCESS ||
		    wc[i].byte_len != (uint32_t)i + 1 ||
		    wc[i].qp_num != b[1]->qp_num)
			in_order = 0;
	tl_check(n == MSGS && in_order && !bad_sends,
		 "ibv_poll_cq reads a CQ with timestamps: %d of %d completions, in order, with their lengths",
		 n, MSGS);
	for (i = 0; i < MSGS; i++)
		if (buf[4096 + 64 * i] != i)
			break;
	tl_check(i == MSGS, "every message arrived (%d of %d)", i, MSGS);

	ibv_destroy_qp(a[0]);
	ibv_destroy_qp(a[1]);
	ibv_destroy_qp(b[0]);
	ibv_destroy_qp(b[1]);
	ibv_destroy_cq(ibv_cq_ex_to_cq(scq));
	ibv_destroy_cq(ibv_cq_ex_to_cq(rcq));
	ibv_destroy_cq(plain);
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return tl_exit_status();
}
