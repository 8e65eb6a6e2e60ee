// SPDX-License-Identifier: GPL-2.0
/*
 * The wire: RoCEv2 packets in UDP (port 4791) over IPv4 and IPv6.
 *
 * Rules:
 * - one pair of UDP sockets (IPv4, IPv6) receives for every sroce device;
 *   the first device to open the wire creates them, the last closes them;
 * - every skb sroce sends is owned by its device's TX socket
 *   (skb_set_owner_w: the core's sock_wfree releases it), so a device
 *   stops sending while too many bytes sit in the stack, and closes its
 *   wire at once: a driver below may hold a sent skb indefinitely (virtio
 *   frees TX skbs lazily), and the socket lives until the last one is
 *   freed, with no code of ours left to run;
 * - a received packet is checked here, in softirq, for its length, its
 *   ICRC and a wire QP on the receiving netdev; only then does it go to
 *   that QP's worker, which parses the headers. Every drop has a counter;
 * - the head of a linear packet of at least SROCE_TX_POOL_MIN bytes comes
 *   from the device's TX page pool. A recycled head is not cleared again
 *   (init_on_alloc clears every new kmalloc buffer, which cost as much as
 *   copying the payload), so every byte of it that is sent is written
 *   first: headers, payload, pad and ICRC. The pool's allocation side
 *   takes one caller at a time (tx_pool_lock); heads come back from any
 *   context through the pool's ring when their skb is freed, and the
 *   pool, destroyed with the wire, lives on in the core until the last
 *   one is back.
 */
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/net.h>
#include <linux/udp.h>
#include <net/dst_cache.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/ipv6_stubs.h>
#include <net/route.h>
#include <net/udp_tunnel.h>
#include <rdma/ib_addr.h>
#include <sroce/compat.h>
#include <sroce/icrc.h>
#include <sroce/mtu.h>
#include <sroce/rc_pkt.h>
#include <sroce/roce_hdr.h>
#include "sroce_link.h"

static DEFINE_MUTEX(sroce_net_lock);
static unsigned int sroce_net_users;	/* devices with the wire open */
static struct socket *sroce_sock4;
static struct socket *sroce_sock6;

/* The IPv6 receive socket, for route lookups; while a device is open. */
struct sock *sroce_net_sk6(void)
{
	return sroce_sock6->sk;
}

static bool sroce_net_dev_matches(struct sroce_qp *qp, struct net_device *ndev)
{
	struct net_device *ours = qp->sdev->ndev;

	return ndev == ours ||
	       (is_vlan_dev(ndev) && vlan_dev_real_dev(ndev) == ours);
}

/*
 * The QP a packet that arrived on ndev is for: QP1 is the GSI QP of the
 * sroce device on ndev; a UD QP takes packets from anyone, an RC QP only
 * once its peer is on the wire.
 */
static struct sroce_qp *sroce_net_rx_qp(struct net_device *ndev, u32 qpn)
{
	struct sroce_qp *qp;

	if (qpn == SROCE_GSI_QPN) {
		if (is_vlan_dev(ndev))
			ndev = vlan_dev_real_dev(ndev);
		return sroce_gsi_qp_get(ndev->ifindex);
	}
	qp = sroce_qp_get(qpn);
	if (qp && !sroce_qp_is_ud(qp) && !READ_ONCE(qp->wire)) {
		sroce_qp_put(qp);
		return NULL;
	}
	return qp;
}

/* The GSI QP of the sroce device on ndev (or on the VLAN's real device). */
static struct sroce_qp *sroce_net_port_gsi(struct net_device *ndev)
{
	if (is_vlan_dev(ndev))
		ndev = vlan_dev_real_dev(ndev);
	return sroce_gsi_qp_get(ndev->ifindex);
}

/*
 * Counts a packet dropped before its QP was known, on a sroce device
 * (through its GSI QP, which exists from registration on): the one on the
 * netdev the packet arrived on; for a packet this host sent itself (it
 * arrived on loopback), the one on the netdev that owns its destination
 * address. With neither it was not for a sroce device.
 */
static void sroce_net_rx_drop(struct sk_buff *skb, enum sroce_stat why)
{
	struct net_device *ndev = skb->dev;
	struct sroce_qp *gsi;

	gsi = sroce_net_port_gsi(ndev);
	if (!gsi && (ndev->flags & IFF_LOOPBACK)) {
		rcu_read_lock();
		if (ip_hdr(skb)->version == 4)
			ndev = __ip_dev_find(dev_net(ndev), ip_hdr(skb)->daddr,
					     false);
		else
			ndev = ipv6_stub->ipv6_dev_find(dev_net(ndev),
							&ipv6_hdr(skb)->daddr,
							NULL);
		if (ndev)
			gsi = sroce_net_port_gsi(ndev);
		rcu_read_unlock();
	}
	if (!gsi)
		return;
	sroce_stat_add(gsi->sdev, why, 1);
	sroce_qp_put(gsi);
}

/*
 * A datagram to a multicast group: its members are found by IP address,
 * and each gets a clone (the last one the packet itself).
 */
static void sroce_net_rx_mcast(struct sk_buff *skb)
{
	struct sroce_qp *members[SROCE_MCAST_MAX_ATTACH];
	struct net_device *ndev = skb->dev;
	unsigned int i, n = 0;
	union ib_gid mgid;
	struct sk_buff *c;

	if (is_vlan_dev(ndev))
		ndev = vlan_dev_real_dev(ndev);
	if (ip_hdr(skb)->version == 4)
		ipv6_addr_set_v4mapped(ip_hdr(skb)->daddr,
				       (struct in6_addr *)mgid.raw);
	else
		memcpy(mgid.raw, &ipv6_hdr(skb)->daddr, sizeof(mgid.raw));
	if (sroce_mcast_gid_ok(&mgid))
		n = sroce_mcast_members(ndev->ifindex, &mgid, members);
	if (!n) {
		sroce_net_rx_drop(skb, SROCE_STAT_RX_DROP_NO_QP);
		kfree_skb(skb);
		return;
	}
	for (i = 0; i < n; i++) {
		c = i + 1 < n ? skb_clone(skb, GFP_ATOMIC) : skb;
		if (c)
			sroce_wire_rx_enqueue(members[i], c);
		sroce_qp_put(members[i]);
	}
}

/*
 * The longest transport headers any packet can have: the BTH and every
 * extension header. A received packet's first bytes up to that length are
 * made linear, which covers the headers of every opcode; its payload stays
 * where the NIC put it.
 */
#define SROCE_RX_LINEAR_HDRS \
	(IB_BTH_BYTES + IB_DETH_BYTES + SROCE_RETH_LEN + IB_EXT_ATOMICETH_BYTES + \
	 SROCE_AETH_LEN + SROCE_ATMACK_LEN + SROCE_IMMDT_LEN + SROCE_IETH_LEN)

/*
 * Whether the ICRC in the last bytes of skb (which starts at the BTH,
 * linear at least to the BTH's end, the IP header before it) is right.
 */
static bool sroce_net_rx_icrc_ok(struct sk_buff *skb)
{
	unsigned int body = skb->len - IB_ICRC_BYTES, at, n;
	u8 *l3 = skb_network_header(skb);
	struct skb_seq_state seq;
	const u8 *p;
	__le32 wire;
	size_t done;
	u32 crc;

	if (!sroce_icrc_begin(l3, skb->data + IB_BTH_BYTES - l3, &crc, &done))
		return false;
	/* skb_seq_read() hands out whole blocks, which may run past body. */
	skb_prepare_seq_read(skb, IB_BTH_BYTES, body, &seq);
	for (at = 0; (n = skb_seq_read(at, &p, &seq)); at += n) {
		n = min(n, body - IB_BTH_BYTES - at);
		crc = sroce_icrc_add(crc, p, n);
	}
	if (skb_copy_bits(skb, body, &wire, sizeof(wire)))
		return false;
	return sroce_icrc_end(crc) == le32_to_cpu(wire);
}

/*
 * Only what finding the QP needs happens here (length, ICRC, BTH
 * destination); the QP's worker parses the rest, once.
 */
static int sroce_udp_encap_recv(struct sock *sk, struct sk_buff *skb)
{
	struct sroce_qp *qp;
	unsigned int len;

	len = ntohs(udp_hdr(skb)->len);
	if (len < sizeof(struct udphdr) + IB_BTH_BYTES + IB_ICRC_BYTES ||
	    len > skb->len)
		goto malformed;
	skb_pull(skb, sizeof(struct udphdr));
	if (pskb_trim(skb, len - sizeof(struct udphdr)) ||
	    !pskb_may_pull(skb, min_t(unsigned int, skb->len,
				      SROCE_RX_LINEAR_HDRS)))
		goto malformed;

	if (!sroce_net_rx_icrc_ok(skb)) {
		sroce_net_rx_drop(skb, SROCE_STAT_RX_DROP_ICRC);
		kfree_skb(skb);
		return 0;
	}

	if (sroce_bth_dest_qpn(skb->data) == SROCE_MCAST_QPN) {
		sroce_net_rx_mcast(skb);
		return 0;
	}
	qp = sroce_net_rx_qp(skb->dev, sroce_bth_dest_qpn(skb->data));
	if (!qp || !sroce_net_dev_matches(qp, skb->dev)) {
		if (qp)
			sroce_qp_put(qp);
		sroce_net_rx_drop(skb, SROCE_STAT_RX_DROP_NO_QP);
		kfree_skb(skb);
		return 0;
	}
	sroce_wire_rx_enqueue(qp, skb);
	sroce_qp_put(qp);
	return 0;

malformed:
	sroce_net_rx_drop(skb, SROCE_STAT_RX_DROP_MALFORMED);
	kfree_skb(skb);
	return 0;
}

/*
 * Whether a packet came from the QP's peer to the QP's own address: the IP
 * addresses are all that names the two ends of a connection, so a packet
 * from anywhere else (a forged ACK, NAK or request) is not the peer's.
 */
static bool sroce_wire_from_peer(struct sroce_qp *qp, struct sk_buff *skb)
{
	const struct sroce_path *path = &qp->path;
	struct in6_addr saddr, daddr;

	if (ip_hdr(skb)->version == 4) {
		ipv6_addr_set_v4mapped(ip_hdr(skb)->saddr, &saddr);
		ipv6_addr_set_v4mapped(ip_hdr(skb)->daddr, &daddr);
	} else {
		saddr = ipv6_hdr(skb)->saddr;
		daddr = ipv6_hdr(skb)->daddr;
	}
	return ipv6_addr_equal(&saddr, &path->daddr) &&
	       ipv6_addr_equal(&daddr, &path->saddr);
}

static const struct sroce_wire_up *sroce_wire_up;

/* At module load, before any device exists. */
void sroce_wire_register(const struct sroce_wire_up *up)
{
	sroce_wire_up = up;
}

/*
 * Offers a plain ACK (no NAK, no payload) from an RC QP's peer to the
 * engine at once (struct sroce_wire_up), before anything is queued for
 * the QP: whether it was taken, and freed. Anything else, or a packet
 * the checks of sroce_wire_rx_next() would drop, is left to the queue.
 */
static bool sroce_wire_take_ack(struct sroce_qp *qp, struct sk_buff *skb)
{
	struct sroce_rx rx;

	if (!sroce_wire_up || qp->ibqp.qp_type != IB_QPT_RC ||
	    sroce_bth_opcode(skb->data) != IB_OPCODE_RC_ACKNOWLEDGE ||
	    !READ_ONCE(qp->wire) ||
	    sroce_pkt_parse(skb->data, skb->len, &rx.parsed) != SROCE_PKT_OK ||
	    rx.parsed.opcode != IB_OPCODE_RC_ACKNOWLEDGE ||
	    sroce_aeth_kind(rx.parsed.aeth_syndrome) != SROCE_AETH_KIND_ACK ||
	    rx.parsed.payload_len ||
	    !sroce_pkey_matches_default(rx.parsed.pkey))
		return false;
	rx.pkt = &rx.parsed;
	rx.seg = NULL;
	rx.num_seg = 0;
	rx.skb = skb;
	rx.msg = NULL;
	if (!sroce_wire_up->take_now(qp, &rx))
		return false;
	sroce_stat_add(qp->sdev, SROCE_STAT_RX_PKTS, 1);
	sroce_stat_add(qp->sdev, SROCE_STAT_RX_BYTES, skb->len);
	consume_skb(skb);
	return true;
}

/*
 * Queues a packet for the QP's worker, or hands a plain ACK to its
 * transport at once. An RC/UC packet from anywhere but
 * the QP's peer is dropped here already, so that forged packets cannot
 * fill the queue the peer's packets need (the worker checks again: the
 * path may change under it).
 */
void sroce_wire_rx_enqueue(struct sroce_qp *qp, struct sk_buff *skb)
{
	if (!sroce_qp_is_ud(qp) && !sroce_wire_from_peer(qp, skb)) {
		sroce_stat_add(qp->sdev, SROCE_STAT_RX_DROP_ADDRESS, 1);
		kfree_skb(skb);
		return;
	}
	if (sroce_wire_take_ack(qp, skb))
		return;
	if (skb_queue_len(&qp->lrx.rx_skbs) >= SROCE_RX_QUEUE_MAX) {
		sroce_stat_add(qp->sdev, SROCE_STAT_RX_DROP_QUEUE, 1);
		kfree_skb(skb);
		return;
	}
	skb_queue_tail(&qp->lrx.rx_skbs, skb);
	sroce_worker_wake(READ_ONCE(qp->worker));
}

/*
 * The payload of a parsed packet whose headers sroce_udp_encap_recv()
 * made linear, where it lies: the payload is not copied out of the skb.
 * Fragments the kernel may not address directly (a frag list, highmem)
 * are made linear first. Returns false on a failed allocation.
 */
static bool sroce_wire_payload(struct sroce_qp *qp, struct sk_buff *skb,
			       struct sroce_rx *rx)
{
	struct sroce_seg *kseg = qp->lrx.rx_kseg;
	struct skb_shared_info *shinfo;
	u32 left = rx->pkt->payload_len, n;
	unsigned int i;

	if ((skb_has_frag_list(skb) ||
	     (IS_ENABLED(CONFIG_HIGHMEM) && skb_is_nonlinear(skb))) &&
	    skb_linearize(skb))
		return false;
	shinfo = skb_shinfo(skb);
	rx->num_seg = 0;
	n = min(left, skb_headlen(skb) - rx->pkt->hdr_len);
	if (n)
		kseg[rx->num_seg++] =
			sroce_kseg(skb->data + rx->pkt->hdr_len, n);
	left -= n;
	for (i = 0; left && i < shinfo->nr_frags; i++) {
		n = min(left, skb_frag_size(&shinfo->frags[i]));
		kseg[rx->num_seg++] =
			sroce_kseg(skb_frag_address(&shinfo->frags[i]), n);
		left -= n;
	}
	rx->seg = kseg;
	return !left;
}

/* A datagram's GRH: the IP header it came with (IPv4 behind 20 zeros). */
static void sroce_wire_rx_grh(struct sk_buff *skb, struct sroce_rx *rx)
{
	memset(rx->grh_buf, 0, sizeof(rx->grh_buf));
	rx->grh_ipv4 = ip_hdr(skb)->version == 4;
	if (rx->grh_ipv4)
		memcpy(rx->grh_buf + SROCE_IPV4_IN_GRH, ip_hdr(skb),
		       sizeof(struct iphdr));
	else
		memcpy(rx->grh_buf, ipv6_hdr(skb), sizeof(struct ipv6hdr));
	rx->grh = rx->grh_buf;
}

/*
 * The next packet for the QP from the wire, parsed, with the default
 * P_Key; an RC/UC QP's only while it is on the wire and from its peer, a
 * UD/GSI QP's with its GRH. Packets are taken from rx_skbs in batches into
 * rx_pending, which only the QP's worker touches.
 */
bool sroce_wire_rx_next(struct sroce_qp *qp, struct sroce_rx *rx)
{
	bool datagram = sroce_qp_is_ud(qp);
	unsigned int dropped = 0;
	struct sk_buff *skb;

	for (;;) {
		skb = __skb_dequeue(&qp->lrx.rx_pending);
		if (!skb) {
			if (skb_queue_empty_lockless(&qp->lrx.rx_skbs))
				return false;
			spin_lock_bh(&qp->lrx.rx_skbs.lock);
			skb_queue_splice_init(&qp->lrx.rx_skbs, &qp->lrx.rx_pending);
			spin_unlock_bh(&qp->lrx.rx_skbs.lock);
			continue;
		}
		rx->pkt = &rx->parsed;
		if (!datagram && !READ_ONCE(qp->wire)) {
			/* Queued while the QP was on the wire, before a reset. */
			sroce_stat_add(qp->sdev, SROCE_STAT_RX_DROP_PROTOCOL, 1);
		} else if (!datagram && !sroce_wire_from_peer(qp, skb)) {
			sroce_stat_add(qp->sdev, SROCE_STAT_RX_DROP_ADDRESS, 1);
		} else if (sroce_pkt_parse(skb->data, skb->len, rx->pkt) !=
			   SROCE_PKT_OK || !sroce_wire_payload(qp, skb, rx) ||
			   (datagram && (rx->pkt->opcode &
					 SROCE_OPC_SERVICE_MASK) != IB_OPCODE_UD)) {
			sroce_stat_add(qp->sdev, SROCE_STAT_RX_DROP_MALFORMED, 1);
		} else if (!sroce_pkey_matches_default(rx->pkt->pkey)) {
			sroce_stat_add(qp->sdev, SROCE_STAT_RX_DROP_PKEY, 1);
		} else {
			sroce_stat_add(qp->sdev, SROCE_STAT_RX_PKTS, 1);
			sroce_stat_add(qp->sdev, SROCE_STAT_RX_BYTES, skb->len);
			rx->skb = skb;
			rx->msg = NULL;
			if (datagram)
				sroce_wire_rx_grh(skb, rx);
			return true;
		}
		consume_skb(skb);
		/* A flood of bad packets takes its turn like good ones. */
		if (++dropped == SROCE_RX_DROPS_PER_CALL)
			return false;
	}
}

void sroce_wire_drop_rx(struct sroce_qp *qp)
{
	skb_queue_purge(&qp->lrx.rx_skbs);
	__skb_queue_purge(&qp->lrx.rx_pending);
}

static struct socket *sroce_udp_open(bool ipv6)
{
	struct udp_tunnel_sock_cfg tunnel = {
		.encap_type = 1,
		.encap_rcv = sroce_udp_encap_recv,
	};
	struct udp_port_cfg cfg = {
		.local_udp_port = htons(ROCE_V2_UDP_DPORT),
	};
	struct socket *sock;
	int err;

	if (ipv6) {
		cfg.family = AF_INET6;
		cfg.ipv6_v6only = 1;
	} else {
		cfg.family = AF_INET;
	}
	err = udp_sock_create(&init_net, &cfg, &sock);
	if (err)
		return ERR_PTR(err);
	setup_udp_tunnel_sock(&init_net, sock, &tunnel);
	return sock;
}

static int sroce_net_get_sockets(void)
{
	int err = 0;

	mutex_lock(&sroce_net_lock);
	if (!sroce_net_users) {
		sroce_sock4 = sroce_udp_open(false);
		if (IS_ERR(sroce_sock4)) {
			err = PTR_ERR(sroce_sock4);
			goto out;
		}
		if (IS_ENABLED(CONFIG_IPV6)) {
			sroce_sock6 = sroce_udp_open(true);
			if (IS_ERR(sroce_sock6)) {
				err = PTR_ERR(sroce_sock6);
				udp_tunnel_sock_release(sroce_sock4);
				goto out;
			}
		}
	}
	sroce_net_users++;
out:
	mutex_unlock(&sroce_net_lock);
	if (err == -EADDRINUSE)
		pr_err("sroce: UDP port %u is in use (is rdma_rxe loaded?)\n",
		       ROCE_V2_UDP_DPORT);
	return err;
}

static void sroce_net_put_sockets(void)
{
	mutex_lock(&sroce_net_lock);
	if (!--sroce_net_users) {
		if (sroce_sock6 && !IS_ERR(sroce_sock6))
			udp_tunnel_sock_release(sroce_sock6);
		udp_tunnel_sock_release(sroce_sock4);
		sroce_sock4 = NULL;
		sroce_sock6 = NULL;
	}
	mutex_unlock(&sroce_net_lock);
}

/* Without a pool (it is an optimisation) heads come from alloc_skb. */
static void sroce_net_tx_pool_create(struct sroce_dev *sdev)
{
	struct page_pool_params pp = {
		.order = SROCE_TX_POOL_ORDER,
		.pool_size = SROCE_TX_POOL_SIZE,
		.nid = NUMA_NO_NODE,
	};
	struct page_pool *pool;

	spin_lock_init(&sdev->tx_pool_lock);
	pool = page_pool_create(&pp);
	sdev->tx_pool = IS_ERR(pool) ? NULL : pool;
}

int sroce_net_open(struct sroce_dev *sdev)
{
	int err;

	err = sroce_net_get_sockets();
	if (err)
		return err;
	/* Owns our TX skbs so their destructor finds the device. */
	err = sock_create_kern(&init_net, AF_INET, SOCK_DGRAM, IPPROTO_UDP,
			       &sdev->tx_sock);
	if (err) {
		sroce_net_put_sockets();
		return err;
	}
	sroce_net_tx_pool_create(sdev);
	sdev->net_open = true;
	return 0;
}

/* After every QP of the device is gone; skbs still in the stack keep the
 * socket's memory until they are freed.
 */
void sroce_net_close(struct sroce_dev *sdev)
{
	if (!sdev->net_open)
		return;
	page_pool_destroy(sdev->tx_pool);
	sdev->tx_pool = NULL;
	sock_release(sdev->tx_sock);
	sdev->tx_sock = NULL;
	sroce_net_put_sockets();
	sdev->net_open = false;
}

