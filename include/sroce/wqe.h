/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Validation of send and receive WQEs copied out of a ring.
 *
 * Pure layer: no ib_core, no user memory. The engine copies the control
 * block of a WQE into kernel memory, asks sroce_wqe_check_ctrl() how many
 * more bytes make up the WQE, copies exactly those once, and asks
 * sroce_wqe_check_sges() for the message length. Keys, PDs, access rights
 * and address ranges are checked later against the MRs.
 */
#ifndef SROCE_WQE_H
#define SROCE_WQE_H

#include <linux/bits.h>
#include <linux/types.h>
#include <rdma/sroce-abi.h>

/* The fixed part of every send WQE: control, raddr and atomic segments. */
#define SROCE_SEND_WQE_BASE 64
#define SROCE_RECV_WQE_BASE 16
#define SROCE_MAX_MSG_SIZE 0x80000000U	/* 2^31 */
#define SROCE_WQE_QPN_MASK 0xffffffU
#define SROCE_WQE_FLOW_LABEL_MASK 0xfffffU

/* Send opcodes each QP type accepts (bits of enum sroce_wqe_opcode). */
#define SROCE_WQE_OPS_UD (BIT(SROCE_WQE_SEND) | BIT(SROCE_WQE_SEND_IMM))
/*
 * UC takes the local operations (LOCAL_INV, BIND_MW) but no SEND with
 * invalidate: IBTA defines no UC opcode that carries an invalidation.
 */
#define SROCE_WQE_OPS_UC                                                \
	(SROCE_WQE_OPS_UD | BIT(SROCE_WQE_RDMA_WRITE) |                 \
	 BIT(SROCE_WQE_RDMA_WRITE_IMM) | BIT(SROCE_WQE_LOCAL_INV) |     \
	 BIT(SROCE_WQE_BIND_MW))
#define SROCE_WQE_OPS_RC                                                \
	(SROCE_WQE_OPS_UC | BIT(SROCE_WQE_RDMA_READ) |                  \
	 BIT(SROCE_WQE_ATOMIC_CMP_SWP) | BIT(SROCE_WQE_ATOMIC_FETCH_ADD) | \
	 BIT(SROCE_WQE_SEND_INV) | BIT(SROCE_WQE_ATOMIC_WRITE))
/*
 * A kernel RC QP also registers fast-registration MRs; it has no
 * ATOMIC_WRITE, which no kernel verb of 6.1 posts (a user QP's only).
 */
#define SROCE_WQE_OPS_RC_KERNEL                                         \
	((SROCE_WQE_OPS_RC & ~BIT(SROCE_WQE_ATOMIC_WRITE)) |            \
	 BIT(SROCE_WQE_REG_MR))

struct sroce_wqe_limits {
	u32 opcodes;		/* SROCE_WQE_OPS_* of the QP type */
	u32 max_sge;
	u32 max_inline;
	u32 slot_size;		/* bytes a WQE may occupy */
};

enum sroce_wqe_verdict {
	SROCE_WQE_OK,
	SROCE_WQE_BAD_OPCODE,	/* unknown, or not for this QP type */
	SROCE_WQE_BAD_FLAGS,	/* unknown flag, or inline where not allowed */
	SROCE_WQE_BAD_RESERVED,	/* a reserved field is not zero */
	SROCE_WQE_BAD_LENGTH,	/* SGEs/inline over the limits, message too
				 * long, an atomic without one 8-byte SGE,
				 * or an ATOMIC_WRITE with any
				 */
};

/*
 * Checks a send WQE's control block and sets *extra to the number of bytes
 * that follow the 64-byte base (SGEs or inline data).
 */
enum sroce_wqe_verdict sroce_wqe_check_ctrl(const struct sroce_wqe_ctrl *ctrl,
					    const struct sroce_wqe_limits *lim,
					    size_t *extra);
/* Sums the SGE lengths of a checked send WQE into *msg_len. */
enum sroce_wqe_verdict sroce_wqe_check_sges(const struct sroce_wqe_ctrl *ctrl,
					    const struct sroce_sge *sge,
					    u32 *msg_len);
/*
 * Checks the address segment of a UD send whose message is msg_len bytes
 * long against the port's path MTU.
 */
enum sroce_wqe_verdict sroce_wqe_check_ud(const struct sroce_wqe_ud *ud,
					  u32 msg_len, u32 mtu);
/*
 * Checks the segment of a REG_MR WQE: reserved bits zero, a page size that
 * is a power of two from 4 KiB to 2 GiB, and a range that does not wrap.
 */
enum sroce_wqe_verdict sroce_wqe_check_reg(const struct sroce_wqe_reg *reg);
/* Checks the segment of a BIND_MW WQE: reserved bits zero, no wrap. */
enum sroce_wqe_verdict sroce_wqe_check_bind(const struct sroce_wqe_bind *bind);
/* Checks a receive WQE header; *extra as for sroce_wqe_check_ctrl(). */
enum sroce_wqe_verdict
sroce_wqe_check_recv(const struct sroce_recv_wqe *rwqe,
		     const struct sroce_wqe_limits *lim, size_t *extra);
/* Capacity of a receive buffer, capped at the largest message. */
u32 sroce_wqe_recv_len(const struct sroce_sge *sge, unsigned int num_sge);

/* Executed by the requester itself (REG_MR, LOCAL_INV, BIND_MW): no packet. */
static inline bool sroce_wqe_is_local(u8 opcode)
{
	return opcode == SROCE_WQE_LOCAL_INV || opcode == SROCE_WQE_REG_MR ||
	       opcode == SROCE_WQE_BIND_MW;
}

/* The atomics that return the value they found into one 8-byte SGE. */
static inline bool sroce_wqe_is_atomic(u8 opcode)
{
	return opcode == SROCE_WQE_ATOMIC_CMP_SWP ||
	       opcode == SROCE_WQE_ATOMIC_FETCH_ADD;
}

/* Carries no data segment: the local operations and ATOMIC_WRITE. */
static inline bool sroce_wqe_has_no_sge(u8 opcode)
{
	return sroce_wqe_is_local(opcode) || opcode == SROCE_WQE_ATOMIC_WRITE;
}

#endif /* SROCE_WQE_H */
