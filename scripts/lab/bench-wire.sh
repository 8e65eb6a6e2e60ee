#!/bin/bash
# Runs inside each of the two lab VMs of scripts/bench: perftest between
# the VMs over the socket netdev, first on rdma_rxe, then on sroce, in the
# same boots. bench-wire.sh server|client. The client prints one line per
# result: "wire DEV KEY VALUE".
set -u
role=$1
iters=${SROCE_BENCH_ITERS:-2000}
rounds=${SROCE_BENCH_ROUNDS:-3}
if [ "$role" = server ]; then ME=10 PEER=11; else ME=11 PEER=10; fi
T=$SROCE_BUILD/tests
# shellcheck source=scripts/lab/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"
bench_lab_net "$ME" "$PEER"

# run DEV TOOL ARGS...: the server serves one run; the client retries
# until the server is up and prints the result line.
run() {
	local dev=$1 tool=$2 out
	shift 2
	if [ "$role" = server ]; then
		timeout 300 "$tool" -d "$dev" -x 1 -F "$@" > /dev/null 2>&1
		return
	fi
	for _ in $(seq 1 120); do
		out=$(timeout 300 "$tool" -d "$dev" -x 1 -F "$@" 192.0.2.10 2>&1)
		grep -q "Couldn't connect\|Unable to init the socket" <<<"$out" ||
			break
		sleep 0.5
	done
	grep -E '^ *[0-9]+ +[0-9]+ +[0-9.]+' <<<"$out" | tail -n 1
}

# The link's own limits: plain TCP over the same virtio NICs, and UDP
# datagrams of a 4096-byte RoCE packet's size (BTH, payload and ICRC: 4112
# bytes) for 5 s, counted as they arrive (tests/progs/udp_stream.c; MiB/s,
# as perftest counts). A sender faster than the receiver measures its
# drops: the first run sends as fast as the stack takes datagrams, two
# more are paced to what it delivered and a tenth above. The limit is the
# most a run delivered losing at most 1% (else the most any delivered,
# said so).
if [ "$role" = server ]; then
	/usr/bin/python3 "$SROCE_TOP/scripts/lab/tcp_stream.py" server
	for run in 1 2 3; do
		"$T/udp_stream" server 5002
	done
else
	echo "wire tcp link_bw $(/usr/bin/python3 "$SROCE_TOP/scripts/lab/tcp_stream.py" client 192.0.2.10 64)"
	best='' best_any='' rate=''
	for run in 1 2 3; do
		# The server of the run before answers late ENDs for 2 s.
		sleep $((run == 1 ? 1 : 3))
		u=$("$T/udp_stream" client 192.0.2.10 5002 4112 5 $rate) || u="0 0 0"
		read -r got sent recvd <<<"$u"
		echo "# udp run $run (${rate:-unpaced}): $got MiB/s, $sent datagrams sent, $recvd received"
		[ $run -eq 1 ] && rate=$got
		[ $run -eq 2 ] && rate=$(awk -v r="$rate" 'BEGIN { printf "%.2f", r * 1.1 }')
		awk -v g="$got" -v b="${best_any:-0}" 'BEGIN { exit !(g > b) }' && best_any=$got
		awk -v g="$got" -v b="${best:-0}" -v s="$sent" -v r="$recvd" \
			'BEGIN { exit !(s > 0 && r >= 0.99 * s && g > b) }' && best=$got
	done
	[ -n "$best" ] || echo "# udp: every run lost more than 1%: the limit is the most one delivered"
	echo "wire udp link_bw ${best:-$best_any}"
fi

# What sroce did per message of the 64 B write on this side: packets
# each way, the worker's sleeps, kicks (and those left to the worker),
# idle polls that found work, ACK requests coalesced, ACKs taken in
# softirq.
msg_counters() {
	local c
	for c in tx_packets rx_packets sleeps kicks kicks_deferred \
		worker_poll_hits acks_coalesced acks_in_softirq; do
		echo "$c $(cat /sys/class/infiniband/sroce0/ports/1/hw_counters/$c)"
	done
}
per_message() {	# per_message BEFORE MESSAGES
	echo "# sroce 64 B write, $role, per message: $(paste -d ' ' <(echo "$1") <(msg_counters) |
		awk -v n="$2" '{ printf "%s %.2f ", $1, ($4 - $2) / n }')"
}

# Rounds alternate the devices (the link's speed drifts within a boot):
# the 64 KiB bandwidths in every round, the 64 B rate and the latency in
# the first. bench takes the median of each.
for round in $(seq 1 "$rounds"); do
	for dev in rxe0 sroce0; do
		if [ $dev = rxe0 ]; then
			modprobe rdma_rxe
			rdma link add rxe0 type rxe netdev "$IF"
		else
			modprobe sroce
			rdma link add sroce0 type sroce netdev "$IF"
		fi
		sleep 1
		t0=$(busy_ticks)
		r=$(run $dev ib_write_bw -s 65536 -n "$iters")
		t1=$(busy_ticks)
		[ "$role" = client ] && echo "wire $dev write_bw $(awk '{ print $4 }' <<<"$r")" &&
			echo "wire $dev cpu_per_gb $(awk -v t=$((t1 - t0)) -v hz="$(getconf CLK_TCK)" \
				-v n="$iters" 'BEGIN { printf "%.2f", (t / hz) / (n * 65536 / 1e9) }')"
		r=$(run $dev ib_read_bw -s 65536 -n "$iters")
		[ "$role" = client ] && echo "wire $dev read_bw $(awk '{ print $4 }' <<<"$r")"
		if [ "$round" = 1 ]; then
			[ $dev = sroce0 ] && c0=$(msg_counters)
			r=$(run $dev ib_write_bw -s 64 -n $((iters * 5)))
			[ "$role" = client ] && echo "wire $dev write_rate $(awk '{ print $5 }' <<<"$r")"
			[ $dev = sroce0 ] && per_message "$c0" $((iters * 5))
			r=$(run $dev ib_send_lat -s 64 -n "$iters")
			[ "$role" = client ] && echo "wire $dev send_lat $(awk '{ print $5 }' <<<"$r")"
		fi
		sleep 2
		# The device's counters go with it: keep the round's.
		if [ "$role" = client ] && [ $dev = sroce0 ]; then
			for f in /sys/class/infiniband/sroce0/ports/1/hw_counters/*; do
				echo "${f##*/} $(cat "$f")"
			done >> /tmp/bench-wire-counters
		fi
		rdma link delete $dev
		[ $dev = rxe0 ] && rmmod rdma_rxe
	done
done
[ "$role" = client ] && [ -s /tmp/bench-wire-counters ] &&
	awk '/retransmits|timeouts|naks/ { s[$1] += $2 }
	     END { for (k in s) print "# " k, s[k] }' /tmp/bench-wire-counters | sort
exit 0
