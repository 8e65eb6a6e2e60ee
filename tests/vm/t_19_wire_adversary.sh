# A hostile host on the wire: adversary.py, from a network namespace at
# the far end of a veth, sends crafted RoCEv2 packets with a correct ICRC
# at RC, UC and UD QPs of wire_victim, and checks each answer, each drop
# counter and every byte of the victim's memory (vm-run checks the log).
. ./lib.sh
make_veth v0 1
ip netns add adv
ip link set v0p netns adv
ip -n adv link set lo up
ip -n adv link set v0p up
ip -n adv -6 addr add 2001:db8::2/64 dev v0p nodad
ip -n adv -6 addr add 2001:db8::3/64 dev v0p nodad
# The peer's MAC as a permanent neighbour: modify_qp resolves it in a
# second, which a slow VM may miss.
ip -6 neigh replace 2001:db8::2 dev v0 nud permanent \
	lladdr "$(ip -n adv -br link show v0p | awk '{ print $3 }')"
rdma link add sroce0 type sroce netdev v0
base=$(cat "$OBJECTS")

check "sroce0 has the GID 2001:db8::1" wait_for 10 have_gid 2001:db8::1
timeout 150 /usr/bin/python3 ./adversary.py "$T/wire_victim" sroce0 \
	"$(gid_index 2001:db8::1)" adv
check "the adversary's run ends with status 0" [ $? -eq 0 ]
check "every object of the victim is gone" wait_for 10 objects_at "$base"
check "rdma link delete is prompt" timeout 20 rdma link delete sroce0
ip netns del adv
finish
