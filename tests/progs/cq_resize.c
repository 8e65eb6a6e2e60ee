// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cq_resize DEV GID_INDEX: resizing a CQ keeps the completions it holds,
 * in order, grows and shrinks it, and refuses to shrink it below what it
 * holds (EINVAL). Traffic comes from a connected RC pair on DEV.
 */
#include <errno.h>
#include <stdint.h>
#include <time.h>
#include "testlib.h"

int main(int argc, char **argv)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 32, .max_recv_wr = 32,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qa, *qb;
	struct ibv_cq *ca, *cb;
	struct ibv_context *ctx;
	struct ibv_wc wc[32];
	union ibv_gid gid;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	static uint8_t buf[4096];
	int gid_index, i, n, got, ordered, ret;
	struct ibv_qp *qps[2];
	time_t end;

	if (argc != 3) {
		fprintf(stderr, "usage: cq_resize DEV GID_INDEX\n");
		return 2;
	}
	ctx = tl_open_device(argv[1]);
	gid_index = atoi(argv[2]);
	if (ibv_query_gid(ctx, 1, gid_index, &gid))
		tl_die("ibv_query_gid");
	pd = ibv_alloc_pd(ctx);
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE);
	ca = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	cb = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	if (!pd || !mr || !ca || !cb)
		tl_die("setup");
	init.send_cq = init.recv_cq = ca;
	qa = ibv_create_qp(pd, &init);
	init.send_cq = init.recv_cq = cb;
	qb = ibv_create_qp(pd, &init);
	if (!qa || !qb)
		tl_die("ibv_create_qp");
	qps[0] = qa;
	qps[1] = qb;
	for (i = 0; i < 2; i++) {
		struct tl_rc_conn conn = {
			.dest_qpn = qps[i ^ 1]->qp_num, .dgid = &gid,
			.sgid_index = gid_index,
			.access = IBV_ACCESS_REMOTE_WRITE,
			.timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
		};

		if (tl_connect_rc(qps[i], &conn))
			tl_die("connecting a QP");
	}

	ret = ibv_resize_cq(ca, 16);
	tl_check(!ret && ca->cqe >= 16, "empty CQ grows to %d entries", ca->cqe);

	/* Five completions wait in the CQ while it is resized. */
	for (i = 0; i < 5; i++) {
		struct ibv_sge sge = { (uintptr_t)buf, 64, mr->lkey };
		struct ibv_send_wr wr = {
			.wr_id = 100 + i, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { (uintptr_t)buf + 1024, mr->rkey },
		}, *bad;

		if (ibv_post_send(qa, &wr, &bad))
			tl_die("ibv_post_send");
	}
	/* Let all five land in the CQ, without consuming them. */
	nanosleep(&(struct timespec){ 1, 0 }, NULL);

	errno = 0;
	ret = ibv_resize_cq(ca, 2);
	tl_check(ret == EINVAL, "shrinking below the 5 completions held is refused (%d)",
		 ret);
	ret = ibv_resize_cq(ca, 64);
	tl_check(!ret && ca->cqe >= 64,
		 "CQ holding 5 completions grows to %d entries", ca->cqe);
	got = 0;
	ordered = 1;
	end = time(NULL) + 10;
	while (got < 5 && time(NULL) < end) {
		n = ibv_poll_cq(ca, 32, wc);
		for (i = 0; i < n; i++) {
			ordered &= wc[i].wr_id == (uint64_t)(100 + got) &&
				   wc[i].status == IBV_WC_SUCCESS;
			got++;
		}
	}
	tl_check(got == 5 && ordered,
		 "the 5 completions survived the resize, in order (%d)", got);
	ret = ibv_resize_cq(ca, 8);
	tl_check(!ret && ca->cqe >= 8 && ca->cqe < 64,
		 "empty CQ shrinks to %d entries", ca->cqe);

	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	ibv_destroy_cq(ca);
	ibv_destroy_cq(cb);
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return tl_exit_status();
}
