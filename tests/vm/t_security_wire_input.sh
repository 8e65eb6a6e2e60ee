# Hostile packets from the wire: every one is dropped and counted by
# reason, and the kernel log stays clean (vm-run checks it).
# vm-checks: 9
. ./lib.sh
make_veth v0 1
rdma link add sroce0 type sroce netdev v0

# grew_by N BASE NAME...: the counters NAME... add up to BASE + N.
grew_by() {
	local n=$1 base=$2 sum=0 c
	shift 2
	for c; do sum=$((sum + $(sroce_stat "$c"))); done
	[ $((sum - base)) -eq "$n" ]
}

m0=$(sroce_stat rx_drop_malformed) i0=$(sroce_stat rx_drop_icrc) q0=$(sroce_stat rx_drop_no_qp)
/usr/bin/python3 ./roce_inject.py garbage 1000
check "1000 random datagrams are all dropped as malformed or failing the ICRC" \
	wait_for 10 grew_by 1000 $((m0 + i0)) rx_drop_malformed rx_drop_icrc

q0=$(sroce_stat rx_drop_no_qp) i0=$(sroce_stat rx_drop_icrc)
/usr/bin/python3 ./roce_inject.py no_qp 200
check "200 packets with a correct ICRC for an unknown QP: counted as no QP" \
	wait_for 10 grew_by 200 "$q0" rx_drop_no_qp
check_eq "their ICRC was accepted" "$i0" "$(sroce_stat rx_drop_icrc)"

/usr/bin/python3 ./roce_inject.py bad_icrc 200
check "200 packets with one bit flipped: counted as ICRC failures" \
	wait_for 10 grew_by 200 "$i0" rx_drop_icrc

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
