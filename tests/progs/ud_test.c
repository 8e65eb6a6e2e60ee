// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ud_test DEV GID_INDEX [SRC_GID_INDEX]
 *	UD QPs on DEV, on one host: a sender (addressing with SRC_GID_INDEX,
 *	default GID_INDEX) and a receiver (at GID_INDEX). Checks every
 *	datagram's payload bytes, its 40-byte GRH (IPv4: 20 zero bytes and an
 *	IPv4 header with a valid checksum; IPv6: the IPv6 header) and its
 *	completion (GRH flag, source QPN, length, immediate, the network
 *	header type in sl as ConnectX reports it); the path MTU
 *	limit at posting; Q_Key matching, the Q_Key MSB meaning "the QP's own
 *	Q_Key"; drops for a wrong Q_Key, a missing receive WQE, a QP not
 *	ready and a QPN nobody owns (the device's hw counters); a receive
 *	buffer too small (IBV_WC_LOC_LEN_ERR, the QP keeps working); a reply
 *	through ibv_create_ah_from_wc(); AHs made without the kernel. Needs
 *	root (debugfs, privileged Q_Keys).
 *
 * ud_test DEV GID_INDEX qkey-priv
 *	Setting a privileged Q_Key (MSB set) on a user QP: refused with EPERM
 *	without CAP_NET_RAW, allowed with it. Other Q_Keys work either way.
 *
 * ud_test DEV GID_INDEX ah-syscalls
 *	Creates and destroys address handles between the lines "ah-begin"
 *	and "ah-end" on stdout, for strace to count the system calls made.
 */
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include "testlib.h"

#define GRH_LEN 40
#define SLOT 2048		/* one receive or send buffer */
#define DEPTH 64		/* receive and send queue depth */
#define MAX_SGE 4
#define QKEY 0x11111111u
#define QKEY_PRIV 0x80010000u	/* a privileged Q_Key */
#define QKEY_OWN 0x80000000u	/* in a WR: "the QP's own Q_Key" */
#define HOP_LIMIT 37
#define NO_SUCH_QPN 0xfffe00u
#define OBJECTS "/sys/kernel/debug/sroce/objects"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static int rgid_index, sgid_index;	/* receiver's and sender's GIDs */
static union ibv_gid rgid, sgid;
static uint32_t port_mtu;

struct end {
	struct ibv_qp *qp;
	struct ibv_cq *scq, *rcq;
	struct ibv_mr *mr;
	uint8_t *buf;		/* DEPTH receive slots, then DEPTH send slots */
	int max_inline;
};

static uint8_t *rslot(struct end *e, int i)
{
	return e->buf + (size_t)i * SLOT;
}

static uint8_t *sslot(struct end *e, int i)
{
	return e->buf + (size_t)(DEPTH + i) * SLOT;
}

/* Debugfs counters ---------------------------------------------------------- */

static long long read_named(const char *file, const char *name)
{
	char key[64];
	long long v;
	FILE *f = fopen(file, "r");

	if (!f)
		tl_die(file);
	while (fscanf(f, "%63s %lld", key, &v) == 2)
		if (!strcmp(key, name)) {
			fclose(f);
			return v;
		}
	fclose(f);
	fprintf(stderr, "fatal: no %s in %s\n", name, file);
	exit(2);
}

static long long counter(const char *name)
{
	long long v = tl_hw_counter(name);

	if (v < 0) {
		fprintf(stderr, "fatal: no hw counter %s\n", name);
		exit(2);
	}
	return v;
}

/* Waits up to 5 s for counter name to reach want; its last value. */
static long long wait_counter(const char *name, long long want)
{
	struct timespec t0, t;
	long long v;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		v = counter(name);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (v >= want || t.tv_sec - t0.tv_sec >= 5)
			return v;
		usleep(2000);
	}
}

/*
 * Waits for counter name to grow by want from before, then a little longer
 * for any growth beyond; the growth seen.
 */
static long long growth(const char *name, long long before, long long want)
{
	wait_counter(name, before + want);
	usleep(20000);
	return counter(name) - before;
}

/* QPs ------------------------------------------------------------------------ */

static int set_qkey(struct ibv_qp *qp, uint32_t qkey)
{
	struct ibv_qp_attr a = { .qkey = qkey };

	return ibv_modify_qp(qp, &a, IBV_QP_QKEY);
}

static uint32_t get_qkey(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {};
	struct ibv_qp_init_attr i;

	if (ibv_query_qp(qp, &a, IBV_QP_QKEY, &i))
		return 0;
	return a.qkey;
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {};
	struct ibv_qp_init_attr i;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &i))
		return -1;
	return a.qp_state;
}

static int to_init(struct ibv_qp *qp, uint32_t qkey)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qkey = qkey };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_QKEY);
}

static int to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR };

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return -1;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x1234;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

/* A UD QP with its own CQs and buffers, in RTS unless init_only. */
static void make_end(struct end *e, uint32_t qkey, bool init_only)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH,
			 .max_send_sge = MAX_SGE, .max_recv_sge = MAX_SGE,
			 .max_inline_data = 64 },
	};

	memset(e, 0, sizeof(*e));
	e->buf = calloc(2 * DEPTH, SLOT);
	e->scq = ibv_create_cq(ctx, 2 * DEPTH, NULL, NULL, 0);
	e->rcq = ibv_create_cq(ctx, 2 * DEPTH, NULL, NULL, 0);
	if (!e->buf || !e->scq || !e->rcq)
		tl_die("creating CQs");
	e->mr = ibv_reg_mr(pd, e->buf, 2 * DEPTH * SLOT, IBV_ACCESS_LOCAL_WRITE);
	if (!e->mr)
		tl_die("ibv_reg_mr");
	init.send_cq = e->scq;
	init.recv_cq = e->rcq;
	e->qp = ibv_create_qp(pd, &init);
	if (!e->qp) {
		/* Without inline data, then. */
		init.cap.max_inline_data = 0;
		e->qp = ibv_create_qp(pd, &init);
	}
	if (!e->qp)
		tl_die("ibv_create_qp(UD)");
	e->max_inline = init.cap.max_inline_data;
	if (to_init(e->qp, qkey) || (!init_only && to_rts(e->qp)))
		tl_die("moving a UD QP to RTS");
}

static void free_end(struct end *e)
{
	if (ibv_destroy_qp(e->qp) || ibv_dereg_mr(e->mr) ||
	    ibv_destroy_cq(e->scq) || ibv_destroy_cq(e->rcq))
		tl_die("destroying a UD QP");
	free(e->buf);
}

static struct ibv_ah *make_ah(const union ibv_gid *dgid, int sgid_idx)
{
	struct ibv_ah_attr a = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = *dgid, .sgid_index = sgid_idx,
			 .hop_limit = HOP_LIMIT },
	};

	return ibv_create_ah(pd, &a);
}

/* Posts a receive of len bytes at slot i, split over 1..MAX_SGE SGEs. */
static int post_recv(struct end *e, int i, uint32_t len, bool split)
{
	struct ibv_sge sge[MAX_SGE];
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = sge }, *bad;

	memset(rslot(e, i), 0xa5, SLOT);
	if (split) {
		wr.num_sge = tl_split(sge, MAX_SGE, (uintptr_t)rslot(e, i), len,
				      e->mr->lkey);
	} else {
		sge[0].addr = (uintptr_t)rslot(e, i);
		sge[0].length = len;
		sge[0].lkey = e->mr->lkey;
		wr.num_sge = 1;
	}
	return ibv_post_recv(e->qp, &wr, &bad);
}

struct msg {
	uint32_t len;
	bool imm, inl;
	uint32_t imm_data;	/* network order, as in the WR and the WC */
	uint32_t qkey;		/* in the WR */
	int slot;		/* send slot holding the payload */
};

static int post_send_ah(struct end *e, struct ibv_ah *ah, uint32_t qpn,
			const struct msg *m)
{
	struct ibv_sge sge[MAX_SGE];
	struct ibv_send_wr wr = {
		.wr_id = m->slot, .sg_list = sge,
		.opcode = m->imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED | (m->inl ? IBV_SEND_INLINE : 0),
		.imm_data = m->imm_data,
		.wr.ud = { .ah = ah, .remote_qpn = qpn, .remote_qkey = m->qkey },
	}, *bad;

	wr.num_sge = tl_split(sge, MAX_SGE, (uintptr_t)sslot(e, m->slot),
			      m->len, e->mr->lkey);
	return ibv_post_send(e->qp, &wr, &bad);
}

/* Waits up to secs for a completion; -1 if none came. */
static int wait_status(struct ibv_cq *cq, struct ibv_wc *wc, int secs)
{
	return tl_wait_wc(cq, wc, secs) ? (int)wc->status : -1;
}

/* True if no completion arrives on cq within ms milliseconds. */
static bool quiet_for(struct ibv_cq *cq, int ms)
{
	struct ibv_wc wc;
	int i;

	for (i = 0; i < ms; i++) {
		if (ibv_poll_cq(cq, 1, &wc) > 0)
			return false;
		usleep(1000);
	}
	return true;
}

/* GRH checks ---------------------------------------------------------------- */

static bool gid_is_v4(const union ibv_gid *g)
{
	static const uint8_t prefix[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(g->raw, prefix, sizeof(prefix));
}

static uint16_t csum_fold(const uint8_t *p, int len)
{
	uint32_t s = 0;
	int i;

	for (i = 0; i < len; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return s;
}

static uint32_t align4(uint32_t n)
{
	return (n + 3) & ~3u;
}

/*
 * Whether grh is what a datagram of len payload bytes (with or without an
 * immediate) from src to dst carries, with hop limit (IPv4: TTL) hops
 * unless that is -1; why says what differs.
 */
static bool grh_ok(const uint8_t *grh, const union ibv_gid *src,
		   const union ibv_gid *dst, uint32_t len, bool imm, int hops,
		   char *why, size_t whylen)
{
	/* UDP, BTH, DETH, [ImmDt], payload padded to 4, ICRC */
	uint32_t udp_len = 8 + 12 + 8 + (imm ? 4 : 0) + align4(len) + 4;
	static const uint8_t zero[20];
	const uint8_t *ip = grh + 20;
	char a[INET6_ADDRSTRLEN];

	if (gid_is_v4(src)) {
		if (memcmp(grh, zero, 20))
			return snprintf(why, whylen, "first 20 bytes not zero"), false;
		if (ip[0] != 0x45)
			return snprintf(why, whylen, "version/ihl 0x%02x", ip[0]), false;
		if (ip[9] != 17)
			return snprintf(why, whylen, "protocol %u", ip[9]), false;
		if (csum_fold(ip, 20) != 0xffff)
			return snprintf(why, whylen, "bad IPv4 header checksum 0x%02x%02x",
					ip[10], ip[11]), false;
		if ((uint32_t)(ip[2] << 8 | ip[3]) != 20 + udp_len)
			return snprintf(why, whylen, "tot_len %u, expected %u",
					ip[2] << 8 | ip[3], 20 + udp_len), false;
		if (hops >= 0 && ip[8] != hops)
			return snprintf(why, whylen, "ttl %u, expected %d", ip[8],
					hops), false;
		if (memcmp(ip + 12, src->raw + 12, 4))
			return snprintf(why, whylen, "saddr %s",
					inet_ntop(AF_INET, ip + 12, a, sizeof(a))), false;
		if (memcmp(ip + 16, dst->raw + 12, 4))
			return snprintf(why, whylen, "daddr %s",
					inet_ntop(AF_INET, ip + 16, a, sizeof(a))), false;
		return true;
	}
	if (grh[0] >> 4 != 6)
		return snprintf(why, whylen, "IP version %u", grh[0] >> 4), false;
	if (grh[6] != 17)
		return snprintf(why, whylen, "next header %u", grh[6]), false;
	if ((uint32_t)(grh[4] << 8 | grh[5]) != udp_len)
		return snprintf(why, whylen, "payload_len %u, expected %u",
				grh[4] << 8 | grh[5], udp_len), false;
	if (hops >= 0 && grh[7] != hops)
		return snprintf(why, whylen, "hop limit %u, expected %d", grh[7],
				hops), false;
	if (memcmp(grh + 8, src->raw, 16))
		return snprintf(why, whylen, "source %s",
				inet_ntop(AF_INET6, grh + 8, a, sizeof(a))), false;
	if (memcmp(grh + 24, dst->raw, 16))
		return snprintf(why, whylen, "destination %s",
				inet_ntop(AF_INET6, grh + 24, a, sizeof(a))), false;
	return true;
}

/* A tally of one property over many datagrams, keeping the first failure. */
struct tally {
	int bad;
	char first[200];
};

static void tally_fail(struct tally *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void tally_fail(struct tally *t, const char *fmt, ...)
{
	va_list ap;

	if (!t->bad++) {
		va_start(ap, fmt);
		vsnprintf(t->first, sizeof(t->first), fmt, ap);
		va_end(ap);
	}
}

static void tally_report(const struct tally *t, int n, const char *what)
{
	if (t->bad)
		tl_check(0, "%s (%d of %d datagrams bad; first: %s)", what,
			 t->bad, n, t->first);
	else
		tl_check(1, "%s (%d datagrams)", what, n);
}

/* Datagrams ------------------------------------------------------------------ */

static void fill(uint8_t *p, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		p[i] = tl_rnd();
}

/*
 * Many datagrams of many sizes (0 to the MTU), split over several SGEs on
 * both sides, some inline, some with immediate data. Checks everything a
 * receiver sees, and the ud_sent/ud_received counters.
 */
static void bulk(struct end *a, struct end *b, struct ibv_ah *ah, int count)
{
	static const uint32_t fixed[] = { 0, 1, 3, 39, 40, 41, 511, 1000, 1023 };
	struct tally t_status = {}, t_flags = {}, t_len = {}, t_src = {},
		     t_grh = {}, t_data = {}, t_imm = {}, t_send = {}, t_sl = {};
	struct msg msgs[32];
	bool used[32];
	long long sent0 = counter("ud_sent"), recv0 = counter("ud_received"), g;
	int done = 0, arrived = 0, i, j, n, nfixed = sizeof(fixed) / sizeof(fixed[0]);
	char why[160];

	for (i = 0; i < DEPTH; i++)
		if (post_recv(b, i, GRH_LEN + port_mtu, true))
			tl_die("ibv_post_recv");
	while (done < count) {
		n = count - done < 32 ? count - done : 32;
		for (i = 0; i < n; i++) {
			struct msg *m = &msgs[i];
			int k = done + i;

			memset(m, 0, sizeof(*m));
			m->len = k < nfixed ? fixed[k] :
				 k == nfixed ? port_mtu : tl_rnd() % (port_mtu + 1);
			m->imm = k % 3 == 1;
			m->imm_data = htonl(0x5e000000u + k);
			m->inl = m->len <= (uint32_t)a->max_inline && k % 2;
			m->qkey = QKEY;
			m->slot = i;
			fill(sslot(a, i), m->len);
			if (post_send_ah(a, ah, b->qp->qp_num, m))
				tl_die("ibv_post_send");
			used[i] = false;
		}
		for (i = 0; i < n; i++) {
			struct ibv_wc wc;
			int s = wait_status(a->scq, &wc, 10);

			if (s != IBV_WC_SUCCESS || wc.opcode != IBV_WC_SEND)
				tally_fail(&t_send, "send completion %s, opcode %d",
					   s < 0 ? "missing" : ibv_wc_status_str(s),
					   wc.opcode);
		}
		for (i = 0; i < n; i++) {
			struct ibv_wc wc;
			const uint8_t *p;
			struct msg *m = NULL;
			int s = wait_status(b->rcq, &wc, 10);
			uint32_t len;

			if (s < 0) {
				tally_fail(&t_status, "datagram %d of a batch of %d never arrived",
					   i, n);
				break;
			}
			arrived++;
			if (s != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV) {
				tally_fail(&t_status, "status %s, opcode %d",
					   ibv_wc_status_str(s), wc.opcode);
				continue;
			}
			p = rslot(b, wc.wr_id);
			len = wc.byte_len - GRH_LEN;
			/* Which message is this: same length, same bytes. */
			for (j = 0; j < n && !m; j++)
				if (!used[j] && msgs[j].len == len &&
				    wc.byte_len >= GRH_LEN &&
				    !memcmp(p + GRH_LEN, sslot(a, j), len))
					m = &msgs[j], used[j] = true;
			if (!m) {
				tally_fail(&t_data, "%u bytes (byte_len %u) match no datagram sent",
					   len, wc.byte_len);
				goto repost;
			}
			if (!(wc.wc_flags & IBV_WC_GRH))
				tally_fail(&t_flags, "no IBV_WC_GRH (wc_flags 0x%x)",
					   wc.wc_flags);
			if (wc.src_qp != a->qp->qp_num || wc.qp_num != b->qp->qp_num)
				tally_fail(&t_src, "src_qp 0x%x qp_num 0x%x, expected 0x%x 0x%x",
					   wc.src_qp, wc.qp_num, a->qp->qp_num,
					   b->qp->qp_num);
			if (wc.byte_len != GRH_LEN + m->len)
				tally_fail(&t_len, "byte_len %u for %u bytes", wc.byte_len,
					   m->len);
			if (!!(wc.wc_flags & IBV_WC_WITH_IMM) != m->imm ||
			    (m->imm && wc.imm_data != m->imm_data))
				tally_fail(&t_imm, "%s: wc_flags 0x%x imm 0x%x, expected 0x%x",
					   m->imm ? "SEND_WITH_IMM" : "SEND",
					   wc.wc_flags, ntohl(wc.imm_data),
					   ntohl(m->imm_data));
			if (wc.sl != (gid_is_v4(&sgid) ? 2 : 1))
				tally_fail(&t_sl, "wc.sl %u", wc.sl);
			if (!grh_ok(p, &sgid, &rgid, m->len, m->imm, HOP_LIMIT, why,
				    sizeof(why)))
				tally_fail(&t_grh, "%u-byte datagram: %s", m->len, why);
			/* Nothing written past the datagram. */
			if (m->len < port_mtu && p[GRH_LEN + m->len] != 0xa5)
				tally_fail(&t_data, "byte past a %u-byte datagram written",
					   m->len);
repost:
			if (post_recv(b, wc.wr_id, GRH_LEN + port_mtu, true))
				tl_die("ibv_post_recv");
		}
		done += n;
	}
	tl_check(arrived == count, "%d of %d datagrams arrived", arrived, count);
	tally_report(&t_send, count, "every send completed successfully");
	tally_report(&t_status, count, "every receive completed successfully");
	tally_report(&t_data, count, "payload bytes as sent, nothing written past them");
	tally_report(&t_flags, count, "IBV_WC_GRH set");
	tally_report(&t_src, count, "wc.src_qp is the sender's QPN");
	tally_report(&t_len, count, "wc.byte_len is 40 + payload");
	tally_report(&t_imm, count, "IBV_WC_WITH_IMM and the immediate exactly when sent");
	tally_report(&t_sl, count, gid_is_v4(&sgid) ?
		     "wc.sl 2, ConnectX's network header type for IPv4" :
		     "wc.sl 1, ConnectX's network header type for IPv6");
	tally_report(&t_grh, count, gid_is_v4(&sgid) ?
		     "GRH: 20 zero bytes, IPv4 header (version, ihl, UDP, checksum, length, TTL, addresses)" :
		     "GRH: IPv6 header (version, UDP, payload length, hop limit, addresses)");
	g = growth("ud_sent", sent0, count);
	tl_check(g == count, "ud_sent counted %lld of %d", g, count);
	g = growth("ud_received", recv0, count);
	tl_check(g == count, "ud_received counted %lld of %d", g, count);
}

/* Sends one datagram of len bytes, checks the send completed successfully. */
static void send_one(struct end *a, struct ibv_ah *ah, uint32_t qpn,
		     uint32_t qkey, uint32_t len, uint8_t mark, const char *what)
{
	struct msg m = { .len = len, .qkey = qkey };
	struct ibv_wc wc;
	int s;

	memset(sslot(a, 0), mark, len);
	if (post_send_ah(a, ah, qpn, &m)) {
		tl_check(0, "%s: ibv_post_send failed: %s", what, strerror(errno));
		return;
	}
	s = wait_status(a->scq, &wc, 10);
	if (s != IBV_WC_SUCCESS)
		tl_check(0, "%s: send completion %s", what,
			 s < 0 ? "missing" : ibv_wc_status_str(s));
}

/* Expects one receive on e: success, len bytes of mark, in receive slot. */
static void expect_recv(struct end *e, uint32_t src_qpn, int slot,
			uint32_t len, uint8_t mark, const char *what)
{
	struct ibv_wc wc;
	int s = wait_status(e->rcq, &wc, 10);
	uint32_t i, bad = 0;

	if (s != IBV_WC_SUCCESS) {
		tl_check(0, "%s: receive %s", what,
			 s < 0 ? "never came" : ibv_wc_status_str(s));
		return;
	}
	for (i = 0; i < len; i++)
		bad += rslot(e, slot)[GRH_LEN + i] != mark;
	tl_check(wc.wr_id == (uint64_t)slot && wc.byte_len == GRH_LEN + len &&
		 wc.src_qp == src_qpn && !bad,
		 "%s (wr_id %llu, byte_len %u, src_qp 0x%x, %u bad bytes)", what,
		 (unsigned long long)wc.wr_id, wc.byte_len, wc.src_qp, bad);
}

/* The path MTU limit at posting, with both post APIs. */
static void mtu_limit(struct end *a, struct end *b, struct ibv_ah *ah)
{
	struct ibv_sge sge[2] = {
		{ (uintptr_t)sslot(a, 0), port_mtu / 2, a->mr->lkey },
		{ (uintptr_t)sslot(a, 0) + port_mtu / 2, port_mtu / 2 + 1,
		  a->mr->lkey },
	};
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = ah, .remote_qpn = b->qp->qp_num, .remote_qkey = QKEY },
	}, *bad = NULL;
	struct ibv_port_attr pa;
	int ret;

	tl_check(!ibv_query_port(ctx, 1, &pa) && pa.active_mtu == IBV_MTU_1024 &&
		 port_mtu == 1024,
		 "port active MTU is 1024 for a 1500-byte netdev (%u)", port_mtu);

	sge[0].length = port_mtu + 1;
	ret = ibv_post_send(a->qp, &wr, &bad);
	tl_check(ret == EINVAL && bad == &wr,
		 "ibv_post_send of MTU + 1 bytes is refused with EINVAL (%d)", ret);
	sge[0].length = port_mtu / 2;
	wr.num_sge = 2;
	bad = NULL;
	ret = ibv_post_send(a->qp, &wr, &bad);
	tl_check(ret == EINVAL && bad == &wr,
		 "and so are MTU + 1 bytes over two SGEs (%d)", ret);
	tl_check(quiet_for(a->scq, 100), "refused sends make no completion");

	post_recv(b, 0, GRH_LEN + port_mtu, false);
	send_one(a, ah, b->qp->qp_num, QKEY, port_mtu, 0x3c, "MTU-sized send");
	expect_recv(b, a->qp->qp_num, 0, port_mtu, 0x3c,
		    "exactly the MTU goes through after the refusals");

	/* The ibv_wr_* API: the batch fails at ibv_wr_complete(). */
	{
		struct ibv_qp_init_attr_ex ie = {
			.qp_type = IBV_QPT_UD, .send_cq = a->scq, .recv_cq = a->rcq,
			.cap = { .max_send_wr = 8, .max_recv_wr = 8,
				 .max_send_sge = 1, .max_recv_sge = 1 },
			.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
			.pd = pd, .send_ops_flags = IBV_QP_EX_WITH_SEND,
		};
		struct ibv_qp *qp = ibv_create_qp_ex(ctx, &ie);
		struct ibv_qp_ex *qx;
		struct ibv_wc wc;

		if (!qp || to_init(qp, QKEY) || to_rts(qp)) {
			tl_check(0, "a UD QP with the ibv_wr_* API: %s", strerror(errno));
			if (qp)
				ibv_destroy_qp(qp);
			return;
		}
		qx = ibv_qp_to_qp_ex(qp);
		ibv_wr_start(qx);
		qx->wr_id = 5;
		qx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_send(qx);
		ibv_wr_set_ud_addr(qx, ah, b->qp->qp_num, QKEY);
		ibv_wr_set_sge(qx, a->mr->lkey, (uintptr_t)sslot(a, 0), port_mtu + 1);
		ret = ibv_wr_complete(qx);
		tl_check(ret == EINVAL, "ibv_wr_complete of MTU + 1 bytes fails with EINVAL (%d)",
			 ret);
		tl_check(quiet_for(a->scq, 100), "and makes no completion");
		post_recv(b, 1, GRH_LEN + port_mtu, false);
		memset(sslot(a, 0), 0x4d, port_mtu);
		ibv_wr_start(qx);
		qx->wr_id = 6;
		qx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_send(qx);
		ibv_wr_set_ud_addr(qx, ah, b->qp->qp_num, QKEY);
		ibv_wr_set_sge(qx, a->mr->lkey, (uintptr_t)sslot(a, 0), port_mtu);
		ret = ibv_wr_complete(qx);
		tl_check(!ret && wait_status(a->scq, &wc, 10) == IBV_WC_SUCCESS &&
			 wc.wr_id == 6, "ibv_wr_* send of the MTU completes (%d)", ret);
		expect_recv(b, qp->qp_num, 1, port_mtu, 0x4d,
			    "and arrives, from the ibv_wr_* QP");
		ibv_destroy_qp(qp);
	}
}

/* Q_Key matching, and the MSB of a WR's Q_Key. */
static void qkeys(struct end *a, struct end *b, struct ibv_ah *ah)
{
	long long d0, g;

	post_recv(b, 0, GRH_LEN + 64, false);
	d0 = counter("rx_drop_qkey");
	send_one(a, ah, b->qp->qp_num, QKEY ^ 0x100, 64, 0x11,
		 "wrong Q_Key");
	g = growth("rx_drop_qkey", d0, 1);
	tl_check(g == 1, "a datagram with the wrong Q_Key is counted in rx_drop_qkey (+%lld)",
		 g);
	tl_check(quiet_for(b->rcq, 100), "and not delivered");
	send_one(a, ah, b->qp->qp_num, QKEY, 64, 0x12, "right Q_Key");
	expect_recv(b, a->qp->qp_num, 0, 64, 0x12,
		    "the right Q_Key lands in the receive the dropped one left");

	/* MSB set: the sender's own Q_Key, which matches. */
	post_recv(b, 1, GRH_LEN + 64, false);
	send_one(a, ah, b->qp->qp_num, QKEY_OWN, 64, 0x13, "own Q_Key");
	expect_recv(b, a->qp->qp_num, 1, 64, 0x13,
		    "remote_qkey 0x80000000 sends the QP's own Q_Key, which matches");

	/* The sender's own Q_Key differs: MSB set means it, not the WR's. */
	post_recv(b, 2, GRH_LEN + 64, false);
	tl_check(!set_qkey(a->qp, QKEY ^ 0x200) && get_qkey(a->qp) == (QKEY ^ 0x200),
		 "a non-privileged Q_Key can be changed in RTS");
	d0 = counter("rx_drop_qkey");
	send_one(a, ah, b->qp->qp_num, QKEY_OWN | QKEY, 64, 0x14, "own Q_Key");
	g = growth("rx_drop_qkey", d0, 1);
	tl_check(g == 1 && quiet_for(b->rcq, 50),
		 "remote_qkey 0x%x with another own Q_Key is dropped as a Q_Key mismatch (rx_drop_qkey +%lld)",
		 QKEY_OWN | QKEY, g);
	send_one(a, ah, b->qp->qp_num, QKEY, 64, 0x15, "explicit Q_Key");
	expect_recv(b, a->qp->qp_num, 2, 64, 0x15,
		    "an explicit Q_Key without the MSB is sent as given");

	/* A privileged Q_Key at the receiver is out of a plain sender's reach. */
	if (set_qkey(b->qp, QKEY_PRIV)) {
		tl_check(0, "root sets a privileged Q_Key: %s", strerror(errno));
		goto out;
	}
	post_recv(b, 3, GRH_LEN + 64, false);
	d0 = counter("rx_drop_qkey");
	send_one(a, ah, b->qp->qp_num, QKEY_PRIV, 64, 0x16, "privileged Q_Key");
	g = growth("rx_drop_qkey", d0, 1);
	tl_check(g == 1 && quiet_for(b->rcq, 50),
		 "a WR naming a privileged Q_Key cannot reach a QP that has it (rx_drop_qkey +%lld)",
		 g);
	if (set_qkey(a->qp, QKEY_PRIV))
		tl_die("setting a privileged Q_Key as root");
	send_one(a, ah, b->qp->qp_num, QKEY_OWN, 64, 0x17, "privileged own Q_Key");
	expect_recv(b, a->qp->qp_num, 3, 64, 0x17,
		    "a QP holding the privileged Q_Key reaches it");
out:
	if (set_qkey(a->qp, QKEY) || set_qkey(b->qp, QKEY))
		tl_die("restoring Q_Keys");
}

/* Datagrams nobody takes: no receive WQE, a QP not ready, no QP at all. */
static void drops(struct end *a, struct end *b, struct ibv_ah *ah)
{
	long long d0, p0, g;
	struct end c;

	d0 = counter("rx_drop_no_recv");
	send_one(a, ah, b->qp->qp_num, QKEY, 100, 0x21, "no receive posted");
	g = growth("rx_drop_no_recv", d0, 1);
	tl_check(g == 1, "a datagram with no receive WQE posted is counted in rx_drop_no_recv (+%lld)",
		 g);
	tl_check(quiet_for(b->rcq, 100), "and makes no completion");
	post_recv(b, 0, GRH_LEN + 100, false);
	tl_check(quiet_for(b->rcq, 100), "and is not kept for a later receive");
	send_one(a, ah, b->qp->qp_num, QKEY, 100, 0x22, "after a receive");
	expect_recv(b, a->qp->qp_num, 0, 100, 0x22,
		    "the next datagram lands once a receive is posted");

	make_end(&c, QKEY, true);
	post_recv(&c, 0, GRH_LEN + 100, false);
	p0 = counter("rx_drop_protocol");
	send_one(a, ah, c.qp->qp_num, QKEY, 100, 0x23, "to a QP in INIT");
	g = growth("rx_drop_protocol", p0, 1);
	tl_check(g == 1 && quiet_for(c.rcq, 50),
		 "a datagram to a QP in INIT is dropped (rx_drop_protocol +%lld)", g);
	free_end(&c);

	d0 = counter("ud_no_dest");
	send_one(a, ah, NO_SUCH_QPN, QKEY, 100, 0x24, "to no QP");
	g = growth("ud_no_dest", d0, 1);
	tl_check(g == 1,
		 "a datagram to QPN 0x%x, which nobody has, completes and counts ud_no_dest (+%lld)",
		 NO_SUCH_QPN, g);
	tl_check(qp_state(a->qp) == IBV_QPS_RTS, "the sender stays in RTS");
}

/* A receive buffer smaller than 40 + payload. */
static void too_small(struct end *a, struct end *b, struct ibv_ah *ah)
{
	struct ibv_wc wc;
	int s;

	post_recv(b, 0, GRH_LEN + 99, false);
	post_recv(b, 1, GRH_LEN + 100, false);
	send_one(a, ah, b->qp->qp_num, QKEY, 100, 0x31, "too big");
	s = wait_status(b->rcq, &wc, 10);
	tl_check(s == IBV_WC_LOC_LEN_ERR && wc.wr_id == 0,
		 "100 bytes into a 139-byte receive buffer: IBV_WC_LOC_LEN_ERR on that WQE (%s, wr_id %llu)",
		 s < 0 ? "nothing" : ibv_wc_status_str(s),
		 (unsigned long long)wc.wr_id);
	tl_check(qp_state(b->qp) == IBV_QPS_RTS, "the receiver stays in RTS");
	send_one(a, ah, b->qp->qp_num, QKEY, 100, 0x32, "fits");
	expect_recv(b, a->qp->qp_num, 1, 100, 0x32,
		    "the next datagram fills a 140-byte buffer exactly");

	post_recv(b, 2, GRH_LEN - 1, false);
	send_one(a, ah, b->qp->qp_num, QKEY, 0, 0, "empty");
	s = wait_status(b->rcq, &wc, 10);
	tl_check(s == IBV_WC_LOC_LEN_ERR && wc.wr_id == 2,
		 "an empty datagram into 39 bytes (no room for the GRH): IBV_WC_LOC_LEN_ERR (%s)",
		 s < 0 ? "nothing" : ibv_wc_status_str(s));
	post_recv(b, 3, GRH_LEN, false);
	send_one(a, ah, b->qp->qp_num, QKEY, 0, 0, "empty");
	expect_recv(b, a->qp->qp_num, 3, 0, 0, "an empty datagram fills 40 bytes");
}

/* B answers A through an AH made from the completion and the GRH. */
static void reply_from_wc(struct end *a, struct end *b, struct ibv_ah *ah)
{
	struct msg m = { .len = 64, .qkey = QKEY };
	struct ibv_ah *back;
	struct ibv_wc wc;
	uint32_t src_qp;
	char why[160] = "";

	post_recv(b, 0, GRH_LEN + 64, false);
	post_recv(a, 0, GRH_LEN + 64, false);
	send_one(a, ah, b->qp->qp_num, QKEY, 64, 0x41, "request");
	if (wait_status(b->rcq, &wc, 10) != IBV_WC_SUCCESS) {
		tl_check(0, "request for a reply arrived");
		return;
	}
	back = ibv_create_ah_from_wc(pd, &wc, (struct ibv_grh *)rslot(b, 0), 1);
	tl_check(back != NULL, "ibv_create_ah_from_wc accepts the GRH: %s",
		 back ? "yes" : strerror(errno));
	if (!back)
		return;
	src_qp = wc.src_qp;
	memset(sslot(b, 0), 0x42, 64);
	if (post_send_ah(b, back, src_qp, &m) ||
	    wait_status(b->scq, &wc, 10) != IBV_WC_SUCCESS)
		tl_check(0, "the reply was sent");
	expect_recv(a, b->qp->qp_num, 0, 64, 0x42,
		    "the reply reaches the requester");
	tl_check(grh_ok(rslot(a, 0), &rgid, &sgid, 64, false, -1, why, sizeof(why)),
		 "the reply's GRH has the addresses swapped%s%s", *why ? ": " : "",
		 why);
	ibv_destroy_ah(back);
}

/*
 * Multicast: two receivers attached to a group get every datagram sent to
 * it (QPN 0xffffff), with the group as the GRH destination; a detached
 * QP gets nothing more; attach and detach refuse what they must.
 */
static void multicast(struct end *a)
{
	static const uint8_t v6[16] = { 0xff, 0x0e, [13] = 0x09, [15] = 0x42 };
	static const uint8_t v4[16] = { [10] = 0xff, [11] = 0xff, 239, 9, 9, 42 };
	union ibv_gid mgid;
	struct end b, c;
	struct ibv_ah *ah;
	char why[160] = "";
	int i;

	memcpy(mgid.raw, gid_is_v4(&sgid) ? v4 : v6, 16);
	make_end(&b, QKEY, false);
	make_end(&c, QKEY, false);
	tl_check(ibv_attach_mcast(b.qp, &rgid, 0) != 0,
		 "attaching to a unicast GID is refused");
	tl_check(!ibv_attach_mcast(b.qp, &mgid, 0) &&
		 !ibv_attach_mcast(c.qp, &mgid, 0),
		 "two UD QPs attach to the group: %s", strerror(errno));
	ah = make_ah(&mgid, sgid_index);
	if (!ah)
		tl_die("ibv_create_ah(multicast)");

	for (i = 0; i < 3; i++) {
		post_recv(&b, i, SLOT, false);
		post_recv(&c, i, SLOT, false);
	}
	send_one(a, ah, 0xffffff, QKEY, 100, 0x5c, "datagram to the group");
	expect_recv(&b, a->qp->qp_num, 0, 100, 0x5c, "the first member got it");
	expect_recv(&c, a->qp->qp_num, 0, 100, 0x5c, "the second member got it");
	tl_check(grh_ok(rslot(&b, 0), &sgid, &mgid, 100, false, HOP_LIMIT, why,
			sizeof(why)),
		 "its GRH names the group as destination%s%s", *why ? ": " : "",
		 why);

	tl_check(!ibv_detach_mcast(c.qp, &mgid, 0), "the second member detaches");
	tl_check(ibv_detach_mcast(c.qp, &mgid, 0) != 0,
		 "detaching twice is refused");
	send_one(a, ah, 0xffffff, QKEY, 200, 0x5d, "second datagram");
	expect_recv(&b, a->qp->qp_num, 1, 200, 0x5d,
		    "the remaining member got the second");
	tl_check(quiet_for(c.rcq, 300), "the detached QP got nothing");

	tl_check(!ibv_detach_mcast(b.qp, &mgid, 0), "the last member detaches");
	send_one(a, ah, 0xffffff, QKEY, 50, 0x5e, "datagram to an empty group");
	tl_check(quiet_for(b.rcq, 300), "nobody gets a datagram after detach");

	/* uverbs keeps a QP with attachments from being destroyed. */
	tl_check(!ibv_attach_mcast(c.qp, &mgid, 0), "attach again");
	errno = 0;
	tl_check(ibv_destroy_qp(c.qp) == EBUSY || errno == EBUSY,
		 "an attached QP cannot be destroyed (EBUSY)");
	tl_check(!ibv_detach_mcast(c.qp, &mgid, 0), "detach before destroying");
	ibv_destroy_ah(ah);
	free_end(&b);
	free_end(&c);
}

/* AHs: made in userspace only, and RoCE needs a GRH. */
static void address_handles(void)
{
	struct ibv_ah_attr nogrh = { .is_global = 0, .dlid = 1, .port_num = 1 };
	struct ibv_ah *ah[100];
	long long n0 = read_named(OBJECTS, "ahs");
	int i, made = 0;

	errno = 0;
	ah[0] = ibv_create_ah(pd, &nogrh);
	tl_check(!ah[0], "ibv_create_ah with is_global 0 fails (%s)",
		 ah[0] ? "it did not" : strerror(errno));
	if (ah[0])
		ibv_destroy_ah(ah[0]);
	for (i = 0; i < 100; i++)
		made += (ah[i] = make_ah(&rgid, sgid_index)) != NULL;
	tl_check(made == 100 && read_named(OBJECTS, "ahs") == n0,
		 "100 AHs made, none in the kernel (ahs %lld -> %lld)", n0,
		 read_named(OBJECTS, "ahs"));
	for (i = 0; i < 100; i++)
		if (ah[i])
			ibv_destroy_ah(ah[i]);
}

/* Modes ---------------------------------------------------------------------- */

static bool have_cap_net_raw(void)
{
	char line[256];
	unsigned long long eff = 0;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		tl_die("/proc/self/status");
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	fclose(f);
	return eff & (1ULL << 13);	/* CAP_NET_RAW */
}

static int qkey_priv(void)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	bool priv = have_cap_net_raw();
	struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_qp *qp;
	int ret;

	printf("# uid %d, CAP_NET_RAW %s\n", (int)geteuid(), priv ? "yes" : "no");
	if (!cq)
		tl_die("ibv_create_cq");
	init.send_cq = init.recv_cq = cq;
	qp = ibv_create_qp(pd, &init);
	if (!qp)
		tl_die("ibv_create_qp(UD)");

	ret = to_init(qp, QKEY_PRIV);
	if (priv)
		tl_check(ret == 0, "with CAP_NET_RAW, RESET->INIT with Q_Key 0x%x works (%d)",
			 QKEY_PRIV, ret);
	else
		tl_check(ret == EPERM,
			 "without CAP_NET_RAW, RESET->INIT with Q_Key 0x%x is refused with EPERM (%s)",
			 QKEY_PRIV, ret ? strerror(ret) : "it worked");
	if (ret)
		tl_check(qp_state(qp) == IBV_QPS_RESET && !to_init(qp, QKEY),
			 "the refusal left the QP in RESET, and Q_Key 0x%x works", QKEY);
	tl_check(!to_rts(qp), "the QP reaches RTS");

	ret = set_qkey(qp, QKEY_PRIV + 1);
	if (priv)
		tl_check(ret == 0 && get_qkey(qp) == QKEY_PRIV + 1,
			 "with CAP_NET_RAW, Q_Key 0x%x set in RTS (%d, now 0x%x)",
			 QKEY_PRIV + 1, ret, get_qkey(qp));
	else
		tl_check(ret == EPERM && get_qkey(qp) == QKEY,
			 "without CAP_NET_RAW, Q_Key 0x%x in RTS is refused with EPERM, the Q_Key stays (%s, now 0x%x)",
			 QKEY_PRIV + 1, ret ? strerror(ret) : "it worked", get_qkey(qp));
	ret = set_qkey(qp, 0x7fffffff);
	tl_check(ret == 0 && get_qkey(qp) == 0x7fffffff,
		 "the largest non-privileged Q_Key 0x7fffffff is allowed (%d)", ret);
	tl_check(qp_state(qp) == IBV_QPS_RTS, "the QP stays in RTS");
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	return 0;
}

static int ah_syscalls(void)
{
	struct ibv_ah *ah;
	int i, made = 0;

	fflush(stdout);
	if (write(1, "ah-begin\n", 9) != 9)
		tl_die("write");
	for (i = 0; i < 1000; i++) {
		ah = make_ah(&rgid, sgid_index);
		if (ah) {
			made++;
			ibv_destroy_ah(ah);
		}
	}
	if (write(1, "ah-end\n", 7) != 7)
		tl_die("write");
	tl_check(made == 1000, "1000 AHs created and destroyed (%d)", made);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = "all";
	struct end a, b;
	struct ibv_ah *ah;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: ud_test DEV GID_INDEX [SRC_GID_INDEX|qkey-priv|ah-syscalls]\n");
		return 2;
	}
	ctx = tl_open_device(argv[1]);
	rgid_index = sgid_index = atoi(argv[2]);
	if (argc == 4) {
		if (argv[3][0] >= '0' && argv[3][0] <= '9')
			sgid_index = atoi(argv[3]);
		else
			mode = argv[3];
	}
	if (ibv_query_gid(ctx, 1, rgid_index, &rgid) ||
	    ibv_query_gid(ctx, 1, sgid_index, &sgid))
		tl_die("ibv_query_gid");
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		tl_die("ibv_alloc_pd");
	tl_rng()[0] = 0x9e3779b97f4a7c15ull ^ (uint64_t)time(NULL);
	printf("# seed %llu\n", (unsigned long long)tl_rng()[0]);

	if (!strcmp(mode, "qkey-priv"))
		qkey_priv();
	else if (!strcmp(mode, "ah-syscalls"))
		ah_syscalls();
	else if (strcmp(mode, "all")) {
		fprintf(stderr, "unknown mode %s\n", mode);
		return 2;
	} else {
		struct ibv_port_attr pa;
		char s[INET6_ADDRSTRLEN], r[INET6_ADDRSTRLEN];

		if (ibv_query_port(ctx, 1, &pa))
			tl_die("ibv_query_port");
		port_mtu = 128u << pa.active_mtu;
		inet_ntop(AF_INET6, sgid.raw, s, sizeof(s));
		inet_ntop(AF_INET6, rgid.raw, r, sizeof(r));
		printf("# from GID %d %s to GID %d %s, MTU %u\n", sgid_index, s,
		       rgid_index, r, port_mtu);
		tl_check(gid_is_v4(&sgid) == gid_is_v4(&rgid),
			 "both GIDs are of one IP version");
		address_handles();
		make_end(&a, QKEY, false);
		make_end(&b, QKEY, false);
		printf("# sender QPN 0x%x, receiver QPN 0x%x, max inline %d\n",
		       a.qp->qp_num, b.qp->qp_num, a.max_inline);
		ah = make_ah(&rgid, sgid_index);
		if (!ah)
			tl_die("ibv_create_ah");
		bulk(&a, &b, ah, 400);
		/* A fresh receiver, its receive queue empty. */
		free_end(&b);
		make_end(&b, QKEY, false);
		mtu_limit(&a, &b, ah);
		qkeys(&a, &b, ah);
		drops(&a, &b, ah);
		too_small(&a, &b, ah);
		reply_from_wc(&a, &b, ah);
		multicast(&a);
		ibv_destroy_ah(ah);
		free_end(&a);
		free_end(&b);
	}
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return tl_exit_status();
}
