// SPDX-License-Identifier: GPL-2.0
/*
 * UD multicast: QPs attached to a multicast GID of a device.
 *
 * Rules:
 * - a group is (netdev, multicast GID); the first attach on a device
 *   joins the IP group on its netdev (IGMP/MLD), so the IP stack accepts
 *   the group's packets, and the last detach leaves it;
 * - datagrams to a group go out as packets to the group's IP address with
 *   destination QPN 0xffffff; the IP stack loops a copy back to this host,
 *   so local members receive them as remote ones do;
 * - a packet for a group goes, as a clone, to every member QP's queue;
 *   members are found under sroce_mcast_lock and a QP leaves its groups
 *   before its destruction waits for its references.
 */
#include <linux/igmp.h>
#include <linux/inetdevice.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <net/addrconf.h>
#include <net/ipv6.h>
#include "sroce.h"
#include "sroce_verbs.h"

/* Serializes attach and detach, which may sleep (IP group membership). */
static DEFINE_MUTEX(sroce_mcast_mutex);

/*
 * IP group membership of the netdev, under RTNL as IPv4 and IPv6 want it;
 * called under sroce_mcast_mutex (the lock order is that mutex, then RTNL).
 */
static int sroce_mcast_ip(struct net_device *ndev, const union ib_gid *mgid,
			  bool join)
{
	const struct in6_addr *addr6 = (const struct in6_addr *)mgid->raw;
	struct in_device *in_dev;
	int err = 0;

	rtnl_lock();
	if (sroce_gid_is_v4(mgid)) {
		in_dev = __in_dev_get_rtnl(ndev);
		if (!in_dev)
			err = -ENODEV;
		else if (join)
			ip_mc_inc_group(in_dev, *(__be32 *)(mgid->raw + 12));
		else
			ip_mc_dec_group(in_dev, *(__be32 *)(mgid->raw + 12));
	} else {
		err = join ? ipv6_dev_mc_inc(ndev, addr6) :
			     ipv6_dev_mc_dec(ndev, addr6);
	}
	rtnl_unlock();
	return err;
}

int sroce_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct net_device *ndev = qp->sdev->ndev;
	struct sroce_mcg *g, *fresh = NULL;
	unsigned int i;
	int err = 0;

	if (!sroce_qp_is_ud(qp) || !sroce_mcast_gid_ok(gid))
		return -EINVAL;

	mutex_lock(&sroce_mcast_mutex);
	spin_lock_bh(&sroce_mcast_lock);
	g = sroce_mcg_find(ndev->ifindex, gid);
	if (!g && sroce_mcg_count(ndev->ifindex) >= SROCE_MAX_MCAST_GRP)
		err = -ENOMEM;
	spin_unlock_bh(&sroce_mcast_lock);
	if (err)
		goto out;

	if (!g) {
		fresh = kzalloc(sizeof(*fresh), GFP_KERNEL);
		if (!fresh) {
			err = -ENOMEM;
			goto out;
		}
		fresh->ifindex = ndev->ifindex;
		fresh->mgid = *gid;
		err = sroce_mcast_ip(ndev, gid, true);
		if (err) {
			kfree(fresh);
			goto out;
		}
	}

	spin_lock_bh(&sroce_mcast_lock);
	if (fresh) {
		list_add_tail(&fresh->node, &sroce_mcgs);
		g = fresh;
	}
	for (i = 0; i < g->num_qps; i++)
		if (g->qps[i] == qp)
			break;
	if (i == g->num_qps) {
		if (g->num_qps == SROCE_MCAST_MAX_ATTACH)
			err = -ENOMEM;
		else
			g->qps[g->num_qps++] = qp;
	}
	spin_unlock_bh(&sroce_mcast_lock);
	if (err && fresh) {
		spin_lock_bh(&sroce_mcast_lock);
		list_del(&fresh->node);
		spin_unlock_bh(&sroce_mcast_lock);
		sroce_mcast_ip(ndev, gid, false);
		kfree(fresh);
	}
out:
	mutex_unlock(&sroce_mcast_mutex);
	return err;
}

/* Removes qp from group g; frees g (and leaves the IP group) if empty. */
static void sroce_mcg_remove(struct sroce_mcg *g, unsigned int i,
			     struct net_device *ndev)
{
	bool empty;

	spin_lock_bh(&sroce_mcast_lock);
	g->qps[i] = g->qps[--g->num_qps];
	empty = !g->num_qps;
	if (empty)
		list_del(&g->node);
	spin_unlock_bh(&sroce_mcast_lock);
	if (empty) {
		sroce_mcast_ip(ndev, &g->mgid, false);
		kfree(g);
	}
}

int sroce_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct net_device *ndev = qp->sdev->ndev;
	struct sroce_mcg *g;
	unsigned int i;
	int err = -EINVAL;

	mutex_lock(&sroce_mcast_mutex);
	g = sroce_mcg_find(ndev->ifindex, gid);
	for (i = 0; g && i < g->num_qps; i++) {
		if (g->qps[i] == qp) {
			sroce_mcg_remove(g, i, ndev);
			err = 0;
			break;
		}
	}
	mutex_unlock(&sroce_mcast_mutex);
	return err;
}

/* At QP destruction: leaves every group it is still attached to. */
void sroce_mcast_detach_all(struct sroce_qp *qp)
{
	struct net_device *ndev = qp->sdev->ndev;
	struct sroce_mcg *g, *next;
	unsigned int i;

	if (!sroce_qp_is_ud(qp))
		return;
	mutex_lock(&sroce_mcast_mutex);
	list_for_each_entry_safe(g, next, &sroce_mcgs, node) {
		for (i = 0; i < g->num_qps; i++) {
			if (g->qps[i] == qp) {
				sroce_mcg_remove(g, i, ndev);
				break;
			}
		}
	}
	mutex_unlock(&sroce_mcast_mutex);
}
