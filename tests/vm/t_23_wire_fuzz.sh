# The wire fuzzer (wire_fuzz.py): mutated RoCEv2 traffic from a network
# namespace at RC, UC and UD QPs in every state for SROCE_TEST_FUZZ_SECONDS
# (default 60; make check-debug runs it longer), with the seed printed;
# then the victim's memory, its teardown and verified traffic on a fresh
# QP are checked (vm-run checks the kernel log). SROCE_TEST_FUZZ_SEED (else
# make check's SROCE_TEST_SEED) replays a run.
# vm-checks: 15
. ./lib.sh
secs=${SROCE_TEST_FUZZ_SECONDS:-60}
peer_netns fuzz 2001:db8::2 2001:db8::3
rdma link add sroce0 type sroce netdev v0
base=$(cat "$OBJECTS")

check "sroce0 has the GID 2001:db8::1" wait_for 10 have_gid 2001:db8::1
timeout $((secs + 150)) /usr/bin/python3 ./wire_fuzz.py "$T/wire_victim" sroce0 \
	"$(gid_index 2001:db8::1)" fuzz "$secs" ${SROCE_TEST_FUZZ_SEED:-${SROCE_TEST_SEED:-}}
check "the fuzzer's run ends with status 0" [ $? -eq 0 ]
check "every object of the victims is gone" wait_for 10 objects_at "$base"
check "rdma link delete is prompt" timeout 20 rdma link delete sroce0
ip netns del fuzz
finish
