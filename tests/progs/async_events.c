// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * async_events DEV SECONDS COUNT: prints "ready", then the name of each
 * asynchronous event of DEV as it arrives, until COUNT events were seen
 * (exit 0) or SECONDS passed (exit 1).
 */
#include <poll.h>
#include <time.h>
#include "testlib.h"

int main(int argc, char **argv)
{
	struct ibv_async_event ev;
	struct ibv_context *ctx;
	struct pollfd pfd;
	time_t deadline;
	int seen = 0, want;

	if (argc != 4) {
		fprintf(stderr, "usage: async_events DEV SECONDS COUNT\n");
		return 2;
	}
	ctx = tl_open_device(argv[1]);
	deadline = time(NULL) + atoi(argv[2]);
	want = atoi(argv[3]);
	printf("ready\n");
	fflush(stdout);

	pfd.fd = ctx->async_fd;
	pfd.events = POLLIN;
	while (seen < want && time(NULL) < deadline) {
		if (poll(&pfd, 1, 200) <= 0)
			continue;
		if (ibv_get_async_event(ctx, &ev))
			tl_die("ibv_get_async_event");
		printf("event %s port %d\n", ibv_event_type_str(ev.event_type),
		       ev.element.port_num);
		fflush(stdout);
		ibv_ack_async_event(&ev);
		seen++;
	}
	ibv_close_device(ctx);
	return seen >= want ? 0 : 1;
}
