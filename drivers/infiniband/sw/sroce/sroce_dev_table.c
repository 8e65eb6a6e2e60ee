// SPDX-License-Identifier: GPL-2.0
/*
 * The sroce devices of this host (sroce_devices, under sroce_devices_lock;
 * the lifetime rules are in sroce_main.c), which of them owns a GID, and
 * the objects they hold (debugfs sroce/objects).
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <rdma/ib_cache.h>
#include <rdma/restrack.h>
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

/*
 * debugfs sroce/objects, "NAME COUNT" lines for leak checks: the devices
 * on sroce_devices and what they hold. The core's resource tracking
 * (restrack) counts the types it has; AHs and keys (MRs of every kind,
 * the PDs' internal DMA MRs and windows included, which restrack leaves
 * out) come from the counters that enforce the device's limits. A
 * device's objects leave the view with the device: the core warns when
 * it releases a device whose restrack still holds any.
 */
static const struct {
	const char *name;
	enum rdma_restrack_type type;
} sroce_tracked_objects[] = {
	{ "ucontexts", RDMA_RESTRACK_CTX },
	{ "pds", RDMA_RESTRACK_PD },
	{ "cqs", RDMA_RESTRACK_CQ },
	{ "qps", RDMA_RESTRACK_QP },
	{ "mrs", RDMA_RESTRACK_MR },
	{ "srqs", RDMA_RESTRACK_SRQ },
};

static int sroce_objects_show(struct seq_file *s, void *unused)
{
	unsigned long tracked[ARRAY_SIZE(sroce_tracked_objects)] = {};
	unsigned long devices = 0, keys = 0, ahs = 0;
	struct sroce_dev *sdev;
	unsigned int i;

	mutex_lock(&sroce_devices_lock);
	list_for_each_entry(sdev, &sroce_devices, list) {
		devices++;
		for (i = 0; i < ARRAY_SIZE(tracked); i++)
			tracked[i] += rdma_restrack_count(&sdev->ibdev,
							  sroce_tracked_objects[i].type,
							  true);
		keys += atomic_read(&sdev->num_mr);
		ahs += atomic_read(&sdev->num_ah);
	}
	mutex_unlock(&sroce_devices_lock);

	seq_printf(s, "devices %lu\n", devices);
	for (i = 0; i < ARRAY_SIZE(tracked); i++)
		seq_printf(s, "%s %lu\n", sroce_tracked_objects[i].name,
			   tracked[i]);
	seq_printf(s, "keys %lu\nahs %lu\n", keys, ahs);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sroce_objects);

void sroce_dev_table_debugfs(struct dentry *dir)
{
	debugfs_create_file("objects", 0400, dir, NULL, &sroce_objects_fops);
}
