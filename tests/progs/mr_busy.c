// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mr_busy DEV GID_INDEX DGID: deregistering an MR that a WQE in flight
 * still uses. An RC QP is connected on the wire to DGID, where nobody
 * answers, with the longest timeout, and posts a SEND from the MR; the
 * engine keeps the MR until the WQE completes. ibv_dereg_mr must return at
 * once all the same (it used to wait for the engine, for ever here), the
 * WQE must stay in flight, and moving the QP to ERR must flush it, which
 * lets the engine release the MR's pages.
 */
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>
#include "testlib.h"

#define MSG_LEN (64 * 1024)

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct tl_rc_conn conn = { .dest_qpn = 0x123, .timeout = 31,
				   .retry_cnt = 7, .rnr_retry = 7 };
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr attr = {};
	struct ibv_qp_init_attr qinit;
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_context *ctx;
	struct ibv_sge sge;
	union ibv_gid dgid;
	struct ibv_wc wc;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	double t0, took;
	char *buf;
	int ret;

	if (argc != 4 || inet_pton(AF_INET6, argv[3], &dgid) != 1) {
		fprintf(stderr, "usage: mr_busy DEV GID_INDEX DGID\n");
		return 2;
	}
	ctx = tl_open_device(argv[1]);
	conn.sgid_index = atoi(argv[2]);
	conn.dgid = &dgid;
	buf = malloc(MSG_LEN);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	if (!buf || !pd || !cq)
		tl_die("setup");
	mr = ibv_reg_mr(pd, buf, MSG_LEN, IBV_ACCESS_LOCAL_WRITE);
	init.send_cq = cq;
	init.recv_cq = cq;
	qp = ibv_create_qp(pd, &init);
	if (!mr || !qp || tl_connect_rc(qp, &conn))
		tl_die("QP");

	memset(buf, 0x5a, MSG_LEN);
	sge.addr = (uintptr_t)buf;
	sge.length = MSG_LEN;
	sge.lkey = mr->lkey;
	wr.wr_id = 77;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	if (ibv_post_send(qp, &wr, &bad))
		tl_die("post_send");
	sleep(1);	/* the engine fetches the WQE and sends it */
	tl_check(ibv_poll_cq(cq, 1, &wc) == 0,
		 "the SEND is in flight: nobody acknowledges it");

	t0 = now();
	ret = ibv_dereg_mr(mr);
	took = now() - t0;
	tl_check(ret == 0, "ibv_dereg_mr of the busy MR succeeds (%d)", ret);
	tl_check(took < 2.0, "and returns at once (%.2f s)", took);

	tl_check(ibv_query_qp(qp, &attr, IBV_QP_STATE, &qinit) == 0 &&
		 attr.qp_state == IBV_QPS_RTS, "the QP is still in RTS (%d)",
		 attr.qp_state);
	tl_check(ibv_poll_cq(cq, 1, &wc) == 0,
		 "the SEND is still in flight after the deregistration");

	attr.qp_state = IBV_QPS_ERR;
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE))
		tl_die("modify to ERR");
	ret = tl_wait_wc(cq, &wc, 10);
	tl_check(ret && wc.wr_id == 77 && wc.status == IBV_WC_WR_FLUSH_ERR,
		 "moving the QP to ERR flushes the SEND (status %d, wr_id %llu)",
		 ret ? (int)wc.status : -1,
		 ret ? (unsigned long long)wc.wr_id : 0ULL);

	t0 = now();
	ret = ibv_destroy_qp(qp) || ibv_destroy_cq(cq) || ibv_dealloc_pd(pd);
	tl_check(!ret && now() - t0 < 2.0, "teardown is prompt (%.2f s)",
		 now() - t0);
	ibv_close_device(ctx);
	free(buf);
	return tl_exit_status();
}
