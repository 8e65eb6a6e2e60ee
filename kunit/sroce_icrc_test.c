// SPDX-License-Identifier: GPL-2.0
/*
 * ICRC of RoCEv2 packets (include/sroce/icrc.h).
 */
#include <kunit/test.h>
#include <sroce/icrc.h>
#include <sroce/roce_hdr.h>
#include "sroce_kunit_rand.h"

#define V4_LEN (20 + 8 + 12 + 32)	/* IPv4, UDP, BTH, 32 bytes payload */
#define V6_LEN (40 + 8 + 12 + 32)

static void sroce_fill_v4(u8 *p, struct rnd_state *rnd)
{
	prandom_bytes_state(rnd, p, V4_LEN);
	p[0] = 0x45;
}

static void sroce_fill_v6(u8 *p, struct rnd_state *rnd)
{
	prandom_bytes_state(rnd, p, V6_LEN);
	p[0] = 0x60 | (p[0] & 0x0f);
}

static u32 sroce_icrc_of(struct kunit *test, const u8 *p, size_t len)
{
	u32 icrc;

	KUNIT_ASSERT_TRUE(test, sroce_icrc_linear(p, len, &icrc));
	return icrc;
}

/* Bytes a router may change do not change the ICRC. */
static void sroce_icrc_variant_test(struct kunit *test)
{
	static const int v4_variant[] = { 1, 8, 10, 11, 26, 27, 32 };
	static const int v6_variant[] = { 1, 2, 3, 7, 46, 47, 52 };
	u8 p[V6_LEN], q[V6_LEN];
	struct rnd_state rnd;
	u32 ref;
	int i;

	sroce_kunit_rand_start(test, &rnd);
	sroce_fill_v4(p, &rnd);
	ref = sroce_icrc_of(test, p, V4_LEN);
	for (i = 0; i < ARRAY_SIZE(v4_variant); i++) {
		memcpy(q, p, V4_LEN);
		q[v4_variant[i]] ^= 0x5a;
		KUNIT_EXPECT_EQ_MSG(test, sroce_icrc_of(test, q, V4_LEN), ref,
				    "IPv4 byte %d", v4_variant[i]);
	}
	/* The low nibble of IPv6 byte 0 is traffic class. */
	sroce_fill_v6(p, &rnd);
	ref = sroce_icrc_of(test, p, V6_LEN);
	memcpy(q, p, V6_LEN);
	q[0] ^= 0x0f;
	KUNIT_EXPECT_EQ(test, sroce_icrc_of(test, q, V6_LEN), ref);
	for (i = 0; i < ARRAY_SIZE(v6_variant); i++) {
		memcpy(q, p, V6_LEN);
		q[v6_variant[i]] ^= 0xa5;
		KUNIT_EXPECT_EQ_MSG(test, sroce_icrc_of(test, q, V6_LEN), ref,
				    "IPv6 byte %d", v6_variant[i]);
	}
}

/* Every other byte is covered. */
static void sroce_icrc_invariant_test(struct kunit *test)
{
	static const int v4_variant[] = { 1, 8, 10, 11, 26, 27, 32 };
	u8 p[V4_LEN], q[V4_LEN];
	struct rnd_state rnd;
	u32 ref;
	int i, j;
	bool variant;

	sroce_kunit_rand_start(test, &rnd);
	sroce_fill_v4(p, &rnd);
	ref = sroce_icrc_of(test, p, V4_LEN);
	for (i = 1; i < V4_LEN; i++) {
		variant = false;
		for (j = 0; j < ARRAY_SIZE(v4_variant); j++)
			variant |= i == v4_variant[j];
		if (variant)
			continue;
		memcpy(q, p, V4_LEN);
		q[i] ^= 0x01;
		KUNIT_EXPECT_NE_MSG(test, sroce_icrc_of(test, q, V4_LEN), ref,
				    "IPv4 byte %d", i);
	}
}

static void sroce_icrc_refuse_test(struct kunit *test)
{
	u8 p[V6_LEN] = {};
	u32 icrc;

	p[0] = 0x45;
	KUNIT_EXPECT_FALSE(test, sroce_icrc_linear(p, 39, &icrc));
	KUNIT_EXPECT_TRUE(test, sroce_icrc_linear(p, 40, &icrc));
	p[0] = 0x46;	/* IPv4 options */
	KUNIT_EXPECT_FALSE(test, sroce_icrc_linear(p, V4_LEN, &icrc));
	p[0] = 0x60;
	KUNIT_EXPECT_FALSE(test, sroce_icrc_linear(p, 59, &icrc));
	p[0] = 0x50;
	KUNIT_EXPECT_FALSE(test, sroce_icrc_linear(p, V6_LEN, &icrc));
	KUNIT_EXPECT_FALSE(test, sroce_icrc_linear(p, 0, &icrc));
}

/*
 * A packet in pieces has the ICRC of the same bytes in one: the first
 * piece covers at least the masked headers, the rest are cut anywhere,
 * empty pieces included.
 */
static u32 sroce_icrc_pieces(struct kunit *test, const u8 *p, size_t len,
			     size_t first, size_t step)
{
	size_t done, at, n;
	u32 crc;

	KUNIT_ASSERT_TRUE(test, sroce_icrc_begin(p, first, &crc, &done));
	crc = sroce_icrc_add(crc, p + done, first - done);
	for (at = first; at < len; at += n) {
		n = min(step, len - at);
		crc = sroce_icrc_add(crc, p + at, 0);
		crc = sroce_icrc_add(crc, p + at, n);
	}
	return sroce_icrc_end(crc);
}

/* Every first piece from hdrs bytes to all of them, the rest in steps. */
static void sroce_icrc_check_cuts(struct kunit *test, const u8 *p, size_t len,
				  size_t hdrs)
{
	u32 ref = sroce_icrc_of(test, p, len);
	size_t first, step;

	for (first = hdrs; first <= len; first++)
		for (step = 1; step <= 9; step += 4)
			KUNIT_EXPECT_EQ_MSG(test, sroce_icrc_pieces(test, p, len,
								    first, step),
					    ref, "IPv%u first %zu step %zu",
					    p[0] >> 4, first, step);
}

static void sroce_icrc_pieces_test(struct kunit *test)
{
	struct rnd_state rnd;
	u8 p[V6_LEN];

	sroce_kunit_rand_start(test, &rnd);
	sroce_fill_v4(p, &rnd);
	sroce_icrc_check_cuts(test, p, V4_LEN, 20 + 8 + 12);
	sroce_fill_v6(p, &rnd);
	sroce_icrc_check_cuts(test, p, V6_LEN, 40 + 8 + 12);
}

static struct kunit_case sroce_icrc_cases[] = {
	KUNIT_CASE(sroce_icrc_variant_test),
	KUNIT_CASE(sroce_icrc_invariant_test),
	KUNIT_CASE(sroce_icrc_refuse_test),
	KUNIT_CASE(sroce_icrc_pieces_test),
	{}
};

static struct kunit_suite sroce_icrc_suite = {
	.name = "sroce_icrc",
	.test_cases = sroce_icrc_cases,
};

kunit_test_suite(sroce_icrc_suite);
