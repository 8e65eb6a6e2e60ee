# Teardown under traffic: a process killed mid-transfer, rdma link delete,
# netdev removal and rmmod while ib_write_bw runs. No hang, no leak, and
# the kernel log stays clean (vm-run checks it). Before each teardown the
# traffic is shown running: both processes alive, the wqes counter moving.
# vm-checks: 15
. ./lib.sh
start_traffic() {
	timeout 60 ib_write_bw -d sroce0 -x 1 -F -D 30 -q 2 > /dev/null 2>&1 &
	srv=$!
	wait_for 10 tcp_listening 18515
	timeout 60 ib_write_bw -d sroce0 -x 1 -F -D 30 -q 2 127.0.0.1 > /dev/null 2>&1 &
	cli=$!
	sleep 3
}
for how in kill link ndev rmmod; do
	make_veth v0 1
	rdma link add sroce0 type sroce netdev v0
	base=$(cat "$OBJECTS")
	start_traffic
	check "$how: both ib_write_bw sides run" kill -0 "$srv" "$cli"
	check "$how: their WQEs move just before the teardown" \
		stat_moving wqes 5
	case $how in
	kill) pkill -9 -x ib_write_bw ;;
	link) check "rdma link delete under traffic" timeout 30 rdma link delete sroce0 ;;
	ndev) check "ip link del under traffic" timeout 30 ip link del v0 ;;
	rmmod) check "rmmod under traffic" timeout 30 rmmod sroce ;;
	esac
	wait $cli $srv 2>/dev/null
	if [ $how = rmmod ]; then
		check "module gone after rmmod under traffic" module_unloaded
	elif [ $how = kill ]; then	# the device stays, with its MAD objects
		check "no objects left after $how under traffic" wait_for 10 objects_at "$base"
	else
		check "no objects left after $how under traffic" wait_for 10 no_objects
	fi
	rdma link delete sroce0 2>/dev/null
	ip link del v0 2>/dev/null
done
finish
