/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef SROCE_PROVIDER_H
#define SROCE_PROVIDER_H

#include <infiniband/verbs.h>
#include <rdma/sroce-abi.h>
#include "verbs_private.h"

#define SROCE_DRIVER_NAME "sroce"
/*
 * The uverbs ABI this provider speaks. Only tests override it, to build a
 * provider that must refuse today's kernel.
 */
#ifndef SROCE_PROVIDER_ABI
#define SROCE_PROVIDER_ABI SROCE_UVERBS_ABI_VERSION
#endif
/* Every enum sroce_ucontext_cap bit this provider understands. */
#define SROCE_PROVIDER_CAPS 0ULL

struct sroce_device {
	struct verbs_device vdev;
};

struct sroce_context {
	struct verbs_context vctx;
	uint64_t kernel_caps;
};

struct sroce_pd {
	struct ibv_pd ibv_pd;
	uint32_t pdn;
};

static inline struct sroce_context *to_sctx(struct ibv_context *ctx)
{
	return container_of(ctx, struct sroce_context, vctx.context);
}

static inline struct sroce_pd *to_spd(struct ibv_pd *pd)
{
	return container_of(pd, struct sroce_pd, ibv_pd);
}

/* The driver request/response pairs, laid out after the core ones. */
struct sroce_cmd_alloc_ucontext {
	struct ibv_get_context ibv_cmd;
	struct sroce_alloc_ucontext_req drv;
};

struct sroce_cmd_alloc_ucontext_resp {
	struct ib_uverbs_get_context_resp ibv_resp;
	struct sroce_alloc_ucontext_resp drv;
};

struct sroce_cmd_alloc_pd_resp {
	struct ib_uverbs_alloc_pd_resp ibv_resp;
	struct sroce_alloc_pd_resp drv;
};

#endif /* SROCE_PROVIDER_H */
