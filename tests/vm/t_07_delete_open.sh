# rdma link delete completes while a process holds the device open: the
# process is told (DEVICE_FATAL), its objects are torn down, nothing leaks.
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
finish
