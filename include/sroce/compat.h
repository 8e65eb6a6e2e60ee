/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where the kernels sroce supports differ: Debian 12's 6.1, its PREEMPT_RT
 * flavour, and 6.12 from bookworm-backports (Documentation/admin-guide.rst,
 * "Kernels"). Every kernel version check of the module is in this file;
 * the code elsewhere uses the names below and is the same for all of them.
 *
 * Rules: a name of the newer kernel is defined here only under #ifndef (a
 * macro it lacks); anything else gets a sroce_ name. Nothing here includes
 * ib_core headers: the create_cq macros expand in the glue, which has them.
 */
#ifndef SROCE_COMPAT_H
#define SROCE_COMPAT_H

#include <linux/file.h>
#include <linux/mm.h>
#include <linux/version.h>

/* The only use of LINUX_VERSION_CODE (scripts/checkpatch allows it here). */
#define SROCE_KERNEL_AT_LEAST(major, minor) \
	(LINUX_VERSION_CODE >= KERNEL_VERSION(major, minor, 0))

/* 6.12 moved the unaligned access helpers out of asm/. */
#if SROCE_KERNEL_AT_LEAST(6, 12)
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/* 6.6 split net/page_pool.h into types and helpers. */
#if SROCE_KERNEL_AT_LEAST(6, 6)
#include <net/page_pool/helpers.h>
#else
#include <net/page_pool.h>
#endif

/* 6.12 packs struct fd into one word, read through fd_file(). */
#ifndef fd_file
#define fd_file(f) ((f).file)
#endif

/* 6.3 made vma->vm_flags read-only outside the vm_flags_*() helpers. */
static inline void sroce_vma_clear_flags(struct vm_area_struct *vma,
					 unsigned long flags)
{
#if SROCE_KERNEL_AT_LEAST(6, 3)
	vm_flags_clear(vma, flags);
#else
	vma->vm_flags &= ~flags;
#endif
}

/*
 * 6.11 hands .create_cq the uverbs attribute bundle (NULL for a kernel CQ)
 * instead of its driver udata: SROCE_CREATE_CQ_ARG is the third parameter's
 * type and sroce_create_cq_udata() the udata in it (NULL for a kernel CQ).
 */
#if SROCE_KERNEL_AT_LEAST(6, 11)
#define SROCE_CREATE_CQ_ARG struct uverbs_attr_bundle
#define sroce_create_cq_udata(arg) ({					\
	SROCE_CREATE_CQ_ARG *__attrs = (arg);				\
	__attrs ? &__attrs->driver_udata : NULL;			\
})
#else
#define SROCE_CREATE_CQ_ARG struct ib_udata
#define sroce_create_cq_udata(arg) (arg)
#endif

#endif /* SROCE_COMPAT_H */
