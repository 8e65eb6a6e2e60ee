/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sroce: the functions the verbs glue files define for one another: most
 * of the entry points sroce_main.c puts in ib_device_ops (those defined in
 * lower layers are declared with their layer: sroce_mmap() in
 * sroce_queue.h, sroce_fill_res_qp_entry() in sroce_qp.h), and what the
 * glue files share. Only glue files include this header.
 */
#ifndef SROCE_VERBS_H
#define SROCE_VERBS_H

#include <linux/sysfs.h>
#include <rdma/ib_verbs.h>
#include <sroce/compat.h>

struct sroce_dev;
struct sroce_qp;

/* sroce_device.c */
int sroce_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		       struct ib_udata *udata);
int sroce_query_port(struct ib_device *ibdev, u32 port,
		     struct ib_port_attr *attr);
int sroce_get_port_immutable(struct ib_device *ibdev, u32 port,
			     struct ib_port_immutable *immutable);
enum rdma_link_layer sroce_get_link_layer(struct ib_device *ibdev, u32 port);
struct rdma_hw_stats *sroce_alloc_hw_port_stats(struct ib_device *ibdev,
						u32 port);
int sroce_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port, int index);
int sroce_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey);
int sroce_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata);
void sroce_dealloc_ucontext(struct ib_ucontext *ibuc);
void sroce_disassociate_ucontext(struct ib_ucontext *ibuc);
void sroce_port_event(struct sroce_dev *sdev, enum ib_event_type type);
bool sroce_port_active(struct sroce_dev *sdev);
extern const struct attribute_group sroce_attr_group;
void sroce_status_update(struct sroce_dev *sdev);

/* sroce_ah.c */
int sroce_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		    struct ib_udata *udata);
int sroce_destroy_ah(struct ib_ah *ibah, u32 flags);
int sroce_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr);

/* sroce_mcast.c */
int sroce_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int sroce_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
void sroce_mcast_detach_all(struct sroce_qp *qp);

/* sroce_pd.c */
int sroce_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int sroce_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);

/* sroce_cq.c */
int sroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    SROCE_CREATE_CQ_ARG *arg);
int sroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int sroce_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int sroce_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
int sroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);

/* sroce_srq.c */
int sroce_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata);
int sroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata);
int sroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int sroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int sroce_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr);

/* sroce_mr.c */
struct ib_mr *sroce_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *sroce_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata);
int sroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
struct ib_mr *sroce_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				  u64 length, u64 iova, int access,
				  struct ib_pd *ibpd, struct ib_udata *udata);
struct ib_mr *sroce_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			     u32 max_num_sg);
int sroce_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int sroce_dealloc_mw(struct ib_mw *ibmw);
int sroce_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset);

/* sroce_qp.c */
int sroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata);
int sroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata);
int sroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init);
int sroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);

/* sroce_qp_post.c */
int sroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr);
int sroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr);

/* sroce_kick.c */
int sroce_kick_attach(struct sroce_qp *qp, int fd);
void sroce_kick_detach(struct sroce_qp *qp);

/* sroce_udata.c */
int sroce_udata_copy_req(struct ib_udata *udata, void *req, size_t req_size);
int sroce_udata_copy_resp(struct ib_udata *udata, void *resp,
			  size_t resp_size);
int sroce_udata_expect_no_req(struct ib_udata *udata);

#endif /* SROCE_VERBS_H */
