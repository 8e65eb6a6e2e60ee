# SRP through sroce0 on one host: ib_srpt exports a ramdisk LUN and
# listens on RDMA/CM port 5555; ib_srp logs in through RDMA/CM; fio
# verifies every block (crc32c) at QD1 and QD32, 4 KiB to 4 MiB (several
# MRs per command); logout returns every sroce object to its baseline. The
# initiator registers memory with REG_MR (counted). Then the target port
# is disabled under I/O: the I/O fails after fast_io_fail_tmo, and
# removing the SRP port cleans up.
# vm-timeout: 420
# vm-checks: 16
. ./lib.sh
. ./storage-lib.sh
. ./scsi-lib.sh
make_veth v0 1
rdma link add sroce0 type sroce netdev v0

check "ib_srpt exports a ramdisk and listens on RDMA/CM port 5555" \
	srp_target sroce0 192.0.2.1 192.0.2.1
guid=$(eui64 "$(cat /sys/class/net/v0/address)")
check "ib_srpt's service GUID is sroce0's node GUID ($guid)" \
	test "$(tr -d : < /sys/class/infiniband/sroce0/node_guid)" = "$guid"
# ib_srp takes a PD of each device when it loads.
modprobe ib_srp && modprobe sd_mod
base=$(cat "$OBJECTS")
back_at_base() {
	wait_for 30 ulp_objects_at "$base" && return
	echo "# objects:" $(cat "$OBJECTS") "; at the start:" $base
	return 1
}
regs=$(sroce_stat fast_regs)
check "ib_srp logs in through RDMA/CM" srp_login sroce0 192.0.2.1 "$guid"
check "the LUN shows up as a disk" wait_for 30 disk_up srp_disk
verify_lun SRP "/dev/$(srp_disk)" 4m
check "the initiator registered memory with REG_MR" \
	test "$(sroce_stat fast_regs)" -gt $((regs + 100))
check "the SRP host logs out" srp_logout
check "every sroce object but pooled CQs is back at its baseline" \
	back_at_base

# The target goes away under I/O: srpt disconnects, ib_srp's reconnects
# fail, and after fast_io_fail_tmo (2 s) the I/O fails.
check "ib_srp logs in again" srp_login sroce0 192.0.2.1 "$guid"
check "the LUN is back" wait_for 30 disk_up srp_disk
tmo() {
	local p
	for p in /sys/class/srp_remote_ports/port-*; do
		echo 2 > "$p/fast_io_fail_tmo" && echo 30 > "$p/dev_loss_tmo" ||
			return
	done
}
check "fast_io_fail_tmo 2 s, dev_loss_tmo 30 s" tmo
gone_under_io "/dev/$(srp_disk)" "the target port is disabled under I/O" \
	sh -c "echo 0 > '$(srp_tpg sroce0)/enable'"
check "the SRP host logs out of the gone target" srp_logout
check "every sroce object but pooled CQs is back at its baseline (target gone)" \
	back_at_base
srp_target_del sroce0 192.0.2.1 192.0.2.1
finish
