// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * uabi_probe DEV: speaks the uverbs write() ABI to DEV's character device
 * directly, bypassing the provider, and checks how the kernel answers
 * well-formed, older, newer and malformed sroce requests
 * (Documentation/abi.rst).
 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <linux/io_uring.h>
#include <unistd.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/sroce-abi.h>
#include "testlib.h"

static char uverbs_path[300];

static void find_uverbs(const char *dev)
{
	char path[300], name[64];
	struct dirent *d;
	DIR *dir;
	FILE *f;

	dir = opendir("/sys/class/infiniband_verbs");
	if (!dir)
		tl_die("opendir /sys/class/infiniband_verbs");
	while ((d = readdir(dir))) {
		if (strncmp(d->d_name, "uverbs", 6))
			continue;
		snprintf(path, sizeof(path),
			 "/sys/class/infiniband_verbs/%s/ibdev", d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%63s", name) == 1 && !strcmp(name, dev))
			snprintf(uverbs_path, sizeof(uverbs_path),
				 "/dev/infiniband/%s", d->d_name);
		fclose(f);
	}
	closedir(dir);
	if (!uverbs_path[0]) {
		fprintf(stderr, "fatal: no uverbs device for %s\n", dev);
		exit(2);
	}
}

/* A write() command: header, core request, then driver bytes. */
struct cmd_buf {
	struct ib_uverbs_cmd_hdr hdr;
	uint8_t payload[256];
};

static int uverbs_cmd(int fd, uint32_t command, const void *core,
		      size_t core_len, const void *drv, size_t drv_len,
		      size_t out_len)
{
	struct cmd_buf cmd = {};
	size_t len = sizeof(cmd.hdr) + core_len + drv_len;

	cmd.hdr.command = command;
	cmd.hdr.in_words = len / 4;
	cmd.hdr.out_words = out_len / 4;
	memcpy(cmd.payload, core, core_len);
	memcpy(cmd.payload + core_len, drv, drv_len);
	if (write(fd, &cmd, len) == (ssize_t)len)
		return 0;
	return errno;
}

struct ctx_resp {
	struct ib_uverbs_get_context_resp core;
	struct sroce_alloc_ucontext_resp drv;
	uint8_t guard[16];
};

/*
 * Opens a fresh uverbs file and asks for a context with the given driver
 * request bytes and driver response space. Returns 0 or the errno; the
 * file stays open in *fd_out on success.
 */
static int get_context(const void *drv, size_t drv_len, size_t drv_out,
		       struct ctx_resp *resp, int *fd_out)
{
	struct ib_uverbs_get_context core = {};
	int fd, err;

	memset(resp, 0xa5, sizeof(*resp));
	fd = open(uverbs_path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		tl_die(uverbs_path);
	core.response = (uintptr_t)resp;
	err = uverbs_cmd(fd, IB_USER_VERBS_CMD_GET_CONTEXT, &core,
			 sizeof(core), drv, drv_len,
			 sizeof(resp->core) + drv_out);
	if (err) {
		close(fd);
		return err;
	}
	close(resp->core.async_fd);
	*fd_out = fd;
	return 0;
}

static int try_context(const void *drv, size_t drv_len, size_t drv_out,
		       struct ctx_resp *resp)
{
	int fd, err;

	err = get_context(drv, drv_len, drv_out, resp, &fd);
	if (!err)
		close(fd);
	return err;
}

static void ucontext_cases(void)
{
	struct sroce_alloc_ucontext_req req = {};
	uint8_t longreq[sizeof(req) + 24] = {};
	struct ctx_resp resp;
	uint8_t guard[16];
	int err;

	memset(guard, 0xa5, sizeof(guard));

	err = try_context(&req, sizeof(req), sizeof(resp.drv), &resp);
	tl_check(!err, "ucontext: current request accepted (%d)", err);
	tl_check(resp.drv.abi_version == SROCE_UVERBS_ABI_VERSION &&
		 resp.drv.comp_mask == 0,
		 "ucontext: response carries ABI %u, comp_mask 0x%x",
		 resp.drv.abi_version, resp.drv.comp_mask);
	tl_check(!memcmp(resp.guard, guard, sizeof(guard)),
		 "ucontext: nothing written past the response");

	err = try_context(NULL, 0, sizeof(resp.drv), &resp);
	tl_check(!err, "ucontext: empty (oldest) request accepted (%d)", err);

	err = try_context(&req, 4, sizeof(resp.drv), &resp);
	tl_check(!err, "ucontext: shorter (older) request accepted (%d)", err);

	err = try_context(&req, sizeof(req), 8, &resp);
	tl_check(!err && resp.drv.abi_version == SROCE_UVERBS_ABI_VERSION &&
		 resp.drv.kernel_caps == 0xa5a5a5a5a5a5a5a5ULL,
		 "ucontext: shorter (older) response space gets a truncated response (%d)",
		 err);

	req.provider_caps = ~0ULL;
	err = try_context(&req, sizeof(req), sizeof(resp.drv), &resp);
	tl_check(!err, "ucontext: unknown provider caps accepted (%d)", err);
	req.provider_caps = 0;

	req.comp_mask = 1;
	err = try_context(&req, sizeof(req), sizeof(resp.drv), &resp);
	tl_check(err == EINVAL, "ucontext: unknown comp_mask bit -> EINVAL (%d)",
		 err);
	req.comp_mask = 0x80000000;
	err = try_context(&req, sizeof(req), sizeof(resp.drv), &resp);
	tl_check(err == EINVAL, "ucontext: garbage comp_mask -> EINVAL (%d)",
		 err);
	req.comp_mask = 0;

	req.reserved_20[3] = 1;
	err = try_context(&req, sizeof(req), sizeof(resp.drv), &resp);
	tl_check(err == EINVAL, "ucontext: non-zero reserved -> EINVAL (%d)",
		 err);
	req.reserved_20[3] = 0;

	err = try_context(longreq, sizeof(longreq), sizeof(resp.drv), &resp);
	tl_check(!err, "ucontext: longer (newer) request with zero tail accepted (%d)",
		 err);
	longreq[sizeof(longreq) - 1] = 1;
	err = try_context(longreq, sizeof(longreq), sizeof(resp.drv), &resp);
	tl_check(err == EINVAL,
		 "ucontext: longer request with non-zero tail -> EINVAL (%d)",
		 err);
}

struct pd_resp {
	struct ib_uverbs_alloc_pd_resp core;
	struct sroce_alloc_pd_resp drv;
	uint8_t guard[16];
};

static int alloc_pd(int fd, const void *drv, size_t drv_len, size_t drv_out,
		    struct pd_resp *resp)
{
	struct ib_uverbs_alloc_pd core = {};

	memset(resp, 0xa5, sizeof(*resp));
	core.response = (uintptr_t)resp;
	return uverbs_cmd(fd, IB_USER_VERBS_CMD_ALLOC_PD, &core, sizeof(core),
			  drv, drv_len, sizeof(resp->core) + drv_out);
}

static void pd_cases(void)
{
	struct sroce_alloc_ucontext_req req = {};
	struct pd_resp a, b, c;
	struct ctx_resp resp;
	uint8_t junk[8] = {};
	int fd, err;

	err = get_context(&req, sizeof(req), sizeof(resp.drv), &resp, &fd);
	if (err) {
		tl_check(0, "pd: context for PD cases (%d)", err);
		return;
	}

	err = alloc_pd(fd, NULL, 0, sizeof(a.drv), &a);
	tl_check(!err && a.drv.comp_mask == 0 && a.drv.pdn >= 1,
		 "pd: allocated, pdn %u (%d)", a.drv.pdn, err);
	err = alloc_pd(fd, NULL, 0, sizeof(b.drv), &b);
	tl_check(!err && b.drv.pdn != a.drv.pdn,
		 "pd: second PD has its own pdn %u (%d)", b.drv.pdn, err);
	err = alloc_pd(fd, junk, sizeof(junk), sizeof(c.drv), &c);
	tl_check(!err, "pd: all-zero driver request accepted (%d)", err);
	junk[5] = 0x42;
	err = alloc_pd(fd, junk, sizeof(junk), sizeof(c.drv), &c);
	tl_check(err == EINVAL, "pd: non-zero driver request -> EINVAL (%d)",
		 err);
	err = alloc_pd(fd, NULL, 0, 0, &c);
	tl_check(!err && c.drv.pdn == 0xa5a5a5a5,
		 "pd: no response space (older provider) accepted, nothing written (%d)",
		 err);
	close(fd);
}

struct cq_ex_resp {
	struct ib_uverbs_ex_create_cq_resp core;
	struct sroce_create_cq_resp drv;
	uint8_t guard[16];
};

/*
 * An extended create_cq (flags, no driver request) with drv_out bytes of
 * driver response space; then the CQ is destroyed. Returns 0 or the errno.
 */
static int cq_ex_once(int fd, uint32_t flags, size_t drv_out,
		      struct cq_ex_resp *resp)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_ex_cmd_hdr ex;
		struct ib_uverbs_ex_create_cq cmd;
	} c = {};
	struct ib_uverbs_destroy_cq dcq = {};
	struct ib_uverbs_destroy_cq_resp dresp;

	memset(resp, 0xa5, sizeof(*resp));
	c.hdr.command = IB_USER_VERBS_CMD_FLAG_EXTENDED |
			IB_USER_VERBS_EX_CMD_CREATE_CQ;
	c.hdr.in_words = sizeof(c.cmd) / 8;
	c.hdr.out_words = sizeof(resp->core) / 8;
	c.ex.response = (uintptr_t)resp;
	c.ex.provider_out_words = drv_out / 8;
	c.cmd.cqe = 16;
	c.cmd.comp_channel = -1;
	c.cmd.flags = flags;
	if (write(fd, &c, sizeof(c)) != (ssize_t)sizeof(c))
		return errno;
	dcq.response = (uintptr_t)&dresp;
	dcq.cq_handle = resp->core.base.cq_handle;
	if (uverbs_cmd(fd, IB_USER_VERBS_CMD_DESTROY_CQ, &dcq, sizeof(dcq),
		       NULL, 0, sizeof(dresp)))
		tl_die("destroy_cq");
	return 0;
}

/*
 * The CQ response's slot size (Documentation/abi.rst): 32-byte slots, or
 * 64 with completion timestamps, which need the whole response.
 */
static void cq_cases(void)
{
	struct sroce_alloc_ucontext_req req = {};
	struct ctx_resp resp;
	struct cq_ex_resp cq;
	size_t older = offsetof(struct sroce_create_cq_resp, log_cqe_size);
	int fd, err;

	err = get_context(&req, sizeof(req), sizeof(resp.drv), &resp, &fd);
	if (err) {
		tl_check(0, "cq: context for CQ cases (%d)", err);
		return;
	}
	err = cq_ex_once(fd, 0, sizeof(cq.drv), &cq);
	tl_check(!err && (cq.drv.comp_mask & SROCE_CREATE_CQ_RESP_CQE_SIZE) &&
		 cq.drv.log_cqe_size == 5 && cq.guard[0] == 0xa5,
		 "cq: 32-byte slots said in log_cqe_size, nothing written past the response (%d, %u)",
		 err, cq.drv.log_cqe_size);
	err = cq_ex_once(fd, 0, older, &cq);
	tl_check(!err && cq.drv.log_slots == 5 &&
		 cq.drv.log_cqe_size == 0xa5a5a5a5,
		 "cq: an older provider's shorter response space accepted, nothing written past it (%d)",
		 err);
	err = cq_ex_once(fd, IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION,
			 sizeof(cq.drv), &cq);
	tl_check(!err && (cq.drv.comp_mask & SROCE_CREATE_CQ_RESP_CQE_SIZE) &&
		 cq.drv.log_cqe_size == 6,
		 "cq: with timestamps, 64-byte slots (%d, %u)", err,
		 cq.drv.log_cqe_size);
	err = cq_ex_once(fd, IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION, older,
			 &cq);
	tl_check(err == EINVAL,
		 "cq: with timestamps, a response without log_cqe_size -> EINVAL (%d)",
		 err);
	close(fd);
}

/*
 * Writes "one" to efd n times from io_uring's worker threads (IOSQE_ASYNC),
 * which are not user threads returning to user space: the kick must take
 * the fallback and wake the engine worker. Returns how many writes
 * completed with 8 bytes, or -errno if io_uring cannot be set up.
 */
static int uring_writes(int efd, int n)
{
	struct io_uring_params p = {};
	unsigned int *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
	uint64_t one = 1;
	void *sq, *cq;
	int ring, i, done = 0;
	unsigned int t;

	ring = syscall(__NR_io_uring_setup, 4, &p);
	if (ring < 0)
		return -errno;
	sq = mmap(NULL, p.sq_off.array + p.sq_entries * sizeof(unsigned int),
		  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring,
		  IORING_OFF_SQ_RING);
	cq = mmap(NULL, p.cq_off.cqes + p.cq_entries * sizeof(*cqes),
		  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring,
		  IORING_OFF_CQ_RING);
	sqes = mmap(NULL, p.sq_entries * sizeof(*sqes), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED) {
		done = -ENOMEM;
		goto out;
	}
	sq_tail = (unsigned int *)((char *)sq + p.sq_off.tail);
	sq_mask = (unsigned int *)((char *)sq + p.sq_off.ring_mask);
	sq_array = (unsigned int *)((char *)sq + p.sq_off.array);
	cq_head = (unsigned int *)((char *)cq + p.cq_off.head);
	cq_tail = (unsigned int *)((char *)cq + p.cq_off.tail);
	cq_mask = (unsigned int *)((char *)cq + p.cq_off.ring_mask);
	cqes = (struct io_uring_cqe *)((char *)cq + p.cq_off.cqes);

	for (i = 0; i < n; i++) {
		t = *sq_tail;
		memset(&sqes[0], 0, sizeof(sqes[0]));
		sqes[0].opcode = IORING_OP_WRITE;
		sqes[0].flags = IOSQE_ASYNC;
		sqes[0].fd = efd;
		sqes[0].addr = (uintptr_t)&one;
		sqes[0].len = sizeof(one);
		sqes[0].off = -1;
		sq_array[t & *sq_mask] = 0;
		__atomic_store_n(sq_tail, t + 1, __ATOMIC_RELEASE);
		if (syscall(__NR_io_uring_enter, ring, 1, 1,
			    IORING_ENTER_GETEVENTS, NULL, 0) < 0)
			break;
		t = *cq_head;
		if (t == __atomic_load_n(cq_tail, __ATOMIC_ACQUIRE))
			break;
		if (cqes[t & *cq_mask].res == (int)sizeof(one))
			done++;
		__atomic_store_n(cq_head, t + 1, __ATOMIC_RELEASE);
	}
out:
	if (sqes != MAP_FAILED)
		munmap(sqes, p.sq_entries * sizeof(*sqes));
	if (cq != MAP_FAILED)
		munmap(cq, p.cq_off.cqes + p.cq_entries * sizeof(*cqes));
	if (sq != MAP_FAILED)
		munmap(sq, p.sq_off.array + p.sq_entries * sizeof(unsigned int));
	close(ring);
	return done;
}

struct cq_resp {
	struct ib_uverbs_create_cq_resp core;
	struct sroce_create_cq_resp drv;
};

struct qp_resp {
	struct ib_uverbs_create_qp_resp core;
	struct sroce_create_qp_resp drv;
	uint8_t guard[16];
};

/* An RC QP on the context's PD and CQ; 0 or the errno. */
static int create_qp(int fd, uint32_t pd, uint32_t cq, const void *drv,
		     size_t drv_len, struct qp_resp *resp)
{
	struct ib_uverbs_create_qp core = {
		.response = (uintptr_t)resp,
		.pd_handle = pd,
		.send_cq_handle = cq,
		.recv_cq_handle = cq,
		.max_send_wr = 4,
		.max_recv_wr = 4,
		.max_send_sge = 1,
		.max_recv_sge = 1,
		.qp_type = IB_UVERBS_QPT_RC,
	};

	memset(resp, 0xa5, sizeof(*resp));
	return uverbs_cmd(fd, IB_USER_VERBS_CMD_CREATE_QP, &core, sizeof(core),
			  drv, drv_len,
			  sizeof(resp->core) + sizeof(resp->drv));
}

static int destroy_qp(int fd, uint32_t handle)
{
	struct ib_uverbs_destroy_qp_resp resp;
	struct ib_uverbs_destroy_qp core = {
		.response = (uintptr_t)&resp,
		.qp_handle = handle,
	};

	return uverbs_cmd(fd, IB_USER_VERBS_CMD_DESTROY_QP, &core, sizeof(core),
			  NULL, 0, sizeof(resp));
}

/*
 * The create_qp request: the kick eventfd (Documentation/abi.rst). The
 * kernel must take an eventfd, refuse anything else, and hold its own
 * reference: the descriptor may be closed, and the eventfd outlive the QP.
 */
static void qp_cases(void)
{
	struct sroce_alloc_ucontext_req req = {};
	struct sroce_create_qp_req qreq = {};
	struct ib_uverbs_create_cq ccq = {};
	struct ctx_resp resp;
	struct pd_resp pd;
	struct cq_resp cq;
	struct qp_resp qp;
	uint64_t one = 1, count;
	int fd, err, efd, nullfd, i, n;
	long wakes;

	err = get_context(&req, sizeof(req), sizeof(resp.drv), &resp, &fd);
	if (err) {
		tl_check(0, "qp: context for QP cases (%d)", err);
		return;
	}
	tl_check(resp.drv.kernel_caps & SROCE_UCONTEXT_CAP_KICK_EVENTFD,
		 "qp: the kernel offers the kick eventfd (caps 0x%llx)",
		 (unsigned long long)resp.drv.kernel_caps);
	err = alloc_pd(fd, NULL, 0, sizeof(pd.drv), &pd);
	ccq.response = (uintptr_t)&cq;
	ccq.cqe = 16;
	ccq.comp_channel = -1;
	err = err ?: uverbs_cmd(fd, IB_USER_VERBS_CMD_CREATE_CQ, &ccq,
				sizeof(ccq), NULL, 0, sizeof(cq));
	if (err) {
		tl_check(0, "qp: PD and CQ for QP cases (%d)", err);
		close(fd);
		return;
	}

	err = create_qp(fd, pd.core.pd_handle, cq.core.cq_handle, NULL, 0, &qp);
	tl_check(!err && qp.drv.qpn > 1,
		 "qp: no driver request (older provider) accepted (%d)", err);
	if (!err)
		destroy_qp(fd, qp.core.qp_handle);

	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	nullfd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (efd < 0 || nullfd < 0)
		tl_die("eventfd or /dev/null");

	qreq.comp_mask = SROCE_CREATE_QP_REQ_KICK_FD;
	qreq.kick_fd = nullfd;
	err = create_qp(fd, pd.core.pd_handle, cq.core.cq_handle, &qreq,
			sizeof(qreq), &qp);
	tl_check(err == EINVAL, "qp: a kick fd that is no eventfd -> EINVAL (%d)",
		 err);
	qreq.kick_fd = -1;
	err = create_qp(fd, pd.core.pd_handle, cq.core.cq_handle, &qreq,
			sizeof(qreq), &qp);
	tl_check(err == EBADF, "qp: kick fd -1 -> EBADF (%d)", err);
	qreq.kick_fd = 1000;	/* not open */
	err = create_qp(fd, pd.core.pd_handle, cq.core.cq_handle, &qreq,
			sizeof(qreq), &qp);
	tl_check(err == EBADF, "qp: a closed kick fd -> EBADF (%d)", err);
	qreq.comp_mask = 0;
	qreq.kick_fd = efd;
	err = create_qp(fd, pd.core.pd_handle, cq.core.cq_handle, &qreq,
			sizeof(qreq), &qp);
	tl_check(err == EINVAL,
		 "qp: a kick fd without its comp_mask bit -> EINVAL (%d)", err);
	qreq.comp_mask = SROCE_CREATE_QP_REQ_KICK_FD | 2;
	err = create_qp(fd, pd.core.pd_handle, cq.core.cq_handle, &qreq,
			sizeof(qreq), &qp);
	tl_check(err == EINVAL, "qp: unknown comp_mask bit -> EINVAL (%d)", err);

	qreq.comp_mask = SROCE_CREATE_QP_REQ_KICK_FD;
	err = create_qp(fd, pd.core.pd_handle, cq.core.cq_handle, &qreq,
			sizeof(qreq), &qp);
	tl_check(!err && qp.drv.qpn > 1, "qp: an eventfd kick fd accepted (%d)",
		 err);
	/* A kick is a doorbell: the count never builds up, writes never block. */
	for (i = 0; i < 1000 && !err; i++)
		if (write(efd, &one, sizeof(one)) != sizeof(one))
			err = errno;
	tl_check(!err, "qp: 1000 kicks through the eventfd (%d)", err);
	err = read(efd, &count, sizeof(count)) < 0 ? errno : 0;
	tl_check(err == EAGAIN,
		 "qp: the kernel consumed the kick count (errno %d)", err);
	wakes = tl_hw_counter("kick_wakes");
	n = uring_writes(efd, 20);
	wakes = tl_hw_counter("kick_wakes") - wakes;
	tl_check(n == 20 && wakes == 20,
		 "qp: 20 kicks from io_uring workers each woke the worker (%d writes, %ld wakes)",
		 n, wakes);
	err = 0;
	if (!err) {
		err = destroy_qp(fd, qp.core.qp_handle);
		tl_check(!err, "qp: QP with a kick fd destroyed (%d)", err);
	}
	/* The QP is gone: the eventfd is the caller's alone again. */
	err = write(efd, &one, sizeof(one)) == sizeof(one) ? 0 : errno;
	tl_check(!err && read(efd, &count, sizeof(count)) == sizeof(count) &&
		 count == 1,
		 "qp: after destroy, kicks reach only the eventfd (%d)", err);

	/* The kernel holds its own reference: close the descriptor first. */
	err = create_qp(fd, pd.core.pd_handle, cq.core.cq_handle, &qreq,
			sizeof(qreq), &qp);
	tl_check(!err, "qp: second QP with the kick fd (%d)", err);
	close(efd);
	close(nullfd);
	/* Closing the context destroys the QP with its eventfd reference. */
	close(fd);
}

static volatile int hammer_stop;

static void *kick_hammer(void *arg)
{
	uint64_t one = 1;
	int efd = *(int *)arg;

	while (!hammer_stop)
		if (write(efd, &one, sizeof(one)) != sizeof(one))
			break;
	return NULL;
}

/*
 * Kicks racing with create and destroy: a thread of this process and a
 * child process (whose kicks run the engine in its own context) write the
 * eventfd without pause while QPs that use it come and go, and the last
 * one goes with its context. The kernel log must stay clean (vm-run) and
 * no object may outlive the file (t_verbs_uabi).
 */
static void kick_race_cases(void)
{
	struct sroce_alloc_ucontext_req req = {};
	struct sroce_create_qp_req qreq = {};
	struct ib_uverbs_create_cq ccq = {};
	int fd, err, efd, i, created = 0, destroyed = 0;
	struct ctx_resp resp;
	struct pd_resp pd;
	struct cq_resp cq;
	struct qp_resp qp;
	pthread_t hammer;
	uint64_t one = 1;
	pid_t child;

	err = get_context(&req, sizeof(req), sizeof(resp.drv), &resp, &fd);
	err = err ?: alloc_pd(fd, NULL, 0, sizeof(pd.drv), &pd);
	ccq.response = (uintptr_t)&cq;
	ccq.cqe = 16;
	ccq.comp_channel = -1;
	err = err ?: uverbs_cmd(fd, IB_USER_VERBS_CMD_CREATE_CQ, &ccq,
				sizeof(ccq), NULL, 0, sizeof(cq));
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (err || efd < 0) {
		tl_check(0, "kick race: context, PD, CQ and eventfd (%d)", err);
		return;
	}
	child = fork();
	if (child == 0) {
		for (;;)
			if (write(efd, &one, sizeof(one)) != sizeof(one))
				_exit(1);
	}
	if (pthread_create(&hammer, NULL, kick_hammer, &efd))
		tl_die("pthread_create");
	qreq.comp_mask = SROCE_CREATE_QP_REQ_KICK_FD;
	qreq.kick_fd = efd;
	for (i = 0; i < 300; i++) {
		if (create_qp(fd, pd.core.pd_handle, cq.core.cq_handle, &qreq,
			      sizeof(qreq), &qp))
			continue;
		created++;
		if (i < 299 && !destroy_qp(fd, qp.core.qp_handle))
			destroyed++;
	}
	/* The last QP goes with the context, kicks still coming. */
	close(fd);
	hammer_stop = 1;
	pthread_join(hammer, NULL);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	close(efd);
	tl_check(created == 300 && destroyed == 299,
		 "kick race: 300 QPs created, 299 destroyed under kicks (%d, %d)",
		 created, destroyed);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: uabi_probe DEV\n");
		return 2;
	}
	find_uverbs(argv[1]);
	ucontext_cases();
	pd_cases();
	cq_cases();
	qp_cases();
	kick_race_cases();
	return tl_exit_status();
}
