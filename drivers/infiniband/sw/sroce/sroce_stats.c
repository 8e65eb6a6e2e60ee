// SPDX-License-Identifier: GPL-2.0
/*
 * Statistics: each device's event counts, which the core shows as its
 * port's hw counters (rdma statistic show link DEV/1, sysfs
 * ports/1/hw_counters). A leaf: anyone may call it, it calls nothing of
 * the module.
 */
#include <linux/percpu.h>
#include "sroce_stats.h"

const struct rdma_stat_desc sroce_stat_descs[SROCE_STAT_COUNT] = {
	[SROCE_STAT_KICKS].name = "kicks",
	[SROCE_STAT_WQES].name = "wqes",
	[SROCE_STAT_SLEEPS].name = "sleeps",
	[SROCE_STAT_TX_PKTS].name = "tx_packets",
	[SROCE_STAT_TX_ERRORS].name = "tx_errors",
	[SROCE_STAT_RX_PKTS].name = "rx_packets",
	[SROCE_STAT_RX_DROP_MALFORMED].name = "rx_drop_malformed",
	[SROCE_STAT_RX_DROP_ICRC].name = "rx_drop_icrc",
	[SROCE_STAT_RX_DROP_NO_QP].name = "rx_drop_no_qp",
	[SROCE_STAT_RX_DROP_QUEUE].name = "rx_drop_queue_full",
	[SROCE_STAT_RX_DROP_PROTOCOL].name = "rx_drop_protocol",
	[SROCE_STAT_DUPLICATES].name = "duplicate_requests",
	[SROCE_STAT_SEQ_NAKS].name = "seq_naks_sent",
	[SROCE_STAT_RNR_NAKS].name = "rnr_naks_sent",
	[SROCE_STAT_RETRANSMITS].name = "retransmits",
	[SROCE_STAT_TIMEOUTS].name = "timeouts",
	[SROCE_STAT_UD_SENT].name = "ud_sent",
	[SROCE_STAT_UD_RECEIVED].name = "ud_received",
	[SROCE_STAT_RX_DROP_QKEY].name = "rx_drop_qkey",
	[SROCE_STAT_RX_DROP_PKEY].name = "rx_drop_pkey",
	[SROCE_STAT_RX_DROP_NO_RECV].name = "rx_drop_no_recv",
	[SROCE_STAT_UD_NO_DEST].name = "ud_no_dest",
	[SROCE_STAT_KICK_WAKES].name = "kick_wakes",
	[SROCE_STAT_RX_DROP_ADDRESS].name = "rx_drop_address",
	[SROCE_STAT_RX_DROP_REPLAY].name = "rx_drop_replay",
	[SROCE_STAT_SHORTCUT_DROP_PEER].name = "shortcut_drop_peer",
	[SROCE_STAT_SHORTCUT_HAND_OVERS].name = "shortcut_hand_overs",
	[SROCE_STAT_SHORTCUT_ANSWERS_BACK].name = "shortcut_answers_back",
	[SROCE_STAT_QP_RING_ERRORS].name = "qp_ring_errors",
	[SROCE_STAT_FAST_REGS].name = "fast_regs",
	[SROCE_STAT_INVALIDATES].name = "invalidates",
	[SROCE_STAT_RX_BAD_INVALIDATE].name = "rx_bad_invalidate",
	[SROCE_STAT_TX_BYTES].name = "tx_bytes",
	[SROCE_STAT_RX_BYTES].name = "rx_bytes",
	[SROCE_STAT_ERROR_NAKS].name = "error_naks_sent",
	[SROCE_STAT_SEQ_NAKS_RCVD].name = "seq_naks_received",
	[SROCE_STAT_RNR_NAKS_RCVD].name = "rnr_naks_received",
	[SROCE_STAT_ERROR_NAKS_RCVD].name = "error_naks_received",
	[SROCE_STAT_WORKER_RELEASES].name = "worker_releases",
	[SROCE_STAT_CQ_EVENTS].name = "cq_events",
	[SROCE_STAT_KEYS_REVOKED].name = "keys_revoked",
	[SROCE_STAT_KICKS_DEFERRED].name = "kicks_deferred",
	[SROCE_STAT_CQ_EVENTS_HELD].name = "cq_events_held",
	[SROCE_STAT_POLL_HITS].name = "worker_poll_hits",
	[SROCE_STAT_ACKS_COALESCED].name = "acks_coalesced",
	[SROCE_STAT_POSTS_INLINE].name = "posts_sent_inline",
	[SROCE_STAT_ACKS_IN_SOFTIRQ].name = "acks_in_softirq",
};

struct sroce_stats __percpu *sroce_stats_alloc(void)
{
	return alloc_percpu(struct sroce_stats);
}

void sroce_stats_free(struct sroce_stats __percpu *stats)
{
	free_percpu(stats);
}

void sroce_stats_sum(struct sroce_stats __percpu *stats, u64 *values)
{
	int i, cpu;

	for (i = 0; i < SROCE_STAT_COUNT; i++) {
		values[i] = 0;
		for_each_possible_cpu(cpu)
			values[i] += per_cpu_ptr(stats, cpu)->n[i];
	}
}
