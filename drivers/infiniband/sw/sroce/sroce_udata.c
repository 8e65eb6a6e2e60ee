// SPDX-License-Identifier: GPL-2.0
/*
 * Moving ABI structures between user memory and the kernel.
 *
 * Rules (Documentation/abi.rst): a shorter request is zero-filled, a longer
 * one is accepted only if its unknown tail is zero, and a response is
 * truncated to the space userspace gave. Kernel callers pass no udata.
 */
#include <linux/minmax.h>
#include <linux/string.h>
#include "sroce.h"
#include "sroce_verbs.h"

int sroce_udata_copy_req(struct ib_udata *udata, void *req, size_t req_size)
{
	memset(req, 0, req_size);
	if (!udata || !udata->inlen)
		return 0;
	if (udata->inlen > req_size &&
	    !ib_is_udata_cleared(udata, req_size, udata->inlen - req_size))
		return -EINVAL;
	return ib_copy_from_udata(req, udata, min(udata->inlen, req_size));
}

int sroce_udata_copy_resp(struct ib_udata *udata, void *resp,
			  size_t resp_size)
{
	if (!udata || !udata->outlen)
		return 0;
	return ib_copy_to_udata(udata, resp, min(udata->outlen, resp_size));
}

/* For verbs whose request has no driver part: anything sent must be zero. */
int sroce_udata_expect_no_req(struct ib_udata *udata)
{
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	return 0;
}
