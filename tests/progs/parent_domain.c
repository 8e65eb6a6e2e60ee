// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * parent_domain DEV GID_INDEX: thread and parent domains. A parent domain
 * stands for its PD everywhere: a QP, an SRQ, an extended CQ and an MR
 * made on it carry data with objects of the PD itself (bytes checked), and
 * not with those of another PD. The rules: no parent domain of a parent
 * domain, no PD or TD freed while a parent domain names it, an extended
 * CQ names parent domains only.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include "testlib.h"

#define LEN 4096

static struct ibv_context *ctx;
static union ibv_gid gid;
static int gid_index;

struct pair {
	struct ibv_qp *qp[2];	/* 0 on the parent domain, 1 on PD */
	struct ibv_cq *cq[2];
};

static void make_pair(struct pair *p, struct ibv_pd *pd0, struct ibv_pd *pd1,
		      struct ibv_cq *cq0, struct ibv_srq *srq0)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	int i;

	for (i = 0; i < 2; i++) {
		p->cq[i] = i ? ibv_create_cq(ctx, 8, NULL, NULL, 0) : cq0;
		init.send_cq = init.recv_cq = p->cq[i];
		init.srq = i ? NULL : srq0;
		p->qp[i] = ibv_create_qp(i ? pd1 : pd0, &init);
		if (!p->cq[i] || !p->qp[i])
			tl_die("creating a QP");
	}
	if (tl_connect_rc_pair(p->qp[0], p->qp[1], &gid, gid_index, 1))
		tl_die("connecting");
}

/* qp posts one signaled WR; returns the completion status or -1. */
static int run(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc;

	wr->send_flags = IBV_SEND_SIGNALED;
	if (ibv_post_send(qp, wr, &bad))
		return -1;
	if (!tl_wait_wc(cq, &wc, 10))
		return -1;
	return wc.status;
}

int main(int argc, char **argv)
{
	struct ibv_parent_domain_init_attr pa = {};
	struct ibv_td_init_attr ta = {};
	struct ibv_pd *pd, *pd2, *par, *par2;
	struct ibv_cq_init_attr_ex cqa = { .cqe = 16 };
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	uint8_t *a = calloc(1, LEN), *b = calloc(1, LEN), *c = calloc(1, LEN);
	struct ibv_mr *mra, *mrb, *mrc;
	struct ibv_recv_wr rwr = {}, *rbad;
	struct ibv_send_wr wr = {};
	struct ibv_sge sge;
	struct ibv_cq_ex *cqx;
	struct ibv_srq *srq;
	struct ibv_wc wc;
	struct ibv_td *td;
	struct pair p;
	int st, i;

	if (argc < 3 || !a || !b || !c)
		tl_die("usage: parent_domain DEV GID_INDEX");
	ctx = tl_open_device(argv[1]);
	gid_index = atoi(argv[2]);
	if (ibv_query_gid(ctx, 1, gid_index, &gid))
		tl_die("query_gid");
	pd = ibv_alloc_pd(ctx);
	pd2 = ibv_alloc_pd(ctx);
	td = ibv_alloc_td(ctx, &ta);
	if (!pd || !pd2)
		tl_die("alloc_pd");
	tl_check(td != NULL, "ibv_alloc_td");
	pa.pd = pd;
	pa.td = td;
	par = ibv_alloc_parent_domain(ctx, &pa);
	tl_check(par != NULL, "ibv_alloc_parent_domain with a TD");
	if (!par || !td)
		return tl_exit_status();
	pa.pd = par;
	pa.td = NULL;
	errno = 0;
	tl_check(!ibv_alloc_parent_domain(ctx, &pa) && errno == EINVAL,
		 "no parent domain of a parent domain (errno %d)", errno);
	pa.pd = pd2;
	par2 = ibv_alloc_parent_domain(ctx, &pa);
	tl_check(par2 != NULL, "ibv_alloc_parent_domain without a TD");
	tl_check(ibv_dealloc_pd(pd) == EBUSY,
		 "a PD named by a parent domain stays (EBUSY)");
	tl_check(ibv_dealloc_td(td) == EBUSY,
		 "a TD named by a parent domain stays (EBUSY)");

	cqa.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD;
	cqa.parent_domain = pd;
	errno = 0;
	tl_check(!ibv_create_cq_ex(ctx, &cqa) && errno == EINVAL,
		 "an extended CQ names a parent domain, not a PD (errno %d)",
		 errno);
	cqa.parent_domain = par;
	cqx = ibv_create_cq_ex(ctx, &cqa);
	tl_check(cqx != NULL, "an extended CQ on the parent domain");
	srq = ibv_create_srq(par, &sa);
	tl_check(srq != NULL, "an SRQ on the parent domain");
	if (!cqx || !srq)
		return tl_exit_status();

	/* QP 0 and MR a on the parent domain, QP 1 and MR b on the PD. */
	mra = ibv_reg_mr(par, a, LEN, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	mrb = ibv_reg_mr(pd, b, LEN, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE);
	mrc = ibv_reg_mr(pd2, c, LEN, IBV_ACCESS_LOCAL_WRITE);
	if (!mra || !mrb || !mrc)
		tl_die("reg_mr");
	make_pair(&p, par, pd, ibv_cq_ex_to_cq(cqx), srq);
	for (i = 0; i < LEN; i++)
		b[i] = (uint8_t)(i * 7 + 3);

	/* The PD's QP WRITEs into the parent domain's MR. */
	sge = (struct ibv_sge){ (uintptr_t)b, 1000, mrb->lkey };
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = (uintptr_t)a + 100;
	wr.wr.rdma.rkey = mra->rkey;
	st = run(p.qp[1], p.cq[1], &wr);
	tl_check(st == IBV_WC_SUCCESS && !memcmp(a + 100, b, 1000) &&
		 !a[99] && !a[1100],
		 "a WRITE from the PD's QP lands in the parent domain's MR (%d)",
		 st);

	/* A SEND into the parent domain's SRQ, with the MR of the PD. */
	sge = (struct ibv_sge){ (uintptr_t)b + 2048, 512, mrb->lkey };
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	memset(b + 2048, 0, 512);
	tl_check(!ibv_post_srq_recv(srq, &rwr, &rbad),
		 "post_srq_recv of a PD's MR on the parent domain's SRQ");
	sge = (struct ibv_sge){ (uintptr_t)a + 100, 512, mra->lkey };
	wr.opcode = IBV_WR_SEND;
	st = run(p.qp[1], p.cq[1], &wr);
	st = st == IBV_WC_SUCCESS && tl_wait_wc(p.cq[0], &wc, 10) ?
	     (int)wc.status : st;
	tl_check(st == IBV_WC_SUCCESS && !memcmp(b + 2048, b, 512),
		 "a SEND lands through the parent domain's SRQ (%d)", st);

	/* The parent domain's QP READs with the PD's MR b. */
	memset(b, 0, 1000);
	sge = (struct ibv_sge){ (uintptr_t)b, 1000, mrb->lkey };
	wr.opcode = IBV_WR_RDMA_READ;
	wr.wr.rdma.remote_addr = (uintptr_t)a + 100;
	wr.wr.rdma.rkey = mra->rkey;
	st = run(p.qp[0], p.cq[0], &wr);
	tl_check(st == IBV_WC_SUCCESS && !memcmp(a + 100, b, 1000),
		 "a READ by the parent domain's QP into the PD's MR (%d)", st);

	/* Another PD's MR is foreign to a QP of the parent domain. */
	sge = (struct ibv_sge){ (uintptr_t)c, 64, mrc->lkey };
	wr.opcode = IBV_WR_RDMA_WRITE;
	st = run(p.qp[0], p.cq[0], &wr);
	tl_check(st == IBV_WC_LOC_PROT_ERR,
		 "another PD's MR fails on the parent domain's QP (%d)", st);

	ibv_destroy_qp(p.qp[0]);
	ibv_destroy_qp(p.qp[1]);
	ibv_destroy_cq(p.cq[1]);
	ibv_destroy_srq(srq);
	ibv_destroy_cq(ibv_cq_ex_to_cq(cqx));
	ibv_dereg_mr(mra);
	ibv_dereg_mr(mrb);
	ibv_dereg_mr(mrc);
	tl_check(!ibv_dealloc_pd(par), "the parent domain goes");
	tl_check(!ibv_dealloc_pd(par2), "the second parent domain goes");
	tl_check(!ibv_dealloc_td(td), "then the TD");
	tl_check(!ibv_dealloc_pd(pd) && !ibv_dealloc_pd(pd2), "then the PDs");
	free(a);
	free(b);
	free(c);
	ibv_close_device(ctx);
	return tl_exit_status();
}
