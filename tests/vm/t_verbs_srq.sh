# Shared receive queues on the same host: our SRQ program (RC, UC and UD
# QPs sharing one, the limit event, LAST_WQE_REACHED, destroy rules, a
# hostile producer index, resizing with WQEs posted and messages
# arriving), unmodified ibv_srq_pingpong and perftest's
# --use-srq; objects return to their baseline.
# vm-checks: 45
. ./lib.sh
make_veth v0 1
rdma link add sroce0 type sroce netdev v0
base=$(cat "$OBJECTS")
check "the device offers SRQs" \
	sh -c "ibv_devinfo -v -d sroce0 | grep -Eq 'max_srq:[[:space:]]+[1-9]'"
r0=$(sroce_stat qp_ring_errors)
"$T/srq_test" sroce0 1
check "srq_test" test $? -eq 0
check_eq "the hostile producer failed one QP (qp_ring_errors)" 1 \
	$(($(sroce_stat qp_ring_errors) - r0))

srq_pingpong() {	# srq_pingpong ARGS...: server and client succeed
	timeout 60 ibv_srq_pingpong -d sroce0 -g 1 "$@" > /tmp/srq-srv.log 2>&1 &
	local srv=$!
	sleep 1
	timeout 60 ibv_srq_pingpong -d sroce0 -g 1 "$@" 127.0.0.1 > /tmp/srq-cli.log 2>&1
	local rc=$?
	wait $srv
	local srv_rc=$?
	[ $rc -eq 0 ] && [ $srv_rc -eq 0 ] && grep -q 'iters in' /tmp/srq-cli.log
}
check "ibv_srq_pingpong (16 QPs, one SRQ)" srq_pingpong -n 200
check "ibv_srq_pingpong -e (completion events)" srq_pingpong -n 200 -e
check "ibv_srq_pingpong -q 64 -s 8192" srq_pingpong -n 100 -q 64 -s 8192

check "ib_send_bw --use-srq -a" perftest ib_send_bw --use-srq -a -n 20
check "ib_send_bw --use-srq, 4 QPs" perftest ib_send_bw --use-srq -q 4 -n 500
check "ib_send_lat --use-srq -a" perftest ib_send_lat --use-srq -a -n 20
check "no objects left" wait_for 10 objects_at "$base"
finish
