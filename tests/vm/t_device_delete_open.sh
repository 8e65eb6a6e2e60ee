# rdma link delete completes while a process holds the device open: the
# process is told (DEVICE_FATAL), its objects are torn down, nothing leaks.
# vm-checks: 14
. ./lib.sh
make_veth v0 1
rdma link add sroce0 type sroce netdev v0
pds0=$(objects pds)	# the kernel MAD layer's
out=$(mktemp)
"$T/hold_open" sroce0 30 > "$out" 2>&1 &
pid=$!
check "holder is ready" wait_line "$out" ready 10
check_eq "holder's PD is live" $((pds0 + 1)) "$(objects pds)"
check "rdma link delete completes with the device open" timeout 20 rdma link delete sroce0
check "sroce0 gone" dev_absent sroce0
check "holder's context and PD were torn down" objects_zero
wait $pid
rc=$?
sed 's/^/holder: /' "$out"
check "holder saw the removal and closed cleanly" test $rc -eq 0
check "rmmod afterwards" rmmod sroce

# A kick queued on a thread that never returns to user space (asleep in
# io_submit after an AIO completion signalled the kick eventfd) holds
# nothing a removal waits for; only the module stays (rmmod refuses).
rdma link add sroce0 type sroce netdev v0
"$T/kick_stuck" sroce0 > "$out" 2>&1 &
pid=$!
check "kick_stuck is ready" wait_line "$out" ready 10
check "rdma link delete completes while that kick is queued" \
	timeout 20 rdma link delete sroce0
check "sroce0 gone" dev_absent sroce0
check "its objects were torn down" objects_zero
check "the queued kick holds the module" \
	test "$(cat /sys/module/sroce/refcnt)" -ge 1
check "rmmod refuses at once meanwhile" sh -c '! timeout 10 rmmod sroce'
kill -9 "$pid"
wait "$pid" 2> /dev/null
check "once the thread is gone, rmmod works" wait_for 10 rmmod sroce
finish
