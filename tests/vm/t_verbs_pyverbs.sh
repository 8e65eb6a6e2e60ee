# rdma-core's pyverbs suite (the one Debian ships) against sroce0: every
# test that runs must pass, and every one named in pyverbs-pass.txt must
# be among them; skips are listed with their reasons.
# vm-checks: 112
. ./lib.sh
pass_list=$PWD/pyverbs-pass.txt
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
# unittest prints "name (module.Class.name)", and under a test with a
# docstring the docstring's first line on the next line, with the verdict.
awk '{ line = $0; name = line ~ /^test/ ? line : prev; sub(/ \.\.\. .*/, "", name) }
     / \.\.\. ok$/ { print "ok - pyverbs: " name }
     / \.\.\. (FAIL|ERROR)$/ { print "not ok - pyverbs: " name }
     { prev = line }' "$work/log" |
	tee "$work/summary"
grep -E "skipped '" "$work/log" | sed "s/.*skipped '//; s/'$//" | sort | uniq -c |
	sort -rn | sed 's/^/# skipped: /'
grep -E '^(Ran|OK|FAILED)' "$work/log" | sed 's/^/# /'
check "pyverbs run completed" test $rc -eq 0
# Every test that applies to a software RoCE device runs and passes, by
# name (pyverbs-pass.txt): one that fails, errs or starts skipping (a verb
# that regressed to EOPNOTSUPP) is missing from the passes.
check "pyverbs-pass.txt names the tests that must pass" test -s "$pass_list"
missing=$(sed -n 's/^ok - pyverbs: //p' "$work/summary" |
	grep -vxF -f - "$pass_list" 2>&1)
check "each of the $(wc -l < "$pass_list") tests named in pyverbs-pass.txt passed" \
	test -z "$missing"
[ -z "$missing" ] || sed 's/^/# did not pass: /' <<< "$missing"
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
