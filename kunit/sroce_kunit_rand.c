// SPDX-License-Identifier: GPL-2.0
/*
 * The seed of the KUnit suites' random inputs (sroce_kunit_rand.h).
 */
#include <linux/moduleparam.h>
#include <linux/random.h>
#include "sroce_kunit_rand.h"

static ulong seed;
module_param(seed, ulong, 0444);
MODULE_PARM_DESC(seed, "seed of the random test inputs (0: draw one)");

void sroce_kunit_rand_start(struct kunit *test, struct rnd_state *rnd)
{
	if (!seed)
		seed = get_random_u32() | 1;
	kunit_info(test, "seed %lu (replay: sroce_kunit.seed=%lu)\n", seed,
		   seed);
	prandom_seed_state(rnd, seed);
}
