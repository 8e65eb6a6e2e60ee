/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * sroce user/kernel ABI.
 *
 * Rules every structure here follows (see Documentation/abi.rst):
 * - it starts with a comp_mask, is a multiple of 8 bytes and 8-byte aligned,
 *   and has no implicit padding: reserved space is named by its bit offset;
 * - the kernel accepts a shorter (older) request, treating missing fields as
 *   zero, and accepts a longer one only if the unknown tail is zero;
 * - unknown comp_mask bits and non-zero reserved fields are rejected with
 *   EINVAL;
 * - the kernel writes min(sizeof(response), space given) bytes back.
 *
 * SROCE_UVERBS_ABI_VERSION changes only for an incompatible break; features
 * are negotiated in the ucontext handshake instead.
 */
#ifndef SROCE_ABI_USER_H
#define SROCE_ABI_USER_H

#include <linux/types.h>

#define SROCE_UVERBS_ABI_VERSION 1

/*
 * Features of the user/kernel contract. The provider announces the ones it
 * understands; the kernel announces the ones it offers and refuses a
 * provider that lacks a feature the kernel requires.
 */
enum sroce_ucontext_cap {
	/* No optional feature exists in this version of the ABI. */
	SROCE_UCONTEXT_CAP_NONE = 0,
};

struct sroce_alloc_ucontext_req {
	__u32 comp_mask;	/* no optional request fields exist: must be 0 */
	__u8 reserved_20[4];
	__aligned_u64 provider_caps;	/* enum sroce_ucontext_cap bits */
};

struct sroce_alloc_ucontext_resp {
	__u32 comp_mask;
	__u32 abi_version;	/* SROCE_UVERBS_ABI_VERSION */
	__aligned_u64 kernel_caps;	/* enum sroce_ucontext_cap bits */
	__aligned_u64 required_caps;	/* caps a provider must understand */
};

struct sroce_alloc_pd_resp {
	__u32 comp_mask;
	__u32 pdn;	/* device-unique protection domain number */
};

#endif /* SROCE_ABI_USER_H */
