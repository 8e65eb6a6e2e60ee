/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the engine accepts of the ring indices a queue's owner writes.
 *
 * Pure layer: no ib_core. Indices run freely over u32 and wrap; a ring of
 * slots entries (a power of two) holds the entries [consumer, producer).
 * The owner (a user process) may write any value into a producer index:
 * these checks decide, from what the kernel itself knows, whether the
 * value is one a well-behaved owner could have written.
 */
#ifndef SROCE_RING_H
#define SROCE_RING_H

#include <linux/types.h>

/*
 * A send queue's producer against the engine's own indices: retire (the
 * oldest WQE not completed) <= fetched (one past the last WQE copied from
 * the ring) <= retire + slots. The producer is acceptable in [fetched,
 * retire + slots]: every WQE fetched was produced, and the ring cannot
 * hold more than slots. A producer moved back below fetched, or more than
 * a ring ahead, is not.
 */
static inline bool sroce_ring_sq_producer_ok(u32 producer, u32 fetched,
					     u32 retire, u32 slots)
{
	return producer - fetched <= slots - (fetched - retire);
}

/*
 * Entries a receive queue's owner posted beyond the engine's consumer, or
 * -1 for a producer no owner can have written (more than a ring ahead, or
 * behind the consumer).
 */
static inline int sroce_ring_posted(u32 producer, u32 consumer, u32 slots)
{
	u32 n = producer - consumer;

	return n <= slots ? (int)n : -1;
}

#endif /* SROCE_RING_H */
