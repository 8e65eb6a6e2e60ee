# A local user who lies to the kernel: SQ producer indices nobody could
# have written while WQEs are in flight, an SQD address change from the
# wire to the shortcut, shortcut QPs aimed at other users' QPs by number,
# mmap of a ring racing its resize and destroy, and kill -9 mid-step.
# vm-checks: 49
. ./lib.sh
peer_netns quiet 2001:db8::2
rdma link add sroce0 type sroce netdev v0
base=$(cat "$OBJECTS")

check "sroce0 has the GID 2001:db8::1" wait_for 10 have_gid 2001:db8::1
gidx=$(gid_index 2001:db8::1)

# run_bounded SECONDS CMD...: runs CMD in the background, prints its
# output, and checks that it exited with status 0 within SECONDS; a
# D-state hang fails that check instead of the whole run (the process is
# left behind, never waited for).
run_bounded() {
	local secs=$1 out pid rc
	shift
	rc="no exit within $secs s"
	out=$(mktemp)
	"$@" > "$out" 2>&1 &
	pid=$!
	if wait_for "$secs" ended "$pid"; then
		wait "$pid"
		rc=$?
	fi
	cat "$out"
	rm -f "$out"
	check_eq "hostile_user ${*:2:1} ${*:6:1} exits with status 0 within $secs s" \
		0 "$rc"
}

for way in back forward; do
	r0=$(sroce_stat qp_ring_errors)
	run_bounded 30 "$T/hostile_user" producer sroce0 "$gidx" 2001:db8::2 $way
	check_eq "the producer moved $way counts one ring error" \
		1 $(($(sroce_stat qp_ring_errors) - r0))
	check "objects are back to the baseline" wait_for 10 objects_at "$base"
done

# Send queues only a completion can move on: the workers must sleep.
# worker_switches: the context switches (voluntary or not) of every sroce
# worker thread so far; a worker that sleeps and is not woken makes none.
worker_switches() {
	local p
	for p in $(pgrep '^sroce/'); do
		awk '/ctxt_switches:/ { s += $2 } END { print s + 0 }' "/proc/$p/status"
	done | awk '{ s += $1 } END { print s + 0 }'
}
# workers_asleep: every sroce worker thread is sleeping (state S).
workers_asleep() {
	local p
	for p in $(pgrep '^sroce/'); do
		grep -q '^State:[[:space:]]*S' "/proc/$p/status" || return 1
	done
}
rm -f /tmp/blocked.fifo
mkfifo /tmp/blocked.fifo
"$T/hostile_user" blocked sroce0 "$gidx" 2001:db8::2 < /tmp/blocked.fifo \
	> /tmp/blocked.out 2>&1 &
pid=$!
exec 7> /tmp/blocked.fifo
check "the blocked send queues are set up" wait_for 20 grep -q '^ready' /tmp/blocked.out
sleep 1
s0=$(worker_switches)
asleep=0
for i in 1 2 3 4 5 6 7 8; do
	sleep 0.5
	workers_asleep && asleep=$((asleep + 1))
done
woke=$(($(worker_switches) - s0))
echo "# sroce workers switched $woke times in 4 s; asleep at $asleep of 8 looks"
check "the workers sleep while the send queues are blocked" \
	test "$asleep" -eq 8 -a "$woke" -le 20
echo >&7
exec 7>&-
check "hostile_user blocked finishes within 20 s" \
	wait_for 20 sh -c "! kill -0 $pid 2>/dev/null"
grep -v '^ready' /tmp/blocked.out
check "objects are back to the baseline" wait_for 10 objects_at "$base"

run_bounded 30 "$T/hostile_user" sqd sroce0 "$gidx" 2001:db8::2
check "objects are back to the baseline" wait_for 10 objects_at "$base"

p0=$(sroce_stat shortcut_drop_peer)
run_bounded 60 "$T/hostile_user" shortcut sroce0 "$gidx" 2001:db8::2
check "the attackers' messages were dropped as not from the peer" \
	[ $(($(sroce_stat shortcut_drop_peer) - p0)) -ge 2 ]
check "objects are back to the baseline" wait_for 10 objects_at "$base"

run_bounded 120 "$T/hostile_user" mmap sroce0 200
check "objects are back to the baseline" wait_for 10 objects_at "$base"

# kill -9 at random points of the producer scenario.
for i in 1 2 3 4 5 6; do
	"$T/hostile_user" producer sroce0 "$gidx" 2001:db8::2 back > /dev/null 2>&1 &
	pid=$!
	sleep "0.$((RANDOM % 10))$((i % 2 * 5))"
	kill -9 $pid 2>/dev/null
	wait $pid 2>/dev/null
done
check "after kill -9 at random steps, every object goes" \
	wait_for 20 objects_at "$base"
check "rdma link delete is prompt" timeout 20 rdma link delete sroce0
ip netns del quiet
finish
