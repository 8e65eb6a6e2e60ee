// SPDX-License-Identifier: GPL-2.0
/*
 * The send-WQE encoder both the kernel's posters and the provider use
 * (include/sroce/wqe_enc.h). Each case encodes into a slot filled with a
 * marker byte and reads the fields back at the byte offsets the ABI fixes
 * (uapi/rdma/sroce-abi.h: control 0-31, raddr 32-47, atomic 48-63, data
 * from 64), so that a field written in the wrong place, or a byte written
 * outside what the call owns, fails.
 */
#include <kunit/test.h>
#include <linux/string.h>
#include <sroce/wqe.h>
#include <sroce/wqe_enc.h>

#define SLOT 256
#define MARK 0xa5

static u64 rd64(const u8 *slot, unsigned int off)
{
	u64 v;

	memcpy(&v, slot + off, sizeof(v));
	return v;
}

static u32 rd32(const u8 *slot, unsigned int off)
{
	u32 v;

	memcpy(&v, slot + off, sizeof(v));
	return v;
}

/* Whether slot[from, to) still holds the marker. */
static bool marked(const u8 *slot, unsigned int from, unsigned int to)
{
	for (; from < to; from++)
		if (slot[from] != MARK)
			return false;
	return true;
}

static void sroce_wqe_enc_start_test(struct kunit *test)
{
	u8 *slot = kunit_kzalloc(test, SLOT, GFP_KERNEL);
	struct sroce_send_wqe *wqe = (struct sroce_send_wqe *)slot;

	KUNIT_ASSERT_NOT_NULL(test, slot);
	memset(slot, MARK, SLOT);
	/* 15: fence 1, signaled 2, solicited 4, inline 8 (the verbs' bits) */
	sroce_wqe_enc_start(wqe, SROCE_WQE_RDMA_WRITE, 0x1122334455667788ULL,
			    15);
	KUNIT_EXPECT_EQ(test, slot[0], (u8)SROCE_WQE_RDMA_WRITE);
	/* the WQE's bits: signaled 1, fence 2, solicited 4; no inline */
	KUNIT_EXPECT_EQ(test, slot[1], 7);
	KUNIT_EXPECT_EQ(test, slot[2], 0);		/* num_sge */
	KUNIT_EXPECT_EQ(test, rd32(slot, 4), 0U);	/* inline_len */
	KUNIT_EXPECT_EQ(test, rd64(slot, 8), 0x1122334455667788ULL);
	KUNIT_EXPECT_EQ(test, rd32(slot, 16), 0U);	/* imm_data */
	KUNIT_EXPECT_TRUE(test, !memchr_inv(slot + 17, 0, 64 - 17));
	/* The data area is the next calls' to write. */
	KUNIT_EXPECT_TRUE(test, marked(slot, 64, SLOT));

	sroce_wqe_enc_start(wqe, SROCE_WQE_SEND, 1, 2);
	KUNIT_EXPECT_EQ(test, slot[1], 1);		/* signaled only */
	sroce_wqe_enc_imm(wqe, 0xdeadbeef);
	KUNIT_EXPECT_EQ(test, rd32(slot, 16), 0xdeadbeefU);
}

static void sroce_wqe_enc_remote_test(struct kunit *test)
{
	u8 *slot = kunit_kzalloc(test, SLOT, GFP_KERNEL);
	struct sroce_send_wqe *wqe = (struct sroce_send_wqe *)slot;

	KUNIT_ASSERT_NOT_NULL(test, slot);
	memset(slot, MARK, SLOT);
	sroce_wqe_enc_start(wqe, SROCE_WQE_ATOMIC_CMP_SWP, 9, 0);
	sroce_wqe_enc_atomic(wqe, 0x7000000000001000ULL, 0x12345678,
			     0xaaaaaaaabbbbbbbbULL, 0xccccccccddddddddULL);
	KUNIT_EXPECT_EQ(test, rd64(slot, 32), 0x7000000000001000ULL);
	KUNIT_EXPECT_EQ(test, rd32(slot, 40), 0x12345678U);
	KUNIT_EXPECT_EQ(test, rd32(slot, 44), 0U);	/* reserved */
	KUNIT_EXPECT_EQ(test, rd64(slot, 48), 0xaaaaaaaabbbbbbbbULL);
	KUNIT_EXPECT_EQ(test, rd64(slot, 56), 0xccccccccddddddddULL);

	sroce_wqe_enc_start(wqe, SROCE_WQE_RDMA_READ, 9, 0);
	sroce_wqe_enc_raddr(wqe, 4096, 77);
	KUNIT_EXPECT_EQ(test, rd64(slot, 32), 4096ULL);
	KUNIT_EXPECT_EQ(test, rd32(slot, 40), 77U);
	KUNIT_EXPECT_EQ(test, rd64(slot, 48), 0ULL);	/* cleared by start */

	/* ATOMIC_WRITE: its 8 bytes as they were in memory, compare clear. */
	sroce_wqe_enc_start(wqe, SROCE_WQE_ATOMIC_WRITE, 9, 0);
	sroce_wqe_enc_atomic_write(wqe, 0x2008, 0x55, "ABCDEFGH");
	KUNIT_EXPECT_EQ(test, slot[0], SROCE_WQE_ATOMIC_WRITE);
	KUNIT_EXPECT_EQ(test, rd64(slot, 32), 0x2008ULL);
	KUNIT_EXPECT_EQ(test, rd32(slot, 40), 0x55U);
	KUNIT_EXPECT_EQ(test, memcmp(slot + 48, "ABCDEFGH", 8), 0);
	KUNIT_EXPECT_EQ(test, rd64(slot, 56), 0ULL);
	KUNIT_EXPECT_TRUE(test, marked(slot, 64, SLOT));

	sroce_wqe_enc_start(wqe, SROCE_WQE_BIND_MW, 9, 0);
	sroce_wqe_enc_bind(wqe, 8192, 100, 0x301, 6, 0x200);
	KUNIT_EXPECT_EQ(test, rd64(slot, 32), 8192ULL);	/* addr */
	KUNIT_EXPECT_EQ(test, rd64(slot, 40), 100ULL);	/* length */
	KUNIT_EXPECT_EQ(test, rd32(slot, 48), 0x301U);	/* key */
	KUNIT_EXPECT_EQ(test, rd32(slot, 52), 6U);	/* access */
	KUNIT_EXPECT_EQ(test, rd32(slot, 56), 0x200U);	/* mr_key */
	KUNIT_EXPECT_EQ(test, sroce_wqe_check_bind(&wqe->bind), SROCE_WQE_OK);
	KUNIT_EXPECT_TRUE(test, marked(slot, 64, SLOT));
}

static void sroce_wqe_enc_ud_test(struct kunit *test)
{
	u8 *slot = kunit_kzalloc(test, SLOT, GFP_KERNEL);
	struct sroce_send_wqe *wqe = (struct sroce_send_wqe *)slot;
	struct sroce_wqe_ud av = {
		.dgid = { 0xfe, 0x80, [15] = 1 },
		.remote_qpn = 5, .remote_qkey = 6,	/* replaced */
		.flow_label = 0x12345, .sgid_index = 3, .traffic_class = 4,
		.hop_limit = 64,
	};

	KUNIT_ASSERT_NOT_NULL(test, slot);
	memset(slot, MARK, SLOT);
	sroce_wqe_enc_start(wqe, SROCE_WQE_SEND, 1, 0);
	sroce_wqe_enc_ud(wqe, &av, 0xabcdef, 0x11111111);
	KUNIT_EXPECT_EQ(test, slot[32], 0xfe);		/* dgid */
	KUNIT_EXPECT_EQ(test, slot[47], 1);
	KUNIT_EXPECT_EQ(test, rd32(slot, 48), 0xabcdefU);	/* remote_qpn */
	KUNIT_EXPECT_EQ(test, rd32(slot, 52), 0x11111111U);	/* remote_qkey */
	KUNIT_EXPECT_EQ(test, rd32(slot, 56), 0x12345U);
	KUNIT_EXPECT_EQ(test, slot[60], 3);
	KUNIT_EXPECT_EQ(test, slot[62], 64);
	KUNIT_EXPECT_EQ(test, av.remote_qpn, 5U);	/* the AH's own copy */
}

static void sroce_wqe_enc_sge_test(struct kunit *test)
{
	u8 *slot = kunit_kzalloc(test, SLOT, GFP_KERNEL);
	struct sroce_send_wqe *wqe = (struct sroce_send_wqe *)slot;
	const struct sroce_wqe_limits lim = {
		.opcodes = SROCE_WQE_OPS_RC, .max_sge = 4, .max_inline = 64,
		.slot_size = SLOT,
	};
	size_t extra = 0;

	KUNIT_ASSERT_NOT_NULL(test, slot);
	memset(slot, MARK, SLOT);
	sroce_wqe_enc_start(wqe, SROCE_WQE_SEND, 1, 0);
	sroce_wqe_enc_sge(wqe, 0x1000, 100, 0x11);
	sroce_wqe_enc_sge(wqe, 0x2000, 200, 0x22);
	KUNIT_EXPECT_EQ(test, slot[2], 2);		/* num_sge */
	KUNIT_EXPECT_EQ(test, rd64(slot, 64), 0x1000ULL);
	KUNIT_EXPECT_EQ(test, rd32(slot, 72), 100U);
	KUNIT_EXPECT_EQ(test, rd32(slot, 76), 0x11U);
	KUNIT_EXPECT_EQ(test, rd64(slot, 80), 0x2000ULL);
	KUNIT_EXPECT_EQ(test, rd32(slot, 88), 200U);
	KUNIT_EXPECT_EQ(test, rd32(slot, 92), 0x22U);
	KUNIT_EXPECT_TRUE(test, marked(slot, 96, SLOT));
	/* What the engine reads back: two 16-byte entries follow. */
	KUNIT_EXPECT_EQ(test, sroce_wqe_check_ctrl(&wqe->ctrl, &lim, &extra),
			SROCE_WQE_OK);
	KUNIT_EXPECT_EQ(test, extra, (size_t)32);
}

static void sroce_wqe_enc_inline_test(struct kunit *test)
{
	u8 *slot = kunit_kzalloc(test, SLOT, GFP_KERNEL);
	struct sroce_send_wqe *wqe = (struct sroce_send_wqe *)slot;
	const struct sroce_wqe_limits lim = {
		.opcodes = SROCE_WQE_OPS_RC, .max_sge = 4, .max_inline = 5,
		.slot_size = SLOT,
	};
	size_t extra = 0;

	KUNIT_ASSERT_NOT_NULL(test, slot);
	memset(slot, MARK, SLOT);
	sroce_wqe_enc_start(wqe, SROCE_WQE_SEND, 1, 0);
	KUNIT_EXPECT_EQ(test, sroce_wqe_enc_inline(wqe, "abc", 3, 5), 0);
	KUNIT_EXPECT_EQ(test, sroce_wqe_enc_inline(wqe, "de", 2, 5), 0);
	KUNIT_EXPECT_EQ(test, slot[1], 8);		/* inline */
	KUNIT_EXPECT_EQ(test, rd32(slot, 4), 5U);
	KUNIT_EXPECT_TRUE(test, !memcmp(slot + 64, "abcde", 5));
	/* One byte more does not fit: refused, nothing written. */
	KUNIT_EXPECT_EQ(test, sroce_wqe_enc_inline(wqe, "f", 1, 5), -1);
	KUNIT_EXPECT_EQ(test, rd32(slot, 4), 5U);
	KUNIT_EXPECT_TRUE(test, marked(slot, 69, SLOT));
	KUNIT_EXPECT_EQ(test, sroce_wqe_check_ctrl(&wqe->ctrl, &lim, &extra),
			SROCE_WQE_OK);
	KUNIT_EXPECT_EQ(test, extra, (size_t)5);

	/* A length that would wrap a 32-bit sum is refused. */
	sroce_wqe_enc_start(wqe, SROCE_WQE_SEND, 1, 0);
	KUNIT_EXPECT_EQ(test, sroce_wqe_enc_inline(wqe, "ab", 2, 16), 0);
	KUNIT_EXPECT_EQ(test, sroce_wqe_enc_inline(wqe, "x", 0xffffffffU, 16),
			-1);
	KUNIT_EXPECT_EQ(test, rd32(slot, 4), 2U);

	/* Inline with no data: the flag, no bytes. */
	sroce_wqe_enc_start(wqe, SROCE_WQE_SEND, 1, 0);
	sroce_wqe_enc_inline_begin(wqe);
	KUNIT_EXPECT_EQ(test, slot[1], 8);
	KUNIT_EXPECT_EQ(test, rd32(slot, 4), 0U);
}

/*
 * The send flags a post takes: the four the verbs define for sroce, each
 * alone and together, on every opcode; inline only on SENDs and WRITEs;
 * any other bit (IP_CSUM, reserved, the top one) on none.
 */
static void sroce_wqe_flags_ok_test(struct kunit *test)
{
	const unsigned int plain = SROCE_VERBS_SEND_FENCE |
				   SROCE_VERBS_SEND_SIGNALED |
				   SROCE_VERBS_SEND_SOLICITED;
	unsigned int op, bit;
	bool data;

	for (op = 0; op < SROCE_WQE_OPCODE_COUNT; op++) {
		data = op == SROCE_WQE_SEND || op == SROCE_WQE_SEND_IMM ||
		       op == SROCE_WQE_SEND_INV ||
		       op == SROCE_WQE_RDMA_WRITE ||
		       op == SROCE_WQE_RDMA_WRITE_IMM;
		KUNIT_EXPECT_EQ_MSG(test, sroce_wqe_flags_ok(op, 0), 1,
				    "opcode %u", op);
		KUNIT_EXPECT_EQ_MSG(test, sroce_wqe_flags_ok(op, plain), 1,
				    "opcode %u", op);
		KUNIT_EXPECT_EQ_MSG(test,
				    sroce_wqe_flags_ok(op, SROCE_VERBS_SEND_INLINE),
				    data ? 1 : 0, "opcode %u inline", op);
		KUNIT_EXPECT_EQ_MSG(test,
				    sroce_wqe_flags_ok(op, plain |
						       SROCE_VERBS_SEND_INLINE),
				    data ? 1 : 0, "opcode %u all flags", op);
		for (bit = 4; bit < 32; bit++)
			KUNIT_EXPECT_EQ_MSG(test,
					    sroce_wqe_flags_ok(op, plain | (1U << bit)),
					    0, "opcode %u bit %u", op, bit);
	}
}

static struct kunit_case sroce_wqe_enc_cases[] = {
	KUNIT_CASE(sroce_wqe_enc_start_test),
	KUNIT_CASE(sroce_wqe_enc_remote_test),
	KUNIT_CASE(sroce_wqe_enc_ud_test),
	KUNIT_CASE(sroce_wqe_enc_sge_test),
	KUNIT_CASE(sroce_wqe_enc_inline_test),
	KUNIT_CASE(sroce_wqe_flags_ok_test),
	{}
};

static struct kunit_suite sroce_wqe_enc_suite = {
	.name = "sroce_wqe_enc",
	.test_cases = sroce_wqe_enc_cases,
};

kunit_test_suite(sroce_wqe_enc_suite);
