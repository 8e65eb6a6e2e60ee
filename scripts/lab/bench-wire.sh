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
	local dev=$1 tool=$2 i out
	shift 2
	if [ "$role" = server ]; then
		timeout 300 "$tool" -d "$dev" -x 1 -F "$@" > /dev/null 2>&1
		return
	fi
	for i in $(seq 1 120); do
		out=$(timeout 300 "$tool" -d "$dev" -x 1 -F "$@" 192.0.2.10 2>&1)
		grep -q "Couldn't connect\|Unable to init the socket" <<<"$out" ||
			break
		sleep 0.5
	done
	grep -E '^ *[0-9]+ +[0-9]+ +[0-9.]+' <<<"$out" | tail -n 1
}

# The link's own limits: plain TCP over the same virtio NICs, and UDP
# datagrams of a 4096-byte RoCE packet's size (BTH, payload and ICRC: 4112
# bytes) sent for 5 s as fast as the stack takes them, counted as they
# arrive (tests/progs/udp_stream.c; MiB/s, as perftest counts).
if [ "$role" = server ]; then
	/usr/bin/python3 "$SROCE_TOP/scripts/lab/tcp_stream.py" server
	"$T/udp_stream" server 5002
else
	echo "wire tcp link_bw $(/usr/bin/python3 "$SROCE_TOP/scripts/lab/tcp_stream.py" client 192.0.2.10 64)"
	sleep 1
	u=$("$T/udp_stream" client 192.0.2.10 5002 4112 5)
	echo "wire udp link_bw $(awk '{ print $1 }' <<<"$u")"
	echo "# udp: $(awk '{ print $2 " datagrams sent, " $3 " received" }' <<<"$u")"
fi

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
			r=$(run $dev ib_write_bw -s 64 -n $((iters * 5)))
			[ "$role" = client ] && echo "wire $dev write_rate $(awk '{ print $5 }' <<<"$r")"
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
