#!/bin/bash
# Runs inside the lab VM (scripts/bench storage sets SET...): sets of
# sroce.ko's switches compared in one boot. Each SET is "name=value,..."
# of its switches (debugfs sroce/, sroce_switch) or module parameters
# (/sys/module/sroce/parameters), or "ko=PATH": sroce.ko loaded from PATH
# (scripts/bench storage compare gives REV's build and this checkout's).
# Every round connects nvme-rdma on
# sroce0 once per SET (after writing it, so parameters read at connect
# take effect), runs the QD1 and QD32 4 KiB random reads of
# bench-storage.sh on the null_blk namespace, and then the same jobs over
# nvme-tcp for reference; SROCE_BENCH_ROUNDS rounds (default 3). Prints
# every round and then each set's medians.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/vm/lib.sh
. "$here/../../tests/vm/lib.sh"
# shellcheck source=scripts/lab/bench-storage-lib.sh
. "$here/bench-storage-lib.sh"
[ $# -gt 0 ] || { echo "usage: bench-storage-sets.sh SET..."; exit 2; }
rounds=${SROCE_BENCH_ROUNDS:-3}
bench_local_target || exit 1
rdma link add sroce0 type sroce netdev v0 || exit 1

# function-call IPIs so far, all CPUs
ipis() { awk '$1 == "CAL:" { s = 0; for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+$/) s += $i; print s }' /proc/interrupts; }

# jobs KEY TRTYPE PORT: connects over TRTYPE, runs the two jobs and prints
# "KEY p50 p99 iops qd1_ipis_per_io".
jobs() {
	local key=$1 dev out1 out32 i0 i1
	nvmet_port 1 "$2" ipv4 192.0.2.1 "$3" "$NQN" || return
	sleep 1
	if nvme_attach "$NQN" "$2" 192.0.2.1 "$3" -i 2; then
		dev=$(nvme_ns "$NQN" 1)
		i0=$(ipis)
		out1=$(job "$dev" qd1 --rw=randread --bs=4k --iodepth=1)
		i1=$(ipis)
		out32=$(job "$dev" qd32 --rw=randread --bs=4k --iodepth=32)
		nvme_detach "$NQN"
		awk -v k="$key" -v q="$out32" -v i=$((i1 - i0)) '{
			split(q, b, " ")
			printf "%s %s %s %s %.2f\n", k, $3, $4, b[1], i / ($6 ? $6 : 1)
		}' <<<"$out1"
	else
		echo "$key fail fail fail fail"
	fi
	nvmet_port_del 1
	sleep 1
}

# use_ko PATH: sroce0 on v0 again, served by sroce.ko from PATH (nothing
# to do if PATH's module is the loaded one).
loaded_ko=
use_ko() {
	[ "$loaded_ko" = "$1" ] && return 0
	rdma link delete sroce0 && rmmod sroce && insmod "$1" &&
		rdma link add sroce0 type sroce netdev v0 &&
		wait_for 10 have_gid ::ffff:192.0.2.1 || return 1
	loaded_ko=$1
}

results=$(mktemp)
for round in $(seq 1 "$rounds"); do
	for set in "$@"; do
		# A module first (a reload resets the parameters), then
		# the parameters.
		for pv in ${set//,/ }; do
			[ "${pv%%=*}" = ko ] || continue
			use_ko "${pv#*=}" || { echo "cannot load ${pv#*=}"; exit 1; }
		done
		for pv in ${set//,/ }; do
			[ "${pv%%=*}" = ko ] && continue
			echo "${pv#*=}" > "$(sroce_switch "${pv%%=*}")" ||
				{ echo "cannot set $pv"; exit 1; }
		done
		jobs "$set" rdma 4420 | tee -a "$results" | sed "s/^/round $round: /"
	done
	jobs nvme-tcp tcp 4421 | tee -a "$results" | sed "s/^/round $round: /"
done
rdma link delete sroce0
nvmet_clear

echo "medians of $rounds rounds (QD1 latency us, QD32 IOPS, IPIs per QD1 I/O):"
printf '%-40s %9s %9s %9s %9s\n' set "QD1 p50" "QD1 p99" "QD32" "IPIs/io"
for set in "$@" nvme-tcp; do
	awk -v s="$set" '$1 == s' "$results" | /usr/bin/python3 -c '
import statistics, sys
rows = [l.split() for l in sys.stdin]
def med(i):
    v = [float(r[i]) for r in rows if r[i] != "fail"]
    return "%.1f" % statistics.median(v) if v else "fail"
print("%-40s %9s %9s %9s %9s" % (sys.argv[1], med(1), med(2), med(3), med(4)))' "$set"
done
rm -f "$results"
