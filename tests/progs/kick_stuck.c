// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kick_stuck DEV: leaves a kick of its QP queued on a thread that never
 * returns to user space, then waits to be killed.
 *
 * It creates an RC QP (whose provider makes a kick eventfd), finds that
 * eventfd among its descriptors, and has a thread io_submit() two reads:
 * one of /dev/zero whose completion signals the kick eventfd, which the
 * kernel completes inside io_submit (so the kick's task_work is queued
 * on that thread), and one of an empty pipe, on which io_submit sleeps
 * for ever. It prints "ready" once the thread is asleep; the test then
 * removes the device underneath it, which must not wait for the thread.
 */
#include <dirent.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "testlib.h"

static int kick_fd = -1, pipe_fd[2];
static char zero_buf[4096], pipe_buf[4096];

static int find_eventfd(void)
{
	char path[300], target[64];
	struct dirent *e;
	ssize_t n;
	DIR *d = opendir("/proc/self/fd");
	int fd = -1;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = 0;
		if (!strcmp(target, "anon_inode:[eventfd]"))
			fd = atoi(e->d_name);
	}
	closedir(d);
	return fd;
}

static void *submitter(void *arg)
{
	struct iocb cb[2] = {}, *cbs[2] = { &cb[0], &cb[1] };
	aio_context_t aio = 0;
	int zero = open("/dev/zero", O_RDONLY);

	(void)arg;
	if (zero < 0 || syscall(SYS_io_setup, 2, &aio))
		tl_die("io_setup");
	cb[0].aio_lio_opcode = IOCB_CMD_PREAD;
	cb[0].aio_fildes = zero;
	cb[0].aio_buf = (uintptr_t)zero_buf;
	cb[0].aio_nbytes = sizeof(zero_buf);
	cb[0].aio_flags = IOCB_FLAG_RESFD;
	cb[0].aio_resfd = kick_fd;
	cb[1].aio_lio_opcode = IOCB_CMD_PREAD;
	cb[1].aio_fildes = pipe_fd[0];
	cb[1].aio_buf = (uintptr_t)pipe_buf;
	cb[1].aio_nbytes = sizeof(pipe_buf);
	syscall(SYS_io_submit, aio, 2, cbs);	/* sleeps on the pipe */
	return NULL;
}

int main(int argc, char **argv)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_context *ctx;
	struct ibv_qp *qp;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	pthread_t thr;

	if (argc != 2) {
		fprintf(stderr, "usage: kick_stuck DEV\n");
		return 2;
	}
	ctx = tl_open_device(argv[1]);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	if (!pd || !cq)
		tl_die("setup");
	init.send_cq = cq;
	init.recv_cq = cq;
	qp = ibv_create_qp(pd, &init);
	if (!qp)
		tl_die("ibv_create_qp");
	kick_fd = find_eventfd();
	if (kick_fd < 0 || pipe(pipe_fd))
		tl_die("no kick eventfd, or pipe");
	if (pthread_create(&thr, NULL, submitter, NULL))
		tl_die("pthread_create");
	sleep(2);	/* the thread is asleep in io_submit by then */
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
