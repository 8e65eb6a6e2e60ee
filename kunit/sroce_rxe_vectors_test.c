// SPDX-License-Identifier: GPL-2.0
/*
 * Frames rdma_rxe put on the wire (kunit/sroce_rxe_vectors.h): sroce's
 * ICRC must match rxe's to the bit, its parser must read every header rxe
 * wrote, and its builder must write the same header bytes back.
 */
#include <kunit/test.h>
#include <asm/unaligned.h>
#include <sroce/icrc.h>
#include <sroce/roce_hdr.h>
#include "sroce_rxe_vectors.h"

#define ETH_HLEN_ 14
#define UDP_HLEN_ 8

static size_t sroce_ip_hdr_len(const u8 *l3)
{
	return (l3[0] >> 4) == 4 ? 20 : 40;
}

static void sroce_rxe_icrc_test(struct kunit *test)
{
	const struct sroce_rxe_frame *f;
	const u8 *l3;
	size_t l3_len;
	u32 icrc;
	int i;

	for (i = 0; i < ARRAY_SIZE(sroce_rxe_frames); i++) {
		f = &sroce_rxe_frames[i];
		l3 = f->frame + ETH_HLEN_;
		l3_len = f->len - ETH_HLEN_;
		KUNIT_ASSERT_TRUE(test, sroce_icrc_linear(l3, l3_len - IB_ICRC_BYTES,
							  &icrc));
		KUNIT_EXPECT_EQ_MSG(test, icrc,
				    get_unaligned_le32(l3 + l3_len - IB_ICRC_BYTES),
				    "%s", f->what);
	}
}

/*
 * The same frames through the crypto API's crc32, the other way
 * sroce_icrc_choose() may take (under UML crc32-generic: this proves the
 * descriptor's convention, not a CPU's carry-less multiply, which the
 * choice checks against crc32_le when it loads), then through the choice.
 */
static void sroce_rxe_icrc_shash_test(struct kunit *test)
{
	unsigned int mb = 0;
	const char *name;

	KUNIT_ASSERT_EQ(test, sroce_icrc_use_shash(true), 0);
	sroce_rxe_icrc_test(test);
	KUNIT_EXPECT_EQ(test, sroce_icrc_use_shash(false), 0);
	sroce_rxe_icrc_test(test);
	name = sroce_icrc_choose(&mb);
	kunit_info(test, "ICRC by %s, %u MB/s", name, mb);
	KUNIT_EXPECT_GT(test, mb, 0U);
	sroce_rxe_icrc_test(test);
}

static void sroce_rxe_parse_test(struct kunit *test)
{
	const struct sroce_rxe_frame *f;
	struct sroce_pkt pkt;
	const u8 *l3, *bth;
	size_t ip, len;
	u8 hdr[64];
	int i;

	for (i = 0; i < ARRAY_SIZE(sroce_rxe_frames); i++) {
		f = &sroce_rxe_frames[i];
		l3 = f->frame + ETH_HLEN_;
		ip = sroce_ip_hdr_len(l3);
		KUNIT_EXPECT_EQ_MSG(test, get_unaligned_be16(l3 + ip + 2),
				    ROCE_V2_UDP_DPORT, "%s", f->what);
		bth = l3 + ip + UDP_HLEN_;
		len = f->len - ETH_HLEN_ - ip - UDP_HLEN_;

		KUNIT_ASSERT_EQ_MSG(test, sroce_pkt_parse(bth, len, &pkt),
				    SROCE_PKT_OK, "%s", f->what);
		KUNIT_EXPECT_EQ_MSG(test, pkt.opcode, f->opcode, "%s", f->what);
		KUNIT_EXPECT_EQ_MSG(test, (size_t)pkt.hdr_len + pkt.payload_len +
				    pkt.pad + IB_ICRC_BYTES, len, "%s", f->what);
		KUNIT_EXPECT_EQ_MSG(test, pkt.pkey, 0xffff, "%s", f->what);

		KUNIT_ASSERT_EQ_MSG(test, sroce_pkt_build_hdrs(hdr, &pkt),
				    (size_t)pkt.hdr_len, "%s", f->what);
		KUNIT_EXPECT_EQ_MSG(test, memcmp(hdr, bth, pkt.hdr_len), 0,
				    "%s: rebuilt headers differ", f->what);
	}
}

/* What the pad-carrying frames say (61 and 62 byte pingpong messages). */
static void sroce_rxe_pad_test(struct kunit *test)
{
	const struct sroce_rxe_frame *f;
	struct sroce_pkt pkt;
	const u8 *l3;
	size_t ip;
	int i, seen = 0;

	for (i = 0; i < ARRAY_SIZE(sroce_rxe_frames); i++) {
		f = &sroce_rxe_frames[i];
		if (f->opcode != IB_OPCODE_SEND_ONLY || !strstr(f->what, "_s6"))
			continue;
		l3 = f->frame + ETH_HLEN_;
		ip = sroce_ip_hdr_len(l3);
		KUNIT_ASSERT_EQ(test, sroce_pkt_parse(l3 + ip + UDP_HLEN_,
						      f->len - ETH_HLEN_ - ip -
						      UDP_HLEN_, &pkt),
				SROCE_PKT_OK);
		KUNIT_EXPECT_EQ(test, (pkt.payload_len + pkt.pad) % 4, 0);
		KUNIT_EXPECT_TRUE(test,
				  pkt.payload_len == 61 || pkt.payload_len == 62);
		seen++;
	}
	KUNIT_EXPECT_EQ(test, seen, 2);
}

static struct kunit_case sroce_rxe_cases[] = {
	KUNIT_CASE(sroce_rxe_icrc_test),
	KUNIT_CASE(sroce_rxe_icrc_shash_test),
	KUNIT_CASE(sroce_rxe_parse_test),
	KUNIT_CASE(sroce_rxe_pad_test),
	{}
};

/* Whatever a case left, the module's own choice again. */
static void sroce_rxe_exit(struct kunit *test)
{
	unsigned int mb;

	sroce_icrc_release();
	sroce_icrc_choose(&mb);
}

static struct kunit_suite sroce_rxe_suite = {
	.name = "sroce_rxe_vectors",
	.test_cases = sroce_rxe_cases,
	.exit = sroce_rxe_exit,
};

kunit_test_suite(sroce_rxe_suite);
