// SPDX-License-Identifier: GPL-2.0
/*
 * RoCEv2 transport headers (include/sroce/roce_hdr.h).
 */
#include <kunit/test.h>
#include <linux/random.h>
#include <sroce/roce_hdr.h>

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
	 * ACK, 2 atomics, 2 SEND with invalidate; UC: 12; UD: 2.
	 */
	KUNIT_EXPECT_EQ(test, known, 23 + 12 + 2);
}

static void sroce_fill_random(struct sroce_pkt *pkt, u8 opcode)
{
	memset(pkt, 0, sizeof(*pkt));
	pkt->opcode = opcode;
	pkt->solicited = get_random_u32() & 1;
	pkt->migreq = get_random_u32() & 1;
	pkt->pkey = get_random_u32();
	pkt->fecn = get_random_u32() & 1;
	pkt->becn = get_random_u32() & 1;
	pkt->dest_qpn = get_random_u32() & 0xffffff;
	pkt->ack_req = get_random_u32() & 1;
	pkt->psn = get_random_u32() & 0xffffff;
}

/* Every opcode: what the builder writes, the parser reads back. */
static void sroce_roundtrip_test(struct kunit *test)
{
	const struct sroce_opcode_info *info;
	struct sroce_pkt in, out;
	u8 buf[128];
	int op, round;
	size_t len, payload;

	for (op = 0; op < 256; op++) {
		info = sroce_opcode_info(op);
		if (!info)
			continue;
		for (round = 0; round < 8; round++) {
			sroce_fill_random(&in, op);
			if (info->flags & SROCE_HDR_DETH) {
				in.deth_qkey = get_random_u32();
				in.deth_src_qpn = get_random_u32() & 0xffffff;
			}
			if (info->flags & SROCE_HDR_RETH) {
				in.reth_va = get_random_u64();
				in.reth_rkey = get_random_u32();
				in.reth_len = get_random_u32();
			}
			if (info->flags & SROCE_HDR_ATMETH) {
				in.atm_va = get_random_u64();
				in.atm_rkey = get_random_u32();
				in.atm_swap_add = get_random_u64();
				in.atm_compare = get_random_u64();
			}
			if (info->flags & SROCE_HDR_AETH) {
				in.aeth_syndrome = get_random_u32();
				in.aeth_msn = get_random_u32() & 0xffffff;
			}
			if (info->flags & SROCE_HDR_ATMACK)
				in.atmack_orig = get_random_u64();
			if (info->flags & SROCE_HDR_IMMDT)
				in.imm = get_random_u32();
			if (info->flags & SROCE_HDR_IETH)
				in.ieth_rkey = get_random_u32();
			payload = 0;
			if (info->flags & SROCE_HDR_PAYLOAD) {
				payload = get_random_u32() % 40;
				in.pad = -payload & 3;
			}

			len = sroce_pkt_build_hdrs(buf, &in);
			KUNIT_ASSERT_EQ_MSG(test, len, sroce_opcode_hdr_len(info), "%s",
					    info->name);
			memset(buf + len, 0x5a, payload + in.pad + SROCE_ICRC_LEN);
			in.hdr_len = len;
			in.payload_len = payload;
			len += payload + in.pad + SROCE_ICRC_LEN;

			KUNIT_ASSERT_EQ_MSG(test, sroce_pkt_parse(buf, len, &out),
					    SROCE_PKT_OK, "%s", info->name);
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
	u8 *buf;
	size_t len;
	int i;

	buf = kunit_kmalloc(test, 96, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	for (i = 0; i < 20000; i++) {
		len = get_random_u32() % 97;
		get_random_bytes(buf, len);
		if (i & 1)
			buf[0] &= 0x1f;	/* mostly RC opcodes */
		if (sroce_pkt_parse(buf, len, &pkt) != SROCE_PKT_OK)
			continue;
		KUNIT_ASSERT_EQ(test, (size_t)pkt.hdr_len + pkt.payload_len +
				pkt.pad + SROCE_ICRC_LEN, len);
		KUNIT_ASSERT_EQ(test, (size_t)pkt.hdr_len,
				sroce_opcode_hdr_len(sroce_opcode_info(buf[0])));
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
