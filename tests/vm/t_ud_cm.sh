# UD QPs and rdma_cm on one host: our ud_test program (IPv4 and IPv6 GIDs,
# privileged Q_Keys as root and as nobody, AHs without system calls), the
# unmodified rdma-core and perftest clients with their data checks, a
# connect nobody answers, teardown under traffic (kill -9, rdma link
# delete) and 150 connection setups and teardowns, after which
# `rdma resource show` and the driver's objects are back to the baseline
# (the kernel MAD layer's PD, CQ, QP1 and MR).
# vm-timeout: 420
# vm-checks: 187
. ./lib.sh
make_veth v0 1
rdma link add sroce0 type sroce netdev v0
modprobe rdma_ucm
# Second addresses: the sender's GID differs from the receiver's.
ip addr add 192.0.2.11/24 dev v0
ip -6 addr add 2001:db8::11/64 dev v0 nodad
LOG=$(mktemp -d)

for g in ::ffff:192.0.2.11 2001:db8::1 2001:db8::11; do
	wait_for 10 have_gid $g || echo "# no GID $g"
done
g4=$(gid_index ::ffff:192.0.2.1)
g4b=$(gid_index ::ffff:192.0.2.11)
g6=$(gid_index 2001:db8::1)
g6b=$(gid_index 2001:db8::11)
echo "# GIDs: IPv4 $g4, $g4b; IPv6 $g6, $g6b"
check_eq "GID 1 is ::ffff:192.0.2.1" 1 "$g4"

res_now() { rdma resource show | sed -n 's/^[0-9]*: sroce0: //p'; }
res0=$(res_now)
obj0=$(cat "$OBJECTS")
echo "# baseline: $res0 / $(echo $obj0)"
baseline_sane() { grep -q 'qp 1 .*ctx 0 ' <<<"$res0" && [ "$(objects qps)" = 1 ]; }
check "baseline: the MAD layer's QP1, no user context" baseline_sane
at_baseline() { [ "$(res_now)" = "$res0" ] && objects_at "$obj0"; }
check_baseline() {	# check_baseline WHEN
	if wait_for 10 at_baseline; then
		echo "ok - rdma resource show and objects at the baseline $1"
	else
		echo "not ok - rdma resource show and objects at the baseline $1:" \
			"'$(res_now)' / '$(echo $(cat "$OBJECTS"))'"
		failures=$((failures + 1))
	fi
}
gone() { ! kill -0 "$1" 2>/dev/null; }
n_lines() { grep -c -- "$2" "$PAIR_OUT/$1"; }

echo "# setup took $SECONDS s"
# --- ud_test: the UD semantics -------------------------------------------
timeout 60 "$T/ud_test" sroce0 "$g4" "$g4b"
check "ud_test, IPv4 GIDs ($g4b to $g4)" test $? -eq 0
timeout 60 "$T/ud_test" sroce0 "${g6:-2}" "${g6b:-4}"
check "ud_test, IPv6 GIDs ($g6b to $g6)" test $? -eq 0

ls -l /dev/infiniband/uverbs* | sed 's/^/# /'
setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
	timeout 30 "$T/ud_test" sroce0 1 qkey-priv > "$LOG/nobody" 2>&1
rc=$?
cat "$LOG/nobody"
check "ud_test qkey-priv as nobody finished" test $rc -eq 0
check_eq "as nobody, both privileged Q_Keys refused with EPERM" 2 \
	"$(grep -c '^ok - without CAP_NET_RAW.*refused with EPERM' "$LOG/nobody")"
timeout 30 "$T/ud_test" sroce0 1 qkey-priv > "$LOG/root" 2>&1
rc=$?
cat "$LOG/root"
check "ud_test qkey-priv as root finished" test $rc -eq 0
check_eq "as root, both privileged Q_Keys set" 2 \
	"$(grep -c '^ok - with CAP_NET_RAW' "$LOG/root")"

check "strace is there (scripts/setup installs it)" command -v strace
if command -v strace > /dev/null; then
	strace -f -o "$LOG/strace" -e trace=ioctl,write,writev,read \
		"$T/ud_test" sroce0 1 ah-syscalls > "$LOG/ah" 2>&1
	rc=$?
	calls=$(sed -n '/"ah-begin/,/"ah-end/p' "$LOG/strace" | grep -vc '"ah-')
	check "1000 AHs created and destroyed under strace" \
		test $rc -eq 0 -a "$(grep -c '^ok - 1000 AHs' "$LOG/ah")" = 1
	check_eq "strace saw both markers" 2 "$(grep -c 'write(1, "ah-' "$LOG/strace")"
	check_eq "creating and destroying 1000 AHs makes no system call" 0 "$calls"
fi

echo "# ud_test done at $SECONDS s"
# --- ibv_ud_pingpong ------------------------------------------------------
udpp() {	# udpp GID: 200 exchanges of 1024 B, buffers checked
	local r0=$(sroce_stat ud_received) q0=$(sroce_stat rx_drop_qkey) n0=$(sroce_stat rx_drop_no_recv)
	server_client "tcp_listening 18515" ibv_ud_pingpong -d sroce0 -g "$1" -s 1024 -n 200 -c \
		-- ibv_ud_pingpong -d sroce0 -g "$1" -s 1024 -n 200 -c 127.0.0.1
	pair_ok || return 1
	[ "$(n_lines srv '200 iters in')" = 1 ] && [ "$(n_lines cli '200 iters in')" = 1 ] ||
		{ echo "# no '200 iters in' line"; return 1; }
	! grep -qi 'invalid data' "$PAIR_OUT/srv" "$PAIR_OUT/cli" || { echo "# data check failed"; return 1; }
	local r=$(( $(sroce_stat ud_received) - r0 ))
	[ "$r" -ge 400 ] || { echo "# ud_received grew by $r"; return 1; }
	[ "$(sroce_stat rx_drop_qkey)" = "$q0" ] && [ "$(sroce_stat rx_drop_no_recv)" = "$n0" ] ||
		{ echo "# datagrams dropped"; return 1; }
}
check "ibv_ud_pingpong -c, IPv4 (both sides, 400+ datagrams counted, none dropped)" udpp "$g4"
check "ibv_ud_pingpong -c, IPv6" udpp "${g6:-2}"

# --- rdma_cm clients --------------------------------------------------------
rping_pair() {	# rping_pair ADDR: 20 validated pings of 4000 B
	server_client "listening rping" rping -s -a "$1" -C 20 -S 4000 -V -v \
		-- rping -c -a "$1" -C 20 -S 4000 -V -v
	pair_ok || return 1
	[ "$(n_lines cli '^ping data: rdma-ping-')" = 20 ] &&
		[ "$(n_lines srv '^server ping data: rdma-ping-')" = 20 ] &&
		grep -q '^ping data: rdma-ping-19: ' "$PAIR_OUT/cli" &&
		! grep -qiE 'mismatch|fail' "$PAIR_OUT/srv" "$PAIR_OUT/cli" ||
		{ echo "# pings: $(n_lines cli '^ping data') client, $(n_lines srv '^server ping data') server"
		  grep -iE 'mismatch|fail' "$PAIR_OUT/srv" "$PAIR_OUT/cli" | head -n 5 | sed 's/^/#   /'
		  return 1; }
}
check "rping -V -C 20 -S 4000, IPv4 (20 pings validated on both sides)" rping_pair 192.0.2.1
check "rping -V -C 20 -S 4000, IPv6" rping_pair 2001:db8::1

cmatose() {	# cmatose TOOL ADDR ARGS...: both sides report success
	server_client "listening $1" "$1" -b "$2" "${@:3}" -- "$1" -s "$2" "${@:3}"
	pair_ok || return 1
	local f
	for f in srv cli; do
		[ "$(n_lines $f '^data transfers complete')" = 1 ] &&
			[ "$(n_lines $f '^return status 0')" = 1 ] ||
			{ echo "# $f: no 'data transfers complete'/'return status 0'"; return 1; }
	done
}
check "ucmatose -c 4 -C 20 -S 2000, IPv4" cmatose ucmatose 192.0.2.1 -c 4 -C 20 -S 2000
check "ucmatose -c 2 -C 10, IPv6" cmatose ucmatose 2001:db8::1 -c 2 -C 10
check "udaddy -c 4 -C 20, IPv4 (UD through SIDR, replies through the GRH)" \
	cmatose udaddy 192.0.2.1 -c 4 -C 20
check "udaddy -c 2 -C 10, IPv6" cmatose udaddy 2001:db8::1 -c 2 -C 10

mckey_pair() {	# mckey_pair BIND GROUP: 10 datagrams through a multicast group
	server_client "grep -q 'receiving data transfers' $PAIR_OUT/srv" \
		stdbuf -oL mckey -m "$2" -b "$1" -C 10 -- \
		mckey -m "$2" -b "$1" -s -C 10
	pair_ok || return 1
	grep -q '^data transfers complete' "$PAIR_OUT/srv" &&
		grep -q '^data transfers complete' "$PAIR_OUT/cli" ||
		{ echo "# mckey: no 'data transfers complete'"; return 1; }
}
check "mckey, IPv4 group 239.1.2.3 (attach, 10 datagrams, detach)" \
	mckey_pair 192.0.2.1 239.1.2.3
# No IPv6 mckey: the kernel's rdma_cm refuses IPv6 multicast joins on
# RoCEv2 (ENOTSUPP in cma_iboe_join_multicast); ud_test attaches IPv6 groups
# through verbs instead.

rdma_srv_cli() {
	server_client "listening rdma_server" rdma_server -s 192.0.2.1 -- rdma_client -s 192.0.2.1
	pair_ok && grep -q '^rdma_server: end 0' "$PAIR_OUT/srv" &&
		grep -q '^rdma_client: end 0' "$PAIR_OUT/cli"
}
check "rdma_server / rdma_client (end 0 on both sides)" rdma_srv_cli

rstream_pair() {	# 1000 transfers of 4 KiB over rsockets, verified
	server_client "listening rstream" rstream -b 192.0.2.1 -S 4096 -C 1000 -T v \
		-- rstream -s 192.0.2.1 -S 4096 -C 1000 -T v
	pair_ok && grep -qE '^custom +4k +1k ' "$PAIR_OUT/srv" &&
		grep -qE '^custom +4k +1k ' "$PAIR_OUT/cli" &&
		! grep -qi mismatch "$PAIR_OUT/srv" "$PAIR_OUT/cli"
}
check "rstream -T v (verified data, result line on both sides)" rstream_pair

# perftest_both TOOL ARGS...: perftest (tests/vm/lib.sh), the server's
# result line too.
perftest_both() {
	perftest "$@" && grep -qE '^ *[0-9]+ +[0-9]+ +[0-9.]+' "$PAIR_OUT/srv" ||
		{ echo "# no result line on both sides"; return 1; }
}
for t in ib_send_bw ib_write_bw ib_read_bw ib_send_lat ib_write_lat; do
	check "$t -R" perftest_both $t -R
done
check "ib_send_bw -c UD -a" perftest_both ib_send_bw -c UD -a -n 50
check "ib_send_lat -c UD" perftest_both ib_send_lat -c UD -s 1024
check "ib_send_bw -c UD -R" perftest_both ib_send_bw -c UD -R
# UC on the shortcut: every message must land (nothing is lost here).
ucpp() {	# ucpp SIZE: 200 exchanges, buffers checked
	server_client "tcp_listening 18515" ibv_uc_pingpong -d sroce0 -g "$g4" -s "$1" -n 200 -c \
		-- ibv_uc_pingpong -d sroce0 -g "$g4" -s "$1" -n 200 -c 127.0.0.1
	pair_ok || return 1
	[ "$(n_lines srv '200 iters in')" = 1 ] && [ "$(n_lines cli '200 iters in')" = 1 ] ||
		{ echo "# no '200 iters in' line"; return 1; }
	! grep -qi 'invalid data' "$PAIR_OUT/srv" "$PAIR_OUT/cli" || { echo "# data check failed"; return 1; }
}
check "ibv_uc_pingpong -c, 4 KiB (both sides)" ucpp 4096
check "ibv_uc_pingpong -c, 64 KiB" ucpp 65536
check "ib_send_bw -c UC" perftest_both ib_send_bw -c UC
check "ib_write_bw -c UC" perftest_both ib_write_bw -c UC
check_baseline "after the clients"

echo "# clients done at $SECONDS s"
# --- a connect nobody answers ---------------------------------------------
rejected() {	# rejected ADDR: rping to port 9999 fails, REJECTED, within 10 s
	local t0=$(date +%s%N) rc el
	timeout 20 rping -c -a "$1" -p 9999 -C 1 > "$LOG/rej" 2>&1
	rc=$?
	el=$(( ($(date +%s%N) - t0) / 1000000 ))
	echo "# rping to $1:9999: exit $rc after $el ms: $(head -n 1 "$LOG/rej")"
	[ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $el -lt 10000 ] &&
		grep -q 'RDMA_CM_EVENT_REJECTED' "$LOG/rej"
}
check "rping to a port nobody listens on is rejected within 10 s, IPv4" rejected 192.0.2.1
check "and IPv6" rejected 2001:db8::1

# --- teardown under traffic -----------------------------------------------
# (No timeout(1) around what gets killed: kill -9 would hit timeout only.)
# kill -9 an ib_send_bw -R client mid-run: its resources go, the server's
# connection is disconnected by the CM (perftest's server itself keeps
# polling for a peer that is gone, so it is killed afterwards).
ib_send_bw -d sroce0 -x 1 -F -R -D 30 > "$PAIR_OUT/srv" 2>&1 &
srv=$!
wait_for 10 listening ib_send_bw
ib_send_bw -d sroce0 -x 1 -F -R -D 30 192.0.2.1 > "$PAIR_OUT/cli" 2>&1 &
cli=$!
connected() { rdma res show cm_id | grep -q "state CONNECT .*pid $cli "; }
check "ib_send_bw -R connected" wait_for 10 connected
sleep 2
w0=$(sroce_stat wqes)
sleep 0.5
check "and traffic flows" test "$(sroce_stat wqes)" -gt "$w0"
kill -9 $cli
wait $cli 2>/dev/null
disconnected() {
	! rdma res show cm_id | grep -qE "state CONNECT |pid $cli " &&
		[ "$(rdma res show cm_id | grep -c "state DISCONNECT .*pid $srv ")" -ge 1 ]
}
check "after kill -9 of the client, its cm_ids are gone and the server's disconnected within 10 s" \
	wait_for 10 disconnected
rdma res show cm_id | sed 's/^/# /'
kill -9 $srv
wait $srv 2>/dev/null
check_baseline "after kill -9 under ib_send_bw -R"

# rping_forever WHAT: a long rping pair; sets srv and cli, checks it pings.
rping_forever() {
	rping -s -a 192.0.2.1 -C 1000000 -S 200 -V > "$PAIR_OUT/srv" 2>&1 &
	srv=$!
	wait_for 10 listening rping
	rping -c -a 192.0.2.1 -C 1000000 -S 200 -V -v > "$PAIR_OUT/cli" 2>&1 &
	cli=$!
	sleep 3
	check "rping is pinging $1" test "$(n_lines cli '^ping data')" -gt 0
}

# kill -9 an rping client mid-run: the server sees the disconnect and exits.
rping_forever "before the kill"
kill -9 $cli
wait $cli 2>/dev/null
check "after kill -9 of the rping client, the server exits within 10 s" wait_for 10 gone $srv
kill -9 $srv 2>/dev/null
wait $srv 2>/dev/null
check_baseline "after kill -9 under rping"

echo "# teardown under traffic done at $SECONDS s"
# --- connection setups and teardowns ----------------------------------------
rounds=${SROCE_TEST_CM_ROUNDS:-100}
t0=$SECONDS
rping -s -P -a 192.0.2.1 -S 64 -V > "$PAIR_OUT/psrv" 2>&1 &
srv=$!
wait_for 10 listening rping
: > "$PAIR_OUT/pcli"
bad=0
for i in $(seq "$rounds"); do
	timeout 20 rping -c -a 192.0.2.1 -C 1 -S 64 -V -v >> "$PAIR_OUT/pcli" 2>&1 ||
		bad=$((bad + 1))
done
check_eq "$rounds rping connections (persistent server), all exit 0" 0 "$bad"
check_eq "and each validated its ping" "$rounds" "$(n_lines pcli '^ping data: rdma-ping-0: ')"
kill $srv
wait $srv 2>/dev/null
bad=0
for i in $(seq $((rounds / 20))); do
	timeout 30 ucmatose -b 192.0.2.1 -c 10 -C 1 > "$PAIR_OUT/srv" 2>&1 &
	s=$!
	wait_for 10 listening ucmatose
	timeout 30 ucmatose -s 192.0.2.1 -c 10 -C 1 > "$PAIR_OUT/cli" 2>&1 || bad=$((bad + 1))
	wait $s || bad=$((bad + 1))
	grep -q '^return status 0' "$PAIR_OUT/cli" || bad=$((bad + 1))
done
check_eq "$((rounds / 2)) ucmatose connections in rounds of 10" 0 "$bad"
echo "# $((rounds * 3 / 2)) connections set up and torn down in $((SECONDS - t0)) s"
check_baseline "after $((rounds * 3 / 2)) connections"

# --- rdma link delete under rping -------------------------------------------
rping_forever "before the delete"
check "rdma link delete under rping" timeout 30 rdma link delete sroce0
both_gone() { gone $srv && gone $cli; }
check "both rping sides exit within 10 s of the delete" wait_for 10 both_gone
grep -h -i 'removal' "$PAIR_OUT/srv" "$PAIR_OUT/cli" | sort | uniq -c | sed 's/^/# /'
kill -9 $srv $cli 2>/dev/null
wait $srv $cli 2>/dev/null
check "no objects left after the delete" wait_for 10 objects_zero
check "and no driver object at all" wait_for 10 sh -c \
	'[ "$(awk "{ s += \$2 } END { print s }" '"$OBJECTS"')" = 0 ]'
rm -rf "$LOG"
echo "# t_ud_cm took $SECONDS s"
finish
