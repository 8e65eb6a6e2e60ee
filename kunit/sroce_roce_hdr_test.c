// SPDX-License-Identifier: GPL-2.0
/*
 * RoCEv2 transport headers (include/sroce/roce_hdr.h).
 */
#include <kunit/test.h>
#include <sroce/roce_hdr.h>
#include "sroce_kunit_rand.h"

/*
 * The header bytes of an opcode by IBTA's tables (BTH 12, RETH 16, AETH 4,
 * AtomicETH 28, AtomicAckETH 8, ImmDt 4, IETH 4, DETH 8), written here
 * apart from the code under test: by the low five bits of the opcode, plus
 * DETH for UD.
 */
static size_t ibta_hdr_len(u8 opcode)
{
	static const u8 ext[32] = {
		[0x03] = 4, [0x05] = 4,			/* SEND ... IMM */
		[0x06] = 16, [0x09] = 4, [0x0a] = 16,	/* WRITE */
		[0x0b] = 20, [0x0c] = 16,		/* WRITE_ONLY_IMM, READ */
		[0x0d] = 4, [0x0f] = 4, [0x10] = 4,	/* READ responses */
		[0x11] = 4, [0x12] = 12,		/* ACK, atomic ACK */
		[0x13] = 28, [0x14] = 28,		/* atomics */
		[0x16] = 4, [0x17] = 4,			/* SEND ... INV */
		[0x1d] = 16,				/* ATOMIC WRITE */
	};

	return 12 + ext[opcode & 0x1f] + ((opcode >> 5) == 3 ? 8 : 0);
}

struct sroce_hdr_len_case {
	u8 opcode;
	u8 hdr_len;
};

static const struct sroce_hdr_len_case sroce_hdr_lens[] = {
	{ IB_OPCODE_SEND_ONLY, 12 },
	{ IB_OPCODE_SEND_ONLY_WITH_IMMEDIATE, 16 },
	{ IB_OPCODE_SEND_ONLY_WITH_INVALIDATE, 16 },
	{ IB_OPCODE_RDMA_WRITE_FIRST, 28 },
	{ IB_OPCODE_RDMA_WRITE_MIDDLE, 12 },
	{ IB_OPCODE_RDMA_WRITE_LAST_WITH_IMMEDIATE, 16 },
	{ IB_OPCODE_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 32 },
	{ IB_OPCODE_RDMA_READ_REQUEST, 28 },
	{ IB_OPCODE_RDMA_READ_RESPONSE_FIRST, 16 },
	{ IB_OPCODE_RDMA_READ_RESPONSE_MIDDLE, 12 },
	{ IB_OPCODE_ACKNOWLEDGE, 16 },
	{ IB_OPCODE_ATOMIC_ACKNOWLEDGE, 24 },
	{ IB_OPCODE_COMPARE_SWAP, 40 },
	{ IB_OPCODE_FETCH_ADD, 40 },
	{ SROCE_OPCODE_ATOMIC_WRITE, 28 },
	{ IB_OPCODE_UC | IB_OPCODE_RDMA_WRITE_ONLY, 28 },
	{ IB_OPCODE_UD | IB_OPCODE_SEND_ONLY, 20 },
	{ IB_OPCODE_UD | IB_OPCODE_SEND_ONLY_WITH_IMMEDIATE, 24 },
};

static void sroce_hdr_len_test(struct kunit *test)
{
	const struct sroce_opcode_info *info;
	int i;

	for (i = 0; i < ARRAY_SIZE(sroce_hdr_lens); i++) {
		info = sroce_opcode_info(sroce_hdr_lens[i].opcode);
		KUNIT_ASSERT_NOT_NULL(test, info);
		KUNIT_EXPECT_EQ_MSG(test, sroce_opcode_hdr_len(info),
				    (size_t)sroce_hdr_lens[i].hdr_len,
				    "%s", info->name);
		KUNIT_EXPECT_EQ_MSG(test, ibta_hdr_len(sroce_hdr_lens[i].opcode),
				    (size_t)sroce_hdr_lens[i].hdr_len,
				    "the test's own table, %s", info->name);
	}
	for (i = 0; i < 256; i++) {
		info = sroce_opcode_info(i);
		if (info)
			KUNIT_EXPECT_EQ_MSG(test, sroce_opcode_hdr_len(info),
					    ibta_hdr_len(i), "%s", info->name);
	}
}

/* RD, XRC, CNP, reserved, and what UC and UD do not have. */
static void sroce_unknown_opcode_test(struct kunit *test)
{
	static const u8 unknown[] = {
		0x15, 0x18, 0x1f, 0x40, 0x44, 0x81, 0xa0, 0xa4, 0xe0,
		IB_OPCODE_UC | IB_OPCODE_RDMA_READ_REQUEST,
		IB_OPCODE_UC | IB_OPCODE_ACKNOWLEDGE,
		IB_OPCODE_UC | IB_OPCODE_SEND_ONLY_WITH_INVALIDATE,
		IB_OPCODE_UC | SROCE_OPCODE_ATOMIC_WRITE,
		IB_OPCODE_UD | SROCE_OPCODE_ATOMIC_WRITE,
		IB_OPCODE_UD | IB_OPCODE_SEND_FIRST,
		IB_OPCODE_UD | IB_OPCODE_RDMA_WRITE_ONLY,
	};
	int i, known = 0;

	for (i = 0; i < ARRAY_SIZE(unknown); i++)
		KUNIT_EXPECT_NULL_MSG(test, sroce_opcode_info(unknown[i]),
				      "opcode 0x%02x", unknown[i]);
	for (i = 0; i < 256; i++)
		known += !!sroce_opcode_info(i);
	/* RC: 6 SEND, 6 WRITE, READ request and 4 responses, ACK, atomic
	 * ACK, 2 atomics, 2 SEND with invalidate, ATOMIC WRITE; UC: 12;
	 * UD: 2.
	 */
	KUNIT_EXPECT_EQ(test, known, 24 + 12 + 2);
}

static void sroce_fill_random(struct sroce_pkt *pkt, u8 opcode,
			      struct rnd_state *rnd)
{
	memset(pkt, 0, sizeof(*pkt));
	pkt->opcode = opcode;
	pkt->solicited = prandom_u32_state(rnd) & 1;
	pkt->migreq = prandom_u32_state(rnd) & 1;
	pkt->pkey = prandom_u32_state(rnd);
	pkt->fecn = prandom_u32_state(rnd) & 1;
	pkt->becn = prandom_u32_state(rnd) & 1;
	pkt->dest_qpn = prandom_u32_state(rnd) & 0xffffff;
	pkt->ack_req = prandom_u32_state(rnd) & 1;
	pkt->psn = prandom_u32_state(rnd) & 0xffffff;
}

/* Every opcode: what the builder writes, the parser reads back. */
static void sroce_roundtrip_test(struct kunit *test)
{
	const struct sroce_opcode_info *info;
	struct sroce_pkt in, out;
	u8 buf[128];
	struct rnd_state rnd;
	int op, round;
	size_t len, payload;

	sroce_kunit_rand_start(test, &rnd);

	for (op = 0; op < 256; op++) {
		info = sroce_opcode_info(op);
		if (!info)
			continue;
		for (round = 0; round < 8; round++) {
			sroce_fill_random(&in, op, &rnd);
			if (info->flags & SROCE_HDR_DETH) {
				in.deth_qkey = prandom_u32_state(&rnd);
				in.deth_src_qpn = prandom_u32_state(&rnd) & 0xffffff;
			}
			if (info->flags & SROCE_HDR_RETH) {
				in.reth_va = sroce_kunit_u64(&rnd);
				in.reth_rkey = prandom_u32_state(&rnd);
				in.reth_len = prandom_u32_state(&rnd);
			}
			if (info->flags & SROCE_HDR_ATMETH) {
				in.atm_va = sroce_kunit_u64(&rnd);
				in.atm_rkey = prandom_u32_state(&rnd);
				in.atm_swap_add = sroce_kunit_u64(&rnd);
				in.atm_compare = sroce_kunit_u64(&rnd);
			}
			if (info->flags & SROCE_HDR_AETH) {
				in.aeth_syndrome = prandom_u32_state(&rnd);
				in.aeth_msn = prandom_u32_state(&rnd) & 0xffffff;
			}
			if (info->flags & SROCE_HDR_ATMACK)
				in.atmack_orig = sroce_kunit_u64(&rnd);
			if (info->flags & SROCE_HDR_IMMDT)
				in.imm = prandom_u32_state(&rnd);
			if (info->flags & SROCE_HDR_IETH)
				in.ieth_rkey = prandom_u32_state(&rnd);
			payload = 0;
			if (info->flags & SROCE_HDR_PAYLOAD) {
				payload = prandom_u32_state(&rnd) % 40;
				in.pad = -payload & 3;
			}

			len = sroce_pkt_build_hdrs(buf, &in);
			KUNIT_ASSERT_EQ_MSG(test, len, ibta_hdr_len(op), "%s",
					    info->name);
			memset(buf + len, 0x5a, payload + in.pad + IB_ICRC_BYTES);
			in.hdr_len = len;
			in.payload_len = payload;
			len += payload + in.pad + IB_ICRC_BYTES;

			KUNIT_ASSERT_EQ_MSG(test, sroce_pkt_parse(buf, len, &out),
					    SROCE_PKT_OK, "%s", info->name);
			/* What the softirq reads before any parse. */
			KUNIT_ASSERT_EQ(test, sroce_bth_opcode(buf), op);
			KUNIT_ASSERT_EQ(test, sroce_bth_dest_qpn(buf), in.dest_qpn);
			KUNIT_ASSERT_EQ_MSG(test, memcmp(&in, &out, sizeof(in)), 0,
					    "%s round %d", info->name, round);
		}
	}
}

static size_t sroce_build(u8 *buf, u8 opcode, u8 pad)
{
	struct sroce_pkt pkt = { .opcode = opcode, .pad = pad };

	return sroce_pkt_build_hdrs(buf, &pkt);
}

static void sroce_parse_errors_test(struct kunit *test)
{
	struct sroce_pkt pkt;
	u8 buf[64] = {};
	size_t len;

	KUNIT_EXPECT_EQ(test, sroce_pkt_parse(buf, 15, &pkt), SROCE_PKT_TOO_SHORT);
	KUNIT_EXPECT_EQ(test, sroce_pkt_parse(buf, 0, &pkt), SROCE_PKT_TOO_SHORT);

	buf[0] = 0x15;
	KUNIT_EXPECT_EQ(test, sroce_pkt_parse(buf, 20, &pkt), SROCE_PKT_BAD_OPCODE);

	len = sroce_build(buf, IB_OPCODE_SEND_ONLY, 0);
	buf[1] |= 0x01;
	KUNIT_EXPECT_EQ(test, sroce_pkt_parse(buf, len + 4, &pkt), SROCE_PKT_BAD_TVER);

	/* A READ request needs its RETH. */
	len = sroce_build(buf, IB_OPCODE_RDMA_READ_REQUEST, 0);
	KUNIT_EXPECT_EQ(test, sroce_pkt_parse(buf, len + 3, &pkt), SROCE_PKT_TOO_SHORT);
	KUNIT_EXPECT_EQ(test, sroce_pkt_parse(buf, len + 4, &pkt), SROCE_PKT_OK);
	KUNIT_EXPECT_EQ(test, sroce_pkt_parse(buf, len + 8, &pkt), SROCE_PKT_BAD_PAYLOAD);

	len = sroce_build(buf, IB_OPCODE_ACKNOWLEDGE, 2);
	KUNIT_EXPECT_EQ(test, sroce_pkt_parse(buf, len + 6, &pkt), SROCE_PKT_BAD_PAD);

	/* Pad larger than what follows the headers. */
	len = sroce_build(buf, IB_OPCODE_SEND_ONLY, 3);
	KUNIT_EXPECT_EQ(test, sroce_pkt_parse(buf, len + 2 + 4, &pkt), SROCE_PKT_TOO_SHORT);
	KUNIT_EXPECT_EQ(test, sroce_pkt_parse(buf, len + 3 + 4, &pkt), SROCE_PKT_OK);
	KUNIT_EXPECT_EQ(test, pkt.payload_len, 0);
}

/* Random bytes: the parser either refuses or accounts for every byte. */
static void sroce_parse_random_test(struct kunit *test)
{
	struct sroce_pkt pkt;
	struct rnd_state rnd;
	u8 *buf;
	size_t len;
	int i;

	buf = kunit_kmalloc(test, 96, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	sroce_kunit_rand_start(test, &rnd);
	for (i = 0; i < 20000; i++) {
		len = prandom_u32_state(&rnd) % 97;
		prandom_bytes_state(&rnd, buf, len);
		if (i & 1)
			buf[0] &= 0x1f;	/* mostly RC opcodes */
		if (sroce_pkt_parse(buf, len, &pkt) != SROCE_PKT_OK)
			continue;
		KUNIT_ASSERT_EQ(test, (size_t)pkt.hdr_len + pkt.payload_len +
				pkt.pad + IB_ICRC_BYTES, len);
		KUNIT_ASSERT_EQ(test, (size_t)pkt.hdr_len, ibta_hdr_len(buf[0]));
	}
}

/* Only the default key matches, as a full or a limited member. */
static void sroce_pkey_test(struct kunit *test)
{
	u32 pkey;

	for (pkey = 0; pkey <= 0xffff; pkey++)
		KUNIT_EXPECT_EQ_MSG(test, sroce_pkey_matches_default(pkey),
				    pkey == 0xffff || pkey == 0x7fff,
				    "pkey %#x", pkey);
}

static struct kunit_case sroce_roce_hdr_cases[] = {
	KUNIT_CASE(sroce_hdr_len_test),
	KUNIT_CASE(sroce_unknown_opcode_test),
	KUNIT_CASE(sroce_roundtrip_test),
	KUNIT_CASE(sroce_parse_errors_test),
	KUNIT_CASE(sroce_parse_random_test),
	KUNIT_CASE(sroce_pkey_test),
	{}
};

static struct kunit_suite sroce_roce_hdr_suite = {
	.name = "sroce_roce_hdr",
	.test_cases = sroce_roce_hdr_cases,
};

kunit_test_suite(sroce_roce_hdr_suite);
