#!/bin/bash
# Runs inside the lab VM (scripts/bench tcg): ib_atomic_bw with two builds
# of sroce.ko, alternated ROUNDS times (A B A B ...). Perftest's client
# and server run on vCPU 1, so the engine worker runs on vCPU 0. About
# two seconds into each run it prints "# tcg: sample BUILD.ROUND", on
# which the host samples the QEMU process (scripts/bench), and after the
# run "# tcg: result BUILD.ROUND MPPS".
#   bench-tcg.sh KO_A KO_B [ROUNDS]
# SROCE_BENCH_TCG_OPS: atomics per run (default 3000000: about 7 s at
# the 0.4 Mpps of 2026's builds, so that the host's 2 s window falls
# inside the run).
set -u
ko_a=$1 ko_b=$2 rounds=${3:-2}
ops=${SROCE_BENCH_TCG_OPS:-3000000}
# shellcheck source=scripts/lab/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"
bench_veth
# This shell's children (perftest) inherit vCPU 1; the engine's workers,
# kernel threads, do not.
taskset -cp 1 $$ > /dev/null

for ((round = 1; round <= rounds; round++)); do
	for build in A B; do
		ko=$ko_a
		[ $build = B ] && ko=$ko_b
		bench_sroce_up "$ko" || exit 1
		# perf() starts the client 2 s after the server.
		(sleep 4; echo "# tcg: sample $build.$round") &
		r=$(perf sroce0 ib_atomic_bw -n "$ops" | col 5)
		wait
		echo "# tcg: result $build.$round ${r:-fail}"
		rdma link delete sroce0
		rmmod sroce || exit 1
	done
done
