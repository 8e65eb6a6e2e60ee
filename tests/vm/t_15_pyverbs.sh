# rdma-core's pyverbs suite (the one Debian ships) against sroce0: every
# test that runs must pass; skips are listed with their reasons.
. ./lib.sh
# A NIC with a parent device (scripts/check boots the suite with --nic hub)
# gives sroce0 a /sys/class/infiniband/sroce0/device/net/<if> link, which
# pyverbs needs for its rdmacm tests; a veth has no parent.
nic=
modprobe virtio_net 2> /dev/null && sleep 1
for d in /sys/class/net/eth*; do
	[ -e "$d/device" ] && nic=$(basename "$d") && break
done
if [ -n "$nic" ]; then
	ip link set "$nic" up
	ip addr add 192.0.2.1/24 dev "$nic"
	ip -6 addr add 2001:db8::1/64 dev "$nic" nodad
	ip -6 addr add 2001:db8::7/64 dev "$nic" nodad
	rdma link add sroce0 type sroce netdev "$nic"
	check "sroce0/device/net names $nic" \
		test -e "/sys/class/infiniband/sroce0/device/net/$nic"
else
	echo "# no NIC with a parent device: pyverbs' rdmacm tests will skip"
	make_veth v0 1
	ip -6 addr add 2001:db8::7/64 dev v0 nodad
	rdma link add sroce0 type sroce netdev v0
fi
base=$(cat "$OBJECTS")
src=/usr/share/doc/rdma-core/tests
if [ ! -d "$src" ]; then
	echo "not ok - pyverbs tests not installed ($src)"
	finish
fi
work=$(mktemp -d)
cp -r "$src" "$work/tests"
gunzip -f "$work"/tests/*.gz
cd "$work/tests" || exit 1
timeout 900 /usr/bin/python3 run_tests.py --dev sroce0 --gid 1 -v > "$work/log" 2>&1
rc=$?
awk '/ \.\.\. ok$/ { sub(/ \.\.\. ok$/, ""); print "ok - pyverbs: " $0 }
     / \.\.\. (FAIL|ERROR)$/ { sub(/ \.\.\. (FAIL|ERROR)$/, ""); print "not ok - pyverbs: " $0 }' "$work/log" |
	tee "$work/summary"
grep -E "skipped '" "$work/log" | sed "s/.*skipped '//; s/'$//" | sort | uniq -c |
	sort -rn | sed 's/^/# skipped: /'
grep -E '^(Ran|OK|FAILED)' "$work/log" | sed 's/^/# /'
check "pyverbs run completed" test $rc -eq 0
# Every test that applies to a software RoCE device runs; a drop below
# this count means a verb stopped working (or a test started skipping).
check "pyverbs: at least 100 tests pass" \
	test "$(grep -c '^ok - pyverbs' "$work/summary")" -ge 100
check "no objects left" wait_for 10 objects_at "$base"
if [ -n "$nic" ]; then
	check "pyverbs rdmacm tests ran and passed" \
		grep -q "^ok - pyverbs: test_rdmacm" "$work/summary"
	# virtio counts a packet when the host took it: multicast went out
	# and came back to sroce's pages (no TX skb is left in the ring).
	check "$nic sent packets and they completed" \
		test "$(cat "/sys/class/net/$nic/statistics/tx_packets")" -gt 0
	rdma link delete sroce0
	ip addr flush dev "$nic"
	ip link set "$nic" down
fi
rm -rf "$work"
finish
