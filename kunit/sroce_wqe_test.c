// SPDX-License-Identifier: GPL-2.0
/*
 * WQE validation (include/sroce/wqe.h) and the ring ABI layout.
 */
#include <kunit/test.h>
#include <linux/sizes.h>
#include <linux/stddef.h>
#include <sroce/wqe.h>

static const struct sroce_wqe_limits sroce_lim = {
	.opcodes = SROCE_WQE_OPS_RC,
	.max_sge = 4, .max_inline = 128, .slot_size = 256,
};

static enum sroce_wqe_verdict sroce_check(const struct sroce_wqe_ctrl *c)
{
	size_t extra;

	return sroce_wqe_check_ctrl(c, &sroce_lim, &extra);
}

static void sroce_wqe_ctrl_test(struct kunit *test)
{
	struct sroce_wqe_ctrl c = { .opcode = SROCE_WQE_SEND, .num_sge = 4 };
	size_t extra = 0;

	KUNIT_EXPECT_EQ(test, sroce_wqe_check_ctrl(&c, &sroce_lim, &extra),
			SROCE_WQE_OK);
	KUNIT_EXPECT_EQ(test, extra, 4 * sizeof(struct sroce_sge));

	c.num_sge = 5;
	KUNIT_EXPECT_EQ(test, sroce_check(&c), SROCE_WQE_BAD_LENGTH);
	c.num_sge = 1;
	c.opcode = SROCE_WQE_OPCODE_COUNT;
	KUNIT_EXPECT_EQ(test, sroce_check(&c), SROCE_WQE_BAD_OPCODE);
	c.opcode = 0xff;
	KUNIT_EXPECT_EQ(test, sroce_check(&c), SROCE_WQE_BAD_OPCODE);
	c.opcode = SROCE_WQE_RDMA_WRITE;
	c.flags = 0x10;
	KUNIT_EXPECT_EQ(test, sroce_check(&c), SROCE_WQE_BAD_FLAGS);
	c.flags = 0;
	c.reserved_c0 = 1;
	KUNIT_EXPECT_EQ(test, sroce_check(&c), SROCE_WQE_BAD_RESERVED);
	c.reserved_c0 = 0;
	c.inline_len = 3;	/* without the inline flag */
	KUNIT_EXPECT_EQ(test, sroce_check(&c), SROCE_WQE_BAD_RESERVED);
}

static void sroce_wqe_inline_test(struct kunit *test)
{
	struct sroce_wqe_ctrl c = {
		.opcode = SROCE_WQE_SEND, .flags = SROCE_WQE_INLINE,
		.inline_len = 128,
	};
	size_t extra = 0;
	u32 len = 0;

	KUNIT_EXPECT_EQ(test, sroce_wqe_check_ctrl(&c, &sroce_lim, &extra),
			SROCE_WQE_OK);
	KUNIT_EXPECT_EQ(test, extra, 128);
	KUNIT_EXPECT_EQ(test, sroce_wqe_check_sges(&c, NULL, &len), SROCE_WQE_OK);
	KUNIT_EXPECT_EQ(test, len, 128);
	c.inline_len = 129;
	KUNIT_EXPECT_EQ(test, sroce_check(&c), SROCE_WQE_BAD_LENGTH);
	c.inline_len = 8;
	c.num_sge = 1;
	KUNIT_EXPECT_EQ(test, sroce_check(&c), SROCE_WQE_BAD_LENGTH);
	c.num_sge = 0;
	c.opcode = SROCE_WQE_RDMA_READ;
	KUNIT_EXPECT_EQ(test, sroce_check(&c), SROCE_WQE_BAD_FLAGS);
	c.opcode = SROCE_WQE_ATOMIC_FETCH_ADD;
	KUNIT_EXPECT_EQ(test, sroce_check(&c), SROCE_WQE_BAD_FLAGS);
}

static void sroce_wqe_length_test(struct kunit *test)
{
	struct sroce_wqe_ctrl c = { .opcode = SROCE_WQE_RDMA_WRITE, .num_sge = 3 };
	struct sroce_sge sge[3] = {
		{ .length = 0x40000000 }, { .length = 0x40000000 }, { .length = 0 },
	};
	u32 len = 0;

	KUNIT_EXPECT_EQ(test, sroce_wqe_check_sges(&c, sge, &len), SROCE_WQE_OK);
	KUNIT_EXPECT_EQ(test, len, 0x80000000U);
	sge[2].length = 1;
	KUNIT_EXPECT_EQ(test, sroce_wqe_check_sges(&c, sge, &len),
			SROCE_WQE_BAD_LENGTH);
	/* Would wrap a 32-bit sum. */
	sge[0].length = 0xffffffff;
	sge[1].length = 0xffffffff;
	sge[2].length = 2;
	KUNIT_EXPECT_EQ(test, sroce_wqe_check_sges(&c, sge, &len),
			SROCE_WQE_BAD_LENGTH);
	KUNIT_EXPECT_EQ(test, sroce_wqe_recv_len(sge, 3), 0x80000000U);	/* 2^31 */
	KUNIT_EXPECT_EQ(test, sroce_wqe_recv_len(sge, 0), 0);
}

static void sroce_wqe_atomic_test(struct kunit *test)
{
	struct sroce_wqe_ctrl c = { .opcode = SROCE_WQE_ATOMIC_CMP_SWP, .num_sge = 1 };
	struct sroce_sge sge = { .length = 8 };
	u32 len;

	KUNIT_EXPECT_EQ(test, sroce_check(&c), SROCE_WQE_OK);
	KUNIT_EXPECT_EQ(test, sroce_wqe_check_sges(&c, &sge, &len), SROCE_WQE_OK);
	sge.length = 4;
	KUNIT_EXPECT_EQ(test, sroce_wqe_check_sges(&c, &sge, &len),
			SROCE_WQE_BAD_LENGTH);
	c.num_sge = 2;
	KUNIT_EXPECT_EQ(test, sroce_check(&c), SROCE_WQE_BAD_LENGTH);
}

static void sroce_wqe_recv_test(struct kunit *test)
{
	struct sroce_recv_wqe r = { .num_sge = 4 };
	size_t extra;

	KUNIT_EXPECT_EQ(test, sroce_wqe_check_recv(&r, &sroce_lim, &extra),
			SROCE_WQE_OK);
	KUNIT_EXPECT_EQ(test, extra, 64);
	r.num_sge = 5;
	KUNIT_EXPECT_EQ(test, sroce_wqe_check_recv(&r, &sroce_lim, &extra),
			SROCE_WQE_BAD_LENGTH);
	r.num_sge = 1;
	r.reserved_48[6] = 1;
	KUNIT_EXPECT_EQ(test, sroce_wqe_check_recv(&r, &sroce_lim, &extra),
			SROCE_WQE_BAD_RESERVED);
}

/* The ring ABI, pinned. */
static void sroce_ring_abi_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sizeof(struct sroce_queue_hdr), SROCE_QUEUE_SLOTS_OFFSET);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_queue_hdr, producer), 0);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_queue_hdr, consumer), 64);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_queue_hdr, cq_arm), 128);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_queue_hdr, sq_worker), 132);
	KUNIT_EXPECT_EQ(test, sizeof(struct sroce_wqe_ctrl), 32);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_wqe_ctrl, opcode), 0);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_wqe_ctrl, flags), 1);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_wqe_ctrl, num_sge), 2);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_wqe_ctrl, inline_len), 4);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_wqe_ctrl, wr_id), 8);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_wqe_ctrl, imm_data), 16);
	KUNIT_EXPECT_EQ(test, sizeof(struct sroce_wqe_raddr), 16);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_wqe_raddr, rkey), 8);
	KUNIT_EXPECT_EQ(test, sizeof(struct sroce_wqe_atomic), 16);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_wqe_atomic, compare), 8);
	KUNIT_EXPECT_EQ(test, sizeof(struct sroce_sge), 16);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_sge, length), 8);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_sge, lkey), 12);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_send_wqe, raddr), 32);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_send_wqe, atomic), 48);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_send_wqe, sge), SROCE_SEND_WQE_BASE);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_recv_wqe, sge), SROCE_RECV_WQE_BASE);
	KUNIT_EXPECT_EQ(test, sizeof(struct sroce_cqe), 32);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_cqe, status), 8);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_cqe, owner), 11);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_cqe, byte_len), 12);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_cqe, imm_data), 16);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_cqe, qp_num), 20);
	KUNIT_EXPECT_EQ(test, sizeof(struct sroce_cqe_ts), 64);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_cqe_ts, timestamp), 32);
	KUNIT_EXPECT_EQ(test, sizeof(struct sroce_create_cq_resp), 32);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_create_cq_resp, log_cqe_size), 24);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_create_cq_resp, mmap_offset), 8);
	KUNIT_EXPECT_EQ(test, sizeof(struct sroce_create_qp_resp), 48);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_create_qp_resp, sq_mmap_offset), 8);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_create_qp_resp, rq_mmap_offset), 16);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_create_qp_resp, sq_log_slots), 32);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_create_qp_resp, max_inline_data), 40);
	KUNIT_EXPECT_EQ(test, sizeof(struct sroce_alloc_ucontext_resp), 40);
	KUNIT_EXPECT_EQ(test,
			offsetof(struct sroce_alloc_ucontext_resp, status_mmap_offset),
			24);
	/* 64 worker words, then the port's MTU. */
	KUNIT_EXPECT_EQ(test, sizeof(struct sroce_engine_status), 264);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_engine_status, port_mtu),
			256);
	/* The UD address segment overlays raddr and atomic exactly. */
	KUNIT_EXPECT_EQ(test, sizeof(struct sroce_wqe_ud), 32);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_send_wqe, ud), 32);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_send_wqe, raddr), 32);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_send_wqe, sge),
			SROCE_SEND_WQE_BASE);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_wqe_ud, remote_qpn), 16);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_wqe_ud, sgid_index), 28);
}

/* Each QP type accepts only its own opcodes; REG_MR only a kernel RC QP. */
static void sroce_wqe_qp_type_test(struct kunit *test)
{
	static const struct {
		u32 opcodes;
		u32 want;
	} types[] = {
		{ SROCE_WQE_OPS_UD, BIT(SROCE_WQE_SEND) | BIT(SROCE_WQE_SEND_IMM) },
		{ SROCE_WQE_OPS_UC, BIT(SROCE_WQE_SEND) | BIT(SROCE_WQE_SEND_IMM) |
		  BIT(SROCE_WQE_RDMA_WRITE) | BIT(SROCE_WQE_RDMA_WRITE_IMM) |
		  BIT(SROCE_WQE_LOCAL_INV) | BIT(SROCE_WQE_BIND_MW) },
		{ SROCE_WQE_OPS_RC, BIT(SROCE_WQE_OPCODE_COUNT) - 1 -
		  BIT(SROCE_WQE_REG_MR) },
		{ SROCE_WQE_OPS_RC_KERNEL, BIT(SROCE_WQE_OPCODE_COUNT) - 1 -
		  BIT(SROCE_WQE_ATOMIC_WRITE) },
	};
	struct sroce_wqe_limits lim = sroce_lim;
	struct sroce_wqe_ctrl c = {};
	size_t extra;
	int op, t;

	for (t = 0; t < ARRAY_SIZE(types); t++) {
		lim.opcodes = types[t].opcodes;
		for (op = 0; op < SROCE_WQE_OPCODE_COUNT; op++) {
			c.opcode = op;
			c.num_sge = sroce_wqe_has_no_sge(op) ? 0 : 1;
			KUNIT_EXPECT_EQ_MSG(test,
					    sroce_wqe_check_ctrl(&c, &lim, &extra),
					    types[t].want & BIT(op) ? SROCE_WQE_OK :
					    SROCE_WQE_BAD_OPCODE,
					    "type %d opcode %d", t, op);
		}
	}
}

/* REG_MR and LOCAL_INV carry no data: no SGE, no inline bytes. */
static void sroce_wqe_local_test(struct kunit *test)
{
	struct sroce_wqe_limits lim = sroce_lim;
	struct sroce_wqe_ctrl c = { .opcode = SROCE_WQE_LOCAL_INV };
	size_t extra = 1;

	lim.opcodes = SROCE_WQE_OPS_RC_KERNEL;
	KUNIT_EXPECT_EQ(test, sroce_wqe_check_ctrl(&c, &lim, &extra), SROCE_WQE_OK);
	KUNIT_EXPECT_EQ(test, extra, 0);
	c.num_sge = 1;
	KUNIT_EXPECT_EQ(test, sroce_wqe_check_ctrl(&c, &lim, &extra),
			SROCE_WQE_BAD_LENGTH);
	c.opcode = SROCE_WQE_REG_MR;
	KUNIT_EXPECT_EQ(test, sroce_wqe_check_ctrl(&c, &lim, &extra),
			SROCE_WQE_BAD_LENGTH);
	c.num_sge = 0;
	c.flags = SROCE_WQE_INLINE;
	c.inline_len = 8;
	KUNIT_EXPECT_EQ(test, sroce_wqe_check_ctrl(&c, &lim, &extra),
			SROCE_WQE_BAD_FLAGS);
	c.opcode = SROCE_WQE_SEND_INV;	/* a SEND: inline data is fine */
	KUNIT_EXPECT_EQ(test, sroce_wqe_check_ctrl(&c, &lim, &extra), SROCE_WQE_OK);
}

/*
 * ATOMIC_WRITE carries its 8 bytes in the WQE's atomic segment: no SGE, no
 * inline data, a message of 0 bytes as far as the SGEs go; RC only.
 */
static void sroce_wqe_atomic_write_test(struct kunit *test)
{
	struct sroce_wqe_limits lim = sroce_lim;
	struct sroce_wqe_ctrl c = { .opcode = SROCE_WQE_ATOMIC_WRITE };
	struct sroce_sge sge = { .length = 8 };
	size_t extra = 1;
	u32 len = 1;

	lim.opcodes = SROCE_WQE_OPS_RC;
	KUNIT_EXPECT_EQ(test, sroce_wqe_check_ctrl(&c, &lim, &extra), SROCE_WQE_OK);
	KUNIT_EXPECT_EQ(test, extra, 0);
	KUNIT_EXPECT_EQ(test, sroce_wqe_check_sges(&c, &sge, &len), SROCE_WQE_OK);
	KUNIT_EXPECT_EQ(test, len, 0);
	c.num_sge = 1;
	KUNIT_EXPECT_EQ(test, sroce_wqe_check_ctrl(&c, &lim, &extra),
			SROCE_WQE_BAD_LENGTH);
	c.num_sge = 0;
	c.flags = SROCE_WQE_INLINE;
	c.inline_len = 8;
	KUNIT_EXPECT_EQ(test, sroce_wqe_check_ctrl(&c, &lim, &extra),
			SROCE_WQE_BAD_FLAGS);
	c.flags = 0;
	c.inline_len = 0;
	lim.opcodes = SROCE_WQE_OPS_UC;
	KUNIT_EXPECT_EQ(test, sroce_wqe_check_ctrl(&c, &lim, &extra),
			SROCE_WQE_BAD_OPCODE);
	lim.opcodes = SROCE_WQE_OPS_RC_KERNEL;
	KUNIT_EXPECT_EQ(test, sroce_wqe_check_ctrl(&c, &lim, &extra),
			SROCE_WQE_BAD_OPCODE);
	KUNIT_EXPECT_FALSE(test, sroce_wqe_is_atomic(SROCE_WQE_ATOMIC_WRITE));
	KUNIT_EXPECT_FALSE(test, sroce_wqe_is_local(SROCE_WQE_ATOMIC_WRITE));
}

static void sroce_wqe_reg_test(struct kunit *test)
{
	struct sroce_wqe_reg reg = { .addr = 0x1000, .length = 0x4000,
				     .page_size = SZ_4K };

	KUNIT_EXPECT_EQ(test, sroce_wqe_check_reg(&reg), SROCE_WQE_OK);
	reg.page_size = SZ_2M;
	KUNIT_EXPECT_EQ(test, sroce_wqe_check_reg(&reg), SROCE_WQE_OK);
	reg.page_size = 3000;
	KUNIT_EXPECT_EQ(test, sroce_wqe_check_reg(&reg), SROCE_WQE_BAD_LENGTH);
	reg.page_size = SZ_2K;
	KUNIT_EXPECT_EQ(test, sroce_wqe_check_reg(&reg), SROCE_WQE_BAD_LENGTH);
	reg.page_size = 0;
	KUNIT_EXPECT_EQ(test, sroce_wqe_check_reg(&reg), SROCE_WQE_BAD_LENGTH);
	reg.page_size = SZ_4K;
	reg.addr = U64_MAX - 0xfff;	/* addr + length wraps */
	KUNIT_EXPECT_EQ(test, sroce_wqe_check_reg(&reg), SROCE_WQE_BAD_LENGTH);
	reg.addr = 0x1000;
	reg.reserved_e0 = 1;
	KUNIT_EXPECT_EQ(test, sroce_wqe_check_reg(&reg), SROCE_WQE_BAD_RESERVED);
	KUNIT_EXPECT_EQ(test, sizeof(reg), 32);
	KUNIT_EXPECT_EQ(test, sizeof(struct sroce_wqe_bind), 32);
	KUNIT_EXPECT_EQ(test, offsetof(struct sroce_send_wqe, reg),
			offsetof(struct sroce_send_wqe, raddr));
}

static void sroce_wqe_ud_test(struct kunit *test)
{
	struct sroce_wqe_ud ud = { .remote_qpn = 0xffffff, .flow_label = 0xfffff };

	KUNIT_EXPECT_EQ(test, sroce_wqe_check_ud(&ud, 1024, 1024), SROCE_WQE_OK);
	KUNIT_EXPECT_EQ(test, sroce_wqe_check_ud(&ud, 1025, 1024),
			SROCE_WQE_BAD_LENGTH);
	KUNIT_EXPECT_EQ(test, sroce_wqe_check_ud(&ud, 0, 256), SROCE_WQE_OK);
	ud.remote_qpn = 0x1000000;
	KUNIT_EXPECT_EQ(test, sroce_wqe_check_ud(&ud, 0, 256),
			SROCE_WQE_BAD_RESERVED);
	ud.remote_qpn = 1;
	ud.flow_label = 0x100000;
	KUNIT_EXPECT_EQ(test, sroce_wqe_check_ud(&ud, 0, 256),
			SROCE_WQE_BAD_RESERVED);
	ud.flow_label = 0;
	ud.reserved_f8 = 1;
	KUNIT_EXPECT_EQ(test, sroce_wqe_check_ud(&ud, 0, 256),
			SROCE_WQE_BAD_RESERVED);
}

static void sroce_wqe_bind_test(struct kunit *test)
{
	struct sroce_wqe_bind bind = { .addr = 0x1000, .length = 0x4000 };

	KUNIT_EXPECT_EQ(test, sroce_wqe_check_bind(&bind), SROCE_WQE_OK);
	bind.length = 0;	/* unbinds */
	KUNIT_EXPECT_EQ(test, sroce_wqe_check_bind(&bind), SROCE_WQE_OK);
	bind.addr = U64_MAX;
	bind.length = 2;
	KUNIT_EXPECT_EQ(test, sroce_wqe_check_bind(&bind), SROCE_WQE_BAD_LENGTH);
	bind.addr = 0;
	bind.reserved_e0 = 1;
	KUNIT_EXPECT_EQ(test, sroce_wqe_check_bind(&bind), SROCE_WQE_BAD_RESERVED);
	KUNIT_EXPECT_TRUE(test, sroce_wqe_is_local(SROCE_WQE_BIND_MW));
}

static struct kunit_case sroce_wqe_cases[] = {
	KUNIT_CASE(sroce_wqe_ctrl_test),
	KUNIT_CASE(sroce_wqe_inline_test),
	KUNIT_CASE(sroce_wqe_length_test),
	KUNIT_CASE(sroce_wqe_atomic_test),
	KUNIT_CASE(sroce_wqe_recv_test),
	KUNIT_CASE(sroce_ring_abi_test),
	KUNIT_CASE(sroce_wqe_qp_type_test),
	KUNIT_CASE(sroce_wqe_local_test),
	KUNIT_CASE(sroce_wqe_atomic_write_test),
	KUNIT_CASE(sroce_wqe_reg_test),
	KUNIT_CASE(sroce_wqe_bind_test),
	KUNIT_CASE(sroce_wqe_ud_test),
	{}
};

static struct kunit_suite sroce_wqe_suite = {
	.name = "sroce_wqe",
	.test_cases = sroce_wqe_cases,
};

kunit_test_suite(sroce_wqe_suite);
