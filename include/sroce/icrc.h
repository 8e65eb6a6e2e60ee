/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The invariant CRC (ICRC) of a RoCEv2 packet (IBTA annex A17).
 *
 * Pure layer: no ib_core, no skb. The ICRC is a CRC-32 (the Ethernet
 * polynomial, reflected, as crc32_le computes it) over: 64 bits of ones
 * standing in for the InfiniBand LRH; the IP header with the fields a
 * router may change set to ones (IPv4: TOS, TTL, header checksum; IPv6:
 * traffic class, flow label, hop limit); the UDP header with its checksum
 * set to ones; the BTH with its reserved byte 4 (FECN, BECN, resv6) set to
 * ones; then the rest of the transport headers, the payload and the pad.
 * The complement of that CRC follows the pad, least significant byte first.
 */
#ifndef SROCE_ICRC_H
#define SROCE_ICRC_H

#include <linux/types.h>

/*
 * CRC state after the masked IP, UDP and BTH headers of the packet whose
 * IP header starts at l3 (IPv4 without options or IPv6, told apart by the
 * version nibble). l3_len must cover at least those headers; returns false
 * if it does not or the IP version is neither 4 nor 6.
 */
bool sroce_icrc_begin(const u8 *l3, size_t l3_len, u32 *crc, size_t *done);

/*
 * ICRC of a whole linear packet: l3 points at the IP header, l3_len runs
 * to the end of the pad (the ICRC itself excluded). Returns false as
 * sroce_icrc_begin() does.
 */
bool sroce_icrc_linear(const u8 *l3, size_t l3_len, u32 *icrc);

/*
 * A packet held in pieces: sroce_icrc_begin() on the first (which covers
 * the masked headers), then the rest of the first piece and every later
 * one up to the end of the pad through sroce_icrc_add(), in order;
 * sroce_icrc_end() gives the ICRC.
 */
u32 sroce_icrc_add(u32 crc, const void *p, size_t len);

static inline u32 sroce_icrc_end(u32 crc)
{
	return ~crc;
}

/*
 * How sroce_icrc_add() computes the CRC: lib/crc32's crc32_le (table
 * driven, in every kernel), or the crypto API's "crc32", which a CPU with
 * carry-less multiply serves several times faster (crc32-pclmul on x86;
 * 6.1 and 6.12 have no such crc32_le). sroce_icrc_choose(), once before
 * any device exists, takes crc32 only if its driver is not crc32-generic
 * (crc32_le itself), gives the same CRC, and in turns of 2 ms batches on
 * a 4 KiB buffer runs at more than 1.5 times crc32_le's best rate; under
 * TCG, which emulates the multiply bit by bit, crc32_le wins. It returns
 * the chosen implementation's name and its MB/s; sroce_icrc_release()
 * undoes it at module exit.
 */
const char *sroce_icrc_choose(unsigned int *mb_per_s);
void sroce_icrc_release(void);
/* For tests: computes with the crypto API's crc32 (true) or crc32_le. */
int sroce_icrc_use_shash(bool shash);

#endif /* SROCE_ICRC_H */
