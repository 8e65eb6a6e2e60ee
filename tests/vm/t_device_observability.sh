# Observability with the kernel's tools: each device's counters as its
# port's hw counters (rdma statistic, sysfs hw_counters), kept per device;
# each QP's details through restrack (rdma resource show qp -dd); the
# tracepoints (tracefs, perf).
# vm-checks: 33
. ./lib.sh
make_veth v0 1
make_veth v1 2
rdma link add sroce0 type sroce netdev v0
rdma link add sroce1 type sroce netdev v1

names="kicks wqes sleeps tx_packets tx_errors rx_packets rx_drop_malformed
rx_drop_icrc rx_drop_no_qp rx_drop_queue_full rx_drop_protocol
duplicate_requests seq_naks_sent rnr_naks_sent retransmits timeouts ud_sent
ud_received rx_drop_qkey rx_drop_pkey rx_drop_no_recv ud_no_dest kick_wakes
rx_drop_address rx_drop_replay shortcut_drop_peer shortcut_hand_overs
shortcut_answers_back qp_ring_errors fast_regs invalidates rx_bad_invalidate
tx_bytes rx_bytes error_naks_sent seq_naks_received rnr_naks_received
error_naks_received worker_releases cq_events keys_revoked kicks_deferred
cq_events_held worker_poll_hits acks_coalesced posts_sent_inline
acks_in_softirq"

# nl_counters DEV: "NAME VALUE" lines of DEV's port 1, through netlink.
nl_counters() {
	rdma -j statistic show link "$1/1" | /usr/bin/python3 -c '
import json, sys
for link in json.load(sys.stdin):
    for k, v in link.items():
        if k not in ("ifindex", "ifname", "port"):
            print(k, v)'
}
# sysfs_counters DEV: the same from sysfs.
sysfs_counters() {
	local f
	for f in /sys/class/infiniband/"$1"/ports/1/hw_counters/*; do
		[ "${f##*/}" = lifespan ] || echo "${f##*/} $(cat "$f")"
	done
}
# dev_stat DEV NAME: one counter of one device.
dev_stat() { cat /sys/class/infiniband/"$1"/ports/1/hw_counters/"$2"; }

check_eq "rdma statistic lists the driver's counters" \
	"$(tr -s ' \n' '\n' <<<"$names" | sort)" \
	"$(nl_counters sroce0 | awk '{ print $1 }' | sort)"
check_eq "sysfs lists the same counters" \
	"$(nl_counters sroce0 | awk '{ print $1 }' | sort)" \
	"$(sysfs_counters sroce0 | awk '{ print $1 }' | sort)"

# Traffic on sroce0 alone (both QPs on it) counts on sroce0 only.
w0=$(dev_stat sroce0 wqes) h0=$(dev_stat sroce0 shortcut_hand_overs)
o0=$(sysfs_counters sroce1)
check "ib_write_bw on sroce0 ran" \
	loopback_perftest ib_write_bw -d sroce0 -x 1 -F -s 4096 -n 5000
check "sroce0 started the 5000 WQEs ($(($(dev_stat sroce0 wqes) - w0)))" \
	test $(($(dev_stat sroce0 wqes) - w0)) -ge 5000
check "sroce0 handed packets over" \
	test "$(dev_stat sroce0 shortcut_hand_overs)" -gt "$h0"
check_eq "no counter of sroce1 moved" "$o0" "$(sysfs_counters sroce1)"
sleep 0.1	# past sysfs's cache of one jiffy
check_eq "netlink and sysfs give the same values" \
	"$(nl_counters sroce0 | sort)" "$(sysfs_counters sroce0 | sort)"

# Drops before a QP is known count on the device of the destination.
m0=$(dev_stat sroce0 rx_drop_malformed) i0=$(dev_stat sroce0 rx_drop_icrc)
q0=$(dev_stat sroce0 rx_drop_no_qp)
o0=$(sysfs_counters sroce1)
/usr/bin/python3 ./roce_inject.py garbage 300
/usr/bin/python3 ./roce_inject.py no_qp 50
both_counted() {
	[ $(($(dev_stat sroce0 rx_drop_malformed) + $(dev_stat sroce0 rx_drop_icrc) \
		- m0 - i0)) -eq 300 ] &&
		[ $(($(dev_stat sroce0 rx_drop_no_qp) - q0)) -eq 50 ]
}
check "300 garbage datagrams and 50 for no QP to sroce0's addresses count on sroce0" \
	wait_for 10 both_counted
check_eq "and on sroce1 nothing" "$o0" "$(sysfs_counters sroce1)"

# restrack: a QP's details name its link and PSNs.
timeout 60 ib_send_lat -d sroce0 -x 1 -F -s 64 -n 200000 > /dev/null 2>&1 &
server=$!
wait_for 10 tcp_listening 18515
timeout 60 ib_send_lat -d sroce0 -x 1 -F -s 64 -n 200000 127.0.0.1 > /dev/null 2>&1 &
client=$!
qp_details() {
	rdma -dd res show qp link sroce0/1 > /tmp/res-qp.txt 2>&1 &&
		grep -q 'type RC .*drv_link shortcut .*drv_una_psn [0-9]* .*drv_reads_outstanding [0-9]' \
			/tmp/res-qp.txt
}
check "rdma resource show qp -dd shows sroce's details of the RC QPs" \
	wait_for 20 qp_details
grep -m 1 'type RC' /tmp/res-qp.txt | sed 's/^/# /'
sent_psn() {
	rdma -dd res show qp link sroce0/1 | awk '/type RC/ {
		for (i = 1; i < NF; i++) if ($i == "drv_sent_psn") { print $(i + 1); exit } }'
}
p1=$(sent_psn)
sleep 0.5
p2=$(sent_psn)
check "and a QP's sent PSN there moves with its traffic ($p1 -> $p2)" \
	test -n "$p1" -a -n "$p2" -a "$p1" != "$p2"
# The details are for CAP_NET_ADMIN only: another user sees the QPs, not
# the PSNs a forged packet would need.
setpriv --reuid=65534 --regid=65534 --clear-groups \
	rdma -dd res show qp link sroce0/1 > /tmp/res-qp-user.txt 2>&1
check "a user without CAP_NET_ADMIN lists the RC QPs" \
	grep -q 'type RC' /tmp/res-qp-user.txt
check "but sees none of sroce's details of them" \
	sh -c "! grep -q 'drv_' /tmp/res-qp-user.txt"
kill "$client" "$server" 2> /dev/null
wait

# Tracepoints: on, a ping-pong fires the data path's events and rc_errors
# the NAK and retransmission ones; off, nothing is recorded.
TR=/sys/kernel/tracing
[ -d $TR/events ] || mount -t tracefs nodev $TR
echo 0 > $TR/tracing_on
echo > $TR/trace
echo 1 > $TR/events/sroce/enable
echo 1 > $TR/tracing_on
check "ib_send_lat, traced" \
	loopback_perftest ib_send_lat -d sroce0 -x 1 -F -s 64 -n 100
check "rc_errors, traced" sh -c "timeout 120 '$T/rc_errors' sroce0 1 > /dev/null 2>&1"
echo 0 > $TR/tracing_on
cp $TR/trace /tmp/sroce-trace.txt
events() { grep -c " $1: " /tmp/sroce-trace.txt; }
for e in sroce_wqe sroce_pkt_tx sroce_pkt_rx sroce_cqe; do
	check "tracepoint $e fired for each of 200 messages ($(events $e))" \
		test "$(events $e)" -ge 200
done
check "tracepoint sroce_qp_state: RESET to INIT, RTR and RTS of both QPs" \
	test "$(grep -c ' sroce_qp_state: .*state [0-3] -> [1-3]$' /tmp/sroce-trace.txt)" -ge 6
check "tracepoint sroce_nak: RNR NAKs sent and received" sh -c \
	"grep -q ' sroce_nak: .* sent' /tmp/sroce-trace.txt &&
	 grep -q ' sroce_nak: .* received' /tmp/sroce-trace.txt"
check "tracepoint sroce_retransmit fired" test "$(events sroce_retransmit)" -ge 1
grep -m 3 ' sroce_pkt_tx: ' /tmp/sroce-trace.txt | sed 's/^/# /'
check "perf lists the events" sh -c "perf list 'sroce:*' 2> /dev/null | grep -q sroce:sroce_pkt_rx"
echo 0 > $TR/events/sroce/enable
echo > $TR/trace
echo 1 > $TR/tracing_on
check "ib_send_lat, with the events off" \
	loopback_perftest ib_send_lat -d sroce0 -x 1 -F -s 64 -n 100
check_eq "off, the events record nothing" 0 "$(grep -c ' sroce_' $TR/trace)"

# A kick runs a worker's passes in the kicking process only while the
# worker serves that user's QPs alone (the two QPs of a same-host
# connection share a worker): two root processes kick their own passes;
# with the client another user, the worker runs every kick instead.
# lat [CLIENT_PREFIX...]: ib_send_lat on sroce0, its client run through
# CLIENT_PREFIX (setpriv as another user), by server_client.
lat() {
	server_client "tcp_listening 18515" \
		ib_send_lat -d sroce0 -x 1 -F -s 64 -n 2000 -- \
		"$@" ib_send_lat -d sroce0 -x 1 -F -s 64 -n 2000 127.0.0.1
}
d0=$(sroce_stat kicks_deferred)
k0=$(sroce_stat kicks)
lat
check "ib_send_lat between two processes of one user" test "$cli_rc" -eq 0
check "and its server ends with status 0" test "$srv_rc" -eq 0
check "they kicked the engine" test $(($(sroce_stat kicks) - k0)) -gt 0
check_eq "and ran every kick themselves" 0 \
	$(($(sroce_stat kicks_deferred) - d0))
d0=$(sroce_stat kicks_deferred)
lat setpriv --reuid=65534 --regid=65534 --clear-groups
check "ib_send_lat with the client another user" test "$cli_rc" -eq 0
check "and its server ends with status 0" test "$srv_rc" -eq 0
check "kicks were left to the worker ($(($(sroce_stat kicks_deferred) - d0)))" \
	test $(($(sroce_stat kicks_deferred) - d0)) -gt 0

rdma link delete sroce1
rdma link delete sroce0
check "devices gone" dev_absent sroce0
finish
