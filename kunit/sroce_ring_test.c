// SPDX-License-Identifier: GPL-2.0
/*
 * What the engine accepts of ring indices a queue's owner writes
 * (include/sroce/ring.h).
 */
#include <kunit/test.h>
#include <sroce/ring.h>

/* [fetched, retire + slots] and nothing else, wherever the indices are. */
static void sroce_ring_sq_producer_test(struct kunit *test)
{
	static const u32 bases[] = { 0, 1, 1000, 0x7fffffff, 0xfffffff0,
				     0xffffffff };
	u32 slots = 16, base, retire, fetched;
	int i, f, d;

	for (i = 0; i < ARRAY_SIZE(bases); i++) {
		base = bases[i];
		for (f = 0; f <= 16; f++) {
			retire = base;
			fetched = base + f;
			for (d = -40; d <= 40; d++) {
				bool ok = d >= f && d <= (int)slots;

				bool got = sroce_ring_sq_producer_ok(base + d,
								     fetched,
								     retire,
								     slots);

				KUNIT_EXPECT_EQ_MSG(test, got, ok,
						    "base %u fetched +%d producer %+d",
						    base, f, d);
			}
		}
	}
}

/* The cases the hostile-ring tests drive through a real QP. */
static void sroce_ring_sq_producer_abuse_test(struct kunit *test)
{
	/* Three WQEs in flight, none completed. */
	KUNIT_EXPECT_TRUE(test, sroce_ring_sq_producer_ok(3, 3, 0, 8));
	/* Moved back below what was fetched: 2^32 - 1 "new" WQEs. */
	KUNIT_EXPECT_FALSE(test, sroce_ring_sq_producer_ok(2, 3, 0, 8));
	KUNIT_EXPECT_FALSE(test, sroce_ring_sq_producer_ok(0, 3, 0, 8));
	/* A full ring, and one more than a ring ahead. */
	KUNIT_EXPECT_TRUE(test, sroce_ring_sq_producer_ok(8, 3, 0, 8));
	KUNIT_EXPECT_FALSE(test, sroce_ring_sq_producer_ok(9, 3, 0, 8));
	KUNIT_EXPECT_FALSE(test, sroce_ring_sq_producer_ok(0x80000000, 3, 0,
							   8));
}

static void sroce_ring_posted_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sroce_ring_posted(5, 5, 8), 0);
	KUNIT_EXPECT_EQ(test, sroce_ring_posted(13, 5, 8), 8);
	KUNIT_EXPECT_EQ(test, sroce_ring_posted(14, 5, 8), -1);
	KUNIT_EXPECT_EQ(test, sroce_ring_posted(4, 5, 8), -1);
	KUNIT_EXPECT_EQ(test, sroce_ring_posted(2, 0xfffffffe, 8), 4);
	KUNIT_EXPECT_EQ(test, sroce_ring_posted(0xfffffffe, 2, 8), -1);
}

static struct kunit_case sroce_ring_cases[] = {
	KUNIT_CASE(sroce_ring_sq_producer_test),
	KUNIT_CASE(sroce_ring_sq_producer_abuse_test),
	KUNIT_CASE(sroce_ring_posted_test),
	{}
};

static struct kunit_suite sroce_ring_suite = {
	.name = "sroce_ring",
	.test_cases = sroce_ring_cases,
};

kunit_test_suite(sroce_ring_suite);
