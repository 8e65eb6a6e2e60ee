# Sourced by the guest scripts of tests/lab: joins this VM to the lab
# network and creates its RDMA device. Input: ME (host number, 10 or 11),
# PEER (the other's), NDEV (sroce or rxe), MTU (netdev MTU, default 1500),
# SROCE_ARGS (module parameters for sroce, default none).
# Output: D (device name), IF (netdev), GID4 and GID6 (the GID indices of
# 192.0.2.$ME and 2001:db8::$ME), PEER4 (the peer's IPv4 address), T.
T=$SROCE_BUILD/tests
PEER4=192.0.2.$PEER
# check, wait_for, sroce_stat, gid_index, objects_gone
. "$(dirname "${BASH_SOURCE[0]}")/../vm/common.sh"
modprobe virtio_net
IF=$(ls /sys/class/net | grep -v '^lo$' | head -n 1)
ip link set "$IF" mtu "${MTU:-1500}"
ip link set "$IF" up
ip addr add "192.0.2.$ME/24" dev "$IF"
ip -6 addr add "2001:db8::$ME/64" dev "$IF" nodad
# QEMU's stalled TX ring (Documentation/lab.rst): the kernel warns of it
# once per boot, and not always on the console; virtio counts every
# timeout. tx_stall_said says the first one in the words wire.sh watches
# for (true if there was one); it runs every 5 s, and once more when the
# job ends (device_counters), for a stall in its last seconds.
tx_stall_said() {
	local n
	n=$(ethtool -S "$IF" 2> /dev/null |
	    awk '/tx_timeouts:/ { s += $2 } END { print s + 0 }')
	[ "$n" -gt 0 ] || return 1
	echo "# NETDEV WATCHDOG: $IF: transmit queue 0 timed out ($n TX timeouts)"
}
(
	while sleep 5; do
		tx_stall_said && break
	done
) &
for _ in $(seq 1 90); do
	busybox ping -c 1 -W 1 "$PEER4" > /dev/null 2>&1 && break
done
if [ "$NDEV" = rxe ]; then
	modprobe rdma_rxe
	D=rxe0
	rdma link add "$D" type rxe netdev "$IF"
	# rdma_rxe's traffic does not confirm its neighbour entry: the
	# kernel probes it by ARP/ND once it goes stale, and under a long
	# transfer the lab link's queue delays the answer past the probes'
	# timeout, after which rdma_rxe's packets are dropped until the peer
	# is resolved again (its ACKs among them). The entry stays reachable
	# for the lab's whole run instead.
	for v in ipv4 ipv6; do
		sysctl -qw "net.$v.neigh.$IF.base_reachable_time_ms=36000000"
	done
else
	# shellcheck disable=SC2086 # parameters, one word each
	modprobe sroce ${SROCE_ARGS:-}
	D=sroce0
	rdma link add "$D" type sroce netdev "$IF"
fi
for _ in $(seq 1 50); do
	GID4=$(gid_index "::ffff:192.0.2.$ME" "$D")
	GID6=$(gid_index "2001:db8::$ME" "$D")
	[ -n "$GID4" ] && [ -n "$GID6" ] && break
	sleep 0.2
done
[ -n "$GID4" ] && [ -n "$GID6" ] || echo "not ok - $D has no GID for 192.0.2.$ME or 2001:db8::$ME"

# neigh_warm: the peer's IPv4 and IPv6 neighbour entries resolved. The
# core gives rdma_rxe's modify_qp to RTR one second to resolve the peer's
# MAC; a busy TCG peer can answer a neighbour solicitation later than
# that (ETIMEDOUT, in the IPv6 phase after an IPv4 one). An entry that
# went stale since still resolves at once.
neigh_warm() {
	busybox ping -c 1 -W 2 "$PEER4" > /dev/null 2>&1
	busybox ping -c 1 -W 2 "2001:db8::$PEER" > /dev/null 2>&1
	return 0
}

# What rc_remote shows of both ends when a send waits a minute for its
# completion: every QP with its PSNs (sroce's details with -dd) and the
# devices' counters, taken while the stalled QPs still exist.
export RC_REMOTE_ON_STALL='{ rdma -dd res show qp; rdma statistic show; } 2>&1 |
	grep -v "type GSI" | sed "s/^/# stall: /"'

# serve NAME GID ARGS...: the server side of an rc_remote phase; on
# failure its output, as "# server:" lines.
serve() {
	local name=$1 gid=$2
	shift 2
	neigh_warm
	if timeout 300 "$T/rc_remote" "$D" "$gid" "$@" > /tmp/serve.log 2>&1; then
		echo "ok - $name: server side ($D)"
	else
		echo "not ok - $name: server side ($D)"
		tail -n 40 /tmp/serve.log | sed 's/^/# server: /'
		net_snapshot
	fi
}

# drive NAME GID ARGS...: the client side; its own checks are printed.
drive() {
	local name=$1 gid=$2
	shift 2
	echo "# $name: client on $D"
	neigh_warm
	timeout 300 "$T/rc_remote" "$D" "$gid" "$@" "$PEER4" 2> /tmp/drive.err |
		sed "s/^\(\(not \)\?ok - \)/\1$name: /"
	[ "${PIPESTATUS[0]}" -eq 0 ] && return
	echo "not ok - $name: client exited with failure"
	tail -n 20 /tmp/drive.err | sed 's/^/# client: /'
	net_snapshot
}

# The counters that move when packets are lost, reordered or duplicated.
LOSS_COUNTERS="retransmits timeouts seq_naks_sent seq_naks_received duplicate_requests"

loss_count() {
	local c sum=0
	for c in $LOSS_COUNTERS; do
		sum=$((sum + $(cat /sys/class/infiniband/"$D"/ports/1/hw_counters/$c)))
	done
	echo "$sum"
}

# netem_on: the link loses, reorders and duplicates from here on; the
# loss counters' sum and the retransmits are kept for loss_seen.
netem_on() {
	loss_count > /tmp/loss-before &&
	sroce_stat retransmits > /tmp/retransmits-before &&
	modprobe sch_netem &&
	tc qdisc add dev "$IF" root netem delay 1ms loss 5% reorder 10% \
		duplicate 2%
}

# loss_seen [requester]: since netem_on, the loss was there and the
# protocol, not luck, recovered from it: the loss counters
# (LOSS_COUNTERS) moved, and on the requester's side (rc_remote's client)
# sroce went back and sent packets again (go-back-N: retransmits moved).
loss_seen() {
	local n re
	n=$(($(loss_count) - $(cat /tmp/loss-before)))
	re=$(($(sroce_stat retransmits) - $(cat /tmp/retransmits-before)))
	echo "# loss counters ($LOSS_COUNTERS) moved by $n, retransmits by $re"
	[ "$n" -gt 0 ] && { [ "${1:-}" != requester ] || [ "$re" -gt 0 ]; }
}

netem_off() {
	tc qdisc del dev "$IF" root 2> /dev/null
}

no_icrc_drops() {
	[ "$(cat /sys/class/infiniband/"$D"/ports/1/hw_counters/rx_drop_icrc)" = 0 ]
}

# The device's hw counters that are not 0 (sroce's or rdma_rxe's), and a
# TX stall if there was one, for the log.
device_counters() {
	local f v
	for f in /sys/class/infiniband/"$D"/ports/1/hw_counters/*; do
		[ "${f##*/}" = lifespan ] && continue
		v=$(cat "$f" 2> /dev/null) || continue
		[ "$v" = 0 ] || echo "# ${f##*/} $v"
	done
	tx_stall_said
	return 0
}

# The nice values of the sroce engine workers, one a line.
worker_nices() {
	local p
	for p in $(pgrep '^sroce/'); do ps -o nice= -p "$p"; done | tr -d ' '
}

workers_at_nice_0() {
	[ "$(worker_nices | sort -u)" = 0 ]
}

# watch_nices FILE CMD...: runs CMD, sampling worker_nices into FILE.
watch_nices() {
	local file=$1 w
	shift
	: > "$file"
	( while :; do worker_nices >> "$file"; sleep 0.2; done ) &
	w=$!
	"$@"
	kill "$w"
	wait "$w" 2> /dev/null
}

# atomic_write_on [MIN]: rc_remote's clients add ATOMIC_WRITE to their
# random operations (RC_REMOTE_ATOMIC_WRITE); with MIN (major.minor), only
# on a kernel from MIN on (rdma_rxe executes it from 6.2).
atomic_write_on() {
	local have want
	if [ -n "${1:-}" ]; then
		have=$(uname -r | awk -F. '{ print $1 * 1000 + $2 }')
		want=$(awk -F. '{ print $1 * 1000 + $2 }' <<< "$1")
		[ "$have" -ge "$want" ] || return 0
	fi
	export RC_REMOTE_ATOMIC_WRITE=1
}

# timed CMD...: runs CMD in this shell; one that took 5 s or more says so
# ("# took N s: CMD"), so that a slower lab shows which phase grew.
# tests/lab/wire.sh runs each line of a guest's script through it.
timed() {
	local t0=$SECONDS rc what="$*"
	"$@"
	rc=$?
	[ $((SECONDS - t0)) -lt 5 ] || echo "# took $((SECONDS - t0)) s: ${what:0:70}"
	return $rc
}


# rx_packets_since R0 N: this device has received N packets since its
# rx_packets counter read R0.
rx_packets_since() {
	[ $(($(cat /sys/class/infiniband/"$D"/ports/1/hw_counters/rx_packets) - $1)) -ge "$2" ]
}

# Teardown under wire traffic, server side: ib_write_bw serves the peer's
# client, and once its WRITEs arrive (however long the client took to
# connect) the process is killed, the device deleted or the module
# removed. No hang, no leak; the device comes back.
teardown_server() {
	local how srv r0
	for how in kill link rmmod; do
		r0=$(cat /sys/class/infiniband/"$D"/ports/1/hw_counters/rx_packets)
		lab_timeout 60 "ib_write_bw -d $D -x $GID4 -F -D 15 -q 2" \
			> /dev/null 2>&1 &
		srv=$!
		check "wire teardown ($how): the client's WRITEs arrive" \
			wait_for 40 rx_packets_since "$r0" 200
		sleep 2
		case $how in
		kill) pkill -9 -x ib_write_bw ;;
		link) check "wire teardown: rdma link delete under traffic" \
			timeout 30 rdma link delete "$D" ;;
		rmmod) check "wire teardown: rmmod under traffic" \
			timeout 30 rmmod sroce ;;
		esac
		wait $srv
		lab_stuck_report $?
		case $how in
		kill) check "wire teardown: no objects left after kill -9" \
			wait_for 10 objects_gone ;;
		link) check "wire teardown: no objects left after link delete" \
			wait_for 10 objects_gone ;;
		rmmod) check "wire teardown: module gone" \
			test ! -d /sys/module/sroce ;;
		esac
		modprobe sroce
		[ -e "/sys/class/infiniband/$D" ] ||
			rdma link add "$D" type sroce netdev "$IF"
		sleep 1
	done
}

# The client side: three runs against teardown_server, each connecting
# as soon as the server is up and ending when the peer is gone.
teardown_client() {
	local round out i rc t0
	for round in 1 2 3; do
		t0=$SECONDS
		# At most two minutes a round, so a peer that went ahead (or
		# is gone) costs one round's checks, not the VM's time limit.
		for i in $(seq 1 300); do
			[ $((SECONDS - t0)) -lt 120 ] || break
			out=$(lab_timeout 60 "ib_write_bw -d $D -x $GID4 -F \
				-D 15 -q 2 $PEER4")
			rc=$?
			grep -q "Couldn't connect\|Unable to init the socket" \
				<<<"$out" || break
			sleep 0.2
		done
		grep -q "RDMA_Write BW Test" <<<"$out" ||
			tail -n 8 <<<"$out" | sed 's/^/# /'
		check "wire teardown round $round: the client connected" \
			grep -q "RDMA_Write BW Test" <<<"$out"
		check "wire teardown round $round: the client ended (status $rc)" \
			test "$rc" -ne 124
		lab_stuck_report "$rc"
		check "wire teardown round $round: client objects released" \
			wait_for 10 objects_gone
	done
}

# The link's state after a failure, as "# net:" lines: whether the peer
# still answers, and where packets were dropped or held (qdisc, virtio
# queues, UDP, memory).
net_snapshot() {
	net_state | sed 's/^/# net: /'
}

net_state() {
	ip -s link show "$IF"
	tc -s qdisc show dev "$IF"
	ethtool -S "$IF" 2> /dev/null | grep -v ': 0$'
	nstat -az 2> /dev/null | grep -E '^Udp6?(InErrors|RcvbufErrors|SndbufErrors|NoPorts) '
	grep -E '^(MemAvailable|Slab):' /proc/meminfo
	rdma -dd res show qp 2> /dev/null
	device_counters
	busybox ping -c 2 -W 1 "$PEER4" 2>&1 | grep -E 'transmitted'
	ip neigh show dev "$IF"
	return 0
}

# Where the verbs processes and the QPs wait, for a command that hangs.
lab_snapshot() {
	local p cmd
	rdma -dd res show qp
	for p in $(pgrep -f 'ib_|ibv_|rping|ucmatose|udaddy'); do
		# Kernel threads are children of kthreadd (pid 2); an exiting
		# process has no command line left, only its name.
		[ "$(awk '/^PPid:/ { print $2 }' "/proc/$p/status" 2> /dev/null)" = 2 ] &&
			continue
		cmd=$(tr '\0' ' ' < "/proc/$p/cmdline" 2> /dev/null)
		[ -n "$cmd" ] || cmd="[$(cat "/proc/$p/comm" 2> /dev/null)]"
		echo "pid $p: $cmd"
		sed 's/^/  /' "/proc/$p/stack" 2> /dev/null
	done
	ss -tanp 2> /dev/null | grep -E ':18515|:4791' | sed 's/^/  /'
}

# lab_timeout SECS CMD: runs CMD (bash) for at most SECS seconds, printing
# its output; a second before the end the QPs and counters are saved in
# /tmp/lab_stuck, to show where a command that hangs waits.
lab_timeout() {
	local secs=$1 watch rc
	rm -f /tmp/lab_stuck
	( sleep $(($1 - 1)) && lab_snapshot > /tmp/lab_stuck 2>&1 ) \
		> /dev/null 2>&1 &
	watch=$!
	timeout "$secs" bash -c "$2" 2>&1
	rc=$?
	kill "$watch" 2> /dev/null
	wait "$watch" 2> /dev/null
	return $rc
}

# After a timeout: the snapshot, then the link's state, taken now (the
# snapshot must be quick: the timeout's end cuts it short).
lab_stuck_report() {	# lab_stuck_report STATUS
	[ "$1" -eq 124 ] || return 0
	[ -s /tmp/lab_stuck ] && sed 's/^/# stuck: /' /tmp/lab_stuck
	net_snapshot
	return 0
}

# Connection manager, UD and UC between the VMs with unmodified clients.
# cm_phases ROLE: ROLE "serve" or "drive"; both VMs walk the same phases
# in the same order, each phase on a port of its own. A phase is a
# barrier: the server side starts its command, waits until it listens
# and only then tells the client side so (peer_say), whose client starts
# when it has heard that word. A client tries again only when it was
# refused before it exchanged anything (3 tries); both sides must exit 0
# and print what proves the data arrived. A side that fails shows its
# last 40 lines: an error on stderr comes out before what a perftest
# buffered on stdout.

# cm_listening PORT: a TCP socket or an rdma_cm ID listens on PORT here.
cm_listening() {
	ss -Hltn "sport = :$1" 2> /dev/null | grep -q . && return 0
	rdma res show cm_id 2> /dev/null | grep 'state LISTEN' |
		grep -qE "[:.]$1( |$)"
}

cm_phase() {	# cm_phase ROLE NAME PATTERN PORT SERVER_CMD CLIENT_CMD
	local role=$1 name=$2 pat=$3 port=$4 out rc i srv word
	if [ "$role" = serve ]; then
		lab_timeout 120 "$5" > /tmp/cm_server.out 2>&1 &
		srv=$!
		for i in $(seq 1 600); do	# 60 s
			cm_listening "$port" && break
			sleep 0.1
		done
		if cm_listening "$port"; then
			peer_say "$PEER4" "cm$port" ||
				echo "# $name: the client side never heard that the server listens"
		else
			echo "# $name: the server did not listen on port $port within 60 s"
			peer_say "$PEER4" "no-cm$port"
		fi
		wait "$srv"
		rc=$?
		out=$(cat /tmp/cm_server.out)
		check "$name: server side ($D, status $rc)" \
			test "$rc" -eq 0 -a -n "$(grep -E -- "$pat" <<<"$out")"
		[ "$rc" -eq 0 ] || tail -n 40 <<<"$out" | sed 's/^/# /'
		lab_stuck_report "$rc"
		return
	fi
	word=$(peer_hear)
	if [ "$word" != "cm$port" ]; then
		check "$name: client side ($D): its server listens (heard '$word')" false
		return
	fi
	for i in 1 2 3; do
		out=$(lab_timeout 120 "$6")
		rc=$?
		# Only a client refused before any exchange tries again: one
		# that exchanged addresses with its server (perftest and the
		# pingpongs print the remote one) failed for another reason.
		[ "$rc" -eq 0 ] || [ "$rc" -eq 124 ] && break
		grep -qi 'remote address' <<<"$out" && break
		grep -qi 'connection refused' <<<"$out" || break
		echo "# $name: try $i refused"
		sleep 0.5
	done
	check "$name: client side ($D, status $rc)" \
		test "$rc" -eq 0 -a -n "$(grep -E -- "$pat" <<<"$out")"
	[ "$rc" -eq 0 ] || tail -n 40 <<<"$out" | sed 's/^/# /'
	lab_stuck_report "$rc"
}

# mcast_phase ROLE NAME GROUP: UD multicast between the VMs through
# rdma_cm (mckey): ROLE "serve" joins IPv4 GROUP and receives 10
# datagrams, ROLE "drive" sends them to the group once the receiver says
# it listens. Each side checks mckey's own "data transfers complete".
mcast_phase() {
	local role=$1 name=$2 group=$3 me4=192.0.2.$ME out rc word pid
	if [ "$role" = serve ]; then
		lab_timeout 90 "stdbuf -oL mckey -m $group -b $me4 -C 10" \
			> /tmp/mc_recv.out 2>&1 &
		pid=$!
		if wait_for 60 grep -q 'receiving data transfers' /tmp/mc_recv.out; then
			peer_say "$PEER4" "mc-$group"
		else
			peer_say "$PEER4" "no-mc"
		fi
		wait "$pid"
		rc=$?
		check "$name: the receiver joined and got 10 datagrams ($D, status $rc)" \
			test "$rc" -eq 0 -a -n "$(grep '^data transfers complete' /tmp/mc_recv.out)"
		[ "$rc" -eq 0 ] || tail -n 20 /tmp/mc_recv.out | sed 's/^/# /'
		ip maddr show dev "$IF" | sed 's/^/# maddr: /'
		return
	fi
	word=$(peer_hear)
	if [ "$word" != "mc-$group" ]; then
		check "$name: sender ($D): the receiver joined (heard '$word')" false
		return
	fi
	out=$(lab_timeout 90 "mckey -m $group -b $me4 -s -C 10")
	rc=$?
	check "$name: the sender sent 10 datagrams to the group ($D, status $rc)" \
		test "$rc" -eq 0 -a -n "$(grep '^data transfers complete' <<<"$out")"
	[ "$rc" -eq 0 ] || tail -n 20 <<<"$out" | sed 's/^/# /'
}

# A sroce side's RC traffic confirms its neighbour entry, as TCP's ACKs do
# (the peer's progress proves it reachable): with the entry's reachable
# time cut to 2 s (the kernel draws 1 to 3 s from it), 8 s of RDMA WRITEs
# between two perftests send no ARP probe from a sroce side (ip monitor
# sees the entry enter PROBE). Unconfirmed, the entry goes stale at most
# 3 s after the perftests' TCP exchange confirmed it and is probed 2 s
# later (delay_first_probe_time), within the 8 s. A probe is right only
# where the peer gave no progress to confirm with for those 2 s:
# - the stream stalled: the requester waited a retransmit timeout (its
#   "timeouts" counter moved; on the responder's side, which has no
#   timer, the requests sent again after it arrive as duplicates,
#   "duplicate_requests");
# - the peer fell silent: no packet arrived for 1.5 s or more before the
#   probe (a sampler reads rx_packets every 0.2 s), as when the debug
#   kernel's rdma_rxe requester pauses for seconds without losing anything.
# Each probe needs one of the two; the check says which.
neigh_stalls() {
	local c=/sys/class/infiniband/$D/ports/1/hw_counters
	echo $(($(cat $c/timeouts) + $(cat $c/duplicate_requests)))
}
neigh_short_start() {
	[ "$NDEV" = sroce ] || return 0
	local c=/sys/class/infiniband/$D/ports/1/hw_counters
	neigh_stalls0=$(neigh_stalls)
	neigh_saved=$(sysctl -n "net.ipv4.neigh.$IF.base_reachable_time_ms" \
		"net.ipv4.neigh.$IF.delay_first_probe_time" | tr '\n' ' ')
	sysctl -qw "net.ipv4.neigh.$IF.base_reachable_time_ms=2000" \
		"net.ipv4.neigh.$IF.delay_first_probe_time=2"
	ip -ts monitor neigh dev "$IF" > /tmp/neigh_monitor 2>&1 &
	neigh_monitor=$!
	while :; do
		echo "$(date +%T.%N) $(cat $c/rx_packets)"
		sleep 0.2
	done > /tmp/neigh_rx &
	neigh_sampler=$!
}
# neigh_silent_probes PEER MONITOR SAMPLES: how many of the monitor's
# PROBE lines for PEER came 1.5 s or more after rx_packets last moved.
# Times are seconds of the day (a run that crosses midnight counts none).
neigh_silent_probes() {
	awk -v peer="$1" '
	function sec(hms,   f) { split(hms, f, ":"); return f[1] * 3600 + f[2] * 60 + f[3] }
	FNR == NR { t[++n] = sec($1); rx[n] = $2; next }
	$2 == peer && / PROBE/ {
		tp = sec(substr($1, index($1, "T") + 1, length($1) - index($1, "T") - 1))
		j = 0
		for (i = 1; i <= n && t[i] <= tp; i++) j = i
		if (j == 0) next
		for (k = j; k > 1 && rx[k - 1] == rx[j]; k--) ;
		if (tp - t[k] >= 1.5) silent++
	}
	END { print silent + 0 }' "$3" "$2"
}
neigh_short_check() {	# neigh_short_check TAG
	[ "$NDEV" = sroce ] || return 0
	local probes stalls silent
	kill "$neigh_monitor" "$neigh_sampler"
	wait "$neigh_monitor" "$neigh_sampler" 2> /dev/null
	probes=$(grep -c "^\[[^]]*\] $PEER4 .* PROBE" /tmp/neigh_monitor)
	stalls=$(($(neigh_stalls) - neigh_stalls0))
	silent=$(neigh_silent_probes "$PEER4" /tmp/neigh_monitor /tmp/neigh_rx)
	if [ "$probes" -gt 0 ] && [ "$stalls" -gt 0 ]; then
		check "$1 ib_write_bw -D 8: the peer's neighbour entry was probed ($probes times) in a stream that stalled ($stalls retransmit timeouts and duplicate requests)" \
			true
	elif [ "$probes" -gt 0 ] && [ "$silent" -eq "$probes" ]; then
		check "$1 ib_write_bw -D 8: the peer's neighbour entry was probed ($probes times), each time after the peer sent nothing for 1.5 s or more" \
			true
	else
		check "$1 ib_write_bw -D 8: the peer's neighbour entry was not probed ($probes times, $silent after a silence of the peer)" \
			test "$probes" -eq 0
	fi
	[ "$probes" -eq 0 ] || sed 's/^/# neigh: /' /tmp/neigh_monitor | tail -n 8
	# shellcheck disable=SC2086 # two values, one word each
	set -- $neigh_saved
	sysctl -qw "net.ipv4.neigh.$IF.base_reachable_time_ms=$1" \
		"net.ipv4.neigh.$IF.delay_first_probe_time=$2"
}

# ACK coalescing (Documentation/architecture.rst): a responder sends one
# ACK for everything a pass executed, and counts each ACK request that ACK
# answered after the first (acks_coalesced). rdma_rxe asks for an ACK at
# the end of every message and its packets arrive in bursts, so a sroce
# responder of its ib_write_bw -D 8 must coalesce some (measured: 1923
# ACKs for 3967 messages). Between two sroce hosts a pass often holds one
# message (coalescing depends on arrival): printed, not checked.
acks_start() {
	acks_rx0=$(sroce_stat rx_packets)
	acks_tx0=$(sroce_stat tx_packets)
	acks_co0=$(sroce_stat acks_coalesced)
}
acks_check() {	# acks_check ROLE TAG
	[ "$NDEV" = sroce ] && [ "$1" = serve ] || return 0
	local mtu rx tx msgs co
	mtu=$(ibv_devinfo -d "$D" | awk '/active_mtu/ { print $2; exit }')
	rx=$(($(sroce_stat rx_packets) - acks_rx0))
	tx=$(($(sroce_stat tx_packets) - acks_tx0))
	co=$(($(sroce_stat acks_coalesced) - acks_co0))
	msgs=$((rx * mtu / 65536))
	echo "# $2 ib_write_bw -D 8: $tx packets sent for $msgs messages received ($rx packets), $co ACK requests coalesced"
	case $2 in
	rxe-\>*)
		check "$2 ib_write_bw -D 8: ACK requests coalesced ($co, $msgs messages)" \
			test "$msgs" -gt 100 -a "$co" -gt 0
		;;
	esac
}

# A user's kick runs its worker's passes in the kicking process when the
# worker serves only that user's QPs (Documentation/architecture.rst,
# The engine). The lab's hosts have one CPU, and QP1 (a kernel QP) is
# always there: the device's second worker keeps a ping-pong's QP apart
# from it, so none of the ping-pong's kicks is left to the worker.
kicks_start() {
	kicks0=$(sroce_stat kicks)
	kicks_deferred0=$(sroce_stat kicks_deferred)
}
kicks_check() {	# kicks_check NAME
	[ "$NDEV" = sroce ] || return 0
	local kicks deferred
	kicks=$(($(sroce_stat kicks) - kicks0))
	deferred=$(($(sroce_stat kicks_deferred) - kicks_deferred0))
	check "$1: none of the process's $kicks kicks was left to the worker for a kernel or another user's QP ($deferred)" \
		test "$kicks" -gt 0 -a "$deferred" -eq 0
}

# A third argument "no-flood" leaves out the UC phase of 1024-packet
# messages: sent to rdma_rxe, that flood (20480 packets at once, UC has no
# flow control) once stalled the lab link for over a minute.
# cm_next ROLE NAME PATTERN SERVER CLIENT: cm_phase on the next port of
# cm_phases' own range, which replaces {port} in SERVER and CLIENT.
cm_next() {
	p=$((p + 1))
	cm_phase "$1" "$2" "$3" "$p" "${4//\{port\}/$p}" "${5//\{port\}/$p}"
}

cm_phases() {	# cm_phases ROLE TAG [no-flood]
	local r=$1 tag=$2 me4=192.0.2.$ME
	local srv4=$me4 srv6=2001:db8::$ME p=19000
	if [ "$r" = drive ]; then srv4=$PEER4; srv6=2001:db8::$PEER; fi
	modprobe rdma_ucm
	cm_next "$r" "$tag rping -V IPv4" 'ping data: rdma-ping-19' \
		"rping -p {port} -s -a $srv4 -C 20 -V -v" "rping -p {port} -c -a $srv4 -C 20 -V -v"
	cm_next "$r" "$tag rping -V IPv6" 'ping data: rdma-ping-9' \
		"rping -p {port} -s -a $srv6 -C 10 -V -v" "rping -p {port} -c -a $srv6 -C 10 -V -v"
	# One connection: with two, a client that came too early can have its
	# first rejected and its second accepted, and the one-shot server
	# then fails when the exiting client rejects that second REP.
	cm_next "$r" "$tag ucmatose" 'return status 0' \
		"ucmatose -p {port} -b $srv4 -c 1 -C 20" "ucmatose -p {port} -s $srv4 -c 1 -C 20"
	# udaddy has no port option (-p is its port space): its own 7174.
	cm_phase "$r" "$tag udaddy" 'return status 0' 7174 \
		"udaddy -b $srv4 -c 2 -C 10" "udaddy -s $srv4 -c 2 -C 10"
	# The server's side receives: its group is 239.1.2.<server's host>.
	mcast_phase "$r" "$tag mckey" "239.1.2.$([ "$r" = drive ] && echo "$PEER" || echo "$ME")"
	cm_next "$r" "$tag ibv_ud_pingpong" 'iters in' \
		"ibv_ud_pingpong -p {port} -d $D -g $GID4 -n 100 -s 512" \
		"ibv_ud_pingpong -p {port} -d $D -g $GID4 -n 100 -s 512 $srv4"
	kicks_start
	cm_next "$r" "$tag ibv_uc_pingpong -c" 'iters in' \
		"ibv_uc_pingpong -p {port} -d $D -g $GID4 -n 100 -c" \
		"ibv_uc_pingpong -p {port} -d $D -g $GID4 -n 100 -c $srv4"
	kicks_check "$tag ibv_uc_pingpong -c"
	cm_next "$r" "$tag ib_send_bw -R" '^ *65536 +200 ' \
		"ib_send_bw -p {port} -d $D -R -F -n 200" "ib_send_bw -p {port} -d $D -R -F -n 200 $srv4"
	cm_next "$r" "$tag ibv_srq_pingpong -c (16 QPs, one SRQ)" 'iters in' \
		"ibv_srq_pingpong -p {port} -d $D -g $GID4 -n 100 -c" \
		"ibv_srq_pingpong -p {port} -d $D -g $GID4 -n 100 -c $srv4"
	# The one stream of RC SENDs without rdma_cm, whose timeout is
	# perftest's 14 (67 ms) instead of rdma_cm's longer one. A sroce
	# client queues more in that time than an rdma_rxe server on the debug
	# kernel can take; every timeout then resends what is queued, and
	# rdma_rxe drowns in duplicates until the client's retries run out
	# (IBV_WC_RETRY_EXC_ERR). -u 18: 1.07 s.
	cm_next "$r" "$tag ib_send_bw --use-srq" '^ *65536 +200 ' \
		"ib_send_bw -p {port} -d $D -x $GID4 --use-srq -F -n 200 -u 18" \
		"ib_send_bw -p {port} -d $D -x $GID4 --use-srq -F -n 200 -u 18 $srv4"
	cm_next "$r" "$tag ib_send_bw -c UD" '^ *1024 +200 ' \
		"ib_send_bw -p {port} -d $D -x $GID4 -c UD -F -n 200 -s 1024" \
		"ib_send_bw -p {port} -d $D -x $GID4 -c UD -F -n 200 -s 1024 $srv4"
	cm_next "$r" "$tag ib_write_bw -c UC" '^ *65536 +200 ' \
		"ib_write_bw -p {port} -d $D -x $GID4 -c UC -F -n 200" \
		"ib_write_bw -p {port} -d $D -x $GID4 -c UC -F -n 200 $srv4"
	# Each side asks for the other's maximum of outstanding READs/atomics
	# (rdma_rxe offers 128). -u 18 as above: 128 READs of 64 KiB are 8 MiB
	# that a timeout asks for again, which the debug kernel's rdma_rxe
	# answers for longer than 8 timeouts of 67 ms.
	cm_next "$r" "$tag ib_read_bw" '^ *65536 +200 ' \
		"ib_read_bw -p {port} -d $D -x $GID4 -F -n 200 -u 18" \
		"ib_read_bw -p {port} -d $D -x $GID4 -F -n 200 -u 18 $srv4"
	cm_next "$r" "$tag ib_atomic_bw" '^ *8 +200 ' \
		"ib_atomic_bw -p {port} -d $D -x $GID4 -F -n 200" \
		"ib_atomic_bw -p {port} -d $D -x $GID4 -F -n 200 $srv4"
	# -u 18 as above: a go-back storm against the debug kernel's rdma_rxe
	# stalls the stream for seconds, and a stalled stream rightly lets
	# the entry go to PROBE.
	neigh_short_start
	acks_start
	cm_next "$r" "$tag ib_write_bw -D 8" '^ *65536 +[0-9]+ ' \
		"ib_write_bw -p {port} -d $D -x $GID4 -F -D 8 -u 18" \
		"ib_write_bw -p {port} -d $D -x $GID4 -F -D 8 -u 18 $srv4"
	neigh_short_check "$tag"
	acks_check "$r" "$tag"
	# 1024 packets a message: more than an RC window, which UC has not.
	[ "${3:-}" = no-flood ] && return
	cm_next "$r" "$tag ib_write_bw -c UC 1 MiB at MTU 1024" \
		'^ *1048576 +20 ' \
		"ib_write_bw -p {port} -d $D -x $GID4 -c UC -F -n 20 -s 1048576 -m 1024" \
		"ib_write_bw -p {port} -d $D -x $GID4 -c UC -F -n 20 -s 1048576 -m 1024 $srv4"
}

# The storage phases (NVMe-oF, NFS, iSER, SRP).
# shellcheck source=tests/lab/storage-phases.sh
. "$(dirname "${BASH_SOURCE[0]}")/storage-phases.sh"
