# Device, port and GID attributes read back through the provider match the
# netdev and the capabilities that exist today.
# vm-checks: 18
. ./lib.sh
make_veth v0 1
ip link set v0 address 02:11:22:33:44:55
rdma link add sroce0 type sroce netdev v0
info=$("$T/devinfo_check" sroce0)
val() { awk -v k="$1" '$1 == k { print $2; exit }' <<<"$info"; }
check_eq "node GUID is the EUI-64 of the netdev MAC" 001122fffe334455 "$(val node_guid)"
check_eq "one port" 1 "$(val phys_port_cnt)"
check_eq "link layer" ethernet "$(val link_layer)"
check_eq "port active" 4 "$(val port_state)"
check_eq "physical state LinkUp" 5 "$(val phys_state)"
check_eq "max MTU" 4096 "$(val max_mtu)"
check_eq "active MTU for netdev MTU 1500" 1024 "$(val active_mtu)"
check_eq "one pkey" 1 "$(val pkey_tbl_len)"
check "PDs advertised" test "$(val max_pd)" -gt 0
# Honest capabilities: RC QPs, CQs and MRs exist; atomics are HCA-wide.
check "QPs advertised" test "$(val max_qp)" -gt 0
check "CQs advertised" test "$(val max_cq)" -gt 0
check "MRs advertised" test "$(val max_mr)" -gt 0
check_eq "atomics: IBV_ATOMIC_HCA" 1 "$(val atomic_cap)"

# The netdev's addresses plus the default GID the RDMA core derives from
# the MAC (fe80::/64 with the EUI-64 of the MAC), each as inet_ntop writes it.
expected_gids() {
	{
		ip -o addr show dev v0 | awk '
			$3 == "inet" { split($4, a, "/"); print "::ffff:" a[1] }
			$3 == "inet6" { split($4, a, "/"); print a[1] }'
		/usr/bin/python3 -c '
import ipaddress, sys
m = bytes.fromhex(sys.argv[1].replace(":", ""))
eui = bytes([m[0] ^ 2]) + m[1:3] + b"\xff\xfe" + m[3:6]
print(ipaddress.IPv6Address(b"\xfe\x80" + bytes(6) + eui))' "$(cat /sys/class/net/v0/address)"
	} | sort -u
}
actual_gids() {
	"$T/devinfo_check" sroce0 | awk '$1 == "gid" && $4 == "roce_v2" { print $3 }' | sort
}
gids_match() { [ "$(expected_gids)" = "$(actual_gids)" ]; }
check "every GID is a RoCEv2 GID" sh -c "! '$T/devinfo_check' sroce0 | awk '\$1 == \"gid\" && \$4 != \"roce_v2\"' | grep -q ."
check "GID table matches the netdev's addresses" wait_for 5 gids_match
echo "# expected: $(expected_gids | tr '\n' ' ')"
echo "# actual:   $(actual_gids | tr '\n' ' ')"
ip addr add 198.51.100.7/24 dev v0
ip -6 addr add 2001:db8:1::7/64 dev v0 nodad
check "added IPv4 and IPv6 addresses appear as GIDs" wait_for 5 sh -c "'$T/devinfo_check' sroce0 | grep -q ' ::ffff:198.51.100.7 roce_v2' && '$T/devinfo_check' sroce0 | grep -q ' 2001:db8:1::7 roce_v2'"
ip addr del 198.51.100.7/24 dev v0
check "a removed address leaves the GID table" wait_for 5 sh -c "! '$T/devinfo_check' sroce0 | grep -q 198.51.100.7"
check "GID table matches again" wait_for 5 gids_match
finish
