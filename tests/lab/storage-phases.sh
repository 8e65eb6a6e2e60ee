# shellcheck shell=bash
# Storage between the lab VMs; sourced by guest.sh. Both VMs call a phase
# with the same TAG. ROLE "serve" exports storage from this VM and does
# what the peer asks of it (words on TCP port 18700) until the peer says
# "done"; ROLE "drive" uses the storage from $D, checks the data, checks
# that sroce's objects are released and says "done".
# shellcheck source=tests/vm/storage-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../vm/storage-lib.sh"
# shellcheck source=tests/vm/nfs-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../vm/nfs-lib.sh"


# device_add: $D added on $IF, with its IPv4 GID at index $GID4 again.
device_add() {
	rdma link add "$D" type "$NDEV" netdev "$IF" || return
	for _ in $(seq 1 50); do
		[ "$(gid_index "::ffff:192.0.2.$ME" "$D")" = "$GID4" ] && return 0
		sleep 0.2
	done
	echo "# $D came back without its GID $GID4"
	return 1
}

# The device deleted and added again: a kernel ULP leaves CQs in the
# core's pool of the device, which later checks would count.
renew_device() {
	rdma link delete "$D" && device_add
}

lab_say_done() { peer_say "$PEER4" "done"; }

# lab_check_done TAG [ON_ADD]: does what the peer asks until it says
# "done": "delete-link" deletes $D (under the peer's I/O), adds it again 5 s
# later and runs ON_ADD (checked); "restart-nfsd" restarts nfsd.
lab_check_done() {
	local word
	while word=$(peer_hear); do
		case $word in
		delete-link)
			check "$1: rdma link delete $D under the peer's I/O" \
				timeout 60 rdma link delete "$D"
			sleep 5
			check "$1: $D added again" device_add
			[ -z "${2:-}" ] || check "$1: then $2" "$2" ;;
		restart-nfsd)
			check "$1: nfsd restarted under the peer's copy" \
				nfsd_restart ;;
		*) break ;;
		esac
	done
	check "$1: the host reports it is done (${word:-nothing})" \
		test "$word" = "done"
}

# NVMe over Fabrics. ROLE "serve" exports a brd namespace through
# nvmet-rdma (with SRQs on sroce) on this VM's IPv4 address; ROLE "drive"
# connects with nvme-rdma, writes and verifies with fio, disconnects, then
# runs each FAULT under verified I/O on a new connection:
# - flap: this VM's netdev down for 10 s; the host reconnects and fio's
#   data is intact;
# - peer-delete: the target's device deleted, added again 5 s later and
#   its port made again;
#   the host reconnects and fio's data is intact;
# - delete: this VM's device deleted; fio ends by itself and the
#   controller goes away.
nvme_phase() {	# nvme_phase ROLE TAG [FAULT...]
	local role=$1 tag=$2 dev srq regs invs inline acks fault
	shift 2
	if [ "$role" = serve ]; then
		modprobe brd rd_nr=1 rd_size=65536
		# A sroce target takes its receive buffers from SRQs.
		srq=
		[ "$NDEV" = rxe ] || srq=use_srq=1
		check "$tag: nvmet exports a brd namespace over $D" \
			eval "nvmet_load $srq && nvmet_subsys $NQN /dev/ram0 &&
			      nvmet_port 1 rdma ipv4 192.0.2.$ME 4420 $NQN"
		[ -z "$srq" ] ||
			check "$tag: nvmet-rdma runs with use_srq" \
				grep -qx Y /sys/module/nvmet_rdma/parameters/use_srq
		lab_check_done "$tag" nvmet_port_again
		nvmet_clear
		[ "$NDEV" = rxe ] ||
			check "$tag: target objects released" wait_for 30 objects_gone pooled-cqs
		renew_device
		return
	fi
	modprobe nvme-rdma
	regs=$(sroce_stat fast_regs)
	invs=$(sroce_stat invalidates)
	# The paths that spare the worker a wakeup (off by default), on for
	# this phase: their checks are below, and the phase's data checks
	# cover them.
	if [ "$NDEV" != rxe ]; then
		echo 1 > "$(sroce_switch post_inline)"
		echo 1 > "$(sroce_switch ack_in_softirq)"
	fi
	inline=$(sroce_stat posts_sent_inline)
	acks=$(sroce_stat acks_in_softirq)
	for _ in $(seq 1 120); do
		nvme_attach "$NQN" rdma "$PEER4" 4420 2> /dev/null && break
		sleep 1
	done
	dev=$(nvme_ns "$NQN" 1)
	check "$tag: nvme connect -t rdma from $D to $PEER4" test -n "$dev"
	check "$tag: 4 KiB writes at QD1, verified" \
		fio_verify "$dev" --rw=randwrite --bs=4k --iodepth=1 --size=2m
	check "$tag: 4 KiB to 1 MiB random read/write at QD16, verified" \
		fio_verify "$dev" --rw=randrw --bsrange=4k-1m --iodepth=16 --size=32m
	[ -s /tmp/fio-verify.log ] && grep -E 'err=|IOPS' /tmp/fio-verify.log | sed 's/^/# /'
	[ "$NDEV" = rxe ] ||
		check "$tag: the host registered with REG_MR and its keys were invalidated remotely" \
			test $(($(sroce_stat fast_regs) - regs)) -gt 100 -a \
			$(($(sroce_stat invalidates) - invs)) -gt 100
	# fio submits from its own task, where nvme-rdma posts: with the
	# worker asleep between QD1 I/Os, the post sends the command itself,
	# and the command's ACK, which comes before the target's answer, is
	# taken in the softirq it arrives in (Documentation/architecture.rst).
	if [ "$NDEV" != rxe ]; then
		inline=$(($(sroce_stat posts_sent_inline) - inline))
		acks=$(($(sroce_stat acks_in_softirq) - acks))
		echo "# $tag: $inline posts sent from the submitting task, $acks ACKs taken in softirq"
		check "$tag: the host's posts sent their commands from the submitting task ($inline)" \
			test "$inline" -gt 100
		check "$tag: the host took its commands' ACKs in softirq ($acks)" \
			test "$acks" -gt 100
		echo 0 > "$(sroce_switch post_inline)"
		echo 0 > "$(sroce_switch ack_in_softirq)"
	fi
	check "$tag: nvme disconnect" nvme_detach "$NQN"
	[ "$NDEV" = rxe ] ||
		check "$tag: host objects released" wait_for 30 objects_gone pooled-cqs
	for fault in "$@"; do
		nvme_fault "$tag" "$fault"
	done
	[ -e "/sys/class/infiniband/$D" ] || device_add
	renew_device
	lab_say_done
}

# nvmet_port_again: the target's port made again. 6.1's nvmet-rdma drops
# a listener whose device goes away and does not listen again by itself.
nvmet_port_again() {
	nvmet_port_del 1 && nvmet_port 1 rdma ipv4 "192.0.2.$ME" 4420 "$NQN"
}

# nvme_not_live: the controller of $NQN is not live (or gone).
nvme_not_live() { ! nvme_live "$NQN"; }

# verify_until_stop DEV: fio writes and verifies DEV in rounds until
# /tmp/fio-stop exists; fails at the first round that fails.
verify_until_stop() {
	while [ ! -e /tmp/fio-stop ]; do
		fio_verify "$1" --rw=randrw --bsrange=4k-256k --iodepth=16 \
			--size=8m || return
	done
}

# nvme_fault TAG FAULT: one FAULT of nvme_phase's list, on a connection
# that reconnects every 2 s for up to 60 s.
nvme_fault() {
	local tag="$1 ($2)" dev pid rc t0
	check "$tag: nvme connect" nvme_attach "$NQN" rdma "$PEER4" 4420 \
		--ctrl-loss-tmo=60 --reconnect-delay=2 || return
	dev=$(nvme_ns "$NQN" 1)
	if [ "$2" = delete ]; then
		timeout 300 fio --name=gone --filename="$dev" --ioengine=libaio \
			--direct=1 --rw=randrw --bs=64k --iodepth=16 \
			--time_based --runtime=60 > /tmp/fio-gone.log 2>&1 &
		pid=$!
		sleep 3
		check "$tag: rdma link delete $D under I/O" \
			timeout 60 rdma link delete "$D"
		wait $pid
		rc=$?
		check "$tag: fio ended by itself, not by its timeout (status $rc)" \
			test "$rc" -ne 124
		check "$tag: the host dropped the controller" \
			wait_for 60 sh -c "! grep -qx '$NQN' /sys/class/nvme/nvme*/subsysnqn 2>/dev/null"
		check "$tag: $D added again" device_add
		return
	fi
	rm -f /tmp/fio-stop
	verify_until_stop "$dev" &
	pid=$!
	sleep 3
	if [ "$2" = flap ]; then
		t0=$SECONDS
		ip link set "$IF" down
		check "$tag: the controller lost its connection while $IF was down" \
			wait_for 10 nvme_not_live
		sleep $((10 - (SECONDS - t0) > 0 ? 10 - (SECONDS - t0) : 0))
		ip link set "$IF" up
		# Link down flushed the IPv6 address.
		ip -6 addr add "2001:db8::$ME/64" dev "$IF" nodad
	else
		peer_say "$PEER4" delete-link
		check "$tag: the controller lost its connection" \
			wait_for 30 nvme_not_live
	fi
	check "$tag: the controller is live again" \
		wait_for 90 nvme_live "$NQN"
	sleep 2
	touch /tmp/fio-stop
	wait $pid
	rc=$?
	check "$tag: fio's data is intact across it" test $rc -eq 0
	[ $rc -eq 0 ] || grep -E 'err=|error' /tmp/fio-verify.log | head -n 5 |
		sed 's/^/# /'
	check "$tag: nvme disconnect" nvme_detach "$NQN"
	[ "$NDEV" = rxe ] ||
		check "$tag: host objects released" wait_for 30 objects_gone pooled-cqs
}

# The malicious storage server of tests/lab/ulp_adversary.py, as "peer"
# beside the real server on this VM; checked, with the client's word.
adversary_peer() {	# adversary_peer TAG
	local word
	modprobe -a sch_prio sch_netem cls_u32
	check "$1: the malicious peer's run ends with status 0" \
		timeout 600 /usr/bin/python3 "$SROCE_TOP/tests/lab/ulp_adversary.py" \
		peer "$IF" "$PEER4"
	tc qdisc del dev "$IF" root 2> /dev/null
	word=$(peer_hear)
	check "$1: the client reports it is done (${word:-nothing})" \
		test "$word" = "done"
}

# nvme_adversary_phase ROLE TAG: a connected malicious target against the
# kernel's nvme-rdma host. ROLE "serve" exports a brd namespace through
# nvmet-rdma and runs the peer; ROLE "drive" connects with one I/O queue
# and no keep-alive within the run (the peer's WRITE on the admin queue
# must meet no other traffic there) and runs the host's side.
nvme_adversary_phase() {	# nvme_adversary_phase ROLE TAG
	local tag=$2 ctrl ns
	if [ "$1" = serve ]; then
		modprobe brd rd_nr=1 rd_size=65536
		check "$tag: nvmet exports brd over $D" \
			eval "nvmet_load use_srq=1 && nvmet_subsys $NQN /dev/ram0 &&
			      nvmet_port 1 rdma ipv4 192.0.2.$ME 4420 $NQN"
		adversary_peer "$tag"
		nvmet_clear
		check "$tag: target objects released" wait_for 30 objects_gone pooled-cqs
		renew_device
		return
	fi
	modprobe nvme-rdma
	for _ in $(seq 1 120); do
		nvme_attach "$NQN" rdma "$PEER4" 4420 -i 1 --reconnect-delay=1 \
			--ctrl-loss-tmo=120 --keep-alive-tmo=3600 2> /dev/null && break
		sleep 1
	done
	ctrl=$(nvme_ctrl "$NQN")
	ns=$(wait_for 30 nvme_ns "$NQN" 1)
	if check "$tag: nvme connect (${ctrl:-no controller}, ${ns:-no namespace})" \
		test -n "$ctrl" -a -n "$ns"; then
		check "$tag: the host's run ends with status 0" \
			timeout 600 /usr/bin/python3 "$SROCE_TOP/tests/lab/ulp_adversary.py" \
			nvme "$ctrl" "$ns" "$PEER4"
	fi
	check "$tag: nvme disconnect" nvme_detach "$NQN"
	check "$tag: host objects released" wait_for 30 objects_gone pooled-cqs
	renew_device
	lab_say_done
}

# nfs_adversary_phase ROLE TAG: the same malicious peer beside nfsd,
# against the kernel's NFS over RDMA client (xprtrdma). ROLE "serve" runs
# nfsd and the peer; ROLE "drive" mounts NFSv4.2 over RDMA and runs the
# client's side on a file of the mount.
nfs_adversary_phase() {	# nfs_adversary_phase ROLE TAG
	local tag=$2
	if [ "$1" = serve ]; then
		check "$tag: nfsd exports brd on rdma 20049 over $D" \
			nfs_server_up
		adversary_peer "$tag"
		check "$tag: nfsd stopped" nfs_server_down
		check "$tag: server objects released" wait_for 30 objects_gone
		renew_device
		return
	fi
	modprobe rpcrdma
	for _ in $(seq 1 120); do
		nfs_mount 4.2 "$PEER4:/" 2> /dev/null && break
		sleep 1
	done
	if check "$tag: NFSv4.2 mounted over RDMA" \
		grep -q " $NFS_MNT nfs.*proto=rdma" /proc/mounts; then
		check "$tag: the client's run ends with status 0" \
			timeout 600 /usr/bin/python3 "$SROCE_TOP/tests/lab/ulp_adversary.py" \
			nfs "$NFS_MNT/adversary" "$PEER4"
		check "$tag: unmounted" umount "$NFS_MNT"
	fi
	check "$tag: client objects released" wait_for 60 objects_gone
	renew_device
	lab_say_done
}

# NFS over RDMA. ROLE "serve" runs nfsd on brd listening on rdma 20049;
# ROLE "drive" mounts it over RDMA from $D as NFSv4.2 and NFSv3 on IPv4
# and NFSv4.2 on IPv6, writes files of 1 B to MAX bytes (default 64 MiB),
# remounts and checks their checksums, then has nfsd restarted during a
# copy of the largest, which must complete intact.
nfs_phase() {	# nfs_phase ROLE TAG [MAX]
	local tag=$2 max=${3:-67108864} sizes s regs t0
	if [ "$1" = serve ]; then
		check "$tag: nfsd exports brd on rdma 20049 over $D" \
			nfs_server_up
		lab_check_done "$tag"
		check "$tag: nfsd stopped" nfs_server_down
		[ "$NDEV" = rxe ] ||
			check "$tag: server objects released" wait_for 30 objects_gone
		renew_device
		return
	fi
	modprobe rpcrdma
	# NFSv3's locking needs rpc.statd, which registers with rpcbind.
	mkdir -p /run/rpcbind
	pgrep -x rpcbind > /dev/null || rpcbind -w
	sizes=
	for s in 1 4095 4096 65537 1048576 8388608 67108864; do
		[ "$s" -le "$max" ] && sizes="$sizes $s"
	done
	# shellcheck disable=SC2086 # one size a word
	nfs_files $sizes
	regs=$(sroce_stat fast_regs)
	for _ in $(seq 1 120); do
		nfs_mount 4.2 "$PEER4:/" 2> /dev/null && break
		sleep 1
	done
	umount "$NFS_MNT" 2> /dev/null
	: > /tmp/nfs-mount.err
	t0=$SECONDS
	check "$tag: NFSv4.2 on IPv4: files of 1 B to $max B, remounted, checksums match" \
		nfs_round 4.2 "$PEER4:/"
	check "$tag: NFSv3 on IPv4: the same" \
		nfs_round 3 "$PEER4:$NFS_EXPORT"
	check "$tag: NFSv4.2 on IPv6: the same" \
		nfs_round 4.2 "[2001:db8::$PEER]:/" rdma6
	echo "# $tag: three rounds in $((SECONDS - t0)) s"
	sed 's/^/# mount: /' /tmp/nfs-mount.err 2> /dev/null
	[ "$NDEV" = rxe ] ||
		check "$tag: the client registered memory with REG_MR" \
			test $(($(sroce_stat fast_regs) - regs)) -gt 100
	if check "$tag: NFSv4.2 mount for a server restart" \
		nfs_mount 4.2 "$PEER4:/"; then
		check "$tag: nfsd restarted during a copy of $max B: the copy is intact" \
			nfs_copy_across "f${sizes##* }" peer_say "$PEER4" restart-nfsd
		umount "$NFS_MNT"
	fi
	[ "$NDEV" = rxe ] ||
		check "$tag: client objects released" wait_for 60 objects_gone
	pkill -x rpc.statd
	pkill -x rpcbind
	renew_device
	lab_say_done
}

# shellcheck source=tests/lab/scsi-phases.sh
. "$(dirname "${BASH_SOURCE[0]}")/scsi-phases.sh"
