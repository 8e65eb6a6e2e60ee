/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sroce: a software RoCEv2 HCA. Objects shared by the verbs glue.
 *
 * Layers, with calls going one way only:
 *   verbs glue (sroce_main.c, sroce_device.c, sroce_pd.c)
 *     -> objects (this header)
 *       -> pure layers (include/sroce/: ABI checks, MTU; later wire
 *          formats, PSN windows, WQE validation, ICRC)
 *         -> uapi (uapi/rdma/sroce-abi.h)
 */
#ifndef SROCE_H
#define SROCE_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/netdevice.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#define SROCE_NODE_DESC "sroce"
#define SROCE_PORT 1
#define SROCE_GID_TABLE_LEN 128
#define SROCE_PKEY_TABLE_LEN 1
#define SROCE_MAX_PD 0x10000

/* Module-wide counts of live driver objects, for leak checks in tests. */
enum sroce_obj_type {
	SROCE_OBJ_DEVICE,
	SROCE_OBJ_UCONTEXT,
	SROCE_OBJ_PD,
	SROCE_OBJ_TYPE_COUNT
};

struct sroce_dev {
	struct ib_device ibdev;
	/* Holds a reference (netdev_hold) for the life of sroce_dev. */
	struct net_device *ndev;
	netdevice_tracker ndev_tracker;
	/* Entry in the module's device list; guarded by sroce_devices_lock. */
	struct list_head list;
	/* Unregistration requested from atomic/RTNL context runs here. */
	struct work_struct unregister_work;
	/* The netdev is unregistering; guarded by sroce_devices_lock. */
	bool ndev_gone;
	/* Port state last reported in an event; guarded likewise. */
	bool port_was_active;
	/* Numbers of live PDs; bounded by SROCE_MAX_PD. */
	struct ida pdn_ida;
};

struct sroce_ucontext {
	struct ib_ucontext ibuc;
};

struct sroce_pd {
	struct ib_pd ibpd;
	u32 pdn;
};

static inline struct sroce_dev *to_sdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct sroce_dev, ibdev);
}

static inline struct sroce_pd *to_spd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct sroce_pd, ibpd);
}

/* sroce_main.c */
void sroce_obj_inc(enum sroce_obj_type type);
void sroce_obj_dec(enum sroce_obj_type type);

/* sroce_device.c */
int sroce_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		       struct ib_udata *udata);
int sroce_query_port(struct ib_device *ibdev, u32 port,
		     struct ib_port_attr *attr);
int sroce_get_port_immutable(struct ib_device *ibdev, u32 port,
			     struct ib_port_immutable *immutable);
enum rdma_link_layer sroce_get_link_layer(struct ib_device *ibdev, u32 port);
int sroce_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey);
int sroce_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata);
void sroce_dealloc_ucontext(struct ib_ucontext *ibuc);
void sroce_disassociate_ucontext(struct ib_ucontext *ibuc);
void sroce_port_event(struct sroce_dev *sdev, enum ib_event_type type);
bool sroce_port_active(struct sroce_dev *sdev);
extern const struct attribute_group sroce_attr_group;

/* sroce_pd.c */
int sroce_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int sroce_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);

/* sroce_udata.c */
int sroce_udata_copy_req(struct ib_udata *udata, void *req, size_t req_size);
int sroce_udata_copy_resp(struct ib_udata *udata, void *resp,
			  size_t resp_size);
int sroce_udata_expect_no_req(struct ib_udata *udata);

#endif /* SROCE_H */
