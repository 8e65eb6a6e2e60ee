// SPDX-License-Identifier: GPL-2.0
/*
 * The multicast groups: (netdev, multicast GID) and their member QPs,
 * changed by attach and detach (sroce_mcast.c) under sroce_mcast_lock and
 * read by the wire for each packet to a group.
 */
#include <net/ipv6.h>
#include "sroce.h"

DEFINE_SPINLOCK(sroce_mcast_lock);
LIST_HEAD(sroce_mcgs);

bool sroce_gid_is_v4(const union ib_gid *gid)
{
	return ipv6_addr_v4mapped((const struct in6_addr *)gid->raw);
}

bool sroce_mcast_gid_ok(const union ib_gid *gid)
{
	if (sroce_gid_is_v4(gid))
		return ipv4_is_multicast(*(__be32 *)(gid->raw + 12));
	return ipv6_addr_is_multicast((const struct in6_addr *)gid->raw);
}

struct sroce_mcg *sroce_mcg_find(int ifindex, const union ib_gid *mgid)
{
	struct sroce_mcg *g;

	list_for_each_entry(g, &sroce_mcgs, node)
		if (g->ifindex == ifindex && !memcmp(&g->mgid, mgid, sizeof(*mgid)))
			return g;
	return NULL;
}

int sroce_mcg_count(int ifindex)
{
	struct sroce_mcg *g;
	int n = 0;

	list_for_each_entry(g, &sroce_mcgs, node)
		n += g->ifindex == ifindex;
	return n;
}

/*
 * The members of the group (ndev's ifindex, mgid), each with a reference:
 * how many of members[SROCE_MCAST_MAX_ATTACH] it filled. Any context.
 */
unsigned int sroce_mcast_members(int ifindex, const union ib_gid *mgid,
				 struct sroce_qp **members)
{
	unsigned int i, n = 0;
	struct sroce_mcg *g;

	spin_lock_bh(&sroce_mcast_lock);
	g = sroce_mcg_find(ifindex, mgid);
	for (i = 0; g && i < g->num_qps; i++)
		if (refcount_inc_not_zero(&g->qps[i]->refs))
			members[n++] = g->qps[i];
	spin_unlock_bh(&sroce_mcast_lock);
	return n;
}
