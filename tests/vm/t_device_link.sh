# rdma link add autoloads the module and makes a device; duplicates and
# netdevs that cannot carry RoCE are refused; rdma link delete removes it.
# vm-checks: 21
. ./lib.sh
make_veth v0 1
make_veth v1 2
check "module not loaded before link add" module_unloaded
check "rdma link add sroce0 autoloads sroce" rdma link add sroce0 type sroce netdev v0
check "module autoloaded" module_loaded
check "sroce0 in sysfs" dev_present sroce0
check_eq "sroce_abi_version attribute" 1 "$(cat /sys/class/infiniband/sroce0/sroce_abi_version)"
check_eq "parent attribute names the netdev" v0 "$(cat /sys/class/infiniband/sroce0/parent)"
check "rdma link show lists sroce0 on v0" sh -c 'rdma link show sroce0/1 | grep -q "netdev v0"'
check "a second device on the same netdev is refused" sh -c '! rdma link add sroceX type sroce netdev v0 2>/dev/null'
check "the refused device does not exist" dev_absent sroceX
check "a device on another netdev" rdma link add sroce1 type sroce netdev v1
check "sroce1 in sysfs" dev_present sroce1
modprobe tun
ip tuntap add tun0 mode tun
ip link set tun0 up
check "a non-Ethernet netdev (tun) exists to try" test -e /sys/class/net/tun0
check "a device on a non-Ethernet netdev is refused" sh -c '! rdma link add sroce2 type sroce netdev tun0 2>/dev/null'
check "ibv_devices lists both" sh -c 'ibv_devices | grep -q sroce0 && ibv_devices | grep -q sroce1'
check_eq "two devices counted" 2 "$(objects devices)"
check "rdma link delete sroce0" rdma link delete sroce0
check "sroce0 gone" dev_absent sroce0
check "sroce1 still there" dev_present sroce1
check "rdma link delete sroce1" rdma link delete sroce1
check "no objects left" objects_zero
check "rmmod after deletes" rmmod sroce
finish
