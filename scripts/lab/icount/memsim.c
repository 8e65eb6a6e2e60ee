// SPDX-License-Identifier: GPL-2.0
/*
 * A QEMU TCG plugin for the lab (scripts/bench memory): follows every guest
 * data access through two models of what makes an access slow under TCG
 * beyond its instruction count, and writes their counts at each marker (the
 * icount plugin's, mark.c) to OUT.N, one line per vCPU:
 *
 *   vcpu C accesses A tlb8 V M tlb10 V M tlb12 V M moved R W
 *
 * - tlbB: TCG's softmmu data TLB with 2^B entries: direct-mapped by virtual
 *   page (4 KiB), with a victim TLB of 8 entries behind it. V counts hits in
 *   the victim TLB (a swap), M misses (a page-table walk). QEMU keeps a TLB
 *   per MMU index; the model keeps three, chosen by the accessing code and
 *   address as the index would be: user code, kernel code, and kernel code
 *   on a user address (copy_*_user, with EFLAGS.AC set under SMAP). A write
 *   to CR3 empties them, as it makes QEMU flush; single-page flushes
 *   (INVLPG, INVPCID) are not modelled. QEMU sizes its TLB between 2^6 and
 *   2^22 entries by use; the model keeps three fixed sizes.
 * - moved: 64-byte lines of guest physical memory that came from another
 *   vCPU: R reads of a line that another vCPU wrote and this one does not
 *   hold since, W writes to a line that another vCPU holds. On the host
 *   each such access moves a cache line between cores.
 *
 * Arguments: out=PATH (default /tmp/memsim). Built against the plugin API
 * of QEMU 7.2 (version 1), whose few entry points qemu-plugin-api.h
 * declares.
 * Approximate by design: the vCPUs update the line map without locks.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qemu-plugin-api.h"

EXPORTED int qemu_plugin_version = 1;

#define MAX_VCPUS 7		/* the line map keeps one bit per vCPU */
#define LINE_DIRTY 0x80		/* and this one: written, not read since */
#define NUM_SIZES 3
#define VICTIMS 8
#define LINE_SHIFT 6
#define MAX_PHYS (16ULL << 30)	/* guest memory the line map covers */

static const int size_bits[NUM_SIZES] = { 8, 10, 12 };

/* One TLB of the model; entries hold page + 1, 0 being empty. */
struct tlb {
	uint64_t *main;
	uint64_t victim[VICTIMS];
	unsigned int next_victim;
	uint64_t victim_hits, misses;
};

/* Which TLB an access goes through, by the MMU index it would use. */
enum tlb_kind { TLB_USER, TLB_KERNEL, TLB_KERNEL_ON_USER, TLB_KINDS };

struct vcpu {
	struct tlb tlb[3][NUM_SIZES];	/* [enum tlb_kind][size] */
	uint64_t accesses, moved_reads, moved_writes;
};

static struct vcpu vcpus[MAX_VCPUS];
static uint8_t *line_holders;	/* by physical line: a bit per vCPU */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const char *out = "/tmp/memsim";
static int marks;

static void tlb_access(struct tlb *t, int bits, uint64_t page)
{
	uint64_t key = page + 1, *slot = &t->main[page & ((1ULL << bits) - 1)];
	int i;

	if (*slot == key)
		return;
	for (i = 0; i < VICTIMS; i++) {
		if (t->victim[i] == key) {
			t->victim[i] = *slot;
			*slot = key;
			t->victim_hits++;
			return;
		}
	}
	t->misses++;
	if (*slot)
		t->victim[t->next_victim++ % VICTIMS] = *slot;
	*slot = key;
}

static void line_access(struct vcpu *c, unsigned int vcpu, uint64_t phys,
			bool store)
{
	uint64_t line = phys >> LINE_SHIFT;
	uint8_t me = 1u << vcpu, state;

	if (phys >= MAX_PHYS)
		return;
	state = line_holders[line];
	if (store) {
		if (state & ~me & ~LINE_DIRTY)
			c->moved_writes++;
		line_holders[line] = me | LINE_DIRTY;
	} else if (!(state & me)) {
		if (state & LINE_DIRTY)
			c->moved_reads++;
		line_holders[line] = (state & ~LINE_DIRTY) | me;
	}
}

static void on_access(unsigned int vcpu, qemu_plugin_meminfo_t info,
		      uint64_t vaddr, void *udata)
{
	bool kernel_code = udata != NULL;
	struct qemu_plugin_hwaddr *hw;
	enum tlb_kind kind;
	struct vcpu *c;
	int s;

	if (vcpu >= MAX_VCPUS)
		return;
	c = &vcpus[vcpu];
	c->accesses++;
	kind = !kernel_code ? TLB_USER :
	       (vaddr >> 63) ? TLB_KERNEL : TLB_KERNEL_ON_USER;
	for (s = 0; s < NUM_SIZES; s++)
		tlb_access(&c->tlb[kind][s], size_bits[s], vaddr >> 12);
	hw = qemu_plugin_get_hwaddr(info, vaddr);
	if (hw && !qemu_plugin_hwaddr_is_io(hw))
		line_access(c, vcpu, qemu_plugin_hwaddr_phys_addr(hw),
			    qemu_plugin_mem_is_store(info));
}

static void on_cr3_write(unsigned int vcpu, void *udata)
{
	int k, s;

	(void)udata;
	if (vcpu >= MAX_VCPUS)
		return;
	for (k = 0; k < TLB_KINDS; k++) {
		for (s = 0; s < NUM_SIZES; s++) {
			struct tlb *t = &vcpus[vcpu].tlb[k][s];

			memset(t->main, 0, sizeof(*t->main) << size_bits[s]);
			memset(t->victim, 0, sizeof(t->victim));
		}
	}
}

static void on_mark(unsigned int vcpu, void *udata)
{
	char path[4096];
	int c, s;
	FILE *f;

	(void)udata;
	pthread_mutex_lock(&lock);
	f = lab_mark_open(out, marks, path, sizeof(path));
	for (c = 0; f && c < MAX_VCPUS; c++) {
		struct vcpu *v = &vcpus[c];

		if (!v->accesses)
			continue;
		fprintf(f, "vcpu %d accesses %llu", c,
			(unsigned long long)v->accesses);
		for (s = 0; s < NUM_SIZES; s++) {
			uint64_t hits = 0, misses = 0;
			int k;

			for (k = 0; k < TLB_KINDS; k++) {
				hits += v->tlb[k][s].victim_hits;
				misses += v->tlb[k][s].misses;
			}
			fprintf(f, " tlb%d %llu %llu", size_bits[s],
				(unsigned long long)hits,
				(unsigned long long)misses);
		}
		fprintf(f, " moved %llu %llu\n",
			(unsigned long long)v->moved_reads,
			(unsigned long long)v->moved_writes);
	}
	lab_mark_close(f, "memsim", path, marks++, vcpu);
	pthread_mutex_unlock(&lock);
}

/* mov %reg, %cr3: 0f 22 with ModRM reg field 3, after at most a REX. */
static bool is_cr3_write(const unsigned char *d, size_t size)
{
	size_t i = size > 3 && (d[0] & 0xf0) == 0x40;

	return i + 3 == size && d[i] == 0x0f && d[i + 1] == 0x22 &&
	       ((d[i + 2] >> 3) & 7) == 3;
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);

	(void)id;
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		const unsigned char *d = qemu_plugin_insn_data(insn);
		size_t size = qemu_plugin_insn_size(insn);
		uint64_t vaddr = qemu_plugin_insn_vaddr(insn);

		/* udata: whether the accessing code is the kernel's. */
		qemu_plugin_register_vcpu_mem_cb(insn, on_access,
						 PLUGIN_CB_NO_REGS,
						 PLUGIN_MEM_RW,
						 (void *)(uintptr_t)(vaddr >> 63));
		if (lab_is_marker(insn))
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_mark,
							       PLUGIN_CB_NO_REGS,
							       NULL);
		if (is_cr3_write(d, size))
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_cr3_write,
							       PLUGIN_CB_NO_REGS,
							       NULL);
	}
}

EXPORTED int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
				 int argc, char **argv)
{
	int i, c, k, s;

	(void)info;
	for (i = 0; i < argc; i++)
		if (!strncmp(argv[i], "out=", 4))
			out = argv[i] + 4;
	line_holders = calloc(MAX_PHYS >> LINE_SHIFT, 1);
	if (!line_holders)
		return -1;
	for (c = 0; c < MAX_VCPUS; c++)
		for (k = 0; k < TLB_KINDS; k++)
			for (s = 0; s < NUM_SIZES; s++) {
				vcpus[c].tlb[k][s].main =
					calloc(1ULL << size_bits[s], sizeof(uint64_t));
				if (!vcpus[c].tlb[k][s].main)
					return -1;
			}
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	return 0;
}
