// SPDX-License-Identifier: GPL-2.0
/*
 * Holds kernel RC QPs of a sroce device until it is unloaded, so that
 * tests/vm can look at the engine worker serving them (worker_bind).
 *
 * Parameters: dev (the device, default sroce0), gid_index (a GID of it),
 * vector (the completion vector of the QPs' CQ, default 1) and wire.
 * With wire=1 one QP is aimed at a GID that no device of this host has
 * (the local GID with its last byte changed): it sends on the wire. With
 * wire=0 two QPs are connected to each other: the shortcut. Nothing is
 * sent. Once the QPs are in RTR it logs "sroce_bind_test: qpn N" (the
 * first QP); on failure, "sroce_bind_test: setup failed: ERR", and the
 * load fails.
 */
#include <linux/module.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>
#include "kqp.h"

static char *dev_name_param = "sroce0";
module_param_named(dev, dev_name_param, charp, 0444);
static int gid_index;
module_param(gid_index, int, 0444);
static int vector = 1;
module_param(vector, int, 0444);
static bool wire;
module_param(wire, bool, 0444);

static struct ib_device *bt_dev;
static struct ib_pd *bt_pd;
static struct ib_cq *bt_cq;
static struct ib_qp *bt_qp[2];

static int bt_setup(void)
{
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	union ib_gid gid, remote;
	int i, err;

	err = rdma_query_gid(bt_dev, 1, gid_index, &gid);
	if (err)
		return err;
	bt_pd = ib_alloc_pd(bt_dev, 0);
	if (IS_ERR(bt_pd))
		return PTR_ERR(bt_pd);
	bt_cq = ib_alloc_cq(bt_dev, NULL, 16, vector, IB_POLL_DIRECT);
	if (IS_ERR(bt_cq))
		return PTR_ERR(bt_cq);
	init.send_cq = bt_cq;
	init.recv_cq = bt_cq;
	for (i = 0; i < (wire ? 1 : 2); i++) {
		bt_qp[i] = ib_create_qp(bt_pd, &init);
		if (IS_ERR(bt_qp[i]))
			return PTR_ERR(bt_qp[i]);
	}
	if (wire) {
		remote = gid;
		remote.raw[15] ^= 0x80;
		return kqp_to_rtr(bt_qp[0], 2, &remote, gid_index, 0);
	}
	return kqp_to_rtr(bt_qp[0], bt_qp[1]->qp_num, &gid, gid_index, 0) ?:
	       kqp_to_rtr(bt_qp[1], bt_qp[0]->qp_num, &gid, gid_index, 0);
}

static void bt_release(void)
{
	int i;

	for (i = 0; i < 2; i++)
		if (!IS_ERR_OR_NULL(bt_qp[i]))
			ib_destroy_qp(bt_qp[i]);
	if (!IS_ERR_OR_NULL(bt_cq))
		ib_free_cq(bt_cq);
	if (!IS_ERR_OR_NULL(bt_pd))
		ib_dealloc_pd(bt_pd);
	ib_device_put(bt_dev);
}

static int __init bt_init(void)
{
	int err;

	bt_dev = ib_device_get_by_name(dev_name_param, RDMA_DRIVER_UNKNOWN);
	if (!bt_dev)
		return -ENODEV;
	err = bt_setup();
	if (err) {
		pr_err("sroce_bind_test: setup failed: %d\n", err);
		bt_release();
		return err;
	}
	pr_info("sroce_bind_test: qpn %u\n", bt_qp[0]->qp_num);
	return 0;
}

static void __exit bt_exit(void)
{
	bt_release();
}

module_init(bt_init);
module_exit(bt_exit);
MODULE_DESCRIPTION("sroce: kernel RC QPs held for the engine's worker placement checks");
MODULE_LICENSE("GPL");
