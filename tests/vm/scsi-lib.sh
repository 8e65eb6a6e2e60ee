# shellcheck shell=bash
# SCSI over RDMA in the lab VMs: LIO targets written through configfs as
# targetcli would write them (targetcli wants a D-Bus the VMs do not run),
# exporting a 64 MiB ramdisk as LUN 0 over iSER (ib_isert) or SRP
# (ib_srpt), and the initiators (open-iscsi with ib_iser, ib_srp). Sourced
# by tests/vm and tests/lab after storage-lib.sh; every function returns
# non-zero on failure.
LIO=/sys/kernel/config/target
IQN=iqn.2026-11.org.sroce:lab
LIO_RD=$LIO/core/rd_mcp_0/rd0

# lio_load MODULE...: configfs mounted, LIO's core and MODULEs loaded, the
# ramdisk there.
lio_load() {
	local m
	modprobe configfs || return
	mountpoint -q /sys/kernel/config ||
		mount -t configfs none /sys/kernel/config || return
	for m in target_core_mod "$@"; do
		modprobe "$m" || return
	done
	[ -d "$LIO_RD" ] && return
	mkdir -p "$LIO_RD" &&
		echo rd_pages=16384 > "$LIO_RD/control" &&
		echo 1 > "$LIO_RD/enable"
}

# lio_ramdisk_del: the ramdisk gone (no LUN may use it any more).
lio_ramdisk_del() {
	rmdir "$LIO_RD" "$LIO/core/rd_mcp_0" 2> /dev/null
	return 0
}

iser_tpg() { echo "$LIO/iscsi/$IQN/tpgt_1"; }

# iser_target ADDR: the ramdisk as LUN 0 of IQN on an iSER portal at
# ADDR:3260, for any initiator, without authentication.
iser_target() {
	local tpg
	tpg=$(iser_tpg)
	lio_load iscsi_target_mod ib_isert || return
	mkdir -p "$tpg/lun/lun_0" "$tpg/np/$1:3260" &&
		ln -s "$LIO_RD" "$tpg/lun/lun_0/rd0" &&
		echo 1 > "$tpg/np/$1:3260/iser" || return
	echo 0 > "$tpg/attrib/authentication" &&
		echo 1 > "$tpg/attrib/generate_node_acls" &&
		echo 1 > "$tpg/attrib/cache_dynamic_acls" &&
		echo 0 > "$tpg/attrib/demo_mode_write_protect" &&
		echo 1 > "$tpg/enable"
}

# iser_target_del ADDR: the target of iser_target ADDR gone.
iser_target_del() {
	local tpg
	tpg=$(iser_tpg)
	[ -d "$tpg" ] || return 0
	echo 0 > "$tpg/enable"
	rm -f "$tpg/lun/lun_0/rd0"
	rmdir "$tpg/np/$1:3260" "$tpg/lun/lun_0" "$tpg" "$LIO/iscsi/$IQN" \
		2> /dev/null
	lio_ramdisk_del
}

# iser_node ADDR ISCSIADM_ARG...: iscsiadm -m node for IQN at ADDR.
iser_node() {
	local addr=$1
	shift
	timeout 120 iscsiadm -m node -T "$IQN" -p "$addr:3260" "$@"
}

# iser_login ADDR: iscsid up; IQN discovered at ADDR over TCP, its node set
# to the iser transport with a 5 s replacement timeout, and logged in.
# Logs: /tmp/iser-disc.log, /tmp/iser-login.log.
iser_login() {
	modprobe ib_iser && modprobe sd_mod || return
	mkdir -p /run/lock/iscsi	# open-iscsi's lock directory
	pgrep -x iscsid > /dev/null || { iscsid && sleep 1; } || return
	timeout 60 iscsiadm -m discovery -t sendtargets -p "$1:3260" \
		> /tmp/iser-disc.log 2>&1 && grep -q "$IQN" /tmp/iser-disc.log &&
		iser_node "$1" -o update -n iface.transport_name -v iser \
			> /dev/null &&
		iser_node "$1" -o update \
			-n node.session.timeo.replacement_timeout -v 5 \
			> /dev/null &&
		iser_node "$1" --login > /tmp/iser-login.log 2>&1
}

# iser_logout ADDR: the session with IQN at ADDR logged out.
iser_logout() { iser_node "$1" --logout > /dev/null; }

# disk_up DISK_FN: DISK_FN (iser_disk, srp_disk) names a disk.
disk_up() { [ -n "$("$1")" ]; }

# iser_disk: the disk (sda, ...) of IQN's session.
iser_disk() {
	local s
	for s in /sys/class/iscsi_session/session*; do
		[ "$(cat "$s/targetname" 2>/dev/null)" = "$IQN" ] || continue
		first_block "$s"/device/target*/*/block/*
		return
	done
}

# first_block PATH...: the name of the first PATH that exists.
first_block() {
	local b
	for b in "$@"; do
		[ -e "$b" ] && { basename "$b"; return; }
	done
}

# srp_tpg DEV: the portal group of ib_srpt's port on DEV, named after the
# interface ID of DEV's GID 0.
srp_tpg() {
	echo "$LIO/srpt/$(cut -d: -f5-8 "/sys/class/infiniband/$1/ports/1/gids/0")/tpg_1"
}

# srp_acls INITIATOR LOCAL: the names of the ACLs srp_target makes.
# ib_srpt (6.1) names an RDMA/CM session after its cm_id's source address,
# which on the target is the target's own address; an ACL for the
# initiator's address serves a kernel that names the peer.
srp_acls() {
	echo "$1"
	[ "$2" = "$1" ] || echo "$2"
}

# srp_target DEV INITIATOR LOCAL: ib_srpt listens on RDMA/CM port 5555 and
# its port on DEV exports the ramdisk as LUN 0 to the initiator at address
# INITIATOR, reaching this host at address LOCAL. srpt has no demo mode:
# the LUN is mapped into an ACL of each name srp_acls gives.
srp_target() {
	local tpg acl
	tpg=$(srp_tpg "$1")
	lio_load ib_srpt || return
	mkdir -p "$LIO/srpt" &&
		echo 5555 > "$LIO/srpt/discovery_auth/rdma_cm_port" &&
		mkdir -p "$tpg/lun/lun_0" &&
		ln -s "$LIO_RD" "$tpg/lun/lun_0/rd0" || return
	for acl in $(srp_acls "$2" "$3"); do
		mkdir -p "$tpg/acls/$acl/lun_0" &&
			ln -s "$tpg/lun/lun_0" "$tpg/acls/$acl/lun_0/lun_0" ||
			return
	done
	echo 1 > "$tpg/enable"
}

# srp_target_del DEV INITIATOR LOCAL: the target of srp_target gone, and
# with it the fabric's directory (which holds ib_srpt) and ib_srpt (which
# holds a PD and an SRQ of each device).
srp_target_del() {
	local tpg acl
	tpg=$(srp_tpg "$1")
	[ -d "$LIO/srpt" ] || return 0
	[ -d "$tpg" ] && echo 0 > "$tpg/enable"
	for acl in $(srp_acls "$2" "$3"); do
		rm -f "$tpg/acls/$acl/lun_0/lun_0"
		rmdir "$tpg/acls/$acl/lun_0" "$tpg/acls/$acl" 2> /dev/null
	done
	rm -f "$tpg/lun/lun_0/rd0"
	rmdir "$tpg/lun/lun_0" "$tpg" "$(dirname "$tpg")" 2> /dev/null
	echo 0 > "$LIO/srpt/discovery_auth/rdma_cm_port"
	rmdir "$LIO/srpt"
	lio_ramdisk_del
	modprobe -r ib_srpt
}

# srp_login DEV ADDR GUID: ib_srp on DEV logs in to the target at ADDR
# whose service GUID (16 hex digits) is GUID.
srp_login() {
	modprobe ib_srp && modprobe sd_mod || return
	echo "id_ext=$3,ioc_guid=$3,dest=$2:5555,max_sect=8192" \
		> "/sys/class/infiniband_srp/srp-$1-1/add_target"
}

# srp_disk: the disk (sda, ...) of the SRP host's LUN.
srp_disk() {
	local p
	for p in /sys/class/srp_remote_ports/port-*; do
		[ -e "$p" ] || continue
		first_block "$p"/device/../target*/*/block/*
		return
	done
}

# srp_logout: every SRP remote port deleted.
srp_logout() {
	local p
	for p in /sys/class/srp_remote_ports/port-*; do
		[ -e "$p/delete" ] && echo 1 > "$p/delete"
	done
	wait_for 30 sh -c '! ls /sys/class/srp_remote_ports/port-* > /dev/null 2>&1'
}

# eui64 MAC: the EUI-64 of MAC in 16 hex digits: the node GUID sroce and
# rdma_rxe give a device, which ib_srpt takes as its service GUID.
eui64() {
	local IFS=: b
	read -ra b <<< "$1"
	printf '%02x%s%sfffe%s%s%s\n' $((0x${b[0]} ^ 2)) "${b[1]}" "${b[2]}" \
		"${b[3]}" "${b[4]}" "${b[5]}"
}
