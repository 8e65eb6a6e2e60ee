#!/bin/bash
# Runs inside the lab VM (scripts/bench insns), which runs under QEMU with
# the icount plugin (scripts/lab/icount): for each sroce.ko given, loads
# it and runs each workload twice, short and long, between markers; the
# report divides the difference by the difference in operations, so
# start-up and teardown cancel out. The worker does not spin when idle
# (worker_spin_us=0): a spinning worker executes instructions for as long
# as it waits, which measures time instead of work.
#   bench-insns.sh MARK OUT KO...
# MARK: the marker program; OUT: a directory for the report's symbols
# (kallsyms once, sroce's symbols per build) and the marks' labels.
set -u
mark_bin=$1 out=$2
shift 2
updates=/lib/modules/$(uname -r)/updates
# shellcheck source=scripts/lab/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"
# shellcheck source=tests/vm/common.sh
. "$(dirname "$0")/../../tests/vm/common.sh"
bench_veth
mkdir -p "$out"
grep -v '\[' /proc/kallsyms > "$out/kallsyms"

marks=0
mark() {	# mark LABEL: the plugin writes counts N; LABEL names N
	"$mark_bin"
	echo "$marks $1" >> "$out/marks"
	marks=$((marks + 1))
}

# workload NAME SHORT LONG TOOL ARGS...: TOOL -n SHORT, then -n LONG.
workload() {
	local name=$1 short=$2 long=$3 build=$4 tool=$5 v
	shift 5
	mark "$build $name start"
	v=$(perf sroce0 "$tool" "$@" -n "$short" | col 5)
	mark "$build $name short $short"
	perf sroce0 "$tool" "$@" -n "$long" > /dev/null
	mark "$build $name long $long"
	echo "# build $build: $name short run's result column: ${v:-failed}"
}

build=0
for ko in "$@"; do
	rmmod sroce 2>/dev/null
	mkdir -p "$updates"
	cp "$ko" "$updates/sroce.ko"
	modprobe sroce || exit 1
	echo 0 > "$(sroce_switch worker_spin_us)" || exit 1
	rdma link add sroce0 type sroce netdev v0 || exit 1
	sleep 1
	grep '\[sroce\]' /proc/kallsyms > "$out/sroce.$build"
	workload send_lat 2000 12000 $build ib_send_lat -s 64
	workload atomic 2000 22000 $build ib_atomic_bw
	workload write_64 5000 25000 $build ib_write_bw -s 64
	rdma link delete sroce0
	rmmod sroce || exit 1
	build=$((build + 1))
done
