// SPDX-License-Identifier: GPL-2.0
/*
 * The RC sequence rules (include/sroce/rc_rules.h), at ordinary PSNs and
 * across the 24-bit wrap.
 */
#include <kunit/test.h>
#include <sroce/rc_rules.h>

static void sroce_psn_in_test(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, sroce_psn_in(10, 10, 1));
	KUNIT_EXPECT_FALSE(test, sroce_psn_in(11, 10, 1));
	KUNIT_EXPECT_FALSE(test, sroce_psn_in(9, 10, 5));
	KUNIT_EXPECT_TRUE(test, sroce_psn_in(14, 10, 5));
	KUNIT_EXPECT_FALSE(test, sroce_psn_in(15, 10, 5));
	/* A message across the wrap: 0xfffffe, 0xffffff, 0, 1. */
	KUNIT_EXPECT_TRUE(test, sroce_psn_in(0xffffff, 0xfffffe, 4));
	KUNIT_EXPECT_TRUE(test, sroce_psn_in(1, 0xfffffe, 4));
	KUNIT_EXPECT_FALSE(test, sroce_psn_in(2, 0xfffffe, 4));
	KUNIT_EXPECT_FALSE(test, sroce_psn_in(0xfffffd, 0xfffffe, 4));
	/* No PSN is in an empty range. */
	KUNIT_EXPECT_FALSE(test, sroce_psn_in(10, 10, 0));
}

static void sroce_rc_window_test(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, sroce_rc_window_open(100, 100, 1024));
	KUNIT_EXPECT_TRUE(test, sroce_rc_window_open(1123, 100, 1024));
	KUNIT_EXPECT_FALSE(test, sroce_rc_window_open(1124, 100, 1024));
	KUNIT_EXPECT_TRUE(test, sroce_rc_window_open(5, 0xffff00, 1024));
	KUNIT_EXPECT_FALSE(test, sroce_rc_window_open(0x300, 0xffff00, 1024));
	/* Behind una (acknowledged while going back): open. */
	KUNIT_EXPECT_TRUE(test, sroce_rc_window_open(90, 100, 1024));
}

static void sroce_rc_ack_req_test(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, sroce_rc_ack_req(5, true));
	KUNIT_EXPECT_FALSE(test, sroce_rc_ack_req(5, false));
	KUNIT_EXPECT_TRUE(test, sroce_rc_ack_req(64, false));
	KUNIT_EXPECT_TRUE(test, sroce_rc_ack_req(0, false));
	KUNIT_EXPECT_FALSE(test, sroce_rc_ack_req(0xffffff, false));
	KUNIT_EXPECT_TRUE(test, sroce_rc_ack_req(0xffffc0, false));
}

static void sroce_rc_answers_test(struct kunit *test)
{
	/* [una, sent) = [100, 110). */
	KUNIT_EXPECT_TRUE(test, sroce_rc_answers_outstanding(100, 100, 110));
	KUNIT_EXPECT_TRUE(test, sroce_rc_answers_outstanding(109, 100, 110));
	KUNIT_EXPECT_FALSE(test, sroce_rc_answers_outstanding(110, 100, 110));
	KUNIT_EXPECT_FALSE(test, sroce_rc_answers_outstanding(99, 100, 110));
	/* Nothing outstanding: nothing is answered. */
	KUNIT_EXPECT_FALSE(test, sroce_rc_answers_outstanding(100, 100, 100));
	/* Across the wrap: [0xfffffe, 2). */
	KUNIT_EXPECT_TRUE(test, sroce_rc_answers_outstanding(0, 0xfffffe, 2));
	KUNIT_EXPECT_FALSE(test, sroce_rc_answers_outstanding(2, 0xfffffe, 2));
}

static void sroce_rc_ack_covers_test(struct kunit *test)
{
	/* A 3-packet message at 10 ends at 12. */
	KUNIT_EXPECT_FALSE(test, sroce_rc_ack_covers(11, 10, 3));
	KUNIT_EXPECT_TRUE(test, sroce_rc_ack_covers(12, 10, 3));
	KUNIT_EXPECT_TRUE(test, sroce_rc_ack_covers(13, 10, 3));
	KUNIT_EXPECT_TRUE(test, sroce_rc_ack_covers(10, 10, 1));
	KUNIT_EXPECT_FALSE(test, sroce_rc_ack_covers(9, 10, 1));
	KUNIT_EXPECT_TRUE(test, sroce_rc_ack_covers(0, 0xffffff, 2));
	KUNIT_EXPECT_FALSE(test, sroce_rc_ack_covers(0xffffff, 0xffffff, 2));
}

static void sroce_rc_goback_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sroce_rc_goback_pkt(13, 10), 3);
	KUNIT_EXPECT_EQ(test, sroce_rc_goback_pkt(1, 0xfffffe), 3);
	KUNIT_EXPECT_EQ(test, sroce_rc_goback_pkt(10, 10), 0);
}

static void sroce_rc_retries_test(struct kunit *test)
{
	KUNIT_EXPECT_FALSE(test, sroce_rc_rnr_retries_spent(3, 3));
	KUNIT_EXPECT_TRUE(test, sroce_rc_rnr_retries_spent(4, 3));
	KUNIT_EXPECT_TRUE(test, sroce_rc_rnr_retries_spent(1, 0));
	KUNIT_EXPECT_FALSE(test, sroce_rc_rnr_retries_spent(1000000, 7));
	KUNIT_EXPECT_FALSE(test, sroce_rc_retries_spent(7, 7));
	KUNIT_EXPECT_TRUE(test, sroce_rc_retries_spent(8, 7));
	KUNIT_EXPECT_TRUE(test, sroce_rc_retries_spent(1, 0));
}

static void sroce_rc_next_expected_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sroce_rc_next_expected(10, false, 99), 11);
	KUNIT_EXPECT_EQ(test, sroce_rc_next_expected(10, true, 4), 14);
	KUNIT_EXPECT_EQ(test, sroce_rc_next_expected(0xffffff, false, 0), 0);
	KUNIT_EXPECT_EQ(test, sroce_rc_next_expected(0xfffffe, true, 3), 1);
}

/* Where the answer for PSN p stands beside an answer of n PSNs at first. */
static void sroce_rc_answer_order_test(struct kunit *test)
{
	static const struct {
		u32 p, first, n;
		enum sroce_rc_answer_order order;
	} cases[] = {
		/* A 4-packet READ answer at 10. */
		{ 13, 10, 4, SROCE_RC_ANSWER_HOLDS },
		{ 10, 10, 4, SROCE_RC_ANSWER_HOLDS },
		{ 14, 10, 4, SROCE_RC_ANSWER_BEFORE },
		{ 9, 10, 4, SROCE_RC_ANSWER_AFTER },
		/* An atomic's answer is one PSN. */
		{ 20, 20, 1, SROCE_RC_ANSWER_HOLDS },
		{ 21, 20, 1, SROCE_RC_ANSWER_BEFORE },
		/* Across the wrap of the 24-bit PSN. */
		{ 1, 0xfffffe, 4, SROCE_RC_ANSWER_HOLDS },
		{ 0xfffffd, 0xfffffe, 4, SROCE_RC_ANSWER_AFTER },
		{ 2, 0xfffffe, 4, SROCE_RC_ANSWER_BEFORE },
	};
	u32 i;

	for (i = 0; i < ARRAY_SIZE(cases); i++)
		KUNIT_EXPECT_EQ_MSG(test, sroce_rc_answer_order(cases[i].p,
								cases[i].first,
								cases[i].n),
				    cases[i].order, "case %u", i);
}

static void sroce_rc_answer_resume_test(struct kunit *test)
{
	/* Packets 0..5 went out; the requester missed packet 2. */
	KUNIT_EXPECT_EQ(test, sroce_rc_answer_resume(6, 2), 2);
	KUNIT_EXPECT_EQ(test, sroce_rc_answer_resume(6, 0), 0);
	KUNIT_EXPECT_EQ(test, sroce_rc_answer_resume(6, 5), 5);
	/* Packet 6 and later are still to come: nothing goes back. */
	KUNIT_EXPECT_EQ(test, sroce_rc_answer_resume(6, 6), 6);
	KUNIT_EXPECT_EQ(test, sroce_rc_answer_resume(6, 9), 6);
	KUNIT_EXPECT_EQ(test, sroce_rc_answer_resume(0, 0), 0);
}

static struct kunit_case sroce_rc_rules_cases[] = {
	KUNIT_CASE(sroce_psn_in_test),
	KUNIT_CASE(sroce_rc_window_test),
	KUNIT_CASE(sroce_rc_ack_req_test),
	KUNIT_CASE(sroce_rc_answers_test),
	KUNIT_CASE(sroce_rc_ack_covers_test),
	KUNIT_CASE(sroce_rc_goback_test),
	KUNIT_CASE(sroce_rc_retries_test),
	KUNIT_CASE(sroce_rc_next_expected_test),
	KUNIT_CASE(sroce_rc_answer_order_test),
	KUNIT_CASE(sroce_rc_answer_resume_test),
	{}
};

static struct kunit_suite sroce_rc_rules_suite = {
	.name = "sroce_rc_rules",
	.test_cases = sroce_rc_rules_cases,
};

kunit_test_suite(sroce_rc_rules_suite);
