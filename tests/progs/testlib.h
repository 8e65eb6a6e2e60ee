/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Small helpers shared by sroce's test programs. Programs print TAP-style
 * "ok - ..." / "not ok - ..." lines that tests/vm/run counts, and exit
 * non-zero when any check failed.
 */
#ifndef SROCE_TESTLIB_H
#define SROCE_TESTLIB_H

#include <errno.h>
#include <glob.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

static int tl_failures;

static inline void tl_check(int cond, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static inline void tl_check(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%s - ", cond ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!cond)
		tl_failures++;
}

static inline void tl_die(const char *what)
{
	fprintf(stderr, "fatal: %s: %s\n", what, strerror(errno));
	exit(2);
}

static inline int tl_exit_status(void)
{
	return tl_failures ? 1 : 0;
}

/*
 * sroce's hw counter name summed over the devices here (the port's
 * hw_counters in sysfs; rdma_rxe's counters have other names); -1 if no
 * device has it.
 */
static inline long long tl_hw_counter(const char *name)
{
	char pattern[128];
	long long sum = -1, v;
	glob_t g;
	size_t i;
	FILE *f;

	snprintf(pattern, sizeof(pattern),
		 "/sys/class/infiniband/*/ports/1/hw_counters/%s", name);
	if (glob(pattern, 0, NULL, &g))
		return -1;
	for (i = 0; i < g.gl_pathc; i++) {
		f = fopen(g.gl_pathv[i], "r");
		if (!f)
			continue;
		if (fscanf(f, "%lld", &v) == 1)
			sum = (sum < 0 ? 0 : sum) + v;
		fclose(f);
	}
	globfree(&g);
	return sum;
}

/* Opens the verbs device called name (through the installed provider). */
static inline struct ibv_context *tl_open_device(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list)
		tl_die("ibv_get_device_list");
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx) {
		fprintf(stderr, "fatal: cannot open device %s\n", name);
		exit(2);
	}
	return ctx;
}

/* tl_open_device(), and *gid: the GID at index gid_index of port 1. */
static inline struct ibv_context *tl_open_with_gid(const char *name,
						   int gid_index,
						   union ibv_gid *gid)
{
	struct ibv_context *ctx = tl_open_device(name);

	if (ibv_query_gid(ctx, 1, gid_index, gid))
		tl_die("ibv_query_gid");
	return ctx;
}

/* How tl_connect_rc() sets up a QP; zero fields take the defaults noted. */
struct tl_rc_conn {
	uint32_t dest_qpn;
	const union ibv_gid *dgid;
	int sgid_index;
	uint32_t sq_psn;
	uint32_t rq_psn;		/* the peer's sq_psn */
	int access;			/* remote access granted to the peer */
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t min_rnr_timer;
	uint8_t rd_atomic;		/* both directions */
};

/* A RoCE address vector: port 1, GRH to dgid from GID index sgid_index. */
static inline void tl_set_av(struct ibv_ah_attr *ah, const union ibv_gid *dgid,
			     int sgid_index)
{
	ah->is_global = 1;
	ah->grh.dgid = *dgid;
	ah->grh.sgid_index = sgid_index;
	ah->grh.hop_limit = 64;
	ah->port_num = 1;
}

/* Moves a QP from RESET to INIT on port 1, P_Key index 0. */
static inline int tl_to_init(struct ibv_qp *qp, int access)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = access,
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

/*
 * Moves an RC or UC QP from RESET through INIT to RTR; RC QPs also take
 * c's responder resources and RNR timer.
 */
static inline int tl_to_rtr(struct ibv_qp *qp, const struct tl_rc_conn *c,
			    enum ibv_mtu mtu)
{
	int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
		   IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	struct ibv_qp_attr a = {};

	if (tl_to_init(qp, c->access))
		return -1;
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = mtu;
	a.dest_qp_num = c->dest_qpn;
	a.rq_psn = c->rq_psn;
	tl_set_av(&a.ah_attr, c->dgid, c->sgid_index);
	if (qp->qp_type == IBV_QPT_RC) {
		a.max_dest_rd_atomic = c->rd_atomic;
		a.min_rnr_timer = c->min_rnr_timer;
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	}
	return ibv_modify_qp(qp, &a, mask);
}

/* Moves an RC QP from RESET through INIT and RTR to RTS. */
static inline int tl_connect_rc_mtu(struct ibv_qp *qp,
				    const struct tl_rc_conn *c,
				    enum ibv_mtu mtu)
{
	struct ibv_qp_attr a = {};

	if (tl_to_rtr(qp, c, mtu))
		return -1;
	a.qp_state = IBV_QPS_RTS;
	a.timeout = c->timeout;
	a.retry_cnt = c->retry_cnt;
	a.rnr_retry = c->rnr_retry;
	a.sq_psn = c->sq_psn;
	a.max_rd_atomic = c->rd_atomic;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

static inline int tl_connect_rc(struct ibv_qp *qp, const struct tl_rc_conn *c)
{
	return tl_connect_rc_mtu(qp, c, IBV_MTU_1024);
}

/* Moves a UC QP to RTS; c's timeouts, retries and rd_atomic are unused. */
static inline int tl_connect_uc(struct ibv_qp *qp, const struct tl_rc_conn *c)
{
	struct ibv_qp_attr a = {};

	if (tl_to_rtr(qp, c, IBV_MTU_1024))
		return -1;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = c->sq_psn;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

/* Moves a UD QP to RTS with Q_Key qkey and first PSN sq_psn. */
static inline int tl_connect_ud(struct ibv_qp *qp, uint32_t qkey,
				uint32_t sq_psn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = qkey,
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		return -1;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return -1;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = sq_psn;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

#define TL_REMOTE_ALL                                                      \
	(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |                 \
	 IBV_ACCESS_REMOTE_ATOMIC)

/*
 * Connects RC QPs a and b of one host to each other through GID gid
 * (index sgid_index): first PSN psn both ways, every remote access, 7
 * retries. Returns 0 or -1.
 */
static inline int tl_connect_rc_pair(struct ibv_qp *a, struct ibv_qp *b,
				     const union ibv_gid *gid, int sgid_index,
				     uint32_t psn)
{
	struct tl_rc_conn c = {
		.dgid = gid, .sgid_index = sgid_index, .sq_psn = psn,
		.rq_psn = psn, .access = TL_REMOTE_ALL, .timeout = 14,
		.retry_cnt = 7, .rnr_retry = 7, .min_rnr_timer = 1,
		.rd_atomic = 1,
	};

	c.dest_qpn = b->qp_num;
	if (tl_connect_rc(a, &c))
		return -1;
	c.dest_qpn = a->qp_num;
	return tl_connect_rc(b, &c);
}

/*
 * Two RC QPs of one host, each with a CQ of its own, connected to each
 * other: qp[0] in pd0, qp[1] in pd1, 8 WRs and one SGE each way, the
 * extended send operations send_ops (IBV_QP_EX_WITH_*; 0: none).
 */
struct tl_rc_pair {
	struct ibv_qp *qp[2];
	struct ibv_cq *cq[2];
};

static inline int tl_rc_pair_create(struct tl_rc_pair *p,
				    struct ibv_context *ctx,
				    struct ibv_pd *pd0, struct ibv_pd *pd1,
				    uint64_t send_ops,
				    const union ibv_gid *gid, int gid_index)
{
	struct ibv_qp_init_attr_ex init = {
		.qp_type = IBV_QPT_RC,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	int i;

	if (send_ops) {
		init.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		init.send_ops_flags = send_ops;
	}
	for (i = 0; i < 2; i++) {
		p->cq[i] = ibv_create_cq(ctx, 16, NULL, NULL, 0);
		init.send_cq = init.recv_cq = p->cq[i];
		init.pd = i ? pd1 : pd0;
		p->qp[i] = p->cq[i] ? ibv_create_qp_ex(ctx, &init) : NULL;
		if (!p->qp[i])
			return -1;
	}
	return tl_connect_rc_pair(p->qp[0], p->qp[1], gid, gid_index, 3);
}

static inline void tl_rc_pair_destroy(struct tl_rc_pair *p)
{
	int i;

	for (i = 0; i < 2; i++) {
		ibv_destroy_qp(p->qp[i]);
		ibv_destroy_cq(p->cq[i]);
	}
}

/* A xorshift generator; each test seeds it from its command line. */
static inline uint64_t *tl_rng(void)
{
	static uint64_t state = 1;

	return &state;
}

static inline uint64_t tl_rnd(void)
{
	uint64_t *s = tl_rng();

	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A message size from 1 to max bytes, most of them small. */
static inline size_t tl_rnd_size(size_t max)
{
	switch (tl_rnd() % 8) {
	case 0:
		return 1 + tl_rnd() % 16;
	case 1:
	case 2:
		return 1 + tl_rnd() % 512;
	case 3:
	case 4:
		return 1 + tl_rnd() % 8192;
	case 5:
	case 6:
		return 1 + tl_rnd() % (256 * 1024);
	default:
		return 1 + tl_rnd() % max;
	}
}

/* Splits [addr, addr + len) into 1..max_sge SGEs (some possibly empty). */
static inline int tl_split(struct ibv_sge *sge, int max_sge, uint64_t addr,
			   size_t len, uint32_t lkey)
{
	int n = 1 + tl_rnd() % max_sge, i;
	size_t left = len, part;

	for (i = 0; i < n; i++) {
		part = i == n - 1 ? left : (left ? tl_rnd() % (left + 1) : 0);
		sge[i].addr = addr;
		sge[i].length = part;
		sge[i].lkey = lkey;
		addr += part;
		left -= part;
	}
	return n;
}

/* Waits up to secs for one completion on cq; 0 on timeout. */
static inline int tl_wait_wc(struct ibv_cq *cq, struct ibv_wc *wc, int secs)
{
	struct timespec t0, t;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n > 0;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > secs)
			return 0;
	}
}

#endif /* SROCE_TESTLIB_H */
