# shellcheck shell=bash
# Shared by the storage benches inside the lab VMs (bench-storage.sh on one
# host, bench-storage-wire.sh across two); sourced after
# tests/vm/storage-lib.sh and bench-lib.sh. Results go into the
# associative array r, as r[TRANSPORT.FIELD].
runtime=${SROCE_BENCH_FIO_SECONDS:-10}

# job DEV NAME FIO_ARG...: one time-based fio job on DEV; prints its JSON
# summary as "iops bw_MBps clat_p50_us clat_p99_us cpu_us_per_io", the CPU
# being this VM's.
job() {
	local dev=$1 name=$2 t0 t1
	shift 2
	t0=$(busy_ticks)
	timeout $((runtime + 120)) fio --name="$name" --filename="$dev" \
		--ioengine=libaio --direct=1 --time_based --runtime="$runtime" \
		--ramp_time=2 --output-format=json --output=/tmp/fio.json "$@" \
		> /dev/null 2>&1 || return
	t1=$(busy_ticks)
	/usr/bin/python3 - "$((t1 - t0))" "$hz" <<'PY'
import json, sys
j = json.load(open("/tmp/fio.json"))["jobs"][0]
ticks, hz = int(sys.argv[1]), int(sys.argv[2])
d = j["read"] if j["read"]["io_bytes"] else j["write"]
pct = d["clat_ns"].get("percentile", {})
ios = d["total_ios"] or 1
# CPU of the VM over the job, per I/O; the job's 2 s ramp is included in
# the time, not in the I/Os.
print("%.0f %.1f %.1f %.1f %.1f" % (d["iops"], d["bw_bytes"] / 1e6,
      pct.get("50.000000", 0) / 1e3, pct.get("99.000000", 0) / 1e3,
      ticks / hz * 1e6 / ios))
PY
}

# host_jobs KEY DEV: every job of the table on namespace DEV, into r[KEY.*].
host_jobs() {
	local key=$1 dev=$2 out
	out=$(job "$dev" qd1 --rw=randread --bs=4k --iodepth=1)
	r[$key.p50]=$(awk '{ print $3 }' <<<"$out")
	r[$key.p99]=$(awk '{ print $4 }' <<<"$out")
	out=$(job "$dev" qd32 --rw=randread --bs=4k --iodepth=32)
	r[$key.iops]=$(awk '{ print $1 }' <<<"$out")
	r[$key.cpu]=$(awk '{ print $5 }' <<<"$out")
	r[$key.read_bw]=$(job "$dev" seqread --rw=read --bs=128k --iodepth=8 |
		awk '{ print $2 }')
	r[$key.write_bw]=$(job "$dev" seqwrite --rw=write --bs=128k --iodepth=8 |
		awk '{ print $2 }')
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

# storage_table TITLE CPU_ROW: the table of r with sroce's ratios.
storage_table() {
	printf '%-30s %10s %10s %10s %9s %9s\n' "$1" \
		rdma_rxe sroce nvme-tcp "vs rxe" "vs tcp"
	row "4KiB randread QD1 p50 us" p50 0
	row "4KiB randread QD1 p99 us" p99 0
	row "4KiB randread QD32 IOPS" iops 1
	row "128KiB seq read MB/s" read_bw 1
	row "128KiB seq write MB/s" write_bw 1
	row "$2" cpu 0
}
