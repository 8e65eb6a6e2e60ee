# shellcheck shell=bash
# iSER and SRP between the lab VMs; sourced by storage-phases.sh. Both VMs call a
# phase with the same TAG. ROLE "serve" exports LIO's ramdisk to the peer
# and waits for its word that it is done; ROLE "drive" logs in from $D,
# verifies with fio, logs out, checks that sroce's objects are released
# and says so.
# shellcheck source=tests/vm/scsi-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../vm/scsi-lib.sh"

# scsi_drive TAG DISK_FN LOGOUT_CMD LOGIN_CMD...: LOGIN_CMD retried for
# 120 s (the target may not be up yet), the disk (DISK_FN) verified with
# fio, LOGOUT_CMD, and sroce's objects released.
scsi_drive() {
	local tag=$1 disk_fn=$2 logout=$3 disk=
	shift 3
	for _ in $(seq 1 120); do
		"$@" 2> /tmp/scsi-login.err && break
		sleep 1
	done
	for _ in $(seq 1 300); do
		disk=$("$disk_fn")
		[ -n "$disk" ] && break
		sleep 0.1
	done
	check "$tag: logged in from $D to $PEER4, the LUN is a disk" \
		test -n "$disk"
	if [ -z "$disk" ]; then
		sed 's/^/# login: /' /tmp/scsi-login.err
		dmesg | grep -iE 'srp|iser|iscsi' | tail -n 8 | sed 's/^/# /'
	fi
	[ -n "$disk" ] && verify_lun "$tag" "/dev/$disk" 1m
	[ -s /tmp/fio-verify.log ] &&
		grep -E 'err=|IOPS' /tmp/fio-verify.log | sed 's/^/# /'
	# shellcheck disable=SC2086 # a command line, split into its words
	check "$tag: logout" $logout
	[ "$NDEV" = rxe ] ||
		check "$tag: host objects released" wait_for 30 objects_gone pooled-cqs
	renew_device
	lab_say_done
}

# scsi_serve TAG WHAT TARGET_CMD DEL_CMD: the target up (checked as WHAT),
# kept until the host is done, then removed.
# shellcheck disable=SC2086 # the commands are split into their words
scsi_serve() {
	check "$1: $2" $3
	lab_check_done "$1"
	dmesg | grep -iE 'srpt.*(reject|invalid)|isert.*reject' |
		tail -n 4 | sed 's/^/# target: /'
	$4
	[ "$NDEV" = rxe ] ||
		check "$1: target objects released" wait_for 30 objects_gone pooled-cqs
	renew_device
}

iser_phase() {	# iser_phase ROLE TAG
	if [ "$1" = serve ]; then
		scsi_serve "$2" "LIO exports a ramdisk on an iSER portal of $D" \
			"iser_target 192.0.2.$ME" "iser_target_del 192.0.2.$ME"
		return
	fi
	scsi_drive "$2" iser_disk "iser_logout $PEER4" \
		iser_login "$PEER4"
	iscsiadm -m node -o delete > /dev/null 2>&1
}

srp_phase() {	# srp_phase ROLE TAG
	local mac
	if [ "$1" = serve ]; then
		scsi_serve "$2" "ib_srpt exports a ramdisk on $D to $PEER4" \
			"srp_target $D $PEER4 192.0.2.$ME" \
			"srp_target_del $D $PEER4 192.0.2.$ME"
		return
	fi
	# The target's service GUID is its device's node GUID, the EUI-64 of
	# its MAC address. A refused TCP connection resolves that address.
	timeout 5 bash -c ": 2> /dev/null > /dev/tcp/$PEER4/9"
	mac=$(ip neigh show "$PEER4" | awk '{ print $5; exit }')
	echo "# srp: the target's MAC is $mac, its service GUID $(eui64 "$mac")"
	scsi_drive "$2" srp_disk srp_host_off \
		srp_login "$D" "$PEER4" "$(eui64 "$mac")"
}

# srp_host_off: logged out, and ib_srp (which holds a PD of each device)
# unloaded.
srp_host_off() { srp_logout && modprobe -r ib_srp; }
