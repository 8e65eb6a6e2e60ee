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
#include <linux/jump_label.h>
#include <linux/ktime.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/net.h>
#include <linux/udp.h>
#include <net/dst_cache.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/ipv6_stubs.h>
#include <net/page_pool.h>
#include <net/route.h>
#include <net/udp_tunnel.h>
#include <rdma/ib_addr.h>
#include <asm/unaligned.h>
#include <crypto/hash.h>
#include <sroce/icrc.h>
#include <sroce/mtu.h>
#include <sroce/roce_hdr.h>
#include "sroce.h"

/* Back-pressure: a device stops sending at this many bytes in the stack. */
#define SROCE_TX_BYTES_MAX (4U << 20)

/* TX pool heads: order-1 pages hold a 4096-byte MTU's packet. */
#define SROCE_TX_POOL_ORDER 1
#define SROCE_TX_POOL_SIZE 512
#define SROCE_TX_POOL_MIN 512

static DEFINE_MUTEX(sroce_net_lock);
static unsigned int sroce_net_users;	/* devices with the wire open */
static struct socket *sroce_sock4;
static struct socket *sroce_sock6;

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

/* A datagram to a multicast group: its members are found by IP address. */
static void sroce_net_rx_mcast(struct sk_buff *skb)
{
	struct net_device *ndev = skb->dev;
	union ib_gid mgid;

	if (is_vlan_dev(ndev))
		ndev = vlan_dev_real_dev(ndev);
	if (ip_hdr(skb)->version == 4)
		ipv6_addr_set_v4mapped(ip_hdr(skb)->daddr,
				       (struct in6_addr *)mgid.raw);
	else
		memcpy(mgid.raw, &ipv6_hdr(skb)->daddr, sizeof(mgid.raw));
	if (!sroce_mcast_gid_ok(&mgid)) {
		kfree_skb(skb);
		sroce_stat_add(SROCE_STAT_RX_DROP_NO_QP, 1);
	} else if (!sroce_mcast_rx(ndev, &mgid, skb)) {
		sroce_stat_add(SROCE_STAT_RX_DROP_NO_QP, 1);
	}
}

/*
 * The longest transport headers any packet can have: the BTH and every
 * extension header. A received packet's first bytes up to that length are
 * made linear, which covers the headers of every opcode; its payload stays
 * where the NIC put it.
 */
#define SROCE_RX_LINEAR_HDRS \
	(SROCE_BTH_LEN + SROCE_DETH_LEN + SROCE_RETH_LEN + SROCE_ATMETH_LEN + \
	 SROCE_AETH_LEN + SROCE_ATMACK_LEN + SROCE_IMMDT_LEN + SROCE_IETH_LEN)

/*
 * The CRC-32 that the ICRC runs over payloads: lib/crc32 (crc32_le), or
 * the crypto API's "crc32" (on x86 the kernel's PCLMULQDQ code, which
 * rdma_rxe uses) when that was faster at module load. Which one wins
 * depends on the machine: on hardware the crypto driver is many times
 * faster; under an emulator that emulates PCLMULQDQ (QEMU TCG) it is about
 * half as fast. icrc_impl=lib or =crypto overrides the measurement.
 */
static char *icrc_impl = "auto";
module_param(icrc_impl, charp, 0444);
MODULE_PARM_DESC(icrc_impl, "CRC-32 of the ICRC: auto (measured), lib or crypto");

static DEFINE_STATIC_KEY_FALSE(sroce_icrc_crypto);
static struct crypto_shash *sroce_icrc_tfm;

/* The crypto "crc32" state is the running CRC (import/export of a u32). */
static bool sroce_icrc_crypto_update(u32 *crc, const void *p, size_t len)
{
	SHASH_DESC_ON_STACK(desc, sroce_icrc_tfm);

	desc->tfm = sroce_icrc_tfm;
	return !crypto_shash_import(desc, crc) &&
	       !crypto_shash_update(desc, p, len) &&
	       !crypto_shash_export(desc, crc);
}

static u32 sroce_net_crc(u32 crc, const void *p, size_t len)
{
	u32 state = crc;

	if (static_branch_unlikely(&sroce_icrc_crypto) &&
	    sroce_icrc_crypto_update(&state, p, len))
		return state;
	return sroce_icrc_add(crc, p, len);
}

#define SROCE_ICRC_PROBE_LEN 4096
#define SROCE_ICRC_PROBE_ROUNDS 16

/* Nanoseconds for SROCE_ICRC_PROBE_ROUNDS CRCs of buf, the best of three. */
static u64 sroce_icrc_time(bool crypto, const u8 *buf, u32 *crc)
{
	u64 best = U64_MAX, t;
	int pass, i;

	for (pass = 0; pass < 3; pass++) {
		*crc = ~0U;
		t = ktime_get_ns();
		for (i = 0; i < SROCE_ICRC_PROBE_ROUNDS; i++) {
			if (!crypto)
				*crc = sroce_icrc_add(*crc, buf,
						      SROCE_ICRC_PROBE_LEN);
			else if (!sroce_icrc_crypto_update(crc, buf,
							   SROCE_ICRC_PROBE_LEN))
				return U64_MAX;
		}
		best = min(best, ktime_get_ns() - t);
	}
	return best;
}

/*
 * Chooses the CRC-32 behind the ICRC, once, before any device exists.
 * The crypto driver is used only if it computes what crc32_le computes.
 */
void sroce_net_icrc_choose(void)
{
	bool want_crypto = !strcmp(icrc_impl, "crypto");
	u64 t_lib, t_crypto = U64_MAX;
	u32 crc_lib, crc_crypto;
	bool usable, use_crypto;
	u8 *buf;
	int i;

	if (!strcmp(icrc_impl, "lib"))
		return;
	if (!want_crypto && strcmp(icrc_impl, "auto")) {
		pr_warn("sroce: icrc_impl=%s is not auto, lib or crypto; using lib\n",
			icrc_impl);
		return;
	}
	buf = kmalloc(SROCE_ICRC_PROBE_LEN, GFP_KERNEL);
	if (!buf)
		return;
	for (i = 0; i < SROCE_ICRC_PROBE_LEN; i++)
		buf[i] = i * 131 + (i >> 8);
	sroce_icrc_tfm = crypto_alloc_shash("crc32", 0, 0);
	if (IS_ERR(sroce_icrc_tfm)) {
		sroce_icrc_tfm = NULL;
		goto out;
	}
	t_lib = sroce_icrc_time(false, buf, &crc_lib);
	if (crypto_shash_descsize(sroce_icrc_tfm) == sizeof(u32) &&
	    crypto_shash_statesize(sroce_icrc_tfm) == sizeof(u32))
		t_crypto = sroce_icrc_time(true, buf, &crc_crypto);
	usable = t_crypto != U64_MAX && crc_crypto == crc_lib;
	use_crypto = usable && (want_crypto || t_crypto < t_lib);
	if (!usable)
		pr_warn("sroce: crypto crc32 (%s) unusable for the ICRC; using lib\n",
			crypto_shash_driver_name(sroce_icrc_tfm));
	else if (use_crypto)
		pr_info("sroce: ICRC through %s (%llu ns per 4 KiB; lib/crc32 %llu)\n",
			crypto_shash_driver_name(sroce_icrc_tfm),
			t_crypto / SROCE_ICRC_PROBE_ROUNDS,
			t_lib / SROCE_ICRC_PROBE_ROUNDS);
	else
		pr_info("sroce: ICRC through lib/crc32 (%llu ns per 4 KiB; %s %llu)\n",
			t_lib / SROCE_ICRC_PROBE_ROUNDS,
			crypto_shash_driver_name(sroce_icrc_tfm),
			t_crypto / SROCE_ICRC_PROBE_ROUNDS);
	if (use_crypto) {
		static_branch_enable(&sroce_icrc_crypto);
	} else {
		crypto_free_shash(sroce_icrc_tfm);
		sroce_icrc_tfm = NULL;
	}
out:
	kfree(buf);
}

/* After every device is gone. */
void sroce_net_icrc_release(void)
{
	static_branch_disable(&sroce_icrc_crypto);
	if (sroce_icrc_tfm)
		crypto_free_shash(sroce_icrc_tfm);
	sroce_icrc_tfm = NULL;
}

/*
 * Whether the ICRC in the last bytes of skb (which starts at the BTH,
 * linear at least to the BTH's end, the IP header before it) is right.
 */
static bool sroce_net_rx_icrc_ok(struct sk_buff *skb)
{
	unsigned int body = skb->len - SROCE_ICRC_LEN, at, n;
	u8 *l3 = skb_network_header(skb);
	struct skb_seq_state seq;
	const u8 *p;
	__le32 wire;
	size_t done;
	u32 crc;

	if (!sroce_icrc_begin(l3, skb->data + SROCE_BTH_LEN - l3, &crc, &done))
		return false;
	/* skb_seq_read() hands out whole blocks, which may run past body. */
	skb_prepare_seq_read(skb, SROCE_BTH_LEN, body, &seq);
	for (at = 0; (n = skb_seq_read(at, &p, &seq)); at += n) {
		n = min(n, body - SROCE_BTH_LEN - at);
		crc = sroce_net_crc(crc, p, n);
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
	if (len < sizeof(struct udphdr) + SROCE_BTH_LEN + SROCE_ICRC_LEN ||
	    len > skb->len)
		goto malformed;
	skb_pull(skb, sizeof(struct udphdr));
	if (pskb_trim(skb, len - sizeof(struct udphdr)) ||
	    !pskb_may_pull(skb, min_t(unsigned int, skb->len,
				      SROCE_RX_LINEAR_HDRS)))
		goto malformed;

	if (!sroce_net_rx_icrc_ok(skb)) {
		sroce_stat_add(SROCE_STAT_RX_DROP_ICRC, 1);
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
		sroce_stat_add(SROCE_STAT_RX_DROP_NO_QP, 1);
		kfree_skb(skb);
		return 0;
	}
	sroce_rc_rx_enqueue(qp, skb);
	sroce_qp_put(qp);
	return 0;

malformed:
	sroce_stat_add(SROCE_STAT_RX_DROP_MALFORMED, 1);
	kfree_skb(skb);
	return 0;
}

static struct socket *sroce_udp_open(bool ipv6)
{
	struct udp_tunnel_sock_cfg tunnel = {
		.encap_type = 1,
		.encap_rcv = sroce_udp_encap_recv,
	};
	struct udp_port_cfg cfg = {
		.local_udp_port = htons(SROCE_ROCE_UDP_PORT),
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
		       SROCE_ROCE_UDP_PORT);
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
						      sroce_sock6->sk, &fl6,
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
	unsigned int size = head + roce_len + SROCE_ICRC_LEN +
			    ndev->needed_tailroom;
	struct sk_buff *skb;

	skb = sroce_net_pool_skb(qp->sdev, size);
	if (!skb)
		skb = alloc_skb(size, GFP_KERNEL);
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
	skb = alloc_skb(head + hdr_len, GFP_KERNEL);
	if (!skb)
		return NULL;
	trailer = netdev_alloc_frag(SROCE_PAD_MAX + SROCE_ICRC_LEN);
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
		skb_put(skb, SROCE_ICRC_LEN);
		return;
	}
	skb_frag_size_add(&shinfo->frags[shinfo->nr_frags - 1],
			  SROCE_ICRC_LEN);
	skb_len_add(skb, SROCE_ICRC_LEN);
}

/* Writes the ICRC of the packet whose IP header is at skb->data. */
static void sroce_net_put_icrc(struct sk_buff *skb)
{
	struct skb_shared_info *shinfo = skb_shinfo(skb);
	bool linear = !skb_is_nonlinear(skb);
	/* A linear packet ends with the ICRC; a paged one with its trailer. */
	size_t head = skb_headlen(skb) - (linear ? SROCE_ICRC_LEN : 0);
	skb_frag_t *frag;
	unsigned int i;
	size_t done;
	u8 *p, *at;
	u32 crc;

	if (!sroce_icrc_begin(skb->data, head, &crc, &done))
		return;
	crc = sroce_net_crc(crc, skb->data + done, head - done);
	if (linear) {
		put_unaligned_le32(sroce_icrc_end(crc), skb->data + head);
		return;
	}
	for (i = 0; i + 1 < shinfo->nr_frags; i++) {
		frag = &shinfo->frags[i];
		p = kmap_local_page(skb_frag_page(frag));
		crc = sroce_net_crc(crc, p + skb_frag_off(frag),
				    skb_frag_size(frag));
		kunmap_local(p);
	}
	/* The trailer: the pad, then the ICRC. */
	frag = &shinfo->frags[i];
	at = (u8 *)skb_frag_address(frag) + skb_frag_size(frag) -
	     SROCE_ICRC_LEN;
	crc = sroce_net_crc(crc, skb_frag_address(frag),
			    skb_frag_size(frag) - SROCE_ICRC_LEN);
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
	int err;

	dst = sroce_net_route(qp);
	if (IS_ERR(dst)) {
		sroce_stat_add(SROCE_STAT_TX_ERRORS, 1);
		kfree_skb(skb);
		return PTR_ERR(dst);
	}
	sroce_net_reserve_icrc(skb);
	skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	uh = udp_hdr(skb);
	uh->source = path->sport;
	uh->dest = htons(SROCE_ROCE_UDP_PORT);
	uh->len = htons(skb->len);
	uh->check = 0;

	sroce_net_push_ip(path, skb, dst);
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
		sroce_stat_add(SROCE_STAT_TX_ERRORS, 1);
		return -EIO;
	}
	sroce_stat_add(SROCE_STAT_TX_PKTS, 1);
	return 0;
}
