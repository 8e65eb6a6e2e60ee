# iSER through sroce0 on one host: LIO (configfs) exports a ramdisk LUN on
# a portal with iSER enabled; open-iscsi discovers it over TCP and logs in
# with the iser interface; fio verifies every block (crc32c) at QD1 and
# QD32, 4 KiB to 512 KiB; logout leaves every sroce object at its
# baseline. The initiator registers memory with REG_MR (counted). Then the
# target portal group is disabled under I/O: the I/O fails after the
# session's replacement timeout, and logout cleans up.
# vm-timeout: 420
. ./lib.sh
. ./storage-lib.sh
stat() { awk -v k="$1" '$1 == k { print $2 }' /sys/kernel/debug/sroce/engine; }
make_veth v0 1
rdma link add sroce0 type sroce netdev v0
iqn=iqn.2026-11.org.sroce:lab

# LIO through configfs, as targetcli would write it (targetcli itself
# needs a D-Bus the lab VM does not run).
cfg=/sys/kernel/config/target
tpg=$cfg/iscsi/$iqn/tpgt_1
target() {
	modprobe configfs || return
	mountpoint -q /sys/kernel/config ||
		mount -t configfs none /sys/kernel/config || return
	modprobe target_core_mod && modprobe iscsi_target_mod &&
		modprobe ib_isert || return
	mkdir -p "$cfg/core/rd_mcp_0/rd0" &&
		echo rd_pages=16384 > "$cfg/core/rd_mcp_0/rd0/control" &&
		echo 1 > "$cfg/core/rd_mcp_0/rd0/enable" || return
	mkdir -p "$tpg/lun/lun_0" "$tpg/np/192.0.2.1:3260" &&
		ln -s "$cfg/core/rd_mcp_0/rd0" "$tpg/lun/lun_0/rd0" &&
		echo 1 > "$tpg/np/192.0.2.1:3260/iser" || return
	echo 0 > "$tpg/attrib/authentication" &&
		echo 1 > "$tpg/attrib/generate_node_acls" &&
		echo 1 > "$tpg/attrib/cache_dynamic_acls" &&
		echo 0 > "$tpg/attrib/demo_mode_write_protect" &&
		echo 1 > "$tpg/enable"
}
check "LIO exports a ramdisk on an iSER portal" target

initiator() {
	modprobe ib_iser && modprobe sd_mod || return
	mkdir -p /run/lock/iscsi	# open-iscsi's lock directory
	pgrep -x iscsid > /dev/null || iscsid || return
	sleep 1
	timeout 60 iscsiadm -m discovery -t sendtargets -p 192.0.2.1:3260 \
		> /tmp/iser-disc.log 2>&1 &&
		grep -q "$iqn" /tmp/iser-disc.log || return
	node -o update -n iface.transport_name -v iser &&
		node -o update -n node.session.timeo.replacement_timeout -v 5 &&
		login
}
node() { timeout 60 iscsiadm -m node -T "$iqn" -p 192.0.2.1:3260 "$@" > /dev/null; }
login() {
	timeout 120 iscsiadm -m node -T "$iqn" -p 192.0.2.1:3260 --login \
		> /tmp/iser-login.log 2>&1
}
base=$(cat "$OBJECTS")
# LIO's isert takes its CQs from the core's CQ pool, which keeps them on
# the device until it goes: every other object type comes back.
at_base() { objects_at "$base" ucontexts pds qps mrs ahs srqs; }
regs=$(stat fast_regs)
check "open-iscsi discovers the target and logs in over iSER" initiator
[ -f /tmp/iser-login.log ] || sed 's/^/# /' /tmp/iser-disc.log
sed 's/^/# /' /tmp/iser-login.log 2> /dev/null
# The LUN's disk: the SCSI disk whose transport is iser.
lun_disk() {
	local s
	for s in /sys/class/iscsi_session/session*; do
		[ "$(cat "$s/targetname" 2>/dev/null)" = "$iqn" ] || continue
		ls "$s"/device/target*/*/block 2> /dev/null | head -n 1
		return
	done
}
disk_up() { [ -n "$(lun_disk)" ]; }
check "the LUN shows up as a disk" wait_for 30 disk_up
check "the session's transport is iser" sh -c \
	"iscsiadm -m session -P 1 | grep -q 'Iface Transport: iser'"
dev=/dev/$(lun_disk)
verify_lun iSER "$dev" 512k
check "the initiator registered memory with REG_MR" \
	test "$(stat fast_regs)" -gt $((regs + 100))
check "logout" node --logout
check "every sroce object but pooled CQs is back at its baseline" \
	wait_for 30 at_base

# The target goes away under I/O: LIO drops the session, the initiator's
# relogins fail, and after the 5 s replacement timeout the I/O fails.
check "login again" login
check "the LUN is back" wait_for 30 disk_up
gone_under_io "/dev/$(lun_disk)" "the target portal group is disabled under I/O" \
	sh -c "echo 0 > '$tpg/enable'"
check "logout of the failed session" node --logout
check "every sroce object but pooled CQs is back at its baseline (target gone)" \
	wait_for 30 at_base
iscsiadm -m node -o delete > /dev/null 2>&1
echo 0 > "$tpg/enable"
rm -f "$tpg/lun/lun_0/rd0"
rmdir "$tpg/np/192.0.2.1:3260" "$tpg/lun/lun_0" "$tpg" "$cfg/iscsi/$iqn" \
	"$cfg/core/rd_mcp_0/rd0" "$cfg/core/rd_mcp_0" 2> /dev/null
pkill -x iscsid
finish
