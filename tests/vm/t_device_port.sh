# Port state and active MTU follow the netdev (carrier, up/down, MTU), and
# state changes reach applications as asynchronous events.
# vm-checks: 19
. ./lib.sh
make_veth v0 1
rdma link add sroce0 type sroce netdev v0
for pair in 9000:4096 4180:4096 4179:2048 2132:2048 1500:1024 1108:1024 1107:512 600:512 340:256; do
	ip link set v0 mtu "${pair%%:*}"
	check_eq "netdev MTU ${pair%%:*} gives active MTU ${pair##*:}" "${pair##*:}" "$(devinfo sroce0 active_mtu)"
done
check_eq "port active at MTU 340" 4 "$(devinfo sroce0 port_state)"
ip link set v0 mtu 300
check_eq "port down below the smallest RoCE frame" 1 "$(devinfo sroce0 port_state)"
ip link set v0 mtu 1500

ev=$(mktemp)
"$T/async_events" sroce0 20 2 > "$ev" &
pid=$!
wait_line "$ev" ready 10
ip link set v0p down		# v0 loses its carrier
check "carrier loss: PORT_ERR event" wait_line "$ev" "event port error port 1" 10
check_eq "carrier loss: port down" 1 "$(devinfo sroce0 port_state)"
check_eq "carrier loss: physical state disabled" 3 "$(devinfo sroce0 phys_state)"
ip link set v0p up
check "carrier back: PORT_ACTIVE event" wait_line "$ev" "event port active port 1" 10
check "event watcher saw both events" wait $pid
check_eq "carrier back: port active" 4 "$(devinfo sroce0 port_state)"
ip link set v0 down
check_eq "netdev down: port down" 1 "$(devinfo sroce0 port_state)"
ip link set v0 up
check "netdev up: port active again" wait_for 5 sh -c "[ \$('$T/devinfo_check' sroce0 | awk '\$1 == \"port_state\" {print \$2}') = 4 ]"
cat "$ev" | sed 's/^/# /'
rm -f "$ev"
finish
