# A hostile host on the wire: adversary.py, from a network namespace at
# the far end of a veth, sends crafted RoCEv2 packets with a correct ICRC
# at RC, UC and UD QPs of wire_victim, and checks each answer, each drop
# counter and every byte of the victim's memory (vm-run checks the log);
# once over IPv6, once over IPv4.
# vm-checks: 411
. ./lib.sh
peer_netns adv 2001:db8::2 2001:db8::3 192.0.2.2 192.0.2.3
rdma link add sroce0 type sroce netdev v0
base=$(cat "$OBJECTS")

check "sroce0 has the GID 2001:db8::1" wait_for 10 have_gid 2001:db8::1
timeout 150 /usr/bin/python3 ./adversary.py "$T/wire_victim" sroce0 \
	"$(gid_index 2001:db8::1)" adv
check "the adversary's run ends with status 0 (IPv6)" [ $? -eq 0 ]
check "every object of the victim is gone (IPv6)" wait_for 10 objects_at "$base"
check "sroce0 has the GID ::ffff:192.0.2.1" wait_for 10 have_gid ::ffff:192.0.2.1
SROCE_WIRE_FAMILY=4 timeout 150 /usr/bin/python3 ./adversary.py \
	"$T/wire_victim" sroce0 "$(gid_index ::ffff:192.0.2.1)" adv |
	sed 's/^\(not \)\{0,1\}ok - /&IPv4: /'
check "the adversary's run ends with status 0 (IPv4)" [ "${PIPESTATUS[0]}" -eq 0 ]
check "every object of the victim is gone (IPv4)" wait_for 10 objects_at "$base"
check "rdma link delete is prompt" timeout 20 rdma link delete sroce0
ip netns del adv
finish
