// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rc_hostile DEV GID_INDEX ROUNDS SEED: a process that lies to the kernel.
 * It creates connected RC QPs through the provider, then writes random
 * bytes into the mapped SQ, RQ and CQ rings (WQEs, producer and consumer
 * indices, CQ arm words) and kicks the engine, over and over. The kernel
 * must stay up with a clean log (vm-run checks it); this program checks
 * that it still gets answers: every QP ends in a known state, the CQs hold
 * only CQEs with valid statuses, and teardown works.
 *
 * White box: it reads the provider's private QP/CQ structures
 * (providers/sroce/sroce.h) to find the rings.
 */
#include <stdint.h>
#include <unistd.h>
#include "rings.h"
#include "testlib.h"

#define NQP 4

static uint64_t rng = 88172645463325252ULL;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void scribble(void *p, size_t len)
{
	uint8_t *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		b[i] = rnd();
}

/* A send WQE that looks plausible but is wrong in one random way. */
static void plausible_wqe(struct sroce_send_wqe *w, struct ibv_mr *mr)
{
	memset(w, 0, sizeof(*w));
	w->ctrl.opcode = rnd() % (SROCE_WQE_OPCODE_COUNT + 2);
	w->ctrl.flags = rnd() % 32;
	w->ctrl.num_sge = rnd() % 40;
	w->ctrl.inline_len = (rnd() & 1) ? rnd() % 1024 : 0;
	w->ctrl.wr_id = rnd();
	w->raddr.remote_addr = (rnd() & 1) ? (uintptr_t)mr->addr + rnd() % 8192 :
					     rnd();
	w->raddr.rkey = (rnd() & 1) ? mr->rkey : (uint32_t)rnd();
	w->sge[0].addr = (rnd() & 1) ? (uintptr_t)mr->addr : rnd();
	w->sge[0].length = (rnd() & 1) ? rnd() % 8192 : (uint32_t)rnd();
	w->sge[0].lkey = (rnd() & 1) ? mr->lkey : (uint32_t)rnd();
}

int main(int argc, char **argv)
{
	struct ibv_qp *qp[NQP];
	struct ibv_cq *cq[NQP];
	struct ibv_context *ctx;
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	struct ibv_wc wc[16];
	union ibv_gid gid;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	uint8_t *buf;
	int rounds, gid_index, r, i, n, bad_wc = 0, polled = 0, errors = 0;
	int in_error = 0;

	if (argc != 5) {
		fprintf(stderr, "usage: rc_hostile DEV GID_INDEX ROUNDS SEED\n");
		return 2;
	}
	ctx = tl_open_device(argv[1]);
	gid_index = atoi(argv[2]);
	rounds = atoi(argv[3]);
	rng ^= strtoull(argv[4], NULL, 0);
	if (ibv_query_gid(ctx, 1, gid_index, &gid))
		tl_die("ibv_query_gid");
	pd = ibv_alloc_pd(ctx);
	buf = calloc(1, 16384);
	mr = ibv_reg_mr(pd, buf, 16384, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			IBV_ACCESS_REMOTE_ATOMIC);
	if (!pd || !mr)
		tl_die("pd/mr");

	for (i = 0; i < NQP; i++) {
		cq[i] = ibv_create_cq(ctx, 16, NULL, NULL, 0);
		memset(&init, 0, sizeof(init));
		init.send_cq = cq[i];
		init.recv_cq = cq[i];
		init.qp_type = IBV_QPT_RC;
		init.cap.max_send_wr = 8;
		init.cap.max_recv_wr = 8;
		init.cap.max_send_sge = 4;
		init.cap.max_recv_sge = 4;
		init.cap.max_inline_data = 64;
		qp[i] = ibv_create_qp(pd, &init);
		if (!cq[i] || !qp[i])
			tl_die("cq/qp");
	}
	/* Pairs 0-1 and 2-3, connected, all rights granted. */
	for (i = 0; i < NQP; i++) {
		struct tl_rc_conn conn = {
			.dest_qpn = qp[i ^ 1]->qp_num, .dgid = &gid,
			.sgid_index = gid_index, .access = TL_REMOTE_ALL,
			.timeout = 8, .retry_cnt = 1, .rnr_retry = 1,
			.min_rnr_timer = 1,
		};

		if (tl_connect_rc(qp[i], &conn))
			tl_die("connecting a QP");
	}

	for (r = 0; r < rounds; r++) {
		struct sroce_qp *s = to_sqp(qp[rnd() % NQP]);
		struct sroce_cq *c = to_scq(cq[rnd() % NQP]);
		uint32_t slots = 1U << s->sq.log_slots;

		switch (rnd() % 8) {
		case 0:		/* garbage WQEs, believable producer */
			scribble(s->sq.slots, (size_t)slots << s->sq.log_slot_size);
			s->sq.hdr->producer += rnd() % (slots + 1);
			break;
		case 1:		/* plausible but wrong WQEs */
			for (i = 0; i < 4; i++)
				plausible_wqe(sroce_ring_slot(&s->sq,
					s->sq.hdr->producer + i), mr);
			s->sq.hdr->producer += 4;
			break;
		case 2:		/* indices nobody could have produced */
			s->sq.hdr->producer = rnd();
			s->rq.hdr->producer = rnd();
			break;
		case 3:		/* garbage receive WQEs */
			scribble(s->rq.slots,
				 (size_t)(1U << s->rq.log_slots) << s->rq.log_slot_size);
			s->rq.hdr->producer += rnd() % 9;
			break;
		case 4:		/* a CQ consumer that lies, arm words */
			c->ring.hdr->consumer = rnd();
			c->ring.hdr->cq_arm = rnd();
			break;
		case 5:		/* the whole header */
			scribble(s->sq.hdr, SROCE_QUEUE_SLOTS_OFFSET);
			break;
		default:	/* reserved fields of the CQ ring */
			scribble(c->ring.slots, 64);
			break;
		}
		tl_kick(&s->vqp.qp);
		if (r % 16 == 0)
			usleep(1000);
	}
	sleep(1);

	/* The kernel wrote only valid statuses into our CQs. */
	for (i = 0; i < NQP; i++) {
		to_scq(cq[i])->ring.hdr->consumer = to_scq(cq[i])->ring.index;
		while ((n = ibv_poll_cq(cq[i], 16, wc)) > 0) {
			polled += n;
			while (n--) {
				bad_wc += wc[n].status > IBV_WC_TM_RNDV_INCOMPLETE;
				errors += wc[n].status != IBV_WC_SUCCESS;
			}
			if (polled > 100000)
				break;
		}
	}
	tl_check(!bad_wc, "%d completions polled (%d errors), none with an invalid status",
		 polled, errors);
	/*
	 * The rule (security.rst): bad input gets an error completion, an
	 * error return or a counted drop. Garbage in every ring cannot all
	 * have been valid work: a QP ends in the error state (its ring
	 * refused, counted in qp_ring_errors, which t_security_hostile_rings checks) or still
	 * ready to send; nothing in between.
	 */
	for (i = 0; i < NQP; i++) {
		struct ibv_qp_init_attr ia;
		int err = ibv_query_qp(qp[i], &attr, IBV_QP_STATE, &ia);

		tl_check(!err && (attr.qp_state == IBV_QPS_ERR ||
				  attr.qp_state == IBV_QPS_RTS),
			 "QP %d answers, in the error state or ready to send (%d, state %d)",
			 i, err, attr.qp_state);
		in_error += !err && attr.qp_state == IBV_QPS_ERR;
	}
	tl_check(in_error > 0, "%d of %d QPs were put in the error state",
		 in_error, NQP);
	for (i = 0; i < NQP; i++)
		tl_check(!ibv_destroy_qp(qp[i]), "QP %d destroyed", i);
	for (i = 0; i < NQP; i++)
		tl_check(!ibv_destroy_cq(cq[i]), "CQ %d destroyed", i);
	tl_check(!ibv_dereg_mr(mr) && !ibv_dealloc_pd(pd), "MR and PD freed");
	ibv_close_device(ctx);
	return tl_exit_status();
}
