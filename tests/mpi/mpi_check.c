// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mpi_check: run by two or more MPI ranks (mpirun -np N). Each rank
 * exchanges messages of 8 B, 4 KiB, 64 KiB and 4 MiB with its neighbours
 * in a ring (MPI_Sendrecv) and checks every byte it received against the
 * pattern the sender wrote; then all ranks sum a 1 Mi-element vector
 * (MPI_Allreduce) and check every element. Prints one line per check
 * ("ok - ..." / "not ok - ...") from rank 0 and exits 0 only if every
 * rank saw every byte right.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint8_t pattern(int rank, size_t size, size_t i)
{
	return (uint8_t)(i * 131 + size * 7 + rank * 29 + (i >> 12));
}

/* Bytes of the ring exchange of size that differ from the pattern. */
static long ring_exchange(int rank, int ranks, size_t size)
{
	int next = (rank + 1) % ranks, prev = (rank + ranks - 1) % ranks;
	uint8_t *out = malloc(size), *in = malloc(size);
	long wrong = 0;
	size_t i;

	if (!out || !in)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (i = 0; i < size; i++)
		out[i] = pattern(rank, size, i);
	memset(in, 0xa5, size);
	MPI_Sendrecv(out, (int)size, MPI_BYTE, next, 1, in, (int)size, MPI_BYTE,
		     prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	for (i = 0; i < size; i++)
		wrong += in[i] != pattern(prev, size, i);
	free(out);
	free(in);
	return wrong;
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 8, 4096, 65536, 4 << 20 };
	const size_t n = 1 << 20;
	int rank, ranks, failed = 0;
	uint64_t *v, *sum;
	long wrong, total;
	size_t i, k;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &ranks);
	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		wrong = ring_exchange(rank, ranks, sizes[k]);
		MPI_Allreduce(&wrong, &total, 1, MPI_LONG, MPI_SUM,
			      MPI_COMM_WORLD);
		if (rank == 0)
			printf("%s - ring exchange of %zu bytes between %d ranks: %ld bytes wrong\n",
			       total ? "not ok" : "ok", sizes[k], ranks, total);
		failed |= total != 0;
	}
	v = malloc(n * sizeof(*v));
	sum = malloc(n * sizeof(*sum));
	if (!v || !sum)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (i = 0; i < n; i++)
		v[i] = (uint64_t)rank * i + 1;
	MPI_Allreduce(v, sum, (int)n, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
	wrong = 0;
	for (i = 0; i < n; i++)	/* sum over r of (r * i + 1) */
		wrong += sum[i] != (uint64_t)ranks * (ranks - 1) / 2 * i + ranks;
	MPI_Allreduce(&wrong, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("%s - allreduce of %zu 64-bit integers: %ld elements wrong\n",
		       total ? "not ok" : "ok", n, total);
	failed |= total != 0;
	free(v);
	free(sum);
	MPI_Finalize();
	return failed;
}
