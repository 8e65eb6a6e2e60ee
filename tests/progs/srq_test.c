// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * srq_test DEV GID_INDEX: shared receive queues on DEV.
 *
 * - RC: four QPs take from one SRQ while four peers send to them; every
 *   message arrives once, in its QP's order, in the buffer of the WQE
 *   that took it, with the right length and QP number;
 * - an empty SRQ makes the requester wait (RNR) until a WQE is posted;
 * - the limit: armed, IBV_EVENT_SRQ_LIMIT_REACHED comes once fewer WQEs
 *   than the limit are left, not before, and disarms it;
 * - UD QPs and a UC QP take from an SRQ too;
 * - a QP in the error state raises IBV_EVENT_QP_LAST_WQE_REACHED; an SRQ
 *   in use cannot be destroyed;
 * - hostile: an SRQ producer index the process cannot have written fails
 *   the QP that takes from it (white box: the provider's SRQ ring);
 * - resize (IBV_SRQ_MAX_WR): the WQEs posted and not yet taken move to
 *   the new ring and take the next messages in order, the new size takes
 *   posts the old could not, a size below what is posted or over
 *   max_srq_wr is refused and changes nothing, and resizes while
 *   messages arrive lose and reorder none.
 */
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>
#include "rings.h"
#include "testlib.h"

#define NQP 4
#define NMSG 16
#define SLOT 256
#define MSG_LEN 200

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static union ibv_gid gid;
static int gid_index;
static uint8_t buf[NQP * NMSG * SLOT * 2];
static struct ibv_mr *mr;

static struct ibv_srq *make_srq(int max_wr)
{
	struct ibv_srq_init_attr a = { .attr = { .max_wr = max_wr, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(pd, &a);

	if (!srq)
		tl_die("ibv_create_srq");
	return srq;
}

static struct ibv_qp *make_qp(enum ibv_qp_type type, struct ibv_cq *cq,
			      struct ibv_srq *srq)
{
	struct ibv_qp_init_attr init = {
		.qp_type = type, .send_cq = cq, .recv_cq = cq, .srq = srq,
		.cap = { .max_send_wr = 64, .max_recv_wr = srq ? 0 : 8,
			 .max_send_sge = 1, .max_recv_sge = srq ? 0 : 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &init);

	if (!qp)
		tl_die("ibv_create_qp");
	return qp;
}

static void connect2(struct ibv_qp *a, struct ibv_qp *b, bool uc)
{
	struct tl_rc_conn c = {
		.dgid = &gid, .sgid_index = gid_index, .sq_psn = 7, .rq_psn = 7,
		.timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
		.min_rnr_timer = 1, .rd_atomic = 1,
	};
	int err;

	c.dest_qpn = b->qp_num;
	err = uc ? tl_connect_uc(a, &c) : tl_connect_rc(a, &c);
	c.dest_qpn = a->qp_num;
	err = err ?: uc ? tl_connect_uc(b, &c) : tl_connect_rc(b, &c);
	if (err)
		tl_die("connecting QPs");
}

/* An SRQ of max_wr, a CQ of cqe and an RC pair whose receiver takes from it. */
static void srq_rc_pair(int max_wr, int cqe, struct ibv_srq **srq,
			struct ibv_cq **cq, struct ibv_qp **snd,
			struct ibv_qp **rcv)
{
	*srq = make_srq(max_wr);
	*cq = ibv_create_cq(ctx, cqe, NULL, NULL, 0);
	if (!*cq)
		tl_die("ibv_create_cq");
	*snd = make_qp(IBV_QPT_RC, *cq, NULL);
	*rcv = make_qp(IBV_QPT_RC, *cq, *srq);
	connect2(*snd, *rcv, false);
}

static int post_srq(struct ibv_srq *srq, uint64_t first, int n)
{
	struct ibv_recv_wr wr, *bad;
	struct ibv_sge sge;
	int i, err;

	for (i = 0; i < n; i++) {
		sge = (struct ibv_sge){ .addr = (uintptr_t)buf + (first + i) * SLOT,
					.length = SLOT, .lkey = mr->lkey };
		wr = (struct ibv_recv_wr){ .wr_id = first + i, .sg_list = &sge,
					   .num_sge = 1 };
		err = ibv_post_srq_recv(srq, &wr, &bad);
		if (err) {
			fprintf(stderr, "ibv_post_srq_recv: %s\n", strerror(err));
			return -1;
		}
	}
	return 0;
}

/* A message: sender index and sequence number, then a pattern of both. */
static void fill_msg(uint8_t *p, int sender, int seq)
{
	int i;

	p[0] = sender;
	p[1] = seq;
	for (i = 2; i < MSG_LEN; i++)
		p[i] = (uint8_t)(sender * 31 + seq * 7 + i);
}

static bool msg_ok(const uint8_t *p, int *sender, int *seq)
{
	int i;

	*sender = p[0];
	*seq = p[1];
	for (i = 2; i < MSG_LEN; i++)
		if (p[i] != (uint8_t)(*sender * 31 + *seq * 7 + i))
			return false;
	return true;
}

static int send_msg(struct ibv_qp *qp, int sender, int seq, uint8_t *src,
		    struct ibv_ah *ah, uint32_t qpn)
{
	struct ibv_sge sge = { .addr = (uintptr_t)src, .length = MSG_LEN,
			       .lkey = mr->lkey };
	struct ibv_send_wr wr = { .wr_id = seq, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	fill_msg(src, sender, seq);
	if (ah) {
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = qpn;
		wr.wr.ud.remote_qkey = 0x1111;
	}
	return ibv_post_send(qp, &wr, &bad);
}

/* The next async event within ms milliseconds; -1 if none came. */
static int next_event(int ms, struct ibv_async_event *ev)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };

	if (poll(&pfd, 1, ms) != 1 || ibv_get_async_event(ctx, ev))
		return -1;
	ibv_ack_async_event(ev);
	return ev->event_type;
}

static void rc_shared(void)
{
	struct ibv_qp *snd[NQP], *rcv[NQP];
	struct ibv_cq *scq, *rcq;
	struct ibv_srq *srq;
	int last_seq[NQP], got = 0, bad = 0, order = 0, q, i, n, s, seq;
	uint8_t seen[NQP][NMSG] = {};
	uint8_t *src = buf + NQP * NMSG * SLOT;
	struct ibv_wc wc[16];

	srq = make_srq(NQP * NMSG);
	scq = ibv_create_cq(ctx, NQP * NMSG, NULL, NULL, 0);
	rcq = ibv_create_cq(ctx, NQP * NMSG, NULL, NULL, 0);
	if (!scq || !rcq)
		tl_die("ibv_create_cq");
	for (q = 0; q < NQP; q++) {
		snd[q] = make_qp(IBV_QPT_RC, scq, NULL);
		rcv[q] = make_qp(IBV_QPT_RC, rcq, srq);
		connect2(snd[q], rcv[q], false);
		last_seq[q] = -1;
	}
	tl_check(!post_srq(srq, 0, NQP * NMSG), "%d receives posted to one SRQ",
		 NQP * NMSG);
	for (i = 0; i < NMSG; i++)
		for (q = 0; q < NQP; q++)
			if (send_msg(snd[q], q, i, src + (q * NMSG + i) * SLOT,
				     NULL, 0))
				tl_die("ibv_post_send");
	while (got < NQP * NMSG) {
		if (!tl_wait_wc(rcq, wc, 10))
			break;
		got++;
		for (q = 0; q < NQP && rcv[q]->qp_num != wc->qp_num; q++)
			;
		if (wc->status || wc->byte_len != MSG_LEN || q == NQP ||
		    wc->wr_id >= NQP * NMSG ||
		    !msg_ok(buf + wc->wr_id * SLOT, &s, &seq) || s != q ||
		    seq >= NMSG || seen[s][seq]++) {
			bad++;
			continue;
		}
		if (seq <= last_seq[q])
			order++;
		last_seq[q] = seq;
	}
	tl_check(got == NQP * NMSG && !bad,
		 "every message arrived once, intact, on its QP (%d of %d, %d bad)",
		 got, NQP * NMSG, bad);
	tl_check(!order, "each QP took its messages in order (%d out of order)",
		 order);
	for (n = 0; n < NQP * NMSG;) {
		if (!tl_wait_wc(scq, wc, 10) || wc->status)
			break;
		n++;
	}
	tl_check(n == NQP * NMSG, "every SEND completed (%d)", n);
	tl_check(ibv_destroy_srq(srq) == EBUSY,
		 "an SRQ in use is not destroyed (EBUSY)");

	/* Empty: the sender waits (RNR) until a WQE is posted. */
	if (send_msg(snd[0], 0, 0, src, NULL, 0))
		tl_die("ibv_post_send");
	usleep(100000);
	tl_check(ibv_poll_cq(rcq, 1, wc) == 0 && ibv_poll_cq(scq, 1, wc) == 0,
		 "with the SRQ empty nothing completes");
	post_srq(srq, 0, 1);
	tl_check(tl_wait_wc(rcq, wc, 10) && !wc->status && wc->wr_id == 0 &&
		 wc->qp_num == rcv[0]->qp_num,
		 "the RNR retry lands in the WQE posted late");
	tl_check(tl_wait_wc(scq, wc, 10) && !wc->status,
		 "and the SEND completes");

	/* A QP in the error state: IBV_EVENT_QP_LAST_WQE_REACHED. */
	{
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
		struct ibv_async_event ev;
		int t;

		ibv_modify_qp(rcv[1], &a, IBV_QP_STATE);
		do {
			t = next_event(5000, &ev);
		} while (t >= 0 && t != IBV_EVENT_QP_LAST_WQE_REACHED);
		tl_check(t == IBV_EVENT_QP_LAST_WQE_REACHED &&
			 ev.element.qp == rcv[1],
			 "LAST_WQE_REACHED for the QP moved to the error state");
	}
	for (q = 0; q < NQP; q++) {
		ibv_destroy_qp(snd[q]);
		ibv_destroy_qp(rcv[q]);
	}
	tl_check(!ibv_destroy_srq(srq), "the SRQ is destroyed once unused");
	ibv_destroy_cq(scq);
	ibv_destroy_cq(rcq);
}

static void limit_event(void)
{
	struct ibv_srq_attr attr = { .srq_limit = 4 };
	struct ibv_qp *snd, *rcv;
	struct ibv_async_event ev;
	struct ibv_srq *srq;
	struct ibv_cq *cq;
	struct ibv_wc wc;
	int i, n = 0, t;

	srq_rc_pair(16, 64, &srq, &cq, &snd, &rcv);
	post_srq(srq, 0, 8);
	tl_check(!ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT), "limit 4 armed");
	attr.srq_limit = 17;
	tl_check(ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT) != 0,
		 "a limit over the SRQ's size is refused");
	for (i = 0; i < 4; i++)
		send_msg(snd, 0, i, buf + 64 * SLOT, NULL, 0);
	while (n < 8 && tl_wait_wc(cq, &wc, 10) && !wc.status)
		n++;
	tl_check(n == 8, "4 messages through (%d completions)", n);
	tl_check(next_event(300, &ev) < 0, "4 left, limit 4: no event yet");
	send_msg(snd, 0, 4, buf + 64 * SLOT, NULL, 0);
	t = next_event(5000, &ev);
	tl_check(t == IBV_EVENT_SRQ_LIMIT_REACHED && ev.element.srq == srq,
		 "3 left: IBV_EVENT_SRQ_LIMIT_REACHED (%d)", t);
	tl_check(!ibv_query_srq(srq, &attr) && attr.srq_limit == 0 &&
		 attr.max_wr >= 16, "the event disarmed the limit (%u)",
		 attr.srq_limit);
	send_msg(snd, 0, 5, buf + 64 * SLOT, NULL, 0);
	tl_check(next_event(300, &ev) < 0, "disarmed: no second event");
	ibv_destroy_qp(snd);
	ibv_destroy_qp(rcv);
	ibv_destroy_srq(srq);
	ibv_destroy_cq(cq);
}

/* Two UD QPs and a UC QP share an SRQ. */
static void ud_uc(void)
{
	struct ibv_ah_attr aa = {};
	struct ibv_qp *ud[3], *uc[2];
	struct ibv_srq *srq;
	struct ibv_cq *cq, *rcq;
	struct ibv_ah *ah;
	struct ibv_wc wc;
	int i, ok = 0, s, seq;

	srq = make_srq(16);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	rcq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	ud[0] = make_qp(IBV_QPT_UD, cq, NULL);
	ud[1] = make_qp(IBV_QPT_UD, rcq, srq);
	ud[2] = make_qp(IBV_QPT_UD, rcq, srq);
	for (i = 0; i < 3; i++)
		if (tl_connect_ud(ud[i], 0x1111, 1))
			tl_die("UD QP to RTS");
	tl_set_av(&aa, &gid, gid_index);
	ah = ibv_create_ah(pd, &aa);
	if (!ah)
		tl_die("ibv_create_ah");
	post_srq(srq, 0, 4);
	send_msg(ud[0], 1, 1, buf + 64 * SLOT, ah, ud[1]->qp_num);
	send_msg(ud[0], 2, 2, buf + 65 * SLOT, ah, ud[2]->qp_num);
	for (i = 0; i < 2; i++) {
		if (!tl_wait_wc(rcq, &wc, 10) || wc.status ||
		    wc.byte_len != 40 + MSG_LEN || wc.wr_id >= 4)
			continue;
		if (msg_ok(buf + wc.wr_id * SLOT + 40, &s, &seq) &&
		    wc.qp_num == ud[s]->qp_num)
			ok++;
	}
	tl_check(ok == 2, "two UD QPs took datagrams from one SRQ (%d)", ok);

	uc[0] = make_qp(IBV_QPT_UC, cq, NULL);
	uc[1] = make_qp(IBV_QPT_UC, rcq, srq);
	connect2(uc[0], uc[1], true);
	send_msg(uc[0], 3, 3, buf + 66 * SLOT, NULL, 0);
	tl_check(tl_wait_wc(rcq, &wc, 10) && !wc.status &&
		 wc.qp_num == uc[1]->qp_num && wc.byte_len == MSG_LEN &&
		 msg_ok(buf + wc.wr_id * SLOT, &s, &seq) && s == 3,
		 "a UC QP took a message from it");
	for (i = 0; i < 3; i++)
		ibv_destroy_qp(ud[i]);
	ibv_destroy_qp(uc[0]);
	ibv_destroy_qp(uc[1]);
	ibv_destroy_ah(ah);
	ibv_destroy_srq(srq);
	ibv_destroy_cq(cq);
	ibv_destroy_cq(rcq);
}

/* Sends n messages, sequence numbers first, first + 1, ... (n <= 64). */
static int send_n(struct ibv_qp *snd, int first, int n)
{
	uint8_t *src = buf + NQP * NMSG * SLOT;
	int i;

	for (i = 0; i < n; i++)
		if (send_msg(snd, 1, (first + i) & 0xff, src + i * SLOT, NULL, 0))
			return -1;
	return 0;
}

/*
 * Waits for n messages sent by send_n(first) and their sends, and checks
 * that they took the SRQ's WQEs wr_id want, want + 1, ... in order, with
 * their data.
 */
static int recv_n(struct ibv_cq *cq, int first, int n, uint64_t want)
{
	int sends = 0, recvs = 0, s, seq;
	struct ibv_wc wc;

	while (recvs + sends < 2 * n && tl_wait_wc(cq, &wc, 10)) {
		if (wc.status)
			return -1;
		if (wc.opcode != IBV_WC_RECV) {
			sends++;
			continue;
		}
		if (wc.wr_id != want + recvs || wc.byte_len != MSG_LEN ||
		    !msg_ok(buf + wc.wr_id * SLOT, &s, &seq) || s != 1 ||
		    seq != ((first + recvs) & 0xff))
			return -1;
		recvs++;
	}
	return recvs == n && sends == n ? 0 : -1;
}

static int stream_through(struct ibv_qp *snd, struct ibv_cq *cq, int first,
			  int n, uint64_t want)
{
	return send_n(snd, first, n) ?: recv_n(cq, first, n, want);
}

static int resize_to(struct ibv_srq *srq, uint32_t max_wr)
{
	struct ibv_srq_attr attr = { .max_wr = max_wr };

	return ibv_modify_srq(srq, &attr, IBV_SRQ_MAX_WR);
}

static void resize(void)
{
	struct ibv_device_attr dattr;
	struct ibv_srq_attr attr;
	struct ibv_qp *snd, *rcv;
	struct ibv_srq *srq;
	struct ibv_cq *cq;
	int i, bad = 0;
	uint64_t next;

	if (ibv_query_device(ctx, &dattr))
		tl_die("ibv_query_device");
	tl_check(dattr.device_cap_flags & IBV_DEVICE_SRQ_RESIZE,
		 "the device says SRQ_RESIZE");
	srq_rc_pair(8, 256, &srq, &cq, &snd, &rcv);
	post_srq(srq, 0, 6);
	tl_check(!stream_through(snd, cq, 0, 2, 0), "2 messages took WQEs 0-1");
	tl_check(!resize_to(srq, 32), "resized from 8 to 32 with 4 posted");
	tl_check(!ibv_query_srq(srq, &attr) && attr.max_wr == 32,
		 "ibv_query_srq says 32 (%u)", attr.max_wr);
	tl_check(!post_srq(srq, 6, 28), "28 more posted (32 in all)");
	tl_check(!stream_through(snd, cq, 2, 32, 2),
		 "32 messages took WQEs 2-33 in order: 4 moved, 28 new");
	post_srq(srq, 34, 10);
	tl_check(resize_to(srq, 4) != 0, "a resize to 4 with 10 posted fails");
	tl_check(resize_to(srq, 0) != 0 &&
		 resize_to(srq, dattr.max_srq_wr + 1) != 0,
		 "sizes 0 and max_srq_wr + 1 fail");
	tl_check(!ibv_query_srq(srq, &attr) && attr.max_wr == 32,
		 "and the size stays 32 (%u)", attr.max_wr);
	tl_check(!stream_through(snd, cq, 34, 10, 34),
		 "the 10 posted take 10 messages in order");

	/* Resizes while messages are on their way, taken by the worker. */
	next = 44;
	for (i = 0; i < 20 && !bad; i++) {
		if (next % (NQP * NMSG) > NQP * NMSG - 6)
			next += NQP * NMSG - next % (NQP * NMSG);
		bad |= post_srq(srq, next % (NQP * NMSG), 6) != 0;
		bad |= send_n(snd, (int)next, 6) != 0;
		bad |= resize_to(srq, i & 1 ? 8 : 64) != 0;
		bad |= recv_n(cq, (int)next, 6, next % (NQP * NMSG)) != 0;
		next += 6;
	}
	tl_check(!bad, "20 resizes among 120 messages: none lost or reordered");
	ibv_destroy_qp(snd);
	ibv_destroy_qp(rcv);
	tl_check(!ibv_destroy_srq(srq), "the resized SRQ is destroyed");
	ibv_destroy_cq(cq);
}

/* A producer index far ahead of what was posted fails the taking QP. */
static void hostile_producer(void)
{
	struct sroce_srq *ssrq;
	struct ibv_qp *snd, *rcv;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	struct ibv_srq *srq;
	struct ibv_cq *cq;
	struct ibv_wc wc;
	int i, st;

	srq_rc_pair(16, 64, &srq, &cq, &snd, &rcv);
	ssrq = to_ssrq(srq);
	__atomic_store_n(&ssrq->ring.hdr->producer, ssrq->ring.index + 1000,
			 __ATOMIC_RELEASE);
	tl_check(resize_to(srq, 64) == EINVAL,
		 "a resize refuses 1000 posted in a ring of 16");
	send_msg(snd, 0, 0, buf + 64 * SLOT, NULL, 0);
	st = tl_wait_wc(cq, &wc, 10) ? (int)wc.status : -1;
	tl_check(st == IBV_WC_REM_OP_ERR && wc.qp_num == snd->qp_num,
		 "a SEND to it fails: %s", st < 0 ? "nothing" :
		 ibv_wc_status_str(st));
	for (i = 0; i < 50; i++) {
		if (!ibv_query_qp(rcv, &qa, IBV_QP_STATE, &qi) &&
		    qa.qp_state == IBV_QPS_ERR)
			break;
		usleep(10000);
	}
	tl_check(qa.qp_state == IBV_QPS_ERR, "the QP that took from it failed");
	ibv_destroy_qp(snd);
	ibv_destroy_qp(rcv);
	tl_check(!ibv_destroy_srq(srq), "and the SRQ is destroyed");
	ibv_destroy_cq(cq);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: srq_test DEV GID_INDEX\n");
		return 2;
	}
	ctx = tl_open_device(argv[1]);
	gid_index = atoi(argv[2]);
	if (ibv_query_gid(ctx, 1, gid_index, &gid))
		tl_die("ibv_query_gid");
	pd = ibv_alloc_pd(ctx);
	mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!mr)
		tl_die("ibv_reg_mr");

	rc_shared();
	limit_event();
	ud_uc();
	hostile_producer();
	resize();

	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return tl_exit_status();
}
