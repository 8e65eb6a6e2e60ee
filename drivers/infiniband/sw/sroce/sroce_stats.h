/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sroce: the leaf layer's counters: a device's event counts (its hw-stats,
 * sroce_stats.c). Every layer above the pure ones counts here;
 * sroce_stats.c calls none of them.
 */
#ifndef SROCE_STATS_H
#define SROCE_STATS_H

#include <linux/types.h>
#include <rdma/ib_verbs.h>

/*
 * A device's event counts, shown as its port's hw counters (rdma statistic,
 * /sys/class/infiniband/DEV/ports/1/hw_counters). Packets and bytes are
 * the wire's; a byte count covers BTH to ICRC.
 */
enum sroce_stat {
	SROCE_STAT_KICKS,	/* system calls that woke the engine */
	SROCE_STAT_WQES,	/* send WQEs started */
	SROCE_STAT_SLEEPS,	/* times a worker went to sleep */
	SROCE_STAT_TX_PKTS,	/* RoCEv2 packets sent */
	SROCE_STAT_TX_ERRORS,	/* packets the IP layer refused */
	SROCE_STAT_RX_PKTS,	/* packets handed to a QP */
	SROCE_STAT_RX_DROP_MALFORMED,	/* bad headers or lengths */
	SROCE_STAT_RX_DROP_ICRC,	/* ICRC mismatch */
	SROCE_STAT_RX_DROP_NO_QP,	/* no such QP on that netdev */
	SROCE_STAT_RX_DROP_QUEUE,	/* QP receive queue full */
	SROCE_STAT_RX_DROP_PROTOCOL,	/* wrong state, opcode or sequence */
	SROCE_STAT_DUPLICATES,	/* duplicate requests answered again */
	SROCE_STAT_SEQ_NAKS,	/* PSN sequence error NAKs sent */
	SROCE_STAT_RNR_NAKS,	/* RNR NAKs sent */
	SROCE_STAT_RETRANSMITS,	/* times a requester went back */
	SROCE_STAT_TIMEOUTS,	/* retransmission timer expiries */
	SROCE_STAT_UD_SENT,	/* UD datagrams sent (shortcut or wire) */
	SROCE_STAT_UD_RECEIVED,	/* UD datagrams placed in a receive WQE */
	SROCE_STAT_RX_DROP_QKEY,	/* UD: Q_Key does not match the QP's */
	SROCE_STAT_RX_DROP_PKEY,	/* P_Key not in the table */
	SROCE_STAT_RX_DROP_NO_RECV,	/* UD/UC: no receive WQE posted */
	SROCE_STAT_UD_NO_DEST,	/* UD shortcut: no such QP here */
	SROCE_STAT_KICK_WAKES,	/* kick eventfd writes that woke the worker */
	SROCE_STAT_RX_DROP_ADDRESS,	/* RC/UC: not from the path's addresses */
	SROCE_STAT_RX_DROP_REPLAY,	/* a duplicate READ/atomic not in history */
	SROCE_STAT_SHORTCUT_DROP_PEER,	/* shortcut: the QP does not name it */
	SROCE_STAT_SHORTCUT_HAND_OVERS,	/* shortcut: taken without a descriptor */
	SROCE_STAT_SHORTCUT_ANSWERS_BACK, /* shortcut: ACKs a hand-over carried back */
	SROCE_STAT_QP_RING_ERRORS,	/* QPs failed for an impossible index */
	SROCE_STAT_FAST_REGS,	/* REG_MRs that made an MR valid */
	SROCE_STAT_INVALIDATES,	/* keys invalidated, locally or remotely */
	SROCE_STAT_RX_BAD_INVALIDATE,	/* SEND_INV naming a key it may not */
	SROCE_STAT_TX_BYTES,	/* bytes of the RoCEv2 packets sent */
	SROCE_STAT_RX_BYTES,	/* bytes of the packets handed to a QP */
	SROCE_STAT_ERROR_NAKS,	/* fatal NAKs sent (invalid, access, op) */
	SROCE_STAT_SEQ_NAKS_RCVD,	/* PSN sequence error NAKs received */
	SROCE_STAT_RNR_NAKS_RCVD,	/* RNR NAKs received */
	SROCE_STAT_ERROR_NAKS_RCVD,	/* fatal NAKs received */
	SROCE_STAT_WORKER_RELEASES,	/* bound workers let go for load */
	SROCE_STAT_CQ_EVENTS,	/* completion events raised */
	SROCE_STAT_KEYS_REVOKED,	/* copies a key revoked since its check stopped */
	SROCE_STAT_KICKS_DEFERRED,	/* kicks left to the worker: not only the kicker's QPs */
	SROCE_STAT_CQ_EVENTS_HELD,	/* completion events held to the end of a QP's run */
	SROCE_STAT_POLL_HITS,	/* idle polls of a worker that found work: no sleep */
	SROCE_STAT_ACKS_COALESCED, /* ACK requests a later ACK answered */
	SROCE_STAT_POSTS_INLINE,	/* kernel posts the posting task sent */
	SROCE_STAT_ACKS_IN_SOFTIRQ,	/* ACKs taken where they arrived */
	SROCE_STAT_COUNT
};

/* sroce_stats.c (a leaf) */
/* Per CPU: counted on every packet, from any context, with no shared line. */
struct sroce_stats {
	u64 n[SROCE_STAT_COUNT];
};

/* The names, in enum sroce_stat's order. */
extern const struct rdma_stat_desc sroce_stat_descs[SROCE_STAT_COUNT];
/* A device's counts, or NULL. */
struct sroce_stats __percpu *sroce_stats_alloc(void);
void sroce_stats_free(struct sroce_stats __percpu *stats);
/* values[SROCE_STAT_COUNT]: the counts summed over the CPUs. */
void sroce_stats_sum(struct sroce_stats __percpu *stats, u64 *values);

#endif /* SROCE_STATS_H */
