/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Validation of what userspace sends through the sroce ABI.
 *
 * Pure layer: no ib_core, no user memory access. The verbs glue copies the
 * request into kernel memory first (zero-filling what an older provider did
 * not send) and then asks these functions whether it is acceptable.
 */
#ifndef SROCE_UABI_H
#define SROCE_UABI_H

#include <linux/types.h>
#include <rdma/sroce-abi.h>

/* Every enum sroce_ucontext_cap bit this kernel knows. */
#define SROCE_UCONTEXT_CAPS_KNOWN                                        \
	((u64)(SROCE_UCONTEXT_CAP_UD_UC | SROCE_UCONTEXT_CAP_KICK_EVENTFD | \
	       SROCE_UCONTEXT_CAP_ATOMIC_WRITE))
/* Caps this kernel offers to every provider. */
#define SROCE_UCONTEXT_CAPS_OFFERED SROCE_UCONTEXT_CAPS_KNOWN
/* Caps a provider must understand to be given a context. */
#define SROCE_UCONTEXT_CAPS_REQUIRED 0ULL

int sroce_uabi_check_ucontext_req(const struct sroce_alloc_ucontext_req *req,
				  u64 required_caps);
void sroce_uabi_fill_ucontext_resp(struct sroce_alloc_ucontext_resp *resp);
int sroce_uabi_check_create_qp_req(const struct sroce_create_qp_req *req);
bool sroce_uabi_mem_is_zero(const void *buf, size_t len);

#endif /* SROCE_UABI_H */
