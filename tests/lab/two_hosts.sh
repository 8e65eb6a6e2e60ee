#!/usr/bin/env bash
# The two-host lab works: two lab VMs joined by a QEMU socket netdev on
# 127.0.0.1 reach each other (ping both ways). Runs on the host.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
port=$((20000 + RANDOM % 20000))

link_guest() {	# link_guest MY_ADDR PEER_ADDR
	cat <<SCRIPT
modprobe virtio_net
if=\$(ls /sys/class/net | grep -v '^lo\$' | head -n 1)
ip link set "\$if" up
ip addr add $1/24 dev "\$if"
ok=0
for i in \$(seq 1 90); do
	if busybox ping -c 1 -W 1 $2 > /dev/null 2>&1; then ok=1; break; fi
done
echo "ping $2: \$ok"
sleep 8		# stay up while the peer pings us
[ \$ok = 1 ]
SCRIPT
}

"$top/scripts/vm-run" --cpus 1 --timeout 240 --name hostA --mac 52:54:00:00:00:0a \
	--nic "listen:$port" -- bash -c "$(link_guest 192.0.2.10 192.0.2.11)" &
a=$!
sleep 2
"$top/scripts/vm-run" --cpus 1 --timeout 240 --name hostB --mac 52:54:00:00:00:0b \
	--nic "connect:$port" -- bash -c "$(link_guest 192.0.2.11 192.0.2.10)"
rb=$?
wait $a
ra=$?
echo "hostA: $ra, hostB: $rb"
[ $ra -eq 0 ] && [ $rb -eq 0 ]
