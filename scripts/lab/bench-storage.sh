#!/bin/bash
# Runs inside the lab VM (scripts/bench storage): fio against an NVMe-oF
# null_blk namespace on this host, over nvme-rdma on rdma_rxe, nvme-rdma on
# sroce and nvme-tcp, one after the other in this boot over the same veth,
# 2 I/O queues each; prints each result and sroce's ratio to the others.
set -u
runtime=${SROCE_BENCH_FIO_SECONDS:-10}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/lab/bench-lib.sh
. "$here/bench-lib.sh"
# shellcheck source=tests/vm/lib.sh
. "$here/../../tests/vm/lib.sh"
# shellcheck source=tests/vm/storage-lib.sh
. "$here/../../tests/vm/storage-lib.sh"
bench_veth
modprobe null_blk nr_devices=1
nvmet_load || { echo "nvmet does not load"; exit 1; }
nvmet_subsys "$NQN" /dev/nullb0 || exit 1

busy_ticks() {	# busy CPU time of the whole VM so far, in clock ticks
	awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat
}
hz=$(getconf CLK_TCK)

# job NAME FIO_ARG...: one time-based fio job on the namespace; prints its
# JSON summary as "iops bw_MBps clat_p50_us clat_p99_us cpu_us_per_io".
job() {
	local name=$1 t0 t1
	shift
	t0=$(busy_ticks)
	timeout $((runtime + 120)) fio --name="$name" --filename="$dev" \
		--ioengine=libaio --direct=1 --time_based --runtime="$runtime" \
		--ramp_time=2 --output-format=json --output=/tmp/fio.json "$@" \
		> /dev/null 2>&1 || return
	t1=$(busy_ticks)
	/usr/bin/python3 - "$((t1 - t0))" "$hz" <<'EOF'
import json, sys
j = json.load(open("/tmp/fio.json"))["jobs"][0]
ticks, hz = int(sys.argv[1]), int(sys.argv[2])
d = j["read"] if j["read"]["io_bytes"] else j["write"]
pct = d["clat_ns"].get("percentile", {})
ios = d["total_ios"] or 1
# CPU of the whole VM (host, target, driver) over the job, per I/O;
# the job's 2 s ramp is included in the time, not in the I/Os.
print("%.0f %.1f %.1f %.1f %.1f" % (d["iops"], d["bw_bytes"] / 1e6,
      pct.get("50.000000", 0) / 1e3, pct.get("99.000000", 0) / 1e3,
      ticks / hz * 1e6 / ios))
EOF
}

declare -A r
# measure KEY TRTYPE: connects over TRTYPE and runs every job.
measure() {
	local key=$1 tr=$2 out
	nvmet_port 1 "$tr" ipv4 192.0.2.1 4420 "$NQN" || return
	sleep 1
	if ! nvme_attach "$NQN" "$tr" 192.0.2.1 4420 -i 2; then
		echo "# $key: nvme connect failed"
		nvmet_port_del 1
		return
	fi
	dev=$(nvme_ns "$NQN" 1)
	out=$(job qd1 --rw=randread --bs=4k --iodepth=1)
	r[$key.p50]=$(awk '{ print $3 }' <<<"$out")
	r[$key.p99]=$(awk '{ print $4 }' <<<"$out")
	out=$(job qd32 --rw=randread --bs=4k --iodepth=32)
	r[$key.iops]=$(awk '{ print $1 }' <<<"$out")
	r[$key.cpu]=$(awk '{ print $5 }' <<<"$out")
	r[$key.read_bw]=$(job seqread --rw=read --bs=128k --iodepth=8 |
		awk '{ print $2 }')
	r[$key.write_bw]=$(job seqwrite --rw=write --bs=128k --iodepth=8 |
		awk '{ print $2 }')
	nvme_detach "$NQN"
	nvmet_port_del 1
	sleep 1
}

modprobe rdma_rxe
rdma link add rxe0 type rxe netdev v0
measure rxe rdma
rdma link delete rxe0
rmmod rdma_rxe
rdma link add sroce0 type sroce netdev v0
measure sroce rdma
rdma link delete sroce0
measure tcp tcp
nvmet_clear

ratio() {	# ratio A B: A / B with two decimals, or "n/a"
	awk -v a="$1" -v b="$2" 'BEGIN {
		if (a == "" || b == "" || b + 0 == 0) print "n/a";
		else printf "%.2f", a / b }'
}
row() {	# row NAME KEY HIGHER_IS_BETTER: values and sroce's ratios
	local a=${r[rxe.$2]:-} b=${r[sroce.$2]:-} c=${r[tcp.$2]:-} qa qc
	if [ "$3" = 1 ]; then
		qa=$(ratio "$b" "$a") qc=$(ratio "$b" "$c")
	else
		qa=$(ratio "$a" "$b") qc=$(ratio "$c" "$b")
	fi
	printf '%-30s %10s %10s %10s %9s %9s\n' "$1" "${a:-fail}" \
		"${b:-fail}" "${c:-fail}" "$qa" "$qc"
}
printf '%-30s %10s %10s %10s %9s %9s\n' "nvme, null_blk, 2 queues" \
	rdma_rxe sroce nvme-tcp "vs rxe" "vs tcp"
row "4KiB randread QD1 p50 us" p50 0
row "4KiB randread QD1 p99 us" p99 0
row "4KiB randread QD32 IOPS" iops 1
row "128KiB seq read MB/s" read_bw 1
row "128KiB seq write MB/s" write_bw 1
row "CPU us per I/O (QD32 4KiB)" cpu 0
echo "(ratio: how many times better sroce is; same-host, TCG, ${runtime} s per job)"
