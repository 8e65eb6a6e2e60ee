# Hostile packets from the wire: every one is dropped and counted by
# reason, and the kernel log stays clean (vm-run checks it).
. ./lib.sh
make_veth v0 1
rdma link add sroce0 type sroce netdev v0
stat() { awk -v k="$1" '$1 == k { print $2 }' /sys/kernel/debug/sroce/engine; }

m0=$(stat rx_drop_malformed) i0=$(stat rx_drop_icrc) q0=$(stat rx_drop_no_qp)
/usr/bin/python3 ./roce_inject.py garbage 1000
check "1000 random datagrams are all dropped as malformed or failing the ICRC" \
	wait_for 10 sh -c "[ \$((\$(awk '\$1 == \"rx_drop_malformed\" || \$1 == \"rx_drop_icrc\" { s += \$2 } END { print s }' /sys/kernel/debug/sroce/engine) - $m0 - $i0)) -eq 1000 ]"

q0=$(stat rx_drop_no_qp) i0=$(stat rx_drop_icrc)
/usr/bin/python3 ./roce_inject.py no_qp 200
check "200 packets with a correct ICRC for an unknown QP: counted as no QP" \
	wait_for 10 sh -c "[ \$((\$(awk '\$1 == \"rx_drop_no_qp\" { print \$2 }' /sys/kernel/debug/sroce/engine) - $q0)) -eq 200 ]"
check_eq "their ICRC was accepted" "$i0" "$(stat rx_drop_icrc)"

/usr/bin/python3 ./roce_inject.py bad_icrc 200
check "200 packets with one bit flipped: counted as ICRC failures" \
	wait_for 10 sh -c "[ \$((\$(awk '\$1 == \"rx_drop_icrc\" { print \$2 }' /sys/kernel/debug/sroce/engine) - $i0)) -eq 200 ]"

rdma link delete sroce0
check "device gone" dev_absent sroce0

# rdma_rxe holds UDP 4791 from the moment it loads: no sroce device then.
modprobe rdma_rxe
check "rdma link add fails while rdma_rxe holds port 4791" \
	sh -c '! rdma link add sroce0 type sroce netdev v0 2> /tmp/eaddr.log'
check "the error names the port" grep -qi "address already in use\|in use" /tmp/eaddr.log
check "no device and no objects left behind" sh -c \
	'[ ! -e /sys/class/infiniband/sroce0 ] && [ "$(awk "{ s += \$2 } END { print s }" '"$OBJECTS"')" = 0 ]'
rmmod rdma_rxe
check "rdma link add works again once rdma_rxe is gone" \
	rdma link add sroce0 type sroce netdev v0
rdma link delete sroce0
finish
