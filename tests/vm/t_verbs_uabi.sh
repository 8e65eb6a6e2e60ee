# The kernel's answers to well-formed, older, newer and malformed ABI
# requests, spoken directly to the uverbs device.
# vm-checks: 38
. ./lib.sh
make_veth v0 1
rdma link add sroce0 type sroce netdev v0
base=$(cat "$OBJECTS")
"$T/uabi_probe" sroce0
rc=$?
check "uabi_probe finished" test $rc -le 1
check "no context, PD, CQ or QP outlives its file" wait_for 5 objects_at "$base"
finish
