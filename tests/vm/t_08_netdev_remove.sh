# Deleting the netdev removes the sroce device, also with users attached.
. ./lib.sh
make_veth v0 1
make_veth v1 2
rdma link add sroce0 type sroce netdev v0
rdma link add sroce1 type sroce netdev v1
out=$(mktemp)
"$T/hold_open" sroce0 30 > "$out" 2>&1 &
pid=$!
check "holder is ready" wait_line "$out" ready 10
check "ip link del v0 completes" timeout 30 ip link del v0
check "sroce0 went with its netdev" wait_for 10 dev_absent sroce0
check "sroce1 is untouched" dev_present sroce1
wait $pid
rc=$?
sed 's/^/holder: /' "$out"
check "holder saw the removal and closed cleanly" test $rc -eq 0
check_eq "one device left" 1 "$(objects devices)"
check "ip link del v1 without users" timeout 30 ip link del v1
check "sroce1 went with its netdev" wait_for 10 dev_absent sroce1
check "no objects left" objects_zero
check "rmmod afterwards" rmmod sroce
finish
