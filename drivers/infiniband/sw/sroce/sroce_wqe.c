// SPDX-License-Identifier: GPL-2.0
/*
 * WQE validation (see include/sroce/wqe.h).
 */
#include <linux/log2.h>
#include <linux/minmax.h>
#include <linux/sizes.h>
#include <sroce/wqe.h>

#define SROCE_WQE_FLAGS_KNOWN                                           \
	(SROCE_WQE_SIGNALED | SROCE_WQE_FENCE | SROCE_WQE_SOLICITED |   \
	 SROCE_WQE_INLINE)

enum sroce_wqe_verdict sroce_wqe_check_ctrl(const struct sroce_wqe_ctrl *ctrl,
					    const struct sroce_wqe_limits *lim,
					    size_t *extra)
{
	bool is_inline = ctrl->flags & SROCE_WQE_INLINE;
	size_t room = lim->slot_size - SROCE_SEND_WQE_BASE;

	if (ctrl->opcode >= SROCE_WQE_OPCODE_COUNT ||
	    !(lim->opcodes & BIT(ctrl->opcode)))
		return SROCE_WQE_BAD_OPCODE;
	if (ctrl->flags & ~SROCE_WQE_FLAGS_KNOWN)
		return SROCE_WQE_BAD_FLAGS;
	if (ctrl->reserved_18 || ctrl->reserved_a0 || ctrl->reserved_c0)
		return SROCE_WQE_BAD_RESERVED;

	if (is_inline) {
		/* Inline data is something to send or write, nothing else. */
		if (ctrl->opcode == SROCE_WQE_RDMA_READ ||
		    sroce_wqe_is_atomic(ctrl->opcode) ||
		    sroce_wqe_has_no_sge(ctrl->opcode))
			return SROCE_WQE_BAD_FLAGS;
		if (ctrl->num_sge || ctrl->inline_len > lim->max_inline ||
		    ctrl->inline_len > room)
			return SROCE_WQE_BAD_LENGTH;
		*extra = ctrl->inline_len;
		return SROCE_WQE_OK;
	}

	if (ctrl->inline_len)
		return SROCE_WQE_BAD_RESERVED;
	if (ctrl->num_sge > lim->max_sge ||
	    (size_t)ctrl->num_sge * sizeof(struct sroce_sge) > room)
		return SROCE_WQE_BAD_LENGTH;
	if (sroce_wqe_is_atomic(ctrl->opcode) && ctrl->num_sge != 1)
		return SROCE_WQE_BAD_LENGTH;
	if (sroce_wqe_has_no_sge(ctrl->opcode) && ctrl->num_sge)
		return SROCE_WQE_BAD_LENGTH;
	*extra = ctrl->num_sge * sizeof(struct sroce_sge);
	return SROCE_WQE_OK;
}

/* Lengths add up in 64 bits: 255 SGEs of 4 GiB cannot wrap. */
static enum sroce_wqe_verdict sroce_sum_sges(const struct sroce_sge *sge,
					     unsigned int num_sge, u32 *len)
{
	u64 sum = 0;
	unsigned int i;

	for (i = 0; i < num_sge; i++)
		sum += sge[i].length;
	if (sum > SROCE_MAX_MSG_SIZE)
		return SROCE_WQE_BAD_LENGTH;
	*len = sum;
	return SROCE_WQE_OK;
}

enum sroce_wqe_verdict sroce_wqe_check_sges(const struct sroce_wqe_ctrl *ctrl,
					    const struct sroce_sge *sge,
					    u32 *msg_len)
{
	enum sroce_wqe_verdict v;

	if (ctrl->flags & SROCE_WQE_INLINE) {
		*msg_len = ctrl->inline_len;
		return SROCE_WQE_OK;
	}
	v = sroce_sum_sges(sge, ctrl->num_sge, msg_len);
	if (v == SROCE_WQE_OK && sroce_wqe_is_atomic(ctrl->opcode) &&
	    *msg_len != sizeof(u64))
		return SROCE_WQE_BAD_LENGTH;
	return v;
}

enum sroce_wqe_verdict sroce_wqe_check_ud(const struct sroce_wqe_ud *ud,
					  u32 msg_len, u32 mtu)
{
	if (ud->reserved_f8 || ud->remote_qpn > SROCE_WQE_QPN_MASK ||
	    ud->flow_label > SROCE_WQE_FLOW_LABEL_MASK)
		return SROCE_WQE_BAD_RESERVED;
	if (msg_len > mtu)
		return SROCE_WQE_BAD_LENGTH;
	return SROCE_WQE_OK;
}

enum sroce_wqe_verdict sroce_wqe_check_reg(const struct sroce_wqe_reg *reg)
{
	if (reg->reserved_e0)
		return SROCE_WQE_BAD_RESERVED;
	if (reg->page_size < SZ_4K || reg->page_size > SZ_2G ||
	    !is_power_of_2(reg->page_size))
		return SROCE_WQE_BAD_LENGTH;
	if (reg->addr + reg->length < reg->addr)
		return SROCE_WQE_BAD_LENGTH;
	return SROCE_WQE_OK;
}

enum sroce_wqe_verdict sroce_wqe_check_bind(const struct sroce_wqe_bind *bind)
{
	if (bind->reserved_e0)
		return SROCE_WQE_BAD_RESERVED;
	if (bind->addr + bind->length < bind->addr)
		return SROCE_WQE_BAD_LENGTH;
	return SROCE_WQE_OK;
}

enum sroce_wqe_verdict
sroce_wqe_check_recv(const struct sroce_recv_wqe *rwqe,
		     const struct sroce_wqe_limits *lim, size_t *extra)
{
	size_t room = lim->slot_size - SROCE_RECV_WQE_BASE;
	int i;

	for (i = 0; i < sizeof(rwqe->reserved_48); i++)
		if (rwqe->reserved_48[i])
			return SROCE_WQE_BAD_RESERVED;
	if (rwqe->num_sge > lim->max_sge ||
	    (size_t)rwqe->num_sge * sizeof(struct sroce_sge) > room)
		return SROCE_WQE_BAD_LENGTH;
	*extra = rwqe->num_sge * sizeof(struct sroce_sge);
	return SROCE_WQE_OK;
}

/* A receive buffer larger than any message holds any message. */
u32 sroce_wqe_recv_len(const struct sroce_sge *sge, unsigned int num_sge)
{
	u64 sum = 0;
	unsigned int i;

	for (i = 0; i < num_sge; i++)
		sum += sge[i].length;
	return min_t(u64, sum, SROCE_MAX_MSG_SIZE);
}
