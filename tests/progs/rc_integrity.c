// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rc_integrity DEV[,DEV2] GID_INDEX PAIRS ITERATIONS SEED [MAX_SIZE]
 *
 * Connects PAIRS RC QP pairs on DEV to each other (or each QP on DEV to
 * one on DEV2, another sroce device of the host) and runs ITERATIONS
 * random operations on each pair: SEND and SEND with immediate, RDMA WRITE
 * (with immediate), RDMA READ, compare-and-swap and fetch-and-add, with
 * random sizes (1 B to MAX_SIZE, default 8 MiB), random offsets, random
 * scatter/gather splits on both sides, inline or not. Every completion's
 * status, opcode, length and immediate, and every byte that arrived, is
 * checked. Prints one "ok"/"not ok" line per pair and a summary.
 */
#include <arpa/inet.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include "testlib.h"

#define MAX_SGE 4
#define SLACK 4096
#define PAGE 4096

struct pair;

/* An open device: side a of every pair uses devs[0], side b devs[1]. */
struct dev {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	union ibv_gid gid;
};

struct side {
	struct dev *dev;
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;
	size_t len;
};

struct pair {
	struct side a;	/* requester */
	struct side b;	/* responder */
	uint32_t psn_a, psn_b;
};

static struct dev devs[2];
static int gid_index;
static size_t max_size = 8 << 20;
static int max_inline;

static void setup_side(struct side *s, struct dev *d)
{
	struct ibv_context *ctx = d->ctx;
	struct ibv_pd *pd = d->pd;

	s->dev = d;
	s->len = max_size + 2 * SLACK;
	s->buf = malloc(s->len);
	if (!s->buf)
		tl_die("malloc");
	s->cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	if (!s->cq)
		tl_die("ibv_create_cq");
	s->mr = ibv_reg_mr(pd, s->buf, s->len,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	if (!s->mr)
		tl_die("ibv_reg_mr");
	struct ibv_qp_init_attr init = {
		.send_cq = s->cq, .recv_cq = s->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = MAX_SGE, .max_recv_sge = MAX_SGE,
			 .max_inline_data = 256 },
	};
	s->qp = ibv_create_qp(pd, &init);
	if (!s->qp)
		tl_die("ibv_create_qp");
	max_inline = init.cap.max_inline_data;
}

static void connect_qp(struct ibv_qp *qp, uint32_t dest, uint32_t my_psn,
		       uint32_t dest_psn, const union ibv_gid *gid)
{
	struct tl_rc_conn conn = {
		.dest_qpn = dest, .dgid = gid, .sgid_index = gid_index,
		.sq_psn = my_psn, .rq_psn = dest_psn, .access = TL_REMOTE_ALL,
		.timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
		.min_rnr_timer = 1, .rd_atomic = 4,
	};

	if (tl_connect_rc(qp, &conn))
		tl_die("connecting a QP");
}
static int fail(const char *what, int iter, const char *op, size_t len)
{
	printf("# pair failed at iteration %d: %s (%s, %zu bytes)\n", iter, what,
	       op, len);
	return 1;
}

static int one_op(struct pair *p, int iter)
{
	static const char *names[] = { "SEND", "SEND_IMM", "WRITE", "WRITE_IMM",
				       "READ", "CMP_SWP", "FETCH_ADD" };
	int op = tl_rnd() % 7;
	size_t len = (op >= 5) ? 8 : tl_rnd_size(max_size);
	size_t soff = tl_rnd() % SLACK, doff = tl_rnd() % SLACK;
	struct ibv_sge ssge[MAX_SGE], rsge[MAX_SGE];
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_recv_wr rwr = {}, *rbad;
	struct ibv_wc wc;
	uint32_t imm = (uint32_t)tl_rnd();
	bool recv = op <= 1 || op == 3;
	bool is_inline = false;
	uint8_t *src, *dst;
	uint64_t orig = 0, val, cmp = 0, swp = 0;
	size_t i;

	if (op >= 5) {
		/*
		 * The target is aligned; the 8 bytes the original value
		 * comes back to need not be, and a quarter straddle a page.
		 */
		doff &= ~7UL;
		if (!(tl_rnd() & 3))
			soff = (PAGE - 4 - (uintptr_t)p->a.buf % PAGE) % PAGE;
	}
	/* READ moves data from b to a; everything else from a to b. */
	src = (op == 4 ? p->b.buf : p->a.buf) + soff;
	dst = (op == 4 ? p->a.buf : p->b.buf) + doff;
	for (i = 0; i < len; i++)
		src[i] = (uint8_t)tl_rnd();
	memset(dst, 0xee, len);

	if (recv) {
		rwr.wr_id = 0xb000 + iter;
		rwr.sg_list = rsge;
		rwr.num_sge = tl_split(rsge, MAX_SGE, (uintptr_t)dst, len + tl_rnd() % 64,
				    p->b.mr->lkey);
		if (op == 3)
			rwr.num_sge = 0;
		if (ibv_post_recv(p->b.qp, &rwr, &rbad))
			return fail("post_recv", iter, names[op], len);
	}

	wr.wr_id = 0xa000 + iter;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = ssge;
	switch (op) {
	case 0:
		wr.opcode = IBV_WR_SEND;
		break;
	case 1:
		wr.opcode = IBV_WR_SEND_WITH_IMM;
		wr.imm_data = htonl(imm);
		break;
	case 2:
		wr.opcode = IBV_WR_RDMA_WRITE;
		break;
	case 3:
		wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
		wr.imm_data = htonl(imm);
		break;
	case 4:
		wr.opcode = IBV_WR_RDMA_READ;
		break;
	case 5:
		wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
		break;
	default:
		wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		break;
	}
	if (op == 2 || op == 3) {
		wr.wr.rdma.remote_addr = (uintptr_t)dst;
		wr.wr.rdma.rkey = p->b.mr->rkey;
	}
	if (op == 4) {
		wr.wr.rdma.remote_addr = (uintptr_t)src;
		wr.wr.rdma.rkey = p->b.mr->rkey;
	}
	if (op >= 5) {
		/* The target lives in b; the original value comes back to a. */
		uint64_t *target = (uint64_t *)(p->b.buf + SLACK + doff);

		orig = tl_rnd();
		*target = orig;
		cmp = (tl_rnd() & 1) ? orig : orig ^ 1;
		swp = tl_rnd();
		wr.wr.atomic.remote_addr = (uintptr_t)target;
		wr.wr.atomic.rkey = p->b.mr->rkey;
		wr.wr.atomic.compare_add = op == 5 ? cmp : swp;
		wr.wr.atomic.swap = swp;
		ssge[0].addr = (uintptr_t)(p->a.buf + soff);
		ssge[0].length = 8;
		ssge[0].lkey = p->a.mr->lkey;
		wr.num_sge = 1;
		/* And 8 guard bytes on either side. */
		memset(p->a.buf + soff - (soff < 8 ? soff : 8), 0xee,
		       (soff < 8 ? soff : 8) + 16);
	} else if (op == 4) {
		wr.num_sge = tl_split(ssge, MAX_SGE, (uintptr_t)dst, len, p->a.mr->lkey);
	} else {
		is_inline = len <= (size_t)max_inline && (tl_rnd() & 1);
		wr.num_sge = tl_split(ssge, MAX_SGE, (uintptr_t)src, len, p->a.mr->lkey);
		if (is_inline)
			wr.send_flags |= IBV_SEND_INLINE;
	}
	if (ibv_post_send(p->a.qp, &wr, &bad))
		return fail("post_send", iter, names[op], len);

	if (!tl_wait_wc(p->a.cq, &wc, 20))
		return fail("no send completion", iter, names[op], len);
	if (wc.status != IBV_WC_SUCCESS || wc.wr_id != wr.wr_id)
		return fail(ibv_wc_status_str(wc.status), iter, names[op], len);
	if ((op == 4 || op >= 5) && wc.byte_len != len)
		return fail("requester byte_len", iter, names[op], len);

	if (recv) {
		if (!tl_wait_wc(p->b.cq, &wc, 20))
			return fail("no receive completion", iter, names[op], len);
		if (wc.status != IBV_WC_SUCCESS || wc.wr_id != rwr.wr_id)
			return fail(ibv_wc_status_str(wc.status), iter,
				    names[op], len);
		if (wc.byte_len != len)
			return fail("receive byte_len", iter, names[op], len);
		if (wc.opcode != (op == 3 ? IBV_WC_RECV_RDMA_WITH_IMM :
				  IBV_WC_RECV))
			return fail("receive opcode", iter, names[op], len);
		if ((op == 1 || op == 3) != !!(wc.wc_flags & IBV_WC_WITH_IMM) ||
		    ((op == 1 || op == 3) && ntohl(wc.imm_data) != imm))
			return fail("immediate", iter, names[op], len);
		if (wc.qp_num != p->b.qp->qp_num || wc.src_qp != p->a.qp->qp_num)
			return fail("receive QP numbers", iter, names[op], len);
	}

	if (op >= 5) {
		uint64_t *target = (uint64_t *)(p->b.buf + SLACK + doff);

		memcpy(&val, p->a.buf + soff, 8);
		if (val != orig)
			return fail("atomic original value", iter, names[op], len);
		for (i = soff < 8 ? 0 : soff - 8; i < soff + 16; i++)
			if ((i < soff || i >= soff + 8) && p->a.buf[i] != 0xee)
				return fail("bytes beside the atomic's result",
					    iter, names[op], len);
		if (op == 5 && *target != (cmp == orig ? swp : orig))
			return fail("compare-and-swap result", iter, names[op], len);
		if (op == 6 && *target != orig + swp)
			return fail("fetch-and-add result", iter, names[op], len);
		return 0;
	}
	if (memcmp(src, dst, len))
		return fail("data mismatch", iter, names[op], len);
	return 0;
}

int main(int argc, char **argv)
{
	struct pair *pairs;
	int npairs, iters, i, it, bad_pairs = 0;

	if (argc < 6) {
		fprintf(stderr,
			"usage: rc_integrity DEV[,DEV2] GID_INDEX PAIRS ITERATIONS SEED [MAX_SIZE]\n");
		return 2;
	}
	gid_index = atoi(argv[2]);
	{
		char *second = strchr(argv[1], ',');
		int d;

		if (second)
			*second++ = 0;
		devs[0].ctx = tl_open_device(argv[1]);
		devs[1].ctx = second ? tl_open_device(second) : devs[0].ctx;
		for (d = 0; d < 2; d++) {
			if (d && devs[1].ctx == devs[0].ctx) {
				devs[1].pd = devs[0].pd;
				devs[1].gid = devs[0].gid;
				break;
			}
			devs[d].pd = ibv_alloc_pd(devs[d].ctx);
			if (!devs[d].pd ||
			    ibv_query_gid(devs[d].ctx, 1, gid_index, &devs[d].gid))
				tl_die("device setup");
		}
	}
	npairs = atoi(argv[3]);
	iters = atoi(argv[4]);
	*tl_rng() = strtoull(argv[5], NULL, 0) | 1;
	if (argc > 6)
		max_size = strtoull(argv[6], NULL, 0);

	pairs = calloc(npairs, sizeof(*pairs));
	for (i = 0; i < npairs; i++) {
		setup_side(&pairs[i].a, &devs[0]);
		setup_side(&pairs[i].b, &devs[1]);
		pairs[i].psn_a = tl_rnd() & 0xffffff;
		pairs[i].psn_b = tl_rnd() & 0xffffff;
		connect_qp(pairs[i].a.qp, pairs[i].b.qp->qp_num,
			   pairs[i].psn_a, pairs[i].psn_b, &devs[1].gid);
		connect_qp(pairs[i].b.qp, pairs[i].a.qp->qp_num,
			   pairs[i].psn_b, pairs[i].psn_a, &devs[0].gid);
	}
	for (i = 0; i < npairs; i++) {
		int bad = 0;

		for (it = 0; it < iters && !bad; it++)
			bad = one_op(&pairs[i], it);
		tl_check(!bad, "pair %d: %d random operations, data and completions verified",
			 i, bad ? it : iters);
		bad_pairs += bad;
	}
	for (i = 0; i < npairs; i++) {
		struct side *s[2] = { &pairs[i].a, &pairs[i].b };

		for (it = 0; it < 2; it++) {
			ibv_destroy_qp(s[it]->qp);
			ibv_dereg_mr(s[it]->mr);
			ibv_destroy_cq(s[it]->cq);
			free(s[it]->buf);
		}
	}
	free(pairs);
	ibv_dealloc_pd(devs[0].pd);
	ibv_close_device(devs[0].ctx);
	if (devs[1].ctx != devs[0].ctx) {
		ibv_dealloc_pd(devs[1].pd);
		ibv_close_device(devs[1].ctx);
	}
	return tl_exit_status();
}
