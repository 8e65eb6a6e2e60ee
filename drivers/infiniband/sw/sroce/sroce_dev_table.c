// SPDX-License-Identifier: GPL-2.0
/*
 * The sroce devices of this host (sroce_devices, under sroce_devices_lock;
 * the lifetime rules are in sroce_main.c), and which of them owns a GID.
 */
#include <rdma/ib_cache.h>
#include "sroce.h"

LIST_HEAD(sroce_devices);
/* sroce_devices, and each device's ndev_gone and port_was_active. */
DEFINE_MUTEX(sroce_devices_lock);

/* The ifindex of the sroce device that owns gid, or 0. */
int sroce_ifindex_by_gid(const union ib_gid *gid)
{
	const struct ib_gid_attr *attr;
	struct sroce_dev *sdev;
	int ifindex = 0;

	mutex_lock(&sroce_devices_lock);
	list_for_each_entry(sdev, &sroce_devices, list) {
		attr = rdma_find_gid(&sdev->ibdev, gid,
				     IB_GID_TYPE_ROCE_UDP_ENCAP, NULL);
		if (!IS_ERR(attr)) {
			rdma_put_gid_attr(attr);
			ifindex = sdev->ndev->ifindex;
			break;
		}
	}
	mutex_unlock(&sroce_devices_lock);
	return ifindex;
}
