# SRP through sroce0 on one host: ib_srpt (LIO, configured through
# configfs) exports a ramdisk LUN and listens on RDMA/CM port 5555; ib_srp
# logs in through RDMA/CM; fio verifies every block (crc32c) at QD1 and
# QD32, 4 KiB to 4 MiB (several MRs per command); logout returns every
# sroce object to its baseline. The initiator registers memory with REG_MR
# (counted). Then the target port is disabled under I/O: the I/O fails
# after fast_io_fail_tmo, and removing the SRP port cleans up.
# vm-timeout: 420
. ./lib.sh
. ./storage-lib.sh
stat() { awk -v k="$1" '$1 == k { print $2 }' /sys/kernel/debug/sroce/engine; }
make_veth v0 1
rdma link add sroce0 type sroce netdev v0
cfg=/sys/kernel/config/target
# The target port's name: the interface ID of GID 0, as srpt formats it.
port=$(cut -d: -f5-8 /sys/class/infiniband/sroce0/ports/1/gids/0)
tpg=$cfg/srpt/$port/tpg_1

target() {
	modprobe configfs || return
	mountpoint -q /sys/kernel/config ||
		mount -t configfs none /sys/kernel/config || return
	modprobe target_core_mod && modprobe ib_srpt || return
	mkdir -p "$cfg/core/rd_mcp_0/rd0" &&
		echo rd_pages=16384 > "$cfg/core/rd_mcp_0/rd0/control" &&
		echo 1 > "$cfg/core/rd_mcp_0/rd0/enable" || return
	mkdir -p "$cfg/srpt" &&
		echo 5555 > "$cfg/srpt/discovery_auth/rdma_cm_port" || return
	# ib_srpt has no demo mode: the initiator (named by its address for
	# an RDMA/CM login) needs an ACL, and the LUN mapped into it.
	mkdir -p "$tpg/lun/lun_0" "$tpg/acls/192.0.2.1/lun_0" &&
		ln -s "$cfg/core/rd_mcp_0/rd0" "$tpg/lun/lun_0/rd0" &&
		ln -s "$tpg/lun/lun_0" "$tpg/acls/192.0.2.1/lun_0/lun_0" &&
		echo 1 > "$tpg/enable"
}
check "ib_srpt exports a ramdisk and listens on RDMA/CM port 5555" target

guid=$(tr -d : < /sys/module/ib_srpt/parameters/srpt_service_guid 2>/dev/null |
	sed 's/^0x//')
# ib_srp takes a PD of each device when it loads.
modprobe ib_srp && modprobe sd_mod
base=$(cat "$OBJECTS")
# ib_srpt takes its CQs from the core's CQ pool, which keeps them on the
# device until it goes: every other object type comes back.
at_base() { objects_at "$base" ucontexts pds qps mrs ahs srqs; }
back_at_base() {
	wait_for 30 at_base && return
	echo "# objects:" $(cat "$OBJECTS") "; at the start:" $base
	return 1
}
regs=$(stat fast_regs)
login() {
	modprobe ib_srp && modprobe sd_mod || return
	echo "id_ext=$guid,ioc_guid=$guid,dest=192.0.2.1:5555,max_sect=8192" \
		> /sys/class/infiniband_srp/srp-sroce0-1/add_target
}
check "ib_srp logs in through RDMA/CM" login
lun_disk() {	# the disk of the SRP host's LUN
	local h
	for h in /sys/class/srp_remote_ports/port-*; do
		[ -e "$h" ] || continue
		ls "$h"/device/../target*/*/block 2> /dev/null | head -n 1
		return
	done
}
disk_up() { [ -n "$(lun_disk)" ]; }
check "the LUN shows up as a disk" wait_for 30 disk_up
dev=/dev/$(lun_disk)
verify_lun SRP "$dev" 4m
check "the initiator registered memory with REG_MR" \
	test "$(stat fast_regs)" -gt $((regs + 100))
logout() {
	local p
	for p in /sys/class/srp_remote_ports/port-*; do
		[ -e "$p/delete" ] && echo 1 > "$p/delete"
	done
	wait_for 30 sh -c '! ls /sys/class/srp_remote_ports/port-* > /dev/null 2>&1'
}
check "the SRP host logs out" logout
check "every sroce object but pooled CQs is back at its baseline" \
	back_at_base

# The target goes away under I/O: srpt disconnects, ib_srp's reconnects
# fail, and after fast_io_fail_tmo (2 s) the I/O fails.
check "ib_srp logs in again" login
check "the LUN is back" wait_for 30 disk_up
tmo() {
	local p
	for p in /sys/class/srp_remote_ports/port-*; do
		echo 2 > "$p/fast_io_fail_tmo" && echo 30 > "$p/dev_loss_tmo" ||
			return
	done
}
check "fast_io_fail_tmo 2 s, dev_loss_tmo 30 s" tmo
gone_under_io "/dev/$(lun_disk)" "the target port is disabled under I/O" \
	sh -c "echo 0 > '$tpg/enable'"
check "the SRP host logs out of the gone target" logout
check "every sroce object but pooled CQs is back at its baseline (target gone)" \
	back_at_base
echo 0 > "$tpg/enable"
rm -f "$tpg/acls/192.0.2.1/lun_0/lun_0" "$tpg/lun/lun_0/rd0"
rmdir "$tpg/acls/192.0.2.1/lun_0" "$tpg/acls/192.0.2.1" "$tpg/lun/lun_0" "$tpg" "$cfg/srpt/$port" 2> /dev/null
echo 0 > "$cfg/srpt/discovery_auth/rdma_cm_port"
rmdir "$cfg/srpt"	# the fabric's directory holds ib_srpt
finish
