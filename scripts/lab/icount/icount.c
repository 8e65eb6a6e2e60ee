// SPDX-License-Identifier: GPL-2.0
/*
 * A QEMU TCG plugin for the lab (scripts/bench insns): counts how often
 * each translation block of the guest runs, and how many data accesses
 * its runs made (loads and stores; each step of a string instruction
 * counts its own). When the guest executes the marker (mark.c: an 8-byte
 * NOP no compiler emits, "nopl 0x5e0ce6a1(%rax,%rax,1)"), it writes every
 * block that ran so far as "vaddr insns runs accesses" to OUT.N, N
 * counting the marks from 0. Two marks around a workload give the instructions and
 * accesses it executed, by address; the difference is exact up to what
 * other guest activity ran meanwhile.
 *
 * Arguments: out=PATH (default /tmp/icount). Built against the plugin API
 * of QEMU 7.2 (version 1), whose few entry points qemu-plugin-api.h
 * declares.
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

/*
 * One record per translation (a block translated again gets another; the
 * report adds them up by address). Records live in fixed chunks, so a
 * pointer handed to the inline counter never moves. The counters are
 * plain adds from every vCPU: two vCPUs running one block at the same
 * moment can lose a count, which the idle loop aside is rare.
 */
struct block {
	uint64_t vaddr;
	uint64_t insns;
	uint64_t runs;
	uint64_t accesses;
};

#define CHUNK_BLOCKS 65536
static struct block **chunks;
static size_t num_blocks, num_chunks;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const char *out = "/tmp/icount";
static int marks;

static struct block *block_new(uint64_t vaddr, uint64_t insns)
{
	struct block *b = NULL;

	pthread_mutex_lock(&lock);
	if (num_blocks == num_chunks * CHUNK_BLOCKS) {
		struct block **c = realloc(chunks,
					   (num_chunks + 1) * sizeof(*c));

		if (c) {
			chunks = c;
			chunks[num_chunks] = calloc(CHUNK_BLOCKS, sizeof(*b));
			if (chunks[num_chunks])
				num_chunks++;
		}
	}
	if (num_blocks < num_chunks * CHUNK_BLOCKS) {
		b = &chunks[num_blocks / CHUNK_BLOCKS][num_blocks % CHUNK_BLOCKS];
		b->vaddr = vaddr;
		b->insns = insns;
		num_blocks++;
	}
	pthread_mutex_unlock(&lock);
	return b;
}

static void on_mark(unsigned int vcpu, void *udata)
{
	char path[4096];
	size_t i;
	FILE *f;

	(void)udata;
	pthread_mutex_lock(&lock);
	f = lab_mark_open(out, marks, path, sizeof(path));
	for (i = 0; f && i < num_blocks; i++) {
		struct block *b = &chunks[i / CHUNK_BLOCKS][i % CHUNK_BLOCKS];
		uint64_t runs = __atomic_load_n(&b->runs, __ATOMIC_RELAXED);
		uint64_t accesses = __atomic_load_n(&b->accesses,
						    __ATOMIC_RELAXED);

		if (runs)
			fprintf(f, "%llx %llu %llu %llu\n",
				(unsigned long long)b->vaddr,
				(unsigned long long)b->insns,
				(unsigned long long)runs,
				(unsigned long long)accesses);
	}
	lab_mark_close(f, "icount", path, marks++, vcpu);
	pthread_mutex_unlock(&lock);
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);
	struct block *b = block_new(qemu_plugin_tb_vaddr(tb), n);

	(void)id;
	if (b)
		qemu_plugin_register_vcpu_tb_exec_inline(tb,
							 PLUGIN_INLINE_ADD_U64,
							 &b->runs, 1);
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);

		if (b)
			qemu_plugin_register_vcpu_mem_inline(insn, PLUGIN_MEM_RW,
							     PLUGIN_INLINE_ADD_U64,
							     &b->accesses, 1);
		if (lab_is_marker(insn))
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_mark,
							       PLUGIN_CB_NO_REGS,
							       NULL);
	}
}

EXPORTED int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
				 int argc, char **argv)
{
	int i;

	(void)info;
	for (i = 0; i < argc; i++)
		if (!strncmp(argv[i], "out=", 4))
			out = argv[i] + 4;
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	return 0;
}
