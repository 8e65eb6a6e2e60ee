# A storage target with ib_core's force_mr=1: rdma_rw then registers
# memory for each of the target's RDMA READs and WRITEs (as it must on
# iWARP), so REG_MR and LOCAL_INV come from the target too. The RDMA stack
# is unloaded and ib_core loaded again with force_mr=1; nvmet-rdma serves a
# brd namespace to nvme-rdma over sroce0 and fio verifies 16 KiB I/O (too
# large for the 4 KiB command capsule, so the host registers each one).
# Each I/O costs one fast registration without force_mr and two with it
# (the target's), which the engine's fast_regs counter shows. Last, the
# stack is loaded plainly again.
# vm-timeout: 600
. ./lib.sh
. ./storage-lib.sh
stat() { awk -v k="$1" '$1 == k { print $2 }' /sys/kernel/debug/sroce/engine; }

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

# storage_round FORCE_MR: the stack loaded with force_mr=FORCE_MR, a
# connection, fio's verified 16 KiB writes and reads, and a disconnect;
# prints the fast registrations per I/O, times 10.
nios=$((2 * 16 * 1024 / 16))	# 16 MiB written, then read back, in 16 KiB
rdma_link_gone() { ! rdma link show sroce0/1 > /dev/null 2>&1; }
storage_round() {
	local regs
	nvmet_clear
	rdma link delete sroce0 2> /dev/null
	wait_for 20 rdma_link_gone
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
	regs=$(stat fast_regs)
	check "force_mr=$1: 16 KiB writes read back, verified" \
		fio_verify "$(nvme_ns "$NQN" 1)" --rw=write --bs=16k --iodepth=8 \
		--size=16m
	per_io=$((($(stat fast_regs) - regs) * 10 / nios))
	echo "# force_mr=$1: $per_io tenths of a fast registration per I/O"
	check "force_mr=$1: nvme disconnect" nvme_detach "$NQN"
}

make_veth v0 1
[ -b /dev/ram0 ] || modprobe brd rd_nr=1 rd_size=65536
rdma link add sroce0 type sroce netdev v0 2> /dev/null
storage_round 0
check "force_mr=0: one registration per I/O, the host's ($per_io tenths)" \
	test "$per_io" -ge 9 -a "$per_io" -le 14
storage_round 1
check "force_mr=1: two per I/O, the host's and the target's ($per_io tenths)" \
	test "$per_io" -ge 19 -a "$per_io" -le 24
nvmet_clear
rdma link delete sroce0
check "the stack unloads again" rdma_stack_unload
check "and loads plainly" modprobe ib_core
finish
