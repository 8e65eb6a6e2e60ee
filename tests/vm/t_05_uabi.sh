# The kernel's answers to well-formed, older, newer and malformed ABI
# requests, spoken directly to the uverbs device.
. ./lib.sh
make_veth v0 1
rdma link add sroce0 type sroce netdev v0
"$T/uabi_probe" sroce0
rc=$?
check "uabi_probe finished" test $rc -le 1
check "no context or PD outlives its file" wait_for 5 sh -c '[ "$(awk "\$1 == \"ucontexts\" || \$1 == \"pds\" { s += \$2 } END { print s }" '"$OBJECTS"')" = 0 ]'
finish
