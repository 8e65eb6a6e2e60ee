// SPDX-License-Identifier: GPL-2.0
/*
 * UD and GSI QPs: datagrams of one packet each, run by the QP's worker.
 *
 * Rules:
 * - a send completes once its datagram left: on the wire, or queued to
 *   the destination QP when a sroce device of this host owns the
 *   destination GID (the shortcut copies the payload, so no memory of
 *   the sender stays referenced). A datagram nobody can take is lost, as
 *   on a wire, and counted;
 * - datagrams travel by the links as RC/UC packets do: sent with
 *   sroce_link_xmit_datagram(), each by where its destination is, and
 *   received from the QP's one queue with sroce_link_rx_next();
 * - a WQE's Q_Key with the MSB set stands for the QP's own Q_Key, the
 *   only way a privileged Q_Key goes out;
 * - a datagram lands only in a QP in RTR or RTS whose Q_Key matches, in
 *   the next receive WQE, behind the 40-byte GRH verbs puts at the head
 *   of the buffer. Without a receive WQE it is dropped and counted; one
 *   that does not fit completes its receive WQE with IB_WC_LOC_LEN_ERR
 *   and leaves the QP working, so no remote sender can stop a QP.
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>
#include <sroce/psn.h>
#include <sroce/roce_hdr.h>
#include "sroce_transport.h"
#include "sroce_link.h"
#include "sroce_trace.h"
#include "sroce_wake.h"

/* What a receiver needs of a datagram besides its payload. */
struct sroce_ud_rx {
	u32 src_qpn;
	u32 qkey;
	u32 imm;		/* host order, as parsed */
	u32 len;
	bool with_imm;
	bool solicited;
	bool ipv4;
	const u8 *grh;
	const struct sroce_seg *payload;
	unsigned int num_seg;
};

/* Receiving ---------------------------------------------------------------- */

/* Copies the GRH, then the payload, into the receive WQE's segments. */
static bool sroce_ud_copy(const struct sroce_seg *segs, unsigned int nseg,
			  const struct sroce_ud_rx *rx)
{
	struct sroce_seg grh = sroce_kseg((void *)rx->grh, IB_GRH_BYTES);
	struct sroce_seg_iter dst, src;

	sroce_seg_iter_init(&dst, segs, nseg, 0);
	sroce_seg_iter_init(&src, &grh, 1, 0);
	if (sroce_seg_copy(&dst, &src, IB_GRH_BYTES) != SROCE_COPY_OK)
		return false;
	sroce_seg_iter_init(&src, rx->payload, rx->num_seg, 0);
	return sroce_seg_copy(&dst, &src, rx->len) == SROCE_COPY_OK;
}

static void sroce_ud_deliver(struct sroce_qp *qp, const struct sroce_ud_rx *rx)
{
	struct sroce_seg segs[SROCE_MAX_SGE];
	enum ib_qp_state state = READ_ONCE(qp->state);
	struct sroce_cqe cqe = {};
	unsigned int nseg = 0;
	u32 cap = 0;
	int posted;
	u8 status;

	if (state != IB_QPS_RTR && state != IB_QPS_RTS) {
		sroce_stat_add(qp->sdev, SROCE_STAT_RX_DROP_PROTOCOL, 1);
		return;
	}
	if (rx->qkey != qp->attr.qkey) {
		sroce_stat_add(qp->sdev, SROCE_STAT_RX_DROP_QKEY, 1);
		return;
	}
	posted = sroce_recv_posted(qp);
	if (posted <= 0) {
		sroce_stat_add(qp->sdev, SROCE_STAT_RX_DROP_NO_RECV, 1);
		if (posted < 0)
			sroce_qp_ring_error(qp);
		return;
	}

	status = sroce_take_recv(qp, segs, &nseg, &cap, &cqe.wr_id);
	if (status == SROCE_RECV_NONE) {
		/* Another QP took the SRQ's last WQE meanwhile. */
		sroce_stat_add(qp->sdev, SROCE_STAT_RX_DROP_NO_RECV, 1);
		return;
	}
	if (status == IB_WC_SUCCESS && cap < IB_GRH_BYTES + rx->len)
		status = IB_WC_LOC_LEN_ERR;
	if (status == IB_WC_SUCCESS) {
		if (!sroce_ud_copy(segs, nseg, rx))
			status = IB_WC_LOC_PROT_ERR;	/* its lkey revoked */
		else
			sroce_stat_add(qp->sdev, SROCE_STAT_UD_RECEIVED, 1);
	}
	sroce_segs_put(segs, nseg);
	sroce_recv_done(qp);

	cqe.status = status;
	cqe.opcode = IB_WC_RECV;
	cqe.qp_num = qp->ibqp.qp_num;
	cqe.src_qp = rx->src_qpn;
	if (status == IB_WC_SUCCESS) {
		cqe.byte_len = IB_GRH_BYTES + rx->len;
		cqe.flags = SROCE_CQE_WITH_GRH;
		if (rx->ipv4)
			cqe.flags |= SROCE_CQE_IPV4;
		if (rx->with_imm) {
			cqe.flags |= SROCE_CQE_WITH_IMM;
			cqe.imm_data = (__force u32)cpu_to_be32(rx->imm);
		}
		if (rx->solicited)
			cqe.flags |= SROCE_CQE_SOLICITED;
	}
	sroce_cq_post(to_scq(qp->ibqp.recv_cq), &cqe, sroce_qp_held_events(qp));
	/* The receive WQE itself was bad: the consumer's error, QP-fatal. */
	if (status != IB_WC_SUCCESS && status != IB_WC_LOC_LEN_ERR)
		sroce_qp_error(qp);
}

/* A datagram the link handed up: a UD packet, else dropped and counted. */
static void sroce_ud_rx_datagram(struct sroce_qp *qp, struct sroce_rx *rx)
{
	const struct sroce_pkt *pkt = rx->pkt;
	struct sroce_ud_rx ud = {};

	trace_sroce_pkt_rx(qp->ibqp.qp_num, pkt->dest_qpn, pkt->opcode,
			   pkt->psn, pkt->payload_len, !!rx->skb);
	if ((pkt->opcode & SROCE_OPC_SERVICE_MASK) != IB_OPCODE_UD) {
		sroce_stat_add(qp->sdev, SROCE_STAT_RX_DROP_MALFORMED, 1);
		return;
	}
	ud.grh = rx->grh;
	ud.ipv4 = rx->grh_ipv4;
	ud.src_qpn = pkt->deth_src_qpn;
	ud.qkey = pkt->deth_qkey;
	ud.len = pkt->payload_len;
	ud.with_imm = pkt->opcode ==
		      (IB_OPCODE_UD | IB_OPCODE_SEND_ONLY_WITH_IMMEDIATE);
	ud.imm = pkt->imm;
	ud.solicited = pkt->solicited;
	ud.payload = rx->seg;
	ud.num_seg = rx->num_seg;
	sroce_ud_deliver(qp, &ud);
}

/* At most *budget datagrams, from the shortcut first, then the wire. */
static int sroce_ud_receive(struct sroce_qp *qp, int *budget)
{
	struct sroce_rx rx;
	int n = 0;

	while (*budget > 0 && sroce_link_rx_next(qp, &rx)) {
		sroce_ud_rx_datagram(qp, &rx);
		sroce_link_rx_done(qp, &rx);
		(*budget)--;
		n++;
	}
	return n;
}

/* Sending ------------------------------------------------------------------ */

/*
 * Builds the GRH a receiver of a shortcut datagram sees: the IP header
 * the packet would have carried, with udp_len bytes of UDP datagram.
 */
static void sroce_ud_build_grh(u8 *grh, const struct ib_gid_attr *sgid,
			       const struct sroce_wqe_ud *ud, u32 udp_len,
			       bool *ipv4)
{
	u8 hop_limit = ud->hop_limit ? ud->hop_limit : 64;

	memset(grh, 0, IB_GRH_BYTES);
	*ipv4 = rdma_gid_attr_network_type(sgid) == RDMA_NETWORK_IPV4;
	if (*ipv4) {
		struct iphdr *iph = (struct iphdr *)(grh + SROCE_IPV4_IN_GRH);

		iph->version = IPVERSION;
		iph->ihl = sizeof(*iph) >> 2;
		iph->tos = ud->traffic_class;
		iph->tot_len = htons(sizeof(*iph) + udp_len);
		iph->frag_off = htons(IP_DF);
		iph->ttl = hop_limit;
		iph->protocol = IPPROTO_UDP;
		memcpy(&iph->saddr, sgid->gid.raw + 12, 4);
		memcpy(&iph->daddr, ud->dgid + 12, 4);
		iph->check = ip_fast_csum(iph, iph->ihl);
	} else {
		struct ipv6hdr *ip6h = (struct ipv6hdr *)grh;

		ip6_flow_hdr(ip6h, ud->traffic_class, htonl(ud->flow_label));
		ip6h->payload_len = htons(udp_len);
		ip6h->nexthdr = IPPROTO_UDP;
		ip6h->hop_limit = hop_limit;
		memcpy(&ip6h->saddr, sgid->gid.raw, 16);
		memcpy(&ip6h->daddr, ud->dgid, 16);
	}
}

/* Drops the cached destination and its GID reference. */
static void sroce_ud_forget_dest(struct sroce_qp *qp)
{
	struct sroce_ud_dest *d = &qp->ud_dest;

	if (d->sgid)
		rdma_put_gid_attr(d->sgid);
	d->sgid = NULL;
	d->expires = 0;
}

/*
 * Where a datagram goes: the ifindex of the sroce device here that owns
 * the destination GID, or 0 with qp->path set for the wire, or an error.
 * *sgid is the source GID entry, held by the cache (NULL if there is no
 * RoCEv2 entry at that index).
 */
static int sroce_ud_route(struct sroce_qp *qp, const struct sroce_wqe_ud *ud,
			  const struct ib_gid_attr **sgid)
{
	struct sroce_ud_dest *d = &qp->ud_dest;
	const struct ib_gid_attr *attr;
	union ib_gid dgid;
	int err;

	if (d->expires && time_before(jiffies, d->expires) &&
	    !memcmp(d->dgid, ud->dgid, sizeof(d->dgid)) &&
	    d->sgid_index == ud->sgid_index &&
	    d->traffic_class == ud->traffic_class &&
	    d->hop_limit == ud->hop_limit && d->flow_label == ud->flow_label) {
		*sgid = d->sgid;
		return d->local_ifindex;
	}

	sroce_ud_forget_dest(qp);
	*sgid = NULL;
	attr = rdma_get_gid_attr(&qp->sdev->ibdev, SROCE_PORT, ud->sgid_index);
	if (IS_ERR(attr))
		return PTR_ERR(attr);
	d->sgid = attr;
	if (attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
		return -EINVAL;
	*sgid = attr;

	memcpy(dgid.raw, ud->dgid, sizeof(dgid.raw));
	/* The two ends speak the same IP, on the shortcut as on the wire. */
	if ((rdma_gid_attr_network_type(attr) == RDMA_NETWORK_IPV4) !=
	    ipv6_addr_v4mapped((struct in6_addr *)dgid.raw))
		return -EINVAL;
	d->local_ifindex = sroce_ifindex_by_gid(&dgid);
	if (!d->local_ifindex) {
		err = sroce_net_path_fill(&qp->path, attr, ud->dgid,
					  ud->traffic_class, ud->hop_limit,
					  ud->flow_label);
		if (err)
			return err;
		qp->path.mtu = sroce_port_mtu(qp->sdev);
	}
	memcpy(d->dgid, ud->dgid, sizeof(d->dgid));
	d->sgid_index = ud->sgid_index;
	d->traffic_class = ud->traffic_class;
	d->hop_limit = ud->hop_limit;
	d->flow_label = ud->flow_label;
	d->expires = jiffies + HZ;
	return d->local_ifindex;
}

/*
 * Sends the datagram of sw: to a QP of the sroce device ifindex of this
 * host, or on the wire (ifindex 0, by qp->path); a completion status. A
 * datagram nobody takes is lost, and its send succeeds.
 */
static u8 sroce_ud_send_datagram(struct sroce_qp *qp, struct sroce_swqe *sw,
				 const struct ib_gid_attr *sgid, u32 qkey,
				 int ifindex)
{
	const struct sroce_wqe_ud *ud = &sw->wqe->ud;
	const struct sroce_wqe_ctrl *c = &sw->wqe->ctrl;
	bool with_imm = c->opcode == SROCE_WQE_SEND_IMM;
	u8 grh[IB_GRH_BYTES];
	struct sroce_pkt pkt = {};
	bool ipv4 = false;
	u32 udp_len;

	pkt.opcode = IB_OPCODE_UD | (with_imm ?
				     IB_OPCODE_SEND_ONLY_WITH_IMMEDIATE :
				     IB_OPCODE_SEND_ONLY);
	pkt.solicited = c->flags & SROCE_WQE_SOLICITED;
	pkt.dest_qpn = ud->remote_qpn;
	pkt.deth_qkey = qkey;
	pkt.deth_src_qpn = qp->ibqp.qp_num;
	pkt.imm = be32_to_cpu((__force __be32)c->imm_data);
	if (ifindex) {
		/* The GRH the packet's IP header would have been. */
		udp_len = sizeof(struct udphdr) + IB_BTH_BYTES +
			  IB_DETH_BYTES + (with_imm ? SROCE_IMMDT_LEN : 0) +
			  ALIGN(sw->msg_len, 4) + IB_ICRC_BYTES;
		sroce_ud_build_grh(grh, sgid, ud, udp_len, &ipv4);
	} else {
		/* The wire numbers the QP's datagrams. */
		pkt.psn = qp->req.req_psn;
		qp->req.req_psn = sroce_psn_add(qp->req.req_psn, 1);
		qp->path.sport =
			cpu_to_be16(rdma_get_udp_sport(ud->flow_label,
						       qp->ibqp.qp_num,
						       ud->remote_qpn));
	}
	if (sroce_link_xmit_datagram(qp, &pkt, sw->segs, sw->num_segs,
				     sw->msg_len, ifindex,
				     ifindex ? grh : NULL, ipv4))
		return IB_WC_LOC_PROT_ERR;	/* an lkey revoked */
	return IB_WC_SUCCESS;
}

/* Sends the datagram of a fetched WQE; the completion status. */
static u8 sroce_ud_send_one(struct sroce_qp *qp, struct sroce_swqe *sw)
{
	struct sroce_send_wqe *wqe = sw->wqe;
	const struct sroce_wqe_ud *ud = &wqe->ud;
	const struct ib_gid_attr *sgid;
	u32 qkey;
	int ifindex;
	u8 status;

	status = sroce_wqe_status(sroce_wqe_check_ud(ud, sw->msg_len,
						     sroce_port_mtu(qp->sdev)));
	if (status != IB_WC_SUCCESS)
		return status;
	qkey = (ud->remote_qkey & SROCE_QKEY_PRIVILEGED) ? qp->attr.qkey :
							  ud->remote_qkey;
	ifindex = sroce_ud_route(qp, ud, &sgid);
	if (!sgid)
		return IB_WC_LOC_QP_OP_ERR;

	if (wqe->ctrl.flags & SROCE_WQE_INLINE) {
		sw->segs[0] = sroce_kseg(wqe->sge, wqe->ctrl.inline_len);
		sw->num_segs = 1;
	} else {
		if (!sroce_sges_to_segs(qp, wqe->sge, wqe->ctrl.num_sge, 0,
					sw->segs))
			return IB_WC_LOC_PROT_ERR;
		sw->num_segs = wqe->ctrl.num_sge;
		sw->segs_held = true;
	}

	if (ifindex < 0)
		return IB_WC_LOC_QP_OP_ERR;	/* IPv4 to IPv6, or no memory */
	status = sroce_ud_send_datagram(qp, sw, sgid, qkey, ifindex);
	if (status == IB_WC_SUCCESS)
		sroce_stat_add(qp->sdev, SROCE_STAT_UD_SENT, 1);
	return status;
}

/*
 * UD WQEs complete in order as their datagrams leave, so the send
 * context keeps sq_retire == sq_next == sq_fetched between WQEs.
 */
static void sroce_ud_send(struct sroce_qp *qp, int *budget)
{
	struct sroce_swqe *sw;
	u32 producer;
	u8 status;

	if (!sroce_sq_producer(qp, &producer)) {
		sroce_qp_ring_error(qp);
		return;
	}
	while (qp->req.sq_next != producer && *budget > 0 &&
	       !sroce_net_tx_full(qp->sdev)) {
		sw = sroce_swqe_at(qp, qp->req.sq_next);
		status = sroce_fetch_send(qp, qp->req.sq_next);
		qp->req.sq_fetched++;
		qp->req.sq_next++;
		sroce_stat_add(qp->sdev, SROCE_STAT_WQES, 1);
		trace_sroce_wqe(qp->ibqp.qp_num, qp->req.sq_next - 1,
				sw->wqe->ctrl.opcode, status);
		if (status == IB_WC_SUCCESS)
			status = sroce_ud_send_one(qp, sw);
		sroce_complete_send(qp, status);
		(*budget)--;
		if (status != IB_WC_SUCCESS)
			return;
	}
}

static bool sroce_ud_has_work(struct sroce_qp *qp)
{
	if (sroce_link_rx_pending(qp))
		return true;
	if (READ_ONCE(qp->state) != IB_QPS_RTS)
		return false;
	if (sroce_net_tx_full(qp->sdev)) {
		qp->worker->tx_blocked = true;	/* looks again a jiffy later */
		return false;
	}
	return READ_ONCE(qp->sq.hdr->producer) != qp->req.sq_next;
}

/* At RESET: a UD QP's own state is its PSNs (the next datagram's). */
static void sroce_ud_reset(struct sroce_qp *qp)
{
	qp->req.req_psn = 0;
	qp->req.una_psn = 0;
	qp->req.sent_psn = 0;
}

const struct sroce_transport sroce_ud_transport = {
	.receive = sroce_ud_receive,
	.send = sroce_ud_send,
	.has_work = sroce_ud_has_work,
	.drop_state = sroce_ud_forget_dest,
	.reset = sroce_ud_reset,
	.drop_rx = sroce_link_drop_rx,
};
