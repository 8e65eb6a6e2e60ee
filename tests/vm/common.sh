# Helpers shared by the VM tests (tests/vm/lib.sh sources this) and the
# guests of the two-VM lab (tests/lab/guest.sh): each defined once, here.
# Checks print "ok - ..." / "not ok - ..." lines, which the runners count.

# check DESCRIPTION CMD...: runs CMD, prints the check and counts a
# failure in $failures; returns CMD's status.
check() {
	local what=$1
	shift
	if "$@"; then
		echo "ok - $what"
		return 0
	fi
	echo "not ok - $what"
	failures=$((${failures:-0} + 1))
	return 1
}

# wait_for SECONDS CMD...: polls CMD every 0.1 s until it succeeds.
wait_for() {
	local deadline=$((SECONDS + $1))
	shift
	until "$@"; do
		[ $SECONDS -ge $deadline ] && return 1
		sleep 0.1
	done
}

# sroce_switch NAME: the file of sroce's switch NAME, one of the engine's
# choices that tests and benches turn off or change to compare (debugfs
# sroce/NAME); a module parameter of that name for a sroce.ko built
# before they moved there (the benches load older builds).
sroce_switch() {
	if [ -e "/sys/kernel/debug/sroce/$1" ]; then
		echo "/sys/kernel/debug/sroce/$1"
	else
		echo "/sys/module/sroce/parameters/$1"
	fi
}

# sroce_stat NAME: sroce's hw counter NAME summed over its devices (0 on
# rdma_rxe, whose counters have other names).
sroce_stat() {
	cat /sys/class/infiniband/*/ports/1/hw_counters/"$1" 2>/dev/null |
		awk '{ s += $1 } END { print s + 0 }'
}

# gid_index TEXT [DEV]: the index of DEV's (sroce0's) GID shown as TEXT
# (as ibv_devinfo -v prints it: ::ffff:192.0.2.1, 2001:db8::1).
gid_index() {
	ibv_devinfo -v -d "${2:-sroce0}" | awk -v g="$1" '/GID\[/ {
		s = $0; sub(/.*GID\[ */, "", s); i = s + 0
		sub(/^[0-9]+\]:[ \t]*/, "", s); sub(/,.*/, "", s)
		if (s == g) { print i; exit } }'
}
have_gid() { [ -n "$(gid_index "$@")" ]; }

# objects_gone [pooled-cqs]: sroce holds nothing but devices and their
# MAD layer's objects. Each device's GSI QP comes with the PD and CQ the
# MAD layer allocates for it and the PD's internal DMA MR (a key, which
# restrack does not count as an MR); everything else must be gone, but with
# "pooled-cqs" the CQs of the core's CQ pool (kernel ULPs), which stay
# on the device until it goes.
objects_gone() {
	awk -v pooled="${1:-}" '{ v[$1] = $2 } END { d = v["devices"]
		exit !(v["ucontexts"] == 0 && v["ahs"] == 0 && v["pds"] == d &&
		       (pooled != "" || v["cqs"] == d) && v["qps"] == d &&
		       v["mrs"] == 0 && v["keys"] == d && v["srqs"] == 0) }' \
		/sys/kernel/debug/sroce/objects
}
