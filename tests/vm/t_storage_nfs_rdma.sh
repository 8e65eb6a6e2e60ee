# NFS over RDMA through sroce0 on one host: nfsd listens on "rdma 20049"
# and exports an ext4 file system on brd; the client mounts it with
# -o rdma,port=20049 as NFSv3 and NFSv4.2, and with proto=rdma6 over IPv6;
# it writes files of 1 B to 64 MiB, unmounts, mounts again and compares
# every file's checksum; nfsd is restarted in the middle of a copy, which
# the client rides out. The client registers memory with REG_MR (counted).
# vm-timeout: 600
# vm-checks: 7
. ./lib.sh
. ./nfs-lib.sh
make_veth v0 1
rdma link add sroce0 type sroce netdev v0
check "nfsd exports brd and listens on rdma 20049" nfs_server_up
nfs_files 1 4095 4096 65537 1048576 8388608 67108864

regs=$(sroce_stat fast_regs)
check "NFSv4.2 over RDMA: files of 1 B to 64 MiB, remounted, checksums match" \
	nfs_round 4.2 192.0.2.1:/
check "NFSv3 over RDMA: the same" nfs_round 3 "192.0.2.1:$NFS_EXPORT"
check "NFSv4.2 over RDMA on IPv6: the same" nfs_round 4.2 "[2001:db8::1]:/" rdma6
check "the client registered memory with REG_MR" \
	test "$(sroce_stat fast_regs)" -gt $((regs + 100))

# nfsd restarts while a 64 MiB copy runs; the copy completes intact.
check "NFSv4.2 mount for the restart" nfs_mount 4.2 192.0.2.1:/
check "nfsd restarted during a copy: the copy completes intact" \
	timeout 300 bash -c "$(declare -f nfs_copy_across nfsd_restart nfsd_start)
		NFS_SRC=$NFS_SRC NFS_MNT=$NFS_MNT nfs_copy_across f67108864 nfsd_restart"
umount "$NFS_MNT"
nfs_server_down
finish
