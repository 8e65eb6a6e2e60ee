# shellcheck shell=bash
# Shared by the storage benches inside the lab VMs (bench-storage.sh and
# bench-storage-sets.sh on one host, bench-storage-wire.sh across two);
# brings in what it builds on, bench-lib.sh and tests/vm/storage-lib.sh.
# Each job's result is added to the associative array r_all, as
# r_all[TRANSPORT.FIELD] (one value a round, "fail" for a job that
# failed); storage_medians puts each key's median into r[TRANSPORT.FIELD].
bench_lab_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/lab/bench-lib.sh
. "$bench_lab_dir/bench-lib.sh"
# shellcheck source=tests/vm/storage-lib.sh
. "$bench_lab_dir/../../tests/vm/storage-lib.sh"
runtime=${SROCE_BENCH_FIO_SECONDS:-10}

# bench_null_target: nvmet exports a null_blk namespace as $NQN (no port
# yet); says why it failed.
bench_null_target() {
	modprobe null_blk nr_devices=1
	nvmet_load || { echo "nvmet does not load"; return 1; }
	nvmet_subsys "$NQN" /dev/nullb0
}

# bench_local_target: bench_veth's pair, and that namespace behind it.
bench_local_target() {
	bench_veth && bench_null_target
}

# thread_ticks OUT: every thread's CPU time so far, "COMM TICKS" a line
# (digits in the name made N, so per-CPU threads add up), and the VM's
# idle time as "[idle] TICKS". A thread that exits between two calls (fio
# itself) is in neither.
thread_ticks() {
	/usr/bin/python3 - "$1" <<'PY'
import glob, re, sys
with open(sys.argv[1], "w") as out:
    for path in glob.glob("/proc/[0-9]*/task/[0-9]*/stat"):
        try:
            line = open(path).read()
        except OSError:
            continue
        m = re.match(r"\d+ \((.*)\) (.*)", line)
        if m:
            f = m.group(2).split()
            out.write("%s %d\n" % (re.sub(r"\d+", "N", m.group(1)),
                                   int(f[11]) + int(f[12])))
    cpu = open("/proc/stat").readline().split()
    out.write("[idle] %s\n" % cpu[4])
PY
}

# thread_split BEFORE AFTER IOS: the biggest CPU users between the two
# thread_ticks, in us per I/O.
thread_split() {
	/usr/bin/python3 - "$@" "$hz" <<'PY'
import collections, sys
def load(path):
    c = collections.Counter()
    for line in open(path):
        name, ticks = line.rsplit(" ", 1)
        c[name] += int(ticks)
    return c
a, b = load(sys.argv[1]), load(sys.argv[2])
ios, hz = max(int(sys.argv[3]), 1), int(sys.argv[4])
d = {k: b[k] - a[k] for k in b if b[k] > a[k]}
print(" ".join("%s=%.1f" % (k, v / hz * 1e6 / ios)
               for k, v in sorted(d.items(), key=lambda kv: -kv[1])[:6]))
PY
}

# job DEV NAME FIO_ARG...: one time-based fio job on DEV; prints its JSON
# summary as "iops bw_MBps lat_p50_us lat_p99_us cpu_us_per_io ios", the
# CPU being this VM's; the threads' CPU before and after the job is in
# /tmp/job.t0 and /tmp/job.t1 (thread_ticks). Latency is fio's total
# latency, from the start of the submission to the completion: a
# transport may finish an I/O inside io_submit() (nvme-tcp on one host
# does), which fio's completion latency (clat) would not count.
job() {
	local dev=$1 name=$2 t0 t1
	shift 2
	thread_ticks /tmp/job.t0
	t0=$(busy_ticks)
	timeout $((runtime + 120)) fio --name="$name" --filename="$dev" \
		--ioengine=libaio --direct=1 --time_based --runtime="$runtime" \
		--ramp_time=2 --lat_percentiles=1 --output-format=json \
		--output=/tmp/fio.json "$@" \
		> /dev/null 2>&1 || return
	t1=$(busy_ticks)
	thread_ticks /tmp/job.t1
	/usr/bin/python3 - "$((t1 - t0))" "$hz" <<'PY'
import json, sys
j = json.load(open("/tmp/fio.json"))["jobs"][0]
ticks, hz = int(sys.argv[1]), int(sys.argv[2])
d = j["read"] if j["read"]["io_bytes"] else j["write"]
pct = d["lat_ns"].get("percentile", {})
ios = d["total_ios"] or 1
# CPU of the VM over the job, per I/O; the job's 2 s ramp is included in
# the time, not in the I/Os.
print("%.0f %.1f %.1f %.1f %.1f %d" % (d["iops"], d["bw_bytes"] / 1e6,
      pct.get("50.000000", 0) / 1e3, pct.get("99.000000", 0) / 1e3,
      ticks / hz * 1e6 / ios, ios))
PY
}

# storage_add KEY FIELD VALUE: one round's value into r_all.
storage_add() {
	r_all[$1.$2]="${r_all[$1.$2]:-}${r_all[$1.$2]:+ }${3:-fail}"
}

# sroce_counts: the counters of sroce0 that say how its workers ran,
# "NAME VALUE" a line.
sroce_counts() {
	local c
	for c in sleeps kicks posts_sent_inline acks_in_softirq worker_poll_hits \
		tx_packets rx_packets cq_events; do
		echo "$c $(cat /sys/class/infiniband/sroce0/ports/1/hw_counters/$c)"
	done
}

# sroce_per_io BEFORE IOS: what sroce_counts moved by since BEFORE, per
# I/O (the job's ramp counts in the moves, not in IOS).
sroce_per_io() {
	paste -d ' ' <(echo "$1") <(sroce_counts) |
		awk -v n="$2" '{ printf "%s %.2f ", $1, ($4 - $2) / (n ? n : 1) }'
}

# host_jobs KEY DEV [ROUND]: every job of the table on namespace DEV,
# into r_all[KEY.*]; for sroce also what its workers did per QD1 I/O.
host_jobs() {
	local key=$1 dev=$2 round=${3:-1} out c0=
	case $key in sroce*) c0=$(sroce_counts) ;; esac
	out=$(job "$dev" qd1 --rw=randread --bs=4k --iodepth=1)
	storage_add "$key" p50 "$(awk '{ print $3 }' <<<"$out")"
	storage_add "$key" p99 "$(awk '{ print $4 }' <<<"$out")"
	[ -n "$c0" ] && [ -n "$out" ] && echo "# $key, round $round: QD1 per I/O" \
		"on this VM: $(sroce_per_io "$c0" "$(awk '{ print $6 }' <<<"$out")")"
	out=$(job "$dev" qd32 --rw=randread --bs=4k --iodepth=32)
	storage_add "$key" iops "$(awk '{ print $1 }' <<<"$out")"
	storage_add "$key" cpu "$(awk '{ print $5 }' <<<"$out")"
	[ -n "$out" ] && echo "# $key, round $round: QD32 CPU us per I/O by thread:" \
		"$(thread_split /tmp/job.t0 /tmp/job.t1 \
			"$(awk '{ print $6 }' <<<"$out")")"
	storage_add "$key" read_bw "$(job "$dev" seqread --rw=read --bs=128k \
		--iodepth=8 | awk '{ print $2 }')"
	storage_add "$key" write_bw "$(job "$dev" seqwrite --rw=write --bs=128k \
		--iodepth=8 | awk '{ print $2 }')"
}

# storage_medians: r[KEY] is the median of r_all[KEY]'s numeric values
# (unset if none).
storage_medians() {
	local k m
	for k in "${!r_all[@]}"; do
		# shellcheck disable=SC2086
		m=$(median ${r_all[$k]})
		[ -n "$m" ] && r["$k"]=$m
	done
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

# storage_table TITLE CPU_ROW: the medians of r_all with sroce's ratios,
# then every round's values.
storage_table() {
	storage_medians
	printf '%-30s %10s %10s %10s %9s %9s\n' "$1" \
		rdma_rxe sroce nvme-tcp "vs rxe" "vs tcp"
	row "4KiB randread QD1 p50 us" p50 0
	row "4KiB randread QD1 p99 us" p99 0
	row "4KiB randread QD32 IOPS" iops 1
	row "128KiB seq read MB/s" read_bw 1
	row "128KiB seq write MB/s" write_bw 1
	row "$2" cpu 0
	echo "rounds (rdma_rxe | sroce | nvme-tcp):"
	for k in p50 p99 iops read_bw write_bw cpu; do
		printf '  %-8s %s | %s | %s\n' "$k" "${r_all[rxe.$k]:-}" \
			"${r_all[sroce.$k]:-}" "${r_all[tcp.$k]:-}"
	done
}
