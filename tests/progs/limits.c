// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * limits count DEV: creates PDs, then CQs, then MRs, then RC QPs, then
 * SRQs on DEV until a create fails, and prints "TYPE N ERRNO" for each (N
 * created, ERRNO of the create that failed, 0 if CAP creates all worked).
 * After each type it frees one object and checks that one create works
 * again. Then it frees the MRs and allocates memory windows the same way
 * ("mws N ERRNO"): a window takes an entry of the MR table.
 *
 * limits ring DEV CQE WR: creates a CQ of CQE entries and an RC QP of WR
 * send and WR receive WQEs, prints "created" or "failed ERRNO", then
 * waits for a line on stdin before it exits (the caller measures the
 * memory its cgroup was charged meanwhile).
 */
#include <unistd.h>
#include "testlib.h"

#define CAP 4096

static struct ibv_context *ctx;
static struct ibv_pd *pds[CAP];
static struct ibv_cq *cqs[CAP];
static struct ibv_mr *mrs[CAP];
static struct ibv_qp *qps[CAP];
static struct ibv_srq *srqs[CAP];
static struct ibv_mw *mws[CAP];
static char buf[4096];

static void *create(int type, int i)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_srq_init_attr sinit = {
		.attr = { .max_wr = 1, .max_sge = 1 },
	};

	switch (type) {
	case 0:
		return pds[i] = ibv_alloc_pd(ctx);
	case 1:
		return cqs[i] = ibv_create_cq(ctx, 1, NULL, NULL, 0);
	case 2:
		return mrs[i] = ibv_reg_mr(pds[0], buf, sizeof(buf),
					   IBV_ACCESS_LOCAL_WRITE);
	case 3:
		init.send_cq = cqs[0];
		init.recv_cq = cqs[0];
		return qps[i] = ibv_create_qp(pds[0], &init);
	case 4:
		return srqs[i] = ibv_create_srq(pds[0], &sinit);
	default:
		return mws[i] = ibv_alloc_mw(pds[0], IBV_MW_TYPE_1);
	}
}

static int destroy(int type, int i)
{
	switch (type) {
	case 0:
		return ibv_dealloc_pd(pds[i]);
	case 1:
		return ibv_destroy_cq(cqs[i]);
	case 2:
		return ibv_dereg_mr(mrs[i]);
	case 3:
		return ibv_destroy_qp(qps[i]);
	case 4:
		return ibv_destroy_srq(srqs[i]);
	default:
		return ibv_dealloc_mw(mws[i]);
	}
}

static void *object(int type, int i)
{
	switch (type) {
	case 0:
		return pds[i];
	case 1:
		return cqs[i];
	case 2:
		return mrs[i];
	case 3:
		return qps[i];
	case 4:
		return srqs[i];
	default:
		return mws[i];
	}
}

/* Frees every object of type (those a create left NULL are skipped). */
static void destroy_all(int type)
{
	int i;

	for (i = 0; i < CAP; i++) {
		if (object(type, i) && destroy(type, i))
			tl_die("destroy");
		switch (type) {
		case 2:
			mrs[i] = NULL;
			break;
		default:
			break;
		}
	}
}

/* Creates objects of type until one fails; prints "NAME N ERRNO". */
static void fill(int type)
{
	static const char *const names[] = { "pds", "cqs", "mrs", "qps",
					     "srqs", "mws" };
	int n, err = 0;

	for (n = 0; n < CAP; n++) {
		errno = 0;
		if (!create(type, n)) {
			err = errno;
			break;
		}
	}
	printf("%s %d %d\n", names[type], n, err);
	/* PD 0 and CQ 0 stay: the other objects need them. */
	if (n > 1) {
		tl_check(!destroy(type, n - 1) && create(type, n - 1),
			 "%s: after one is freed, one more can be made",
			 names[type]);
	}
	fflush(stdout);
}

static int count(void)
{
	int type;

	for (type = 0; type < 5; type++)
		fill(type);
	destroy_all(2);		/* windows take the MRs' entries */
	fill(5);
	for (type = 5; type >= 0; type--)
		destroy_all(type);
	return tl_exit_status();
}

static int ring(int cqe, int wr)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = wr, .max_recv_wr = wr,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq;
	struct ibv_qp *qp = NULL;
	char line[16];

	if (!pd)
		tl_die("ibv_alloc_pd");
	errno = 0;
	cq = ibv_create_cq(ctx, cqe, NULL, NULL, 0);
	if (cq) {
		init.send_cq = cq;
		init.recv_cq = cq;
		qp = ibv_create_qp(pd, &init);
	}
	if (qp)
		printf("created\n");
	else
		printf("failed %d\n", errno);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		line[0] = 0;
	if (qp)
		ibv_destroy_qp(qp);
	if (cq)
		ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "count")) {
		ctx = tl_open_device(argv[2]);
		return count();
	}
	if (argc == 5 && !strcmp(argv[1], "ring")) {
		ctx = tl_open_device(argv[2]);
		return ring(atoi(argv[3]), atoi(argv[4]));
	}
	fprintf(stderr, "usage: limits count DEV | limits ring DEV CQE WR\n");
	return 2;
}
