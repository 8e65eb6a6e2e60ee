#!/bin/bash
# Runs inside the lab VM (scripts/bench): the same perftest runs on
# rdma_rxe and on sroce, one after the other in this boot, same-host over
# the same netdev (a veth), and prints each result with the ratio.
set -u
iters=${SROCE_BENCH_ITERS:-2000}
# shellcheck source=scripts/lab/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"
bench_veth

# frwr_rate DEV CYCLES: thousands of REG_MR + LOCAL_INV cycles a second
# from a kernel consumer (tests/kmod/sroce_frwr_test.ko bench=CYCLES).
frwr_rate() {
	insmod "$(dirname "$0")/../../tests/kmod/sroce_frwr_test.ko" \
		dev="$1" gid_index=1 bench="$2" || return
	rmmod sroce_frwr_test
	dmesg | sed -n 's/.*sroce_frwr_test: bench: \([0-9]*\) cycles in \([0-9]*\) us/\1 \2/p' |
		tail -n 1 | awk '$2 > 0 { printf "%.1f", $1 / $2 * 1e3 }'
}

declare -A r
for dev in rxe0 sroce0; do
	if [ $dev = rxe0 ]; then
		modprobe rdma_rxe
		rdma link add rxe0 type rxe netdev v0
	else
		rdma link add sroce0 type sroce netdev v0
	fi
	sleep 1
	t0=$(busy_ticks)
	r[$dev.write_bw]=$(perf $dev ib_write_bw -s 65536 -n "$iters" | col 4)
	t1=$(busy_ticks)
	# CPU seconds per GB moved (both perftest processes and the driver).
	r[$dev.cpu_per_gb]=$(awk -v t=$((t1 - t0)) -v hz="$hz" -v n="$iters" \
		'BEGIN { printf "%.2f", (t / hz) / (n * 65536 / 1e9) }')
	r[$dev.write_rate]=$(perf $dev ib_write_bw -s 64 -n $((iters * 5)) | col 5)
	r[$dev.send_lat]=$(perf $dev ib_send_lat -s 64 -n "$iters" | col 5)
	r[$dev.read_bw]=$(perf $dev ib_read_bw -s 65536 -n "$iters" | col 4)
	r[$dev.send_bw]=$(perf $dev ib_send_bw -s 65536 -n "$iters" | col 4)
	r[$dev.srq_send_bw]=$(perf $dev ib_send_bw --use-srq -s 65536 \
		-n "$iters" | col 4)
	r[$dev.srq_send_rate]=$(perf $dev ib_send_bw --use-srq -s 64 \
		-n $((iters * 5)) | col 5)
	r[$dev.atomic_rate]=$(perf $dev ib_atomic_bw -n "$iters" | col 5)
	r[$dev.frwr_rate]=$(frwr_rate $dev $((iters * 5)))
	# An idle device: busy CPU over 5 s with nothing to do.
	sleep 1
	t0=$(busy_ticks)
	sleep 5
	t1=$(busy_ticks)
	r[$dev.idle_cpu]=$(awk -v t=$((t1 - t0)) -v hz="$hz" \
		'BEGIN { printf "%.3f", 100 * (t / hz) / 5 }')
	rdma link delete $dev
	[ $dev = rxe0 ] && rmmod rdma_rxe
done

printf '%-34s %12s %12s %8s\n' benchmark rxe sroce ratio
row() {	# row NAME KEY HIGHER_IS_BETTER
	local a=${r[rxe0.$2]:-} b=${r[sroce0.$2]:-} q
	if [ "$3" = 1 ]; then q=$(ratio "$b" "$a"); else q=$(ratio "$a" "$b"); fi
	printf '%-34s %12s %12s %8s\n' "$1" "${a:-fail}" "${b:-fail}" "$q"
}
bench_rows
row "ib_send_bw --use-srq 64KiB MB/s" srq_send_bw 1
row "ib_send_bw --use-srq 64B Mpps" srq_send_rate 1
row "FRWR REG_MR+LOCAL_INV k/s (kernel)" frwr_rate 1
row "CPU s per GB (ib_write_bw 64KiB)" cpu_per_gb 0
row "idle VM CPU % (device up, no traffic)" idle_cpu 0
echo "(ratio: how many times better sroce is; same-host, TCG, $iters iterations)"
