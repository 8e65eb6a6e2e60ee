# rmmod with devices present removes them all, also while a process holds
# one open: the process is told (DEVICE_FATAL) and can still close it after
# the module is gone.
# vm-checks: 9
. ./lib.sh
make_veth v0 1
make_veth v1 2
rdma link add sroce0 type sroce netdev v0
rdma link add sroce1 type sroce netdev v1
out=$(mktemp)
"$T/hold_open" sroce1 30 > "$out" 2>&1 &
pid=$!
check "holder is ready" wait_line "$out" ready 10
check "rmmod with two devices present, one open" timeout 30 rmmod sroce
check "module gone" module_unloaded
check "both devices gone" sh -c '[ ! -e /sys/class/infiniband/sroce0 ] && [ ! -e /sys/class/infiniband/sroce1 ]'
wait $pid
rc=$?
sed 's/^/holder: /' "$out"
check "holder saw the removal and closed after the unload" test $rc -eq 0
check "the netdevs can go now" sh -c 'ip link del v0 && ip link del v1'
check "the module loads again" modprobe sroce
make_veth v2 3
check "and a device works again" rdma link add sroce2 type sroce netdev v2
check_eq "sroce2 answers" 1 "$(cat /sys/class/infiniband/sroce2/sroce_abi_version)"
finish
