# Storage targets with ib_core's force_mr=1: rdma_rw then registers
# memory for each of the target's RDMA READs and WRITEs (as it must on
# iWARP), so REG_MR and LOCAL_INV come from the target too. The RDMA stack
# is unloaded and ib_core loaded again with force_mr=0, then with
# force_mr=1; each time nvmet-rdma serves a brd namespace to nvme-rdma
# over sroce0, LIO a ramdisk to iSER and ib_srpt one to SRP, and fio
# verifies 16 KiB I/O on each. Each I/O (too large for NVMe's 4 KiB
# command capsule, so the host registers each one) costs one fast
# registration without force_mr and two with it (the target's), which the
# engine's fast_regs counter shows. Last, the stack is loaded plainly
# again.
# vm-timeout: 600
# vm-checks: 40
. ./lib.sh
. ./storage-lib.sh
. ./scsi-lib.sh

# rdma_stack_unload: every module using ib_core, then ib_core, removed.
rdma_stack_unload() {
	local i m
	for i in 1 2 3 4 5 6 7 8; do
		[ -d /sys/module/ib_core ] || return 0
		for m in /sys/module/ib_core/holders/*; do
			[ -e "$m" ] && modprobe -r "$(basename "$m")" 2> /dev/null
		done
		modprobe -r ib_core 2> /dev/null
	done
	[ -d /sys/module/ib_core ] || return 0
	echo "# ib_core stays:" $(lsmod | awk '$1 == "ib_core" { print $3, $4 }')
	for m in /sys/module/ib_core/holders/*; do
		echo "# holder $(basename "$m"): refcnt $(cat "$m/refcnt")" \
			$(ls "$m/holders" 2> /dev/null)
		modprobe -r "$(basename "$m")" 2>&1 | sed 's/^/# /'
	done
	return 1
}

# verified_16k TAG DEV: fio's verified 16 KiB writes and reads on DEV;
# sets per_io[TAG] to the fast registrations per I/O, times 10.
declare -A per_io
nios=$((2 * 16 * 1024 / 16))	# 16 MiB written, then read back, in 16 KiB
verified_16k() {
	local regs
	regs=$(sroce_stat fast_regs)
	check "$1: 16 KiB writes read back, verified" \
		fio_verify "$2" --rw=write --bs=16k --iodepth=8 --size=16m
	per_io[$1]=$((($(sroce_stat fast_regs) - regs) * 10 / nios))
	echo "# $1: ${per_io[$1]} tenths of a fast registration per I/O"
}

# scsi_round FORCE_MR NAME DISK_FN UP_CMD DOWN_CMD: the target up and
# logged in to (UP_CMD), verified_16k on its disk (DISK_FN), all of it
# down again (DOWN_CMD).
scsi_round() {
	local tag="force_mr=$1 $2" disk=
	check "$tag: target up, logged in" eval "$4"
	for _ in $(seq 1 300); do
		disk=$("$3") && [ -n "$disk" ] && break
		sleep 0.1
	done
	check "$tag: the LUN is a disk" test -n "$disk"
	[ -n "$disk" ] && verified_16k "$tag" "/dev/$disk"
	check "$tag: logged out, target down" eval "$5"
}

# storage_round FORCE_MR: the stack loaded with force_mr=FORCE_MR, then
# NVMe-oF, iSER and SRP rounds of verified_16k.
rdma_link_gone() { ! rdma link show sroce0/1 > /dev/null 2>&1; }
storage_round() {
	nvmet_clear
	check "force_mr=$1: rdma link delete sroce0" rdma link delete sroce0
	check "force_mr=$1: sroce0 is gone" wait_for 20 rdma_link_gone
	check "force_mr=$1: the RDMA stack unloads" rdma_stack_unload
	# force_mr is not in sysfs: the registrations per I/O show it.
	check "force_mr=$1: ib_core loads with it" modprobe ib_core force_mr="$1"
	modprobe sroce &&
		rdma link add sroce0 type sroce netdev v0 &&
		wait_for 10 have_gid ::ffff:192.0.2.1
	check "force_mr=$1: nvmet over sroce0" eval 'nvmet_load &&
		nvmet_subsys "$NQN" /dev/ram0 &&
		nvmet_port 1 rdma ipv4 192.0.2.1 4420 "$NQN"'
	check "force_mr=$1: nvme connect" nvme_attach "$NQN" rdma 192.0.2.1 4420 -i 2
	verified_16k "force_mr=$1 nvme" "$(nvme_ns "$NQN" 1)"
	check "force_mr=$1: nvme disconnect" nvme_detach "$NQN"
	nvmet_clear
	scsi_round "$1" iser iser_disk \
		'iser_target 192.0.2.1 && iser_login 192.0.2.1' \
		'iser_logout 192.0.2.1 && iser_target_del 192.0.2.1 &&
		 { iscsiadm -m node -o delete > /dev/null; pkill -x iscsid; }'
	scsi_round "$1" srp srp_disk \
		'srp_target sroce0 192.0.2.1 192.0.2.1 && modprobe ib_srp &&
		 modprobe sd_mod && srp_login sroce0 192.0.2.1 "$guid"' \
		'srp_logout && modprobe -r ib_srp &&
		 srp_target_del sroce0 192.0.2.1 192.0.2.1'
}

make_veth v0 1
guid=$(eui64 "$(cat /sys/class/net/v0/address)")
[ -b /dev/ram0 ] || modprobe brd rd_nr=1 rd_size=65536
rdma link add sroce0 type sroce netdev v0 2> /dev/null
storage_round 0
storage_round 1
for u in nvme iser srp; do
	a=${per_io[force_mr=0 $u]:-0} b=${per_io[force_mr=1 $u]:-0}
	check "$u, force_mr=0: one registration per I/O, the host's ($a tenths)" \
		test "$a" -ge 9 -a "$a" -le 14
	check "$u, force_mr=1: two per I/O, the host's and the target's ($b tenths)" \
		test "$b" -ge 19 -a "$b" -le 24
done
nvmet_clear
rdma link delete sroce0
check "the stack unloads again" rdma_stack_unload
check "and loads plainly" modprobe ib_core
finish
