# Teardown under load, many times: each cycle adds sroce0, starts
# ib_write_bw and ib_send_bw on 4 QPs each and a PD allocator, then after a
# random moment removes everything by rdma link delete, netdev removal,
# rmmod or SIGKILL of the processes (in turn), once the traffic is seen
# running (every process alive, the wqes counter moving). Counted over
# SROCE_TEST_TEARDOWN_CYCLES cycles (default 6; make check-debug runs 30):
# removals that hung, processes that SIGKILL could not end within 10 s
# (stuck in the kernel), and objects left. Then a fresh device carries
# verified RC traffic.
# vm-checks: 11
. ./lib.sh
cycles=${SROCE_TEST_TEARDOWN_CYCLES:-6}
hung=0 stuck=0 leaked=0 idle=0
for i in $(seq 1 "$cycles"); do
	modprobe sroce
	make_veth v0 1
	rdma link add sroce0 type sroce netdev v0
	wait_for 10 have_gid ::ffff:192.0.2.1
	base=$(cat "$OBJECTS")
	pids=()
	for bw in ib_write_bw ib_send_bw; do
		$bw -d sroce0 -x 1 -F -D 5 -q 4 -p "$((18515 + ${#pids[@]}))" \
			> /dev/null 2>&1 &
		pids+=($!)
	done
	# The clients once their servers listen (the debug kernel is slow).
	wait_for 20 tcp_listening 18515
	wait_for 20 tcp_listening 18516
	for bw in ib_write_bw ib_send_bw; do
		$bw -d sroce0 -x 1 -F -D 5 -q 4 -p "$((18513 + ${#pids[@]}))" \
			127.0.0.1 > /dev/null 2>&1 &
		pids+=($!)
	done
	"$T/pd_loop" sroce0 100000 50 > /dev/null 2>&1 &
	pids+=($!)
	sleep "$((RANDOM % 3)).$((RANDOM % 10))"
	# The load is there when the teardown comes: every process alive
	# and the engine's WQE count moving.
	if ! kill -0 "${pids[@]}" || ! stat_moving wqes 5; then
		idle=$((idle + 1))
	fi
	case $((i % 4)) in
	0) timeout 30 rdma link delete sroce0 || hung=$((hung + 1)) ;;
	1) timeout 30 ip link del v0 || hung=$((hung + 1)) ;;
	2) timeout 30 rmmod sroce || hung=$((hung + 1)) ;;
	3) kill -9 "${pids[@]}" 2>/dev/null
	   wait_for 30 objects_at "$base" || leaked=$((leaked + 1))
	   timeout 30 rdma link delete sroce0 || hung=$((hung + 1)) ;;
	esac
	# Whatever was removed, no process is stuck in the kernel.
	kill -9 "${pids[@]}" 2>/dev/null
	for p in "${pids[@]}"; do
		wait_for 10 ended "$p" || stuck=$((stuck + 1))
	done
	wait "${pids[@]}" 2>/dev/null
	if module_loaded; then
		wait_for 10 no_objects || leaked=$((leaked + 1))
	fi
	rdma link delete sroce0 2>/dev/null
	ip link del v0 2>/dev/null
done
check_eq "traffic ran at each of the $cycles teardowns" 0 "$idle"
check_eq "no removal hung in $cycles cycles" 0 "$hung"
check_eq "every process could be killed after its device went away" 0 "$stuck"
check_eq "no object was left behind" 0 "$leaked"
make_veth v0 1
rdma link add sroce0 type sroce netdev v0
wait_for 10 have_gid ::ffff:192.0.2.1
"$T/rc_integrity" sroce0 "$(gid_index ::ffff:192.0.2.1)" 4 40 "$RANDOM" $((256 << 10))
check "then a fresh device carries verified RC traffic" [ $? -eq 0 ]
check "rdma link delete is prompt" timeout 20 rdma link delete sroce0
check "rmmod after the cycles" timeout 30 rmmod sroce
finish
