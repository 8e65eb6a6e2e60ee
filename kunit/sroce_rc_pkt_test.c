// SPDX-License-Identifier: GPL-2.0
/*
 * The packets of an RC message (include/sroce/rc_pkt.h).
 */
#include <kunit/test.h>
#include <rdma/sroce-abi.h>
#include <sroce/rc_pkt.h>
#include <sroce/roce_hdr.h>

static void sroce_rc_npkts_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sroce_rc_npkts(0, 1024), 1);
	KUNIT_EXPECT_EQ(test, sroce_rc_npkts(1, 1024), 1);
	KUNIT_EXPECT_EQ(test, sroce_rc_npkts(1024, 1024), 1);
	KUNIT_EXPECT_EQ(test, sroce_rc_npkts(1025, 1024), 2);
	KUNIT_EXPECT_EQ(test, sroce_rc_npkts(0x80000000U, 256), 0x800000);
	KUNIT_EXPECT_EQ(test, sroce_rc_npkts(0x80000000U, 4096), 0x80000);
	KUNIT_EXPECT_EQ(test, sroce_rc_npkts(0xffffffffU, 4096), 0x100000);
}

/* The packets' lengths add up to the message and each fits the MTU. */
static void sroce_rc_pkt_len_test(struct kunit *test)
{
	static const u32 lens[] = { 0, 1, 255, 256, 257, 4095, 4096, 65537 };
	static const u32 mtus[] = { 256, 1024, 4096 };
	u32 i, j, p, n, sum;

	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		for (j = 0; j < ARRAY_SIZE(mtus); j++) {
			n = sroce_rc_npkts(lens[i], mtus[j]);
			sum = 0;
			for (p = 0; p < n; p++) {
				u32 l = sroce_rc_pkt_len(lens[i], mtus[j], p);

				KUNIT_EXPECT_LE(test, l, mtus[j]);
				if (p + 1 < n)
					KUNIT_EXPECT_EQ(test, l, mtus[j]);
				else if (lens[i])
					KUNIT_EXPECT_GE(test, l, 1);
				sum += l;
			}
			KUNIT_EXPECT_EQ(test, sum, lens[i]);
			KUNIT_EXPECT_EQ(test, sroce_rc_pkt_len(lens[i], mtus[j], n), 0);
		}
	}
}

static void sroce_rc_req_opcode_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sroce_rc_req_opcode(SROCE_WQE_SEND, 0, 1),
			IB_OPCODE_SEND_ONLY);
	KUNIT_EXPECT_EQ(test, sroce_rc_req_opcode(SROCE_WQE_SEND_IMM, 0, 1),
			IB_OPCODE_SEND_ONLY_WITH_IMMEDIATE);
	KUNIT_EXPECT_EQ(test, sroce_rc_req_opcode(SROCE_WQE_SEND, 0, 3),
			IB_OPCODE_SEND_FIRST);
	KUNIT_EXPECT_EQ(test, sroce_rc_req_opcode(SROCE_WQE_SEND, 1, 3),
			IB_OPCODE_SEND_MIDDLE);
	KUNIT_EXPECT_EQ(test, sroce_rc_req_opcode(SROCE_WQE_SEND_IMM, 2, 3),
			IB_OPCODE_SEND_LAST_WITH_IMMEDIATE);
	KUNIT_EXPECT_EQ(test, sroce_rc_req_opcode(SROCE_WQE_RDMA_WRITE, 0, 2),
			IB_OPCODE_RDMA_WRITE_FIRST);
	KUNIT_EXPECT_EQ(test, sroce_rc_req_opcode(SROCE_WQE_RDMA_WRITE, 1, 2),
			IB_OPCODE_RDMA_WRITE_LAST);
	KUNIT_EXPECT_EQ(test, sroce_rc_req_opcode(SROCE_WQE_RDMA_WRITE_IMM, 0, 1),
			IB_OPCODE_RDMA_WRITE_ONLY_WITH_IMMEDIATE);
	KUNIT_EXPECT_EQ(test, sroce_rc_req_opcode(SROCE_WQE_RDMA_WRITE_IMM, 1, 2),
			IB_OPCODE_RDMA_WRITE_LAST_WITH_IMMEDIATE);
	KUNIT_EXPECT_EQ(test, sroce_rc_req_opcode(SROCE_WQE_RDMA_READ, 0, 5),
			IB_OPCODE_RDMA_READ_REQUEST);
	KUNIT_EXPECT_EQ(test, sroce_rc_req_opcode(SROCE_WQE_ATOMIC_CMP_SWP, 0, 1),
			IB_OPCODE_COMPARE_SWAP);
	KUNIT_EXPECT_EQ(test, sroce_rc_req_opcode(SROCE_WQE_ATOMIC_FETCH_ADD, 0, 1),
			IB_OPCODE_FETCH_ADD);
	KUNIT_EXPECT_EQ(test, sroce_rc_req_opcode(SROCE_WQE_ATOMIC_WRITE, 0, 1),
			0x1d);
	KUNIT_EXPECT_EQ(test, sroce_rc_req_opcode(SROCE_WQE_ATOMIC_WRITE, 1, 2),
			SROCE_RC_NO_OPCODE);
	/* No second request packet for one-packet requests, none past the end. */
	KUNIT_EXPECT_EQ(test, sroce_rc_req_opcode(SROCE_WQE_RDMA_READ, 1, 5),
			SROCE_RC_NO_OPCODE);
	KUNIT_EXPECT_EQ(test, sroce_rc_req_opcode(SROCE_WQE_SEND, 3, 3),
			SROCE_RC_NO_OPCODE);
	KUNIT_EXPECT_EQ(test, sroce_rc_req_opcode(SROCE_WQE_OPCODE_COUNT, 0, 1),
			SROCE_RC_NO_OPCODE);
	/* SEND with invalidate: the IETH rides on the last packet only. */
	KUNIT_EXPECT_EQ(test, sroce_rc_req_opcode(SROCE_WQE_SEND_INV, 0, 1),
			IB_OPCODE_SEND_ONLY_WITH_INVALIDATE);
	KUNIT_EXPECT_EQ(test, sroce_rc_req_opcode(SROCE_WQE_SEND_INV, 0, 3),
			IB_OPCODE_SEND_FIRST);
	KUNIT_EXPECT_EQ(test, sroce_rc_req_opcode(SROCE_WQE_SEND_INV, 1, 3),
			IB_OPCODE_SEND_MIDDLE);
	KUNIT_EXPECT_EQ(test, sroce_rc_req_opcode(SROCE_WQE_SEND_INV, 2, 3),
			IB_OPCODE_SEND_LAST_WITH_INVALIDATE);
	/* Local WQEs send nothing. */
	KUNIT_EXPECT_EQ(test, sroce_rc_req_opcode(SROCE_WQE_LOCAL_INV, 0, 1),
			SROCE_RC_NO_OPCODE);
	KUNIT_EXPECT_EQ(test, sroce_rc_req_opcode(SROCE_WQE_REG_MR, 0, 1),
			SROCE_RC_NO_OPCODE);
	KUNIT_EXPECT_EQ(test, sroce_rc_req_opcode(0xff, 0, 1), SROCE_RC_NO_OPCODE);
}

static void sroce_rc_read_resp_opcode_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sroce_rc_read_resp_opcode(0, 1),
			IB_OPCODE_RDMA_READ_RESPONSE_ONLY);
	KUNIT_EXPECT_EQ(test, sroce_rc_read_resp_opcode(0, 3),
			IB_OPCODE_RDMA_READ_RESPONSE_FIRST);
	KUNIT_EXPECT_EQ(test, sroce_rc_read_resp_opcode(1, 3),
			IB_OPCODE_RDMA_READ_RESPONSE_MIDDLE);
	KUNIT_EXPECT_EQ(test, sroce_rc_read_resp_opcode(2, 3),
			IB_OPCODE_RDMA_READ_RESPONSE_LAST);
	KUNIT_EXPECT_EQ(test, sroce_rc_read_resp_opcode(3, 3),
			SROCE_RC_NO_OPCODE);
}

/* A 3-packet READ response, and one asked again from packet 1 or 2. */
static void sroce_rc_read_resp_opcode_ok_test(struct kunit *test)
{
	static const struct {
		u8 opcode;
		u32 pkt, npkts;
		bool ok;
	} cases[] = {
		{ IB_OPCODE_RDMA_READ_RESPONSE_FIRST, 0, 3, true },
		{ IB_OPCODE_RDMA_READ_RESPONSE_MIDDLE, 1, 3, true },
		{ IB_OPCODE_RDMA_READ_RESPONSE_FIRST, 1, 3, true },
		{ IB_OPCODE_RDMA_READ_RESPONSE_LAST, 2, 3, true },
		{ IB_OPCODE_RDMA_READ_RESPONSE_ONLY, 2, 3, true },
		{ IB_OPCODE_RDMA_READ_RESPONSE_ONLY, 0, 1, true },
		/* The end before the last packet, a middle first, or past. */
		{ IB_OPCODE_RDMA_READ_RESPONSE_LAST, 1, 3, false },
		{ IB_OPCODE_RDMA_READ_RESPONSE_ONLY, 1, 3, false },
		{ IB_OPCODE_RDMA_READ_RESPONSE_MIDDLE, 0, 3, false },
		{ IB_OPCODE_RDMA_READ_RESPONSE_MIDDLE, 2, 3, false },
		{ IB_OPCODE_RDMA_READ_RESPONSE_FIRST, 3, 3, false },
		{ IB_OPCODE_ATOMIC_ACKNOWLEDGE, 0, 1, false },
	};
	bool ok;
	u32 i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		ok = sroce_rc_read_resp_opcode_ok(cases[i].opcode, cases[i].pkt,
						  cases[i].npkts);
		KUNIT_EXPECT_EQ_MSG(test, ok, cases[i].ok, "case %u", i);
	}
}

/* Every opcode sequence a requester builds is one a responder accepts. */
static void sroce_rc_seq_roundtrip_test(struct kunit *test)
{
	enum sroce_rc_seq seq;
	u32 op, n, p;

	for (op = SROCE_WQE_SEND; op <= SROCE_WQE_ATOMIC_FETCH_ADD; op++) {
		for (n = 1; n <= 4; n++) {
			seq = SROCE_RC_SEQ_NONE;
			for (p = 0; p < n; p++) {
				u8 opc = sroce_rc_req_opcode(op, p, n);

				if (opc == SROCE_RC_NO_OPCODE)
					break;
				seq = sroce_rc_seq_next(seq, opc);
				KUNIT_ASSERT_NE(test, seq, SROCE_RC_SEQ_INVALID);
			}
			KUNIT_EXPECT_EQ(test, seq, SROCE_RC_SEQ_NONE);
		}
	}
}

static void sroce_rc_seq_violations_test(struct kunit *test)
{
	/* A message cannot start in its middle or at its end. */
	KUNIT_EXPECT_EQ(test, sroce_rc_seq_next(SROCE_RC_SEQ_NONE,
						IB_OPCODE_SEND_MIDDLE),
			SROCE_RC_SEQ_INVALID);
	KUNIT_EXPECT_EQ(test, sroce_rc_seq_next(SROCE_RC_SEQ_NONE,
						IB_OPCODE_RDMA_WRITE_LAST),
			SROCE_RC_SEQ_INVALID);
	/* Nothing else may interleave with an open SEND or WRITE. */
	KUNIT_EXPECT_EQ(test, sroce_rc_seq_next(SROCE_RC_SEQ_SEND,
						IB_OPCODE_RDMA_WRITE_MIDDLE),
			SROCE_RC_SEQ_INVALID);
	KUNIT_EXPECT_EQ(test, sroce_rc_seq_next(SROCE_RC_SEQ_SEND,
						IB_OPCODE_SEND_ONLY),
			SROCE_RC_SEQ_INVALID);
	KUNIT_EXPECT_EQ(test, sroce_rc_seq_next(SROCE_RC_SEQ_WRITE,
						IB_OPCODE_RDMA_READ_REQUEST),
			SROCE_RC_SEQ_INVALID);
	KUNIT_EXPECT_EQ(test, sroce_rc_seq_next(SROCE_RC_SEQ_WRITE,
						IB_OPCODE_SEND_LAST),
			SROCE_RC_SEQ_INVALID);
	/* Responses and other transports are not requests of this QP. */
	KUNIT_EXPECT_EQ(test, sroce_rc_seq_next(SROCE_RC_SEQ_NONE,
						IB_OPCODE_ACKNOWLEDGE),
			SROCE_RC_SEQ_INVALID);
	KUNIT_EXPECT_EQ(test, sroce_rc_seq_next(SROCE_RC_SEQ_NONE,
						IB_OPCODE_UC | IB_OPCODE_SEND_ONLY),
			SROCE_RC_SEQ_INVALID);
	KUNIT_EXPECT_EQ(test, sroce_rc_seq_next(SROCE_RC_SEQ_NONE, 0x1f),
			SROCE_RC_SEQ_INVALID);
}

static void sroce_rc_payload_ok_test(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, sroce_rc_payload_ok(IB_OPCODE_SEND_ONLY, 0, 1024));
	KUNIT_EXPECT_TRUE(test, sroce_rc_payload_ok(IB_OPCODE_SEND_ONLY, 1024, 1024));
	KUNIT_EXPECT_FALSE(test, sroce_rc_payload_ok(IB_OPCODE_SEND_ONLY, 1025, 1024));
	KUNIT_EXPECT_TRUE(test, sroce_rc_payload_ok(IB_OPCODE_SEND_FIRST, 1024, 1024));
	KUNIT_EXPECT_FALSE(test, sroce_rc_payload_ok(IB_OPCODE_SEND_FIRST, 1000, 1024));
	KUNIT_EXPECT_FALSE(test, sroce_rc_payload_ok(IB_OPCODE_RDMA_WRITE_MIDDLE, 1023, 1024));
	KUNIT_EXPECT_TRUE(test, sroce_rc_payload_ok(IB_OPCODE_RDMA_WRITE_LAST, 1, 1024));
	KUNIT_EXPECT_FALSE(test, sroce_rc_payload_ok(IB_OPCODE_RDMA_WRITE_LAST, 0, 1024));
	KUNIT_EXPECT_FALSE(test,
			   sroce_rc_payload_ok(IB_OPCODE_RDMA_WRITE_LAST_WITH_IMMEDIATE,
					       2048, 1024));
	KUNIT_EXPECT_TRUE(test, sroce_rc_payload_ok(IB_OPCODE_RDMA_READ_REQUEST, 0, 1024));
	KUNIT_EXPECT_FALSE(test, sroce_rc_payload_ok(IB_OPCODE_RDMA_READ_REQUEST, 4, 1024));
	KUNIT_EXPECT_FALSE(test, sroce_rc_payload_ok(0x1f, 0, 1024));
}

static void sroce_aeth_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sroce_aeth_kind(sroce_aeth_ack()),
			SROCE_AETH_KIND_ACK);
	KUNIT_EXPECT_EQ(test, sroce_aeth_ack(), 0x1f);
	KUNIT_EXPECT_EQ(test, sroce_aeth_rnr(14), 0x2e);
	KUNIT_EXPECT_EQ(test, sroce_aeth_kind(sroce_aeth_rnr(31)),
			SROCE_AETH_KIND_RNR);
	KUNIT_EXPECT_EQ(test, sroce_aeth_nak(SROCE_NAK_REMOTE_ACCESS), 0x62);
	KUNIT_EXPECT_EQ(test, sroce_aeth_kind(0x60), SROCE_AETH_KIND_NAK);
	KUNIT_EXPECT_EQ(test, sroce_aeth_kind(0x40), SROCE_AETH_KIND_RESERVED);
}

/* A 10000-byte READ at PSN 100, answered in 1024-byte packets. */
static const struct sroce_rc_read sroce_test_read = {
	.psn = 100, .va = 0x10000, .len = 10000, .rkey = 0x1234,
};

static void sroce_rc_read_replay_ok_test(struct kunit *test)
{
	const struct sroce_rc_read *r = &sroce_test_read;
	struct sroce_rc_read d;
	u32 off = ~0U;

	d = *r;
	KUNIT_EXPECT_TRUE(test, sroce_rc_read_replay_ok(r, &d, 1024, &off));
	KUNIT_EXPECT_EQ(test, off, 0);
	/* Resent from its fourth response packet, as a requester does. */
	d = (struct sroce_rc_read){ .psn = 103, .va = 0x10000 + 3072,
				    .len = 10000 - 3072, .rkey = 0x1234 };
	KUNIT_EXPECT_TRUE(test, sroce_rc_read_replay_ok(r, &d, 1024, &off));
	KUNIT_EXPECT_EQ(test, off, 3072);
	d.psn = 109;		/* its last packet */
	d.va = 0x10000 + 9216;
	d.len = 10000 - 9216;
	KUNIT_EXPECT_TRUE(test, sroce_rc_read_replay_ok(r, &d, 1024, &off));
}

/* A duplicate may not ask for anything the original READ did not. */
static void sroce_rc_read_replay_refused_test(struct kunit *test)
{
	const struct sroce_rc_read *r = &sroce_test_read;
	struct sroce_rc_read d;
	u32 off;

	d = *r;
	d.rkey = 0;
	KUNIT_EXPECT_FALSE(test, sroce_rc_read_replay_ok(r, &d, 1024, &off));
	d = *r;
	d.va = 0xffff888000000000ULL;
	KUNIT_EXPECT_FALSE(test, sroce_rc_read_replay_ok(r, &d, 1024, &off));
	d = *r;
	d.len = 0x80000000U;	/* amplification */
	KUNIT_EXPECT_FALSE(test, sroce_rc_read_replay_ok(r, &d, 1024, &off));
	d = *r;
	d.len = 100;		/* a shorter READ is another READ */
	KUNIT_EXPECT_FALSE(test, sroce_rc_read_replay_ok(r, &d, 1024, &off));
	/* PSNs outside its responses, before and after, and wrapped. */
	d = *r;
	d.psn = 99;
	KUNIT_EXPECT_FALSE(test, sroce_rc_read_replay_ok(r, &d, 1024, &off));
	d.psn = 110;
	d.va = 0x10000 + 10240;
	d.len = 0;
	KUNIT_EXPECT_FALSE(test, sroce_rc_read_replay_ok(r, &d, 1024, &off));
	d.psn = 100 + 0x1000000;
	KUNIT_EXPECT_FALSE(test, sroce_rc_read_replay_ok(r, &d, 1024, &off));
	/* The right PSN but the offset of another packet. */
	d = (struct sroce_rc_read){ .psn = 103, .va = 0x10000 + 2048,
				    .len = 10000 - 2048, .rkey = 0x1234 };
	KUNIT_EXPECT_FALSE(test, sroce_rc_read_replay_ok(r, &d, 1024, &off));
}

/* Across the PSN wrap, and a zero-length READ. */
static void sroce_rc_read_replay_wrap_test(struct kunit *test)
{
	const struct sroce_rc_read r = {
		.psn = 0xfffffe, .va = 0x2000, .len = 4096, .rkey = 7,
	};
	const struct sroce_rc_read z = { .psn = 5, .va = 0, .len = 0,
					 .rkey = 0 };
	struct sroce_rc_read d = { .psn = 1, .va = 0x2000 + 3072, .len = 1024,
				   .rkey = 7 };
	u32 off;

	KUNIT_EXPECT_TRUE(test, sroce_rc_read_replay_ok(&r, &d, 1024, &off));
	KUNIT_EXPECT_EQ(test, off, 3072);
	d.psn = 2;
	KUNIT_EXPECT_FALSE(test, sroce_rc_read_replay_ok(&r, &d, 1024, &off));
	d = z;
	KUNIT_EXPECT_TRUE(test, sroce_rc_read_replay_ok(&z, &d, 1024, &off));
	d.len = 4096;
	KUNIT_EXPECT_FALSE(test, sroce_rc_read_replay_ok(&z, &d, 1024, &off));
}

static struct kunit_case sroce_rc_pkt_cases[] = {
	KUNIT_CASE(sroce_rc_read_replay_ok_test),
	KUNIT_CASE(sroce_rc_read_replay_refused_test),
	KUNIT_CASE(sroce_rc_read_replay_wrap_test),
	KUNIT_CASE(sroce_rc_npkts_test),
	KUNIT_CASE(sroce_rc_pkt_len_test),
	KUNIT_CASE(sroce_rc_req_opcode_test),
	KUNIT_CASE(sroce_rc_read_resp_opcode_test),
	KUNIT_CASE(sroce_rc_read_resp_opcode_ok_test),
	KUNIT_CASE(sroce_rc_seq_roundtrip_test),
	KUNIT_CASE(sroce_rc_seq_violations_test),
	KUNIT_CASE(sroce_rc_payload_ok_test),
	KUNIT_CASE(sroce_aeth_test),
	{}
};

static struct kunit_suite sroce_rc_pkt_suite = {
	.name = "sroce_rc_pkt",
	.test_cases = sroce_rc_pkt_cases,
};

kunit_test_suite(sroce_rc_pkt_suite);
