// SPDX-License-Identifier: GPL-2.0
/*
 * 24-bit PSN arithmetic (include/sroce/psn.h).
 */
#include <kunit/test.h>
#include <sroce/psn.h>

static void sroce_psn_add_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sroce_psn_add(0, 1), 1);
	KUNIT_EXPECT_EQ(test, sroce_psn_add(0xffffff, 1), 0);
	KUNIT_EXPECT_EQ(test, sroce_psn_add(0xfffffe, 5), 3);
	KUNIT_EXPECT_EQ(test, sroce_psn_add(5, 0x1000000), 5);
}

static void sroce_psn_diff_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sroce_psn_diff(10, 3), 7);
	KUNIT_EXPECT_EQ(test, sroce_psn_diff(3, 10), -7);
	KUNIT_EXPECT_EQ(test, sroce_psn_diff(2, 0xfffffe), 4);
	KUNIT_EXPECT_EQ(test, sroce_psn_diff(0xfffffe, 2), -4);
	KUNIT_EXPECT_EQ(test, sroce_psn_diff(0x7fffff, 0), 0x7fffff);
	KUNIT_EXPECT_EQ(test, sroce_psn_diff(0x800000, 0), -0x800000);
	KUNIT_EXPECT_TRUE(test, sroce_psn_before(0xffffff, 0));
	KUNIT_EXPECT_FALSE(test, sroce_psn_before(0, 0xffffff));
	KUNIT_EXPECT_FALSE(test, sroce_psn_before(7, 7));
}

/* diff and add are inverse to each other everywhere on the circle. */
static void sroce_psn_roundtrip_test(struct kunit *test)
{
	static const u32 bases[] = { 0, 1, 0x7fffff, 0x800000, 0xfffff0, 0xffffff };
	s32 d;
	int i;

	for (i = 0; i < ARRAY_SIZE(bases); i++)
		for (d = -0x800000; d < 0x800000; d += 0x1001)
			KUNIT_ASSERT_EQ(test,
					sroce_psn_diff(sroce_psn_add(bases[i], d),
						       bases[i]), d);
}

static void sroce_psn_classify_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sroce_psn_classify(100, 100), SROCE_PSN_EXPECTED);
	KUNIT_EXPECT_EQ(test, sroce_psn_classify(99, 100), SROCE_PSN_DUPLICATE);
	KUNIT_EXPECT_EQ(test, sroce_psn_classify(101, 100), SROCE_PSN_AHEAD);
	KUNIT_EXPECT_EQ(test, sroce_psn_classify(0xffffff, 0), SROCE_PSN_DUPLICATE);
	KUNIT_EXPECT_EQ(test, sroce_psn_classify(0, 0xffffff), SROCE_PSN_AHEAD);
	/* The duplicate window is the 2^23 PSNs behind the expected one. */
	KUNIT_EXPECT_EQ(test, sroce_psn_classify(sroce_psn_add(5, -0x800000), 5),
			SROCE_PSN_DUPLICATE);
	KUNIT_EXPECT_EQ(test, sroce_psn_classify(sroce_psn_add(5, 0x7fffff), 5),
			SROCE_PSN_AHEAD);
}

static struct kunit_case sroce_psn_cases[] = {
	KUNIT_CASE(sroce_psn_add_test),
	KUNIT_CASE(sroce_psn_diff_test),
	KUNIT_CASE(sroce_psn_roundtrip_test),
	KUNIT_CASE(sroce_psn_classify_test),
	{}
};

static struct kunit_suite sroce_psn_suite = {
	.name = "sroce_psn",
	.test_cases = sroce_psn_cases,
};

kunit_test_suite(sroce_psn_suite);
