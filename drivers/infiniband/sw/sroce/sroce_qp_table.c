// SPDX-License-Identifier: GPL-2.0
/*
 * The QP tables: every QP of the host by number, and each device's GSI QP
 * by its netdev. Rules:
 * - QPNs are unique across every sroce device of the host (sroce_qps), so
 *   the shortcut finds a destination QP by its number alone;
 * - lookups run under RCU and take a reference (qp->refs), which
 *   destroy_qp waits for; a QP is in a table only while it is complete.
 */
#include <rdma/rdma_netlink.h>
#include <rdma/restrack.h>
#include "sroce.h"

static DEFINE_XARRAY_FLAGS(sroce_qps, XA_FLAGS_ALLOC);
static u32 sroce_qpn_next = SROCE_MIN_QPN;
/* Every device has its own QP1: GSI QPs by their netdev's ifindex. */
static DEFINE_XARRAY(sroce_gsi_qps);

static struct sroce_qp *sroce_qp_get_from(struct xarray *xa, unsigned long id)
{
	struct sroce_qp *qp;

	rcu_read_lock();
	qp = sroce_xa_load_rcu(xa, id);
	if (qp && !refcount_inc_not_zero(&qp->refs))
		qp = NULL;
	rcu_read_unlock();
	return qp;
}

struct sroce_qp *sroce_gsi_qp_get(int ifindex)
{
	return sroce_qp_get_from(&sroce_gsi_qps, ifindex);
}

/* A UD or GSI QP numbered qpn on the sroce device of ifindex. */
struct sroce_qp *sroce_qp_get_on(u32 qpn, int ifindex)
{
	struct sroce_qp *qp;

	if (qpn == SROCE_GSI_QPN)
		return sroce_gsi_qp_get(ifindex);
	qp = sroce_qp_get(qpn);
	if (qp && (!sroce_qp_is_ud(qp) || qp->sdev->ndev->ifindex != ifindex)) {
		sroce_qp_put(qp);
		qp = NULL;
	}
	return qp;
}

struct sroce_qp *sroce_qp_get(u32 qpn)
{
	return sroce_qp_get_from(&sroce_qps, qpn);
}

/*
 * The QP numbered qpn, without a reference: for a caller in an RCU
 * read-side section (destroy waits for those before it frees the QP),
 * which takes a reference or pins the QP otherwise before the section ends.
 */
struct sroce_qp *sroce_qp_find_rcu(u32 qpn)
{
	return sroce_xa_load_rcu(&sroce_qps, qpn);
}

/*
 * restrack's driver details of a QP (rdma resource show qp -dd): where it
 * sends, its rings and PSNs, for finding where a stuck connection waits.
 * Worker-owned fields are read without the worker, so the details are a
 * hint, not a snapshot; restrack holds the QP. Only for CAP_NET_ADMIN:
 * any local user may list every QP (6.1's nldev does not ask), and the
 * PSNs of another's connection are what forging packets into it takes.
 * nldev fills them in the asking process, so its capability is current's.
 */
static u32 sroce_qp_res_producer(struct sroce_queue *q)
{
	return q->hdr ? sroce_ring_read_index(&q->hdr->producer) : 0;
}

int sroce_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	const struct {
		const char *name;
		u32 value;
	} v[] = {
		{ "worker", qp->worker ? qp->worker->index : 0 },
		{ "sq_retire", READ_ONCE(qp->req.sq_retire) },
		{ "sq_next", READ_ONCE(qp->req.sq_next) },
		{ "sq_fetched", READ_ONCE(qp->req.sq_fetched) },
		{ "sq_producer", sroce_qp_res_producer(&qp->sq) },
		{ "rq_index", READ_ONCE(qp->rq.index) },
		{ "rq_producer", sroce_qp_res_producer(&qp->rq) },
		{ "req_psn", READ_ONCE(qp->req.req_psn) },
		{ "una_psn", READ_ONCE(qp->req.una_psn) },
		{ "sent_psn", READ_ONCE(qp->req.sent_psn) },
		{ "expected_psn", READ_ONCE(qp->resp.rx_expected_psn) },
		{ "reads_outstanding", READ_ONCE(qp->req.rd_outstanding) },
		{ "reads_to_answer", READ_ONCE(qp->resp.rd_head) -
				     READ_ONCE(qp->resp.rd_tail) },
		{ "retries", READ_ONCE(qp->req.retries) },
		{ "rnr_retries", READ_ONCE(qp->req.rnr_retries) },
		{ "resend_armed", READ_ONCE(qp->req.resend_at) != 0 },
		{ "rx_skbs", skb_queue_len_lockless(&qp->lrx.rx_skbs) },
	};
	struct nlattr *table;
	unsigned int i;

	if (!capable(CAP_NET_ADMIN))
		return 0;
	table = nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	/* A UD QP sends each datagram where its address handle says. */
	if (!sroce_qp_is_ud(qp) &&
	    rdma_nl_put_driver_string(msg, "link", READ_ONCE(qp->wire) ?
				      "wire" : "shortcut"))
		goto cancel;
	for (i = 0; i < ARRAY_SIZE(v); i++)
		if (rdma_nl_put_driver_u32(msg, v[i].name, v[i].value))
			goto cancel;
	nla_nest_end(msg, table);
	return 0;

cancel:
	nla_nest_cancel(msg, table);
	return -EMSGSIZE;
}

/*
 * For kernel CQ polling: the QP of a CQE, if it still completes to cq. A
 * CQE can outlive its QP (a consumer may destroy it before polling its
 * flushes), and its QPN may name another consumer's QP by then: only a
 * QP that uses cq is the consumer's to be handed (destroy_qp's RCU grace
 * period keeps the one looked at valid meanwhile).
 */
struct ib_qp *sroce_cq_qp_of(struct sroce_cq *cq, u32 qpn)
{
	struct ib_qp *ibqp = NULL;
	struct sroce_qp *qp;

	rcu_read_lock();
	if (qpn == SROCE_GSI_QPN)
		qp = sroce_xa_load_rcu(&sroce_gsi_qps,
				       to_sdev(cq->ibcq.device)->ndev->ifindex);
	else
		qp = sroce_xa_load_rcu(&sroce_qps, qpn);
	if (qp && (qp->ibqp.send_cq == &cq->ibcq ||
		   qp->ibqp.recv_cq == &cq->ibcq))
		ibqp = &qp->ibqp;
	rcu_read_unlock();
	return ibqp;
}

/* Where a QP is found by number: GSI QPs by netdev, the others by QPN. */
static struct xarray *sroce_qp_table(struct sroce_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_GSI ? &sroce_gsi_qps : &sroce_qps;
}

static unsigned long sroce_qp_table_id(struct sroce_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_GSI ? qp->sdev->ndev->ifindex :
						qp->ibqp.qp_num;
}

/*
 * Reserves the QP's number: QPNs are allocated cyclically, so a number is
 * reused as late as possible. The QP is found by lookups only once
 * sroce_qp_table_publish() ran.
 */
int sroce_qp_table_reserve(struct sroce_qp *qp, enum ib_qp_type type, u32 *qpn)
{
	if (type == IB_QPT_GSI) {
		*qpn = SROCE_GSI_QPN;
		return xa_insert(&sroce_gsi_qps, qp->sdev->ndev->ifindex, NULL,
				 GFP_KERNEL);
	}
	return xa_alloc_cyclic(&sroce_qps, qpn, NULL,
			       XA_LIMIT(SROCE_MIN_QPN, SROCE_MAX_QPN),
			       &sroce_qpn_next, GFP_KERNEL);
}

void sroce_qp_table_publish(struct sroce_qp *qp)
{
	xa_store(sroce_qp_table(qp), sroce_qp_table_id(qp), qp, GFP_KERNEL);
}

void sroce_qp_table_erase(struct sroce_qp *qp)
{
	xa_erase(sroce_qp_table(qp), sroce_qp_table_id(qp));
}
