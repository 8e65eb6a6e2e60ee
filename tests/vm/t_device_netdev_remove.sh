# Deleting the netdev removes the sroce device, also with users attached
# and when the removal is slow.
# vm-checks: 15
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

# While references to a deleted netdev are held (sroce's, until its
# unregistration ends), the kernel sends NETDEV_UNREGISTER again every
# second. A removal that takes longer (200 QPs to destroy) must still end.
make_veth v2 3
rdma link add sroce2 type sroce netdev v2
"$T/hold_open" sroce2 120 200 > "$out" 2>&1 &
pid=$!
check "a holder of 200 QPs is ready" wait_line "$out" ready 100
# sroce's notifier, traced for NETDEV_UNREGISTER (6) by a kprobe.
TRACE=/sys/kernel/tracing
[ -d "$TRACE/events" ] || mount -t tracefs nodev "$TRACE"
echo 'p:sroce_nd sroce:sroce_netdev_event event=%si:u64' >> "$TRACE/kprobe_events"
echo 'event == 6' > "$TRACE/events/kprobes/sroce_nd/filter"
echo > "$TRACE/trace"
echo 1 > "$TRACE/events/kprobes/sroce_nd/enable"
check "ip link del completes while it destroys them" timeout 60 ip link del v2
echo 0 > "$TRACE/events/kprobes/sroce_nd/enable"
n=$(grep -c 'sroce_nd:' "$TRACE/trace")
echo '-:sroce_nd' >> "$TRACE/kprobe_events"
check "NETDEV_UNREGISTER came again while they went ($n times)" [ "$n" -ge 2 ]
check "sroce2 went with its netdev" wait_for 10 dev_absent sroce2
wait $pid
rc=$?
check "that holder closed cleanly" test $rc -eq 0
check "ip link del v1 without users" timeout 30 ip link del v1
check "sroce1 went with its netdev" wait_for 10 dev_absent sroce1
check "no objects left" objects_zero
check "rmmod afterwards" rmmod sroce
finish
