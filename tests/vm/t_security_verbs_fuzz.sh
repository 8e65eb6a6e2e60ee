# The uverbs fuzzer (verbs_fuzz): random create/modify/query/destroy over
# every object type, posts, polls, mmap and scribbled rings, raw write()
# and ioctl commands, fork and kill, for SROCE_TEST_FUZZ_SECONDS (default
# 60; make check-debug runs it longer), seed printed (SROCE_TEST_FUZZ_SEED,
# else make check's SROCE_TEST_SEED, replays it). Afterwards the device's objects are back at their baseline,
# verified traffic runs, and the device and module go away promptly.
# vm-checks: 12
. ./lib.sh
secs=${SROCE_TEST_FUZZ_SECONDS:-60}
seed=${SROCE_TEST_FUZZ_SEED:-${SROCE_TEST_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}}
make_veth v0 1
rdma link add sroce0 type sroce netdev v0
check "sroce0 has the GID ::ffff:192.0.2.1" wait_for 10 have_gid ::ffff:192.0.2.1
base=$(cat "$OBJECTS")

timeout -k 10 $((secs + 120)) "$T/verbs_fuzz" sroce0 \
	"$(gid_index ::ffff:192.0.2.1)" "$secs" "$seed"
check "the fuzzer's run ends with status 0 (seed $seed)" [ $? -eq 0 ]
check "every object it made is gone" wait_for 20 objects_at "$base"
check "no sroce worker is left busy" \
	[ "$(ps -eo stat,comm | awk '$2 ~ /^sroce/ && $1 ~ /^R/' | wc -l)" -eq 0 ]
timeout 120 "$T/rc_integrity" sroce0 "$(gid_index ::ffff:192.0.2.1)" 2 50 "$seed" $((256 << 10))
check "verified RC traffic runs afterwards" [ $? -eq 0 ]
check "rdma link delete is prompt" timeout 20 rdma link delete sroce0
check "rmmod sroce succeeds" timeout 20 rmmod sroce
finish
