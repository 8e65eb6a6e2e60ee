// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shortcut_flood DEV GID_INDEX: what a UC sender on the shortcut makes the
 * kernel hold is bounded and charged to the sender's memory cgroup.
 *
 * 1. A UC message of 1 MiB + 3 bytes between two QPs of this host arrives
 *    whole and exact (the shortcut carries UC in pieces).
 * 2. The sender posts 16 WQEs of 32 SGEs x 8 MiB (256 MiB each, 4 GiB in
 *    all) to a receiver with no receive WQE: every WQE completes, and the
 *    host's available memory never falls by more than 128 MiB while they
 *    go (a whole-message copy per packet would take 256 MiB at a time).
 * 3. If this process runs in a cgroup v2 with the memory controller, the
 *    cgroup's kernel memory rises while the flood goes: the copies are
 *    charged to it.
 * Prints "ok - ..." / "not ok - ..." lines; exits 0 only if all passed.
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include "testlib.h"

#define BIG (8UL << 20)
#define NUM_SGE 32
#define FLOOD_WQES 16
#define SMALL ((1U << 20) + 3)

static volatile int sampling = 1;
static long long mem_min_kb = -1, kernel_max, kernel_base;
static char memstat_path[512];

static long long meminfo_kb(const char *key)
{
	char line[256];
	long long v = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)) &&
		    sscanf(line + strlen(key), " %lld", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* The "kernel" bytes of this process's cgroup's memory.stat, or -1. */
static long long cgroup_kernel(void)
{
	char line[256];
	long long v = -1;
	FILE *f;

	if (!memstat_path[0])
		return -1;
	f = fopen(memstat_path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "kernel %lld", &v) == 1)
			break;
	fclose(f);
	return v;
}

static void find_memstat(void)
{
	char line[256], *p;
	FILE *f = fopen("/proc/self/cgroup", "r");

	if (!f)
		return;
	/* cgroup v2: "0::/path" */
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			p = strchr(line, '\n');
			if (p)
				*p = 0;
			if (strcmp(line + 3, "/"))
				snprintf(memstat_path, sizeof(memstat_path),
					 "/sys/fs/cgroup%s/memory.stat",
					 line + 3);
		}
	fclose(f);
	if (memstat_path[0] && access(memstat_path, R_OK))
		memstat_path[0] = 0;
}

static void *sampler(void *arg)
{
	long long m, k;

	(void)arg;
	while (sampling) {
		m = meminfo_kb("MemAvailable:");
		if (m >= 0 && (mem_min_kb < 0 || m < mem_min_kb))
			mem_min_kb = m;
		k = cgroup_kernel();
		if (k > kernel_max)
			kernel_max = k;
		usleep(2000);
	}
	return NULL;
}

static void connect_pair(struct ibv_qp *a, struct ibv_qp *b,
			 union ibv_gid *gid, int sgid)
{
	struct tl_rc_conn c = {
		.dgid = gid, .sgid_index = sgid, .sq_psn = 100, .rq_psn = 100,
		.access = IBV_ACCESS_REMOTE_WRITE,
	};

	c.dest_qpn = b->qp_num;
	if (tl_connect_uc(a, &c))
		tl_die("connect a");
	c.dest_qpn = a->qp_num;
	if (tl_connect_uc(b, &c))
		tl_die("connect b");
}

int main(int argc, char **argv)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_UC,
		.cap = { .max_send_wr = FLOOD_WQES, .max_recv_wr = 4,
			 .max_send_sge = NUM_SGE, .max_recv_sge = 1 },
	};
	struct ibv_sge sge[NUM_SGE], rsge;
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_recv_wr rwr = {}, *rbad;
	struct ibv_qp *a, *b, *c, *d;
	struct ibv_context *ctx;
	struct ibv_mr *big_mr, *dst_mr;
	unsigned char *big, *dst;
	struct ibv_cq *scq, *rcq;
	struct ibv_pd *pd;
	union ibv_gid gid;
	struct ibv_wc wc;
	long long mem0, drops0, drops, ok_wqes = 0;
	pthread_t thr;
	unsigned int i;
	int sgid, n, same;

	if (argc != 3) {
		fprintf(stderr, "usage: shortcut_flood DEV GID_INDEX\n");
		return 2;
	}
	sgid = atoi(argv[2]);
	ctx = tl_open_device(argv[1]);
	if (ibv_query_gid(ctx, 1, sgid, &gid))
		tl_die("ibv_query_gid");
	pd = ibv_alloc_pd(ctx);
	scq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	rcq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	big = aligned_alloc(4096, BIG);
	dst = aligned_alloc(4096, SMALL + 4096);
	if (!pd || !scq || !rcq || !big || !dst)
		tl_die("setup");
	for (i = 0; i < BIG; i++)
		big[i] = (unsigned char)(i * 13 + i / 4093);
	memset(dst, 0xee, SMALL + 4096);
	big_mr = ibv_reg_mr(pd, big, BIG, IBV_ACCESS_LOCAL_WRITE);
	dst_mr = ibv_reg_mr(pd, dst, SMALL + 4096, IBV_ACCESS_LOCAL_WRITE);
	if (!big_mr || !dst_mr)
		tl_die("ibv_reg_mr");
	init.send_cq = scq;
	init.recv_cq = rcq;
	a = ibv_create_qp(pd, &init);
	b = ibv_create_qp(pd, &init);
	c = ibv_create_qp(pd, &init);
	d = ibv_create_qp(pd, &init);
	if (!a || !b || !c || !d)
		tl_die("ibv_create_qp");
	connect_pair(a, b, &gid, sgid);
	connect_pair(c, d, &gid, sgid);

	/* 1: a UC message of several pieces arrives exact. */
	rsge = (struct ibv_sge){ .addr = (uintptr_t)dst, .length = SMALL + 4096,
				 .lkey = dst_mr->lkey };
	rwr.wr_id = 7;
	rwr.sg_list = &rsge;
	rwr.num_sge = 1;
	if (ibv_post_recv(b, &rwr, &rbad))
		tl_die("ibv_post_recv");
	sge[0] = (struct ibv_sge){ .addr = (uintptr_t)big, .length = SMALL,
				   .lkey = big_mr->lkey };
	wr.wr_id = 1;
	wr.sg_list = sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	if (ibv_post_send(a, &wr, &bad))
		tl_die("ibv_post_send");
	n = tl_wait_wc(scq, &wc, 20);
	tl_check(n && wc.status == IBV_WC_SUCCESS && wc.wr_id == 1,
		 "a UC SEND of 1 MiB + 3 bytes completes (%d, status %d)", n,
		 n ? (int)wc.status : -1);
	n = tl_wait_wc(rcq, &wc, 20);
	tl_check(n && wc.status == IBV_WC_SUCCESS && wc.byte_len == SMALL,
		 "it is received whole (%d, status %d, %u bytes)", n,
		 n ? (int)wc.status : -1, n ? wc.byte_len : 0);
	same = !memcmp(dst, big, SMALL);
	for (i = SMALL; i < SMALL + 4096; i++)
		same &= dst[i] == 0xee;
	tl_check(same, "with exactly its bytes, and none past them");

	/* 2, 3: 4 GiB of UC to a receiver with no receive WQE. */
	find_memstat();
	kernel_base = cgroup_kernel();
	kernel_max = kernel_base;
	mem0 = meminfo_kb("MemAvailable:");
	mem_min_kb = mem0;
	drops0 = tl_hw_counter("rx_drop_no_recv") +
		 tl_hw_counter("rx_drop_protocol") +
		 tl_hw_counter("rx_drop_queue_full");
	if (pthread_create(&thr, NULL, sampler, NULL))
		tl_die("pthread_create");
	for (i = 0; i < NUM_SGE; i++)
		sge[i] = (struct ibv_sge){ .addr = (uintptr_t)big,
					   .length = BIG, .lkey = big_mr->lkey };
	wr.num_sge = NUM_SGE;
	for (i = 0; i < FLOOD_WQES; i++) {
		wr.wr_id = 100 + i;
		if (ibv_post_send(c, &wr, &bad))
			tl_die("ibv_post_send flood");
	}
	for (i = 0; i < FLOOD_WQES; i++) {
		if (!tl_wait_wc(scq, &wc, 300))
			break;
		ok_wqes += wc.status == IBV_WC_SUCCESS;
	}
	sleep(1);
	sampling = 0;
	pthread_join(thr, NULL);
	drops = tl_hw_counter("rx_drop_no_recv") +
		tl_hw_counter("rx_drop_protocol") +
		tl_hw_counter("rx_drop_queue_full") - drops0;
	tl_check(ok_wqes == FLOOD_WQES,
		 "every 256 MiB UC WQE completes (%lld of %d)", ok_wqes,
		 FLOOD_WQES);
	tl_check(drops > 0, "the receiver dropped the packets it had no "
		 "receive WQE for (%lld)", drops);
	tl_check(mem0 > 0 && mem0 - mem_min_kb < 128 * 1024,
		 "available memory fell by %lld KiB at most (limit 131072)",
		 mem0 - mem_min_kb);
	if (kernel_base >= 0)
		tl_check(kernel_max - kernel_base >= 1 << 20,
			 "the sender's cgroup was charged the copies (kernel "
			 "memory rose by %lld bytes at most)",
			 kernel_max - kernel_base);
	else
		printf("# no cgroup v2 memory.stat: charging not checked\n");

	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_destroy_qp(c);
	ibv_destroy_qp(d);
	ibv_dereg_mr(big_mr);
	ibv_dereg_mr(dst_mr);
	ibv_destroy_cq(scq);
	ibv_destroy_cq(rcq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	free(big);
	free(dst);
	return tl_exit_status();
}
