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
	/*
	 * UD and UC QPs: the provider writes UD send WQEs with an address
	 * segment (struct sroce_wqe_ud) and understands SROCE_CQE_WITH_GRH.
	 * Without it the kernel refuses to create UD and UC QPs.
	 */
	SROCE_UCONTEXT_CAP_UD_UC = 1 << 0,
	/*
	 * The kick eventfd: create_qp takes an eventfd (struct
	 * sroce_create_qp_req) that the provider writes instead of making a
	 * POST_SEND command when the engine sleeps. Without it the provider
	 * kicks with a POST_SEND command that carries no work request.
	 */
	SROCE_UCONTEXT_CAP_KICK_EVENTFD = 1 << 1,
	/*
	 * The kernel takes SROCE_WQE_ATOMIC_WRITE on RC QPs. Without it the
	 * provider offers no ATOMIC_WRITE (a kernel that does not know the
	 * opcode fails its WQE).
	 */
	SROCE_UCONTEXT_CAP_ATOMIC_WRITE = 1 << 2,
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
	/* The engine status page (struct sroce_engine_status), read-only. */
	__aligned_u64 status_mmap_offset;
	__u32 status_mmap_len;
	__u32 max_inline_data;
};

struct sroce_alloc_pd_resp {
	__u32 comp_mask;
	__u32 pdn;	/* device-unique protection domain number */
};

/*
 * Queue memory
 * ============
 *
 * Every work queue (SQ, RQ) and completion queue is one kernel-allocated
 * mapping: a struct sroce_queue_hdr, then 2^log_slots slots of
 * 2^log_slot_size bytes each, starting at SROCE_QUEUE_SLOTS_OFFSET.
 *
 * Indices are free-running 32-bit counters; slot = index & (slots - 1).
 * Each side writes only its own index and reads the other's with acquire
 * semantics; it publishes its own with release semantics after the slot
 * contents. The kernel keeps private copies of the indices it owns and
 * treats everything userspace can write as untrusted: it copies each WQE
 * once into kernel memory, validates the copy and masks every index.
 */
#define SROCE_QUEUE_SLOTS_OFFSET 256

struct sroce_queue_hdr {
	__u32 producer;		/* WQ: userspace; CQ: kernel */
	__u32 reserved_20[15];
	__u32 consumer;		/* WQ: kernel; CQ: userspace */
	__u32 reserved_220[15];
	/*
	 * CQ only, written by userspace: (sequence << 1) | solicited_only.
	 * A new sequence arms the CQ for one completion event; the kernel
	 * raises it for the next completion written after it saw the arm
	 * (only a solicited or error completion if solicited_only is set).
	 */
	__u32 cq_arm;
	/*
	 * SQ only, written by the kernel: the engine worker serving the QP,
	 * an index into sroce_engine_status.words. It changes only while the
	 * QP is not yet in RTS.
	 */
	__u32 sq_worker;
	__u32 reserved_440[14];
	__u32 reserved_600[16];
};

/*
 * The engine status page, mapped read-only into every user context. The
 * engine serving a QP runs worker sroce_queue_hdr.sq_worker; when it is
 * about to sleep it sets SROCE_WORKER_NEED_WAKEUP in words[worker], issues
 * a full barrier and checks the producer indices once more. A provider
 * that published new WQEs issues a full barrier, reads the word and, only
 * if the flag is set, kicks the engine with one system call (a POST_SEND
 * command for the QP with no work requests).
 */
#define SROCE_MAX_WORKERS 64
#define SROCE_WORKER_NEED_WAKEUP 1U

struct sroce_engine_status {
	__u32 words[SROCE_MAX_WORKERS];
	/*
	 * The port's active path MTU in bytes: the largest UD message. The
	 * kernel updates it when the netdev's MTU changes and checks every
	 * WQE itself; a provider reads it to refuse a too long UD send early.
	 */
	__u32 port_mtu;
	__u32 reserved_820;
};

/* Send work request opcodes (the value of sroce_wqe_ctrl.opcode). */
enum sroce_wqe_opcode {
	SROCE_WQE_SEND = 0,
	SROCE_WQE_SEND_IMM = 1,
	SROCE_WQE_RDMA_WRITE = 2,
	SROCE_WQE_RDMA_WRITE_IMM = 3,
	SROCE_WQE_RDMA_READ = 4,
	SROCE_WQE_ATOMIC_CMP_SWP = 5,
	SROCE_WQE_ATOMIC_FETCH_ADD = 6,
	/* Invalidates the key in ctrl.imm_data (host order); no data. */
	SROCE_WQE_LOCAL_INV = 7,
	/* A SEND asking the responder to invalidate the key in imm_data. */
	SROCE_WQE_SEND_INV = 8,
	/*
	 * Kernel QPs only (a user QP's ring never takes it): registers a
	 * fast-registration MR with the page list it was mapped to, as
	 * struct sroce_wqe_reg says; no data.
	 */
	SROCE_WQE_REG_MR = 9,
	/* Binds a memory window, as struct sroce_wqe_bind says; no data. */
	SROCE_WQE_BIND_MW = 10,
	/*
	 * RC only (IBTA 1.5 ATOMIC WRITE): the 8 bytes of atomic.swap_add, as
	 * they are in memory, stored at raddr in one access that no reader
	 * sees half done; no data segment, no inline data.
	 */
	SROCE_WQE_ATOMIC_WRITE = 11,
	SROCE_WQE_OPCODE_COUNT
};

enum sroce_wqe_flags {
	SROCE_WQE_SIGNALED = 1 << 0,
	SROCE_WQE_FENCE = 1 << 1,
	SROCE_WQE_SOLICITED = 1 << 2,
	SROCE_WQE_INLINE = 1 << 3,
};

/*
 * A send WQE: one 64-byte basic block (control, remote address and atomic
 * segments, always present), then num_sge data segments or inline_len
 * bytes of inline data.
 */
struct sroce_wqe_ctrl {
	__u8 opcode;		/* enum sroce_wqe_opcode */
	__u8 flags;		/* enum sroce_wqe_flags */
	__u8 num_sge;		/* 0 when SROCE_WQE_INLINE is set */
	__u8 reserved_18;
	__u32 inline_len;	/* only with SROCE_WQE_INLINE */
	__aligned_u64 wr_id;
	/*
	 * SEND_IMM, RDMA_WRITE_IMM: as it goes on the wire (big-endian);
	 * LOCAL_INV, SEND_INV: the key to invalidate (host order).
	 */
	__u32 imm_data;
	__u32 reserved_a0;
	__aligned_u64 reserved_c0;
};

struct sroce_wqe_raddr {
	__aligned_u64 remote_addr;
	__u32 rkey;
	__u32 reserved_60;
};

struct sroce_wqe_atomic {
	/* swap value, addend, or the bytes an ATOMIC_WRITE stores */
	__aligned_u64 swap_add;
	__aligned_u64 compare;
};

/*
 * A REG_MR WQE, in place of the raddr and atomic segments: the MR whose
 * key index key names takes key, addr (its iova), length and access
 * (enum ib_access_flags), its page list read in page_size units.
 */
struct sroce_wqe_reg {
	__aligned_u64 addr;
	__aligned_u64 length;
	__u32 key;
	__u32 access;
	__u32 page_size;
	__u32 reserved_e0;
};

/*
 * A BIND_MW WQE, in place of the raddr and atomic segments: the window
 * whose key index key names takes key and [addr, addr + length) of the MR
 * mr_key names, with access (enum ib_access_flags: remote rights, and
 * zero-based addressing for a type 2 window). length 0 unbinds.
 */
struct sroce_wqe_bind {
	__aligned_u64 addr;
	__aligned_u64 length;
	__u32 key;
	__u32 access;
	__u32 mr_key;
	__u32 reserved_e0;
};

struct sroce_sge {
	__aligned_u64 addr;
	__u32 length;
	__u32 lkey;
};

/*
 * The address vector of a UD send, in place of the raddr and atomic
 * segments: what an address handle holds, plus the destination QP and
 * Q_Key. A Q_Key with its most significant bit set means "the QP's own
 * Q_Key" (the only way to send a privileged one).
 */
struct sroce_wqe_ud {
	__u8 dgid[16];		/* destination GID, network order */
	__u32 remote_qpn;
	__u32 remote_qkey;
	__u32 flow_label;	/* 20 bits */
	__u8 sgid_index;	/* source GID table index of port 1 */
	__u8 traffic_class;
	__u8 hop_limit;
	__u8 reserved_f8;
};

struct sroce_send_wqe {
	struct sroce_wqe_ctrl ctrl;
	union {
		struct {		/* RC and UC */
			struct sroce_wqe_raddr raddr;
			struct sroce_wqe_atomic atomic;
		};
		struct sroce_wqe_ud ud;	/* UD */
		struct sroce_wqe_reg reg;	/* REG_MR */
		struct sroce_wqe_bind bind;	/* BIND_MW */
	};
	struct sroce_sge sge[];		/* or inline data */
};

/* A receive WQE: a 16-byte header, then num_sge data segments. */
struct sroce_recv_wqe {
	__aligned_u64 wr_id;
	__u8 num_sge;
	__u8 reserved_48[7];
	struct sroce_sge sge[];
};

/* Completion status and opcode values are those of enum ibv_wc_status and
 * enum ibv_wc_opcode (which equal the kernel's enum ib_wc_*).
 */
enum sroce_cqe_flags {
	SROCE_CQE_WITH_IMM = 1 << 0,
	SROCE_CQE_WITH_INV = 1 << 1,
	SROCE_CQE_SOLICITED = 1 << 2,
	/*
	 * UD receive: the buffer starts with the 40-byte GRH and byte_len
	 * counts it. For IPv6 the GRH is the IPv6 header; for IPv4 it is 20
	 * zero bytes and then the IPv4 header (SROCE_CQE_IPV4 set).
	 */
	SROCE_CQE_WITH_GRH = 1 << 3,
	SROCE_CQE_IPV4 = 1 << 4,
};

/*
 * A CQE. The kernel writes owner last: on the ring's first pass it writes
 * 1, on the second 0, and so on, so the consumer at index c owns the CQE
 * when owner == (((c >> log_slots) & 1) ^ 1); a fresh ring is all zeros.
 */
struct sroce_cqe {
	__aligned_u64 wr_id;
	__u8 status;
	__u8 opcode;
	__u8 flags;		/* enum sroce_cqe_flags */
	__u8 owner;
	__u32 byte_len;
	__u32 imm_data;		/* as on the wire (big-endian), or rkey */
	__u32 qp_num;
	__u32 src_qp;
	__u32 vendor_err;
};

/*
 * The slot of a CQ created with IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION
 * (ibv_create_cq_ex with IBV_WC_EX_WITH_COMPLETION_TIMESTAMP): the CQE,
 * then the time the kernel wrote it, in nanoseconds of the host's
 * CLOCK_MONOTONIC_RAW (hca_core_clock 1000000 kHz, a 64-bit counter).
 * The timestamp is written before owner, as the rest of the CQE.
 */
struct sroce_cqe_ts {
	struct sroce_cqe cqe;
	__aligned_u64 timestamp;
	__u8 reserved_140[24];
};

enum sroce_create_cq_resp_mask {
	/* log_cqe_size holds the size of the ring's slots. */
	SROCE_CREATE_CQ_RESP_CQE_SIZE = 1 << 0,
};

/*
 * Also the response of a CQ resize: the new ring, consumer index 0, with
 * slots of the size the CQ was created with. Creating a CQ with
 * timestamps needs the whole response (the kernel refuses a shorter one).
 */
struct sroce_create_cq_resp {
	__u32 comp_mask;	/* enum sroce_create_cq_resp_mask */
	__u32 log_slots;
	__aligned_u64 mmap_offset;
	__u32 mmap_len;
	__u32 cqn;
	__u32 log_cqe_size;	/* log2 of a slot's bytes: 5, or 6 with timestamps */
	__u32 reserved_e0;
};

enum sroce_create_qp_req_mask {
	/* kick_fd is an eventfd of the caller's: the QP's doorbell. */
	SROCE_CREATE_QP_REQ_KICK_FD = 1 << 0,
};

/*
 * Writing to the kick eventfd is a doorbell: the writing thread runs the
 * engine for the QP before it returns to user space. The kernel keeps its
 * own reference to the eventfd until the QP is destroyed; the provider
 * may close its descriptor at any time. kick_fd must be 0 when
 * SROCE_CREATE_QP_REQ_KICK_FD is not set.
 */
struct sroce_create_qp_req {
	__u32 comp_mask;	/* enum sroce_create_qp_req_mask */
	__s32 kick_fd;
};

struct sroce_create_qp_resp {
	__u32 comp_mask;
	__u32 qpn;
	__aligned_u64 sq_mmap_offset;
	__aligned_u64 rq_mmap_offset;
	__u32 sq_mmap_len;
	__u32 rq_mmap_len;
	__u8 sq_log_slots;
	__u8 sq_log_slot_size;
	__u8 rq_log_slots;
	__u8 rq_log_slot_size;
	__u32 reserved_120;
	__u32 max_inline_data;
	__u32 reserved_160;
};

/*
 * A shared receive queue: one ring in the receive WQE format, producer
 * written by userspace, consumer by the kernel, mapped like an RQ.
 */
struct sroce_create_srq_resp {
	__u32 comp_mask;
	__u32 reserved_20;
	__aligned_u64 mmap_offset;
	__u32 mmap_len;
	__u8 log_slots;
	__u8 log_slot_size;
	__u8 reserved_70[2];
};

/*
 * The request of an SRQ resize (ibv_modify_srq with IBV_SRQ_MAX_WR; the
 * command has no response): the kernel writes the new ring's description
 * (struct sroce_create_srq_resp) to resp_addr in the caller's memory,
 * then moves the SRQ to that ring with the WQEs posted and not yet taken
 * at its first slots (consumer index 0, producer index their number).
 * The caller must not post while the command runs. A user SRQ is not
 * resized without resp_addr.
 */
struct sroce_modify_srq_req {
	__u32 comp_mask;
	__u32 reserved_20;
	__aligned_u64 resp_addr;
};

#endif /* SROCE_ABI_USER_H */
