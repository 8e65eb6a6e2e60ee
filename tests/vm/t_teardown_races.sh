# Teardown under load: while processes allocate and free PDs, the device is
# removed by rdma link delete, by netdev removal or by killing the
# processes; rounds repeat. The kernel log must stay clean (vm-run checks
# it) and no object may leak.
# vm-checks: 4
. ./lib.sh
rounds=${SROCE_TEST_RACE_ROUNDS:-12}
bad=0 idle=0
pds_changed_from() { [ "$(objects pds)" != "$1" ]; }
for i in $(seq 1 "$rounds"); do
	make_veth v0 1
	rdma link add sroce0 type sroce netdev v0 || bad=$((bad + 1))
	pids=()
	for j in 1 2 3; do
		"$T/pd_loop" sroce0 100000 50 > /dev/null 2>&1 &
		pids+=($!)
	done
	sleep 0.$((RANDOM % 9 + 1))
	# The allocators run when the teardown comes: alive, the PD count
	# changing.
	if ! kill -0 "${pids[@]}" ||
	   ! wait_for 5 pds_changed_from "$(objects pds)"; then
		idle=$((idle + 1))
	fi
	case $((i % 3)) in
	0) timeout 20 rdma link delete sroce0 || bad=$((bad + 1)) ;;
	1) timeout 20 ip link del v0 || bad=$((bad + 1)) ;;
	2) kill -9 "${pids[@]}" 2>/dev/null
	   timeout 20 rdma link delete sroce0 || bad=$((bad + 1)) ;;
	esac
	wait_for 10 dev_absent sroce0 || bad=$((bad + 1))
	kill -9 "${pids[@]}" 2>/dev/null
	wait "${pids[@]}" 2>/dev/null
	ip link del v0 2>/dev/null
done
check_eq "the allocators ran at each of the $rounds teardowns" 0 "$idle"
check_eq "every round's removal completed" 0 "$bad"
check "no objects leaked" wait_for 10 objects_zero
check "rmmod after the races" timeout 30 rmmod sroce
finish
