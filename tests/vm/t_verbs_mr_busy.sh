# Deregistering an MR that the engine still uses returns at once; the
# pages are released once the WQE that held them is flushed. The peer is
# an address in another network namespace where nothing answers.
# vm-checks: 12
. ./lib.sh
peer_netns quiet 2001:db8::2
rdma link add sroce0 type sroce netdev v0
base=$(cat "$OBJECTS")

check "sroce0 has the GID 2001:db8::1" wait_for 10 have_gid 2001:db8::1

# In the background: a D-state hang must fail a check, not the whole run.
out=$(mktemp)
"$T/mr_busy" sroce0 "$(gid_index 2001:db8::1)" 2001:db8::2 > "$out" 2>&1 &
pid=$!
check "mr_busy finishes within 30 s" wait_for 30 sh -c "! kill -0 $pid 2>/dev/null"
cat "$out"
grep -q '^not ok' "$out" && failures=$((failures + 1))
check "mr_busy checked something" grep -q '^ok - ibv_dereg_mr' "$out"
check "every object is gone after the process" wait_for 10 objects_at "$base"
check "rdma link delete is prompt" timeout 20 rdma link delete sroce0
ip netns del quiet
finish
