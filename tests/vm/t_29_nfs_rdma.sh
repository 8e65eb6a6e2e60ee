# NFS over RDMA through sroce0 on one host: nfsd listens on "rdma 20049"
# and exports an ext4 file system on brd; the client mounts it with
# -o rdma,port=20049 as NFSv3 and NFSv4.2, and with proto=rdma6 over IPv6;
# it writes files of 1 B to 64 MiB, unmounts, mounts again and compares
# every file's checksum; nfsd is restarted in the middle of a copy, which
# the client rides out. The client registers memory with REG_MR (counted).
# vm-timeout: 600
. ./lib.sh
stat() { awk -v k="$1" '$1 == k { print $2 }' /sys/kernel/debug/sroce/engine; }
make_veth v0 1
rdma link add sroce0 type sroce netdev v0
export=/srv/sroce-nfs
rmmod brd 2> /dev/null	# another test may have loaded it smaller
modprobe brd rd_nr=1 rd_size=262144
mkdir -p "$export" /mnt/nfs /tmp/nfs-src
mkfs.ext4 -q -F /dev/ram0 && mount /dev/ram0 "$export"

nfsd_start() {	# nfsd with its TCP and RDMA listeners
	rpc.nfsd 4 && echo "rdma 20049" > /proc/fs/nfsd/portlist
}
server() {
	modprobe nfsd && modprobe rpcrdma || return
	mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd || return
	mkdir -p /var/lib/nfs /run/rpcbind
	rpcbind -w || return
	exportfs -o rw,no_root_squash,insecure,no_subtree_check,fsid=0 \
		"*:$export" || return
	rpc.mountd || return
	nfsd_start
}
check "nfsd listens on rdma 20049" server
check "nfsd's port list has rdma 20049" grep -q "rdma 20049" /proc/fs/nfsd/portlist

# Files of 1 B to 64 MiB, random bytes; their checksums.
sizes="1 4095 4096 65537 1048576 8388608 67108864"
for s in $sizes; do
	head -c "$s" /dev/urandom > "/tmp/nfs-src/f$s"
done
(cd /tmp/nfs-src && sha256sum f*) > /tmp/nfs-sums

# round VERS SOURCE [PROTO]: mount (over RDMA: PROTO rdma, or rdma6 for
# IPv6), copy every file, unmount, mount again, verify.
round() {
	local vers=$1 src=$2 opts="proto=${3:-rdma},port=20049,vers=$1"
	mount -t nfs -o "$opts" "$src" /mnt/nfs || return
	# The mount really runs over RDMA.
	grep -q " /mnt/nfs nfs.*proto=rdma" /proc/mounts || { umount /mnt/nfs; return 1; }
	rm -rf "/mnt/nfs/v$vers" && mkdir "/mnt/nfs/v$vers" &&
		cp /tmp/nfs-src/f* "/mnt/nfs/v$vers/" || { umount /mnt/nfs; return 1; }
	umount /mnt/nfs || return
	mount -t nfs -o "$opts" "$src" /mnt/nfs || return
	(cd "/mnt/nfs/v$vers" && sha256sum -c --quiet /tmp/nfs-sums)
	local rc=$?
	umount /mnt/nfs
	return $rc
}
regs=$(stat fast_regs)
check "NFSv4.2 over RDMA: files of 1 B to 64 MiB, remounted, checksums match" \
	round 4.2 192.0.2.1:/
check "NFSv3 over RDMA: the same" round 3 "192.0.2.1:$export"
check "NFSv4.2 over RDMA on IPv6: the same" round 4.2 "[2001:db8::1]:/" rdma6
check "the client registered memory with REG_MR" \
	test "$(stat fast_regs)" -gt $((regs + 100))

# nfsd restarts while a 64 MiB copy runs; the copy completes intact.
restart_during_copy() {
	mount -t nfs -o "rdma,port=20049,vers=4.2" 192.0.2.1:/ /mnt/nfs || return
	cp /tmp/nfs-src/f67108864 /mnt/nfs/restart &
	local cp_pid=$! rc
	sleep 1
	rpc.nfsd 0
	sleep 3
	nfsd_start
	wait $cp_pid
	rc=$?
	sync
	[ $rc -eq 0 ] && cmp -s /tmp/nfs-src/f67108864 /mnt/nfs/restart
	rc=$?
	umount /mnt/nfs
	return $rc
}
check "nfsd restarted during a copy: the copy completes intact" \
	timeout 300 bash -c "$(declare -f restart_during_copy nfsd_start); restart_during_copy"

rpc.nfsd 0
exportfs -ua
pkill -x rpc.mountd
pkill -x rpcbind
umount "$export"
finish
