# RC data path on the same host (the shortcut): our integrity program over
# every opcode, every operation of the ibv_wr_* API (wr_ops), ATOMIC_WRITE
# (atomic_write), unmodified
# ibv_rc_pingpong and perftest clients; packets handed over to a QP of the
# running worker and, with the switch shortcut_hand_over=0 (debugfs),
# queued as descriptors.
# vm-checks: 141
. ./lib.sh
make_veth v0 1
rdma link add sroce0 type sroce netdev v0
HAND_OVER=$(sroce_switch shortcut_hand_over)
base=$(cat "$OBJECTS")
h0=$(sroce_stat shortcut_hand_overs) a0=$(sroce_stat shortcut_answers_back)
r0=$(sroce_stat retransmits) t0=$(sroce_stat timeouts)
"$T/rc_integrity" sroce0 1 4 150 "$RANDOM" $((1 << 20))
check "rc_integrity (IPv4 GID, 4 pairs, 1 MiB max)" test $? -eq 0
check "packets were handed over ($h0 -> $(sroce_stat shortcut_hand_overs))" \
	test "$(sroce_stat shortcut_hand_overs)" -gt "$h0"
check "ACKs came back with them ($a0 -> $(sroce_stat shortcut_answers_back))" \
	test "$(sroce_stat shortcut_answers_back)" -gt "$a0"
# Nothing is lost or reordered on the shortcut: an ACK that overtook a
# READ response, or one left behind, would show as a resend or a timeout.
check_eq "no resend on the shortcut" "$r0 $t0" \
	"$(sroce_stat retransmits) $(sroce_stat timeouts)"
echo 0 > "$HAND_OVER"
h0=$(sroce_stat shortcut_hand_overs) a0=$(sroce_stat shortcut_answers_back)
"$T/rc_integrity" sroce0 1 4 100 "$RANDOM" $((1 << 20))
check "rc_integrity, descriptors only (shortcut_hand_over=0)" test $? -eq 0
"$T/rd_depth" sroce0 1
check "rd_depth, descriptors only" test $? -eq 0
check_eq "nothing handed over with shortcut_hand_over=0" "$h0 $a0" \
	"$(sroce_stat shortcut_hand_overs) $(sroce_stat shortcut_answers_back)"
echo 1 > "$HAND_OVER"
gid6=$(ibv_devinfo -v -d sroce0 | awk '/GID\[/ && /2001:db8/ {
	match($0, /GID\[ *[0-9]+\]/); s = substr($0, RSTART, RLENGTH)
	gsub(/[^0-9]/, "", s); print s; exit }')
"$T/rc_integrity" sroce0 "${gid6:-2}" 1 100 "$RANDOM" $((8 << 20))
check "rc_integrity (IPv6 GID, 1 pair, up to 8 MiB)" test $? -eq 0
"$T/rc_threads" sroce0 1 4 2000 "$RANDOM"
check "rc_threads (4 threads post to one QP, ibv_post_send and ibv_wr_*)" test $? -eq 0
"$T/wr_ops" sroce0 1
check "wr_ops: every ibv_wr_* operation, FENCE, solicited events, an MR at its own iova" \
	test $? -eq 0
a0=$(sroce_stat shortcut_answers_back)
"$T/atomic_write" sroce0 1
check "atomic_write: ATOMIC_WRITE's bytes and completions, its refusals" test $? -eq 0
check "ATOMIC_WRITE's empty READ responses came back with their hand-overs ($a0 -> $(sroce_stat shortcut_answers_back))" \
	test "$(sroce_stat shortcut_answers_back)" -ge $((a0 + 30))
echo 0 > "$HAND_OVER"
"$T/atomic_write" sroce0 1
check "atomic_write, descriptors only (shortcut_hand_over=0)" test $? -eq 0
echo 1 > "$HAND_OVER"
r0=$(sroce_stat retransmits) t0=$(sroce_stat timeouts)
"$T/rd_depth" sroce0 1
check "rd_depth (the device's READs and atomics in flight at once, data checked)" test $? -eq 0
check_eq "rd_depth: no resend, so no ACK overtook a READ response" "$r0 $t0" \
	"$(sroce_stat retransmits) $(sroce_stat timeouts)"

pingpong() {	# pingpong ARGS...: server and client, both must succeed
	timeout 60 ibv_rc_pingpong -d sroce0 -g 1 "$@" > /tmp/pp-srv.log 2>&1 &
	local srv=$!
	sleep 1
	timeout 60 ibv_rc_pingpong -d sroce0 -g 1 "$@" 127.0.0.1 > /tmp/pp-cli.log 2>&1
	local rc=$?
	wait $srv
	local srv_rc=$?
	[ $rc -eq 0 ] && [ $srv_rc -eq 0 ] && grep -q 'iters in' /tmp/pp-cli.log
}
check "ibv_rc_pingpong -c (buffer contents checked)" pingpong -n 200 -c
check "ibv_rc_pingpong -e (completion events)" pingpong -n 200 -e
check "ibv_rc_pingpong -s 65536 -c" pingpong -n 50 -s 65536 -c
check "ibv_rc_pingpong -N (the ibv_wr_* API)" pingpong -n 200 -N -c

for t in ib_write_bw ib_read_bw ib_send_bw; do
	check "$t -a" perftest $t -a -n 20
done
a0=$(sroce_stat shortcut_answers_back)
check "ib_atomic_bw" perftest ib_atomic_bw -n 200
# A stream: each atomic's ACK comes back inside its hand-over and is taken
# before the next atomic goes.
check "most of a stream's atomic ACKs came back with their hand-overs ($a0 -> $(sroce_stat shortcut_answers_back))" \
	test "$(sroce_stat shortcut_answers_back)" -ge $((a0 + 150))
for t in ib_write_lat ib_read_lat ib_send_lat; do
	check "$t -a" perftest $t -a -n 20
done
a0=$(sroce_stat shortcut_answers_back)
check "ib_atomic_lat" perftest ib_atomic_lat -n 200
# One atomic at a time: its ACK comes back inside the hand-over.
check "most atomic ACKs came back with their hand-over ($a0 -> $(sroce_stat shortcut_answers_back))" \
	test "$(sroce_stat shortcut_answers_back)" -ge $((a0 + 100))
check "ib_write_bw, 4 QPs" perftest ib_write_bw -q 4 -n 200
check "no objects left" wait_for 10 objects_at "$base"
finish
