/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The part of QEMU's plugin API (include/qemu/qemu-plugin.h, API version
 * 1, QEMU 7.2) the lab's plugins use, declared here because Debian ships
 * no header for it; and the marker they share (mark.c).
 */
#ifndef SROCE_LAB_QEMU_PLUGIN_API_H
#define SROCE_LAB_QEMU_PLUGIN_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define EXPORTED __attribute__((visibility("default")))

typedef uint64_t qemu_plugin_id_t;
typedef uint32_t qemu_plugin_meminfo_t;
typedef struct {
	const char *target_name;
	struct {
		int min;
		int cur;
	} version;
	bool system_emulation;
	union {
		struct {
			int smp_vcpus;
			int max_vcpus;
		} system;
	};
} qemu_info_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
struct qemu_plugin_hwaddr;
enum { PLUGIN_CB_NO_REGS = 0 };
enum { PLUGIN_INLINE_ADD_U64 = 0 };
enum { PLUGIN_MEM_RW = 3 };
typedef void (*tb_trans_cb)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*vcpu_udata_cb)(unsigned int vcpu, void *udata);
typedef void (*vcpu_mem_cb)(unsigned int vcpu, qemu_plugin_meminfo_t info,
			    uint64_t vaddr, void *udata);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   tb_trans_cb cb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb,
					      int op, void *ptr, uint64_t imm);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
					    vcpu_udata_cb cb, int flags,
					    void *udata);
void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *insn,
				      vcpu_mem_cb cb, int flags, int rw,
				      void *udata);
void qemu_plugin_register_vcpu_mem_inline(struct qemu_plugin_insn *insn,
					  int rw, int op, void *ptr,
					  uint64_t imm);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb,
						 size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
bool qemu_plugin_mem_is_store(qemu_plugin_meminfo_t info);
struct qemu_plugin_hwaddr *qemu_plugin_get_hwaddr(qemu_plugin_meminfo_t info,
						  uint64_t vaddr);
bool qemu_plugin_hwaddr_is_io(const struct qemu_plugin_hwaddr *haddr);
uint64_t qemu_plugin_hwaddr_phys_addr(const struct qemu_plugin_hwaddr *haddr);

/* mark.c's instruction, "nopl 0x5e0ce6a1(%rax,%rax,1)", which no compiler emits. */
static const unsigned char lab_marker[8] = {
	0x0f, 0x1f, 0x84, 0x00, 0xa1, 0xe6, 0x0c, 0x5e
};

static inline bool lab_is_marker(const struct qemu_plugin_insn *insn)
{
	return qemu_plugin_insn_size(insn) == sizeof(lab_marker) &&
	       !memcmp(qemu_plugin_insn_data(insn), lab_marker,
		       sizeof(lab_marker));
}

/* A mark's file, OUT.N; NULL if it cannot be written. */
static inline FILE *lab_mark_open(const char *out, int mark, char *path,
				  size_t len)
{
	snprintf(path, len, "%s.%d", out, mark);
	return fopen(path, "w");
}

/* Closes a mark's file and says on stderr (the VM's log) that it ran. */
static inline void lab_mark_close(FILE *f, const char *plugin,
				  const char *path, int mark, unsigned int vcpu)
{
	if (f)
		fclose(f);
	else
		fprintf(stderr, "%s: cannot write %s\n", plugin, path);
	fprintf(stderr, "%s: mark %d (vCPU %u)\n", plugin, mark, vcpu);
}

#endif
