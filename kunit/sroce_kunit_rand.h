/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Random inputs of the KUnit suites, all drawn from one seed: the seed
 * given as sroce_kunit.seed=N on the kernel command line (scripts/kunit
 * passes SROCE_TEST_SEED), otherwise one drawn at boot. Each test that
 * draws starts its own stream from the seed and prints it, so one test
 * replays alone.
 */
#ifndef SROCE_KUNIT_RAND_H
#define SROCE_KUNIT_RAND_H

#include <kunit/test.h>
#include <linux/prandom.h>

/* Starts *rnd from the suites' seed and prints the seed in test's log. */
void sroce_kunit_rand_start(struct kunit *test, struct rnd_state *rnd);

static inline u64 sroce_kunit_u64(struct rnd_state *rnd)
{
	return ((u64)prandom_u32_state(rnd) << 32) | prandom_u32_state(rnd);
}
#endif
