// SPDX-License-Identifier: GPL-2.0
/*
 * sroce module: rdma link type "sroce", the device registry and netdev
 * events.
 *
 * Device lifetime rules:
 * - a sroce_dev is on sroce_devices from newlink until its dealloc_driver,
 *   which the core runs once, at the end of the unregistration;
 * - sroce_devices_lock is never held across ib_register_device() or any
 *   unregistration (both take RTNL and core locks);
 * - whoever unregisters holds either an ib_device_try_get() reference
 *   (ib_unregister_device_and_put) or a kref on ibdev.dev
 *   (ib_unregister_device), so the memory outlives the call;
 * - a netdev going away sets ndev_gone under sroce_devices_lock, so a device
 *   still being registered sees it when its registration ends.
 */
#include <linux/debugfs.h>
#include <linux/if_arp.h>
#include <linux/module.h>
#include <net/addrconf.h>
#include <rdma/ib_cache.h>
#include <rdma/rdma_netlink.h>
#include <rdma/sroce-abi.h>
#include <sroce/icrc.h>
#include "sroce.h"
#include "sroce_defer.h"
#include "sroce_verbs.h"
#include "sroce_transport.h"
#include "sroce_link.h"

MODULE_AUTHOR("sroce developers");
MODULE_DESCRIPTION("sroce: software RoCEv2 HCA");
MODULE_LICENSE("GPL");
MODULE_ALIAS_RDMA_LINK("sroce");

/* Object limits of devices added from now on (struct sroce_limits). */
static unsigned int max_qp = SROCE_MAX_QP;
module_param(max_qp, uint, 0644);
MODULE_PARM_DESC(max_qp, "QPs a device holds at once, QP1 included");
static unsigned int max_cq = SROCE_MAX_CQ;
module_param(max_cq, uint, 0644);
MODULE_PARM_DESC(max_cq, "CQs a device holds at once");
static unsigned int max_mr = SROCE_MAX_MR;
module_param(max_mr, uint, 0644);
MODULE_PARM_DESC(max_mr, "MRs a device holds at once");
static unsigned int max_pd = SROCE_MAX_PD;
module_param(max_pd, uint, 0644);
MODULE_PARM_DESC(max_pd, "PDs a device holds at once");
static unsigned int max_ah = SROCE_MAX_AH;
module_param(max_ah, uint, 0644);
MODULE_PARM_DESC(max_ah, "Kernel address handles a device holds at once");
static unsigned int max_srq = SROCE_MAX_SRQ;
module_param(max_srq, uint, 0644);
MODULE_PARM_DESC(max_srq, "SRQs a device holds at once");

/* The parameters as they are now, within what the driver can hold. */
static void sroce_limits_init(struct sroce_limits *lim)
{
	lim->max_qp = clamp_t(u32, READ_ONCE(max_qp), 1, SROCE_MAX_QP);
	lim->max_cq = clamp_t(u32, READ_ONCE(max_cq), 1, SROCE_MAX_CQ);
	lim->max_mr = clamp_t(u32, READ_ONCE(max_mr), 1, SROCE_MAX_MR);
	lim->max_pd = clamp_t(u32, READ_ONCE(max_pd), 1, SROCE_MAX_PD);
	lim->max_ah = clamp_t(u32, READ_ONCE(max_ah), 1, SROCE_MAX_AH);
	lim->max_srq = clamp_t(u32, READ_ONCE(max_srq), 1, SROCE_MAX_SRQ);
}

static struct dentry *sroce_debugfs;

static void sroce_dealloc_driver(struct ib_device *ibdev)
{
	struct sroce_dev *sdev = to_sdev(ibdev);

	mutex_lock(&sroce_devices_lock);
	list_del(&sdev->list);
	mutex_unlock(&sroce_devices_lock);

	sroce_net_close(sdev);
	sroce_engine_stop(sdev);
	netdev_put(sdev->ndev, &sdev->ndev_tracker);
	ida_destroy(&sdev->pdn_ida);
	xa_destroy(&sdev->mr_xa);
	sroce_stats_free(sdev->stats);
}

static const struct ib_device_ops sroce_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = SROCE_UVERBS_ABI_VERSION,

	.alloc_pd = sroce_alloc_pd,
	.attach_mcast = sroce_attach_mcast,
	.create_ah = sroce_create_ah,
	.alloc_ucontext = sroce_alloc_ucontext,
	.create_cq = sroce_create_cq,
	.create_qp = sroce_create_qp,
	.create_srq = sroce_create_srq,
	.dealloc_driver = sroce_dealloc_driver,
	.dealloc_mw = sroce_dealloc_mw,
	.dealloc_pd = sroce_dealloc_pd,
	.dealloc_ucontext = sroce_dealloc_ucontext,
	.alloc_hw_port_stats = sroce_alloc_hw_port_stats,
	.alloc_mr = sroce_alloc_mr,
	.alloc_mw = sroce_alloc_mw,
	.dereg_mr = sroce_dereg_mr,
	.destroy_ah = sroce_destroy_ah,
	.detach_mcast = sroce_detach_mcast,
	.destroy_cq = sroce_destroy_cq,
	.destroy_qp = sroce_destroy_qp,
	.destroy_srq = sroce_destroy_srq,
	.device_group = &sroce_attr_group,
	.disassociate_ucontext = sroce_disassociate_ucontext,
	.get_dma_mr = sroce_get_dma_mr,
	.get_hw_stats = sroce_get_hw_stats,
	.get_link_layer = sroce_get_link_layer,
	.fill_res_qp_entry = sroce_fill_res_qp_entry,
	.get_port_immutable = sroce_get_port_immutable,
	.map_mr_sg = sroce_map_mr_sg,
	.mmap = sroce_mmap,
	.mmap_free = sroce_mmap_free,
	.modify_qp = sroce_modify_qp,
	.modify_srq = sroce_modify_srq,
	.poll_cq = sroce_poll_cq,
	.post_recv = sroce_post_recv,
	.post_send = sroce_post_send,
	.post_srq_recv = sroce_post_srq_recv,
	.query_device = sroce_query_device,
	.query_ah = sroce_query_ah,
	.query_pkey = sroce_query_pkey,
	.query_port = sroce_query_port,
	.query_qp = sroce_query_qp,
	.query_srq = sroce_query_srq,
	.reg_user_mr = sroce_reg_user_mr,
	.rereg_user_mr = sroce_rereg_user_mr,
	.req_notify_cq = sroce_req_notify_cq,
	.resize_cq = sroce_resize_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, sroce_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, sroce_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, sroce_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, sroce_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, sroce_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, sroce_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, sroce_ucontext, ibuc),
};

static void sroce_unregister_work(struct work_struct *work)
{
	struct sroce_dev *sdev =
		container_of(work, struct sroce_dev, unregister_work);

	ib_unregister_device_and_put(&sdev->ibdev);
}

static struct sroce_dev *sroce_find_locked(struct net_device *ndev)
{
	struct sroce_dev *sdev;

	lockdep_assert_held(&sroce_devices_lock);
	list_for_each_entry(sdev, &sroce_devices, list)
		if (sdev->ndev == ndev)
			return sdev;
	return NULL;
}

/*
 * The netdev of the sroce device here that owns gid, or 0: a GID the
 * same-host shortcut reaches.
 */
static bool sroce_netdev_supported(struct net_device *ndev)
{
	return ndev->type == ARPHRD_ETHER || ndev->type == ARPHRD_LOOPBACK;
}

static int sroce_register(struct sroce_dev *sdev, const char *ibdev_name)
{
	struct ib_device *ibdev = &sdev->ibdev;
	int err;

	strscpy(ibdev->node_desc, SROCE_NODE_DESC, sizeof(ibdev->node_desc));
	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	/*
	 * Completion vectors name no interrupt here (the engine's workers
	 * deliver every completion); ULPs size their queue count by them,
	 * as nvme-rdma does, so there is one per CPU.
	 */
	ibdev->num_comp_vectors = num_possible_cpus();
	/* A user QP's POST_SEND with no work requests is the engine kick. */
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND);
	addrconf_addr_eui48((u8 *)&ibdev->node_guid, sdev->ndev->dev_addr);
	/*
	 * As siw does: the netdev's parent device becomes ours, so
	 * /sys/class/infiniband/<dev>/device/net/<netdev> leads to the
	 * interface (librdmacm and pyverbs look for it there).
	 */
	ibdev->dev.parent = sdev->ndev->dev.parent;
	ib_set_device_ops(ibdev, &sroce_dev_ops);

	err = ib_device_set_netdev(ibdev, sdev->ndev, SROCE_PORT);
	if (err)
		return err;
	return ib_register_device(ibdev, ibdev_name, NULL);
}

static int sroce_newlink(const char *ibdev_name, struct net_device *ndev)
{
	struct sroce_dev *sdev;
	bool ndev_gone;
	int err;

	if (!sroce_netdev_supported(ndev))
		return -EOPNOTSUPP;

	sdev = ib_alloc_device(sroce_dev, ibdev);
	if (!sdev)
		return -ENOMEM;
	sdev->ndev = ndev;
	sroce_limits_init(&sdev->lim);
	INIT_WORK(&sdev->unregister_work, sroce_unregister_work);
	ida_init(&sdev->pdn_ida);
	xa_init_flags(&sdev->mr_xa, XA_FLAGS_ALLOC);
	sdev->mr_next = 1;
	sdev->port_was_active = sroce_port_active(sdev);
	sdev->stats = sroce_stats_alloc();
	if (!sdev->stats) {
		err = -ENOMEM;
		goto err_dealloc;
	}
	err = sroce_engine_start(sdev);
	if (!err)
		sroce_status_update(sdev);
	if (err)
		goto err_stats;
	err = sroce_net_open(sdev);
	if (err) {
		sroce_engine_stop(sdev);
		goto err_stats;
	}

	mutex_lock(&sroce_devices_lock);
	if (sroce_find_locked(ndev)) {
		err = -EEXIST;
		goto err_unlock;
	}
	if (READ_ONCE(ndev->reg_state) != NETREG_REGISTERED) {
		err = -ENODEV;
		goto err_unlock;
	}
	netdev_hold(ndev, &sdev->ndev_tracker, GFP_KERNEL);
	list_add_tail(&sdev->list, &sroce_devices);
	mutex_unlock(&sroce_devices_lock);

	/* Keeps sdev's memory across a concurrent unregistration. */
	get_device(&sdev->ibdev.dev);
	err = sroce_register(sdev, ibdev_name);
	if (err) {
		/* Calls sroce_dealloc_driver() once the ops are set. */
		ib_dealloc_device(&sdev->ibdev);
		goto out_put;
	}

	mutex_lock(&sroce_devices_lock);
	ndev_gone = sdev->ndev_gone;
	mutex_unlock(&sroce_devices_lock);
	if (ndev_gone)
		ib_unregister_device(&sdev->ibdev);
out_put:
	put_device(&sdev->ibdev.dev);
	return err;

err_unlock:
	mutex_unlock(&sroce_devices_lock);
	sroce_net_close(sdev);
	sroce_engine_stop(sdev);
err_stats:
	sroce_stats_free(sdev->stats);
err_dealloc:
	ida_destroy(&sdev->pdn_ida);
	ib_dealloc_device(&sdev->ibdev);
	return err;
}

static struct rdma_link_ops sroce_link_ops = {
	.type = "sroce",
	.newlink = sroce_newlink,
};

/*
 * Runs under RTNL: unregistration is deferred (sroce_defer_work). The
 * netdev sends NETDEV_UNREGISTER again every second while references to
 * it are held (ours until the unregistration ends): only the first one
 * queues the work. A work item queued again while it runs would hold a
 * device reference that the running unregistration waits for.
 */
static void sroce_netdev_gone(struct net_device *ndev)
{
	struct sroce_dev *sdev;

	mutex_lock(&sroce_devices_lock);
	sdev = sroce_find_locked(ndev);
	if (sdev && !sdev->ndev_gone) {
		sdev->ndev_gone = true;
		if (ib_device_try_get(&sdev->ibdev) &&
		    !sroce_defer_work(&sdev->unregister_work))
			ib_device_put(&sdev->ibdev);
	}
	mutex_unlock(&sroce_devices_lock);
}

static void sroce_netdev_state_changed(struct net_device *ndev)
{
	struct sroce_dev *sdev;
	bool active;

	mutex_lock(&sroce_devices_lock);
	sdev = sroce_find_locked(ndev);
	if (sdev && ib_device_try_get(&sdev->ibdev)) {
		sroce_status_update(sdev);
		active = sroce_port_active(sdev);
		if (active != sdev->port_was_active) {
			sdev->port_was_active = active;
			sroce_port_event(sdev, active ? IB_EVENT_PORT_ACTIVE :
							IB_EVENT_PORT_ERR);
		}
		ib_device_put(&sdev->ibdev);
	}
	mutex_unlock(&sroce_devices_lock);
}

static int sroce_netdev_event(struct notifier_block *nb, unsigned long event,
			      void *arg)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(arg);

	switch (event) {
	case NETDEV_UNREGISTER:
		sroce_netdev_gone(ndev);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
	case NETDEV_CHANGEMTU:
		sroce_netdev_state_changed(ndev);
		break;
	default:
		break;
	}
	return NOTIFY_DONE;
}

static struct notifier_block sroce_netdev_notifier = {
	.notifier_call = sroce_netdev_event,
};

/*
 * Unregisters every device, waiting for unregistrations other threads
 * started. Called after rdma_link_unregister(), so no newlink is running.
 */
static void sroce_unregister_all(void)
{
	struct sroce_dev *sdev;

	for (;;) {
		mutex_lock(&sroce_devices_lock);
		sdev = list_first_entry_or_null(&sroce_devices,
						struct sroce_dev, list);
		if (sdev)
			get_device(&sdev->ibdev.dev);
		mutex_unlock(&sroce_devices_lock);
		if (!sdev)
			break;
		ib_unregister_device(&sdev->ibdev);
		put_device(&sdev->ibdev.dev);
	}
}

static int __init sroce_init(void)
{
	const char *icrc;
	unsigned int mb;
	int err;

	err = sroce_defer_init();
	if (err)
		return err;
	icrc = sroce_icrc_choose(&mb);
	pr_info("sroce: ICRC by %s (%u MB/s)\n", icrc, mb);
	sroce_engine_register(IB_QPT_RC, &sroce_rc_transport);
	sroce_engine_register(IB_QPT_UC, &sroce_rc_transport);
	sroce_engine_register(IB_QPT_UD, &sroce_ud_transport);
	sroce_engine_register(IB_QPT_GSI, &sroce_ud_transport);

	err = register_netdevice_notifier(&sroce_netdev_notifier);
	if (err)
		goto err_wq;

	sroce_debugfs = debugfs_create_dir("sroce", NULL);
	sroce_dev_table_debugfs(sroce_debugfs);
	sroce_engine_switches(sroce_debugfs);
	sroce_cq_switches(sroce_debugfs);
	sroce_shortcut_switches(sroce_debugfs);

	rdma_link_register(&sroce_link_ops);
	return 0;

err_wq:
	sroce_icrc_release();
	sroce_defer_exit();
	return err;
}

static void __exit sroce_exit(void)
{
	rdma_link_unregister(&sroce_link_ops);
	sroce_unregister_all();
	unregister_netdevice_notifier(&sroce_netdev_notifier);
	/* Queued unregistrations hold a device reference: all ran above. */
	sroce_defer_exit();
	debugfs_remove_recursive(sroce_debugfs);
	sroce_icrc_release();	/* no device, no packet left */
	/*
	 * A kick's task_work (sroce_kick.c) may still be returning from its
	 * last QP put; every task has left it once it passed through a
	 * voluntary switch or user mode, which is what this waits for.
	 */
	synchronize_rcu_tasks();
}

module_init(sroce_init);
module_exit(sroce_exit);
