// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rc_threads DEV GID_INDEX THREADS OPS SEED
 *
 * Several threads post to one RC QP at once: each thread posts OPS
 * signaled RDMA WRITEs (1 to 64 bytes, inline or not) into a region of the
 * peer's buffer that only it writes, half of the threads through
 * ibv_post_send() and half through the ibv_wr_* API, retrying while the
 * send queue is full. The QP pair is connected through DEV's own GID. The
 * main thread then checks that every work request completed exactly once
 * with success, and every byte of the peer's buffer: each region holds
 * its source bytes and the rest of its slot is untouched.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include "testlib.h"

#define SLOT 64		/* bytes of the peer's buffer per work request */
#define SQ_DEPTH 32
#define UNTOUCHED 0xee

struct side {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
};

struct worker {
	pthread_t thread;
	unsigned int index;
	uint32_t *lens;		/* per work request */
	uint64_t full_retries;
	int error;		/* the first post error that is not ENOMEM */
};

static struct side a, b;
static struct ibv_qp_ex *qpx;
static unsigned int nthreads, nops;
static int max_inline;

static size_t slot_offset(unsigned int thread, unsigned int op)
{
	return ((size_t)thread * nops + op) * SLOT;
}

static uint64_t wr_id_of(unsigned int thread, unsigned int op)
{
	return (uint64_t)thread << 32 | op;
}

static int post_verbs(unsigned int t, unsigned int op, uint32_t len)
{
	size_t off = slot_offset(t, op);
	struct ibv_sge sge = {
		.addr = (uintptr_t)a.buf + off, .length = len,
		.lkey = a.mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id_of(t, op), .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)b.buf + off,
			     .rkey = b.mr->rkey },
	}, *bad;

	if ((int)len <= max_inline && (op & 1))
		wr.send_flags |= IBV_SEND_INLINE;
	return ibv_post_send(a.qp, &wr, &bad);
}

static int post_wr_api(unsigned int t, unsigned int op, uint32_t len)
{
	size_t off = slot_offset(t, op);

	ibv_wr_start(qpx);
	qpx->wr_id = wr_id_of(t, op);
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(qpx, b.mr->rkey, (uintptr_t)b.buf + off);
	if ((int)len <= max_inline && (op & 1))
		ibv_wr_set_inline_data(qpx, a.buf + off, len);
	else
		ibv_wr_set_sge(qpx, a.mr->lkey, (uintptr_t)a.buf + off, len);
	return ibv_wr_complete(qpx);
}

/* A queue that stays full this long means the engine stopped. */
static bool stuck(const struct timespec *since)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec - since->tv_sec > 60;
}

static void *poster(void *arg)
{
	struct worker *w = arg;
	struct timespec since;
	unsigned int op;
	int ret;

	for (op = 0; op < nops; op++) {
		clock_gettime(CLOCK_MONOTONIC, &since);
		do {
			ret = (w->index & 1) ?
			      post_wr_api(w->index, op, w->lens[op]) :
			      post_verbs(w->index, op, w->lens[op]);
			if (ret == ENOMEM && !(++w->full_retries & 1023) &&
			    stuck(&since))
				ret = ETIMEDOUT;
		} while (ret == ENOMEM);
		if (ret) {
			w->error = ret;
			break;
		}
	}
	return NULL;
}

static void setup_side(struct side *s, struct ibv_context *ctx,
		       struct ibv_pd *pd, size_t len, int cqe)
{
	struct ibv_qp_init_attr_ex init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = SQ_DEPTH, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1,
			 .max_inline_data = SLOT },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pd,
		.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE,
	};

	s->buf = malloc(len);
	if (!s->buf)
		tl_die("malloc");
	s->mr = ibv_reg_mr(pd, s->buf, len, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE);
	s->cq = ibv_create_cq(ctx, cqe, NULL, NULL, 0);
	if (!s->mr || !s->cq)
		tl_die("MR and CQ");
	init.send_cq = s->cq;
	init.recv_cq = s->cq;
	s->qp = ibv_create_qp_ex(ctx, &init);
	if (!s->qp)
		tl_die("ibv_create_qp_ex");
	max_inline = init.cap.max_inline_data;
}

/* Polls and checks the completions of total work requests. */
static void reap(uint64_t total)
{
	uint8_t *seen = calloc(total, 1);
	struct ibv_wc wc[16];
	uint64_t got = 0, bad = 0, dup = 0;
	struct timespec t0, t;
	unsigned int th, op;
	int i, n;

	if (!seen)
		tl_die("calloc");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (got < total) {
		n = ibv_poll_cq(a.cq, 16, wc);
		if (n < 0)
			break;
		for (i = 0; i < n; i++, got++) {
			th = wc[i].wr_id >> 32;
			op = (uint32_t)wc[i].wr_id;
			if (wc[i].status != IBV_WC_SUCCESS ||
			    wc[i].opcode != IBV_WC_RDMA_WRITE ||
			    th >= nthreads || op >= nops) {
				bad++;
				continue;
			}
			dup += seen[(uint64_t)th * nops + op]++ != 0;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (!n && t.tv_sec - t0.tv_sec > 60)
			break;
	}
	n = ibv_poll_cq(a.cq, 16, wc);
	tl_check(got == total && n == 0,
		 "%llu completions for %llu work requests, none extra",
		 (unsigned long long)got, (unsigned long long)total);
	tl_check(!bad && !dup,
		 "every completion successful, an RDMA WRITE of ours, once (%llu bad, %llu repeated)",
		 (unsigned long long)bad, (unsigned long long)dup);
	free(seen);
}

static uint64_t check_bytes(struct worker *w)
{
	uint64_t wrong = 0;
	unsigned int t, op, i;
	size_t off;

	for (t = 0; t < nthreads; t++)
		for (op = 0; op < nops; op++) {
			off = slot_offset(t, op);
			for (i = 0; i < SLOT; i++)
				if (b.buf[off + i] != (i < w[t].lens[op] ?
						       a.buf[off + i] :
						       UNTOUCHED))
					wrong++;
		}
	return wrong;
}

int main(int argc, char **argv)
{
	uint64_t total, retries = 0, wrong;
	struct ibv_context *ctx;
	struct worker *w;
	union ibv_gid gid;
	struct ibv_pd *pd;
	unsigned int t, op;
	size_t len, i;
	int gid_index, errors = 0;

	if (argc < 6) {
		fprintf(stderr, "usage: rc_threads DEV GID_INDEX THREADS OPS SEED\n");
		return 2;
	}
	gid_index = atoi(argv[2]);
	nthreads = atoi(argv[3]);
	nops = atoi(argv[4]);
	*tl_rng() = strtoull(argv[5], NULL, 0) | 1;
	if (!nthreads || !nops || nthreads > 64)
		return 2;
	total = (uint64_t)nthreads * nops;
	len = total * SLOT;

	ctx = tl_open_device(argv[1]);
	pd = ibv_alloc_pd(ctx);
	if (!pd || ibv_query_gid(ctx, 1, gid_index, &gid))
		tl_die("device setup");
	setup_side(&a, ctx, pd, len, total + 16);
	setup_side(&b, ctx, pd, len, 16);
	qpx = ibv_qp_to_qp_ex(a.qp);
	if (!qpx)
		tl_die("ibv_qp_to_qp_ex");
	for (i = 0; i < len; i++) {
		a.buf[i] = tl_rnd();
		b.buf[i] = UNTOUCHED;
	}

	struct tl_rc_conn ca = {
		.dest_qpn = b.qp->qp_num, .dgid = &gid, .sgid_index = gid_index,
		.sq_psn = tl_rnd() & 0xffffff, .rq_psn = tl_rnd() & 0xffffff,
		.access = IBV_ACCESS_REMOTE_WRITE, .timeout = 14,
		.retry_cnt = 7, .rnr_retry = 7, .min_rnr_timer = 1,
		.rd_atomic = 1,
	};
	struct tl_rc_conn cb = ca;

	cb.dest_qpn = a.qp->qp_num;
	cb.sq_psn = ca.rq_psn;
	cb.rq_psn = ca.sq_psn;
	if (tl_connect_rc(a.qp, &ca) || tl_connect_rc(b.qp, &cb))
		tl_die("connecting the QPs");

	w = calloc(nthreads, sizeof(*w));
	if (!w)
		tl_die("calloc");
	for (t = 0; t < nthreads; t++) {
		w[t].index = t;
		w[t].lens = calloc(nops, sizeof(*w[t].lens));
		if (!w[t].lens)
			tl_die("calloc");
		for (op = 0; op < nops; op++)
			w[t].lens[op] = 1 + tl_rnd() % SLOT;
	}
	for (t = 0; t < nthreads; t++)
		if (pthread_create(&w[t].thread, NULL, poster, &w[t]))
			tl_die("pthread_create");
	for (t = 0; t < nthreads; t++) {
		pthread_join(w[t].thread, NULL);
		retries += w[t].full_retries;
		errors += w[t].error != 0;
	}
	tl_check(!errors, "%u threads posted %u RDMA WRITEs each to one QP (%d failed to post; %llu retries on a full queue)",
		 nthreads, nops, errors, (unsigned long long)retries);
	reap(total);
	wrong = check_bytes(w);
	tl_check(!wrong, "every byte of the %zu-byte target as written (%llu wrong)",
		 len, (unsigned long long)wrong);

	ibv_destroy_qp(a.qp);
	ibv_destroy_qp(b.qp);
	ibv_dereg_mr(a.mr);
	ibv_dereg_mr(b.mr);
	ibv_destroy_cq(a.cq);
	ibv_destroy_cq(b.cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	for (t = 0; t < nthreads; t++)
		free(w[t].lens);
	free(w);
	free(a.buf);
	free(b.buf);
	return tl_exit_status();
}
