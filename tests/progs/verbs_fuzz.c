// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * verbs_fuzz DEV SECONDS SEED: a random sequencer over the uverbs interface.
 *
 * For SECONDS it runs random actions, with random and boundary arguments,
 * over every object type sroce has:
 *   - through libibverbs: alloc/dealloc PD; create/resize/destroy CQ, arm
 *     and poll it; create/modify/query/destroy RC, UC and UD QPs (random
 *     states, attribute masks and values); reg/rereg/dereg MR (addresses
 *     mapped or not, lengths up to 2^64 - 1, every access bit); create and
 *     destroy AH; post SENDs, WRITEs, READs, atomics and receives with
 *     random SGEs, keys, flags and inline lengths; create/modify/query/
 *     destroy SRQs (QPs created on them) and post to them; alloc/dealloc
 *     memory windows of both types, bind them (ibv_bind_mw and BIND_MW
 *     WRs with random MRs, ranges and rights) and name them in
 *     invalidations;
 *   - through raw uverbs commands on a second context: write() commands
 *     and RDMA_VERBS_IOCTL calls with random headers, attributes and
 *     payloads whose pointers are valid or not;
 *   - through the mappings: mmap of random offsets of the device file,
 *     reading and scribbling over whatever rings they map, then kicking;
 *   - across processes: fork (the child works on the parent's objects and
 *     exits) and kill (a child with its own context is killed with SIGKILL
 *     at a random moment).
 * Children that scribble over their own rings may die of their provider's
 * confusion; that is allowed, a child that does not end is not. At the
 * end a fresh context must create and use every object type again.
 * Prints the seed first; the same seed replays the same sequence in the
 * parent (children's timing varies). Exits 0 when the run ended and the
 * fresh context worked.
 */
#include <setjmp.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <rdma/rdma_user_ioctl_cmds.h>
#include "rings.h"
#include "testlib.h"

#define NPD 4
#define NCQ 6
#define NQP 12
#define NMR 8
#define NAH 4
#define NSRQ 3
#define NMW 4
#define NMAP 4
#define BUF_LEN (64 * 1024)
#define MAX_SGE 32
#define PAGE 4096

struct world {
	struct ibv_context *ctx;
	struct ibv_pd *pd[NPD];
	struct ibv_cq *cq[NCQ];
	struct ibv_qp *qp[NQP];
	struct ibv_mr *mr[NMR];
	struct ibv_ah *ah[NAH];
	struct ibv_srq *srq[NSRQ];
	struct ibv_mw *mw[NMW];
	void *map[NMAP];
	size_t map_len[NMAP];
	int gid_index;
};

static char *buf;		/* registered, posted from and into */
static char *scratch;		/* response and attribute space for raw calls */
static unsigned long actions, successes, children, child_crashes;
static sigjmp_buf fault_jmp;
static volatile sig_atomic_t in_probe;
/* A fork child shares the parent's kernel objects: it may use and change
 * them, neither destroy them nor create new ones beside them (the
 * parent's own teardown must find its objects as it left them). */
static int keep_objects;

static uint64_t pick(const uint64_t *v, size_t n)
{
	return v[tl_rnd() % n];
}

#define PICK(...) ({							\
	const uint64_t _v[] = { __VA_ARGS__ };				\
	pick(_v, sizeof(_v) / sizeof(_v[0]));				\
})

/* Small, boundary or random: the shape of most numeric arguments. */
static uint64_t num(uint64_t typical)
{
	switch (tl_rnd() % 6) {
	case 0:
		return PICK(0, 1, 2, 0x7fffffff, 0x80000000, 0xffffffff,
			    0xffffffffffffffffULL, 1ULL << 32);
	case 1:
		return tl_rnd();
	case 2:
		return tl_rnd() % 65536;
	default:
		return tl_rnd() % (typical + 1);
	}
}

/*
 * The buffer lives in a mapping of its own: an_address() may point up to
 * 64 bytes before its end and lengths reach 64 KiB, so MRs, receives,
 * WRITEs and command responses can run past it. They land in BUF_SLACK
 * bytes nobody else uses, never in malloc's memory; a PROT_NONE page after
 * the slack makes any longer registration fail to pin.
 */
#define BUF_SLACK (128 * 1024)

static char *fuzz_arena(void)
{
	size_t len = BUF_LEN + BUF_SLACK + PAGE;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		tl_die("mmap");
	if (mprotect(p + BUF_LEN + BUF_SLACK, PAGE, PROT_NONE))
		tl_die("mprotect");
	return p;
}

static uint64_t an_address(void)
{
	switch (tl_rnd() % 6) {
	case 0:
		return PICK(0, 1, 4096, 0xffffffffffffffffULL,
			    0x7ffffffff000ULL, 0xffff800000000000ULL);
	case 1:
		return (uintptr_t)buf + BUF_LEN - tl_rnd() % 64;
	default:
		return (uintptr_t)buf + tl_rnd() % BUF_LEN;
	}
}

static uint32_t a_key(struct world *w)
{
	struct ibv_mr *mr = w->mr[tl_rnd() % NMR];

	switch (tl_rnd() % 5) {
	case 0:
		return (uint32_t)PICK(0, 0xffffffff, 0x100, 1);
	case 1:
		return (uint32_t)tl_rnd();
	default:
		if (!mr)
			return 0;
		return tl_rnd() % 2 ? mr->lkey : mr->rkey;
	}
}

static void on_fault(int sig)
{
	if (in_probe)
		siglongjmp(fault_jmp, 1);
	signal(sig, SIG_DFL);
	raise(sig);
}

static struct ibv_pd *some_pd(struct world *w)
{
	return w->pd[tl_rnd() % NPD];
}

static struct ibv_cq *some_cq(struct world *w)
{
	return w->cq[tl_rnd() % NCQ];
}

static void act_pd(struct world *w)
{
	int i = tl_rnd() % NPD;

	if (w->pd[i]) {
		if (!keep_objects && !ibv_dealloc_pd(w->pd[i])) {
			w->pd[i] = NULL;
			successes++;
		}
	} else if (!keep_objects) {
		w->pd[i] = ibv_alloc_pd(w->ctx);
		successes += !!w->pd[i];
	}
}

static void act_cq(struct world *w)
{
	int i = tl_rnd() % NCQ;

	if (!w->cq[i]) {
		if (keep_objects)
			return;
		w->cq[i] = ibv_create_cq(w->ctx, (int)num(4096), NULL, NULL,
					 (int)(tl_rnd() % 4));
		successes += !!w->cq[i];
		return;
	}
	switch (tl_rnd() % 4) {
	case 0:
		if (!keep_objects && !ibv_destroy_cq(w->cq[i])) {
			w->cq[i] = NULL;
			successes++;
		}
		break;
	case 1:
		successes += !ibv_resize_cq(w->cq[i], (int)num(8192));
		break;
	case 2:
		successes += !ibv_req_notify_cq(w->cq[i], (int)(tl_rnd() % 2));
		break;
	default: {
		struct ibv_wc wc[16];

		successes += ibv_poll_cq(w->cq[i], (int)(tl_rnd() % 17), wc) > 0;
	}
	}
}

static void random_ah_attr(struct world *w, struct ibv_ah_attr *ah)
{
	union ibv_gid gid = {};

	gid.raw[0] = 0xfe;
	gid.raw[1] = 0x80;
	if (tl_rnd() % 2) {	/* an IPv4-mapped GID on the host itself */
		gid.raw[0] = gid.raw[1] = 0;
		gid.raw[10] = gid.raw[11] = 0xff;
		gid.raw[12] = 127;
		gid.raw[15] = (uint8_t)(tl_rnd() % 3);
	} else if (tl_rnd() % 2) {
		uint64_t r = tl_rnd();

		memcpy(gid.raw + 8, &r, 8);
	}
	memset(ah, 0, sizeof(*ah));
	tl_set_av(ah, &gid, tl_rnd() % 4 ? w->gid_index : (int)num(300));
	ah->port_num = tl_rnd() % 8 ? 1 : (uint8_t)tl_rnd();
	ah->is_global = tl_rnd() % 8 != 0;
	ah->dlid = (uint16_t)tl_rnd();
	ah->sl = (uint8_t)tl_rnd();
	ah->grh.traffic_class = (uint8_t)tl_rnd();
	ah->grh.flow_label = (uint32_t)tl_rnd();
	ah->grh.hop_limit = (uint8_t)tl_rnd();
}

static void act_qp_create(struct world *w, int i)
{
	struct ibv_qp_init_attr a = {};
	struct ibv_cq *scq = some_cq(w), *rcq = some_cq(w);
	struct ibv_pd *pd = some_pd(w);

	if (!scq || !rcq || !pd)
		return;
	a.send_cq = scq;
	a.recv_cq = rcq;
	a.qp_type = PICK(IBV_QPT_RC, IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD,
			 IBV_QPT_UD, IBV_QPT_RAW_PACKET, IBV_QPT_XRC_SEND, 99);
	a.cap.max_send_wr = (uint32_t)num(512);
	a.cap.max_recv_wr = (uint32_t)num(512);
	a.cap.max_send_sge = (uint32_t)num(MAX_SGE);
	a.cap.max_recv_sge = (uint32_t)num(MAX_SGE);
	a.cap.max_inline_data = (uint32_t)num(1024);
	a.sq_sig_all = (int)(tl_rnd() % 2);
	if (tl_rnd() % 3 == 0)
		a.srq = w->srq[tl_rnd() % NSRQ];
	w->qp[i] = ibv_create_qp(pd, &a);
	successes += !!w->qp[i];
}

static void act_qp_modify(struct world *w, struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {};
	struct ibv_qp_init_attr init;
	int mask;

	if (tl_rnd() % 4 == 0) {
		successes += !ibv_query_qp(qp, &a, (int)tl_rnd(), &init);
		return;
	}
	a.qp_state = PICK(IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR,
			  IBV_QPS_RTS, IBV_QPS_SQD, IBV_QPS_SQE, IBV_QPS_ERR,
			  IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS, 9);
	a.cur_qp_state = (enum ibv_qp_state)(tl_rnd() % 8);
	a.path_mtu = (enum ibv_mtu)(tl_rnd() % 8);
	a.qkey = (uint32_t)tl_rnd();
	a.rq_psn = (uint32_t)num(0xffffff);
	a.sq_psn = (uint32_t)num(0xffffff);
	a.dest_qp_num = tl_rnd() % 2 ? qp->qp_num ^ (uint32_t)(tl_rnd() % 4) :
					(uint32_t)num(0xffffff);
	a.qp_access_flags = (unsigned int)num(0xff);
	a.pkey_index = (uint16_t)num(2);
	a.port_num = tl_rnd() % 8 ? 1 : (uint8_t)tl_rnd();
	a.max_rd_atomic = (uint8_t)num(32);
	a.max_dest_rd_atomic = (uint8_t)num(32);
	a.min_rnr_timer = (uint8_t)tl_rnd();
	a.timeout = (uint8_t)num(31);
	a.retry_cnt = (uint8_t)num(7);
	a.rnr_retry = (uint8_t)num(7);
	a.sq_draining = (uint8_t)tl_rnd();
	a.en_sqd_async_notify = (uint8_t)tl_rnd();
	random_ah_attr(w, &a.ah_attr);
	random_ah_attr(w, &a.alt_ah_attr);
	mask = tl_rnd() % 3 ? IBV_QP_STATE : 0;
	mask |= (int)(tl_rnd() & (tl_rnd() % 2 ? 0x1fffff : 0xffffffff));
	successes += !ibv_modify_qp(qp, &a, mask);
}

static void act_qp(struct world *w)
{
	int i = tl_rnd() % NQP;

	if (!w->qp[i]) {
		if (!keep_objects)
			act_qp_create(w, i);
	} else if (tl_rnd() % 6 == 0) {
		if (!keep_objects && !ibv_destroy_qp(w->qp[i])) {
			w->qp[i] = NULL;
			successes++;
		}
	} else {
		act_qp_modify(w, w->qp[i]);
	}
}

static void act_mr(struct world *w)
{
	int i = tl_rnd() % NMR;
	struct ibv_pd *pd = some_pd(w);
	uint64_t addr = an_address();
	size_t len = (size_t)num(BUF_LEN);
	int access = (int)num(0x3ff);

	if (w->mr[i]) {
		if (keep_objects)
			return;
		if (tl_rnd() % 3 == 0) {
			successes += !ibv_rereg_mr(w->mr[i], (int)num(7), pd,
						   (void *)(uintptr_t)addr,
						   len, access);
		} else if (!ibv_dereg_mr(w->mr[i])) {
			w->mr[i] = NULL;
			successes++;
		}
		return;
	}
	if (!pd || keep_objects)
		return;
	if (tl_rnd() % 2) {	/* mostly inside the buffer */
		addr = (uintptr_t)buf + tl_rnd() % BUF_LEN;
		len = tl_rnd() % ((uintptr_t)buf + BUF_LEN - addr + 1);
		access = IBV_ACCESS_LOCAL_WRITE | (tl_rnd() % 2 ? TL_REMOTE_ALL : 0);
	}
	w->mr[i] = ibv_reg_mr(pd, (void *)(uintptr_t)addr, len, access);
	successes += !!w->mr[i];
}

static void act_ah(struct world *w)
{
	int i = tl_rnd() % NAH;
	struct ibv_ah_attr a;
	struct ibv_pd *pd = some_pd(w);

	if (w->ah[i]) {
		if (!keep_objects && !ibv_destroy_ah(w->ah[i])) {
			w->ah[i] = NULL;
			successes++;
		}
		return;
	}
	if (!pd || keep_objects)
		return;
	random_ah_attr(w, &a);
	w->ah[i] = ibv_create_ah(pd, &a);
	successes += !!w->ah[i];
}

static void random_sges(struct world *w, struct ibv_sge *sge, int n);

static void act_srq(struct world *w)
{
	int i = tl_rnd() % NSRQ;
	struct ibv_srq_init_attr init = {};
	struct ibv_srq_attr a = {};
	struct ibv_recv_wr rwr = {}, *rbad;
	struct ibv_sge sge[MAX_SGE];
	struct ibv_pd *pd = some_pd(w);

	if (!w->srq[i]) {
		if (keep_objects || !pd)
			return;
		init.attr.max_wr = (uint32_t)num(512);
		init.attr.max_sge = (uint32_t)num(MAX_SGE);
		init.attr.srq_limit = (uint32_t)num(64);
		w->srq[i] = ibv_create_srq(pd, &init);
		successes += !!w->srq[i];
		return;
	}
	switch (tl_rnd() % 6) {
	case 0:
		if (!keep_objects && !ibv_destroy_srq(w->srq[i])) {
			w->srq[i] = NULL;
			successes++;
		}
		break;
	case 1:
		a.max_wr = (uint32_t)num(512);
		a.srq_limit = (uint32_t)num(512);
		successes += !ibv_modify_srq(w->srq[i], &a, (int)num(3));
		break;
	case 2:
		successes += !ibv_query_srq(w->srq[i], &a);
		break;
	default:
		rwr.wr_id = tl_rnd();
		rwr.num_sge = (int)(tl_rnd() % (MAX_SGE + 1));
		rwr.sg_list = sge;
		random_sges(w, sge, rwr.num_sge);
		successes += !ibv_post_srq_recv(w->srq[i], &rwr, &rbad);
	}
}

/* Random bind information: an MR of the world (or none), a range of it or
 * around it, any rights.
 */
static struct ibv_mw_bind_info random_bind_info(struct world *w)
{
	struct ibv_mr *mr = w->mr[tl_rnd() % NMR];
	struct ibv_mw_bind_info bi = {
		.mr = mr,
		.addr = mr && tl_rnd() % 2 ?
			(uintptr_t)mr->addr + tl_rnd() % (mr->length + 1) :
			an_address(),
		.length = num(BUF_LEN),
		.mw_access_flags = (unsigned int)num(0x3ff),
	};

	return bi;
}

static void act_mw(struct world *w)
{
	int i = tl_rnd() % NMW;
	struct ibv_qp *qp = w->qp[tl_rnd() % NQP];
	struct ibv_mw_bind b = {};
	struct ibv_pd *pd = some_pd(w);

	if (!w->mw[i]) {
		if (keep_objects || !pd)
			return;
		w->mw[i] = ibv_alloc_mw(pd, (enum ibv_mw_type)PICK(
			IBV_MW_TYPE_1, IBV_MW_TYPE_2, IBV_MW_TYPE_2, 0, 3));
		successes += !!w->mw[i];
		return;
	}
	if (tl_rnd() % 5 == 0) {
		if (!keep_objects && !ibv_dealloc_mw(w->mw[i])) {
			w->mw[i] = NULL;
			successes++;
		}
		return;
	}
	if (!qp)
		return;
	b.wr_id = tl_rnd();
	b.send_flags = (unsigned int)(tl_rnd() % 4 ? IBV_SEND_SIGNALED :
				      tl_rnd() & 0xff);
	b.bind_info = random_bind_info(w);
	successes += !ibv_bind_mw(qp, w->mw[i], &b);
}

static void random_sges(struct world *w, struct ibv_sge *sge, int n)
{
	int k;

	for (k = 0; k < n; k++) {
		sge[k].addr = an_address();
		sge[k].length = (uint32_t)(tl_rnd() % 4 ? tl_rnd() % 2048 :
					   num(BUF_LEN));
		sge[k].lkey = a_key(w);
	}
}

static void act_post(struct world *w)
{
	struct ibv_qp *qp = w->qp[tl_rnd() % NQP];
	struct ibv_sge sge[MAX_SGE];
	struct ibv_send_wr swr[2] = {}, *sbad;
	struct ibv_recv_wr rwr = {}, *rbad;
	struct ibv_ah *ah = w->ah[tl_rnd() % NAH];

	if (!qp)
		return;
	if (tl_rnd() % 3 == 0) {
		rwr.wr_id = tl_rnd();
		rwr.num_sge = (int)(tl_rnd() % (MAX_SGE + 1));
		rwr.sg_list = sge;
		random_sges(w, sge, rwr.num_sge);
		successes += !ibv_post_recv(qp, &rwr, &rbad);
		return;
	}
	swr[0].wr_id = tl_rnd();
	swr[0].opcode = (enum ibv_wr_opcode)PICK(
		IBV_WR_SEND, IBV_WR_SEND, IBV_WR_SEND_WITH_IMM,
		IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM,
		IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP,
		IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_LOCAL_INV, IBV_WR_BIND_MW,
		IBV_WR_SEND_WITH_INV, IBV_WR_TSO, 77);
	swr[0].num_sge = (int)(tl_rnd() % 4 ? tl_rnd() % 4 :
			       tl_rnd() % (MAX_SGE + 1));
	swr[0].sg_list = sge;
	random_sges(w, sge, swr[0].num_sge);
	swr[0].send_flags = (unsigned int)(tl_rnd() % 4 ? IBV_SEND_SIGNALED |
		(tl_rnd() % 4 ? 0 : IBV_SEND_INLINE) : tl_rnd() & 0xff);
	if (swr[0].send_flags & IBV_SEND_INLINE)	/* stay inside buf */
		for (int k = 0; k < swr[0].num_sge; k++) {
			sge[k].addr = (uintptr_t)buf;
			sge[k].length %= 1024;
		}
	swr[0].imm_data = (uint32_t)tl_rnd();
	swr[0].wr.rdma.remote_addr = an_address();
	swr[0].wr.rdma.rkey = a_key(w);
	if (swr[0].opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
	    swr[0].opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		swr[0].wr.atomic.remote_addr = an_address();
		swr[0].wr.atomic.rkey = a_key(w);
		swr[0].wr.atomic.compare_add = tl_rnd();
		swr[0].wr.atomic.swap = tl_rnd();
	}
	if (swr[0].opcode == IBV_WR_BIND_MW) {
		swr[0].bind_mw.mw = w->mw[tl_rnd() % NMW];
		swr[0].bind_mw.rkey = tl_rnd() % 2 && swr[0].bind_mw.mw ?
			ibv_inc_rkey(swr[0].bind_mw.mw->rkey) : a_key(w);
		swr[0].bind_mw.bind_info = random_bind_info(w);
	}
	if (swr[0].opcode == IBV_WR_LOCAL_INV ||
	    swr[0].opcode == IBV_WR_SEND_WITH_INV) {
		struct ibv_mw *mw = w->mw[tl_rnd() % NMW];

		swr[0].invalidate_rkey = mw && tl_rnd() % 2 ? mw->rkey :
								a_key(w);
	}
	if (qp->qp_type == IBV_QPT_UD) {
		if (!ah)
			return;
		swr[0].wr.ud.ah = ah;
		swr[0].wr.ud.remote_qpn = (uint32_t)num(0xffffff);
		swr[0].wr.ud.remote_qkey = (uint32_t)tl_rnd();
	}
	if (tl_rnd() % 4 == 0) {	/* a chain of two */
		swr[1] = swr[0];
		swr[1].num_sge = 0;
		swr[0].next = &swr[1];
	}
	successes += !ibv_post_send(qp, swr, &sbad);
}

/* Maps a random offset of the device file; reads and scribbles it. */
static void act_map(struct world *w, int scribble)
{
	int i = tl_rnd() % NMAP;
	size_t len = PAGE * (1 + tl_rnd() % 8);
	off_t off = (off_t)PAGE * (off_t)(tl_rnd() % 4 ? tl_rnd() % 64 :
					   num(1 << 20));
	int prot = PROT_READ | (tl_rnd() % 2 ? PROT_WRITE : 0);
	struct ibv_qp *qp;
	volatile char *p;
	size_t k;

	if (w->map[i]) {
		munmap(w->map[i], w->map_len[i]);
		w->map[i] = NULL;
		return;
	}
	p = mmap(NULL, len, prot, tl_rnd() % 8 ? MAP_SHARED : MAP_PRIVATE,
		 w->ctx->cmd_fd, off);
	if (p == MAP_FAILED)
		return;
	successes++;
	w->map[i] = (void *)p;
	w->map_len[i] = len;
	in_probe = 1;
	if (!sigsetjmp(fault_jmp, 1)) {
		for (k = 0; k < len; k += PAGE)
			(void)p[k];
		if (scribble && (prot & PROT_WRITE))
			for (k = 0; k < 64; k++)
				p[tl_rnd() % len] = (char)tl_rnd();
	}
	in_probe = 0;
	qp = w->qp[tl_rnd() % NQP];
	if (scribble && qp)
		tl_kick(qp);
}

/* A raw write() command: random header, random body, pointers to scratch. */
static void raw_write(int fd)
{
	uint32_t cmd[64];
	size_t words = 2 + tl_rnd() % 40, k;
	uint64_t resp = tl_rnd() % 4 ? (uintptr_t)scratch : an_address();

	for (k = 0; k < 64; k++)
		cmd[k] = (uint32_t)tl_rnd();
	cmd[0] = (uint32_t)(tl_rnd() % 4 ? tl_rnd() % 0x30 :
			    tl_rnd() % 0x30 | 0x80000000u);
	cmd[1] = (uint32_t)(words | (tl_rnd() % 64) << 16);
	if (tl_rnd() % 4)
		cmd[1] = (uint32_t)(words | (uint32_t)(tl_rnd() % 16) << 16);
	memcpy(&cmd[2], &resp, sizeof(resp));
	if (tl_rnd() % 2)	/* small handles */
		for (k = 4; k < 10; k++)
			cmd[k] = (uint32_t)(tl_rnd() % 16);
	successes += write(fd, cmd, words * 4) >= 0;
}

/* A raw RDMA_VERBS_IOCTL with random object, method and attributes. */
static void raw_ioctl(int fd)
{
	struct {
		struct ib_uverbs_ioctl_hdr hdr;
		struct ib_uverbs_attr attr[8];
	} c;
	unsigned int n = (unsigned int)(tl_rnd() % 9), k;

	memset(&c, 0, sizeof(c));
	c.hdr.length = (uint16_t)(sizeof(c.hdr) + n * sizeof(c.attr[0]));
	c.hdr.object_id = (uint16_t)(tl_rnd() % 3 == 0 ?
				     0x1000 | tl_rnd() % 8 : tl_rnd() % 24);
	c.hdr.method_id = (uint16_t)(tl_rnd() % 3 == 0 ?
				     0x1000 | tl_rnd() % 8 : tl_rnd() % 12);
	c.hdr.num_attrs = (uint16_t)n;
	c.hdr.driver_id = (uint32_t)(tl_rnd() % 4 ? 0 : tl_rnd() % 32);
	for (k = 0; k < n; k++) {
		c.attr[k].attr_id = (uint16_t)(tl_rnd() % 3 == 0 ?
					       0x1000 | tl_rnd() % 16 :
					       tl_rnd() % 16);
		c.attr[k].len = (uint16_t)PICK(0, 4, 8, 16, 64, 256, 4096,
					       tl_rnd() % 65536);
		c.attr[k].flags = (uint16_t)(tl_rnd() % 4 ? 0 : tl_rnd());
		c.attr[k].data = c.attr[k].len > 8 ?
			(tl_rnd() % 4 ? (uintptr_t)scratch : an_address()) :
			tl_rnd() % 32;
	}
	successes += ioctl(fd, RDMA_VERBS_IOCTL, &c) >= 0;
}

static void act(struct world *w, int hostile)
{
	actions++;
	switch (tl_rnd() % 18) {
	case 0:
		act_pd(w);
		break;
	case 1:
	case 2:
		act_cq(w);
		break;
	case 3:
	case 4:
	case 5:
		act_qp(w);
		break;
	case 6:
	case 7:
		act_mr(w);
		break;
	case 8:
		act_ah(w);
		break;
	case 9:
		act_map(w, hostile);
		break;
	case 10:
		act_srq(w);
		break;
	case 11:
		act_mw(w);
		break;
	default:
		act_post(w);
	}
}

static void world_open(struct world *w, const char *dev, int gid_index)
{
	memset(w, 0, sizeof(*w));
	w->ctx = tl_open_device(dev);
	w->gid_index = gid_index;
}

/* Destroys in dependency order; a failure here is a finding. */
static int world_close(struct world *w)
{
	int i, bad = 0;

	for (i = 0; i < NMAP; i++)
		if (w->map[i])
			munmap(w->map[i], w->map_len[i]);
	for (i = 0; i < NQP; i++)
		if (w->qp[i] && ibv_destroy_qp(w->qp[i]))
			bad |= 1;
	for (i = 0; i < NSRQ; i++)
		if (w->srq[i] && ibv_destroy_srq(w->srq[i]))
			bad |= 128;
	for (i = 0; i < NMW; i++)
		if (w->mw[i] && ibv_dealloc_mw(w->mw[i]))
			bad |= 256;
	for (i = 0; i < NAH; i++)
		if (w->ah[i] && ibv_destroy_ah(w->ah[i]))
			bad |= 2;
	for (i = 0; i < NMR; i++)
		if (w->mr[i] && ibv_dereg_mr(w->mr[i]))
			bad |= 4;
	for (i = 0; i < NCQ; i++)
		if (w->cq[i] && ibv_destroy_cq(w->cq[i]))
			bad |= 8;
	for (i = 0; i < NPD; i++)
		if (w->pd[i] && ibv_dealloc_pd(w->pd[i]))
			bad |= 16;
	if (ibv_close_device(w->ctx))
		bad |= 32;
	return bad;
}

/* Waits for a child, killing it after ms; a child that never ends hangs
 * the test, which the caller's timeout reports. */
static void reap(pid_t pid, int ms)
{
	int status;

	while (ms > 0 && waitpid(pid, &status, WNOHANG) == 0) {
		usleep(10000);
		ms -= 10;
	}
	if (ms <= 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	children++;
	if (WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL)
		child_crashes++;
}

static void child_run(struct world *w, const char *dev, int gid_index,
		      uint64_t seed, int own)
{
	int n = 50 + (int)(tl_rnd() % 400);

	*tl_rng() = seed | 1;
	keep_objects = !own;
	if (own)
		world_open(w, dev, gid_index);
	while (n--)
		act(w, 1);
	if (own)
		world_close(w);
	_exit(0);
}

/* A fresh context must still create and use every object type. */
static int fresh_context_works(const char *dev)
{
	struct ibv_context *ctx = tl_open_device(dev);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = pd ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	struct ibv_qp_init_attr init = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = cq ? ibv_create_qp(pd, &init) : NULL;
	struct ibv_mr *mr = pd ? ibv_reg_mr(pd, buf, PAGE,
					    IBV_ACCESS_LOCAL_WRITE) : NULL;
	int ok = pd && cq && qp && mr;

	if (mr)
		ok &= !ibv_dereg_mr(mr);
	if (qp)
		ok &= !ibv_destroy_qp(qp);
	if (cq)
		ok &= !ibv_destroy_cq(cq);
	if (pd)
		ok &= !ibv_dealloc_pd(pd);
	ok &= !ibv_close_device(ctx);
	return ok;
}

int main(int argc, char **argv)
{
	struct world w, raw;
	unsigned long long seed;
	int secs, gid_index, bad;
	time_t end;
	pid_t pid;

	if (argc != 5) {
		fprintf(stderr, "usage: verbs_fuzz DEV GID_INDEX SECONDS SEED\n");
		return 2;
	}
	gid_index = atoi(argv[2]);
	secs = atoi(argv[3]);
	seed = strtoull(argv[4], NULL, 0);
	printf("verbs_fuzz: seed %llu (replay: verbs_fuzz %s %s %s %llu)\n",
	       seed, argv[1], argv[2], argv[3], seed);
	fflush(stdout);
	*tl_rng() = seed | 1;
	signal(SIGSEGV, on_fault);
	signal(SIGBUS, on_fault);
	buf = fuzz_arena();
	scratch = aligned_alloc(PAGE, 64 * 1024);
	if (!scratch)
		tl_die("aligned_alloc");
	memset(buf, 0x5a, BUF_LEN);
	memset(scratch, 0, 64 * 1024);

	world_open(&w, argv[1], gid_index);
	world_open(&raw, argv[1], gid_index);
	end = time(NULL) + secs;
	while (time(NULL) < end) {
		switch (tl_rnd() % 64) {
		case 0:		/* kill: a child with its own context */
			pid = fork();
			if (pid == 0) {
				struct world cw;

				child_run(&cw, argv[1], gid_index, tl_rnd(), 1);
			}
			if (pid > 0)
				reap(pid, (int)(tl_rnd() % 300));
			break;
		case 1:		/* fork: the child uses the parent's objects */
			pid = fork();
			if (pid == 0)
				child_run(&w, argv[1], gid_index, tl_rnd(), 0);
			if (pid > 0)
				reap(pid, 20000);
			break;
		case 2:
		case 3:
			actions++;
			raw_write(raw.ctx->cmd_fd);
			break;
		case 4:
		case 5:
			actions++;
			raw_ioctl(raw.ctx->cmd_fd);
			break;
		default:
			act(&w, 0);
		}
	}
	bad = world_close(&w);
	/* The raw context may own objects libibverbs never heard of. */
	if (ibv_close_device(raw.ctx))
		bad |= 64;
	printf("verbs_fuzz: %lu actions, %lu succeeded, %lu children (%lu "
	       "died of a signal other than SIGKILL)\n", actions, successes,
	       children, child_crashes);
	tl_check(!bad, "the fuzzed context's objects are destroyed (%#x)", bad);
	tl_check(actions > 1000 && successes > 100,
		 "the run did something (%lu actions, %lu succeeded)",
		 actions, successes);
	tl_check(fresh_context_works(argv[1]),
		 "a fresh context creates and destroys a PD, CQ, QP and MR");
	return tl_exit_status();
}
