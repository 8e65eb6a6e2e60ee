// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cap_edges DEV GID_INDEX: each limit ibv_query_device reports for DEV
 * (and the inline limit of Documentation/capabilities.rst) works at N and
 * is refused at N+1:
 * - max_qp_wr and max_sge for an RC QP's send and receive queues, the
 *   inline data a QP is created with (INLINE_MAX), max_cqe for a CQ,
 *   max_srq_wr and max_srq_sge for an SRQ: the create at N works, at N+1
 *   it fails with EINVAL;
 * - max_mcast_grp groups on one UD QP, max_mcast_qp_attach QPs on one
 *   group: the attach at N works, at N+1 it fails with ENOMEM;
 * - the port's max_msg_sz: a SEND of max_msg_sz + 32 bytes (32 SGEs over one MR)
 *   fails at the post (EINVAL) or completes with IBV_WC_LOC_LEN_ERR, and
 *   no byte reaches the receiver. A message of max_msg_sz itself (2 GiB)
 *   is not sent: too slow for the lab VM.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>
#include "testlib.h"

#define INLINE_MAX 512
#define SGE_LEN ((64u << 20) + 1)

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_device_attr attr;
static struct ibv_port_attr port;

static struct ibv_qp *qp_of(enum ibv_qp_type type, uint32_t swr, uint32_t rwr,
			    uint32_t ssge, uint32_t rsge, uint32_t inl)
{
	struct ibv_qp_init_attr init = {
		.qp_type = type, .send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = swr, .max_recv_wr = rwr,
			 .max_send_sge = ssge, .max_recv_sge = rsge,
			 .max_inline_data = inl },
	};

	errno = 0;
	return ibv_create_qp(pd, &init);
}

/* The create of a QP with these caps works; with one more it fails. */
static void qp_edge(const char *what, uint32_t n, int which)
{
	uint32_t c[2][5] = { { 1, 1, 1, 1, 0 }, { 1, 1, 1, 1, 0 } };
	struct ibv_qp *ok, *over;
	int err;

	c[0][which] = n;
	c[1][which] = n + 1;
	ok = qp_of(IBV_QPT_RC, c[0][0], c[0][1], c[0][2], c[0][3], c[0][4]);
	tl_check(ok != NULL, "%s %u: an RC QP is created (%s)", what, n,
		 ok ? "ok" : strerror(errno));
	over = qp_of(IBV_QPT_RC, c[1][0], c[1][1], c[1][2], c[1][3], c[1][4]);
	err = errno;
	tl_check(!over && err == EINVAL, "%s %u: refused with EINVAL (%s)",
		 what, n + 1, over ? "created" : strerror(err));
	if (ok)
		ibv_destroy_qp(ok);
	if (over)
		ibv_destroy_qp(over);
}

static void cq_edge(void)
{
	uint32_t n = attr.max_cqe;
	struct ibv_cq *ok, *over;
	int err;

	errno = 0;
	ok = ibv_create_cq(ctx, n, NULL, NULL, 0);
	tl_check(ok != NULL, "max_cqe %u: a CQ is created (%s)", n,
		 ok ? "ok" : strerror(errno));
	errno = 0;
	over = ibv_create_cq(ctx, n + 1, NULL, NULL, 0);
	err = errno;
	tl_check(!over && err == EINVAL, "max_cqe %u: refused with EINVAL (%s)",
		 n + 1, over ? "created" : strerror(err));
	if (ok)
		ibv_destroy_cq(ok);
	if (over)
		ibv_destroy_cq(over);
}

static struct ibv_srq *srq_of(uint32_t wr, uint32_t sge)
{
	struct ibv_srq_init_attr init = {
		.attr = { .max_wr = wr, .max_sge = sge },
	};

	errno = 0;
	return ibv_create_srq(pd, &init);
}

static void srq_edge(const char *what, uint32_t n, bool sges)
{
	struct ibv_srq *ok, *over;
	int err;

	ok = sges ? srq_of(1, n) : srq_of(n, 1);
	tl_check(ok != NULL, "%s %u: an SRQ is created (%s)", what, n,
		 ok ? "ok" : strerror(errno));
	over = sges ? srq_of(1, n + 1) : srq_of(n + 1, 1);
	err = errno;
	tl_check(!over && err == EINVAL, "%s %u: refused with EINVAL (%s)",
		 what, n + 1, over ? "created" : strerror(err));
	if (ok)
		ibv_destroy_srq(ok);
	if (over)
		ibv_destroy_srq(over);
}

/* ::ffff:239.1.X.Y, the RoCEv2 GID of IPv4 group 239.1.X.Y. */
static union ibv_gid group(uint32_t i)
{
	union ibv_gid g = {};

	g.raw[10] = g.raw[11] = 0xff;
	g.raw[12] = 239;
	g.raw[13] = 1;
	g.raw[14] = (uint8_t)(i >> 8);
	g.raw[15] = (uint8_t)i;
	return g;
}

static struct ibv_qp *ud_qp(void)
{
	struct ibv_qp *qp = qp_of(IBV_QPT_UD, 1, 1, 1, 1, 0);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qkey = 0x1111 };

	if (!qp || ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				 IBV_QP_PORT | IBV_QP_QKEY))
		tl_die("a UD QP in INIT");
	return qp;
}

static void mcast_edges(void)
{
	uint32_t groups = attr.max_mcast_grp, per = attr.max_mcast_qp_attach;
	struct ibv_qp *qp = ud_qp(), *qps[64];
	uint32_t i, ok = 0;
	union ibv_gid g;
	int err;

	for (i = 0; i < groups; i++) {
		g = group(i);
		ok += !ibv_attach_mcast(qp, &g, 0);
	}
	tl_check(ok == groups, "max_mcast_grp %u: one QP joins %u groups",
		 groups, ok);
	g = group(groups);
	err = ibv_attach_mcast(qp, &g, 0);
	tl_check(err == ENOMEM, "max_mcast_grp %u: a group more is refused with ENOMEM (%s)",
		 groups + 1, err ? strerror(err) : "joined");
	for (i = 0; i <= groups; i++) {
		g = group(i);
		ibv_detach_mcast(qp, &g, 0);
	}
	ibv_destroy_qp(qp);

	if (per + 1 > 64)
		tl_die("max_mcast_qp_attach above what the test holds");
	g = group(0);
	ok = 0;
	for (i = 0; i <= per; i++) {
		qps[i] = ud_qp();
		if (i < per)
			ok += !ibv_attach_mcast(qps[i], &g, 0);
	}
	tl_check(ok == per, "max_mcast_qp_attach %u: %u QPs join one group",
		 per, ok);
	err = ibv_attach_mcast(qps[per], &g, 0);
	tl_check(err == ENOMEM, "max_mcast_qp_attach %u: a QP more is refused with ENOMEM (%s)",
		 per + 1, err ? strerror(err) : "joined");
	for (i = 0; i <= per; i++) {
		ibv_detach_mcast(qps[i], &g, 0);
		ibv_destroy_qp(qps[i]);
	}
}

/* A SEND longer than max_msg_sz fails and moves no byte. */
static void msg_edge(const union ibv_gid *gid, int gid_index)
{
	uint32_t nsge = 32, i;
	uint64_t total = (uint64_t)nsge * SGE_LEN;
	size_t len = (SGE_LEN + 4095) & ~4095ul;
	struct ibv_qp *a, *b;
	struct ibv_sge sges[32], rsge;
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = sges, .num_sge = 32,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_recv_wr rwr = { .wr_id = 2, .sg_list = &rsge, .num_sge = 1 },
			   *rbad;
	struct ibv_mr *mr, *rmr;
	uint8_t *buf, rcv[4096];
	struct ibv_wc wc;
	int err, n = 0;

	if (attr.max_sge < 32 || total <= port.max_msg_sz) {
		tl_check(0, "max_msg_sz %llu: 32 SGEs of %u bytes exceed it",
			 (unsigned long long)port.max_msg_sz, SGE_LEN);
		return;
	}
	buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (buf == MAP_FAILED)
		tl_die("mmap");
	mr = ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE);
	memset(rcv, 0xcc, sizeof(rcv));
	rmr = ibv_reg_mr(pd, rcv, sizeof(rcv), IBV_ACCESS_LOCAL_WRITE);
	a = qp_of(IBV_QPT_RC, 1, 1, 32, 1, 0);
	b = qp_of(IBV_QPT_RC, 1, 1, 1, 1, 0);
	if (!mr || !rmr || !a || !b ||
	    tl_connect_rc_pair(a, b, gid, gid_index, 5))
		tl_die("two connected RC QPs");
	rsge = (struct ibv_sge){ .addr = (uintptr_t)rcv, .length = sizeof(rcv),
				 .lkey = rmr->lkey };
	if (ibv_post_recv(b, &rwr, &rbad))
		tl_die("ibv_post_recv");
	for (i = 0; i < nsge; i++)
		sges[i] = (struct ibv_sge){ .addr = (uintptr_t)buf,
					    .length = SGE_LEN,
					    .lkey = mr->lkey };
	err = ibv_post_send(a, &wr, &bad);
	if (!err) {
		for (i = 0; i < 5000 && !n; i++) {
			n = ibv_poll_cq(cq, 1, &wc);
			if (!n)
				usleep(1000);
		}
	}
	tl_check(err == EINVAL || (n == 1 && wc.wr_id == 1 &&
				   wc.status == IBV_WC_LOC_LEN_ERR),
		 "max_msg_sz %llu: a SEND of %llu bytes fails (post: %s, completion: %s)",
		 (unsigned long long)port.max_msg_sz,
		 (unsigned long long)total, err ? strerror(err) : "ok",
		 n == 1 ? ibv_wc_status_str(wc.status) : "none");
	for (i = 0; i < sizeof(rcv) && rcv[i] == 0xcc; i++)
		;
	tl_check(i == sizeof(rcv), "no byte of it reached the receiver");
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_dereg_mr(mr);
	ibv_dereg_mr(rmr);
	munmap(buf, len);
}

int main(int argc, char **argv)
{
	union ibv_gid gid;
	int gid_index;

	if (argc != 3) {
		fprintf(stderr, "usage: cap_edges DEV GID_INDEX\n");
		return 2;
	}
	gid_index = atoi(argv[2]);
	ctx = tl_open_with_gid(argv[1], gid_index, &gid);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	if (!pd || !cq || ibv_query_device(ctx, &attr) ||
	    ibv_query_port(ctx, 1, &port))
		tl_die("setup");
	printf("# max_qp_wr %d max_sge %d max_cqe %d max_srq_wr %d max_srq_sge %d max_mcast_grp %d max_mcast_qp_attach %d max_msg_sz %llu\n",
	       attr.max_qp_wr, attr.max_sge, attr.max_cqe, attr.max_srq_wr,
	       attr.max_srq_sge, attr.max_mcast_grp, attr.max_mcast_qp_attach,
	       (unsigned long long)port.max_msg_sz);
	qp_edge("max_qp_wr (send)", attr.max_qp_wr, 0);
	qp_edge("max_qp_wr (receive)", attr.max_qp_wr, 1);
	qp_edge("max_sge (send)", attr.max_sge, 2);
	qp_edge("max_sge (receive)", attr.max_sge, 3);
	qp_edge("max inline data", INLINE_MAX, 4);
	cq_edge();
	srq_edge("max_srq_wr", attr.max_srq_wr, false);
	srq_edge("max_srq_sge", attr.max_srq_sge, true);
	mcast_edges();
	msg_edge(&gid, gid_index);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return tl_exit_status();
}
