# libfabric and qperf from Debian's packages on sroce0, on one host, with
# their defaults: fi_pingpong over the verbs provider's msg endpoints and
# over verbs;ofi_rxm's rdm endpoints (rxm asks for a 262144-entry CQ,
# which max_cqe allows), both with fi_pingpong's data checks (-c); qperf's
# RC rows. qperf's UD rows build an address handle without a GRH, which
# RoCE cannot route (capabilities.rst): not run.
# vm-timeout: 300
# vm-checks: 8
. ./lib.sh
make_veth v0 1
rdma link add sroce0 type sroce netdev v0
check "sroce0 has its IPv4 GID" wait_for 10 have_gid ::ffff:192.0.2.1

# fi_pair NAME PROVIDER EP_TYPE: fi_pingpong with data checks, server
# and client; both exit with 0 and sroce0 started WQEs for them.
fi_pair() {
	local w0
	w0=$(sroce_stat wqes)
	server_client "tcp_listening 47592" \
		fi_pingpong -p "$2" -e "$3" -d sroce0 -c -I 100 -- \
		fi_pingpong -p "$2" -e "$3" -d sroce0 -c -I 100 192.0.2.1
	check "$1: both sides exit with 0" pair_ok
	check "$1: sroce0 started WQEs for it ($(($(sroce_stat wqes) - w0)))" \
		test $(($(sroce_stat wqes) - w0)) -ge 200
}
fi_pair "fi_pingpong -p verbs -e msg -c" verbs msg
fi_pair "fi_pingpong -p 'verbs;ofi_rxm' -e rdm -c" "verbs;ofi_rxm" rdm

qperf > /tmp/qperf.srv 2>&1 &
qperf_pid=$!
wait_for 10 tcp_listening 19765
timeout 120 qperf 192.0.2.1 -cm1 -t 2 rc_bw rc_lat rc_rdma_write_bw rc_rdma_read_bw \
	> /tmp/qperf.out 2>&1
rc=$?
sed 's/^/# /' /tmp/qperf.out
check "qperf's RC rows over rdma_cm end with status 0 ($rc)" test "$rc" -eq 0
check "and report a bandwidth or latency for each of the 4" \
	test "$(grep -cE '^ *(bw|latency) += ' /tmp/qperf.out)" -eq 4
kill "$qperf_pid"
wait "$qperf_pid" 2> /dev/null
rdma link delete sroce0
check "sroce0 gone" dev_absent sroce0
finish
