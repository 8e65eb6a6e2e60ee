// SPDX-License-Identifier: GPL-2.0
/*
 * ICRC of RoCEv2 packets (see include/sroce/icrc.h).
 */
#include <linux/crc32.h>
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

u32 sroce_icrc_add(u32 crc, const void *p, size_t len)
{
	return crc32_le(crc, p, len);
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
