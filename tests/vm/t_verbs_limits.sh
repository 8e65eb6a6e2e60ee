# Object limits are module parameters, enforced per device with ENOMEM
# (the kernel's own PD, CQ, QP1 and MR count too), and ring memory is
# charged to the memory cgroup of the process that asked for it.
# vm-timeout: 600
# vm-checks: 55
. ./lib.sh
make_veth v0 1
check "modprobe sroce with small limits" \
	modprobe sroce max_pd=4 max_cq=5 max_mr=7 max_qp=6 max_srq=3
rdma link add sroce0 type sroce netdev v0
base=$(cat "$OBJECTS")
for t in pd cq mr qp srq; do
	check_eq "query_device reports max_$t" \
		"$(cat /sys/module/sroce/parameters/max_$t)" "$(devinfo sroce0 max_$t)"
done

out=$("$T/limits" count sroce0)
echo "$out"
# MRs and windows take entries of the key table, as does the MAD layer
# PD's internal DMA MR (debugfs "keys"; restrack's "mrs" leaves it out).
for t in pds:4:pds cqs:5:cqs mrs:7:keys qps:6:qps srqs:3:srqs mws:7:keys; do
	IFS=: read -r name max counted <<<"$t"
	left=$((max - $(awk -v t="$counted" '$1 == t { print $2 }' <<<"$base")))
	check_eq "$name: $left more fit below the limit of $max, the next fails with ENOMEM" \
		"$name $left 12" "$(grep "^$name " <<<"$out")"
done
check "every object is gone after the process" wait_for 10 objects_at "$base"
rdma link delete sroce0
rmmod sroce

# Memory accounting: a process in its own memory cgroup creates a small
# and then a large CQ and QP; the large rings are charged to it.
if [ "$(stat -fc %T /sys/fs/cgroup)" != cgroup2fs ]; then
	mount -t cgroup2 none /sys/fs/cgroup
fi
echo +memory > /sys/fs/cgroup/cgroup.subtree_control
cg=/sys/fs/cgroup/sroce_rings
mkdir -p "$cg"
modprobe sroce
rdma link add sroce0 type sroce netdev v0
base=$(cat "$OBJECTS")

# charged CQE WR: the bytes charged to $cg while rings of that size exist.
charged() {
	local fifo=/tmp/rings.fifo out=/tmp/rings.out before after pid
	rm -f "$fifo"
	mkfifo "$fifo"
	before=$(cat "$cg/memory.current")
	sh -c "echo \$\$ > $cg/cgroup.procs && exec $T/limits ring sroce0 $1 $2" \
		< "$fifo" > "$out" &
	pid=$!
	exec 7> "$fifo"
	wait_for 30 grep -q . "$out"
	after=$(cat "$cg/memory.current")
	grep -q created "$out" || echo "rings of $1/$2 not created: $(cat "$out")" >&2
	echo >&7
	exec 7>&-
	wait $pid
	echo $((after - before))
}
small=$(charged 16 16)
large=$(charged 65536 16384)
echo "charged: small rings $small bytes, large rings $large bytes"
# 65536 CQEs and 2 x 16384 WQEs hold at least 4 MiB of ring.
check "the large rings are charged to the caller's cgroup" \
	[ $((large - small)) -ge $((4 << 20)) ]

# The shortcut: 4 GiB of UC from a process in its own memory cgroup to a
# QP of this host; what the kernel holds for it stays bounded and is
# charged to that cgroup (tests/progs/shortcut_flood.c checks each).
check "sroce0 has the GID 2001:db8::1" wait_for 10 have_gid 2001:db8::1
cgf=/sys/fs/cgroup/sroce_flood
mkdir -p "$cgf"
timeout 400 sh -c "echo \$\$ > $cgf/cgroup.procs &&
	exec $T/shortcut_flood sroce0 $(gid_index 2001:db8::1)"
check "shortcut_flood ends with status 0" [ $? -eq 0 ]
check "every object is gone after the processes" wait_for 10 objects_at "$base"

# Each limit ibv_devinfo reports (Documentation/capabilities.rst) works at
# N and is refused at N+1 (tests/progs/cap_edges.c; 22 checks).
check "sroce0 has the GID ::ffff:192.0.2.1" wait_for 10 have_gid ::ffff:192.0.2.1
timeout 300 "$T/cap_edges" sroce0 "$(gid_index ::ffff:192.0.2.1)"
check "cap_edges ends with status 0" [ $? -eq 0 ]
check "every object is gone after cap_edges" wait_for 10 objects_at "$base"
rdma link delete sroce0
rmdir "$cg" "$cgf"
finish
