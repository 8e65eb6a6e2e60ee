# Sourced by the guest scripts of tests/lab: joins this VM to the lab
# network and creates its RDMA device. Input: ME (host number, 10 or 11),
# PEER (the other's), NDEV (sroce or rxe), MTU (netdev MTU, default 1500).
# Output: D (device name), IF (netdev), GID4 and GID6 (the GID indices of
# 192.0.2.$ME and 2001:db8::$ME), PEER4 (the peer's IPv4 address), T.
T=$SROCE_BUILD/tests
PEER4=192.0.2.$PEER
modprobe virtio_net
IF=$(ls /sys/class/net | grep -v '^lo$' | head -n 1)
ip link set "$IF" mtu "${MTU:-1500}"
ip link set "$IF" up
ip addr add "192.0.2.$ME/24" dev "$IF"
ip -6 addr add "2001:db8::$ME/64" dev "$IF" nodad
for _ in $(seq 1 90); do
	busybox ping -c 1 -W 1 "$PEER4" > /dev/null 2>&1 && break
done
if [ "$NDEV" = rxe ]; then
	modprobe rdma_rxe
	D=rxe0
	rdma link add "$D" type rxe netdev "$IF"
else
	modprobe sroce
	D=sroce0
	rdma link add "$D" type sroce netdev "$IF"
fi
gid_index() {	# gid_index ADDRESS-PATTERN
	ibv_devinfo -v -d "$D" | awk -v p="$1" '/GID\[/ && $0 ~ p {
		match($0, /GID\[ *[0-9]+\]/)
		s = substr($0, RSTART, RLENGTH)
		gsub(/[^0-9]/, "", s)
		print s
		exit }'
}
for _ in $(seq 1 50); do
	GID4=$(gid_index "ffff:192.0.2.$ME,")
	GID6=$(gid_index "2001:db8::$ME,")
	[ -n "$GID4" ] && [ -n "$GID6" ] && break
	sleep 0.2
done
[ -n "$GID4" ] && [ -n "$GID6" ] || echo "not ok - $D has no GID for 192.0.2.$ME or 2001:db8::$ME"

# serve NAME GID ARGS...: the server side of an rc_remote phase.
serve() {
	local name=$1 gid=$2
	shift 2
	if timeout 300 "$T/rc_remote" "$D" "$gid" "$@" > /tmp/serve.log 2>&1; then
		echo "ok - $name: server side ($D)"
	else
		echo "not ok - $name: server side ($D)"
		cat /tmp/serve.log
	fi
}

# drive NAME GID ARGS...: the client side; its own checks are printed.
drive() {
	local name=$1 gid=$2
	shift 2
	echo "# $name: client on $D"
	timeout 300 "$T/rc_remote" "$D" "$gid" "$@" "$PEER4" |
		sed "s/^\(\(not \)\?ok - \)/\1$name: /"
	[ "${PIPESTATUS[0]}" -eq 0 ] || echo "not ok - $name: client exited with failure"
}

netem_on() {
	modprobe sch_netem
	tc qdisc add dev "$IF" root netem delay 1ms loss 5% reorder 10% \
		duplicate 2%
}

netem_off() {
	tc qdisc del dev "$IF" root 2> /dev/null
}

# Counters of the sroce engine, for the log.
engine_counters() {
	[ -r /sys/kernel/debug/sroce/engine ] &&
		grep -v ' 0$' /sys/kernel/debug/sroce/engine | sed 's/^/# /'
	return 0
}
