#!/usr/bin/env bash
# RC on the wire between two lab VMs (QEMU socket netdev on 127.0.0.1):
# tests/progs/rc_remote runs every opcode with data checks, in both
# directions,
# - sroce against sroce: IPv4 and IPv6 at path MTU 1024, then under
#   netem loss 5%, reorder 10%, duplicate 2% (and a dead peer each time);
#   then kill -9, rdma link delete and rmmod under wire traffic;
# - sroce against rdma_rxe: IPv4 and IPv6, path MTU 4096 and 1024;
# - ATOMIC_WRITE among rc_remote's operations between sroce devices, and
#   against rdma_rxe on kernels from 6.2 (make check-kernels' 6.12);
# - both pairs: rdma_cm (rping -V, ucmatose, udaddy, mckey's UD
#   multicast, perftest -R), SRQs
#   (ibv_srq_pingpong -c, ib_send_bw --use-srq), UD and
#   UC (ibv_ud_pingpong, ibv_uc_pingpong -c, perftest -c UD / -c UC, and
#   UC messages of 1024 packets, except from sroce to rxe), and 8 s of
#   RDMA WRITEs in which a sroce side's traffic keeps its neighbour entry
#   confirmed (no ARP probe);
# - both pairs: memory windows, SEND with invalidate and rereg (rc_remote);
#   NVMe over Fabrics (nvme-rdma to nvmet-rdma on a brd namespace, fio
#   verify: fast registration and remote invalidation; under I/O the
#   host's link flapping for 10 s, the target's and the host's sroce
#   device deleted), NFS over RDMA (NFSv3 and NFSv4.2, IPv4 and IPv6,
#   checksums, nfsd restarted during a copy), iSER (open-iscsi to LIO)
#   and SRP (ib_srp to ib_srpt), each direction;
# - sroce against sroce: a malicious storage server beside nvmet-rdma and
#   beside nfsd, speaking on the client's connection
#   (tests/lab/ulp_adversary.py): a duplicate READ and a new READ through
#   a key the server's SEND with invalidate ended (nvme-rdma, xprtrdma);
#   a WRITE begun through a read's key and continued after that key died
#   and its MR was registered again (nvme-rdma); the client's buffers
#   checked, the packets refused.
# SROCE_WIRE_PAIRS="sroce-sroce sroce-rxe" (the default) names the pairs
# that run; make check-debug runs sroce-sroce only (the interop pair's
# sroce code is the same, and make check runs it).
# Prints the checks of both VMs, the failed ones again at the end, and
# "wire: N passed, N failed". A command that times out prints where its
# QPs and processes waited ("# stuck:").
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
seed=${SROCE_TEST_SEED:-$RANDOM}
iters=${SROCE_WIRE_ITERS:-120}
pairs=${SROCE_WIRE_PAIRS:-sroce-sroce sroce-rxe}
for p in $pairs; do
	case $p in
	sroce-sroce | sroce-rxe) ;;
	*) echo "wire.sh: no pair named '$p' (SROCE_WIRE_PAIRS)" >&2; exit 2 ;;
	esac
done
# rc_remote's operations follow the seed: a failed phase is replayed with it.
echo "# wire lab seed $seed (replay: SROCE_TEST_SEED=$seed)"
passed=0
failed=0
reruns=0
# The runs a stall discarded or made count, kept past this script.
. "$top/scripts/lib.sh"
mkdir -p "$SROCE_CACHE/jobs"
kept=$(mktemp -d "$SROCE_CACHE/jobs/wire-kept.XXXXXX")

# A VM's virtio-net TX ring that QEMU stopped draining for good (see
# scripts/lab/socket-link): the guest's TX watchdog names it.
link_stall='NETDEV WATCHDOG: .*transmit queue [0-9]+ timed out'

# stop_on_stall NAME: once a log shows a stalled link, asks the stalled
# VM's QEMU whose side the stall is on (scripts/lab/virtio-tx-state, into
# $logs/NAME-stall), then powers both VMs of pair NAME off (their QEMUs):
# nothing in the guests can undo it, and the pair's later phases would
# only wait out their timeouts.
stop_on_stall() {
	local h
	until grep -qsE "$link_stall" "$logs/$1-"[AB].log; do
		sleep 5
	done
	for h in A B; do
		grep -qsE "$link_stall" "$logs/$1-$h.log" || continue
		echo "host$h: $("$top/scripts/lab/virtio-tx-state" "$logs/$1-$h.qmp" 2>&1)" \
			>> "$logs/$1-stall"
	done
	pkill -f 'qemu-system-x86_64 .*mac=52:54:00:00:00:0[ab],'
}

# run_pair NAME SCRIPT_A SCRIPT_B: boots hostA (listens) and hostB and
# runs the scripts; sets ra and rb to their exit statuses.
run_pair() {
	local name=$1 port=$((20000 + RANDOM % 20000)) a w
	rm -f "$logs/$name-"[AB].log "$logs/$name-"[AB].qmp "$logs/$name-stall"
	stop_on_stall "$name" &
	w=$!
	"$top/scripts/vm-run" --cpus 1 --timeout "${SROCE_WIRE_TIMEOUT:-1500}" --name hostA \
		--mac 52:54:00:00:00:0a --nic "listen:$port" --qmp "$logs/$name-A.qmp" -- \
		bash -c "$2" > "$logs/$name-A.log" 2>&1 &
	a=$!
	sleep 2
	"$top/scripts/vm-run" --cpus 1 --timeout "${SROCE_WIRE_TIMEOUT:-1500}" --name hostB \
		--mac 52:54:00:00:00:0b --nic "connect:$port" --qmp "$logs/$name-B.qmp" -- \
		bash -c "$3" > "$logs/$name-B.log" 2>&1
	rb=$?
	wait $a
	ra=$?
	kill $w 2> /dev/null
	wait $w 2> /dev/null
}

# kernel_findings NAME: what the kernel logs of pair NAME's VMs (as
# vm-run shows them) report besides the stalled link's own watchdog
# warning: BUG, soft lockup, hung task, any other WARNING, oops.
# One more warning is the stall's own on a VM whose stall was QEMU's
# (its line in $logs/NAME-stall says "host:"): each packet rdma_rxe
# sends holds its QP until the packet's transmission completes, packets
# in a TX ring QEMU stopped draining never complete, and rxe's destroy
# warns when it gives up waiting for them (__rxe_cleanup, rxe_pool.c).
kernel_findings() {
	local h excuse
	for h in A B; do
		excuse='sch_generic\.c|dev_watchdog'
		grep -qs "^host$h: host:" "$logs/$1-stall" &&
			excuse="$excuse|rxe_pool\.c:[0-9]+ __rxe_cleanup"
		grep -hE 'BUG:|soft lockup|INFO: task .* blocked|WARNING:|Oops|general protection|KASAN:|UBSAN:' \
			"$logs/$1-$h.log" | grep -vE "$excuse"
	done
}

# rerun_refused NAME: why pair NAME's stalled run must count as it is
# (printed), or nothing (status 1) when the stall was QEMU's alone: a
# stalled VM whose QEMU took none of the frames its guest posted (seen
# from outside the guest), and kernel logs with nothing else to report.
rerun_refused() {
	local f
	f=$(kernel_findings "$1")
	if [ -n "$f" ]; then
		echo "its kernel logs report more than the stall: $(head -n 1 <<< "$f")"
	elif ! [ -s "$logs/$1-stall" ]; then
		echo "no look from outside the guests was taken"
	elif grep -qv '^host[AB]: host:' "$logs/$1-stall"; then
		echo "the stall is not QEMU's: $(grep -v '^host[AB]: host:' "$logs/$1-stall" | head -n 1)"
	else
		return 1
	fi
}

# keep_run NAME RUN: pair NAME's logs, stall verdict included, go to the
# kept directory as NAME-runRUN-*, its findings are shown.
keep_run() {
	local f
	for f in "$logs/$1-"[AB].log "$logs/$1-stall"; do
		[ -e "$f" ] && cp "$f" "$kept/$(basename "${f/$1-/$1-run$2-}")"
	done
	grep -hE "$link_stall|^\[host[AB]\] not ok - " "$logs/$1-"[AB].log |
		head -n 12 | sed "s/^/# run $2: /"
	sed "s/^/# run $2: /" "$logs/$1-stall" 2> /dev/null
}

# pair NAME SCRIPT_A SCRIPT_B: runs the pair and counts its checks; a VM
# that fails counts one more. A run whose link stalled is kept (its logs
# in $kept, its failed checks and the stall's verdict shown) and the
# pair runs again only if the stall was QEMU's alone (rerun_refused), up
# to three runs; then only the last run counts, and a third stall fails
# it. A stall that may not be rerun counts as a failure, with its run's
# own checks.
pair() {
	local name=$1 ra rb runs=1 why
	if [[ " $pairs " != *" $name "* ]]; then
		echo "# $name: not run (SROCE_WIRE_PAIRS='$pairs')"
		return
	fi
	run_pair "$@"
	while grep -qE "$link_stall" "$logs/$name-"[AB].log; do
		keep_run "$name" "$runs"
		if why=$(rerun_refused "$name"); then
			echo "not ok - $name: the link stalled and the run counts: $why" |
				tee -a "$logs/not-ok"
			failed=$((failed + 1))
			break
		fi
		if [ $runs -eq 3 ]; then
			echo "not ok - $name: QEMU stalled the link in all $runs runs" |
				tee -a "$logs/not-ok"
			failed=$((failed + 1))
			break
		fi
		echo "# $name: QEMU stalled the link in run $runs (logs in $kept); the pair runs again"
		run_pair "$@"
		runs=$((runs + 1))
		reruns=$((reruns + 1))
	done
	grep -hE '^\[host[AB]\] (not )?ok - |^\[host[AB]\] # ' \
		"$logs/$name-A.log" "$logs/$name-B.log"
	grep -hE '^\[host[AB]\] not ok - ' "$logs/$name-"[AB].log >> "$logs/not-ok"
	grep -qsE '^\[host[AB]\] not ok - ' "$logs/$name-"[AB].log &&
		grep -hE "$why_lines" "$logs/$name-"[AB].log | cut -c1-400 >> "$logs/why"
	passed=$((passed + $(cat "$logs/$name-"[AB].log | grep -cE '^\[host[AB]\] ok - ')))
	failed=$((failed + $(cat "$logs/$name-"[AB].log | grep -cE '^\[host[AB]\] not ok - ')))
	for h in A B; do
		r=$ra
		[ $h = B ] && r=$rb
		if [ "$r" -ne 0 ]; then
			echo "not ok - $name: host$h exited with status $r" |
				tee -a "$logs/not-ok"
			# vm-run's own words first (a kernel log that shows
			# a problem, a timeout), then the end of the console.
			grep -A 45 '^vm-run: ' "$logs/$name-$h.log" | head -n 50
			tail -n 25 "$logs/$name-$h.log"
			failed=$((failed + 1))
		fi
	done
}

# The lines of a failed pair's logs that say why, shown at the end:
# rc_remote's failed operation or stall, a program's fatal error, and
# the RC QPs' states and PSNs that a stall dump printed.
why_lines='# pair failed at|# no send completion|fatal: |# (stall|net): link .* type (RC|UC) '

# guest ME PEER NDEV MTU BODY [SROCE_ARGS]: a guest's script; each line of
# BODY runs through timed (guest.sh).
guest() {
	printf 'ME=%s PEER=%s NDEV=%s MTU=%s SROCE_ARGS=%q\n. %s/tests/lab/guest.sh\n%s\ndevice_counters\n' \
		"$1" "$2" "$3" "$4" "${6:-}" "$top" \
		"$(sed -E '/^[[:space:]]*(#|$)/!s/^/timed /' <<< "$5")"
}

big=$((1 << 20))
# sroce <-> sroce. Phases alternate roles; a client waits for its server.
# NFS files go up to 16 MiB here (t_storage_nfs_rdma copies 64 MiB on one host).
pair sroce-sroce "$(guest 10 11 sroce 1500 "
atomic_write_on
serve 'sroce->sroce IPv4 MTU 1024' \$GID4 2 $iters $seed $big 1024
drive 'sroce->sroce IPv6 MTU 1024' \$GID6 2 $iters $((seed + 1)) $big 1024
check 'netem loses, reorders and duplicates on the link' netem_on
serve 'sroce->sroce lossy' \$GID4 1 $((iters / 2)) $((seed + 2)) 262144 1024
netem_off
check 'the lossy phase moved the loss counters (server)' loss_seen
cm_phases serve sroce-sroce
nfs_phase serve 'nfs sroce->sroce'
iser_phase serve 'iser sroce->sroce'
srp_phase serve 'srp sroce->sroce'
nvme_phase serve 'nvme sroce->sroce'
nvme_adversary_phase serve 'nvme adversary'
nfs_adversary_phase serve 'nfs adversary'
teardown_server")" "$(guest 11 10 sroce 1500 "
atomic_write_on
check 'engine workers start at nice 0' workers_at_nice_0
watch_nices /tmp/nices drive 'sroce->sroce IPv4 MTU 1024' \$GID4 2 $iters $seed $big 1024
check 'a worker serving wire QPs ran at nice -10' grep -qx -- -10 /tmp/nices
check 'workers are back at nice 0 once their wire QPs are gone' workers_at_nice_0
serve 'sroce->sroce IPv6 MTU 1024' \$GID6 2 $iters $((seed + 1)) $big 1024
check 'netem loses, reorders and duplicates on the link' netem_on
drive 'sroce->sroce lossy' \$GID4 1 $((iters / 2)) $((seed + 2)) 262144 1024
netem_off
check 'the lossy phase moved the loss counters, and the requester went back (retransmits) (client)' loss_seen requester
cm_phases drive sroce-sroce
nfs_phase drive 'nfs sroce->sroce' $((16 << 20))
iser_phase drive 'iser sroce->sroce'
srp_phase drive 'srp sroce->sroce'
nvme_phase drive 'nvme sroce->sroce' flap peer-delete delete
nvme_adversary_phase drive 'nvme adversary'
nfs_adversary_phase drive 'nfs adversary'
teardown_client")"

# sroce <-> rdma_rxe, jumbo frames for path MTU 4096.
pair sroce-rxe "$(guest 10 11 sroce 9000 "
export RC_REMOTE_PEER_RXE=1
atomic_write_on 6.2
serve 'rxe->sroce IPv4 MTU 4096' \$GID4 2 $iters $seed $big 4096
drive 'sroce->rxe IPv6 MTU 4096' \$GID6 2 $iters $((seed + 1)) $big 4096
serve 'rxe->sroce IPv6 MTU 1024' \$GID6 1 $iters $((seed + 2)) $big 1024
drive 'sroce->rxe IPv4 MTU 1024' \$GID4 1 $iters $((seed + 3)) $big 1024
cm_phases serve 'rxe->sroce'
cm_phases drive 'sroce->rxe' no-flood
nfs_phase serve 'nfs rxe->sroce'
nfs_phase drive 'nfs sroce->rxe' $((8 << 20))
iser_phase serve 'iser rxe->sroce'
iser_phase drive 'iser sroce->rxe'
srp_phase serve 'srp rxe->sroce'
srp_phase drive 'srp sroce->rxe'
nvme_phase serve 'nvme rxe->sroce'
# Before the last phase: it deletes sroce0 (and its counters) and adds it again.
check 'sroce dropped no packet of rdma_rxe for its ICRC' no_icrc_drops
nvme_phase drive 'nvme sroce->rxe' flap delete")" \
"$(guest 11 10 rxe 9000 "
export RC_REMOTE_SKIP_DEAD_PEER=1
atomic_write_on 6.2
drive 'rxe->sroce IPv4 MTU 4096' \$GID4 2 $iters $seed $big 4096
serve 'sroce->rxe IPv6 MTU 4096' \$GID6 2 $iters $((seed + 1)) $big 4096
drive 'rxe->sroce IPv6 MTU 1024' \$GID6 1 $iters $((seed + 2)) $big 1024
serve 'sroce->rxe IPv4 MTU 1024' \$GID4 1 $iters $((seed + 3)) $big 1024
cm_phases drive 'rxe->sroce'
cm_phases serve 'sroce->rxe' no-flood
nfs_phase drive 'nfs rxe->sroce' $((16 << 20))
nfs_phase serve 'nfs sroce->rxe'
iser_phase drive 'iser rxe->sroce'
iser_phase serve 'iser sroce->rxe'
srp_phase drive 'srp rxe->sroce'
srp_phase serve 'srp sroce->rxe'
nvme_phase drive 'nvme rxe->sroce' peer-delete
nvme_phase serve 'nvme sroce->rxe'")"

echo "(seed $seed)"
# The failures again, where a log's tail (CI's) shows them, after the
# first lines that say why.
[ -s "$logs/why" ] && head -n 12 "$logs/why" | sed 's/^/why: /'
[ -s "$logs/not-ok" ] && sed 's/^/failed: /' "$logs/not-ok"
if [ -z "$(ls -A "$kept")" ]; then
	rmdir "$kept"
else
	echo "# runs with a stalled link are kept in $kept"
fi
echo "wire: $passed passed, $failed failed ($reruns reruns)"
[ "$failed" -eq 0 ]
