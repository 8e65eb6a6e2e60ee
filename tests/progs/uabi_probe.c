// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * uabi_probe DEV: speaks the uverbs write() ABI to DEV's character device
 * directly, bypassing the provider, and checks how the kernel answers
 * well-formed, older, newer and malformed sroce requests
 * (Documentation/abi.rst).
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
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

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: uabi_probe DEV\n");
		return 2;
	}
	find_uverbs(argv[1]);
	ucontext_cases();
	pd_cases();
	return tl_exit_status();
}
