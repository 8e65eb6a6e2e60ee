# Helpers for the VM tests; sourced by each tests/vm/t_*.sh. Tests print
# "ok - ..." / "not ok - ..." lines (tests/vm/run counts them) and run as
# root inside the lab VM, where the host is out of reach (no NIC at all).
set -u
T=$SROCE_BUILD/tests
OBJECTS=/sys/kernel/debug/sroce/objects
failures=0
# check, wait_for, sroce_stat, gid_index, have_gid, objects_gone
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

check_eq() {	# check_eq DESCRIPTION EXPECTED ACTUAL
	if [ "$2" = "$3" ]; then
		echo "ok - $1"
	else
		echo "not ok - $1: expected '$2', got '$3'"
		failures=$((failures + 1))
	fi
}

finish() {
	exit $((failures > 0))
}

# ended PID: the process is gone, or a zombie waiting for its parent.
ended() {
	[ ! -e "/proc/$1" ] || grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null
}

# no_objects: no driver object is live but devices (the module's devices
# all deleted, or their MAD layers' objects with them).
no_objects() {
	[ "$(awk '$1 != "devices" { s += $2 } END { print s }' "$OBJECTS")" = 0 ]
}

# ulp_objects_at BASE: every object type but CQs numbers as in BASE; the
# core's CQ pool (ib_cq_pool_get, used by the kernel's storage ULPs) keeps
# its CQs on the device until the device goes.
ulp_objects_at() { objects_at "$1" ucontexts pds qps mrs keys ahs srqs; }

dev_present() { [ -e "/sys/class/infiniband/$1" ]; }
dev_absent() { [ ! -e "/sys/class/infiniband/$1" ]; }

# stat_above NAME VALUE: sroce's counter NAME is above VALUE.
stat_above() { [ "$(sroce_stat "$1")" -gt "$2" ]; }

# stat_moving NAME SECONDS: sroce's counter NAME grows within SECONDS:
# what it counts (wqes: work the engine does) is happening now.
stat_moving() { wait_for "$2" stat_above "$1" "$(sroce_stat "$1")"; }

# listening COMM: an rdma_cm listener of the program COMM on sroce0.
listening() { rdma res show cm_id 2>/dev/null | grep -q "state LISTEN .*comm $1 "; }
# tcp_listening PORT: a TCP socket listens on PORT.
tcp_listening() { ss -Hltn "sport = :$1" | grep -q .; }

# server_client READY SERVER... -- CLIENT...: the one launcher of a server
# and its client on this VM. Starts the server, and once READY (a shell
# command) succeeds, within 10 s, the client; each gets 120 s. Sets
# srv_rc and cli_rc; their output is in $PAIR_OUT/srv and $PAIR_OUT/cli.
PAIR_OUT=${PAIR_OUT:-/tmp/pair}
server_client() {
	local ready=$1 s=() spid
	shift
	while [ "$1" != -- ]; do s+=("$1"); shift; done
	shift
	mkdir -p "$PAIR_OUT"
	timeout 120 "${s[@]}" > "$PAIR_OUT/srv" 2>&1 &
	spid=$!
	wait_for 10 eval "$ready" || echo "# server not ready: $ready"
	timeout 120 "$@" > "$PAIR_OUT/cli" 2>&1
	cli_rc=$?
	wait $spid
	srv_rc=$?
}
# pair_ok: both sides of the last server_client exited with 0; if not,
# says so with the end of each side's output.
pair_ok() {
	[ "$cli_rc" = 0 ] && [ "$srv_rc" = 0 ] && return 0
	echo "# client exit $cli_rc, server exit $srv_rc"
	tail -n 12 "$PAIR_OUT/srv" "$PAIR_OUT/cli" | sed "s/^/#   /"
	return 1
}

# loopback_perftest CMD...: perftest's CMD as server and as client on this
# host (they meet over 127.0.0.1); 0 if both exit with 0.
loopback_perftest() {
	server_client "tcp_listening 18515" "$@" -- "$@" 127.0.0.1
	pair_ok
}
module_loaded() { [ -d /sys/module/sroce ]; }
module_unloaded() { [ ! -d /sys/module/sroce ]; }

# make_veth NAME: a veth pair NAME <-> NAMEp, both up; NAME gets
# 192.0.2.N/24 and 2001:db8::N/64 for the pair's index N.
make_veth() {
	local n=${2:-1}
	ip link add "$1" type veth peer name "${1}p"
	ip link set "${1}p" up
	ip link set "$1" up
	ip addr add "192.0.2.$n/24" dev "$1"
	ip -6 addr add "2001:db8::$n/64" dev "$1" nodad
}

# objects TYPE: live driver objects of TYPE (devices, ucontexts, pds).
objects() {
	awk -v t="$1" '$1 == t { print $2 }' "$OBJECTS"
}

# objects_at BASE [TYPE...]: the live objects of each TYPE (default: every
# type) number as in BASE, an earlier "$(cat $OBJECTS)". The kernel's MAD
# layer owns a PD, a CQ, QP1 and an MR of each device from rdma link add
# on, so tests that keep a device compare with a baseline taken after it.
objects_at() {
	local base=$1 t
	shift
	if [ $# -eq 0 ]; then
		[ "$(cat "$OBJECTS")" = "$base" ]
		return
	fi
	for t in "$@"; do
		[ "$(objects "$t")" = "$(awk -v t="$t" '$1 == t { print $2 }' <<<"$base")" ] ||
			return 1
	done
}

objects_zero() {
	[ "$(objects devices)" = 0 ] && [ "$(objects ucontexts)" = 0 ] &&
		[ "$(objects pds)" = 0 ]
}

# devinfo DEV KEY: one value printed by devinfo_check.
devinfo() {
	"$T/devinfo_check" "$1" | awk -v k="$2" '$1 == k { print $2; exit }'
}

# wait_line FILE PATTERN SECONDS: waits until FILE has a line matching.
wait_line() {
	wait_for "$3" grep -q -- "$2" "$1"
}


# peer_netns NS ADDR...: a veth v0 (192.0.2.1, 2001:db8::1) whose other
# end v0p lives in a new network namespace NS with the addresses ADDR...
# (IPv6 in a /64, IPv4 in a /24). Each is a permanent neighbour of v0
# (modify_qp resolves it within a second, which a slow VM may miss), and
# v0's own addresses are permanent neighbours in NS.
peer_netns() {
	local ns=$1 a mac
	shift
	make_veth v0 1
	ip netns add "$ns"
	ip link set v0p netns "$ns"
	ip -n "$ns" link set lo up
	ip -n "$ns" link set v0p up
	for a in "$@"; do
		case $a in
		*:*) ip -n "$ns" -6 addr add "$a/64" dev v0p nodad ;;
		*) ip -n "$ns" addr add "$a/24" dev v0p ;;
		esac
	done
	mac=$(ip -n "$ns" -br link show v0p | awk '{ print $3 }')
	for a in "$@"; do
		ip neigh replace "$a" dev v0 nud permanent lladdr "$mac"
	done
	# And v0's addresses in NS: a peer that holds its own replies (a
	# plugged case) never finds the victim's entry in PROBE.
	mac=$(ip -br link show v0 | awk '{ print $3 }')
	for a in 192.0.2.1 2001:db8::1; do
		ip -n "$ns" neigh replace "$a" dev v0p nud permanent lladdr "$mac"
	done
}

# perftest TOOL ARGS...: a perftest server and client on sroce0, through
# TCP on 127.0.0.1 or, with -R, through rdma_cm on 192.0.2.1; both
# succeed and the client prints a result line (and says rdma_cm with -R).
perftest() {
	local ready="tcp_listening 18515" addr=127.0.0.1
	case " $* " in *" -R "*) ready="listening $1"; addr=192.0.2.1 ;; esac
	server_client "$ready" "$1" -d sroce0 -x 1 -F "${@:2}" -- \
		"$1" -d sroce0 -x 1 -F "${@:2}" $addr
	pair_ok || return 1
	grep -qE '^ *[0-9]+ +[0-9]+ +[0-9.]+' "$PAIR_OUT/cli" ||
		{ echo "# no result line"; return 1; }
	case " $* " in
	*" -R "*) grep -q 'Data ex. method : rdma_cm' "$PAIR_OUT/cli" ;;
	esac
}
