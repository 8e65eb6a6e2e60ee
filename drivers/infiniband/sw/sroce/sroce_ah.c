// SPDX-License-Identifier: GPL-2.0
/*
 * Address handles of kernel consumers (the MAD layer, ULPs). A user AH
 * never reaches the kernel: the provider builds it without a system call
 * and copies its address vector into each UD WQE, which the engine checks.
 */
#include <rdma/ib_cache.h>
#include "sroce.h"
#include "sroce_verbs.h"

int sroce_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		    struct ib_udata *udata)
{
	struct rdma_ah_attr *attr = init->ah_attr;
	struct sroce_ah *ah = to_sah(ibah);
	const struct ib_global_route *grh;

	if (udata)
		return -EOPNOTSUPP;
	if (rdma_ah_get_port_num(attr) != SROCE_PORT ||
	    !(rdma_ah_get_ah_flags(attr) & IB_AH_GRH))
		return -EINVAL;
	grh = rdma_ah_read_grh(attr);
	if (!grh->sgid_attr ||
	    grh->sgid_attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP ||
	    grh->sgid_attr->index >= SROCE_GID_TABLE_LEN)
		return -EINVAL;

	if (!sroce_obj_take(&to_sdev(ibah->device)->num_ah,
			    to_sdev(ibah->device)->lim.max_ah))
		return -ENOMEM;

	memset(&ah->av, 0, sizeof(ah->av));
	memcpy(ah->av.dgid, grh->dgid.raw, sizeof(ah->av.dgid));
	ah->av.sgid_index = grh->sgid_attr->index;
	ah->av.traffic_class = grh->traffic_class;
	ah->av.hop_limit = grh->hop_limit;
	ah->av.flow_label = grh->flow_label & SROCE_WQE_FLOW_LABEL_MASK;
	return 0;
}

int sroce_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	atomic_dec(&to_sdev(ibah->device)->num_ah);
	return 0;
}

int sroce_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	struct sroce_ah *ah = to_sah(ibah);
	union ib_gid dgid;

	memset(attr, 0, sizeof(*attr));
	attr->type = ibah->type;
	rdma_ah_set_port_num(attr, SROCE_PORT);
	memcpy(dgid.raw, ah->av.dgid, sizeof(dgid.raw));
	rdma_ah_set_grh(attr, &dgid, ah->av.flow_label, ah->av.sgid_index,
			ah->av.hop_limit, ah->av.traffic_class);
	return 0;
}
