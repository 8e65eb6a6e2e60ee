/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sroce's tracepoints (trace-cmd, perf trace: events sroce:*). Each takes
 * plain values, so a layer that fires one needs nothing above it; off,
 * each costs a patched-out branch (a static key).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM sroce

#if !defined(SROCE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define SROCE_TRACE_H

#include <linux/tracepoint.h>

/* The engine took send WQE index of QP qpn; status is its fetch's. */
TRACE_EVENT(sroce_wqe,
	    TP_PROTO(u32 qpn, u32 index, u8 opcode, u8 status),
	    TP_ARGS(qpn, index, opcode, status),
	    TP_STRUCT__entry(__field(u32, qpn)
			     __field(u32, index)
			     __field(u8, opcode)
			     __field(u8, status)),
	    TP_fast_assign(__entry->qpn = qpn;
			   __entry->index = index;
			   __entry->opcode = opcode;
			   __entry->status = status;),
	    TP_printk("qpn %u index %u opcode %u status %u", __entry->qpn,
		      __entry->index, __entry->opcode, __entry->status)
);

/*
 * A packet of QP qpn handed to its link (traced before the send: a send
 * the link refuses shows once per try), or taken from it.
 */
DECLARE_EVENT_CLASS(sroce_pkt_class,
		    TP_PROTO(u32 qpn, u32 dest_qpn, u8 opcode, u32 psn,
			     u32 len, bool wire),
		    TP_ARGS(qpn, dest_qpn, opcode, psn, len, wire),
		    TP_STRUCT__entry(__field(u32, qpn)
				     __field(u32, dest_qpn)
				     __field(u32, psn)
				     __field(u32, len)
				     __field(u8, opcode)
				     __field(bool, wire)),
		    TP_fast_assign(__entry->qpn = qpn;
				   __entry->dest_qpn = dest_qpn;
				   __entry->psn = psn;
				   __entry->len = len;
				   __entry->opcode = opcode;
				   __entry->wire = wire;),
		    TP_printk("qpn %u dest_qpn %u opcode 0x%02x psn %u len %u link %s",
			      __entry->qpn, __entry->dest_qpn, __entry->opcode,
			      __entry->psn, __entry->len,
			      __entry->wire ? "wire" : "shortcut")
);

DEFINE_EVENT(sroce_pkt_class, sroce_pkt_tx,
	     TP_PROTO(u32 qpn, u32 dest_qpn, u8 opcode, u32 psn, u32 len,
		      bool wire),
	     TP_ARGS(qpn, dest_qpn, opcode, psn, len, wire));

DEFINE_EVENT(sroce_pkt_class, sroce_pkt_rx,
	     TP_PROTO(u32 qpn, u32 dest_qpn, u8 opcode, u32 psn, u32 len,
		      bool wire),
	     TP_ARGS(qpn, dest_qpn, opcode, psn, len, wire));

/* The requester of qpn goes back to psn (a NAK, an RNR NAK, a timeout). */
TRACE_EVENT(sroce_retransmit,
	    TP_PROTO(u32 qpn, u32 psn),
	    TP_ARGS(qpn, psn),
	    TP_STRUCT__entry(__field(u32, qpn)
			     __field(u32, psn)),
	    TP_fast_assign(__entry->qpn = qpn;
			   __entry->psn = psn;),
	    TP_printk("qpn %u psn %u", __entry->qpn, __entry->psn)
);

/* An RNR NAK or NAK (AETH syndrome) for psn, sent or received by qpn. */
TRACE_EVENT(sroce_nak,
	    TP_PROTO(u32 qpn, u32 psn, u8 syndrome, bool sent),
	    TP_ARGS(qpn, psn, syndrome, sent),
	    TP_STRUCT__entry(__field(u32, qpn)
			     __field(u32, psn)
			     __field(u8, syndrome)
			     __field(bool, sent)),
	    TP_fast_assign(__entry->qpn = qpn;
			   __entry->psn = psn;
			   __entry->syndrome = syndrome;
			   __entry->sent = sent;),
	    TP_printk("qpn %u psn %u syndrome 0x%02x %s", __entry->qpn,
		      __entry->psn, __entry->syndrome,
		      __entry->sent ? "sent" : "received")
);

/* A completion written to CQ cq (its restrack id; status: ib_wc_status). */
TRACE_EVENT(sroce_cqe,
	    TP_PROTO(u32 cq, u32 qpn, u64 wr_id, u8 status, u8 opcode,
		     u32 len),
	    TP_ARGS(cq, qpn, wr_id, status, opcode, len),
	    TP_STRUCT__entry(__field(u64, wr_id)
			     __field(u32, cq)
			     __field(u32, qpn)
			     __field(u32, len)
			     __field(u8, status)
			     __field(u8, opcode)),
	    TP_fast_assign(__entry->wr_id = wr_id;
			   __entry->cq = cq;
			   __entry->qpn = qpn;
			   __entry->len = len;
			   __entry->status = status;
			   __entry->opcode = opcode;),
	    TP_printk("cq %u qpn %u wr_id 0x%llx status %u opcode %u len %u",
		      __entry->cq, __entry->qpn,
		      (unsigned long long)__entry->wr_id, __entry->status,
		      __entry->opcode, __entry->len)
);

/* QP qpn moved from state old to new (enum ib_qp_state). */
TRACE_EVENT(sroce_qp_state,
	    TP_PROTO(u32 qpn, u8 old, u8 new),
	    TP_ARGS(qpn, old, new),
	    TP_STRUCT__entry(__field(u32, qpn)
			     __field(u8, old)
			     __field(u8, new)),
	    TP_fast_assign(__entry->qpn = qpn;
			   __entry->old = old;
			   __entry->new = new;),
	    TP_printk("qpn %u state %u -> %u", __entry->qpn, __entry->old,
		      __entry->new)
);

#endif /* SROCE_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE sroce_trace
#include <trace/define_trace.h>
