#!/bin/bash
# Runs inside the lab VM (scripts/demo): one sroce device on a virtio NIC,
# shown the way a user sees it, then taken down again.
set -euxo pipefail
modprobe virtio_net
if=$(ls /sys/class/net | grep -v '^lo$' | head -n 1)
ip link set "$if" up
ip addr add 192.0.2.1/24 dev "$if"
ip -6 addr add 2001:db8::1/64 dev "$if" nodad
rdma link add sroce0 type sroce netdev "$if"
rdma link show
ibv_devices
ibv_devinfo -v -d sroce0
rdma link delete sroce0
rmmod sroce
