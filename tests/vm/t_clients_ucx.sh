# UCX from Debian's packages (ucx-utils 1.13), unmodified, on sroce0 on
# one host: ucx_perftest over UCT's ud_verbs (active messages) and
# rc_verbs (put, get, atomics), and over UCP with UCX_TLS=rc (which wires
# up over UD) and UCX_TLS=ud_verbs; UCX picks the device's GID itself
# (the IPv4 one). ucx_perftest checks no data: each run's exit status and
# sroce's counters (the traffic went through sroce0) are checked.
# UCX 1.13 finds a datagram's destination address in its GRH area by the
# network header type in wc.sl (capabilities.rst); with sl 0 it drops
# every IPv4 datagram and the UD runs below fail.
# vm-timeout: 420
# vm-checks: 16
. ./lib.sh
make_veth v0 1
rdma link add sroce0 type sroce netdev v0
check "sroce0 has its IPv4 GID" wait_for 10 have_gid ::ffff:192.0.2.1

# ucx NAME MIN_WQES [ENV=VALUE...] -- ARGS...: ucx_perftest ARGS as server
# and client (to 127.0.0.1), under ENV; both exit with 0 and sroce0
# started MIN_WQES WQEs or more meanwhile.
ucx() {
	local name=$1 min=$2 env=() w0
	shift 2
	while [ "$1" != -- ]; do env+=("$1"); shift; done
	shift
	w0=$(sroce_stat wqes)
	server_client "tcp_listening 13337" \
		env "${env[@]}" ucx_perftest "$@" -- \
		env "${env[@]}" ucx_perftest 127.0.0.1 "$@"
	check "$name: both sides exit with 0" pair_ok
	check "$name: sroce0 started $min WQEs or more ($(($(sroce_stat wqes) - w0)))" \
		test $(($(sroce_stat wqes) - w0)) -ge "$min"
}

u0=$(sroce_stat ud_sent)
ucx "UCT ud_verbs am_lat, 1000 iterations" 2000 -- \
	-d sroce0:1 -x ud_verbs -t am_lat -n 1000 -w 10
check "and they were datagrams ($(($(sroce_stat ud_sent) - u0)) sent)" \
	test $(($(sroce_stat ud_sent) - u0)) -ge 2000
ucx "UCT rc_verbs put_lat" 2000 -- \
	-d sroce0:1 -x rc_verbs -t put_lat -n 1000 -w 10
ucx "UCT rc_verbs get, 4 KiB zero-copy" 1000 -- \
	-d sroce0:1 -x rc_verbs -t get -D zcopy -s 4096 -n 1000 -w 10
ucx "UCT rc_verbs fadd" 1000 -- \
	-d sroce0:1 -x rc_verbs -t fadd -n 1000 -w 10
u0=$(sroce_stat ud_sent)
ucx "UCP tag_lat over UCX_TLS=rc" 2000 UCX_TLS=rc UCX_NET_DEVICES=sroce0:1 -- \
	-t tag_lat -n 1000 -w 10
check "its wire-up went over UD ($(($(sroce_stat ud_sent) - u0)) datagrams)" \
	test $(($(sroce_stat ud_sent) - u0)) -gt 0
ucx "UCP tag_bw of 64 KiB over UCX_TLS=ud_verbs" 200 UCX_TLS=ud_verbs UCX_NET_DEVICES=sroce0:1 -- \
	-t tag_bw -s 65536 -n 200 -w 10
rdma link delete sroce0
check "sroce0 gone" dev_absent sroce0
finish
