# shellcheck shell=bash
# NVMe over Fabrics in the lab VM: an nvmet target built through configfs
# and nvme-cli's host side. Sourced by the storage tests (tests/vm,
# tests/lab) and benches; every function returns non-zero on failure.
# It needs wait_for (tests/vm/common.sh), sourced here for the benches.
# shellcheck source=tests/vm/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
NVMET=/sys/kernel/config/nvmet
NQN=nqn.2026-11.org.sroce:lab

# nvmet_load [NVMET_RDMA_PARAM...]: configfs mounted, nvmet, nvmet-rdma
# (with the parameters given), nvmet-tcp and the rdma and tcp hosts loaded.
nvmet_load() {
	modprobe configfs || return
	mountpoint -q /sys/kernel/config ||
		mount -t configfs none /sys/kernel/config || return
	modprobe nvmet && modprobe nvmet-rdma "$@" && modprobe nvmet-tcp &&
		modprobe nvme-rdma && modprobe nvme-tcp
}

# nvmet_subsys NQN DEVICE...: a subsystem any host may use, namespace N
# backed by the Nth DEVICE.
nvmet_subsys() {
	local s=$NVMET/subsystems/$1 n=0 d
	shift
	mkdir "$s" && echo 1 > "$s/attr_allow_any_host" || return
	for d in "$@"; do
		n=$((n + 1))
		mkdir "$s/namespaces/$n" &&
			echo "$d" > "$s/namespaces/$n/device_path" &&
			echo 1 > "$s/namespaces/$n/enable" || return
	done
}

# nvmet_port ID TRTYPE ADRFAM ADDR SVCID NQN: port ID exports subsystem NQN.
nvmet_port() {
	local p=$NVMET/ports/$1
	mkdir "$p" &&
		echo "$2" > "$p/addr_trtype" &&
		echo "$3" > "$p/addr_adrfam" &&
		echo "$4" > "$p/addr_traddr" &&
		echo "$5" > "$p/addr_trsvcid" &&
		ln -s "$NVMET/subsystems/$6" "$p/subsystems/$6"
}

# nvmet_port_del ID: port ID unexported and removed.
nvmet_port_del() {
	local p=$NVMET/ports/$1
	[ -d "$p" ] || return 0
	rm -f "$p"/subsystems/*
	rmdir "$p"
}

# nvmet_clear: every port, namespace and subsystem of the target removed.
nvmet_clear() {
	local d
	[ -d "$NVMET" ] || return 0
	for d in "$NVMET"/ports/*; do
		[ -d "$d" ] && nvmet_port_del "$(basename "$d")"
	done
	for d in "$NVMET"/subsystems/*/namespaces/*; do
		[ -d "$d" ] && { echo 0 > "$d/enable"; rmdir "$d"; }
	done
	for d in "$NVMET"/subsystems/*; do
		[ -d "$d" ] && rmdir "$d"
	done
	return 0
}


# peer_hear: the next word the other lab VM says (TCP port 18700), within
# SROCE_TEST_PEER_WAIT seconds (default 400; make check-debug gives the
# slow debug kernel more).
peer_hear() {
	timeout "${SROCE_TEST_PEER_WAIT:-400}" /usr/bin/python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("", 18700))
s.listen(1)
c, _ = s.accept()
print(c.recv(16).decode().strip())'
}

# peer_say ADDR WORD: WORD to peer_hear on the lab VM at ADDR (retried for
# 50 s, as it may not listen yet).
peer_say() {
	for _ in $(seq 1 50); do
		/usr/bin/python3 -c "
import socket
socket.create_connection(('$1', 18700), 5).sendall(b'$2')" \
			2> /dev/null && return
		sleep 1
	done
	return 1
}

# nvme_ctrl NQN: the controller (nvme0, ...) connected to subsystem NQN.
nvme_ctrl() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ "$(cat "$c/subsysnqn" 2>/dev/null)" = "$1" ] &&
			{ basename "$c"; return 0; }
	done
	return 1
}

# nvme_ns NQN NSID: the block device of namespace NSID of subsystem NQN.
nvme_ns() {
	local b
	for b in /sys/block/nvme*n*; do
		[[ $(basename "$b") =~ ^nvme[0-9]+n[0-9]+$ ]] || continue
		[ "$(cat "$b/nsid" 2>/dev/null)" = "$2" ] || continue
		[ "$(cat "$b/device/subsysnqn" 2>/dev/null)" = "$1" ] &&
			{ echo "/dev/$(basename "$b")"; return 0; }
	done
	return 1
}

# nvme_live NQN: the controller of NQN is live.
nvme_live() {
	local c
	c=$(nvme_ctrl "$1") && [ "$(cat "/sys/class/nvme/$c/state")" = live ]
}

# nvme_attach NQN TRTYPE ADDR SVCID [NVME_CONNECT_ARG...]: nvme connect,
# then waits until namespace 1 shows up.
nvme_attach() {
	local nqn=$1 tr=$2 addr=$3 svc=$4
	shift 4
	timeout 120 nvme connect -t "$tr" -a "$addr" -s "$svc" -n "$nqn" "$@" \
		> /dev/null || return
	wait_for 30 nvme_ns "$nqn" 1 > /dev/null
}

# nvme_detach NQN: nvme disconnect; no controller of NQN is left.
nvme_detach() {
	timeout 120 nvme disconnect -n "$1" > /dev/null || return
	wait_for 30 sh -c "! grep -qx '$1' /sys/class/nvme/nvme*/subsysnqn 2>/dev/null"
}

# fio_run LOG FIO_ARG...: fio exits 0 and its log (LOG) reports no error.
fio_run() {
	local log=$1
	shift
	timeout 600 fio --ioengine=libaio --direct=1 --output="$log" "$@" \
		> /dev/null 2>&1 && grep -q 'err= 0' "$log" && ! grep -q 'err= [1-9]' "$log"
}

# fio_verify DEV FIO_ARG...: fio writes DEV and reads every block back,
# checking its crc32c; the first mismatch fails it.
fio_verify() {
	local dev=$1
	shift
	fio_run /tmp/fio-verify.log --name=verify --filename="$dev" \
		--verify=crc32c --do_verify=1 --verify_fatal=1 "$@"
}

# The helpers below print checks (tests/vm's check) and serve the tests
# of a block device that a ULP brought (iSER, SRP).

# verify_lun TAG DEV MAX_BS: fio's verified 4 KiB writes at QD1, and
# random reads and writes of 4 KiB to MAX_BS at QD32, on DEV.
verify_lun() {
	check "$1: 4 KiB writes at QD1, verified" \
		fio_verify "$2" --rw=randwrite --bs=4k --iodepth=1 --size=4m
	check "$1: 4 KiB to $3 random read/write at QD32, verified" \
		fio_verify "$2" --rw=randrw --bsrange=4k-"$3" --iodepth=32 \
		--size=48m
}

# gone_under_io DEV WHAT CMD...: fio runs on DEV; 3 s in, CMD (checked as
# WHAT) takes the storage away. fio must then fail by itself, not be ended
# by its 300 s timeout.
gone_under_io() {
	local dev=$1 what=$2 pid rc
	shift 2
	timeout 300 fio --name=gone --filename="$dev" --ioengine=libaio \
		--direct=1 --rw=randrw --bs=64k --iodepth=16 --time_based \
		--runtime=60 > /tmp/fio-gone.log 2>&1 &
	pid=$!
	sleep 3
	check "$what" "$@"
	wait $pid
	rc=$?
	check "fio failed by itself, not by its timeout (status $rc)" \
		test "$rc" -ne 0 -a "$rc" -ne 124
}
