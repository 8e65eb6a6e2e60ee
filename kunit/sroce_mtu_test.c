// SPDX-License-Identifier: GPL-2.0
/*
 * RoCEv2 path MTU from the netdev MTU (include/sroce/mtu.h).
 */
#include <kunit/test.h>
#include <linux/log2.h>
#include <sroce/mtu.h>

struct sroce_mtu_case {
	unsigned int netdev_mtu;
	unsigned int path_mtu;
};

static const struct sroce_mtu_case sroce_mtu_cases[] = {
	{ 0, 256 },
	{ 68, 256 },
	{ 256 + 84, 256 },
	{ 512 + 83, 256 },
	{ 512 + 84, 512 },
	{ 1024 + 84, 1024 },
	{ 1500, 1024 },
	{ 2048 + 83, 1024 },
	{ 2048 + 84, 2048 },
	{ 4096 + 83, 2048 },
	{ 4096 + 84, 4096 },
	{ 9000, 4096 },
	{ 65536, 4096 },
	{ ~0U, 4096 },
};

static void sroce_mtu_table_test(struct kunit *test)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(sroce_mtu_cases); i++) {
		const struct sroce_mtu_case *c = &sroce_mtu_cases[i];

		KUNIT_EXPECT_EQ_MSG(test,
				    sroce_path_mtu_for_netdev_mtu(c->netdev_mtu),
				    c->path_mtu, "netdev mtu %u", c->netdev_mtu);
	}
}

/*
 * The largest header stack around a full payload, counted here from the
 * headers' sizes: IPv6 40, UDP 8, BTH 12, RETH 16, ImmDt 4, ICRC 4.
 */
#define WORST_OVERHEAD (40 + 8 + 12 + 16 + 4 + 4)

/* Whatever the netdev MTU, a full packet of the result fits in a frame. */
static void sroce_mtu_fits_test(struct kunit *test)
{
	unsigned int ndev_mtu, mtu;

	for (ndev_mtu = 256 + WORST_OVERHEAD; ndev_mtu < 10000; ndev_mtu++) {
		mtu = sroce_path_mtu_for_netdev_mtu(ndev_mtu);
		KUNIT_ASSERT_LE(test, mtu + WORST_OVERHEAD, ndev_mtu);
		KUNIT_ASSERT_TRUE(test, is_power_of_2(mtu));
		KUNIT_ASSERT_GE(test, mtu, 256U);
		KUNIT_ASSERT_LE(test, mtu, 4096U);
		if (mtu < 4096)
			KUNIT_ASSERT_GT(test, 2 * mtu + WORST_OVERHEAD,
					ndev_mtu);
	}
}

static struct kunit_case sroce_mtu_test_cases[] = {
	KUNIT_CASE(sroce_mtu_table_test),
	KUNIT_CASE(sroce_mtu_fits_test),
	{}
};

static struct kunit_suite sroce_mtu_suite = {
	.name = "sroce_mtu",
	.test_cases = sroce_mtu_test_cases,
};

kunit_test_suite(sroce_mtu_suite);
