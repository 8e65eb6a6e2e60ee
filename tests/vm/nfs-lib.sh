# shellcheck shell=bash
# NFS over RDMA in the lab VMs: an nfsd that exports an ext4 file system on
# brd and listens on "rdma 20049" (IPv4 and IPv6), and a client that
# mounts it over RDMA and checks files by their checksums. Sourced by
# tests/vm and tests/lab; every function returns non-zero on failure.
NFS_EXPORT=/srv/sroce-nfs
NFS_MNT=/mnt/nfs
NFS_SRC=/tmp/nfs-src

# nfsd_start: nfsd with its TCP and RDMA listeners.
nfsd_start() {
	rpc.nfsd 4 && echo "rdma 20049" > /proc/fs/nfsd/portlist
}

# nfs_server_up: brd formatted and exported (fsid=0, so NFSv4's root is the
# export), rpcbind, mountd and nfsd running, nfsd listening on rdma 20049.
nfs_server_up() {
	rmmod brd 2> /dev/null	# another test may have loaded it smaller
	modprobe brd rd_nr=1 rd_size=262144 || return
	mkdir -p "$NFS_EXPORT" && mkfs.ext4 -q -F /dev/ram0 &&
		mount /dev/ram0 "$NFS_EXPORT" || return
	modprobe nfsd && modprobe rpcrdma || return
	mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd || return
	mkdir -p /var/lib/nfs /run/rpcbind
	rpcbind -w || return
	exportfs -o rw,no_root_squash,insecure,no_subtree_check,fsid=0 \
		"*:$NFS_EXPORT" || return
	rpc.mountd || return
	nfsd_start && grep -q "rdma 20049" /proc/fs/nfsd/portlist
}

# nfs_server_down: everything nfs_server_up started stopped, brd released.
nfs_server_down() {
	rpc.nfsd 0
	exportfs -ua
	pkill -x rpc.mountd
	pkill -x rpcbind
	umount "$NFS_EXPORT" && rmmod brd
}

# nfs_files SIZE...: files of random bytes of these sizes in $NFS_SRC, and
# their checksums in $NFS_SRC.sums.
nfs_files() {
	local s
	rm -rf "$NFS_SRC" && mkdir -p "$NFS_SRC" || return
	for s in "$@"; do
		head -c "$s" /dev/urandom > "$NFS_SRC/f$s" || return
	done
	(cd "$NFS_SRC" && sha256sum f*) > "$NFS_SRC.sums"
}

# nfs_mount VERS SOURCE [PROTO]: SOURCE mounted on $NFS_MNT over RDMA
# (PROTO rdma, or rdma6 for an IPv6 server: mount.nfs takes the address
# family from the protocol); the mount really runs over RDMA. Errors are
# added to /tmp/nfs-mount.err.
nfs_mount() {
	mkdir -p "$NFS_MNT"
	mount -t nfs -o "proto=${3:-rdma},port=20049,vers=$1" "$2" "$NFS_MNT" \
		2>> /tmp/nfs-mount.err || return
	grep -q " $NFS_MNT nfs.*proto=rdma" /proc/mounts && return
	umount "$NFS_MNT"
	return 1
}

# nfs_round VERS SOURCE [PROTO]: mount, copy every file of $NFS_SRC into a
# directory of its own, unmount, mount again, verify every checksum and
# remove the directory.
nfs_round() {
	local dir=$NFS_MNT/v$1-${3:-rdma} rc
	nfs_mount "$@" || return
	rm -rf "$dir" && mkdir "$dir" && cp "$NFS_SRC"/f* "$dir/" ||
		{ umount "$NFS_MNT"; return 1; }
	umount "$NFS_MNT" || return
	nfs_mount "$@" || return
	(cd "$dir" && sha256sum -c --quiet "$NFS_SRC.sums")
	rc=$?
	rm -rf "$dir"	# room for the next round (brd holds 256 MiB)
	umount "$NFS_MNT"
	return $rc
}

# nfs_copy_across FILE CMD...: FILE of $NFS_SRC is copied into the (mounted)
# export; a second in, CMD restarts the server. CMD must succeed and the
# copy complete intact; what went wrong is printed as "# " lines.
nfs_copy_across() {
	local file=$NFS_SRC/$1 cp_pid rc
	shift
	cp "$file" "$NFS_MNT/restart" 2> /tmp/nfs-cp.err &
	cp_pid=$!
	sleep 1
	if ! "$@"; then
		echo "# the restart ($*) failed"
		wait $cp_pid
		return 1
	fi
	wait $cp_pid
	rc=$?
	sync
	if [ $rc -ne 0 ]; then
		echo "# cp exited with $rc: $(head -c 300 /tmp/nfs-cp.err)"
		return 1
	fi
	cmp "$file" "$NFS_MNT/restart" 2>&1 | sed 's/^/# /'
	[ "${PIPESTATUS[0]}" -eq 0 ] && return
	dmesg | grep -iE 'nfs|rpc' | tail -n 8 | sed 's/^/# /'
	return 1
}

# nfsd_restart: nfsd stopped for 3 s and started again.
nfsd_restart() {
	rpc.nfsd 0
	sleep 3
	nfsd_start
}
