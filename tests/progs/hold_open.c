// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * hold_open DEV SECONDS: opens DEV, allocates a PD, prints "ready" and
 * keeps the device open while the test removes it underneath. Checks that
 * the process is told (IBV_EVENT_DEVICE_FATAL within SECONDS), that the
 * device refuses new work afterwards, and that closing it still works.
 */
#include <poll.h>
#include <time.h>
#include "testlib.h"

int main(int argc, char **argv)
{
	struct ibv_async_event ev;
	struct ibv_context *ctx;
	struct ibv_pd *pd, *pd2;
	struct pollfd pfd;
	time_t deadline;
	int fatal = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: hold_open DEV SECONDS\n");
		return 2;
	}
	ctx = tl_open_device(argv[1]);
	pd = ibv_alloc_pd(ctx);
	tl_check(pd != NULL, "PD allocated before removal");
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

	pd2 = ibv_alloc_pd(ctx);
	tl_check(pd2 == NULL, "no PD can be allocated on a removed device (errno %d)",
		 pd2 ? 0 : errno);
	if (pd)
		ibv_dealloc_pd(pd);	/* may fail: the kernel object is gone */
	tl_check(ibv_close_device(ctx) == 0, "device closes after removal");
	return tl_exit_status();
}
