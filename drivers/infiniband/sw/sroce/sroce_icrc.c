// SPDX-License-Identifier: GPL-2.0
/*
 * ICRC of RoCEv2 packets (see include/sroce/icrc.h).
 */
#include <crypto/hash.h>
#include <linux/crc32.h>
#include <linux/jump_label.h>
#include <linux/random.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <sroce/icrc.h>
#include <sroce/roce_hdr.h>

#define IPV4_HDR_LEN IB_IP4_BYTES
#define IPV6_HDR_LEN IB_GRH_BYTES	/* RoCEv2: the IPv6 header is the GRH */
#define UDP_HDR_LEN IB_UDP_BYTES

bool sroce_icrc_begin(const u8 *l3, size_t l3_len, u32 *crc, size_t *done)
{
	static const u8 masked_lrh[8] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff
	};
	u8 pseudo[IPV6_HDR_LEN + UDP_HDR_LEN + IB_BTH_BYTES];
	size_t ip_len, len;

	if (!l3_len)
		return false;
	switch (l3[0] >> 4) {
	case 4:
		/* sroce and its peers send no IP options. */
		if (l3[0] != 0x45)
			return false;
		ip_len = IPV4_HDR_LEN;
		break;
	case 6:
		ip_len = IPV6_HDR_LEN;
		break;
	default:
		return false;
	}
	len = ip_len + UDP_HDR_LEN + IB_BTH_BYTES;
	if (l3_len < len)
		return false;

	memcpy(pseudo, l3, len);
	if (ip_len == IPV4_HDR_LEN) {
		pseudo[1] = 0xff;		/* TOS */
		pseudo[8] = 0xff;		/* TTL */
		pseudo[10] = 0xff;		/* header checksum */
		pseudo[11] = 0xff;
	} else {
		pseudo[0] |= 0x0f;		/* traffic class, high nibble */
		pseudo[1] = 0xff;		/* traffic class low, flow label */
		pseudo[2] = 0xff;
		pseudo[3] = 0xff;
		pseudo[7] = 0xff;		/* hop limit */
	}
	pseudo[ip_len + 6] = 0xff;		/* UDP checksum */
	pseudo[ip_len + 7] = 0xff;
	pseudo[ip_len + UDP_HDR_LEN + 4] = 0xff;	/* BTH resv8a */

	*crc = crc32_le(crc32_le(~0U, masked_lrh, sizeof(masked_lrh)),
			pseudo, len);
	*done = len;
	return true;
}

/* The crypto API's crc32, when sroce_icrc_choose() took it. */
static struct crypto_shash *sroce_icrc_tfm;
static DEFINE_STATIC_KEY_FALSE(sroce_icrc_by_shash);

/*
 * crc32's descriptor holds the running CRC as crc32_le takes it (no
 * complement), and its update cannot fail. Out of line: the descriptor on
 * the stack is cleared on every call, which the crc32_le path must not pay.
 */
static noinline u32 sroce_icrc_shash(u32 crc, const void *p, size_t len)
{
	SHASH_DESC_ON_STACK(desc, sroce_icrc_tfm);

	desc->tfm = sroce_icrc_tfm;
	*(u32 *)shash_desc_ctx(desc) = crc;
	crypto_shash_update(desc, p, len);
	return *(u32 *)shash_desc_ctx(desc);
}

static u32 sroce_icrc_lib(u32 crc, const void *p, size_t len)
{
	return crc32_le(crc, p, len);
}

/* Below this a carry-less multiply gains nothing (crc32-pclmul: 79). */
#define SROCE_ICRC_SHASH_MIN 256

u32 sroce_icrc_add(u32 crc, const void *p, size_t len)
{
	if (static_branch_unlikely(&sroce_icrc_by_shash) &&
	    len >= SROCE_ICRC_SHASH_MIN)
		return sroce_icrc_shash(crc, p, len);
	return sroce_icrc_lib(crc, p, len);
}

int sroce_icrc_use_shash(bool shash)
{
	struct crypto_shash *tfm;

	if (!shash) {
		static_branch_disable(&sroce_icrc_by_shash);
		return 0;
	}
	if (!sroce_icrc_tfm) {
		tfm = crypto_alloc_shash("crc32", 0, 0);
		if (IS_ERR(tfm))
			return PTR_ERR(tfm);
		sroce_icrc_tfm = tfm;
	}
	static_branch_enable(&sroce_icrc_by_shash);
	return 0;
}

void sroce_icrc_release(void)
{
	static_branch_disable(&sroce_icrc_by_shash);
	if (sroce_icrc_tfm)
		crypto_free_shash(sroce_icrc_tfm);
	sroce_icrc_tfm = NULL;
}

#define SROCE_ICRC_PROBE_BYTES 4096
/* Each timed batch runs this long at least. */
#define SROCE_ICRC_PROBE_NS (2 * NSEC_PER_MSEC)
/* Batches per way, taken in turns; the best counts (a preempted one not). */
#define SROCE_ICRC_PROBE_BATCHES 5

/* MB/s of the current choice over one batch of CRCs of buf; at least 1. */
static u64 sroce_icrc_rate(const void *buf)
{
	u64 bytes = 0, t0, t;
	u32 crc = ~0U;

	t0 = local_clock();
	do {
		crc = sroce_icrc_add(crc, buf, SROCE_ICRC_PROBE_BYTES);
		OPTIMIZER_HIDE_VAR(crc);	/* computed, not dropped */
		bytes += SROCE_ICRC_PROBE_BYTES;
		t = local_clock() - t0;
	} while (t < SROCE_ICRC_PROBE_NS);
	barrier_data(&crc);	/* the last CRC is used: the loop stays */
	return max_t(u64, div64_u64(bytes * 1000, t), 1);
}

const char *sroce_icrc_choose(unsigned int *mb_per_s)
{
	u64 r_lib = 0, r_shash = 0;
	const char *name;
	void *buf;
	u32 c_lib;
	int i;

	*mb_per_s = 0;
	buf = kmalloc(SROCE_ICRC_PROBE_BYTES, GFP_KERNEL);
	if (!buf)
		return "crc32_le";
	get_random_bytes(buf, SROCE_ICRC_PROBE_BYTES);
	sroce_icrc_use_shash(false);
	c_lib = sroce_icrc_add(~0U, buf, SROCE_ICRC_PROBE_BYTES);
	/*
	 * Only a crc32 that gives crc32_le's CRC; crc32-generic is crc32_le
	 * behind an indirect call, never worth it.
	 */
	if (sroce_icrc_use_shash(true))
		goto lib;
	name = crypto_shash_driver_name(sroce_icrc_tfm);
	if (!strcmp(name, "crc32-generic") ||
	    sroce_icrc_add(~0U, buf, SROCE_ICRC_PROBE_BYTES) != c_lib)
		goto lib;
	for (i = 0; i < SROCE_ICRC_PROBE_BATCHES; i++) {
		sroce_icrc_use_shash(false);
		r_lib = max(r_lib, sroce_icrc_rate(buf));
		sroce_icrc_use_shash(true);
		r_shash = max(r_shash, sroce_icrc_rate(buf));
	}
	/* Only if clearly faster: more than 1.5 times. */
	if (r_shash * 2 <= r_lib * 3)
		goto lib;
	kfree(buf);
	*mb_per_s = min_t(u64, r_shash, UINT_MAX);
	return name;
lib:
	sroce_icrc_release();
	if (!r_lib)
		r_lib = sroce_icrc_rate(buf);
	kfree(buf);
	*mb_per_s = min_t(u64, r_lib, UINT_MAX);
	return "crc32_le";
}

bool sroce_icrc_linear(const u8 *l3, size_t l3_len, u32 *icrc)
{
	size_t done;
	u32 crc;

	if (!sroce_icrc_begin(l3, l3_len, &crc, &done))
		return false;
	*icrc = sroce_icrc_end(sroce_icrc_add(crc, l3 + done, l3_len - done));
	return true;
}
