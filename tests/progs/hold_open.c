// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * hold_open DEV SECONDS [QPS]: opens DEV, allocates a PD (and QPS more
 * RC QPs, whose destruction makes the removal slow), prints "ready" and
 * keeps the device open while the test removes it underneath. Checks that
 * the process is told (IBV_EVENT_DEVICE_FATAL within SECONDS), that the
 * device refuses new work afterwards, and that closing it still works.
 * Its CQ has gone round its ring once (four flushed receives on a ring of
 * four), so its next slots hold stale CQEs of the first pass and, after
 * the removal, the ring stays mapped as the engine left it: polling must
 * find no completion in either (and a zeroed page in its place would be
 * read as completions if a zero owner byte could mean one).
 */
#include <poll.h>
#include <unistd.h>
#include <time.h>
#include "testlib.h"

int main(int argc, char **argv)
{
	struct ibv_async_event ev;
	struct ibv_context *ctx;
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_recv_wr rwr = {}, *bad;
	struct ibv_qp_attr err_attr = { .qp_state = IBV_QPS_ERR };
	struct ibv_wc wc[8];
	struct ibv_pd *pd, *pd2;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	int i, n, bogus, extra = 0;
	struct pollfd pfd;
	time_t deadline;
	int fatal = 0;

	if (argc == 4)
		extra = atoi(argv[3]);
	if (argc < 3 || argc > 4 || extra < 0) {
		fprintf(stderr, "usage: hold_open DEV SECONDS [QPS]\n");
		return 2;
	}
	ctx = tl_open_device(argv[1]);
	pd = ibv_alloc_pd(ctx);
	tl_check(pd != NULL, "PD allocated before removal");
	cq = ibv_create_cq(ctx, 3, NULL, NULL, 0);
	init.send_cq = init.recv_cq = cq;
	qp = cq ? ibv_create_qp(pd, &init) : NULL;
	if (!cq || cq->cqe != 3 || !qp || tl_to_init(qp, 0))
		tl_die("a CQ of 4 slots and a QP");
	for (i = 0; i < 4; i++)
		if (ibv_post_recv(qp, &rwr, &bad))
			tl_die("ibv_post_recv");
	if (ibv_modify_qp(qp, &err_attr, IBV_QP_STATE))
		tl_die("modify to ERR");
	for (n = 0, i = 0; n < 4 && i < 1000; i++) {
		int got = ibv_poll_cq(cq, 8, wc);

		n += got > 0 ? got : 0;
		usleep(1000);
	}
	tl_check(n == 4, "the CQ went round its ring once (%d flushed receives)",
		 n);
	/* Left for the removal to destroy. */
	for (i = 0; i < extra; i++)
		if (!ibv_create_qp(pd, &init))
			tl_die("an extra QP");
	printf("ready\n");
	fflush(stdout);

	deadline = time(NULL) + atoi(argv[2]);
	pfd.fd = ctx->async_fd;
	pfd.events = POLLIN;
	while (!fatal && time(NULL) < deadline) {
		if (poll(&pfd, 1, 200) <= 0)
			continue;
		if (ibv_get_async_event(ctx, &ev))
			break;
		if (ev.event_type == IBV_EVENT_DEVICE_FATAL)
			fatal = 1;
		ibv_ack_async_event(&ev);
	}
	tl_check(fatal, "IBV_EVENT_DEVICE_FATAL delivered after removal");

	for (bogus = 0, i = 0; i < 100; i++) {
		n = ibv_poll_cq(cq, 8, wc);
		bogus += n > 0 ? n : 0;
	}
	tl_check(!bogus, "polling the CQ after removal returns no completion (%d)",
		 bogus);

	pd2 = ibv_alloc_pd(ctx);
	tl_check(pd2 == NULL, "no PD can be allocated on a removed device (errno %d)",
		 pd2 ? 0 : errno);
	ibv_destroy_qp(qp);	/* may fail: the kernel objects are gone */
	ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);
	tl_check(ibv_close_device(ctx) == 0, "device closes after removal");
	return tl_exit_status();
}
