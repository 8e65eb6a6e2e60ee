// SPDX-License-Identifier: GPL-2.0
/*
 * Device and port attributes, user contexts.
 *
 * Attributes are honest: a capability is advertised only once the driver
 * implements it (Documentation/capabilities.rst lists what each raises).
 */
#include <linux/if_ether.h>
#include <net/addrconf.h>
#include <rdma/ib_mad.h>
#include <rdma/sroce-abi.h>
#include <sroce/mtu.h>
#include <sroce/uabi.h>
#include "sroce.h"
#include "sroce_verbs.h"

/*
 * ATOMIC_WRITE on user RC QPs: uverbs' IB_UVERBS_DEVICE_ATOMIC_WRITE, which
 * 6.2 and later name (an enum constant) and rdma-core reads from the flags.
 */
#define SROCE_DEVICE_ATOMIC_WRITE BIT_ULL(40)

int sroce_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		       struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibdev);
	int err;

	err = sroce_udata_expect_no_req(udata);
	if (err)
		return err;

	memset(attr, 0, sizeof(*attr));
	attr->sys_image_guid = ibdev->node_guid;
	/* No IEEE OUI of our own: the value software devices use. */
	attr->vendor_id = 0xffffff;
	attr->page_size_cap = PAGE_SIZE;
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
	attr->max_pd = sdev->lim.max_pd;
	attr->max_pkeys = SROCE_PKEY_TABLE_LEN;
	attr->max_mr_size = SROCE_MAX_MR_SIZE;
	attr->max_qp = sdev->lim.max_qp;
	attr->max_qp_wr = SROCE_MAX_QP_WR;
	attr->max_ah = sdev->lim.max_ah;
	attr->max_mcast_grp = SROCE_MAX_MCAST_GRP;
	attr->max_mcast_qp_attach = SROCE_MAX_MCAST_QP_ATTACH;
	attr->max_total_mcast_qp_attach = SROCE_MAX_MCAST_GRP *
					  SROCE_MAX_MCAST_QP_ATTACH;
	attr->max_send_sge = SROCE_MAX_SGE;
	attr->max_recv_sge = SROCE_MAX_SGE;
	attr->max_sge_rd = SROCE_MAX_SGE;
	attr->max_cq = sdev->lim.max_cq;
	attr->max_cqe = SROCE_MAX_CQE;
	attr->max_mr = sdev->lim.max_mr;
	attr->max_qp_rd_atom = SROCE_MAX_RD_ATOMIC;
	attr->max_qp_init_rd_atom = SROCE_MAX_RD_ATOMIC;
	attr->max_res_rd_atom = SROCE_MAX_RD_ATOMIC * sdev->lim.max_qp;
	/* Atomics are serialized device-wide, not with CPU accesses. */
	attr->atomic_cap = IB_ATOMIC_HCA;
	attr->masked_atomic_cap = IB_ATOMIC_NONE;
	attr->device_cap_flags = IB_DEVICE_RC_RNR_NAK_GEN |
				 IB_DEVICE_MEM_MGT_EXTENSIONS |
				 IB_DEVICE_MEM_WINDOW |
				 IB_DEVICE_MEM_WINDOW_TYPE_2B |
				 IB_DEVICE_SRQ_RESIZE;
	attr->device_cap_flags |= SROCE_DEVICE_ATOMIC_WRITE;
	/* Windows are entries of the key table, as MRs are. */
	attr->max_mw = sdev->lim.max_mr;
	attr->max_fast_reg_page_list_len = SROCE_MAX_FAST_REG_PAGES;
	attr->max_srq = sdev->lim.max_srq;
	attr->max_srq_wr = SROCE_MAX_QP_WR;
	attr->max_srq_sge = SROCE_MAX_SGE;
	/* Completion timestamps: nanoseconds of CLOCK_MONOTONIC_RAW. */
	attr->hca_core_clock = 1000000;	/* kHz */
	attr->timestamp_mask = U64_MAX;
	return 0;
}

/* The port can carry traffic: netdev up with carrier and a usable MTU. */
bool sroce_port_active(struct sroce_dev *sdev)
{
	struct net_device *ndev = sdev->ndev;

	return netif_running(ndev) && netif_carrier_ok(ndev) &&
	       READ_ONCE(ndev->mtu) >=
		       SROCE_MIN_PATH_MTU + SROCE_MAX_ROCE_OVERHEAD;
}

/* What the status page tells providers about the port. */
void sroce_status_update(struct sroce_dev *sdev)
{
	WRITE_ONCE(sdev->status->port_mtu, sroce_port_mtu(sdev));
}

int sroce_query_port(struct ib_device *ibdev, u32 port,
		     struct ib_port_attr *attr)
{
	struct sroce_dev *sdev = to_sdev(ibdev);
	unsigned int mtu;
	int err;

	mtu = sroce_path_mtu_for_netdev_mtu(READ_ONCE(sdev->ndev->mtu));

	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = ib_mtu_int_to_enum(mtu);
	attr->gid_tbl_len = SROCE_GID_TABLE_LEN;
	attr->pkey_tbl_len = SROCE_PKEY_TABLE_LEN;
	attr->max_vl_num = 1;
	attr->max_msg_sz = SROCE_MAX_MSG_SIZE;
	attr->ip_gids = true;
	attr->port_cap_flags = IB_PORT_CM_SUP;
	attr->qkey_viol_cntr = 0;
	if (sroce_port_active(sdev)) {
		attr->state = IB_PORT_ACTIVE;
		attr->phys_state = IB_PORT_PHYS_STATE_LINK_UP;
	} else {
		attr->state = IB_PORT_DOWN;
		attr->phys_state = IB_PORT_PHYS_STATE_DISABLED;
	}

	err = ib_get_eth_speed(ibdev, port, &attr->active_speed,
			       &attr->active_width);
	if (err) {
		attr->active_speed = IB_SPEED_SDR;
		attr->active_width = IB_WIDTH_1X;
	}
	return 0;
}

/*
 * RoCEv2 with the GSI QP: the core fills the GID table from the netdev's
 * addresses and runs MADs, the CM and AF_IB over QP1.
 */
int sroce_get_port_immutable(struct ib_device *ibdev, u32 port,
			     struct ib_port_immutable *immutable)
{
	struct ib_port_attr attr = {};
	int err;

	err = ib_query_port(ibdev, port, &attr);
	if (err)
		return err;

	immutable->pkey_tbl_len = attr.pkey_tbl_len;
	immutable->gid_tbl_len = attr.gid_tbl_len;
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

/* The port's hw counters: the device's event counts (sroce_stats.c). */
struct rdma_hw_stats *sroce_alloc_hw_port_stats(struct ib_device *ibdev,
						u32 port)
{
	/*
	 * Lifespan 0: netlink sums the CPUs' counts on every read; sysfs
	 * keeps a read's values for the rest of its jiffy.
	 */
	return rdma_alloc_hw_stats_struct(sroce_stat_descs, SROCE_STAT_COUNT, 0);
}

int sroce_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port, int index)
{
	sroce_stats_sum(to_sdev(ibdev)->stats, stats->value);
	return SROCE_STAT_COUNT;
}

enum rdma_link_layer sroce_get_link_layer(struct ib_device *ibdev, u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

int sroce_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey)
{
	if (index >= SROCE_PKEY_TABLE_LEN)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

void sroce_port_event(struct sroce_dev *sdev, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = &sdev->ibdev,
		.element.port_num = SROCE_PORT,
		.event = type,
	};

	ib_dispatch_event(&ev);
}

int sroce_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	struct sroce_ucontext *uctx =
		container_of(ibuc, struct sroce_ucontext, ibuc);
	struct sroce_dev *sdev = to_sdev(ibuc->device);
	struct sroce_alloc_ucontext_req req;
	struct sroce_alloc_ucontext_resp resp;
	int err;

	err = sroce_udata_copy_req(udata, &req, sizeof(req));
	if (err)
		return err;
	err = sroce_uabi_check_ucontext_req(&req,
					    SROCE_UCONTEXT_CAPS_REQUIRED);
	if (err)
		return err;
	uctx->provider_caps = req.provider_caps;

	sroce_uabi_fill_ucontext_resp(&resp);
	err = sroce_mmap_insert(ibuc, sdev->status, PAGE_SIZE, true,
				&uctx->status_mmap, &resp.status_mmap_offset);
	if (err)
		return err;
	resp.status_mmap_len = PAGE_SIZE;
	resp.max_inline_data = SROCE_MAX_INLINE;
	err = sroce_udata_copy_resp(udata, &resp, sizeof(resp));
	if (err) {
		sroce_mmap_remove(uctx->status_mmap);
		return err;
	}

	return 0;
}

void sroce_dealloc_ucontext(struct ib_ucontext *ibuc)
{
	struct sroce_ucontext *uctx =
		container_of(ibuc, struct sroce_ucontext, ibuc);

	sroce_mmap_remove(uctx->status_mmap);
}

/*
 * Having this op lets the core complete an unregistration while processes
 * still hold the device open. There is nothing to zap: sroce_mmap() maps
 * rings and the status page with remap_vmalloc_range(), not through
 * rdma_user_mmap_io(), so the core does not track those mappings and they
 * keep their pages, as the engine left them, until the process unmaps
 * them (each mapped page holds a reference of its own).
 */
void sroce_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

static ssize_t sroce_abi_version_show(struct device *device,
				      struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", SROCE_UVERBS_ABI_VERSION);
}
static DEVICE_ATTR_RO(sroce_abi_version);

static ssize_t parent_show(struct device *device,
			   struct device_attribute *attr, char *buf)
{
	struct sroce_dev *sdev =
		rdma_device_to_drv_device(device, struct sroce_dev, ibdev);

	return sysfs_emit(buf, "%s\n", netdev_name(sdev->ndev));
}
static DEVICE_ATTR_RO(parent);

static struct attribute *sroce_attributes[] = {
	&dev_attr_sroce_abi_version.attr,
	&dev_attr_parent.attr,
	NULL
};

const struct attribute_group sroce_attr_group = {
	.attrs = sroce_attributes,
};
