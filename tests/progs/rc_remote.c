// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rc_remote DEV GID_INDEX PAIRS ITERATIONS SEED MAX_SIZE PATH_MTU [SERVER]
 *
 * The data-integrity test across two hosts, with any verbs device at either
 * end (sroce, rdma_rxe, a RoCE NIC). Without SERVER it is the server: it
 * waits on TCP port 18620 for one client and does what the client asks on
 * its side of PAIRS RC QP pairs. With SERVER, the client connects to it
 * and, on each pair, runs ITERATIONS random operations as the requester:
 * SEND and SEND with immediate, RDMA WRITE (with immediate), RDMA READ,
 * compare-and-swap, fetch-and-add, and bursts of WRITEs ended by a READ
 * of what they wrote, and ATOMIC_WRITE with RC_REMOTE_ATOMIC_WRITE set;
 * with random sizes (1 B to MAX_SIZE), offsets and scatter/gather splits
 * on both sides, inline or not. Data is a seeded
 * pseudo-random stream both ends compute, so the server checks every byte
 * that arrived and the client every byte it read; every completion's
 * status, opcode, length and immediate is checked.
 *
 * Then memory windows on the last pair: the server binds a type 2 window
 * (IBV_WR_BIND_MW) and a type 1 window (ibv_bind_mw) to a part of its
 * buffer; the client WRITEs and READs through each, checking that the
 * bytes around the window stay as they were, invalidates the type 2 window
 * with SEND with invalidate (the server checks IBV_WC_WITH_INV and the
 * key; see RC_REMOTE_PEER_RXE) and, when that pair is not pair 0, checks that a WRITE through the
 * dead key fails with IBV_WC_REM_ACCESS_ERR and changes nothing.
 *
 * Then, on the same pair (connected again if the windows broke it), the
 * server re-registers its MR between the client's operations: a new
 * translation, read-only access, another PD and back (rereg_phase()).
 *
 * Last, the server destroys pair 0's QP and the client checks that a WRITE
 * to it ends in IBV_WC_RETRY_EXC_ERR within a bounded time (a dead peer;
 * skipped when RC_REMOTE_SKIP_DEAD_PEER is set).
 * The client prints "ok"/"not ok" lines; both exit non-zero on failure.
 *
 * A send that waits WC_WAIT_S seconds for its completion is a stall: the
 * client runs the shell command in RC_REMOTE_ON_STALL, if set, and asks
 * the server to run it too while both ends still hold their QPs (for the
 * devices' QP state and counters); the server then exits non-zero.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "testlib.h"

#define PORT 18620
#define MAX_SGE 4
#define SLACK 4096
#define BURST 16
#define WC_WAIT_S 60

enum msg_type {
	M_HELLO = 1,	/* a: pairs, b: max_size, c: path MTU enum */
	M_QPINFO,	/* a: qpn, b: psn, c: addr, d: rkey; then the GID */
	M_RECV,		/* post a receive: a: off, b: capacity (0: no SGE) */
	M_FILL,		/* a: off, b: len, c: seed; d: 1 for the other buffer */
	M_POISON,	/* a: off, b: len */
	M_SET64,	/* a: off, b: value */
	M_GET64,	/* a: off -> a: value */
	M_CHECK,	/* a: off, b: len, c: seed -> a: 1 if the bytes match;
			 * d: 1 for the other buffer */
	M_WAITRECV,	/* -> a: status | opcode << 8 | flags << 16 |
			 *       src_qp << 32, b: byte_len, c: imm,
			 *    d: found | invalidated rkey << 32 */
	M_KILL,		/* destroy the pair's QP */
	M_WINDOW,	/* bind a window: a: off, b: len, c: type -> a: rkey */
	M_REREG,	/* ibv_rereg_mr: a: flags, b: access, c: 1 for the
			 * second PD -> a: errno, b: rkey, c: buffer address */
	M_RECONNECT,	/* both ends reset the pair's QP and connect again */
	M_STALL,	/* the client stalled: run RC_REMOTE_ON_STALL */
	M_BYE,
	M_REPLY,
};

struct msg {
	uint32_t type;
	uint32_t pair;
	uint64_t a, b, c, d;
};

struct side {
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_mw *mw[2];	/* the server's type 1 and type 2 windows */
	uint8_t *buf;		/* what the MR translates */
	uint8_t *other;		/* the server's second buffer for rereg */
	size_t len;
	uint32_t psn;
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static union ibv_gid my_gid;
static int gid_index, sock_fd;
static size_t max_size;
static enum ibv_mtu path_mtu;
static int max_inline;
/*
 * RC_REMOTE_ATOMIC_WRITE set on the client: its QPs offer ibv_wr_* and
 * ATOMIC_WRITE is one more random operation (the server needs a device
 * that executes it: rdma_rxe before 6.2 does not).
 */
static bool atomic_write;
static int atomic_writes;	/* ATOMIC_WRITEs run on the current pair */

/* The bytes both ends agree on for a seed. */
static void pattern(uint8_t *p, size_t len, uint64_t seed)
{
	uint64_t s = seed | 1;
	size_t i;

	for (i = 0; i < len; i++) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		p[i] = (uint8_t)(s >> 24);
	}
}

static bool pattern_matches(const uint8_t *p, size_t len, uint64_t seed)
{
	uint8_t *want = malloc(len ? len : 1);
	bool ok;

	if (!want)
		tl_die("malloc");
	pattern(want, len, seed);
	ok = !memcmp(p, want, len);
	free(want);
	return ok;
}

static void xfer(void *buf, size_t len, bool out)
{
	uint8_t *p = buf;
	ssize_t n;

	while (len) {
		n = out ? write(sock_fd, p, len) : read(sock_fd, p, len);
		if (n <= 0)
			tl_die(out ? "control write" : "control read");
		p += n;
		len -= n;
	}
}

static void send_msg(uint32_t type, uint32_t pair, uint64_t a, uint64_t b,
		     uint64_t c, uint64_t d)
{
	struct msg m = { type, pair, a, b, c, d };

	xfer(&m, sizeof(m), true);
}

static struct msg recv_msg(void)
{
	struct msg m;

	xfer(&m, sizeof(m), false);
	return m;
}

/* Runs RC_REMOTE_ON_STALL, if set, after what was printed so far. */
static void show_stall(void)
{
	const char *cmd = getenv("RC_REMOTE_ON_STALL");

	if (!cmd)
		return;
	fflush(stdout);
	if (system(cmd))
		fprintf(stderr, "RC_REMOTE_ON_STALL failed\n");
}

/* A request to the server and its reply. */
static struct msg call(uint32_t type, uint32_t pair, uint64_t a, uint64_t b,
		       uint64_t c)
{
	send_msg(type, pair, a, b, c, 0);
	return recv_msg();
}

/* call() for the other buffer of the server's (M_FILL, M_CHECK). */
static struct msg call_other(uint32_t type, uint32_t pair, uint64_t a,
			     uint64_t b, uint64_t c)
{
	send_msg(type, pair, a, b, c, 1);
	return recv_msg();
}

static void setup_side(struct side *s)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 2 * BURST, .max_recv_wr = 16,
			 .max_send_sge = MAX_SGE, .max_recv_sge = MAX_SGE,
			 .max_inline_data = 256 },
	};

	s->len = max_size + 2 * SLACK;
	s->buf = calloc(1, s->len);
	if (!s->buf)
		tl_die("malloc");
	s->cq = ibv_create_cq(ctx, 4 * BURST, NULL, NULL, 0);
	if (!s->cq)
		tl_die("ibv_create_cq");
	s->mr = ibv_reg_mr(pd, s->buf, s->len,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
			   IBV_ACCESS_MW_BIND);
	if (!s->mr)
		tl_die("ibv_reg_mr");
	init.send_cq = s->cq;
	init.recv_cq = s->cq;
	if (atomic_write) {
		struct ibv_qp_init_attr_ex ex = {
			.qp_type = IBV_QPT_RC, .send_cq = s->cq,
			.recv_cq = s->cq, .cap = init.cap, .pd = pd,
			.comp_mask = IBV_QP_INIT_ATTR_PD |
				     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
			.send_ops_flags = IBV_QP_EX_WITH_ATOMIC_WRITE,
		};

		s->qp = ibv_create_qp_ex(ctx, &ex);
		init.cap = ex.cap;
	} else {
		s->qp = ibv_create_qp(pd, &init);
	}
	if (!s->qp)
		tl_die("ibv_create_qp");
	max_inline = init.cap.max_inline_data;
	s->psn = tl_rnd() & 0xffffff;
}

/* Exchanges QP numbers, PSNs, buffers and GIDs, then connects. */
static void exchange_and_connect(struct side *s, uint32_t pair,
				 uint64_t *raddr, uint32_t *rkey,
				 uint32_t *rqpn)
{
	struct tl_rc_conn conn = {
		.sgid_index = gid_index, .access = TL_REMOTE_ALL,
		.timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
		.min_rnr_timer = 1, .rd_atomic = 4,
	};
	union ibv_gid peer_gid;
	struct msg m;

	send_msg(M_QPINFO, pair, s->qp->qp_num, s->psn, (uintptr_t)s->buf,
		 s->mr->rkey);
	xfer(&my_gid, sizeof(my_gid), true);
	m = recv_msg();
	if (m.type != M_QPINFO)
		tl_die("unexpected control message");
	xfer(&peer_gid, sizeof(peer_gid), false);
	*rqpn = m.a;
	*raddr = m.c;
	*rkey = m.d;
	conn.dest_qpn = m.a;
	conn.dgid = &peer_gid;
	conn.sq_psn = s->psn;
	conn.rq_psn = m.b;
	if (tl_connect_rc_mtu(s->qp, &conn, path_mtu))
		tl_die("connecting a QP");
}
/* Server ------------------------------------------------------------------ */

/* Binds a window of TYPE over [off, off + len) of the side's buffer with
 * remote read and write; returns its rkey, 0 on failure.
 */
static uint32_t bind_window(struct side *s, uint64_t off, uint64_t len,
			    int type)
{
	struct ibv_mw_bind_info bi = {
		.mr = s->mr, .addr = (uintptr_t)s->buf + off, .length = len,
		.mw_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ,
	};
	struct ibv_mw **mw = &s->mw[type == IBV_MW_TYPE_2];
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_wc wc;
	uint32_t rkey = 0;

	if (off + len > s->len)
		return 0;
	if (!*mw)
		*mw = ibv_alloc_mw(pd, type);
	if (!*mw)
		return 0;
	if (type == IBV_MW_TYPE_1) {
		struct ibv_mw_bind b = { .wr_id = 0xb1,
					 .send_flags = IBV_SEND_SIGNALED,
					 .bind_info = bi };

		if (ibv_bind_mw(s->qp, *mw, &b))
			return 0;
	} else {
		rkey = ibv_inc_rkey((*mw)->rkey);
		wr.wr_id = 0xb1;
		wr.opcode = IBV_WR_BIND_MW;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.bind_mw.mw = *mw;
		wr.bind_mw.rkey = rkey;
		wr.bind_mw.bind_info = bi;
		if (ibv_post_send(s->qp, &wr, &bad))
			return 0;
	}
	if (!tl_wait_wc(s->cq, &wc, WC_WAIT_S) || wc.wr_id != 0xb1 ||
	    wc.status != IBV_WC_SUCCESS)
		return 0;
	/* ibv_bind_mw updates a type 1 window's key; a type 2 window's new
	 * key is the one its BIND_MW WR named.
	 */
	return type == IBV_MW_TYPE_1 ? (*mw)->rkey : rkey;
}

/* The buffer a server-side M_FILL or M_CHECK names: d = 1 is the other. */
static uint8_t *server_buf(struct side *s, uint64_t d)
{
	if (!d)
		return s->buf;
	if (!s->other)
		s->other = calloc(1, s->len);
	if (!s->other)
		tl_die("malloc");
	return s->other;
}

/*
 * ibv_rereg_mr of the side's MR with FLAGS; a new translation swaps its
 * buffer with the other one. Windows bound to the MR go first. Returns 0
 * or the errno.
 */
static int server_rereg(struct side *s, int flags, int access, bool pd2)
{
	static struct ibv_pd *second_pd;
	uint8_t *to = s->buf;
	int i, ret;

	for (i = 0; i < 2; i++) {
		if (s->mw[i])
			ibv_dealloc_mw(s->mw[i]);
		s->mw[i] = NULL;
	}
	if (pd2 && !second_pd)
		second_pd = ibv_alloc_pd(ctx);
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION)
		to = server_buf(s, 1);
	ret = ibv_rereg_mr(s->mr, flags, pd2 ? second_pd : pd, to, s->len,
			   access);
	if (ret)
		return ret < 0 ? errno : ret;
	if (to != s->buf) {
		s->other = s->buf;
		s->buf = to;
	}
	return 0;
}

/* Both ends of a pair: back to RESET, then connected again with new PSNs. */
static void reconnect(struct side *s, uint32_t pair)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	struct ibv_wc wc;
	uint64_t raddr;
	uint32_t rkey, rqpn;

	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE))
		tl_die("QP to RESET");
	while (ibv_poll_cq(s->cq, 1, &wc) > 0)
		;
	s->psn = tl_rnd() & 0xffffff;
	exchange_and_connect(s, pair, &raddr, &rkey, &rqpn);
}

static int serve(void)
{
	struct side *sides = NULL;
	uint32_t npairs = 0, i, rqpn, rkey;
	uint64_t raddr, v;
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_sge sge[MAX_SGE];
	struct ibv_wc wc;
	struct msg m;
	int lfd, one = 1;
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6,
				   .sin6_port = htons(PORT) };
	bool stalled = false;

	lfd = socket(AF_INET6, SOCK_STREAM, 0);
	if (lfd < 0)
		tl_die("socket");
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 1))
		tl_die("bind/listen");
	sock_fd = accept(lfd, NULL, NULL);
	if (sock_fd < 0)
		tl_die("accept");
	close(lfd);
	setsockopt(sock_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));

	for (;;) {
		struct side *s;

		m = recv_msg();
		s = m.pair < npairs ? &sides[m.pair] : NULL;

		switch (m.type) {
		case M_HELLO:
			npairs = m.a;
			max_size = m.b;
			path_mtu = m.c;
			sides = calloc(npairs, sizeof(*sides));
			for (i = 0; i < npairs; i++) {
				setup_side(&sides[i]);
				exchange_and_connect(&sides[i], i, &raddr,
						     &rkey, &rqpn);
			}
			continue;
		case M_BYE:
			for (i = 0; i < npairs; i++) {
				if (sides[i].qp)
					ibv_destroy_qp(sides[i].qp);
				if (sides[i].mw[0])
					ibv_dealloc_mw(sides[i].mw[0]);
				if (sides[i].mw[1])
					ibv_dealloc_mw(sides[i].mw[1]);
				ibv_dereg_mr(sides[i].mr);
				ibv_destroy_cq(sides[i].cq);
				free(sides[i].buf);
				free(sides[i].other);
			}
			free(sides);
			return stalled;
		case M_STALL:
			printf("# the client stalled; the server's state:\n");
			show_stall();
			stalled = true;
			send_msg(M_REPLY, 0, 0, 0, 0, 0);
			continue;
		default:
			break;
		}
		if (!s)
			tl_die("bad pair in control message");
		v = 0;
		switch (m.type) {
		case M_RECV:
			memset(&rwr, 0, sizeof(rwr));
			rwr.wr_id = m.a;
			rwr.sg_list = sge;
			rwr.num_sge = m.b ? tl_split(sge, MAX_SGE, (uintptr_t)s->buf + m.a,
						  m.b, s->mr->lkey) : 0;
			v = !ibv_post_recv(s->qp, &rwr, &rbad);
			break;
		case M_FILL:
			pattern(server_buf(s, m.d) + m.a, m.b, m.c);
			break;
		case M_POISON:
			memset(s->buf + m.a, 0xee, m.b);
			break;
		case M_SET64:
			memcpy(s->buf + m.a, &m.b, 8);
			break;
		case M_GET64:
			memcpy(&v, s->buf + m.a, 8);
			break;
		case M_CHECK:
			v = pattern_matches(server_buf(s, m.d) + m.a, m.b, m.c);
			break;
		case M_WAITRECV:
			memset(&wc, 0, sizeof(wc));
			if (tl_wait_wc(s->cq, &wc, WC_WAIT_S)) {
				send_msg(M_REPLY, m.pair,
					 wc.status | wc.opcode << 8 |
					 (uint64_t)wc.wc_flags << 16 |
					 (uint64_t)wc.src_qp << 32,
					 wc.byte_len, ntohl(wc.imm_data),
					 1 | (uint64_t)wc.invalidated_rkey << 32);
				continue;
			}
			break;
		case M_KILL:
			v = !ibv_destroy_qp(s->qp);
			s->qp = NULL;
			break;
		case M_WINDOW:
			v = bind_window(s, m.a, m.b, m.c);
			break;
		case M_REREG:
			v = server_rereg(s, m.a, m.b, m.c);
			send_msg(M_REPLY, m.pair, v, s->mr->rkey,
				 (uintptr_t)s->buf, 0);
			continue;
		case M_RECONNECT:
			reconnect(s, m.pair);
			continue;
		default:
			tl_die("unknown control message");
		}
		send_msg(M_REPLY, m.pair, v, 0, 0, 0);
	}
}

/* Client ------------------------------------------------------------------ */

struct pair {
	struct side s;
	uint64_t raddr;
	uint32_t rkey, rqpn;
};

static const char *const op_names[] = {
	"SEND", "SEND_IMM", "WRITE", "WRITE_IMM", "READ", "CMP_SWP",
	"FETCH_ADD", "WRITE_BURST+READ", "ATOMIC_WRITE",
};

static int fail(const char *what, int iter, int op, size_t len)
{
	printf("# pair failed at iteration %d: %s (%s, %zu bytes)\n", iter,
	       what, op_names[op], len);
	return 1;
}

/* Waits for the completion of wr_id, successful. */
static const char *send_done(struct pair *p, uint64_t wr_id, size_t byte_len,
			     bool check_len)
{
	static char why[96];
	struct ibv_wc wc;

	if (!tl_wait_wc(p->s.cq, &wc, WC_WAIT_S)) {
		printf("# no send completion in %d s; the client's state:\n",
		       WC_WAIT_S);
		show_stall();
		call(M_STALL, 0, 0, 0, 0);
		return "no send completion";
	}
	if (wc.status != IBV_WC_SUCCESS) {
		snprintf(why, sizeof(why), "send completion: %s",
			 ibv_wc_status_str(wc.status));
		return why;
	}
	if (wc.wr_id != wr_id)
		return "send completion out of order";
	if (check_len && wc.byte_len != byte_len)
		return "requester byte_len";
	return NULL;
}

static int burst(struct pair *p, uint32_t pi, int iter)
{
	struct ibv_send_wr wr[BURST + 1], *bad;
	struct ibv_sge sge[BURST + 1][MAX_SGE];
	size_t region = (max_size + SLACK) / BURST, len[BURST], off[BURST];
	uint64_t seed[BURST];
	const char *why;
	size_t rlen;
	int n = 1 + tl_rnd() % BURST, i;

	memset(wr, 0, sizeof(wr));
	for (i = 0; i < n; i++) {
		len[i] = 1 + tl_rnd() % region;
		off[i] = (size_t)i * region;
		seed[i] = tl_rnd();
		pattern(p->s.buf + off[i], len[i], seed[i]);
		call(M_POISON, pi, off[i], len[i], 0);
		wr[i].wr_id = 0xc000 + i;
		wr[i].opcode = IBV_WR_RDMA_WRITE;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].sg_list = sge[i];
		wr[i].num_sge = tl_split(sge[i], MAX_SGE, (uintptr_t)p->s.buf + off[i],
				      len[i], p->s.mr->lkey);
		wr[i].wr.rdma.remote_addr = p->raddr + off[i];
		wr[i].wr.rdma.rkey = p->rkey;
		wr[i].next = &wr[i + 1];
	}
	/* The READ sees every WRITE before it: RC executes in order. */
	rlen = len[0] > SLACK ? SLACK : len[0];
	memset(p->s.buf + max_size + SLACK, 0xee, rlen);
	wr[n].wr_id = 0xc000 + n;
	wr[n].opcode = IBV_WR_RDMA_READ;
	wr[n].send_flags = IBV_SEND_SIGNALED;
	wr[n].sg_list = sge[n];
	wr[n].num_sge = tl_split(sge[n], MAX_SGE,
				 (uintptr_t)p->s.buf + max_size + SLACK,
				 rlen, p->s.mr->lkey);
	wr[n].wr.rdma.remote_addr = p->raddr + off[0];
	wr[n].wr.rdma.rkey = p->rkey;
	if (ibv_post_send(p->s.qp, wr, &bad))
		return fail("post_send", iter, 7, n);
	for (i = 0; i <= n; i++) {
		why = send_done(p, 0xc000 + i, 0, false);
		if (why)
			return fail(why, iter, 7, n);
	}
	for (i = 0; i < n; i++)
		if (!call(M_CHECK, pi, off[i], len[i], seed[i]).a)
			return fail("data mismatch", iter, 7, len[i]);
	if (!pattern_matches(p->s.buf + max_size + SLACK, rlen, seed[0]))
		return fail("READ after WRITEs", iter, 7, len[0]);
	return 0;
}

/*
 * ATOMIC_WRITE of a random word to an aligned remote offset: the word
 * lands, the words on either side stay as they were.
 */
static int atomic_write_op(struct pair *p, uint32_t pi, int iter)
{
	size_t doff = SLACK + ((tl_rnd() % SLACK) & ~7UL);
	uint64_t v = tl_rnd(), before = tl_rnd(), after = tl_rnd();
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(p->s.qp);
	const char *why;

	call(M_SET64, pi, doff - 8, before, 0);
	call(M_SET64, pi, doff, ~v, 0);
	call(M_SET64, pi, doff + 8, after, 0);
	ibv_wr_start(x);
	x->wr_id = 0xb000 + iter;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(x, p->rkey, p->raddr + doff, &v);
	if (ibv_wr_complete(x))
		return fail("ibv_wr_complete", iter, 8, 8);
	why = send_done(p, 0xb000 + iter, 0, false);
	if (why)
		return fail(why, iter, 8, 8);
	if (call(M_GET64, pi, doff, 0, 0).a != v)
		return fail("the word written", iter, 8, 8);
	if (call(M_GET64, pi, doff - 8, 0, 0).a != before ||
	    call(M_GET64, pi, doff + 8, 0, 0).a != after)
		return fail("the words beside it", iter, 8, 8);
	return 0;
}

static int one_op(struct pair *p, uint32_t pi, int iter)
{
	int op = tl_rnd() % (atomic_write ? 9 : 8);
	size_t len = (op == 5 || op == 6) ? 8 : tl_rnd_size(max_size);
	size_t soff = tl_rnd() % SLACK, doff = tl_rnd() % SLACK;
	struct ibv_sge sge[MAX_SGE];
	struct ibv_send_wr wr = {}, *bad;
	uint32_t imm = (uint32_t)tl_rnd();
	uint64_t seed = tl_rnd(), orig = 0, cmp = 0, swp = 0, val, w;
	bool recv = op <= 1 || op == 3;
	const char *why;
	struct msg m;

	if (op == 7)
		return burst(p, pi, iter);
	if (op == 8) {
		atomic_writes++;
		return atomic_write_op(p, pi, iter);
	}
	if (op == 5 || op == 6) {
		soff &= ~7UL;
		doff &= ~7UL;
	}
	wr.wr_id = 0xa000 + iter;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = sge;
	if (op <= 3) {
		/* Local source at soff, remote destination at doff. */
		pattern(p->s.buf + soff, len, seed);
		call(M_POISON, pi, doff, len, 0);
		if (recv && !call(M_RECV, pi, op == 3 ? 0 : doff,
				  op == 3 ? 0 : len + tl_rnd() % 64, 0).a)
			return fail("remote post_recv", iter, op, len);
		wr.num_sge = tl_split(sge, MAX_SGE, (uintptr_t)p->s.buf + soff, len,
				   p->s.mr->lkey);
		if (len <= (size_t)max_inline && (tl_rnd() & 1))
			wr.send_flags |= IBV_SEND_INLINE;
		wr.opcode = (enum ibv_wr_opcode[]){ IBV_WR_SEND,
			IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE,
			IBV_WR_RDMA_WRITE_WITH_IMM }[op];
		wr.imm_data = htonl(imm);
		wr.wr.rdma.remote_addr = p->raddr + doff;
		wr.wr.rdma.rkey = p->rkey;
	} else if (op == 4) {
		call(M_FILL, pi, soff, len, seed);
		memset(p->s.buf + doff, 0xee, len);
		wr.opcode = IBV_WR_RDMA_READ;
		wr.num_sge = tl_split(sge, MAX_SGE, (uintptr_t)p->s.buf + doff, len,
				   p->s.mr->lkey);
		wr.wr.rdma.remote_addr = p->raddr + soff;
		wr.wr.rdma.rkey = p->rkey;
	} else {
		orig = tl_rnd();
		cmp = (tl_rnd() & 1) ? orig : orig ^ 1;
		swp = tl_rnd();
		call(M_SET64, pi, SLACK + doff, orig, 0);
		memset(p->s.buf + soff, 0xee, 8);
		wr.opcode = op == 5 ? IBV_WR_ATOMIC_CMP_AND_SWP :
				      IBV_WR_ATOMIC_FETCH_AND_ADD;
		wr.wr.atomic.remote_addr = p->raddr + SLACK + doff;
		wr.wr.atomic.rkey = p->rkey;
		wr.wr.atomic.compare_add = op == 5 ? cmp : swp;
		wr.wr.atomic.swap = swp;
		sge[0].addr = (uintptr_t)p->s.buf + soff;
		sge[0].length = 8;
		sge[0].lkey = p->s.mr->lkey;
		wr.num_sge = 1;
	}
	if (ibv_post_send(p->s.qp, &wr, &bad))
		return fail("post_send", iter, op, len);
	why = send_done(p, wr.wr_id, len, op >= 4);
	if (why)
		return fail(why, iter, op, len);

	if (recv) {
		m = call(M_WAITRECV, pi, 0, 0, 0);
		if (!(m.d & 1))
			return fail("no receive completion", iter, op, len);
		if ((m.a & 0xff) != IBV_WC_SUCCESS)
			return fail(ibv_wc_status_str(m.a & 0xff), iter, op,
				    len);
		if (m.b != len)
			return fail("receive byte_len", iter, op, len);
		if (((m.a >> 8) & 0xff) != (op == 3 ? IBV_WC_RECV_RDMA_WITH_IMM :
						       IBV_WC_RECV))
			return fail("receive opcode", iter, op, len);
		if ((op == 1 || op == 3) != !!((m.a >> 16) & IBV_WC_WITH_IMM) ||
		    ((op == 1 || op == 3) && m.c != imm))
			return fail("immediate", iter, op, len);
		/* src_qp is defined for UD only; rdma_rxe leaves it 0 on RC. */
		if ((uint32_t)(m.a >> 32) &&
		    (uint32_t)(m.a >> 32) != p->s.qp->qp_num)
			return fail("source QP", iter, op, len);
	}
	if (op <= 3) {
		if (!call(M_CHECK, pi, doff, len, seed).a)
			return fail("data mismatch", iter, op, len);
	} else if (op == 4) {
		if (!pattern_matches(p->s.buf + doff, len, seed))
			return fail("data mismatch", iter, op, len);
	} else {
		memcpy(&val, p->s.buf + soff, 8);
		if (val != orig)
			return fail("atomic original value", iter, op, len);
		w = call(M_GET64, pi, SLACK + doff, 0, 0).a;
		if (w != (op == 5 ? (cmp == orig ? swp : orig) : orig + swp))
			return fail("atomic result", iter, op, len);
	}
	return 0;
}

/* One signaled WRITE or READ of len bytes between the local buffer at loff
 * and the remote address raddr under rkey; returns the completion status
 * (or -1 when none came).
 */
static int window_io(struct pair *p, enum ibv_wr_opcode op, size_t loff,
		     uint64_t raddr, uint32_t rkey, size_t len)
{
	struct ibv_sge sge = { (uintptr_t)p->s.buf + loff, len, p->s.mr->lkey };
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_wc wc;

	wr.wr_id = 0xd000 + op;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (ibv_post_send(p->s.qp, &wr, &bad))
		tl_die("post_send");
	if (!tl_wait_wc(p->s.cq, &wc, WC_WAIT_S) || wc.wr_id != wr.wr_id)
		return -1;
	return wc.status;
}

/* The server's [SLACK, SLACK + 4096) read back through its MR's own key
 * matches 'want'.
 */
static bool region_is(struct pair *p, const uint8_t *want)
{
	size_t loff = max_size + SLACK;

	memset(p->s.buf + loff, 0xee, 4096);
	return window_io(p, IBV_WR_RDMA_READ, loff, p->raddr + SLACK, p->rkey,
			 4096) == IBV_WC_SUCCESS &&
	       !memcmp(p->s.buf + loff, want, 4096);
}

/* A WRITE and a READ through a window of the server's over
 * [SLACK + 512, SLACK + 2560): the WRITE lands inside it and nothing else
 * of the server's [SLACK, SLACK + 4096) changes.
 */
static void window_rw(struct pair *p, uint32_t pi, uint32_t rkey,
		      const char *name)
{
	const size_t in = 512 + 100, len = 1500;
	uint64_t around = tl_rnd(), seed = tl_rnd();
	uint8_t want[4096];
	int st;

	call(M_FILL, pi, SLACK, 4096, around);
	pattern(want, 4096, around);
	pattern(want + in, len, seed);
	pattern(p->s.buf, len, seed);
	st = window_io(p, IBV_WR_RDMA_WRITE, 0, p->raddr + SLACK + in, rkey,
		       len);
	tl_check(st == IBV_WC_SUCCESS, "%s: a WRITE through it completes (%d)",
		 name, st);
	tl_check(region_is(p, want),
		 "%s: the WRITE's bytes arrived and nothing around them changed",
		 name);
	memset(p->s.buf + SLACK, 0xee, 2048);
	st = window_io(p, IBV_WR_RDMA_READ, SLACK, p->raddr + SLACK + 512,
		       rkey, 2048);
	tl_check(st == IBV_WC_SUCCESS &&
		 !memcmp(p->s.buf + SLACK, want + 512, 2048),
		 "%s: a READ through it returns the window's bytes (%d)", name,
		 st);
}

/* Memory windows of the server's, used and invalidated across the link. */
static void windows(struct pair *p, uint32_t pi, bool may_break)
{
	struct ibv_sge sge = { (uintptr_t)p->s.buf, 64, p->s.mr->lkey };
	struct ibv_send_wr wr = {}, *bad;
	uint64_t around = tl_rnd(), seed = tl_rnd();
	/*
	 * rdma_rxe 6.1 writes the kernel's IB_WC_WITH_INVALIDATE (1 << 2)
	 * into its user CQE, where libibverbs reads IBV_WC_IP_CSUM_OK; with
	 * RC_REMOTE_PEER_RXE set that is the flag a server's receive shows.
	 */
	unsigned int inv_flag = getenv("RC_REMOTE_PEER_RXE") ?
				IBV_WC_IP_CSUM_OK : IBV_WC_WITH_INV;
	const char *why;
	uint32_t rk1, rk2;
	struct msg m;
	int st;

	rk2 = call(M_WINDOW, pi, SLACK + 512, 2048, IBV_MW_TYPE_2).a;
	tl_check(rk2, "pair %u: the server bound a type 2 window", pi);
	if (!rk2)
		return;
	window_rw(p, pi, rk2, "type 2 window");
	rk1 = call(M_WINDOW, pi, SLACK + 512, 2048, IBV_MW_TYPE_1).a;
	tl_check(rk1, "pair %u: the server bound a type 1 window", pi);
	if (rk1)
		window_rw(p, pi, rk1, "type 1 window");

	/* SEND with invalidate of the type 2 window. */
	pattern(p->s.buf, 64, seed);
	if (!call(M_RECV, pi, 0, 64, 0).a)
		tl_die("remote post_recv");
	wr.wr_id = 0xd100;
	wr.opcode = IBV_WR_SEND_WITH_INV;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.invalidate_rkey = rk2;
	if (ibv_post_send(p->s.qp, &wr, &bad))
		tl_die("post_send");
	why = send_done(p, 0xd100, 0, false);
	tl_check(!why, "SEND with invalidate completes at the requester (%s)",
		 why ? why : "ok");
	m = call(M_WAITRECV, pi, 0, 0, 0);
	tl_check((m.d & 1) && (m.a & 0xff) == IBV_WC_SUCCESS &&
		 ((m.a >> 8) & 0xff) == IBV_WC_RECV && m.b == 64 &&
		 ((m.a >> 16) & inv_flag) && (uint32_t)(m.d >> 32) == rk2,
		 "the server's receive reports the invalidated key (status %d, flags %#x, key %#x of %#x)",
		 (int)(m.a & 0xff), (unsigned int)((m.a >> 16) & 0xffff),
		 (uint32_t)(m.d >> 32), rk2);
	tl_check(call(M_CHECK, pi, 0, 64, seed).a,
		 "the SEND with invalidate's bytes arrived");
	if (!may_break)
		return;
	/* The type 2 key is dead: a WRITE through it fails and lands nothing. */
	call(M_FILL, pi, SLACK, 4096, around);
	pattern(p->s.buf, 256, seed ^ 1);
	st = window_io(p, IBV_WR_RDMA_WRITE, 0, p->raddr + SLACK + 512, rk2,
		       256);
	tl_check(st == IBV_WC_REM_ACCESS_ERR,
		 "a WRITE through the invalidated window fails with REM_ACCESS_ERR (%d)",
		 st);
	tl_check(call(M_CHECK, pi, SLACK, 4096, around).a,
		 "the invalidated window's memory is unchanged");
}

/* The server's MR after an M_REREG; false if the server's verb failed. */
static bool server_rereg_to(struct pair *p, uint32_t pi, int flags,
			    int access, bool pd2, int *err)
{
	struct msg m = call(M_REREG, pi, flags, access, pd2);

	*err = (int)m.a;
	if (m.a)
		return false;
	p->rkey = (uint32_t)m.b;
	p->raddr = m.c;
	return true;
}

/* A WRITE through the pair's current key at [SLACK + 612, +1500) of the
 * server's buffer; the 4 KiB at SLACK read back hold it and 'around'.
 */
static bool write_lands(struct pair *p, uint32_t pi)
{
	uint64_t around = tl_rnd(), seed = tl_rnd();
	uint8_t want[4096];

	call(M_FILL, pi, SLACK, 4096, around);
	pattern(want, 4096, around);
	pattern(want + 612, 1500, seed);
	pattern(p->s.buf, 1500, seed);
	return window_io(p, IBV_WR_RDMA_WRITE, 0, p->raddr + SLACK + 612,
			 p->rkey, 1500) == IBV_WC_SUCCESS &&
	       region_is(p, want);
}

/*
 * ibv_rereg_mr on the server between operations of the pair's: a new
 * translation (the old buffer stays untouched), read-only access, another
 * PD and back, each followed by traffic through the key the server
 * reports. With may_break, a WRITE against read-only access must fail
 * with REM_ACCESS_ERR and change nothing. A server on rdma_rxe 6.1
 * (RC_REMOTE_PEER_RXE) has no rereg at all and skips the phase.
 */
static void rereg_phase(struct pair *p, uint32_t pi, bool may_break)
{
	const int full = IBV_ACCESS_LOCAL_WRITE | TL_REMOTE_ALL |
			 IBV_ACCESS_MW_BIND;
	const int ro = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;
	uint64_t old = tl_rnd(), around = tl_rnd();
	uint8_t want[4096];
	int err, flags = IBV_REREG_MR_CHANGE_PD | IBV_REREG_MR_CHANGE_ACCESS;
	bool moved;

	call(M_FILL, pi, SLACK, 4096, old);
	moved = server_rereg_to(p, pi, IBV_REREG_MR_CHANGE_TRANSLATION, 0,
				false, &err);
	if (!moved && err == EOPNOTSUPP && getenv("RC_REMOTE_PEER_RXE")) {
		printf("# rdma_rxe 6.1 has no ibv_rereg_mr: rereg skipped\n");
		return;
	}
	tl_check(moved, "pair %u: rereg to a new buffer (%s)", pi,
		 strerror(err));
	tl_check(moved && write_lands(p, pi),
		 "new translation: a WRITE lands in the new buffer");
	tl_check(call_other(M_CHECK, pi, SLACK, 4096, old).a,
		 "new translation: the old buffer did not change");
	if (moved)
		flags |= IBV_REREG_MR_CHANGE_TRANSLATION;

	tl_check(server_rereg_to(p, pi, IBV_REREG_MR_CHANGE_ACCESS, ro, false,
				 &err),
		 "rereg to remote read only (%s)", strerror(err));
	call(M_FILL, pi, SLACK, 4096, around);
	pattern(want, 4096, around);
	tl_check(region_is(p, want), "read-only access: a READ returns the bytes");

	tl_check(server_rereg_to(p, pi, IBV_REREG_MR_CHANGE_PD, 0, true, &err),
		 "rereg to another PD (%s)", strerror(err));
	tl_check(server_rereg_to(p, pi, flags, full, false, &err),
		 "rereg back: PD, full access%s (%s)",
		 moved ? " and the first buffer" : "", strerror(err));
	tl_check(write_lands(p, pi), "back: a WRITE lands and READs back");
	if (!may_break)
		return;

	tl_check(server_rereg_to(p, pi, IBV_REREG_MR_CHANGE_ACCESS, ro, false,
				 &err),
		 "rereg to remote read only again (%s)", strerror(err));
	call(M_FILL, pi, SLACK, 4096, around);
	pattern(p->s.buf, 256, around ^ 1);
	err = window_io(p, IBV_WR_RDMA_WRITE, 0, p->raddr + SLACK, p->rkey,
			256);
	tl_check(err == IBV_WC_REM_ACCESS_ERR,
		 "a WRITE against read-only access fails with REM_ACCESS_ERR (%d)",
		 err);
	tl_check(call(M_CHECK, pi, SLACK, 4096, around).a,
		 "and the read-only memory is unchanged");
}

/* The server's QP is gone: a WRITE must fail with RETRY_EXC_ERR, soon. */
static void dead_peer(struct pair *p)
{
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_sge sge = { (uintptr_t)p->s.buf, 64, p->s.mr->lkey };
	struct timespec t0, t;
	struct ibv_wc wc = {};
	double secs;
	bool got;

	tl_check(call(M_KILL, 0, 0, 0, 0).a, "server destroyed its QP");
	wr.wr_id = 0xdead;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = p->raddr;
	wr.wr.rdma.rkey = p->rkey;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (ibv_post_send(p->s.qp, &wr, &bad))
		tl_die("post_send");
	got = tl_wait_wc(p->s.cq, &wc, WC_WAIT_S);
	clock_gettime(CLOCK_MONOTONIC, &t);
	secs = t.tv_sec - t0.tv_sec + (t.tv_nsec - t0.tv_nsec) / 1e9;
	tl_check(got && wc.status == IBV_WC_RETRY_EXC_ERR && wc.wr_id == 0xdead,
		 "dead peer: %s after %.2f s (timeout 14, retry_cnt 7)",
		 got ? ibv_wc_status_str(wc.status) : "no completion", secs);
	tl_check(got && secs < 30, "dead peer detected in bounded time");
}

static void connect_server(const char *host)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
	char port[8];
	int i, one = 1;

	snprintf(port, sizeof(port), "%d", PORT);
	if (getaddrinfo(host, port, &hints, &ai))
		tl_die("getaddrinfo");
	for (i = 0; i < 600; i++) {
		sock_fd = socket(ai->ai_family, SOCK_STREAM, 0);
		if (sock_fd < 0)
			tl_die("socket");
		if (!connect(sock_fd, ai->ai_addr, ai->ai_addrlen))
			break;
		close(sock_fd);
		sock_fd = -1;
		usleep(100000);
	}
	freeaddrinfo(ai);
	if (sock_fd < 0)
		tl_die("connect to the server");
	setsockopt(sock_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

int main(int argc, char **argv)
{
	static const enum ibv_mtu mtus[] = { 0, IBV_MTU_256, IBV_MTU_512, 0,
					     IBV_MTU_1024 };
	struct pair *pairs;
	uint32_t npairs, i;
	int iters, it, bad, mtu;

	if (argc < 8) {
		fprintf(stderr,
			"usage: rc_remote DEV GID_INDEX PAIRS ITERATIONS SEED MAX_SIZE PATH_MTU [SERVER]\n");
		return 2;
	}
	ctx = tl_open_device(argv[1]);
	gid_index = atoi(argv[2]);
	npairs = atoi(argv[3]);
	iters = atoi(argv[4]);
	*tl_rng() = strtoull(argv[5], NULL, 0) | 1;
	max_size = strtoull(argv[6], NULL, 0);
	mtu = atoi(argv[7]);
	path_mtu = mtu == 4096 ? IBV_MTU_4096 : mtu == 2048 ? IBV_MTU_2048 :
		   mtu / 256 < 5 ? mtus[mtu / 256] : 0;
	pd = ibv_alloc_pd(ctx);
	if (!pd || ibv_query_gid(ctx, 1, gid_index, &my_gid))
		tl_die("device setup");
	if (argc == 8) {
		*tl_rng() ^= 0x5eed;	/* the server's own PSNs and splits */
		return serve();
	}
	if (!path_mtu) {
		fprintf(stderr, "PATH_MTU must be 256, 512, 1024, 2048 or 4096\n");
		return 2;
	}
	if (max_size < 256 * 1024) {	/* tl_rnd_size() goes up to 256 KiB */
		fprintf(stderr, "MAX_SIZE must be at least 262144\n");
		return 2;
	}

	atomic_write = getenv("RC_REMOTE_ATOMIC_WRITE");
	connect_server(argv[8]);
	send_msg(M_HELLO, 0, npairs, max_size, path_mtu, 0);
	pairs = calloc(npairs, sizeof(*pairs));
	for (i = 0; i < npairs; i++) {
		setup_side(&pairs[i].s);
		exchange_and_connect(&pairs[i].s, i, &pairs[i].raddr,
				     &pairs[i].rkey, &pairs[i].rqpn);
	}
	for (i = 0; i < npairs; i++) {
		bad = 0;
		atomic_writes = 0;
		for (it = 0; it < iters && !bad; it++)
			bad = one_op(&pairs[i], i, it);
		tl_check(!bad, "pair %u: %d random operations (MTU %d), data and completions verified",
			 i, bad ? it : iters, mtu);
		if (atomic_write)
			tl_check(atomic_writes > 0, "pair %u: %d of them ATOMIC_WRITEs",
				 i, atomic_writes);
	}
	windows(&pairs[npairs - 1], npairs - 1, npairs > 1);
	if (npairs > 1) {	/* the windows' last check broke the QP */
		send_msg(M_RECONNECT, npairs - 1, 0, 0, 0, 0);
		reconnect(&pairs[npairs - 1].s, npairs - 1);
	}
	rereg_phase(&pairs[npairs - 1], npairs - 1, npairs > 1);
	/* rdma_rxe 6.1 as requester retries a dead peer for ever: skippable. */
	if (!getenv("RC_REMOTE_SKIP_DEAD_PEER"))
		dead_peer(&pairs[0]);
	send_msg(M_BYE, 0, 0, 0, 0, 0);
	for (i = 0; i < npairs; i++) {
		ibv_destroy_qp(pairs[i].s.qp);
		ibv_dereg_mr(pairs[i].s.mr);
		ibv_destroy_cq(pairs[i].s.cq);
		free(pairs[i].s.buf);
	}
	free(pairs);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return tl_exit_status();
}
