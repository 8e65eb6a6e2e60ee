// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * wire_victim DEV GID_INDEX DGID: the target of tests/vm/adversary.py.
 *
 * Sets up, on DEV and towards DGID (where the adversary listens), RC, UC
 * and UD QPs and memory the peer may write and read, prints what the
 * adversary needs to know, then obeys one command per line on stdin:
 *
 *   send Q WRID LEN        post a signalled SEND of LEN bytes on QP Q
 *   read Q WRID LEN VA KEY post a signalled RDMA READ of LEN bytes into
 *                          the local buffer from the peer's VA/KEY
 *   poll                   print "wc WRID STATUS OPCODE LEN" for each
 *                          completion there is, then "end"
 *   state Q                print "state N" (enum ibv_qp_state)
 *   dump BUF               print "dump HEX" of BUF: mr (the MR the peer
 *                          may use), other (an MR in another PD), local
 *                          (the READ target)
 *   guards                 print "guards ok", or "guards bad BUF OFFSET"
 *                          for the first byte outside the MRs that changed
 *   cycle Q S              move QP Q to RESET, then up to state S (0 RESET,
 *                          1 INIT, 3 RTS, with two receive WQEs posted);
 *                          print "cycled" (tests/vm/wire_fuzz.py)
 *   bind BUF               bind the type 1 window over all of BUF (mr or
 *                          win, both of the peer's PD) for remote write
 *                          and read, from the last RC QP; print
 *                          "bound RKEY"
 *   rereg                  re-register mr with the access it has (its
 *                          keys stay); print "rereg RKEY"
 *   quit
 *
 * Q counts the RC QPs first (0..NUM_RC-1), then UC, then the one UD QP.
 * The last RC QP binds the window and is the peer's only way to it. Every
 * buffer lies in the middle page of three; the outer pages are the guards
 * nobody may change.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <unistd.h>
#include "testlib.h"

#define NUM_RC 10
#define NUM_UC 2
#define NUM_QP (NUM_RC + NUM_UC + 1)
#define PAGE 4096
#define GUARD_BYTE 0xa5
#define PEER_QPN_BASE 0x1000
#define PEER_PSN 0x100		/* the adversary's first PSN */
#define OWN_PSN 0x200		/* this side's first PSN */
#define UD_QKEY 0x11111111

#define MR_ACCESS                                                       \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |              \
	 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |             \
	 IBV_ACCESS_MW_BIND)

enum { BUF_MR, BUF_OTHER, BUF_LOCAL, BUF_WIN, NUM_BUF };
static const char *const buf_names[NUM_BUF] = {
	"mr", "other", "local", "win"
};

static unsigned char *area[NUM_BUF];	/* three pages each */
static struct ibv_qp *qps[NUM_QP];
static struct ibv_mr *send_mr, *local_mr;
static struct ibv_mr *buf_mr[NUM_BUF];
static struct ibv_mw *mw;
static unsigned char *send_buf;
static struct ibv_cq *cq;
static struct tl_rc_conn conns[NUM_QP];

static unsigned char *middle(int b)
{
	return area[b] + PAGE;
}

static void fill_area(int b, unsigned char seed)
{
	int i;

	if (posix_memalign((void **)&area[b], PAGE, 3 * PAGE))
		tl_die("posix_memalign");
	memset(area[b], GUARD_BYTE, 3 * PAGE);
	for (i = 0; i < PAGE; i++)
		middle(b)[i] = (unsigned char)(i * 7 + seed);
}

/* Every QP keeps receive WQEs posted into its own slice of the send page. */
static void post_recvs(struct ibv_qp *qp, int n)
{
	struct ibv_recv_wr wr = {}, *bad;
	struct ibv_sge sge = {
		.addr = (uintptr_t)send_buf + PAGE, .length = PAGE,
		.lkey = send_mr->lkey,
	};

	wr.sg_list = &sge;
	wr.num_sge = 1;
	while (n--) {
		wr.wr_id = 1000 + n;
		if (ibv_post_recv(qp, &wr, &bad))
			tl_die("post_recv");
	}
}

static void cmd_post(int q, uint64_t wrid, uint32_t len, int read,
		     uint64_t va, uint32_t rkey)
{
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_sge sge;

	if (q < 0 || q >= NUM_QP - 1 || len > PAGE) {
		printf("error bad arguments\n");
		return;
	}
	sge.addr = (uintptr_t)(read ? middle(BUF_LOCAL) : send_buf);
	sge.length = len;
	sge.lkey = read ? local_mr->lkey : send_mr->lkey;
	wr.wr_id = wrid;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = read ? IBV_WR_RDMA_READ : IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = va;
	wr.wr.rdma.rkey = rkey;
	if (ibv_post_send(qps[q], &wr, &bad))
		printf("error post %d\n", errno);
	else
		printf("posted\n");
}

static void cmd_guards(void)
{
	int b, i;

	for (b = 0; b < NUM_BUF; b++)
		for (i = 0; i < 3 * PAGE; i++) {
			if (i == PAGE)
				i = 2 * PAGE;
			if (area[b][i] != GUARD_BYTE) {
				printf("guards bad %s %d\n", buf_names[b], i);
				return;
			}
		}
	printf("guards ok\n");
}

static void cmd_dump(const char *name)
{
	int b, i;

	for (b = 0; b < NUM_BUF; b++)
		if (!strcmp(name, buf_names[b]))
			break;
	if (b == NUM_BUF) {
		printf("error no buffer %s\n", name);
		return;
	}
	printf("dump ");
	for (i = 0; i < PAGE; i++)
		printf("%02x", middle(b)[i]);
	printf("\n");
}

static int buf_index(const char *name)
{
	int b;

	for (b = 0; b < NUM_BUF; b++)
		if (!strcmp(name, buf_names[b]))
			return b;
	return -1;
}

static void cmd_bind(const char *name)
{
	int b = buf_index(name);
	struct ibv_mw_bind bind = {
		.wr_id = 0xb1d, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_wc wc;
	int n;

	if (b != BUF_MR && b != BUF_WIN) {
		printf("error bad buffer\n");
		return;
	}
	bind.bind_info = (struct ibv_mw_bind_info){
		.mr = buf_mr[b], .addr = (uintptr_t)middle(b), .length = PAGE,
		.mw_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ,
	};
	if (ibv_bind_mw(qps[NUM_RC - 1], mw, &bind)) {
		printf("error bind %d\n", errno);
		return;
	}
	do
		n = ibv_poll_cq(cq, 1, &wc);
	while (n == 0);
	if (n < 0 || wc.wr_id != 0xb1d || wc.status != IBV_WC_SUCCESS)
		printf("error bind completion %d\n", n < 0 ? n : (int)wc.status);
	else
		printf("bound %u\n", mw->rkey);
}

static int connect_qp(int q)
{
	struct tl_rc_conn uc = conns[q];

	uc.access = IBV_ACCESS_REMOTE_WRITE;
	switch (qps[q]->qp_type) {
	case IBV_QPT_RC:
		return tl_connect_rc(qps[q], &conns[q]);
	case IBV_QPT_UC:
		return tl_connect_uc(qps[q], &uc);
	default:
		return tl_connect_ud(qps[q], UD_QKEY, OWN_PSN);
	}
}

static void cmd_cycle(int q, int state)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	int err;

	if (q < 0 || q >= NUM_QP) {
		printf("error bad arguments\n");
		return;
	}
	err = ibv_modify_qp(qps[q], &a, IBV_QP_STATE);
	if (!err && state == IBV_QPS_INIT && qps[q]->qp_type != IBV_QPT_UD)
		err = tl_to_init(qps[q], conns[q].access);
	if (!err && state == IBV_QPS_RTS) {
		err = connect_qp(q);
		if (!err)
			post_recvs(qps[q], 2);
	}
	if (err)
		printf("error cycle %d\n", err);
	else
		printf("cycled\n");
}

int main(int argc, char **argv)
{
	struct ibv_qp_init_attr init = {
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct tl_rc_conn conn = {
		.sq_psn = OWN_PSN, .rq_psn = PEER_PSN,
		.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC,
		.timeout = 20, .retry_cnt = 7, .rnr_retry = 7,
		.min_rnr_timer = 1, .rd_atomic = 4,
	};
	struct ibv_mr *mr, *other_mr, *win_mr;
	struct ibv_pd *pd, *other_pd;
	struct ibv_context *ctx;
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr qinit;
	union ibv_gid dgid;
	struct ibv_wc wc;
	char line[256], word[16], name[16];
	unsigned long long wrid, va;
	unsigned int len, key;
	int q, i, sgid;

	if (argc != 4 || inet_pton(AF_INET6, argv[3], &dgid) != 1) {
		fprintf(stderr, "usage: wire_victim DEV GID_INDEX DGID\n");
		return 2;
	}
	ctx = tl_open_device(argv[1]);
	sgid = atoi(argv[2]);
	fill_area(BUF_MR, 0x11);
	fill_area(BUF_OTHER, 0x22);
	fill_area(BUF_LOCAL, 0x33);
	fill_area(BUF_WIN, 0x55);
	if (posix_memalign((void **)&send_buf, PAGE, 2 * PAGE))
		tl_die("posix_memalign");
	for (i = 0; i < PAGE; i++)
		send_buf[i] = (unsigned char)(i * 3 + 0x44);

	pd = ibv_alloc_pd(ctx);
	other_pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	if (!pd || !other_pd || !cq)
		tl_die("setup");
	mr = ibv_reg_mr(pd, middle(BUF_MR), PAGE, MR_ACCESS);
	win_mr = ibv_reg_mr(pd, middle(BUF_WIN), PAGE, IBV_ACCESS_LOCAL_WRITE |
			    IBV_ACCESS_MW_BIND);
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	other_mr = ibv_reg_mr(other_pd, middle(BUF_OTHER), PAGE,
			      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			      IBV_ACCESS_REMOTE_READ);
	local_mr = ibv_reg_mr(pd, middle(BUF_LOCAL), PAGE,
			      IBV_ACCESS_LOCAL_WRITE);
	send_mr = ibv_reg_mr(pd, send_buf, 2 * PAGE, IBV_ACCESS_LOCAL_WRITE);
	if (!mr || !other_mr || !local_mr || !send_mr || !win_mr || !mw)
		tl_die("ibv_reg_mr");
	buf_mr[BUF_MR] = mr;
	buf_mr[BUF_WIN] = win_mr;

	init.send_cq = cq;
	init.recv_cq = cq;
	conn.dgid = &dgid;
	conn.sgid_index = sgid;
	for (q = 0; q < NUM_QP; q++) {
		init.qp_type = q < NUM_RC ? IBV_QPT_RC :
			       q < NUM_RC + NUM_UC ? IBV_QPT_UC : IBV_QPT_UD;
		qps[q] = ibv_create_qp(pd, &init);
		if (!qps[q])
			tl_die("ibv_create_qp");
		conn.dest_qpn = PEER_QPN_BASE + q;
		conns[q] = conn;
		if (connect_qp(q))
			tl_die("connect");
		post_recvs(qps[q], 2);
	}

	printf("rkey %u\nva %llu\nrkey_other %u\nva_other %llu\n",
	       mr->rkey, (unsigned long long)(uintptr_t)middle(BUF_MR),
	       other_mr->rkey,
	       (unsigned long long)(uintptr_t)middle(BUF_OTHER));
	for (q = 0; q < NUM_QP; q++)
		printf("qp %d %u\n", q, qps[q]->qp_num);
	printf("ready\n");
	fflush(stdout);

	while (fgets(line, sizeof(line), stdin)) {
		if (sscanf(line, "%15s", word) != 1)
			continue;
		if (!strcmp(word, "send") &&
		    sscanf(line, "%*s %d %llu %u", &q, &wrid, &len) == 3) {
			cmd_post(q, wrid, len, 0, 0, 0);
		} else if (!strcmp(word, "read") &&
			   sscanf(line, "%*s %d %llu %u %llu %u", &q, &wrid,
				  &len, &va, &key) == 5) {
			cmd_post(q, wrid, len, 1, va, key);
		} else if (!strcmp(word, "poll")) {
			while (ibv_poll_cq(cq, 1, &wc) > 0)
				printf("wc %llu %d %d %u\n",
				       (unsigned long long)wc.wr_id, wc.status,
				       wc.opcode, wc.byte_len);
			printf("end\n");
		} else if (!strcmp(word, "state") &&
			   sscanf(line, "%*s %d", &q) == 1 && q >= 0 &&
			   q < NUM_QP) {
			if (ibv_query_qp(qps[q], &attr, IBV_QP_STATE, &qinit))
				printf("error query %d\n", errno);
			else
				printf("state %d\n", attr.qp_state);
		} else if (!strcmp(word, "dump") &&
			   sscanf(line, "%*s %15s", name) == 1) {
			cmd_dump(name);
		} else if (!strcmp(word, "cycle") &&
			   sscanf(line, "%*s %d %d", &q, &i) == 2) {
			cmd_cycle(q, i);
		} else if (!strcmp(word, "bind") &&
			   sscanf(line, "%*s %15s", name) == 1) {
			cmd_bind(name);
		} else if (!strcmp(word, "rereg")) {
			if (ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL,
					 NULL, 0, MR_ACCESS))
				printf("error rereg %d\n", errno);
			else
				printf("rereg %u\n", mr->rkey);
		} else if (!strcmp(word, "guards")) {
			cmd_guards();
		} else if (!strcmp(word, "quit")) {
			break;
		} else {
			printf("error unknown command\n");
		}
		fflush(stdout);
	}

	for (q = 0; q < NUM_QP; q++)
		ibv_destroy_qp(qps[q]);
	ibv_dealloc_mw(mw);
	ibv_dereg_mr(win_mr);
	ibv_dereg_mr(mr);
	ibv_dereg_mr(other_mr);
	ibv_dereg_mr(local_mr);
	ibv_dereg_mr(send_mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_dealloc_pd(other_pd);
	ibv_close_device(ctx);
	return 0;
}
