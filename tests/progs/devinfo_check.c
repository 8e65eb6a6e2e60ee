// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * devinfo_check DEV: reads device, port and GID attributes back through
 * the provider and prints them as "key value" lines for tests to compare
 * with what the netdev says.
 */
#include <arpa/inet.h>
#include "testlib.h"

static const char *gid_type_name(unsigned int type)
{
	switch (type) {
	case IBV_GID_TYPE_IB:
		return "ib";
	case IBV_GID_TYPE_ROCE_V1:
		return "roce_v1";
	case IBV_GID_TYPE_ROCE_V2:
		return "roce_v2";
	default:
		return "unknown";
	}
}

int main(int argc, char **argv)
{
	struct ibv_device_attr_ex dattr = {};
	struct ibv_port_attr pattr;
	struct ibv_gid_entry gid;
	struct ibv_context *ctx;
	char addr[INET6_ADDRSTRLEN];
	int i;

	if (argc != 2) {
		fprintf(stderr, "usage: devinfo_check DEV\n");
		return 2;
	}
	ctx = tl_open_device(argv[1]);
	if (ibv_query_device_ex(ctx, NULL, &dattr))
		tl_die("ibv_query_device_ex");
	if (ibv_query_port(ctx, 1, &pattr))
		tl_die("ibv_query_port");

	printf("node_guid %016llx\n",
	       (unsigned long long)be64toh(dattr.orig_attr.node_guid));
	printf("sys_image_guid %016llx\n",
	       (unsigned long long)be64toh(dattr.orig_attr.sys_image_guid));
	printf("phys_port_cnt %u\n", dattr.orig_attr.phys_port_cnt);
	printf("max_pd %d\n", dattr.orig_attr.max_pd);
	printf("max_qp %d\n", dattr.orig_attr.max_qp);
	printf("max_cq %d\n", dattr.orig_attr.max_cq);
	printf("max_mr %d\n", dattr.orig_attr.max_mr);
	printf("max_srq %d\n", dattr.orig_attr.max_srq);
	printf("atomic_cap %d\n", dattr.orig_attr.atomic_cap);
	printf("device_cap_flags 0x%x\n", dattr.orig_attr.device_cap_flags);
	printf("max_pkeys %u\n", dattr.orig_attr.max_pkeys);
	printf("fw_ver %s\n", dattr.orig_attr.fw_ver);
	printf("port_state %d\n", pattr.state);
	printf("phys_state %u\n", pattr.phys_state);
	printf("link_layer %s\n",
	       pattr.link_layer == IBV_LINK_LAYER_ETHERNET ? "ethernet" :
							       "other");
	printf("max_mtu %d\n", 128 << pattr.max_mtu);
	printf("active_mtu %d\n", 128 << pattr.active_mtu);
	printf("gid_tbl_len %d\n", pattr.gid_tbl_len);
	printf("pkey_tbl_len %u\n", pattr.pkey_tbl_len);

	for (i = 0; i < pattr.gid_tbl_len; i++) {
		if (ibv_query_gid_ex(ctx, 1, i, &gid, 0))
			continue;	/* empty entry */
		if (!inet_ntop(AF_INET6, gid.gid.raw, addr, sizeof(addr)))
			tl_die("inet_ntop");
		printf("gid %d %s %s\n", i, addr, gid_type_name(gid.gid_type));
	}
	ibv_close_device(ctx);
	return 0;
}
