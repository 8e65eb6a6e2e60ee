/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Connection steps shared by the test modules: a kernel RC QP from RESET
 * to RTR, aimed at dest_qpn at the GID dgid over the GID gid_index of
 * port 1 (path MTU 1024, 16 incoming READs/atomics, rq_psn psn).
 */
#ifndef SROCE_TEST_KQP_H
#define SROCE_TEST_KQP_H

#include <rdma/ib_verbs.h>

static inline int kqp_modify(struct ib_qp *qp, struct ib_qp_attr *attr,
			     int mask)
{
	int err = ib_modify_qp(qp, attr, mask);

	if (err)
		pr_err("%s: modify_qp to %d: %d\n", KBUILD_MODNAME,
		       attr->qp_state, err);
	return err;
}

static inline int kqp_to_rtr(struct ib_qp *qp, u32 dest_qpn,
			     union ib_gid *dgid, int gid_index, u32 psn)
{
	struct ib_qp_attr attr = {};
	int err;

	attr.qp_state = IB_QPS_INIT;
	attr.port_num = 1;
	attr.qp_access_flags = IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE;
	err = kqp_modify(qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			 IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (err)
		return err;
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTR;
	attr.path_mtu = IB_MTU_1024;
	attr.dest_qp_num = dest_qpn;
	attr.rq_psn = psn;
	attr.max_dest_rd_atomic = 16;
	attr.min_rnr_timer = 1;
	attr.ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&attr.ah_attr, 1);
	rdma_ah_set_grh(&attr.ah_attr, dgid, 0, gid_index, 64, 0);
	return kqp_modify(qp, &attr, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			  IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			  IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
}

#endif
