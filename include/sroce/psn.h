/* SPDX-License-Identifier: GPL-2.0 */
/*
 * 24-bit packet sequence numbers (IBTA 9.7.1).
 *
 * Pure layer: no ib_core. PSNs live in [0, 2^24); the distance between two
 * PSNs is taken modulo 2^24 and read as a signed 24-bit number, so "a is
 * before b" holds when a lies in the 2^23 PSNs behind b.
 */
#ifndef SROCE_PSN_H
#define SROCE_PSN_H

#include <linux/types.h>

#define SROCE_PSN_MASK 0xffffffU
#define SROCE_PSN_HALF 0x800000U

static inline u32 sroce_psn_add(u32 psn, u32 n)
{
	return (psn + n) & SROCE_PSN_MASK;
}

/* a - b as a signed 24-bit number: in [-2^23, 2^23). */
static inline s32 sroce_psn_diff(u32 a, u32 b)
{
	return (s32)((a - b) << 8) >> 8;
}

static inline bool sroce_psn_before(u32 a, u32 b)
{
	return sroce_psn_diff(a, b) < 0;
}

/* How a responder sees a request PSN against the one it expects. */
enum sroce_psn_class {
	SROCE_PSN_EXPECTED,	/* the next in sequence */
	SROCE_PSN_DUPLICATE,	/* already seen: replay, do not re-execute */
	SROCE_PSN_AHEAD,	/* a gap: NAK with PSN sequence error */
};

static inline enum sroce_psn_class sroce_psn_classify(u32 psn, u32 expected)
{
	s32 d = sroce_psn_diff(psn, expected);

	if (!d)
		return SROCE_PSN_EXPECTED;
	return d < 0 ? SROCE_PSN_DUPLICATE : SROCE_PSN_AHEAD;
}

#endif /* SROCE_PSN_H */
