# shellcheck shell=bash
# Shared by the benches run inside the lab VMs; sourced, not run.

# median VALUES...: the median of the numeric ones; nothing if none is.
median() {
	printf '%s\n' "$@" | grep -E '^[0-9.]+$' | sort -g |
		awk '{ v[NR] = $1 } END { if (!NR) exit
			print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# A veth v0 (192.0.2.1/24) for the devices under test.
bench_veth() {
	ip link add v0 type veth peer name v0p
	ip link set v0p up
	ip link set v0 up
	ip addr add 192.0.2.1/24 dev v0
	sleep 1
}

# bench_sroce_up KO: sroce0 on v0, from KO installed as this kernel's
# sroce.ko (rdma link add loads it).
bench_sroce_up() {
	local updates
	updates=/lib/modules/$(uname -r)/updates
	mkdir -p "$updates"
	cp "$1" "$updates/sroce.ko"
	rdma link add sroce0 type sroce netdev v0 || return 1
	sleep 1
}

# bench_lab_net ME PEER: this VM's NIC (IF) up as 192.0.2.ME with jumbo
# frames (path MTU 4096 on both RDMA devices), once 192.0.2.PEER answers.
bench_lab_net() {
	modprobe virtio_net
	IF=$(ls /sys/class/net | grep -v '^lo$' | head -n 1)
	ip link set "$IF" mtu 9000
	ip link set "$IF" up
	ip addr add "192.0.2.$1/24" dev "$IF"
	for _ in $(seq 1 90); do
		busybox ping -c 1 -W 1 "192.0.2.$2" > /dev/null 2>&1 && break
	done
}

hz=$(getconf CLK_TCK)

# busy_ticks: busy CPU time of this whole VM so far, in clock ticks (all
# CPUs: user, nice, system, irq, softirq).
busy_ticks() {
	awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat
}

ratio() {	# ratio A B: A / B with two decimals, or "n/a"
	awk -v a="$1" -v b="$2" 'BEGIN {
		if (a == "" || b == "" || b + 0 == 0) print "n/a";
		else printf "%.2f", a / b }'
}

# perf DEV TOOL ARGS...: the client's result line, or nothing.
perf() {
	local dev=$1 tool=$2
	shift 2
	timeout 120 "$tool" -d "$dev" -x 1 -F "$@" > /tmp/bench-srv.log 2>&1 &
	sleep 2
	timeout 120 "$tool" -d "$dev" -x 1 -F "$@" 127.0.0.1 > /tmp/bench-cli.log 2>&1
	wait
	grep -E '^ *[0-9]+ +[0-9]+ +[0-9.]+' /tmp/bench-cli.log | tail -n 1
}

# field N of a result line
col() { awk -v n="$1" '{ print $n }'; }

# The perftest rows both benches print, through the caller's
# row NAME KEY HIGHER_IS_BETTER.
bench_rows() {
	row "ib_write_bw 64KiB MB/s" write_bw 1
	row "ib_write_bw 64B Mpps" write_rate 1
	row "ib_send_lat 64B typical us" send_lat 0
	row "ib_read_bw 64KiB MB/s" read_bw 1
	row "ib_send_bw 64KiB MB/s" send_bw 1
	row "ib_atomic_bw Mpps" atomic_rate 1
}
