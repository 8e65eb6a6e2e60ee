// SPDX-License-Identifier: GPL-2.0
/*
 * Protection domains.
 */
#include <rdma/sroce-abi.h>
#include "sroce.h"
#include "sroce_verbs.h"

int sroce_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibpd->device);
	struct sroce_pd *pd = to_spd(ibpd);
	struct sroce_alloc_pd_resp resp = {};
	int err;

	err = sroce_udata_expect_no_req(udata);
	if (err)
		return err;

	/* The pdn space is the PD limit: max_pd numbers, 1 to max_pd. */
	err = ida_alloc_range(&sdev->pdn_ida, 1, sdev->lim.max_pd, GFP_KERNEL);
	if (err < 0)
		return err == -ENOSPC ? -ENOMEM : err;
	pd->pdn = err;

	resp.pdn = pd->pdn;
	err = sroce_udata_copy_resp(udata, &resp, sizeof(resp));
	if (err) {
		ida_free(&sdev->pdn_ida, pd->pdn);
		return err;
	}

	return 0;
}

int sroce_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibpd->device);
	struct sroce_pd *pd = to_spd(ibpd);

	ida_free(&sdev->pdn_ida, pd->pdn);
	return 0;
}
