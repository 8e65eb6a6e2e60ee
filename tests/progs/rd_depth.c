// SPDX-License-Identifier: GPL-2.0
/*
 * rd_depth DEV GID_INDEX: the device's depth of READs and atomics. A
 * same-host RC pair grants the device's max_qp_rd_atom in both directions,
 * posts that many READs of distinct 4 KiB blocks and as many FETCH_ADDs on
 * distinct counters at once, and checks every byte read, every original
 * value returned, every counter's final value and the completions; then
 * as many READs each followed by a WRITE in one post, whose answers (READ
 * responses, ACKs) must come back in order; then atomics one at a time,
 * each awaited; then atomics in one post, alone and with WRITEs among
 * them; then that a QP refuses one READ/atomic more than the maximum,
 * either way.
 * Prints "ok"/"not ok" lines; exits 1 on a failed check, 2 if it could not
 * run.
 */
#include <stdint.h>
#include "testlib.h"

#define BLOCK 4096
#define WANT_DEPTH 128	/* what rdma_rxe and RoCE NICs offer */

struct side {
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static union ibv_gid gid;
static int gid_index;

static struct ibv_qp *new_qp(uint32_t depth)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 2 * depth + 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &init);

	if (!qp)
		tl_die("ibv_create_qp");
	return qp;
}

static int connect_qp(struct ibv_qp *qp, uint32_t dest, uint32_t rd_atomic)
{
	struct tl_rc_conn conn = {
		.dest_qpn = dest, .dgid = &gid, .sgid_index = gid_index,
		.sq_psn = 100, .rq_psn = 100, .access = IBV_ACCESS_REMOTE_READ |
		IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC,
		/* 1 s: t_rc_data counts timeouts, and a vCPU may stall 67 ms */
		.timeout = 18, .retry_cnt = 7,
		.rnr_retry = 7, .min_rnr_timer = 1, .rd_atomic = rd_atomic,
	};

	return tl_connect_rc(qp, &conn);
}

static void post(struct side *a, struct side *b, uint32_t i, uint32_t depth,
		 int atomic)
{
	size_t counters = (size_t)depth * BLOCK;
	struct ibv_sge sge = { .lkey = a->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;

	wr.wr_id = (uint64_t)atomic << 32 | i;
	if (atomic) {
		sge.addr = (uintptr_t)a->buf + counters + i * 8;
		sge.length = 8;
		wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		wr.wr.atomic.remote_addr = (uintptr_t)b->buf + counters + i * 8;
		wr.wr.atomic.rkey = b->mr->rkey;
		wr.wr.atomic.compare_add = i + 1;
	} else {
		sge.addr = (uintptr_t)a->buf + (size_t)i * BLOCK;
		sge.length = BLOCK;
		wr.opcode = IBV_WR_RDMA_READ;
		wr.wr.rdma.remote_addr = (uintptr_t)b->buf + (size_t)i * BLOCK;
		wr.wr.rdma.rkey = b->mr->rkey;
	}
	if (ibv_post_send(a->qp, &wr, &bad))
		tl_die("ibv_post_send");
}

/*
 * READ i of block i, then a WRITE of 8 bytes from a's result slot i to b's
 * counter i, all posted in one list so that one pass of the requester
 * sends them together: the WRITE's ACK must not overtake the READ's
 * response. The data and the completions stay right either way (the
 * requester resends); the caller checks the device's resend counters.
 */
static void read_then_write(struct side *a, struct side *b, uint32_t depth)
{
	size_t counters = (size_t)depth * BLOCK;
	uint64_t *res = (uint64_t *)(a->buf + counters);
	uint64_t *ctr = (uint64_t *)(b->buf + counters);
	uint32_t i, done = 0, bad_wc = 0, bad_data = 0;
	struct ibv_send_wr *wr, *bad;
	struct ibv_sge *sge;
	struct ibv_wc wc;

	wr = calloc(2 * depth, sizeof(*wr));
	sge = calloc(2 * depth, sizeof(*sge));
	if (!wr || !sge)
		tl_die("calloc");
	memset(a->buf, 0, counters);
	for (i = 0; i < 2 * depth; i++) {
		uint32_t k = i / 2;

		sge[i].lkey = a->mr->lkey;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].next = i + 1 < 2 * depth ? &wr[i + 1] : NULL;
		if (i & 1) {
			res[k] = 0xabc000 + k;
			sge[i].addr = (uintptr_t)&res[k];
			sge[i].length = 8;
			wr[i].wr_id = 2ULL << 32 | k;
			wr[i].opcode = IBV_WR_RDMA_WRITE;
			wr[i].wr.rdma.remote_addr = (uintptr_t)&ctr[k];
		} else {
			sge[i].addr = (uintptr_t)a->buf + (size_t)k * BLOCK;
			sge[i].length = BLOCK;
			wr[i].wr_id = k;
			wr[i].opcode = IBV_WR_RDMA_READ;
			wr[i].wr.rdma.remote_addr =
				(uintptr_t)b->buf + (size_t)k * BLOCK;
		}
		wr[i].wr.rdma.rkey = b->mr->rkey;
	}
	if (ibv_post_send(a->qp, wr, &bad))
		tl_die("ibv_post_send");
	while (done < 2 * depth && tl_wait_wc(cq, &wc, 20)) {
		if (wc.status != IBV_WC_SUCCESS ||
		    wc.wr_id != ((done & 1 ? 2ULL << 32 : 0) | done / 2) ||
		    wc.opcode != (done & 1 ? IBV_WC_RDMA_WRITE :
				  IBV_WC_RDMA_READ))
			bad_wc++;
		done++;
	}
	tl_check(done == 2 * depth && !bad_wc,
		 "%u READs each followed by a WRITE, in one post: %u completions, %u not successful or out of order",
		 depth, done, bad_wc);
	for (i = 0; i < depth; i++)
		if (memcmp(a->buf + (size_t)i * BLOCK,
			   b->buf + (size_t)i * BLOCK, BLOCK) ||
		    ctr[i] != 0xabc000 + i)
			bad_data++;
	tl_check(!bad_data,
		 "every block read is the responder's and every WRITE landed (%u wrong)",
		 bad_data);
	free(wr);
	free(sge);
}

/*
 * Atomics one at a time on b's counter 0, each completion awaited: the
 * shape of a lock or a ticket (ib_atomic_lat), where a same-host atomic's
 * ACK comes back with its hand-over. FETCH_ADDs, CMP_SWAPs that match and
 * ones that do not; every original value, the final value and the
 * neighbouring counter are checked.
 */
static void atomics_in_turn(struct side *a, struct side *b, uint32_t depth)
{
	size_t counters = (size_t)depth * BLOCK;
	uint64_t *res = (uint64_t *)(a->buf + counters);
	uint64_t *ctr = (uint64_t *)(b->buf + counters);
	uint64_t want = 5, neighbour = ctr[1];
	uint32_t k, done = 0, bad_wc = 0, bad_orig = 0;
	struct ibv_sge sge = { .addr = (uintptr_t)res, .length = 8,
			       .lkey = a->mr->lkey };
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc;

	ctr[0] = want;
	for (k = 0; k < 64; k++) {
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = k;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr.atomic.remote_addr = (uintptr_t)&ctr[0];
		wr.wr.atomic.rkey = b->mr->rkey;
		if (k % 2 == 0) {
			wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
			wr.wr.atomic.compare_add = k + 1;
		} else {
			/* Every fourth compares with a value not there. */
			wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
			wr.wr.atomic.compare_add = k % 4 == 3 ? want + 1 : want;
			wr.wr.atomic.swap = want * 3 + k;
		}
		res[0] = ~0ULL;
		if (ibv_post_send(a->qp, &wr, &bad))
			tl_die("ibv_post_send");
		if (!tl_wait_wc(cq, &wc, 20))
			break;
		done++;
		if (wc.status != IBV_WC_SUCCESS || wc.wr_id != k ||
		    wc.opcode != (k % 2 ? IBV_WC_COMP_SWAP : IBV_WC_FETCH_ADD))
			bad_wc++;
		if (res[0] != want)
			bad_orig++;
		if (k % 2 == 0)
			want += k + 1;
		else if (k % 4 != 3)
			want = want * 3 + k;
	}
	tl_check(done == 64 && !bad_wc,
		 "64 atomics one at a time: %u completions, %u not successful or wrong",
		 done, bad_wc);
	tl_check(!bad_orig && ctr[0] == want && ctr[1] == neighbour,
		 "each returned the value before it (%u wrong), the counter is %llu (want %llu), its neighbour unchanged",
		 bad_orig, (unsigned long long)ctr[0],
		 (unsigned long long)want);
}

/*
 * 64 work requests in one post, in order: FETCH_ADDs and CMP_SWAPs on b's
 * counter 0 (every fourth compares with a value not there) and, with
 * writes, every third an 8-byte WRITE to counter 2 + k instead. Alone, a
 * same-host stream of atomics gets each ACK back with its hand-over; a
 * WRITE's parked ACK sends the atomics after it to the responder's run.
 * Checked: each completion in post order, each atomic's original value
 * (its own result slot), the counter's final value, every WRITE's bytes,
 * and counter 1 unchanged.
 */
static void atomics_in_stream(struct side *a, struct side *b, uint32_t depth,
			      int writes)
{
	size_t counters = (size_t)depth * BLOCK;
	uint64_t *res = (uint64_t *)(a->buf + counters);
	uint64_t *ctr = (uint64_t *)(b->buf + counters);
	uint64_t want = 7, neighbour = ctr[1], orig[64];
	uint32_t k, done = 0, bad_wc = 0, bad_data = 0;
	struct ibv_send_wr wr[64], *bad;
	struct ibv_sge sge[64];
	enum ibv_wc_opcode op[64];
	struct ibv_wc wc;

	if (depth < 2 + 64)
		return;
	ctr[0] = want;
	memset(wr, 0, sizeof(wr));
	for (k = 0; k < 64; k++) {
		op[k] = writes && k % 3 == 2 ? IBV_WC_RDMA_WRITE :
			k % 2 ? IBV_WC_COMP_SWAP : IBV_WC_FETCH_ADD;
		res[2 + k] = op[k] == IBV_WC_RDMA_WRITE ? 0xfeed00 + k : ~0ULL;
		sge[k] = (struct ibv_sge){ .addr = (uintptr_t)&res[2 + k],
					   .length = 8, .lkey = a->mr->lkey };
		wr[k].wr_id = k;
		wr[k].sg_list = &sge[k];
		wr[k].num_sge = 1;
		wr[k].send_flags = IBV_SEND_SIGNALED;
		wr[k].next = k + 1 < 64 ? &wr[k + 1] : NULL;
		wr[k].wr.atomic.rkey = b->mr->rkey;
		wr[k].wr.atomic.remote_addr = (uintptr_t)&ctr[0];
		orig[k] = want;
		if (op[k] == IBV_WC_FETCH_ADD) {
			wr[k].opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
			wr[k].wr.atomic.compare_add = k + 1;
			want += k + 1;
		} else if (op[k] == IBV_WC_COMP_SWAP) {
			wr[k].opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
			wr[k].wr.atomic.compare_add = k % 4 == 3 ? want + 1 : want;
			wr[k].wr.atomic.swap = want * 3 + k;
			if (k % 4 != 3)
				want = want * 3 + k;
		} else {
			wr[k].opcode = IBV_WR_RDMA_WRITE;
			wr[k].wr.rdma.remote_addr = (uintptr_t)&ctr[2 + k];
			wr[k].wr.rdma.rkey = b->mr->rkey;
		}
	}
	if (ibv_post_send(a->qp, wr, &bad))
		tl_die("ibv_post_send");
	while (done < 64 && tl_wait_wc(cq, &wc, 20)) {
		if (wc.status != IBV_WC_SUCCESS || wc.wr_id != done ||
		    wc.opcode != op[done])
			bad_wc++;
		done++;
	}
	tl_check(done == 64 && !bad_wc,
		 "64 atomics%s in one post: %u completions, %u not successful or out of order",
		 writes ? " and WRITEs" : "", done, bad_wc);
	for (k = 0; k < 64; k++)
		if (op[k] == IBV_WC_RDMA_WRITE ?
		    res[2 + k] != 0xfeed00 + k || ctr[2 + k] != 0xfeed00 + k :
		    res[2 + k] != orig[k])
			bad_data++;
	tl_check(!bad_data && ctr[0] == want && ctr[1] == neighbour,
		 "each atomic returned the value before it%s (%u wrong), the counter is %llu (want %llu), its neighbour unchanged",
		 writes ? " and each WRITE landed" : "", bad_data,
		 (unsigned long long)ctr[0], (unsigned long long)want);
}

/* QPs that ask for one READ/atomic more than the device has, either way. */
static void check_refused(uint32_t max)
{
	struct tl_rc_conn conn = {
		.dgid = &gid, .sgid_index = gid_index, .sq_psn = 100,
		.rq_psn = 100, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
		.min_rnr_timer = 1, .rd_atomic = max + 1,
	};
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7,
		.rnr_retry = 7, .sq_psn = 100, .max_rd_atomic = max + 1,
	};
	struct ibv_qp *qp = new_qp(8);

	conn.dest_qpn = qp->qp_num;
	tl_check(tl_to_rtr(qp, &conn, IBV_MTU_1024) != 0,
		 "RTR with max_dest_rd_atomic %u is refused (the device has %u)",
		 max + 1, max);
	ibv_destroy_qp(qp);
	qp = new_qp(8);
	conn.dest_qpn = qp->qp_num;
	conn.rd_atomic = max;
	tl_check(tl_to_rtr(qp, &conn, IBV_MTU_1024) == 0,
		 "RTR with max_dest_rd_atomic %u is taken", max);
	tl_check(ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_TIMEOUT |
			       IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			       IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC) != 0,
		 "RTS with max_rd_atomic %u is refused", max + 1);
	ibv_destroy_qp(qp);
}

int main(int argc, char **argv)
{
	struct ibv_device_attr dattr;
	struct side a, b;
	uint32_t depth, i, done = 0, bad_wc = 0, bad_data = 0;
	uint64_t *res, *ctr;
	size_t len;
	struct ibv_wc wc;

	if (argc < 3) {
		fprintf(stderr, "usage: rd_depth DEV GID_INDEX\n");
		return 2;
	}
	ctx = tl_open_device(argv[1]);
	gid_index = atoi(argv[2]);
	if (ibv_query_device(ctx, &dattr) ||
	    ibv_query_gid(ctx, 1, gid_index, &gid))
		tl_die("querying the device");
	depth = dattr.max_qp_rd_atom;
	tl_check(depth == WANT_DEPTH && dattr.max_qp_init_rd_atom == WANT_DEPTH,
		 "the device offers %d READs/atomics in flight, either way (%d, %d)",
		 WANT_DEPTH, dattr.max_qp_rd_atom, dattr.max_qp_init_rd_atom);
	if (!depth || depth > 255)
		return 1;

	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 2 * depth + 16, NULL, NULL, 0);
	if (!pd || !cq)
		tl_die("ibv_alloc_pd/ibv_create_cq");
	len = (size_t)depth * (BLOCK + 8);
	for (struct side *s = &a; s; s = s == &a ? &b : NULL) {
		s->buf = calloc(1, len);
		if (!s->buf)
			tl_die("calloc");
		s->mr = ibv_reg_mr(pd, s->buf, len, IBV_ACCESS_LOCAL_WRITE |
				   IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_ATOMIC);
		if (!s->mr)
			tl_die("ibv_reg_mr");
		s->qp = new_qp(depth);
	}
	*tl_rng() = 0x5eed | 1;
	for (i = 0; i < depth * BLOCK; i++)
		b.buf[i] = (uint8_t)tl_rnd();
	ctr = (uint64_t *)(b.buf + (size_t)depth * BLOCK);
	res = (uint64_t *)(a.buf + (size_t)depth * BLOCK);
	for (i = 0; i < depth; i++) {
		ctr[i] = (uint64_t)i * 1000;
		res[i] = ~0ULL;
	}
	if (connect_qp(a.qp, b.qp->qp_num, depth) ||
	    connect_qp(b.qp, a.qp->qp_num, depth))
		tl_die("connecting the pair");

	for (i = 0; i < depth; i++)
		post(&a, &b, i, depth, 0);
	for (i = 0; i < depth; i++)
		post(&a, &b, i, depth, 1);
	while (done < 2 * depth && tl_wait_wc(cq, &wc, 20)) {
		done++;
		if (wc.status != IBV_WC_SUCCESS ||
		    wc.opcode != (wc.wr_id >> 32 ? IBV_WC_FETCH_ADD :
				  IBV_WC_RDMA_READ))
			bad_wc++;
	}
	tl_check(done == 2 * depth && !bad_wc,
		 "%u READs and %u FETCH_ADDs posted at once: %u completions, %u not successful",
		 depth, depth, done, bad_wc);
	for (i = 0; i < depth; i++)
		if (memcmp(a.buf + (size_t)i * BLOCK, b.buf + (size_t)i * BLOCK,
			   BLOCK))
			bad_data++;
	tl_check(!bad_data, "every 4 KiB block read is the responder's (%u differ)",
		 bad_data);
	bad_data = 0;
	for (i = 0; i < depth; i++)
		if (res[i] != (uint64_t)i * 1000 ||
		    ctr[i] != (uint64_t)i * 1000 + i + 1)
			bad_data++;
	tl_check(!bad_data,
		 "every FETCH_ADD returned the original value and added once (%u wrong)",
		 bad_data);
	read_then_write(&a, &b, depth);
	atomics_in_turn(&a, &b, depth);
	atomics_in_stream(&a, &b, depth, 0);
	atomics_in_stream(&a, &b, depth, 1);
	check_refused(depth);

	ibv_destroy_qp(a.qp);
	ibv_destroy_qp(b.qp);
	ibv_dereg_mr(a.mr);
	ibv_dereg_mr(b.mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return tl_exit_status();
}
