// SPDX-License-Identifier: GPL-2.0
/*
 * Statistics and object accounting: module-wide engine event counters and
 * counts of live driver objects, shown in debugfs (sroce/engine,
 * sroce/objects). A leaf: anyone may call it, it calls nothing of the
 * module.
 */
#include <linux/debugfs.h>
#include <linux/percpu.h>
#include <linux/seq_file.h>
#include "sroce.h"

static atomic_t sroce_obj_counts[SROCE_OBJ_TYPE_COUNT];
DEFINE_PER_CPU(u64 [SROCE_STAT_COUNT], sroce_stats);

static const char *const sroce_stat_names[SROCE_STAT_COUNT] = {
	[SROCE_STAT_KICKS] = "kicks",
	[SROCE_STAT_WQES] = "wqes",
	[SROCE_STAT_SLEEPS] = "sleeps",
	[SROCE_STAT_TX_PKTS] = "tx_packets",
	[SROCE_STAT_TX_ERRORS] = "tx_errors",
	[SROCE_STAT_RX_PKTS] = "rx_packets",
	[SROCE_STAT_RX_DROP_MALFORMED] = "rx_drop_malformed",
	[SROCE_STAT_RX_DROP_ICRC] = "rx_drop_icrc",
	[SROCE_STAT_RX_DROP_NO_QP] = "rx_drop_no_qp",
	[SROCE_STAT_RX_DROP_QUEUE] = "rx_drop_queue_full",
	[SROCE_STAT_RX_DROP_PROTOCOL] = "rx_drop_protocol",
	[SROCE_STAT_DUPLICATES] = "duplicate_requests",
	[SROCE_STAT_SEQ_NAKS] = "seq_naks_sent",
	[SROCE_STAT_RNR_NAKS] = "rnr_naks_sent",
	[SROCE_STAT_RETRANSMITS] = "retransmits",
	[SROCE_STAT_TIMEOUTS] = "timeouts",
	[SROCE_STAT_UD_SENT] = "ud_sent",
	[SROCE_STAT_UD_RECEIVED] = "ud_received",
	[SROCE_STAT_RX_DROP_QKEY] = "rx_drop_qkey",
	[SROCE_STAT_RX_DROP_PKEY] = "rx_drop_pkey",
	[SROCE_STAT_RX_DROP_NO_RECV] = "rx_drop_no_recv",
	[SROCE_STAT_UD_NO_DEST] = "ud_no_dest",
	[SROCE_STAT_KICK_WAKES] = "kick_wakes",
	[SROCE_STAT_RX_DROP_ADDRESS] = "rx_drop_address",
	[SROCE_STAT_RX_DROP_REPLAY] = "rx_drop_replay",
	[SROCE_STAT_SHORTCUT_DROP_PEER] = "shortcut_drop_peer",
	[SROCE_STAT_SHORTCUT_HAND_OVERS] = "shortcut_hand_overs",
	[SROCE_STAT_QP_RING_ERRORS] = "qp_ring_errors",
	[SROCE_STAT_FAST_REGS] = "fast_regs",
	[SROCE_STAT_INVALIDATES] = "invalidates",
	[SROCE_STAT_RX_BAD_INVALIDATE] = "rx_bad_invalidate",
};

static int sroce_engine_stats_show(struct seq_file *s, void *unused)
{
	int i, cpu;
	u64 v;

	for (i = 0; i < SROCE_STAT_COUNT; i++) {
		v = 0;
		for_each_possible_cpu(cpu)
			v += per_cpu(sroce_stats, cpu)[i];
		seq_printf(s, "%s %llu\n", sroce_stat_names[i],
			   (unsigned long long)v);
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sroce_engine_stats);

static const char *const sroce_obj_names[SROCE_OBJ_TYPE_COUNT] = {
	[SROCE_OBJ_DEVICE] = "devices",
	[SROCE_OBJ_UCONTEXT] = "ucontexts",
	[SROCE_OBJ_PD] = "pds",
	[SROCE_OBJ_CQ] = "cqs",
	[SROCE_OBJ_QP] = "qps",
	[SROCE_OBJ_MR] = "mrs",
	[SROCE_OBJ_AH] = "ahs",
	[SROCE_OBJ_SRQ] = "srqs",
};

void sroce_obj_inc(enum sroce_obj_type type)
{
	atomic_inc(&sroce_obj_counts[type]);
}

void sroce_obj_dec(enum sroce_obj_type type)
{
	WARN_ON_ONCE(atomic_dec_return(&sroce_obj_counts[type]) < 0);
}

static int sroce_objects_show(struct seq_file *s, void *unused)
{
	int i;

	for (i = 0; i < SROCE_OBJ_TYPE_COUNT; i++)
		seq_printf(s, "%s %d\n", sroce_obj_names[i],
			   atomic_read(&sroce_obj_counts[i]));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sroce_objects);

void sroce_stats_debugfs(struct dentry *dir)
{
	debugfs_create_file("objects", 0400, dir, NULL, &sroce_objects_fops);
	debugfs_create_file("engine", 0400, dir, NULL,
			    &sroce_engine_stats_fops);
}
