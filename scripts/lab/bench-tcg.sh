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

for ((round = 1; round <= rounds; round++)); do
	for build in A B; do
		ko=$ko_a
		[ $build = B ] && ko=$ko_b
		bench_sroce_up "$ko" || exit 1
		taskset -c 1 timeout 300 ib_atomic_bw -d sroce0 -x 1 -F \
			-n "$ops" > /tmp/bench-srv.log 2>&1 &
		sleep 2
		(sleep 2; echo "# tcg: sample $build.$round") &
		taskset -c 1 timeout 300 ib_atomic_bw -d sroce0 -x 1 -F \
			-n "$ops" 127.0.0.1 > /tmp/bench-cli.log 2>&1
		wait
		r=$(grep -E '^ *[0-9]+ +[0-9]+ +[0-9.]+' /tmp/bench-cli.log |
			tail -n 1 | col 5)
		echo "# tcg: result $build.$round ${r:-fail}"
		rdma link delete sroce0
		rmmod sroce || exit 1
	done
done
