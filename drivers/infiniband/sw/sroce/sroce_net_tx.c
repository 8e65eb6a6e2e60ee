// SPDX-License-Identifier: GPL-2.0
/*
 * The wire, sending: paths and routes, packet buffers, and the ICRC, UDP
 * and IP headers of every RoCEv2 packet sroce sends (see sroce_net.c for
 * the rules on skb ownership and the TX pool).
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
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
#include <sroce/roce_hdr.h>
#include "sroce_link.h"

#define SROCE_DEFAULT_PKEY 0xffff

/*
 * Sets a path from a source GID entry and the destination; the route is
 * looked up again at the next packet.
 */
int sroce_net_path_fill(struct sroce_path *path,
			const struct ib_gid_attr *sgid, const u8 *dgid,
			u8 traffic_class, u8 hop_limit, u32 flow_label)
{
	int err;

	if (!sgid || sgid->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
		return -EINVAL;
	path->ipv6 = rdma_gid_attr_network_type(sgid) == RDMA_NETWORK_IPV6;
	memcpy(&path->saddr, sgid->gid.raw, sizeof(path->saddr));
	memcpy(&path->daddr, dgid, sizeof(path->daddr));
	if (path->ipv6 == ipv6_addr_v4mapped(&path->daddr))
		return -EINVAL;	/* the two ends speak different IPs */
	path->tos = traffic_class;
	path->hop_limit = hop_limit ? hop_limit : 64;
	path->flow_label = flow_label;
	if (!path->dst_ready) {
		err = dst_cache_init(&path->dst, GFP_KERNEL);
		if (err)
			return err;
		path->dst_ready = true;
	} else {
		dst_cache_reset(&path->dst);
	}
	return 0;
}

int sroce_net_path_set(struct sroce_qp *qp, const struct ib_qp_attr *attr)
{
	const struct ib_global_route *grh = rdma_ah_read_grh(&attr->ah_attr);

	return sroce_net_path_fill(&qp->path, grh->sgid_attr, grh->dgid.raw,
				   grh->traffic_class, grh->hop_limit,
				   grh->flow_label);
}

void sroce_net_path_clear(struct sroce_qp *qp)
{
	if (qp->path.dst_ready)
		dst_cache_destroy(&qp->path.dst);
	qp->path.dst_ready = false;
}

static struct dst_entry *sroce_net_route(struct sroce_qp *qp)
{
	struct sroce_path *path = &qp->path;
	int oif = qp->sdev->ndev->ifindex;
	struct dst_entry *dst;

	if (!path->ipv6) {
		struct flowi4 fl4 = {
			.flowi4_oif = oif,
			.flowi4_proto = IPPROTO_UDP,
			.flowi4_tos = RT_TOS(path->tos),
			.saddr = path->saddr.s6_addr32[3],
			.daddr = path->daddr.s6_addr32[3],
		};
		struct rtable *rt;
		__be32 saddr;

		rt = dst_cache_get_ip4(&path->dst, &saddr);
		if (rt)
			return &rt->dst;
		rt = ip_route_output_key(&init_net, &fl4);
		if (IS_ERR(rt))
			return ERR_CAST(rt);
		dst_cache_set_ip4(&path->dst, &rt->dst, fl4.saddr);
		return &rt->dst;
	}
#if IS_ENABLED(CONFIG_IPV6)
	{
		struct flowi6 fl6 = {
			.flowi6_oif = oif,
			.flowi6_proto = IPPROTO_UDP,
			.saddr = path->saddr,
			.daddr = path->daddr,
		};
		struct in6_addr saddr;

		dst = dst_cache_get_ip6(&path->dst, &saddr);
		if (dst)
			return dst;
		dst = ipv6_stub->ipv6_dst_lookup_flow(&init_net,
						      sroce_net_sk6(), &fl6,
						      NULL);
		if (IS_ERR(dst))
			return dst;
		dst_cache_set_ip6(&path->dst, dst, &fl6.saddr);
		return dst;
	}
#else
	dst = ERR_PTR(-EAFNOSUPPORT);
	return dst;
#endif
}

/* A linear skb of size bytes whose head is from the TX pool, or NULL. */
static struct sk_buff *sroce_net_pool_skb(struct sroce_dev *sdev,
					  unsigned int size)
{
	const unsigned int buf_size = PAGE_SIZE << SROCE_TX_POOL_ORDER;
	struct sk_buff *skb;
	struct page *page;

	if (!sdev->tx_pool || size < SROCE_TX_POOL_MIN ||
	    size > SKB_WITH_OVERHEAD(buf_size))
		return NULL;
	spin_lock_bh(&sdev->tx_pool_lock);
	page = page_pool_alloc_pages(sdev->tx_pool, GFP_ATOMIC | __GFP_NOWARN);
	spin_unlock_bh(&sdev->tx_pool_lock);
	if (!page)
		return NULL;
	skb = build_skb(page_address(page), buf_size);
	if (!skb) {
		page_pool_put_full_page(sdev->tx_pool, page, false);
		return NULL;
	}
	skb_mark_for_recycle(skb);
	return skb;
}

struct sk_buff *sroce_net_alloc(struct sroce_qp *qp, u32 roce_len)
{
	struct net_device *ndev = qp->sdev->ndev;
	unsigned int head = LL_RESERVED_SPACE(ndev) + sizeof(struct ipv6hdr) +
			    sizeof(struct udphdr);
	unsigned int size = head + roce_len + IB_ICRC_BYTES +
			    ndev->needed_tailroom;
	struct sk_buff *skb;

	skb = sroce_net_pool_skb(qp->sdev, size);
	if (!skb)
		skb = alloc_skb(size, sroce_pass_gfp(qp->worker));
	if (!skb)
		return NULL;
	skb_reserve(skb, head);
	skb_put(skb, roce_len);
	return skb;
}

/* The pad that rounds a payload up to whole 32-bit words. */
#define SROCE_PAD_MAX 3

/*
 * A packet whose payload is attached, not copied: the headers (hdr_len
 * bytes, for the caller to write) go in the linear part, then the npieces
 * payload pages, then a small fragment of our own that holds the pad and
 * will hold the ICRC. Each page gets a reference, so it outlives the MR if
 * the skb does. The pages stay user-writable: SKBFL_SHARED_FRAG tells the
 * stack, and a packet changed after its ICRC was computed is dropped by
 * its receiver, as a corrupted one is.
 */
struct sk_buff *sroce_net_alloc_paged(struct sroce_qp *qp, u32 hdr_len,
				      const struct bio_vec *payload,
				      unsigned int npieces, u32 len, u8 pad)
{
	struct net_device *ndev = qp->sdev->ndev;
	unsigned int head = LL_RESERVED_SPACE(ndev) + sizeof(struct ipv6hdr) +
			    sizeof(struct udphdr);
	struct sk_buff *skb;
	struct page *page;
	unsigned int i;
	u8 *trailer;

	if (WARN_ON_ONCE(npieces >= MAX_SKB_FRAGS))
		return NULL;
	skb = alloc_skb(head + hdr_len, sroce_pass_gfp(qp->worker));
	if (!skb)
		return NULL;
	trailer = netdev_alloc_frag(SROCE_PAD_MAX + IB_ICRC_BYTES);
	if (!trailer) {
		kfree_skb(skb);
		return NULL;
	}
	skb_reserve(skb, head);
	skb_put(skb, hdr_len);
	for (i = 0; i < npieces; i++) {
		get_page(payload[i].bv_page);
		skb_fill_page_desc(skb, i, payload[i].bv_page,
				   payload[i].bv_offset, payload[i].bv_len);
	}
	memset(trailer, 0, pad);
	page = virt_to_head_page(trailer);
	skb_fill_page_desc(skb, npieces, page,
			   trailer - (u8 *)page_address(page), pad);
	skb_len_add(skb, len + pad);
	skb_shinfo(skb)->flags |= SKBFL_SHARED_FRAG;
	return skb;
}

/*
 * The ICRC's room at the packet's end: in the tailroom of a linear skb,
 * or in the trailer fragment of one from sroce_net_alloc_paged(). It is
 * made before the UDP and IP headers are pushed, whose lengths cover it.
 */
static void sroce_net_reserve_icrc(struct sk_buff *skb)
{
	struct skb_shared_info *shinfo = skb_shinfo(skb);

	if (!skb_is_nonlinear(skb)) {
		skb_put(skb, IB_ICRC_BYTES);
		return;
	}
	skb_frag_size_add(&shinfo->frags[shinfo->nr_frags - 1],
			  IB_ICRC_BYTES);
	skb_len_add(skb, IB_ICRC_BYTES);
}

/* Writes the ICRC of the packet whose IP header is at skb->data. */
static void sroce_net_put_icrc(struct sk_buff *skb)
{
	struct skb_shared_info *shinfo = skb_shinfo(skb);
	bool linear = !skb_is_nonlinear(skb);
	/* A linear packet ends with the ICRC; a paged one with its trailer. */
	size_t head = skb_headlen(skb) - (linear ? IB_ICRC_BYTES : 0);
	skb_frag_t *frag;
	unsigned int i;
	size_t done;
	u8 *p, *at;
	u32 crc;

	if (!sroce_icrc_begin(skb->data, head, &crc, &done))
		return;
	crc = sroce_icrc_add(crc, skb->data + done, head - done);
	if (linear) {
		put_unaligned_le32(sroce_icrc_end(crc), skb->data + head);
		return;
	}
	for (i = 0; i + 1 < shinfo->nr_frags; i++) {
		frag = &shinfo->frags[i];
		p = kmap_local_page(skb_frag_page(frag));
		crc = sroce_icrc_add(crc, p + skb_frag_off(frag),
				     skb_frag_size(frag));
		kunmap_local(p);
	}
	/* The trailer: the pad, then the ICRC. */
	frag = &shinfo->frags[i];
	at = (u8 *)skb_frag_address(frag) + skb_frag_size(frag) -
	     IB_ICRC_BYTES;
	crc = sroce_icrc_add(crc, skb_frag_address(frag),
			     skb_frag_size(frag) - IB_ICRC_BYTES);
	put_unaligned_le32(sroce_icrc_end(crc), at);
}

bool sroce_net_tx_full(struct sroce_dev *sdev)
{
	return sk_wmem_alloc_get(sdev->tx_sock->sk) >= SROCE_TX_BYTES_MAX;
}

static void sroce_net_push_ip(struct sroce_path *path, struct sk_buff *skb,
			      struct dst_entry *dst)
{
	if (!path->ipv6) {
		struct iphdr *iph;

		skb_push(skb, sizeof(*iph));
		skb_reset_network_header(skb);
		iph = ip_hdr(skb);
		iph->version = IPVERSION;
		iph->ihl = sizeof(*iph) >> 2;
		iph->tos = path->tos;
		iph->tot_len = htons(skb->len);
		iph->frag_off = htons(IP_DF);
		iph->ttl = path->hop_limit;
		iph->protocol = IPPROTO_UDP;
		iph->check = 0;
		iph->saddr = path->saddr.s6_addr32[3];
		iph->daddr = path->daddr.s6_addr32[3];
		__ip_select_ident(dev_net(dst->dev), iph, 1);
		skb->protocol = htons(ETH_P_IP);
		memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
	} else {
		struct ipv6hdr *ip6h;

		skb_push(skb, sizeof(*ip6h));
		skb_reset_network_header(skb);
		ip6h = ipv6_hdr(skb);
		ip6_flow_hdr(ip6h, path->tos, htonl(path->flow_label));
		ip6h->payload_len = htons(skb->len - sizeof(*ip6h));
		ip6h->nexthdr = IPPROTO_UDP;
		ip6h->hop_limit = path->hop_limit;
		ip6h->saddr = path->saddr;
		ip6h->daddr = path->daddr;
		skb->protocol = htons(ETH_P_IPV6);
		memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
	}
}

/*
 * Sends a packet whose transport headers, payload and pad are in skb:
 * adds the ICRC, UDP and IP. The skb is consumed; a packet the stack
 * refuses is counted and lost, as on a wire.
 */
int sroce_net_send(struct sroce_qp *qp, struct sk_buff *skb)
{
	struct sroce_dev *sdev = qp->sdev;
	struct sroce_path *path = &qp->path;
	struct dst_entry *dst;
	struct udphdr *uh;
	unsigned int len;
	int err;

	dst = sroce_net_route(qp);
	if (IS_ERR(dst)) {
		sroce_stat_add(qp->sdev, SROCE_STAT_TX_ERRORS, 1);
		kfree_skb(skb);
		return PTR_ERR(dst);
	}
	sroce_net_reserve_icrc(skb);
	skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	uh = udp_hdr(skb);
	uh->source = path->sport;
	uh->dest = htons(ROCE_V2_UDP_DPORT);
	uh->len = htons(skb->len);
	uh->check = 0;
	len = skb->len - sizeof(*uh);

	sroce_net_push_ip(path, skb, dst);
	if (path->peer_progress) {
		path->peer_progress = false;
		dst_confirm_neigh(dst, path->ipv6 ? (void *)&path->daddr :
				  (void *)&path->daddr.s6_addr32[3]);
	}
	skb_dst_set(skb, dst);
	sroce_net_put_icrc(skb);

	skb->dev = sdev->ndev;
	skb->ip_summed = CHECKSUM_NONE;
	skb_set_owner_w(skb, sdev->tx_sock->sk);

	if (path->ipv6)
		err = ip6_local_out(&init_net, NULL, skb);
	else
		err = ip_local_out(&init_net, NULL, skb);
	if (unlikely(net_xmit_eval(err))) {
		sroce_stat_add(qp->sdev, SROCE_STAT_TX_ERRORS, 1);
		return -EIO;
	}
	sroce_stat_add(sdev, SROCE_STAT_TX_PKTS, 1);
	sroce_stat_add(sdev, SROCE_STAT_TX_BYTES, len);
	return 0;
}

/*
 * An RC request's payload longer than this travels in the MR's own pages,
 * not copied: copying 4 KiB, and zeroing the kmalloc'ed buffer first where
 * init_on_alloc is on, cost more than the rest of building the packet.
 * The pages are read when the NIC below sends them, later than now, so
 * - only RC requests attach them: a SEND or WRITE completes on its ACK,
 *   after its packets left (a resent copy still queued then carries an
 *   ICRC that no longer matches, and is dropped as a corrupted packet);
 * - a UC message or a UD datagram completes as its last packet is
 *   queued, and the application may rewrite its buffer at once;
 * - a READ response must carry the memory as it was when the READ
 *   executed, not as a WRITE executed after it left it;
 * - only through a netdev that does scatter-gather: for one that does not
 *   (virtio-net without checksum offload) the stack would allocate, clear
 *   and copy a linear packet anyway, and a copy into a head from the TX
 *   pool (sroce_net.c) costs less.
 */
#define SROCE_TX_COPY_MAX 512

/*
 * Sends one packet: headers from pkt, then len payload bytes taken from
 * segs at byte off (or none), then the pad.
 */
int sroce_wire_xmit(struct sroce_qp *qp, struct sroce_pkt *pkt,
		    const struct sroce_seg *segs, unsigned int nsegs, u32 off,
		    u32 len)
{
	const struct sroce_opcode_info *info = sroce_opcode_info(pkt->opcode);
	struct sroce_seg_iter src, dst;
	struct sroce_seg out;
	struct bio_vec pieces[MAX_SKB_FRAGS - 1];
	struct sk_buff *skb;
	size_t hdr_len;
	int npieces;
	u8 pad;

	if (WARN_ON_ONCE(!info))
		return -EINVAL;
	hdr_len = sroce_opcode_hdr_len(info);
	pad = -len & 3;
	pkt->pad = pad;
	pkt->pkey = SROCE_DEFAULT_PKEY;
	if (len > SROCE_TX_COPY_MAX && qp->ibqp.qp_type == IB_QPT_RC &&
	    (info->flags & SROCE_HDR_REQUEST) &&
	    (qp->sdev->ndev->features & NETIF_F_SG)) {
		sroce_seg_iter_init(&src, segs, nsegs, off);
		npieces = sroce_seg_pages(&src, len, pieces,
					  ARRAY_SIZE(pieces));
		if (npieces > 0) {
			skb = sroce_net_alloc_paged(qp, hdr_len, pieces,
						    npieces, len, pad);
			if (skb) {
				sroce_pkt_build_hdrs(skb->data, pkt);
				sroce_net_send(qp, skb);
				return 0;
			}
		}
	}
	skb = sroce_net_alloc(qp, hdr_len + len + pad);
	if (!skb)
		return -ENOMEM;
	sroce_pkt_build_hdrs(skb->data, pkt);
	if (len) {
		out = sroce_kseg(skb->data + hdr_len, len);
		sroce_seg_iter_init(&dst, &out, 1, 0);
		sroce_seg_iter_init(&src, segs, nsegs, off);
		if (sroce_seg_copy(&dst, &src, len)) {
			kfree_skb(skb);
			return -EACCES;
		}
	}
	memset(skb->data + hdr_len + len, 0, pad);
	sroce_net_send(qp, skb);
	return 0;
}
