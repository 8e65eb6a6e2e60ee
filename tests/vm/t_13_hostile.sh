# A process that writes garbage into its rings and kicks the engine: the
# kernel log stays clean (vm-run checks it) and the process still gets
# answers and can tear everything down.
. ./lib.sh
make_veth v0 1
rdma link add sroce0 type sroce netdev v0
base=$(cat "$OBJECTS")
for seed in 11 22 33; do
	timeout 120 "$T/rc_hostile" sroce0 1 2000 $seed
	check "rc_hostile seed $seed finished" test $? -le 1
done
check "no objects left" wait_for 10 objects_at "$base"
finish
