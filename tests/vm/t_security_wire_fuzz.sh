# The wire fuzzer (wire_fuzz.py): mutated RoCEv2 traffic from a network
# namespace at RC, UC and UD QPs in every state for SROCE_TEST_FUZZ_SECONDS
# (default 60; make check-debug runs it longer), with the seed printed;
# then the victim's memory, its teardown and verified traffic on a fresh
# QP are checked (vm-run checks the kernel log). SROCE_TEST_FUZZ_SEED (else
# make check's SROCE_TEST_SEED) replays a run.
# The time is split: half over IPv6, half over IPv4 (SROCE_WIRE_FAMILY).
# vm-checks: 29
. ./lib.sh
secs=${SROCE_TEST_FUZZ_SECONDS:-60}
half=$(((secs + 1) / 2))
peer_netns fuzz 2001:db8::2 2001:db8::3 192.0.2.2 192.0.2.3
rdma link add sroce0 type sroce netdev v0
base=$(cat "$OBJECTS")

# fuzz FAMILY GID: wire_fuzz.py for half the time over FAMILY (4 or 6),
# its checks named after it.
fuzz() {
	check "sroce0 has the GID $2" wait_for 10 have_gid "$2"
	SROCE_WIRE_FAMILY=$1 timeout $((half + 150)) /usr/bin/python3 \
		./wire_fuzz.py "$T/wire_victim" sroce0 "$(gid_index "$2")" fuzz \
		"$half" ${SROCE_TEST_FUZZ_SEED:-${SROCE_TEST_SEED:-}} |
		sed "s/^\(not \)\{0,1\}ok - /&IPv$1: /"
	check "the fuzzer's run ends with status 0 (IPv$1)" [ "${PIPESTATUS[0]}" -eq 0 ]
	check "every object of the victims is gone (IPv$1)" wait_for 10 objects_at "$base"
}
fuzz 6 2001:db8::1
fuzz 4 ::ffff:192.0.2.1
check "rdma link delete is prompt" timeout 20 rdma link delete sroce0
ip netns del fuzz
finish
