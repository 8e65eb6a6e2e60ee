# iSER through sroce0 on one host: LIO exports a ramdisk LUN on a portal
# with iSER enabled; open-iscsi discovers it over TCP and logs in with the
# iser transport; fio verifies every block (crc32c) at QD1 and QD32, 4 KiB
# to 512 KiB; logout leaves every sroce object at its baseline. The
# initiator registers memory with REG_MR (counted). Then the target portal
# group is disabled under I/O: the I/O fails after the session's
# replacement timeout, and logout cleans up.
# vm-timeout: 420
# vm-checks: 15
. ./lib.sh
. ./storage-lib.sh
. ./scsi-lib.sh
make_veth v0 1
rdma link add sroce0 type sroce netdev v0

check "LIO exports a ramdisk on an iSER portal" iser_target 192.0.2.1
base=$(cat "$OBJECTS")
regs=$(sroce_stat fast_regs)
check "open-iscsi discovers the target and logs in over iSER" \
	iser_login 192.0.2.1
[ -f /tmp/iser-login.log ] || sed 's/^/# /' /tmp/iser-disc.log
sed 's/^/# /' /tmp/iser-login.log 2> /dev/null
check "the LUN shows up as a disk" wait_for 30 disk_up iser_disk
check "the session's transport is iser" sh -c \
	"iscsiadm -m session -P 1 | grep -q 'Iface Transport: iser'"
verify_lun iSER "/dev/$(iser_disk)" 512k
check "the initiator registered memory with REG_MR" \
	test "$(sroce_stat fast_regs)" -gt $((regs + 100))
check "logout" iser_logout 192.0.2.1
check "every sroce object but pooled CQs is back at its baseline" \
	wait_for 30 ulp_objects_at "$base"

# The target goes away under I/O: LIO drops the session, the initiator's
# relogins fail, and after the 5 s replacement timeout the I/O fails.
relogin() { iser_node 192.0.2.1 --login > /dev/null; }
check "login again" relogin
check "the LUN is back" wait_for 30 disk_up iser_disk
gone_under_io "/dev/$(iser_disk)" "the target portal group is disabled under I/O" \
	sh -c "echo 0 > '$(iser_tpg)/enable'"
check "logout of the failed session" iser_logout 192.0.2.1
check "every sroce object but pooled CQs is back at its baseline (target gone)" \
	wait_for 30 ulp_objects_at "$base"
iscsiadm -m node -o delete > /dev/null 2>&1
iser_target_del 192.0.2.1
pkill -x iscsid
finish
