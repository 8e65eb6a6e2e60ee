// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * hostile_user: a local user who lies to the kernel in ways that used to
 * hang or crash it. Each mode prints "ok - ..." / "not ok - ..." lines.
 *
 *   producer DEV GIDX DGID back|forward
 *	SENDs are in flight to DGID (where nobody answers) when the process
 *	moves the SQ producer index behind what the engine fetched, or more
 *	than a ring ahead of what it retired. The QP must fail, the SENDs be
 *	flushed, and the MR deregister and the QP be destroyed at once.
 *   sqd DEV GIDX DGID
 *	A SEND is in flight on the wire when the QP goes to SQD and the
 *	process gives it an address on this host (the shortcut): refused.
 *   shortcut DEV GIDX DGID
 *	QPs that know a victim's QPN aim their own shortcut QPs at it: a
 *	victim on the wire whose remote peer's QPN is the attacker's own,
 *	and a victim on the shortcut whose peer is another QP. Nothing
 *	arrives; the victim's true peer still gets through. An RC QP aimed
 *	at a UD QP fails, and the UD QP is destroyed at once.
 *   blocked DEV GIDX DGID
 *	Two QPs whose send queues only a completion can move on: READs
 *	beyond max_rd_atomic, and a failed WQE behind a SEND in flight on a
 *	QP without a timeout. Prints "ready" and waits for a line on stdin
 *	(the caller measures the workers' CPU time meanwhile), then fails
 *	both QPs: every WQE is flushed and teardown is prompt.
 *   mmap DEV ROUNDS
 *	One thread maps a CQ's ring again (the offset from /proc/self/maps)
 *	while another resizes and destroys the CQ. A mapping that worked
 *	stays readable until it is unmapped; after the destroy, none works.
 *
 * White box: it reads the provider's private QP structure
 * (providers/sroce/sroce.h) to find the send queue's indices.
 */
#include <arpa/inet.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>
#include "rings.h"
#include "testlib.h"

#define MSG_LEN 4096

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_mr *mr;
static char *buf;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void setup(const char *dev)
{
	ctx = tl_open_device(dev);
	buf = calloc(1, 2 * MSG_LEN);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	if (!buf || !pd || !cq)
		tl_die("setup");
	mr = ibv_reg_mr(pd, buf, 2 * MSG_LEN, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		tl_die("ibv_reg_mr");
}

static struct ibv_qp *rc_qp(void)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC, .send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &init);

	if (!qp)
		tl_die("ibv_create_qp");
	return qp;
}

static struct ibv_qp *ud_qp(void)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_UD, .send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &init);

	if (!qp || tl_connect_ud(qp, 0x1111, 0))
		tl_die("UD QP");
	return qp;
}

static void connect_to(struct ibv_qp *qp, const union ibv_gid *dgid,
		       int gidx, uint32_t dest_qpn, uint8_t timeout,
		       uint8_t retry)
{
	struct tl_rc_conn conn = {
		.dest_qpn = dest_qpn, .dgid = dgid, .sgid_index = gidx,
		.timeout = timeout, .retry_cnt = retry, .rnr_retry = retry,
		.min_rnr_timer = 1,
	};

	if (tl_connect_rc(qp, &conn))
		tl_die("connect");
}

static int post_key(struct ibv_qp *qp, uint64_t wr_id,
		    enum ibv_wr_opcode op, uint32_t lkey)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf, .length = MSG_LEN, .lkey = lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	return ibv_post_send(qp, &wr, &bad);
}

static int post(struct ibv_qp *qp, uint64_t wr_id, enum ibv_wr_opcode op)
{
	return post_key(qp, wr_id, op, mr->lkey);
}

static void post_recv(struct ibv_qp *qp, uint64_t wr_id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf + MSG_LEN, .length = MSG_LEN,
		.lkey = mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	if (ibv_post_recv(qp, &wr, &bad))
		tl_die("ibv_post_recv");
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	if (ibv_query_qp(qp, &attr, IBV_QP_STATE, &init))
		return -1;
	return attr.qp_state;
}

static int wait_state(struct ibv_qp *qp, enum ibv_qp_state s, double secs)
{
	double end = now() + secs;

	while (qp_state(qp) != s)
		if (now() > end)
			return 0;
		else
			usleep(10000);
	return 1;
}

/* Collects completions for up to secs; returns how many arrived. */
static int collect(struct ibv_wc *wc, int max, double secs)
{
	double end = now() + secs;
	int n = 0, got;

	while (n < max && now() < end) {
		got = ibv_poll_cq(cq, max - n, wc + n);
		if (got < 0)
			break;
		n += got;
		if (!got)
			usleep(10000);
	}
	return n;
}

static void prompt_teardown(struct ibv_qp *qp)
{
	double t0 = now();
	int ret;

	ret = ibv_dereg_mr(mr);
	tl_check(!ret && now() - t0 < 2, "ibv_dereg_mr returns at once "
		 "(%d, %.2f s)", ret, now() - t0);
	t0 = now();
	ret = ibv_destroy_qp(qp) || ibv_destroy_cq(cq) || ibv_dealloc_pd(pd);
	tl_check(!ret && now() - t0 < 2, "the QP, CQ and PD go at once "
		 "(%.2f s)", now() - t0);
}

static int mode_producer(int gidx, const union ibv_gid *dgid, int back)
{
	struct ibv_qp *qp = rc_qp();
	struct sroce_qp *s = to_sqp(qp);
	uint32_t slots = 1U << s->sq.log_slots, p;
	struct ibv_wc wc[8];
	int n;

	connect_to(qp, dgid, gidx, 0x123, 31, 7);
	if (post(qp, 1, IBV_WR_SEND) || post(qp, 2, IBV_WR_SEND))
		tl_die("post");
	sleep(1);
	tl_check(ibv_poll_cq(cq, 8, wc) == 0, "two SENDs are in flight");

	p = __atomic_load_n(&s->sq.hdr->producer, __ATOMIC_RELAXED);
	p = back ? p - 2 : p + 4 * slots;
	__atomic_store_n(&s->sq.hdr->producer, p, __ATOMIC_RELEASE);
	tl_kick(qp);
	tl_check(wait_state(qp, IBV_QPS_ERR, 5), "a producer moved %s puts "
		 "the QP in ERR", back ? "backwards" : "far forward");
	n = collect(wc, 8, 5);
	tl_check(n == 2 && wc[0].wr_id == 1 && wc[1].wr_id == 2 &&
		 wc[0].status == IBV_WC_WR_FLUSH_ERR &&
		 wc[1].status == IBV_WC_WR_FLUSH_ERR,
		 "exactly the two SENDs are flushed (%d completions)", n);
	prompt_teardown(qp);
	return tl_exit_status();
}

static int mode_sqd(int gidx, const union ibv_gid *dgid,
		    const union ibv_gid *own)
{
	struct ibv_qp *qp = rc_qp();
	struct ibv_qp_attr a = {};
	struct ibv_wc wc[8];
	int ret, n;

	connect_to(qp, dgid, gidx, 0x123, 31, 7);
	if (post(qp, 1, IBV_WR_SEND))
		tl_die("post");
	sleep(1);
	a.qp_state = IBV_QPS_SQD;
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE);
	tl_check(!ret, "RTS to SQD with a SEND in flight (%d)", ret);

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_SQD;
	tl_set_av(&a.ah_attr, own, gidx);
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV);
	tl_check(ret == EINVAL, "SQD to SQD with an address on the shortcut "
		 "is refused with EINVAL (%d)", ret);
	a.ah_attr.grh.dgid = *dgid;
	a.ah_attr.grh.hop_limit = 32;
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV);
	tl_check(!ret, "another address on the wire is taken (%d)", ret);

	a.qp_state = IBV_QPS_ERR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		tl_die("modify to ERR");
	n = collect(wc, 8, 5);
	tl_check(n == 1 && wc[0].wr_id == 1 &&
		 wc[0].status == IBV_WC_WR_FLUSH_ERR,
		 "ERR flushes the SEND (%d completions)", n);
	prompt_teardown(qp);
	return tl_exit_status();
}

static int mode_shortcut(int gidx, const union ibv_gid *dgid,
			 const union ibv_gid *own)
{
	struct ibv_qp *victim_wire = rc_qp(), *victim = rc_qp();
	struct ibv_qp *peer = rc_qp(), *attacker = rc_qp();
	struct ibv_qp *attacker2 = rc_qp(), *attacker3 = rc_qp(), *ud;
	struct ibv_wc wc[8];
	int n, i, ret, bad = 0;
	double t0;

	/*
	 * The victims, with receive WQEs waiting. The wire victim's remote
	 * peer has the number the attacker's QP has here: QPNs of two hosts
	 * come from the same small range, so such a pair is easy to find.
	 */
	connect_to(victim_wire, dgid, gidx, attacker->qp_num, 31, 7);
	connect_to(victim, own, gidx, peer->qp_num, 14, 7);
	connect_to(peer, own, gidx, victim->qp_num, 14, 7);
	post_recv(victim_wire, 100);
	post_recv(victim, 200);
	/* The attackers name the victims' QPNs and short timeouts. */
	connect_to(attacker, own, gidx, victim_wire->qp_num, 10, 1);
	connect_to(attacker2, own, gidx, victim->qp_num, 10, 1);
	if (post(attacker, 1, IBV_WR_SEND) || post(attacker2, 2, IBV_WR_SEND))
		tl_die("post");
	n = collect(wc, 8, 15);
	for (i = 0; i < n; i++)
		if (wc[i].wr_id >= 100 || wc[i].status == IBV_WC_SUCCESS)
			bad++;
	tl_check(n == 2 && !bad, "neither victim received anything; both "
		 "attackers' SENDs failed (%d completions, %d bad)", n, bad);
	if (post(peer, 3, IBV_WR_SEND))
		tl_die("post");
	n = collect(wc, 8, 5);
	tl_check(n == 2 && wc[0].status == IBV_WC_SUCCESS &&
		 wc[1].status == IBV_WC_SUCCESS &&
		 (wc[0].wr_id ^ wc[1].wr_id) == (3 ^ 200),
		 "the true peer's SEND arrives (%d completions)", n);
	tl_check(qp_state(victim) == IBV_QPS_RTS &&
		 qp_state(victim_wire) == IBV_QPS_RTS,
		 "both victims are still in RTS");

	/* An RC QP aimed at a UD QP: its request is lost, not queued. */
	ud = ud_qp();
	post_recv(ud, 300);
	connect_to(attacker3, own, gidx, ud->qp_num, 10, 1);
	if (post(attacker3, 4, IBV_WR_SEND))
		tl_die("post");
	n = collect(wc, 8, 15);
	tl_check(n == 1 && wc[0].wr_id == 4 &&
		 wc[0].status != IBV_WC_SUCCESS, "an RC SEND to a UD QP fails "
		 "and the UD QP receives nothing (%d completions)", n);
	t0 = now();
	ret = ibv_destroy_qp(ud);
	tl_check(!ret && now() - t0 < 2, "the UD QP is destroyed at once "
		 "(%.2f s)", now() - t0);

	ibv_destroy_qp(attacker3);
	ibv_destroy_qp(attacker);
	ibv_destroy_qp(attacker2);
	ibv_destroy_qp(peer);
	ibv_destroy_qp(victim);
	prompt_teardown(victim_wire);
	return tl_exit_status();
}

static int mode_blocked(int gidx, const union ibv_gid *dgid)
{
	struct ibv_qp *reads = rc_qp(), *untimed = rc_qp();
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct ibv_wc wc[16];
	char line[16];
	int i, n, bad = 0;

	connect_to(reads, dgid, gidx, 0x123, 31, 7);	/* max_rd_atomic 1 */
	connect_to(untimed, dgid, gidx, 0x124, 0, 7);	/* no timeout */
	for (i = 1; i <= 4; i++)
		if (post(reads, i, IBV_WR_RDMA_READ))
			tl_die("post READ");
	if (post(untimed, 5, IBV_WR_SEND) ||
	    post_key(untimed, 6, IBV_WR_SEND, mr->lkey ^ 0x5a5a00))
		tl_die("post SEND");
	sleep(1);
	tl_check(ibv_poll_cq(cq, 16, wc) == 0, "nothing completes: the "
		 "READs wait for the first, the bad SEND for the good one");
	printf("ready\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		line[0] = 0;

	if (ibv_modify_qp(reads, &a, IBV_QP_STATE) ||
	    ibv_modify_qp(untimed, &a, IBV_QP_STATE))
		tl_die("modify to ERR");
	n = collect(wc, 16, 5);
	for (i = 0; i < n; i++)
		if (wc[i].status == IBV_WC_SUCCESS)
			bad++;
	tl_check(n == 6 && !bad, "all six WQEs end in error (%d completions, "
		 "%d successful)", n, bad);
	ibv_destroy_qp(untimed);
	prompt_teardown(reads);
	return tl_exit_status();
}

struct race {
	int fd;
	off_t offset;
	size_t len;
	volatile int stop;
	int mapped, failed, read_bad;
};

/* The offset in the uverbs file behind addr, from /proc/self/maps. */
static off_t map_offset(void *addr)
{
	unsigned long lo, off;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	off_t ret = -1;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%*x %*s %lx", &lo, &off) == 2 &&
		    lo == (uintptr_t)addr)
			ret = off;
	if (f)
		fclose(f);
	return ret;
}

static void *remapper(void *arg)
{
	struct race *r = arg;
	volatile uint8_t sum = 0;
	uint8_t *p;
	size_t i;

	while (!r->stop) {
		p = mmap(NULL, r->len, PROT_READ, MAP_SHARED, r->fd, r->offset);
		if (p == MAP_FAILED) {
			r->failed++;
			continue;
		}
		r->mapped++;
		usleep(100);
		/* The pages stay while they are mapped, even after destroy. */
		for (i = 0; i < r->len; i += 512)
			sum += p[i];
		munmap(p, r->len);
	}
	(void)sum;
	return NULL;
}

static int mode_mmap(int rounds)
{
	struct race r = { .fd = ctx->cmd_fd };
	struct ibv_cq *c;
	pthread_t t;
	int i, after = 0;
	void *p;

	for (i = 0; i < rounds; i++) {
		c = ibv_create_cq(ctx, 1024, NULL, NULL, 0);
		if (!c)
			tl_die("ibv_create_cq");
		r.len = to_scq(c)->ring.map_len;
		r.offset = map_offset(to_scq(c)->ring.map);
		if (r.offset < 0)
			tl_die("ring offset");
		r.stop = 0;
		if (pthread_create(&t, NULL, remapper, &r))
			tl_die("pthread_create");
		usleep(500 + i % 7 * 300);
		if (i % 2 && ibv_resize_cq(c, 4096))
			tl_die("ibv_resize_cq");
		if (ibv_destroy_cq(c))
			tl_die("ibv_destroy_cq");
		r.stop = 1;
		pthread_join(t, NULL);
		p = mmap(NULL, r.len, PROT_READ, MAP_SHARED, r.fd, r.offset);
		if (p != MAP_FAILED) {
			after++;
			munmap(p, r.len);
		}
	}
	tl_check(r.mapped > 0, "the ring was mapped again %d times while it "
		 "lived (%d refused)", r.mapped, r.failed);
	tl_check(after == 0, "a destroyed CQ's ring cannot be mapped (%d of "
		 "%d were)", after, rounds);
	return tl_exit_status();
}

int main(int argc, char **argv)
{
	union ibv_gid dgid, own;
	int gidx;

	if (argc == 4 && !strcmp(argv[1], "mmap")) {
		ctx = tl_open_device(argv[2]);
		return mode_mmap(atoi(argv[3]));
	}
	if (argc < 5 || inet_pton(AF_INET6, argv[4], &dgid) != 1)
		goto usage;
	setup(argv[2]);
	gidx = atoi(argv[3]);
	if (ibv_query_gid(ctx, 1, gidx, &own))
		tl_die("ibv_query_gid");
	if (!strcmp(argv[1], "producer") && argc == 6)
		return mode_producer(gidx, &dgid, !strcmp(argv[5], "back"));
	if (!strcmp(argv[1], "blocked") && argc == 5)
		return mode_blocked(gidx, &dgid);
	if (!strcmp(argv[1], "sqd") && argc == 5)
		return mode_sqd(gidx, &dgid, &own);
	if (!strcmp(argv[1], "shortcut") && argc == 5)
		return mode_shortcut(gidx, &dgid, &own);
usage:
	fprintf(stderr, "usage: hostile_user producer|blocked|sqd|shortcut DEV GIDX "
		"DGID [back|forward] | hostile_user mmap DEV ROUNDS\n");
	return 2;
}
