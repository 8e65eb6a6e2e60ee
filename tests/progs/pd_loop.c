// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * pd_loop DEV ROUNDS COUNT: allocates COUNT PDs at once and frees them,
 * ROUNDS times, checking every call.
 */
#include "testlib.h"

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	struct ibv_pd **pds;
	int r, i, rounds, count, alloc_fail = 0, free_fail = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: pd_loop DEV ROUNDS COUNT\n");
		return 2;
	}
	ctx = tl_open_device(argv[1]);
	rounds = atoi(argv[2]);
	count = atoi(argv[3]);
	pds = calloc(count, sizeof(*pds));
	if (!pds)
		tl_die("calloc");

	for (r = 0; r < rounds; r++) {
		for (i = 0; i < count; i++) {
			pds[i] = ibv_alloc_pd(ctx);
			if (!pds[i])
				alloc_fail++;
		}
		for (i = 0; i < count; i++)
			if (pds[i] && ibv_dealloc_pd(pds[i]))
				free_fail++;
	}
	tl_check(!alloc_fail, "%d x %d PD allocations (%d failed)", rounds,
		 count, alloc_fail);
	tl_check(!free_fail, "%d x %d PD deallocations (%d failed)", rounds,
		 count, free_fail);
	tl_check(ibv_close_device(ctx) == 0, "device closed");
	free(pds);
	return tl_exit_status();
}
