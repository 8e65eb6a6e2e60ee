// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fault_walk DEV GID_INDEX: systematic fault injection into every verb.
 *
 * Needs a kernel with CONFIG_FAULT_INJECTION, FAILSLAB and FAIL_PAGE_ALLOC
 * (the debug lab kernel) and failslab/fail_page_alloc told not to spare
 * sleeping allocations (tests/vm/dbg_fault_inject.sh sets that up).
 *
 * For each operation (open a context, alloc PD, create CQ, create RC and UD
 * QPs, reg MR, create AH, connect a QP to RTS, resize CQ) and for
 * N = 1, 2, ...: the operation's prerequisites are made without faults,
 * /proc/thread-self/fail-nth makes the Nth allocation (slab or page) of the
 * operation fail, the operation runs, and everything is torn down again
 * without faults, each round in a child process. Each run must either fail
 * with an error or succeed (the failure absorbed), and once the child is
 * gone the driver's object counts (/sys/kernel/debug/sroce/objects) must
 * be back at the baseline. The walk of an operation ends when N is past
 * its last allocation (an AH, made in userspace, may have none). Prints
 * one "ok"/"not ok" line per operation with the number of fault points.
 */
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
#include "testlib.h"

#define OBJECTS "/sys/kernel/debug/sroce/objects"
#define MAX_POINTS 2000

enum op {
	OP_OPEN, OP_PD, OP_CQ, OP_QP_RC, OP_QP_UD, OP_MR, OP_AH, OP_CONNECT,
	OP_RESIZE_CQ, NUM_OPS
};

static const char *const op_names[NUM_OPS] = {
	"open a context", "alloc a PD", "create a CQ", "create an RC QP",
	"create a UD QP", "register an MR", "create an AH",
	"connect an RC QP to RTS", "resize a CQ",
};

struct state {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_ah *ah;
};

static const char *dev_name;
static int gid_index;
static union ibv_gid gid;
static char *buf;
static int nth_fd;

static void read_objects(char *out, size_t len)
{
	int fd = open(OBJECTS, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		tl_die(OBJECTS);
	n = read(fd, out, len - 1);
	close(fd);
	out[n > 0 ? n : 0] = 0;
}

static void set_nth(unsigned int n)
{
	char s[16];
	int len = snprintf(s, sizeof(s), "%u", n);

	if (pwrite(nth_fd, s, len, 0) != len)
		tl_die("fail-nth");
}

/* 1 when the fault armed by set_nth() was injected. */
static int injected(void)
{
	char s[16] = "";

	if (pread(nth_fd, s, sizeof(s) - 1, 0) <= 0)
		tl_die("fail-nth read");
	return atoi(s) == 0;
}

static struct ibv_qp *make_qp(struct state *s, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr a = {
		.send_cq = s->cq, .recv_cq = s->cq, .qp_type = type,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 2, .max_recv_sge = 2,
			 .max_inline_data = 64 },
	};

	return ibv_create_qp(s->pd, &a);
}

static struct ibv_ah *make_ah(struct state *s)
{
	struct ibv_ah_attr a = {};

	tl_set_av(&a, &gid, gid_index);
	return ibv_create_ah(s->pd, &a);
}

/* Makes what op needs, without faults; 0 on success. */
static int prepare(struct state *s, enum op op)
{
	memset(s, 0, sizeof(*s));
	if (op == OP_OPEN)
		return 0;
	s->ctx = tl_open_device(dev_name);
	if (op == OP_PD)
		return 0;
	s->pd = ibv_alloc_pd(s->ctx);
	if (!s->pd)
		return -1;
	if (op == OP_CQ)	/* run() makes the CQ */
		return 0;
	s->cq = ibv_create_cq(s->ctx, 64, NULL, NULL, 0);
	if (!s->cq)
		return -1;
	if (op == OP_CONNECT && !(s->qp = make_qp(s, IBV_QPT_RC)))
		return -1;
	return 0;
}

/* Runs op (faults armed); 0 when it succeeded. */
static int run(struct state *s, enum op op)
{
	struct tl_rc_conn c = {
		.dgid = &gid, .sgid_index = gid_index, .sq_psn = 1,
		.rq_psn = 1, .access = TL_REMOTE_ALL, .timeout = 14,
		.retry_cnt = 7, .rnr_retry = 7, .min_rnr_timer = 1,
		.rd_atomic = 4,
	};
	struct ibv_device **list;
	int i, n;

	switch (op) {
	case OP_OPEN:
		list = ibv_get_device_list(&n);
		for (i = 0; list && i < n; i++)
			if (!strcmp(ibv_get_device_name(list[i]), dev_name))
				s->ctx = ibv_open_device(list[i]);
		if (list)
			ibv_free_device_list(list);
		return s->ctx ? 0 : -1;
	case OP_PD:
		return (s->pd = ibv_alloc_pd(s->ctx)) ? 0 : -1;
	case OP_CQ:
		return (s->cq = ibv_create_cq(s->ctx, 64, NULL, NULL, 0)) ?
			0 : -1;
	case OP_QP_RC:
		return (s->qp = make_qp(s, IBV_QPT_RC)) ? 0 : -1;
	case OP_QP_UD:
		return (s->qp = make_qp(s, IBV_QPT_UD)) ? 0 : -1;
	case OP_MR:
		return (s->mr = ibv_reg_mr(s->pd, buf, 1 << 20, TL_REMOTE_ALL |
					   IBV_ACCESS_LOCAL_WRITE)) ? 0 : -1;
	case OP_AH:
		return (s->ah = make_ah(s)) ? 0 : -1;
	case OP_CONNECT:
		c.dest_qpn = s->qp->qp_num;
		return tl_connect_rc(s->qp, &c);
	case OP_RESIZE_CQ:
		return ibv_resize_cq(s->cq, 1000);
	default:
		return -1;
	}
}

/* Tears down without faults; 0 when every destroy succeeded. */
static int teardown(struct state *s)
{
	int err = 0;

	if (s->ah)
		err |= ibv_destroy_ah(s->ah);
	if (s->mr)
		err |= ibv_dereg_mr(s->mr);
	if (s->qp)
		err |= ibv_destroy_qp(s->qp);
	if (s->cq)
		err |= ibv_destroy_cq(s->cq);
	if (s->pd)
		err |= ibv_dealloc_pd(s->pd);
	if (s->ctx)
		err |= ibv_close_device(s->ctx);
	return err;
}

/* Whether the driver's object counts are back at the baseline. */
static int objects_back(const char *baseline)
{
	char now[512];
	int i;

	for (i = 0; i < 50; i++) {
		read_objects(now, sizeof(now));
		if (!strcmp(now, baseline))
			return 1;
		usleep(100000);
	}
	fprintf(stderr, "objects left:\n%s\n", now);
	return 0;
}

enum outcome { PAST_END, FAILED, ABSORBED, BROKEN };

/*
 * One round in a child process, so that whatever the injected fault left
 * in this process (a mapping the provider could not unmap, say) ends with
 * it: what must not outlive the process is a kernel object.
 */
static enum outcome one_round(enum op op, unsigned int n)
{
	int pfd[2], status;
	char result = BROKEN;
	struct state s;
	pid_t pid;

	if (pipe(pfd))
		tl_die("pipe");
	pid = fork();
	if (pid < 0)
		tl_die("fork");
	if (pid == 0) {
		close(pfd[0]);
		nth_fd = open("/proc/thread-self/fail-nth", O_RDWR);
		if (nth_fd < 0 || prepare(&s, op))
			_exit(1);
		set_nth(n);
		result = run(&s, op) ? FAILED : ABSORBED;
		if (!injected()) {
			set_nth(0);
			result = result == FAILED ? BROKEN : PAST_END;
		}
		if (write(pfd[1], &result, 1) != 1)
			_exit(1);
		teardown(&s);
		_exit(0);
	}
	close(pfd[1]);
	if (read(pfd[0], &result, 1) != 1)
		result = BROKEN;
	close(pfd[0]);
	waitpid(pid, &status, 0);
	return (enum outcome)result;
}

static void walk(enum op op, const char *baseline)
{
	unsigned int n, failed = 0, absorbed = 0;
	enum outcome o = BROKEN;
	int bad = 0;

	for (n = 1; n <= MAX_POINTS; n++) {
		o = one_round(op, n);
		if (o == FAILED)
			failed++;
		else if (o == ABSORBED)
			absorbed++;
		if (!objects_back(baseline)) {
			fprintf(stderr, "%s, fault %u\n", op_names[op], n);
			bad = 1;
			break;
		}
		if (o == PAST_END || o == BROKEN)
			break;
	}
	if (o == BROKEN)
		fprintf(stderr, "%s, fault %u: the round broke (or the verb "
			"fails without a fault)\n", op_names[op], n);
	tl_check(!bad && o == PAST_END,
		 "%s: %u fault points, %u failed cleanly, %u absorbed, no "
		 "object outlives the process", op_names[op], n - 1, failed,
		 absorbed);
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	char baseline[512];
	int op;

	if (argc != 3) {
		fprintf(stderr, "usage: fault_walk DEV GID_INDEX\n");
		return 2;
	}
	dev_name = argv[1];
	gid_index = atoi(argv[2]);
	ctx = tl_open_device(dev_name);
	if (ibv_query_gid(ctx, 1, gid_index, &gid))
		tl_die("ibv_query_gid");
	ibv_close_device(ctx);
	buf = aligned_alloc(4096, 1 << 20);
	if (!buf)
		tl_die("aligned_alloc");
	memset(buf, 1, 1 << 20);
	if (access("/proc/thread-self/fail-nth", W_OK))
		tl_die("/proc/thread-self/fail-nth (no CONFIG_FAULT_INJECTION?)");
	read_objects(baseline, sizeof(baseline));
	for (op = 0; op < NUM_OPS; op++)
		walk(op, baseline);
	return tl_exit_status();
}
