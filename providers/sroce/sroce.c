// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libsroce: the rdma-core provider of sroce devices.
 *
 * The kernel driver registers with RDMA_DRIVER_UNKNOWN (it has no driver id
 * of its own), so a device is claimed by name prefix and confirmed by the
 * driver's own sysfs attribute sroce_abi_version.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include "sroce.h"

static int sroce_query_device_ex(struct ibv_context *context,
				 const struct ibv_query_device_ex_input *input,
				 struct ibv_device_attr_ex *attr,
				 size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	int ret;

	ret = ibv_cmd_query_device_any(context, input, attr, attr_size, &resp,
				       &resp_size);
	if (ret)
		return ret;

	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		 "abi %u", SROCE_PROVIDER_ABI);
	return 0;
}

/*
 * The clock of completion timestamps (hca_core_clock 1000000 kHz): the
 * host's CLOCK_MONOTONIC_RAW in nanoseconds, read here without a system
 * call. As mlx5 does, the raw count goes whole into tv_nsec. In a time
 * namespace with a monotonic offset the two clocks differ by that offset.
 */
static int sroce_query_rt_values(struct ibv_context *context,
				 struct ibv_values_ex *values)
{
	struct timespec now;
	uint32_t comp_mask = 0;

	if (values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK) {
		if (clock_gettime(CLOCK_MONOTONIC_RAW, &now))
			return errno;
		values->raw_clock.tv_sec = 0;
		values->raw_clock.tv_nsec =
			(uint64_t)now.tv_sec * 1000000000 + now.tv_nsec;
		comp_mask |= IBV_VALUES_MASK_RAW_CLOCK;
	}
	values->comp_mask = comp_mask;
	return 0;
}

static int sroce_query_port(struct ibv_context *context, uint8_t port,
			    struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd;

	return ibv_cmd_query_port(context, port, attr, &cmd, sizeof(cmd));
}

static struct ibv_pd *sroce_alloc_pd(struct ibv_context *context)
{
	struct sroce_cmd_alloc_pd_resp resp = {};
	struct ibv_alloc_pd cmd;
	struct sroce_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}

	ret = ibv_cmd_alloc_pd(context, &pd->ibv_pd, &cmd, sizeof(cmd),
			       &resp.ibv_resp, sizeof(resp));
	if (ret) {
		free(pd);
		errno = ret;
		return NULL;
	}
	pd->pdn = resp.drv.pdn;
	return &pd->ibv_pd;
}

static int sroce_dealloc_pd(struct ibv_pd *ibv_pd)
{
	struct sroce_pd *pd = to_spd(ibv_pd);
	int ret;

	if (pd->protection) {
		atomic_fetch_sub(&pd->protection->parents, 1);
		if (pd->td)
			atomic_fetch_sub(&pd->td->parents, 1);
		free(pd);
		return 0;
	}
	if (atomic_load(&pd->parents))
		return EBUSY;
	ret = ibv_cmd_dealloc_pd(ibv_pd);
	if (ret)
		return ret;
	free(pd);
	return 0;
}

static struct ibv_td *sroce_alloc_td(struct ibv_context *context,
				     struct ibv_td_init_attr *attr)
{
	struct sroce_td *td;

	if (attr->comp_mask) {
		errno = EINVAL;
		return NULL;
	}
	td = calloc(1, sizeof(*td));
	if (!td) {
		errno = ENOMEM;
		return NULL;
	}
	td->ibv_td.context = context;
	return &td->ibv_td;
}

static int sroce_dealloc_td(struct ibv_td *ibv_td)
{
	struct sroce_td *td = container_of(ibv_td, struct sroce_td, ibv_td);

	if (atomic_load(&td->parents))
		return EBUSY;
	free(td);
	return 0;
}

/* A parent domain of a PD of this context, with an optional TD. */
static struct ibv_pd *
sroce_alloc_parent_domain(struct ibv_context *context,
			  struct ibv_parent_domain_init_attr *attr)
{
	struct sroce_pd *pd;

	if ((attr->comp_mask & ~(IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
				 IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)) ||
	    !attr->pd || attr->pd->context != context ||
	    sroce_is_parent_domain(attr->pd) ||
	    (attr->td && attr->td->context != context)) {
		errno = EINVAL;
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	pd->ibv_pd.context = context;
	pd->ibv_pd.handle = attr->pd->handle;
	pd->protection = to_spd(attr->pd);
	pd->pdn = pd->protection->pdn;
	atomic_fetch_add(&pd->protection->parents, 1);
	if (attr->td) {
		pd->td = container_of(attr->td, struct sroce_td, ibv_td);
		atomic_fetch_add(&pd->td->parents, 1);
	}
	return &pd->ibv_pd;
}

static struct ibv_mr *sroce_reg_mr(struct ibv_pd *pd, void *addr,
				   size_t length, uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct ibv_reg_mr cmd;
	struct verbs_mr *vmr;
	int ret;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr, &cmd,
			     sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

/* The kernel makes a new MR: new keys, which the command writes into vmr. */
static int sroce_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			  void *addr, size_t length, int access)
{
	struct ib_uverbs_rereg_mr_resp resp;
	struct ibv_rereg_mr cmd = {};

	/* libibverbs would read the handle of a NULL PD. */
	if ((flags & IBV_REREG_MR_CHANGE_PD) && !pd)
		return EINVAL;
	return ibv_cmd_rereg_mr(vmr, flags, addr, length, (uintptr_t)addr,
				access, pd, &cmd, sizeof(cmd), &resp,
				sizeof(resp));
}

static struct ibv_mw *sroce_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ib_uverbs_alloc_mw_resp resp;
	struct ibv_alloc_mw cmd = {};
	struct ibv_mw *mw;
	int ret;

	mw = calloc(1, sizeof(*mw));
	if (!mw) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_alloc_mw(pd, type, mw, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret) {
		free(mw);
		errno = ret;
		return NULL;
	}
	return mw;
}

static int sroce_dealloc_mw(struct ibv_mw *mw)
{
	int ret = ibv_cmd_dealloc_mw(mw);

	if (!ret)
		free(mw);
	return ret;
}

/*
 * A type 1 bind is a BIND_MW WQE on qp's send queue with the window's next
 * key, which the window takes now, as a verbs consumer expects.
 */
static int sroce_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
			 struct ibv_mw_bind *mw_bind)
{
	struct ibv_send_wr wr = {
		.wr_id = mw_bind->wr_id,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = mw_bind->send_flags,
	}, *bad;
	int ret;

	if (mw->type != IBV_MW_TYPE_1 ||
	    sroce_protection_domain(mw->pd) != sroce_protection_domain(qp->pd) ||
	    (mw_bind->bind_info.length && !mw_bind->bind_info.mr))
		return EINVAL;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = mw_bind->bind_info;
	ret = sroce_post_send(qp, &wr, &bad);
	if (!ret)
		mw->rkey = wr.bind_mw.rkey;
	return ret;
}

static int sroce_dereg_mr(struct verbs_mr *vmr)
{
	int ret;

	ret = ibv_cmd_dereg_mr(vmr);
	if (ret)
		return ret;
	free(vmr);
	return 0;
}

/*
 * Address handles never reach the kernel: a UD send carries its address in
 * the WQE, so an AH is the address segment kept in userspace. RoCE needs a
 * GRH; the kernel checks the GID index against its table on every send.
 */
static struct ibv_ah *sroce_create_ah(struct ibv_pd *pd,
				      struct ibv_ah_attr *attr)
{
	const struct ibv_global_route *grh = &attr->grh;
	struct sroce_ah *ah;

	if (!attr->is_global || attr->port_num != 1 ||
	    grh->sgid_index >= SROCE_GID_TABLE_LEN) {
		errno = EINVAL;
		return NULL;
	}
	ah = calloc(1, sizeof(*ah));
	if (!ah) {
		errno = ENOMEM;
		return NULL;
	}
	memcpy(ah->av.dgid, grh->dgid.raw, sizeof(ah->av.dgid));
	ah->av.flow_label = grh->flow_label & SROCE_FLOW_LABEL_MASK;
	ah->av.sgid_index = grh->sgid_index;
	ah->av.traffic_class = grh->traffic_class;
	ah->av.hop_limit = grh->hop_limit;
	return &ah->ibv_ah;
}

static int sroce_destroy_ah(struct ibv_ah *ah)
{
	free(to_sah(ah));
	return 0;
}

static void sroce_free_context(struct ibv_context *ibv_ctx)
{
	struct sroce_context *ctx = to_sctx(ibv_ctx);

	if (ctx->status)
		munmap((void *)ctx->status, ctx->status_len);
	verbs_uninit_context(&ctx->vctx);
	free(ctx);
}

static const struct verbs_context_ops sroce_context_ops = {
	.alloc_mw = sroce_alloc_mw,
	.alloc_parent_domain = sroce_alloc_parent_domain,
	.alloc_pd = sroce_alloc_pd,
	.alloc_td = sroce_alloc_td,
	.bind_mw = sroce_bind_mw,
	.attach_mcast = ibv_cmd_attach_mcast,
	.create_ah = sroce_create_ah,
	.create_cq = sroce_create_cq,
	.create_cq_ex = sroce_create_cq_ex,
	.create_qp = sroce_create_qp,
	.create_qp_ex = sroce_create_qp_ex,
	.create_srq = sroce_create_srq,
	.dealloc_mw = sroce_dealloc_mw,
	.dealloc_pd = sroce_dealloc_pd,
	.dealloc_td = sroce_dealloc_td,
	.dereg_mr = sroce_dereg_mr,
	.destroy_ah = sroce_destroy_ah,
	.destroy_cq = sroce_destroy_cq,
	.destroy_qp = sroce_destroy_qp,
	.destroy_srq = sroce_destroy_srq,
	.detach_mcast = ibv_cmd_detach_mcast,
	.free_context = sroce_free_context,
	.modify_qp = sroce_modify_qp,
	.modify_srq = sroce_modify_srq,
	.poll_cq = sroce_poll_cq,
	.post_recv = sroce_post_recv,
	.post_send = sroce_post_send,
	.post_srq_recv = sroce_post_srq_recv,
	.query_device_ex = sroce_query_device_ex,
	.query_port = sroce_query_port,
	.query_qp = sroce_query_qp,
	.query_rt_values = sroce_query_rt_values,
	.query_srq = sroce_query_srq,
	.reg_mr = sroce_reg_mr,
	.rereg_mr = sroce_rereg_mr,
	.req_notify_cq = sroce_req_notify_cq,
	.resize_cq = sroce_resize_cq,
};

static struct verbs_context *sroce_alloc_context(struct ibv_device *ibdev,
						 int cmd_fd,
						 void *private_data)
{
	struct sroce_cmd_alloc_ucontext_resp resp = {};
	struct sroce_cmd_alloc_ucontext cmd = {};
	struct sroce_context *ctx;
	int ret;

	ctx = (struct sroce_context *)_verbs_init_and_alloc_context(
		ibdev, cmd_fd, sizeof(*ctx),
		&((struct sroce_context *)NULL)->vctx, RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;

	cmd.drv.provider_caps = SROCE_PROVIDER_CAPS;
	ret = ibv_cmd_get_context(&ctx->vctx, &cmd.ibv_cmd, sizeof(cmd),
				  &resp.ibv_resp, sizeof(resp));
	if (ret) {
		if (ret == EPROTO)
			fprintf(stderr,
				"libsroce: the sroce kernel driver requires ABI features this provider lacks; install the provider that matches the module\n");
		goto err;
	}
	if (resp.drv.abi_version != SROCE_PROVIDER_ABI) {
		fprintf(stderr,
			"libsroce: kernel answered with sroce ABI %u, this provider speaks %u\n",
			resp.drv.abi_version, SROCE_PROVIDER_ABI);
		ret = EPROTO;
		goto err;
	}
	ctx->kernel_caps = resp.drv.kernel_caps;
	ctx->status_len = resp.drv.status_mmap_len;
	ctx->status = mmap(NULL, ctx->status_len, PROT_READ, MAP_SHARED,
			   cmd_fd, resp.drv.status_mmap_offset);
	if (ctx->status == MAP_FAILED || ctx->status_len <
	    sizeof(struct sroce_engine_status)) {
		ret = errno ? errno : EPROTO;
		ctx->status = NULL;
		goto err;
	}

	verbs_set_ops(&ctx->vctx, &sroce_context_ops);
	return &ctx->vctx;

err:
	verbs_uninit_context(&ctx->vctx);
	free(ctx);
	errno = ret;
	return NULL;
}

/*
 * Claims a device only if the kernel driver's own attribute is there, so
 * that a foreign device that happens to be named sroce* is left alone, and
 * refuses, saying why, a driver that speaks another ABI version.
 */
static bool sroce_match_device(struct verbs_sysfs_dev *sysfs_dev)
{
	char buf[16];
	unsigned long abi;
	char *end;

	if (ibv_read_ibdev_sysfs_file(buf, sizeof(buf), sysfs_dev,
				      "sroce_abi_version") <= 0)
		return false;
	abi = strtoul(buf, &end, 10);
	if (abi != SROCE_PROVIDER_ABI) {
		fprintf(stderr,
			"libsroce: kernel sroce ABI version %lu is not the %u this provider speaks; not binding\n",
			abi, SROCE_PROVIDER_ABI);
		return false;
	}
	return true;
}

static struct verbs_device *sroce_alloc_device(struct verbs_sysfs_dev *dev)
{
	struct sroce_device *sdev;

	sdev = calloc(1, sizeof(*sdev));
	if (!sdev)
		return NULL;
	return &sdev->vdev;
}

static void sroce_uninit_device(struct verbs_device *vdev)
{
	free(container_of(vdev, struct sroce_device, vdev));
}

static const struct verbs_match_ent sroce_match_table[] = {
	{
		.u.modalias = "rdma_device:*N" SROCE_DRIVER_NAME "*",
		.kind = VERBS_MATCH_MODALIAS,
	},
	{},
};

static const struct verbs_device_ops sroce_device_ops = {
	.name = SROCE_DRIVER_NAME,
	.match_min_abi_version = SROCE_PROVIDER_ABI,
	.match_max_abi_version = SROCE_PROVIDER_ABI,
	.match_table = sroce_match_table,
	.match_device = sroce_match_device,
	.alloc_device = sroce_alloc_device,
	.uninit_device = sroce_uninit_device,
	.alloc_context = sroce_alloc_context,
};

static void __attribute__((constructor)) sroce_register_driver(void)
{
	verbs_register_driver_34(&sroce_device_ops);
}
