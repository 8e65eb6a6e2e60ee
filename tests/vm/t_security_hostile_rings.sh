# A process that writes garbage into its rings and kicks the engine: the
# kernel log stays clean (vm-run checks it), the bad rings are refused and
# counted (qp_ring_errors), QPs end in the error state or ready to send,
# completions carry valid statuses, and everything can be torn down.
# vm-checks: 52
. ./lib.sh
make_veth v0 1
rdma link add sroce0 type sroce netdev v0
base=$(cat "$OBJECTS")
for seed in 11 22 33; do
	e0=$(sroce_stat qp_ring_errors)
	timeout 120 "$T/rc_hostile" sroce0 1 2000 $seed
	check "rc_hostile seed $seed: every check passed" test $? -eq 0
	check "and its bad rings were refused and counted (qp_ring_errors)" \
		stat_above qp_ring_errors "$e0"
done
check "no objects left" wait_for 10 objects_at "$base"
finish
