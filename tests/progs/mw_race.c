// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mw_race DEV GID_INDEX SECONDS: a type 1 window rebound between two MRs
 * while a peer WRITEs and READs through it (security.rst, "keys at every
 * copy").
 *
 * One thread binds the window to all of MR A, publishes that key, waits
 * until the other has posted its next access, then, 0 to 255 us later,
 * binds it to all of MR B (a new key, the old one dead), over and over,
 * on a QP of its own. The other WRITEs or READs up to 8 KiB ending at A's
 * last byte with the last key published, on another QP of the PD. Every
 * access either lands in A while the key held (the bytes checked) or fails
 * with a remote access error; nothing may ever reach B, the unregistered
 * guard pages around both, or A outside the range. A translation through
 * the other binding (the range checked against A, the address translated
 * through B) is what this catches: on the old module it wrote through a
 * pointer read past B's page list, which KASAN (make check-debug) reports.
 * Both outcomes must be seen, so the race was run, not skipped.
 */
#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "testlib.h"

#define PAGE 4096
#define B_OFF (1 * PAGE)	/* guard page, then B (one page) */
#define B_LEN PAGE
#define A_OFF (3 * PAGE)	/* guard page, then A (four pages) */
#define A_LEN (4 * PAGE)
#define ARENA (A_OFF + A_LEN + PAGE)	/* and a guard page after A */
#define MAX_IO (2 * PAGE)

#define GUARD_BYTE 0xee
#define B_BYTE 0xbb
#define A_BYTE 0xaa

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static union ibv_gid gid;
static int gid_index;
static uint8_t *arena, *local;
static struct ibv_mr *mr_a, *mr_b, *local_mr;
static struct ibv_mw *mw;
static atomic_uint a_key;	/* the last key the window had over A */
static atomic_bool stop;
static atomic_ulong accesses_posted;
static unsigned long binds;
static int binder_error;

static int make_pair(struct tl_rc_pair *p)
{
	return tl_rc_pair_create(p, ctx, pd, pd, 0, &gid, gid_index);
}

static int bind_to(struct tl_rc_pair *p, struct ibv_mr *m, uint32_t len)
{
	struct ibv_mw_bind b = {
		.wr_id = 1, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = m, .addr = (uintptr_t)m->addr,
			       .length = len,
			       .mw_access_flags = IBV_ACCESS_REMOTE_WRITE |
						  IBV_ACCESS_REMOTE_READ },
	};
	struct ibv_wc wc;

	if (ibv_bind_mw(p->qp[0], mw, &b) || !tl_wait_wc(p->cq[0], &wc, 10))
		return -1;
	return wc.status == IBV_WC_SUCCESS ? 0 : (int)wc.status;
}

static void *binder(void *arg)
{
	uint64_t seed = 0x9e3779b97f4a7c15ULL;	/* the binder's own delays */
	unsigned long posted;
	struct tl_rc_pair p;

	(void)arg;
	if (make_pair(&p)) {
		binder_error = -1;
		return NULL;
	}
	while (!atomic_load(&stop)) {
		if (bind_to(&p, mr_a, A_LEN)) {
			binder_error = 1;
			break;
		}
		atomic_store(&a_key, mw->rkey);
		/*
		 * Once the other thread has posted its next access with this
		 * key, somewhere in its flight (0 to 255 us on), rebind.
		 */
		posted = atomic_load(&accesses_posted);
		while (atomic_load(&accesses_posted) == posted &&
		       !atomic_load(&stop))
			;
		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		usleep(seed % 256);
		if (bind_to(&p, mr_b, B_LEN)) {
			binder_error = 2;
			break;
		}
		binds += 2;
	}
	atomic_store(&stop, true);
	tl_rc_pair_destroy(&p);
	return NULL;
}

/* Every arena byte outside A's last MAX_IO bytes still holds its fill. */
static bool arena_intact(void)
{
	uint32_t i;

	for (i = 0; i < ARENA; i++) {
		uint8_t want = GUARD_BYTE;

		if (i >= B_OFF && i < B_OFF + B_LEN)
			want = B_BYTE;
		else if (i >= A_OFF && i < A_OFF + A_LEN - MAX_IO)
			want = A_BYTE;
		else if (i >= A_OFF && i < A_OFF + A_LEN)
			continue;
		if (arena[i] != want) {
			printf("# arena byte %u is %#x, not %#x\n", i, arena[i],
			       want);
			return false;
		}
	}
	return true;
}

/*
 * One access of len bytes ending at A's end, under key; returns its
 * status. A WRITE sends fill; a READ must bring back what A holds there.
 */
static int access_a(struct tl_rc_pair *p, bool write, uint32_t len, uint8_t fill,
		    uint32_t key, bool *data_ok)
{
	uint8_t *there = arena + A_OFF + A_LEN - len;
	struct ibv_sge sge = { .addr = (uintptr_t)local, .length = len,
			       .lkey = local_mr->lkey };
	struct ibv_send_wr wr = {
		.opcode = write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ,
		.sg_list = &sge, .num_sge = 1,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;

	memset(local, write ? fill : 0x11, MAX_IO);
	wr.wr.rdma.remote_addr = (uintptr_t)there;
	wr.wr.rdma.rkey = key;
	if (ibv_post_send(p->qp[1], &wr, &bad))
		return -1;
	atomic_fetch_add(&accesses_posted, 1);
	if (!tl_wait_wc(p->cq[1], &wc, 10))
		return -1;
	*data_ok = true;
	if (wc.status == IBV_WC_SUCCESS)
		*data_ok = write ? !memcmp(there, local, len) :
				   !memcmp(local, there, len);
	return (int)wc.status;
}

int main(int argc, char **argv)
{
	unsigned long ok = 0, refused = 0, bad_status = 0, bad_data = 0;
	struct timespec now;
	pthread_t thread;
	struct tl_rc_pair p;
	time_t until;
	int i;

	if (argc != 4) {
		fprintf(stderr, "usage: mw_race DEV GID_INDEX SECONDS\n");
		return 2;
	}
	gid_index = atoi(argv[2]);
	ctx = tl_open_with_gid(argv[1], gid_index, &gid);
	pd = ibv_alloc_pd(ctx);
	arena = aligned_alloc(PAGE, ARENA);
	local = aligned_alloc(PAGE, MAX_IO);
	if (!pd || !arena || !local)
		tl_die("setup");
	memset(arena, GUARD_BYTE, ARENA);
	memset(arena + B_OFF, B_BYTE, B_LEN);
	memset(arena + A_OFF, A_BYTE, A_LEN);
	mr_a = ibv_reg_mr(pd, arena + A_OFF, A_LEN, IBV_ACCESS_LOCAL_WRITE |
			  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_MW_BIND);
	mr_b = ibv_reg_mr(pd, arena + B_OFF, B_LEN, IBV_ACCESS_LOCAL_WRITE |
			  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_MW_BIND);
	local_mr = ibv_reg_mr(pd, local, MAX_IO, IBV_ACCESS_LOCAL_WRITE);
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	if (!mr_a || !mr_b || !local_mr || !mw)
		tl_die("registering");
	if (make_pair(&p))
		tl_die("connecting");
	if (pthread_create(&thread, NULL, binder, NULL))
		tl_die("pthread_create");
	while (!atomic_load(&a_key) && !atomic_load(&stop))
		;
	clock_gettime(CLOCK_MONOTONIC, &now);
	until = now.tv_sec + atoi(argv[3]);
	for (i = 0; !atomic_load(&stop); i++) {
		uint32_t len = 1 + (uint32_t)(tl_rnd() % MAX_IO);
		bool data_ok = true;
		int st;

		st = access_a(&p, i & 1, len, (uint8_t)(i % 251 + 1),
			      atomic_load(&a_key), &data_ok);
		if (st == IBV_WC_SUCCESS) {
			ok++;
		} else if (st == IBV_WC_REM_ACCESS_ERR) {
			/* The key died under the access: the QP is in error. */
			refused++;
			tl_rc_pair_destroy(&p);
			if (make_pair(&p))
				tl_die("reconnecting");
		} else {
			if (bad_status++ < 5)
				printf("# access %d (%s, %u bytes): status %d\n",
				       i, i & 1 ? "WRITE" : "READ", len, st);
			break;
		}
		if (!data_ok && bad_data++ < 5)
			printf("# access %d (%s, %u bytes): wrong bytes\n", i,
			       i & 1 ? "WRITE" : "READ", len);
		if (!arena_intact())
			break;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec >= until)
			break;
	}
	atomic_store(&stop, true);
	pthread_join(thread, NULL);
	printf("# %lu binds; %lu accesses landed, %lu refused\n", binds, ok,
	       refused);
	tl_check(!binder_error, "every bind completed (%d)", binder_error);
	tl_check(!bad_status, "every access succeeded or was refused for access");
	tl_check(!bad_data, "every access that succeeded moved A's bytes");
	tl_check(arena_intact(),
		 "nothing reached B, the guard pages or the rest of A");
	tl_check(binds >= 100 && ok >= 20 && refused >= 20,
		 "the race ran: binds, accesses that landed and refused ones");
	tl_rc_pair_destroy(&p);
	ibv_dealloc_mw(mw);
	ibv_dereg_mr(local_mr);
	ibv_dereg_mr(mr_b);
	ibv_dereg_mr(mr_a);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return tl_exit_status();
}
