/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef SROCE_PROVIDER_H
#define SROCE_PROVIDER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <infiniband/verbs.h>
#include <rdma/sroce-abi.h>
#include <sroce/wqe_enc.h>
#include "verbs_private.h"

_Static_assert(IBV_SEND_FENCE == SROCE_VERBS_SEND_FENCE &&
	       IBV_SEND_SIGNALED == SROCE_VERBS_SEND_SIGNALED &&
	       IBV_SEND_SOLICITED == SROCE_VERBS_SEND_SOLICITED &&
	       IBV_SEND_INLINE == SROCE_VERBS_SEND_INLINE,
	       "the verbs' send flags are the kernel's");

#define SROCE_DRIVER_NAME "sroce"
/*
 * The uverbs ABI this provider speaks. Only tests override it, to build a
 * provider that must refuse today's kernel.
 */
#ifndef SROCE_PROVIDER_ABI
#define SROCE_PROVIDER_ABI SROCE_UVERBS_ABI_VERSION
#endif
/* Every enum sroce_ucontext_cap bit this provider understands. */
#define SROCE_PROVIDER_CAPS                                              \
	((uint64_t)(SROCE_UCONTEXT_CAP_UD_UC | SROCE_UCONTEXT_CAP_KICK_EVENTFD | \
		    SROCE_UCONTEXT_CAP_ATOMIC_WRITE))

/* The kernel's limits on what a UD address may hold. */
#define SROCE_GID_TABLE_LEN 128		/* sgid_index: entries of port 1 */
#define SROCE_QPN_MASK 0xffffffU	/* remote_qpn: 24 bits */
#define SROCE_FLOW_LABEL_MASK 0xfffffU	/* flow_label: 20 bits */

/* The send opcodes each QP type takes: bits of enum sroce_wqe_opcode. */
#define SROCE_WQE_OPS_UD ((1U << SROCE_WQE_SEND) | (1U << SROCE_WQE_SEND_IMM))
#define SROCE_WQE_OPS_UC                                                      \
	(SROCE_WQE_OPS_UD | (1U << SROCE_WQE_RDMA_WRITE) |                    \
	 (1U << SROCE_WQE_RDMA_WRITE_IMM) | (1U << SROCE_WQE_LOCAL_INV) |     \
	 (1U << SROCE_WQE_BIND_MW))
#define SROCE_WQE_OPS_RC                                                      \
	(SROCE_WQE_OPS_UC | (1U << SROCE_WQE_RDMA_READ) |                     \
	 (1U << SROCE_WQE_ATOMIC_CMP_SWP) | (1U << SROCE_WQE_ATOMIC_FETCH_ADD) | \
	 (1U << SROCE_WQE_SEND_INV) | (1U << SROCE_WQE_ATOMIC_WRITE))

struct sroce_device {
	struct verbs_device vdev;
};

struct sroce_context {
	struct verbs_context vctx;
	uint64_t kernel_caps;
	/* The engine status page (read-only): need-wakeup flags. */
	const struct sroce_engine_status *status;
	size_t status_len;
};

/* A ring mapped from the kernel (rules in <rdma/sroce-abi.h>). */
struct sroce_ring {
	void *map;
	size_t map_len;
	struct sroce_queue_hdr *hdr;
	uint8_t *slots;
	uint32_t log_slots;
	uint32_t log_slot_size;
	uint32_t index;		/* our own: producer of a WQ, consumer of a CQ */
	pthread_spinlock_t lock;
};

struct sroce_cq {
	struct verbs_cq vcq;		/* first: libibverbs casts to it */
	struct sroce_ring ring;
	uint32_t arm_seq;
	/* ibv_start_poll() and friends: the CQE being read, if any. */
	struct sroce_cqe *cur;
};

struct sroce_qp {
	struct verbs_qp vqp;		/* first: libibverbs casts to it */
	struct sroce_ring sq;
	struct sroce_ring rq;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline;
	/* From the QP type: the opcodes it takes, and whether it is UD. */
	uint32_t wqe_ops;
	bool ud;
	/*
	 * The state this process last moved the QP to. Posting checks it
	 * as verbs require (no send before RTS, no receive in RESET); the
	 * kernel, which may move the QP to the error state on its own, only
	 * ever makes posting more permissive than this says.
	 */
	enum ibv_qp_state state;
	const struct sroce_engine_status *status;
	/* The kick eventfd, or -1: then a POST_SEND command kicks. */
	int kick_fd;
	/* The ibv_wr_* API: the WQE being built, the first one of the batch. */
	struct sroce_send_wqe *cur;
	uint32_t batch_start;
	int batch_err;
};

/*
 * wc.sl of a completion. RoCE has no service level. For a received
 * datagram (its buffer starts with the GRH area) it holds the packet's
 * network header type, as ConnectX's provider reports it there: 1 for
 * RoCEv2 over IPv6, 2 over IPv4. UCX's UD transport before 1.19 reads it
 * to know where in the GRH area the destination address is, and drops
 * every datagram whose address it does not find (with sl 0, all IPv4
 * ones). Other completions read 0.
 */
enum {
	SROCE_WC_SL_IPV6 = 1,
	SROCE_WC_SL_IPV4 = 2,
};

static inline uint8_t sroce_cqe_sl(const struct sroce_cqe *cqe)
{
	if (!(cqe->flags & SROCE_CQE_WITH_GRH))
		return 0;
	return (cqe->flags & SROCE_CQE_IPV4) ? SROCE_WC_SL_IPV4 :
					       SROCE_WC_SL_IPV6;
}

/*
 * An address handle lives in userspace only: it holds the address segment
 * of a UD send WQE, which posting copies (remote_qpn and remote_qkey are
 * filled per work request).
 */
struct sroce_ah {
	struct ibv_ah ibv_ah;
	struct sroce_wqe_ud av;
};

/* Verbs: no send work request is posted to a QP before RTS. */
static inline bool sroce_qp_can_send(struct sroce_qp *qp)
{
	switch (__atomic_load_n(&qp->state, __ATOMIC_RELAXED)) {
	case IBV_QPS_RESET:
	case IBV_QPS_INIT:
	case IBV_QPS_RTR:
		return false;
	default:
		return true;
	}
}

static inline struct sroce_ah *to_sah(struct ibv_ah *ah)
{
	return container_of(ah, struct sroce_ah, ibv_ah);
}

/*
 * The port's path MTU, the largest UD message; the kernel changes it
 * whenever the netdev's MTU changes.
 */
static inline uint32_t sroce_port_mtu(const struct sroce_qp *qp)
{
	return atomic_load_explicit(
		(_Atomic uint32_t *)&qp->status->port_mtu,
		memory_order_relaxed);
}

static inline struct sroce_cq *to_scq(struct ibv_cq *cq)
{
	return container_of(cq, struct sroce_cq, vcq.cq);
}

static inline struct sroce_qp *to_sqp(struct ibv_qp *qp)
{
	return container_of(qp, struct sroce_qp, vqp.qp);
}

static inline void *sroce_ring_slot(const struct sroce_ring *r, uint32_t i)
{
	return r->slots + ((size_t)(i & ((1U << r->log_slots) - 1))
			   << r->log_slot_size);
}

#define load_acquire(p)                                                       \
	atomic_load_explicit((_Atomic __typeof__(*(p)) *)(p),                 \
			     memory_order_acquire)
#define store_release(p, v)                                                   \
	atomic_store_explicit((_Atomic __typeof__(*(p)) *)(p), (v),           \
			      memory_order_release)

/* sroce_queue.c */
/* The bind segment of a BIND_MW WQE: the window takes rkey and info. */
void sroce_set_bind(struct sroce_send_wqe *wqe, uint32_t rkey,
		    const struct ibv_mw_bind_info *info);
void sroce_sq_doorbell(struct sroce_qp *qp);
void sroce_qp_kick_fd_open(struct sroce_qp *qp, struct ibv_context *context,
			   struct sroce_create_qp_req *req);
void sroce_qp_kick_fd_close(struct sroce_qp *qp);
int sroce_qp_map(struct sroce_qp *qp, struct ibv_context *context,
		 enum ibv_qp_type qp_type,
		 const struct sroce_create_qp_resp *drv,
		 const struct ibv_qp_cap *cap);
struct ibv_cq *sroce_create_cq(struct ibv_context *context, int cqe,
			       struct ibv_comp_channel *channel,
			       int comp_vector);
int sroce_destroy_cq(struct ibv_cq *cq);
int sroce_resize_cq(struct ibv_cq *cq, int cqe);
struct ibv_cq_ex *sroce_create_cq_ex(struct ibv_context *context,
				     struct ibv_cq_init_attr_ex *attr);
void sroce_ring_unmap(struct sroce_ring *r);
int sroce_ring_remap(struct sroce_ring *r, int fd, uint64_t offset,
		     size_t len, uint32_t log_slots, uint32_t log_slot_size);
int sroce_cq_map(struct sroce_cq *cq, struct ibv_context *context,
		 const struct sroce_create_cq_resp *drv, bool timestamps);
int sroce_ring_map(struct sroce_ring *r, int fd, uint64_t offset, size_t len,
		   uint32_t log_slots, uint32_t log_slot_size);
int sroce_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
int sroce_req_notify_cq(struct ibv_cq *cq, int solicited_only);
struct ibv_qp *sroce_create_qp(struct ibv_pd *pd,
			       struct ibv_qp_init_attr *attr);
struct ibv_qp *sroce_create_qp_ex(struct ibv_context *context,
				  struct ibv_qp_init_attr_ex *attr);
int sroce_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		    int attr_mask);
int sroce_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		   int attr_mask, struct ibv_qp_init_attr *init_attr);
int sroce_destroy_qp(struct ibv_qp *qp);
int sroce_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		    struct ibv_send_wr **bad_wr);
int sroce_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad_wr);

/* A shared receive queue: one ring of receive WQEs, posted without a syscall. */
struct sroce_srq {
	struct ibv_srq ibv_srq;		/* first: libibverbs casts to it */
	struct sroce_ring ring;
	uint32_t max_sge;
};

static inline struct sroce_srq *to_ssrq(struct ibv_srq *srq)
{
	return container_of(srq, struct sroce_srq, ibv_srq);
}

/* sroce_srq.c */
struct ibv_srq *sroce_create_srq(struct ibv_pd *pd,
				 struct ibv_srq_init_attr *attr);
int sroce_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
		     int attr_mask);
int sroce_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr);
int sroce_destroy_srq(struct ibv_srq *srq);
int sroce_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr);
/* Writes receive WQEs into a ring (an RQ or an SRQ) and publishes them. */
int sroce_ring_post_recv(struct sroce_ring *r, uint32_t max_sge,
			 struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);

/*
 * A protection domain, or a parent domain standing for one: a parent
 * domain carries its PD's kernel handle, so every command naming it names
 * that PD. Queue memory is the driver's (mapped from the kernel), so the
 * provider allocates no buffer a parent domain's allocators could serve,
 * and a thread domain only promises what the provider already does.
 */
struct sroce_pd {
	struct ibv_pd ibv_pd;
	uint32_t pdn;
	struct sroce_pd *protection;	/* parent domains: their PD */
	struct sroce_td *td;		/* parent domains: their TD, or NULL */
	atomic_uint parents;		/* PDs: parent domains naming it */
};

struct sroce_td {
	struct ibv_td ibv_td;
	atomic_uint parents;		/* parent domains naming it */
};

static inline struct sroce_context *to_sctx(struct ibv_context *ctx)
{
	return container_of(ctx, struct sroce_context, vctx.context);
}

static inline struct sroce_pd *to_spd(struct ibv_pd *pd)
{
	return container_of(pd, struct sroce_pd, ibv_pd);
}

/* The protection domain pd is, or stands for. */
static inline struct sroce_pd *sroce_protection_domain(struct ibv_pd *pd)
{
	struct sroce_pd *spd = to_spd(pd);

	return spd->protection ? spd->protection : spd;
}

static inline bool sroce_is_parent_domain(struct ibv_pd *pd)
{
	return pd && to_spd(pd)->protection;
}

/* The driver request/response pairs, laid out after the core ones. */
struct sroce_cmd_alloc_ucontext {
	struct ibv_get_context ibv_cmd;
	struct sroce_alloc_ucontext_req drv;
};

struct sroce_cmd_alloc_ucontext_resp {
	struct ib_uverbs_get_context_resp ibv_resp;
	struct sroce_alloc_ucontext_resp drv;
};

struct sroce_cmd_create_cq_resp {
	struct ib_uverbs_create_cq_resp ibv_resp;
	struct sroce_create_cq_resp drv;
};

struct sroce_cmd_create_cq_ex_resp {
	struct ib_uverbs_ex_create_cq_resp ibv_resp;
	struct sroce_create_cq_resp drv;
};

struct sroce_cmd_resize_cq_resp {
	struct ib_uverbs_resize_cq_resp ibv_resp;
	struct sroce_create_cq_resp drv;
};

struct sroce_cmd_create_qp {
	struct ibv_create_qp ibv_cmd;
	struct sroce_create_qp_req drv;
};

struct sroce_cmd_create_qp_resp {
	struct ib_uverbs_create_qp_resp ibv_resp;
	struct sroce_create_qp_resp drv;
};

struct sroce_cmd_create_srq_resp {
	struct ib_uverbs_create_srq_resp ibv_resp;
	struct sroce_create_srq_resp drv;
};

struct sroce_cmd_modify_srq {
	struct ibv_modify_srq ibv_cmd;
	struct sroce_modify_srq_req drv;
};

struct sroce_cmd_alloc_pd_resp {
	struct ib_uverbs_alloc_pd_resp ibv_resp;
	struct sroce_alloc_pd_resp drv;
};

#endif /* SROCE_PROVIDER_H */
