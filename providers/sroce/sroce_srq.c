// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared receive queues: the kernel allocates the ring (receive WQEs, as
 * an RQ has) and this provider maps it; posting writes WQEs and publishes
 * the producer index with no system call. Changing the limit or the size,
 * querying and destroying are commands.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "sroce.h"

struct ibv_srq *sroce_create_srq(struct ibv_pd *pd,
				 struct ibv_srq_init_attr *attr)
{
	struct sroce_cmd_create_srq_resp resp = {};
	struct ibv_create_srq cmd = {};
	const struct sroce_create_srq_resp *drv = &resp.drv;
	struct sroce_srq *srq;
	int ret;

	srq = calloc(1, sizeof(*srq));
	if (!srq) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_create_srq(pd, &srq->ibv_srq, attr, &cmd, sizeof(cmd),
				 &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;
	ret = sroce_ring_map(&srq->ring, pd->context->cmd_fd, drv->mmap_offset,
			     drv->mmap_len, drv->log_slots, drv->log_slot_size);
	if (ret)
		goto err_destroy;
	/* The command wrote the kernel's sizes into attr (not always resp). */
	srq->max_sge = attr->attr.max_sge;
	return &srq->ibv_srq;

err_destroy:
	ibv_cmd_destroy_srq(&srq->ibv_srq);
err_free:
	free(srq);
	errno = ret;
	return NULL;
}

/*
 * A resize holds the ring's lock, so no post runs while the kernel moves
 * the WQEs not yet taken to the new ring (producer index their number).
 */
static int sroce_resize_srq(struct sroce_srq *srq, struct ibv_srq_attr *attr,
			    int attr_mask)
{
	struct sroce_create_srq_resp ring = {};
	struct sroce_cmd_modify_srq cmd = {};
	struct sroce_ring *r = &srq->ring;
	int ret;

	cmd.drv.resp_addr = (uintptr_t)&ring;
	pthread_spin_lock(&r->lock);
	ret = ibv_cmd_modify_srq(&srq->ibv_srq, attr, attr_mask, &cmd.ibv_cmd,
				 sizeof(cmd));
	if (ret)
		goto out;
	ret = sroce_ring_remap(r, srq->ibv_srq.context->cmd_fd,
			       ring.mmap_offset, ring.mmap_len, ring.log_slots,
			       ring.log_slot_size);
	if (ret) {
		/* The kernel moved on already: this SRQ takes no more posts. */
		r->log_slots = 0;
		r->index = load_acquire(&r->hdr->consumer) + 1;
		goto out;
	}
	r->index = load_acquire(&r->hdr->producer);
out:
	pthread_spin_unlock(&r->lock);
	return ret;
}

int sroce_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		     int attr_mask)
{
	struct ibv_modify_srq cmd = {};

	if (attr_mask & IBV_SRQ_MAX_WR)
		return sroce_resize_srq(to_ssrq(ibsrq), attr, attr_mask);
	return ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd, sizeof(cmd));
}

int sroce_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd = {};

	return ibv_cmd_query_srq(srq, attr, &cmd, sizeof(cmd));
}

int sroce_destroy_srq(struct ibv_srq *ibsrq)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	int ret;

	ret = ibv_cmd_destroy_srq(ibsrq);
	if (ret)
		return ret;
	sroce_ring_unmap(&srq->ring);
	free(srq);
	return 0;
}

int sroce_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);

	return sroce_ring_post_recv(&srq->ring, srq->max_sge, wr, bad_wr);
}
