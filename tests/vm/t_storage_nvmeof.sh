# NVMe over Fabrics through sroce0 on one host (the shortcut): nvmet with
# rdma ports on IPv4 and IPv6 exporting a brd namespace (keeps data) and a
# null_blk one; nvme-rdma connects with 2 I/O queues. fio verifies every
# block (crc32c) at QD1 and QD32, 4 KiB to 1 MiB, random and sequential,
# 4 KiB writes travelling in the command capsule; the engine workers run
# with I/O reclaim off; the host registers with REG_MR and the target
# invalidates remotely (counted); nvme reset; nvmet
# with use_srq=1; each disconnect leaves every sroce object count at its
# baseline; the link flapping for 10 s under I/O costs a reconnect, not
# data; removing the target's port and rdma link delete under I/O end it
# with errors, not a hang. Completion events run on the CPU of their CQ's
# vector (ib_core's tracepoints), and with cq_event_affinity=0 they do not;
# the engine runs an I/O queue's WQEs on the CPU that submits to it, and
# binds a worker to that CPU only for kernel QPs on the shortcut; a bound
# worker's adaptive poll spares it the sleep while the target works; at
# QD32 a pass holds completion events to the end of its run with
# cq_event_hold on (counted in cq_events_held) and none with it off, the
# events per I/O of each printed.
# vm-timeout: 900
# vm-checks: 62
. ./lib.sh
. ./storage-lib.sh
make_veth v0 1
rdma link add sroce0 type sroce netdev v0
# ib_core's CQ tracepoints (system rdma_core, there once sroce loaded
# ib_core): every CQ's vector, and where its events ran.
TRACE=/sys/kernel/tracing
[ -d "$TRACE/events" ] || mount -t tracefs nodev "$TRACE"
echo 8192 > "$TRACE/buffer_size_kb"
echo 1 > "$TRACE/events/rdma_core/cq_alloc/enable"
# Every engine worker carries block I/O with I/O reclaim off:
# PF_MEMALLOC_NOIO (0x80000) in the flags of /proc/PID/stat.
workers_noio() {
	local p n=0 flags
	for p in $(pgrep '^sroce/'); do
		flags=$(awk '{ print $9 }' "/proc/$p/stat") || return 1
		[ $((flags & 0x80000)) -ne 0 ] || return 1
		n=$((n + 1))
	done
	[ "$n" -gt 0 ]
}
check "engine workers run with I/O reclaim off (PF_MEMALLOC_NOIO)" workers_noio
# A kernel RC QP starts on the worker of its CQ's vector, which is bound
# to that vector's CPU while such a QP is on the shortcut, and left to the
# scheduler while they are all on the wire (tests/kmod/sroce_bind_test.c
# holds the QPs). bind_cpus WIRE: the CPUs the worker of the module's QP
# may run on, or "none".
bind_cpus() {
	local qpn w pid cpus=none
	dmesg -C
	if insmod "$SROCE_TOP/tests/kmod/sroce_bind_test.ko" dev=sroce0 \
		gid_index="$(gid_index ::ffff:192.0.2.1)" vector=1 wire="$1"; then
		qpn=$(dmesg | sed -n 's/.*sroce_bind_test: qpn //p')
		w=$(rdma -dd res show qp | grep " lqpn $qpn " |
			sed -n 's/.* drv_worker \([0-9]*\) .*/\1/p')
		pid=$(pgrep -x "sroce/v0/$w")
		[ -n "$pid" ] && cpus=$(awk '/^Cpus_allowed_list:/ { print $2 }' \
			"/proc/$pid/status")
		rmmod sroce_bind_test
	fi
	echo "$cpus"
}
if [ "$(nproc)" -ge 2 ]; then
	check_eq "a worker serving a kernel QP on the shortcut is bound to its vector's CPU" \
		1 "$(bind_cpus 0)"
	check_eq "a worker serving a kernel QP on the wire only is not bound" \
		"0-$(($(nproc) - 1))" "$(bind_cpus 1)"
	check_eq "and bound again for a kernel QP on the shortcut" \
		1 "$(bind_cpus 0)"
fi
modprobe brd rd_nr=1 rd_size=65536
modprobe null_blk nr_devices=1
check "nvmet, nvmet-rdma and nvme-rdma load" nvmet_load
check "a subsystem with a brd and a null_blk namespace" \
	nvmet_subsys "$NQN" /dev/ram0 /dev/nullb0
ports() {
	nvmet_port 1 rdma ipv4 192.0.2.1 4420 "$NQN" &&
		nvmet_port 2 rdma ipv6 2001:db8::1 4420 "$NQN"
}
check "rdma ports on 192.0.2.1 and 2001:db8::1" ports
sleep 1
base=$(cat "$OBJECTS")
regs=$(sroce_stat fast_regs)
invs=$(sroce_stat invalidates)
bad_invs=$(sroce_stat rx_bad_invalidate)

check "nvme discover over sroce0 lists the subsystem" sh -c \
	"timeout 60 nvme discover -t rdma -a 192.0.2.1 -s 4420 | grep -q '$NQN'"
check "nvme connect -t rdma (IPv4)" nvme_attach "$NQN" rdma 192.0.2.1 4420 -i 2
ctrl=$(nvme_ctrl "$NQN")
check_eq "the controller has 2 I/O queues and the admin queue" 3 \
	"$(cat "/sys/class/nvme/$ctrl/queue_count" 2>/dev/null)"
ram=$(nvme_ns "$NQN" 1)
null=$(nvme_ns "$NQN" 2)
check "brd namespace: 4 KiB random writes at QD1, verified" \
	fio_verify "$ram" --rw=randwrite --bs=4k --iodepth=1 --size=4m
check "brd namespace: 4 KiB to 1 MiB random read/write at QD32, verified" \
	fio_verify "$ram" --rw=randrw --bsrange=4k-1m --iodepth=32 --size=48m
check "brd namespace: 1 MiB sequential writes, read back and verified" \
	fio_verify "$ram" --rw=write --bs=1m --iodepth=4 --size=64m
check "null_blk namespace: 4 KiB random reads at QD32" \
	fio_run /tmp/fio-null.log --name=null --filename="$null" \
	--rw=randread --bs=4k --iodepth=32 --size=64m --numjobs=2

# event_cpus AFFINITY: 4 KiB reads on both I/O queues with
# cq_event_affinity=AFFINITY; prints "ON OFF": how many completion events
# ran on the CPU of their CQ's vector (the vector's i-th online CPU) and
# how many elsewhere.
event_cpus() {
	echo "$1" > "$(sroce_switch cq_event_affinity)"
	echo > "$TRACE/trace"
	echo 1 > "$TRACE/events/rdma_core/cq_schedule/enable"
	fio_run /tmp/fio-vec.log --name=vec --filename="$null" --rw=randread \
		--bs=4k --iodepth=8 --size=8m --numjobs=2
	echo 0 > "$TRACE/events/rdma_core/cq_schedule/enable"
	awk -v online="$(nproc)" -v allocs="$cq_allocs" '
	BEGIN {
		n = split(allocs, a, " ")
		for (i = 1; i <= n; i++) {
			split(a[i], kv, ":")
			cpu[kv[1]] = kv[2] % online
		}
	}
	/ cq_schedule: / {
		at = $0
		sub(/.*\[/, "", at)
		sub(/\].*/, "", at)
		id = $0
		sub(/.*cq\.id=/, "", id)
		if (!(id in cpu))
			next
		if (at + 0 == cpu[id]) on++; else off++
	}
	END { print on + 0, off + 0 }' "$TRACE/trace"
}
# "ID:VECTOR" of every CQ allocated so far.
cq_allocs=$(sed -n 's/.* cq_alloc: cq\.id=\([0-9]*\) .*comp_vector=\([0-9]*\) .*/\1:\2/p' \
	"$TRACE/trace" | tr '\n' ' ')
read -r on off <<<"$(event_cpus 1)"
echo "# completion events on their vector's CPU: $on, elsewhere: $off"
if [ "$(cat /sys/kernel/realtime 2> /dev/null)" = 1 ]; then
	# PREEMPT_RT runs every handler in the posting worker.
	check "PREEMPT_RT: completion events ran in the worker, some elsewhere" \
		test "$off" -gt 0
else
	check "completion events of kernel CQs all ran on their vector's CPU" \
		test "$on" -ge 100 -a "$off" -eq 0
fi
read -r on off <<<"$(event_cpus 0)"
echo "# cq_event_affinity=0: on their vector's CPU: $on, elsewhere: $off"
check "cq_event_affinity=0: some ran elsewhere (the check above can fail)" \
	test "$off" -gt 0
echo 1 > "$(sroce_switch cq_event_affinity)"

# wqe_cpus CPU DEPTH: 4 KiB reads at DEPTH from fio on CPU only; prints
# "ON OFF": how many WQEs of the QPs that carried them (100 WQEs or more:
# the I/O queue of CPU on both sides) the engine ran on CPU, and how many
# elsewhere.
wqe_cpus() {
	echo > "$TRACE/trace"
	echo 1 > "$TRACE/events/sroce/sroce_wqe/enable"
	fio_run /tmp/fio-cpu.log --name=cpu --filename="$null" --rw=randread \
		--bs=4k --iodepth="$2" --size=4m --cpus_allowed="$1"
	echo 0 > "$TRACE/events/sroce/sroce_wqe/enable"
	awk -v want="$1" '
	/ sroce_wqe: / {
		at = $0
		sub(/.*\[/, "", at)
		sub(/\].*/, "", at)
		qp = $0
		sub(/.*qpn /, "", qp)
		sub(/ .*/, "", qp)
		n[qp]++
		if (at + 0 == want) on[qp]++
	}
	END {
		for (qp in n)
			if (n[qp] >= 100) { a += on[qp]; b += n[qp] - on[qp] }
		print a + 0, b + 0
	}' "$TRACE/trace"
}
# Worker i is bound to the CPU of vector i, and a kernel QP starts on its
# send CQ's worker: the I/O queue of the CPU that submits (nvme-rdma's
# queue of that CPU uses its vector) and the target's QP paired with it
# run on that CPU. (With worker_release_batch=0: the binding alone.)
PARAMS=/sys/kernel/debug/sroce	# its switches (sroce_switch)
release_batch=$(cat "$PARAMS/worker_release_batch")
echo 0 > "$PARAMS/worker_release_batch"
for cpu in 0 $(($(nproc) - 1)); do
	read -r on off <<<"$(wqe_cpus "$cpu" 4)"
	echo "# fio on CPU $cpu: WQEs run on CPU $cpu: $on, elsewhere: $off"
	check "fio on CPU $cpu: the engine ran its I/O queue's WQEs there" \
		test "$on" -ge 1000 -a "$off" -eq 0
done
# The passes of a QD32 run with releases off are large, and with no
# polling the worker sleeps as soon as fio is done: the window they end
# in must not count for the QD1 run that wakes it.
spin_us=$(cat "$PARAMS/worker_spin_us")
spin_max_us=$(cat "$PARAMS/worker_spin_max_us")
echo 0 > "$PARAMS/worker_spin_us"
echo 0 > "$PARAMS/worker_spin_max_us"
check "QD32 from fio on CPU 0 with releases off" fio_run /tmp/fio-qd32.log \
	--name=qd32 --filename="$null" --rw=randread --bs=4k --iodepth=32 \
	--size=8m --cpus_allowed=0
echo "$spin_us" > "$PARAMS/worker_spin_us"
echo "$spin_max_us" > "$PARAMS/worker_spin_max_us"
echo "$release_batch" > "$PARAMS/worker_release_batch"
# A bound worker whose passes grow (work piled up while fio kept its CPU)
# lets the scheduler place it for a while; at QD1 its passes stay small,
# and it stays on its CPU.
releases=$(sroce_stat worker_releases)
read -r on off <<<"$(wqe_cpus 0 1)"
echo "# QD1, fio on CPU 0: WQEs run on CPU 0: $on, elsewhere: $off"
check "QD1: the engine ran the I/O queue's WQEs on its CPU" \
	test "$on" -ge 1000 -a "$off" -eq 0
check_eq "QD1: no bound worker was released" \
	"$releases" "$(sroce_stat worker_releases)"
check "QD32 from fio on CPU 0" fio_run /tmp/fio-qd32.log --name=qd32 \
	--filename="$null" --rw=randread --bs=4k --iodepth=32 --size=32m \
	--cpus_allowed=0
echo "# QD32: bound workers released: $(($(sroce_stat worker_releases) - releases))"
check "QD32: the bound worker was released" \
	test "$(sroce_stat worker_releases)" -gt "$releases"
# An engine pass holds a kernel CQ's completion event until it is done
# with the QP it runs (cq_event_hold): at depth the handler then finds a
# run's CQEs, where it would find one each time it re-armed.
# events_per_io HOLD: completion events per 100 I/Os over 8192 4 KiB
# reads at QD32 from fio on CPU 0, with cq_event_hold=HOLD. The worker
# stays bound (no release) so that both runs share fio's CPU alike: a
# released worker on a slow kernel (the debug one) runs beside the
# handlers and finds few CQEs a run. (A release from the run above ends
# within 1 s.)
event_hold=$(cat "$PARAMS/cq_event_hold")
echo 0 > "$PARAMS/worker_release_batch"
sleep 1
# Prints "EVENTS HELD": events per 100 I/Os, and how many of all were
# held (cq_events_held).
events_per_io() {
	local e0 h0
	echo "$1" > "$PARAMS/cq_event_hold"
	e0=$(sroce_stat cq_events)
	h0=$(sroce_stat cq_events_held)
	fio_run /tmp/fio-events.log --name=events --filename="$null" \
		--rw=randread --bs=4k --iodepth=32 --size=32m --cpus_allowed=0 ||
		{ echo "-1 -1"; return; }
	echo "$((($(sroce_stat cq_events) - e0) * 100 / 8192))" \
		"$(($(sroce_stat cq_events_held) - h0))"
}
read -r immediate immediate_held <<<"$(events_per_io 0)"
read -r held held_held <<<"$(events_per_io 1)"
echo "$event_hold" > "$PARAMS/cq_event_hold"
echo "$release_batch" > "$PARAMS/worker_release_batch"
# The saving is a measurement (Documentation/performance.rst), printed;
# the checks are the behaviour: events held with the hold on, none off.
echo "# QD32: completion events per 100 I/Os: $immediate raised at once, $held held for the run"
check "QD32, cq_event_hold=0: events raised ($immediate per 100 I/Os), none held ($immediate_held of 8192 I/Os)" \
	test "$immediate" -gt 0 -a "$immediate_held" -eq 0
check "QD32, cq_event_hold=1: events held to the end of a run ($held_held of 8192 I/Os; $held raised per 100)" \
	test "$held_held" -gt 0
# A worker bound to an I/O queue polls for the target's answer instead of
# sleeping through it, its poll adapting up to worker_spin_max_us: at QD1
# it sleeps at most once per I/O (when fio is runnable on its CPU), where
# without the adaptation it also sleeps while the target works.
# sleeps_per_io MAX_US: "SLEEPS HITS", the workers' sleeps per 100 I/Os
# and their idle polls that found work (worker_poll_hits) over 2048 4 KiB
# reads at QD1, with no fixed poll (worker_spin_us=0) and
# worker_spin_max_us=MAX_US.
sleeps_per_io() {
	local s0 p0
	echo 0 > "$PARAMS/worker_spin_us"
	echo "$1" > "$PARAMS/worker_spin_max_us"
	s0=$(sroce_stat sleeps)
	p0=$(sroce_stat worker_poll_hits)
	fio_run /tmp/fio-spin.log --name=spin --filename="$null" \
		--rw=randread --bs=4k --iodepth=1 --size=8m || { echo "-1 -1"; return; }
	echo "$((($(sroce_stat sleeps) - s0) * 100 / 2048))" \
		"$(($(sroce_stat worker_poll_hits) - p0))"
}
# (On one CPU the target's work item shares the worker's CPU, and a
# worker never polls beside a runnable task.)
if [ "$(nproc)" -ge 2 ]; then
	read -r fixed fixed_hits <<<"$(sleeps_per_io 0)"
	read -r adaptive adaptive_hits <<<"$(sleeps_per_io 20000)"
	echo "$spin_us" > "$PARAMS/worker_spin_us"
	echo "$spin_max_us" > "$PARAMS/worker_spin_max_us"
	# The sleeps saved are a measurement, printed; the checks are the
	# polls themselves (worker_poll_hits): none without, some with.
	echo "# QD1: worker sleeps per 100 I/Os: $fixed without the adaptive poll, $adaptive with it"
	check "QD1 without any poll: no idle poll found work ($fixed_hits), the workers slept ($fixed per 100 I/Os)" \
		test "$fixed_hits" -eq 0 -a "$fixed" -gt 0
	check "QD1 with the adaptive poll: idle polls found the answers ($adaptive_hits of 2048 I/Os)" \
		test "$adaptive_hits" -gt 0
fi
check "the host registered memory with REG_MR" \
	test "$(sroce_stat fast_regs)" -gt $((regs + 1000))
check "the target invalidated the host's keys remotely" \
	test "$(sroce_stat invalidates)" -gt $((invs + 1000))
check_eq "no invalidation was refused" "$bad_invs" "$(sroce_stat rx_bad_invalidate)"

check "nvme reset" timeout 60 nvme reset "/dev/$ctrl"
check "the controller is live again after the reset" wait_for 60 nvme_live "$NQN"
check "I/O after the reset, verified" \
	fio_verify "$(nvme_ns "$NQN" 1)" --rw=randrw --bsrange=4k-128k \
	--iodepth=16 --size=16m

check "nvme disconnect" nvme_detach "$NQN"
check "every sroce object but pooled CQs is back at its baseline" wait_for 30 ulp_objects_at "$base"

check "nvme connect -t rdma (IPv6)" nvme_attach "$NQN" rdma 2001:db8::1 4420 -i 2
check "IPv6: 4 KiB to 256 KiB random writes at QD16, verified" \
	fio_verify "$(nvme_ns "$NQN" 1)" --rw=randwrite --bsrange=4k-256k \
	--iodepth=16 --size=16m
check "nvme disconnect (IPv6)" nvme_detach "$NQN"
check "every sroce object is back at its baseline (IPv6)" \
	wait_for 30 ulp_objects_at "$base"

# The link flaps for 10 s under I/O: queued I/O waits for the reconnect.
# (Link down flushes v0's IPv6 addresses; nothing after this uses them.)
check "nvme connect (IPv4) for the flap" nvme_attach "$NQN" rdma 192.0.2.1 4420 -i 2
fio_verify "$(nvme_ns "$NQN" 1)" --rw=randrw --bsrange=4k-256k --iodepth=16 \
	--size=32m --loops=4 &
flap_fio=$!
sleep 3
ip link set v0 down
sleep 10
ip link set v0 up
wait $flap_fio
check "v0 down for 10 s under I/O: fio completes, verified" test $? -eq 0
check "the controller is live after the flap" wait_for 60 nvme_live "$NQN"
check "nvme disconnect after the flap" nvme_detach "$NQN"
check "every sroce object is back at its baseline (flap)" \
	wait_for 30 ulp_objects_at "$base"

# The target's receive queues from one SRQ per completion vector.
nvmet_port_del 1
nvmet_port_del 2
check "nvmet-rdma reloads with use_srq=1" sh -c \
	"rmmod nvmet_rdma && modprobe nvmet-rdma use_srq=1"
check "an rdma port again" nvmet_port 1 rdma ipv4 192.0.2.1 4420 "$NQN"
sleep 1
srqs=$(objects srqs)
check "nvme connect to the SRQ target" nvme_attach "$NQN" rdma 192.0.2.1 4420 -i 2
check "the target took its receive buffers from SRQs" \
	test "$(objects srqs)" -gt "$srqs"
check "SRQ target: 4 KiB to 1 MiB random read/write at QD32, verified" \
	fio_verify "$(nvme_ns "$NQN" 1)" --rw=randrw --bsrange=4k-1m \
	--iodepth=32 --size=32m
check "nvme disconnect (SRQ)" nvme_detach "$NQN"
check "every sroce object is back at its baseline (SRQ)" \
	wait_for 30 ulp_objects_at "$base"

# The target's port goes away under I/O: nvmet drops the controller, the
# host's reconnects fail, and after ctrl_loss_tmo (5 s) the I/O fails and
# the controller is deleted.
check "nvme connect with ctrl-loss-tmo 5 s" nvme_attach "$NQN" rdma 192.0.2.1 \
	4420 -i 2 --ctrl-loss-tmo=5 --reconnect-delay=1
gone_under_io "$(nvme_ns "$NQN" 1)" "the target's port is removed under I/O" \
	nvmet_port_del 1
check "the host deleted the controller" \
	wait_for 60 sh -c "! grep -qx '$NQN' /sys/class/nvme/nvme*/subsysnqn 2>/dev/null"
check "every sroce object is back at its baseline (port gone)" \
	wait_for 30 ulp_objects_at "$base"
check "the port again" nvmet_port 1 rdma ipv4 192.0.2.1 4420 "$NQN"
sleep 1

# rdma link delete under I/O: the I/O fails, the controller goes away.
# The core removes the target's client and the host's in turn: when the
# target's disconnect reaches the host first, the host has let go of the
# device and reconnects (until ctrl_loss_tmo) instead of deleting its
# controller at the device's removal, so the loss timeout is short here too.
check "nvme connect again, ctrl-loss-tmo 5 s" nvme_attach "$NQN" rdma \
	192.0.2.1 4420 -i 2 --ctrl-loss-tmo=5 --reconnect-delay=1
gone_under_io "$(nvme_ns "$NQN" 1)" "rdma link delete sroce0 under I/O" \
	timeout 60 rdma link delete sroce0
check "the host dropped the controller" \
	wait_for 60 sh -c "! grep -qx '$NQN' /sys/class/nvme/nvme*/subsysnqn 2>/dev/null"
nvmet_clear
check "no sroce object is left" wait_for 30 objects_zero
finish
