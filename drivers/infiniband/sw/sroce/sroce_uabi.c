// SPDX-License-Identifier: GPL-2.0
/*
 * Pure checks of user ABI requests (see include/sroce/uabi.h).
 */
#include <linux/errno.h>
#include <linux/string.h>
#include <sroce/uabi.h>

bool sroce_uabi_mem_is_zero(const void *buf, size_t len)
{
	return !memchr_inv(buf, 0, len);
}

/*
 * A request is acceptable when it sets no comp_mask bit (this version has no
 * optional request field), leaves every reserved byte zero, and the provider
 * understands every cap the kernel requires. Unknown provider_caps bits are
 * fine: a newer provider may know more than this kernel.
 */
int sroce_uabi_check_ucontext_req(const struct sroce_alloc_ucontext_req *req,
				  u64 required_caps)
{
	if (req->comp_mask)
		return -EINVAL;
	if (!sroce_uabi_mem_is_zero(req->reserved_20,
				    sizeof(req->reserved_20)))
		return -EINVAL;
	if (required_caps & ~req->provider_caps)
		return -EPROTO;
	return 0;
}

/*
 * The only optional field is the kick eventfd; a field whose comp_mask bit
 * is clear must be zero, so a later meaning of it cannot be mistaken.
 */
int sroce_uabi_check_create_qp_req(const struct sroce_create_qp_req *req)
{
	if (req->comp_mask & ~SROCE_CREATE_QP_REQ_KICK_FD)
		return -EINVAL;
	if (req->comp_mask & SROCE_CREATE_QP_REQ_KICK_FD)
		return req->kick_fd < 0 ? -EBADF : 0;
	return req->kick_fd ? -EINVAL : 0;
}

void sroce_uabi_fill_ucontext_resp(struct sroce_alloc_ucontext_resp *resp)
{
	memset(resp, 0, sizeof(*resp));
	resp->abi_version = SROCE_UVERBS_ABI_VERSION;
	resp->kernel_caps = SROCE_UCONTEXT_CAPS_OFFERED;
	resp->required_caps = SROCE_UCONTEXT_CAPS_REQUIRED;
}
