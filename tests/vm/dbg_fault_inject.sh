# Fault injection (debug lab kernel only: make check-debug runs it).
# 1. fault_walk: every allocation of every verb fails in turn (fail-nth);
#    each failure is a clean error or absorbed, and leaves no object.
# 2. Traffic while the sroce workers see 10%
#    of their slab and page allocations fail (failslab/fail_page_alloc
#    with the task filter): nothing hangs, and once injection stops the
#    objects return to the baseline, verified traffic runs, and
#    rdma link delete and rmmod succeed. kmemleak is checked by the caller.
# vm-checks: 8
. ./lib.sh
F=/sys/kernel/debug
if [ ! -e $F/failslab ] || [ ! -e $F/fail_page_alloc ]; then
	echo "not ok - this kernel has no failslab/fail_page_alloc (use KVER=debug)"
	exit 1
fi
inject() {	# inject PROBABILITY: both allocators, task-filtered, silent
	local d
	for d in $F/failslab $F/fail_page_alloc; do
		echo "$1" > $d/probability
		echo 1 > $d/interval
		echo -1 > $d/times
		echo 0 > $d/verbose
		echo N > $d/ignore-gfp-wait
		echo Y > $d/task-filter
	done
	echo 0 > $F/fail_page_alloc/min-order
}
inject 0
peer_netns fi 2001:db8::2 2001:db8::3
rdma link add sroce0 type sroce netdev v0
wait_for 10 have_gid ::ffff:192.0.2.1
wait_for 10 have_gid 2001:db8::1
gidx=$(gid_index ::ffff:192.0.2.1)
base=$(cat "$OBJECTS")

timeout 900 "$T/fault_walk" sroce0 "$gidx"
check "fault_walk ends with status 0" [ $? -eq 0 ]
check "no object is left after the walk" wait_for 10 objects_at "$base"

# The engine's own allocations: once the programs run, 10% of the
# allocations of the sroce workers fail ("times" counts the failures
# injected). Only the workers: a user task that fails allocations also
# fails its page faults on the VM's 9p root, which breaks 9p itself. The
# wire fuzzer makes the workers build answers (skbs) on the wire; the
# shortcut traffic of ud_test and verbs_fuzz allocates nothing there.
/usr/bin/python3 ./wire_fuzz.py "$T/wire_victim" sroce0 \
	"$(gid_index 2001:db8::1)" fi 40 11 > /tmp/fi_wf.log 2>&1 &
wf_pid=$!
"$T/ud_test" sroce0 "$gidx" > /tmp/fi_ud.log 2>&1 &
ud_pid=$!
"$T/verbs_fuzz" sroce0 "$gidx" 40 7 > /tmp/fi_fz.log 2>&1 &
fz_pid=$!
sleep 3
for p in $(pgrep '^sroce/'); do echo 1 > "/proc/$p/make-it-fail"; done
inject 10
echo 1000000 > $F/failslab/times
echo 1000000 > $F/fail_page_alloc/times
status=()
for p in $wf_pid $ud_pid $fz_pid; do
	if wait_for 240 ended "$p"; then
		wait "$p"
		status+=("$?")
	else
		status+=(hung)
		kill -9 "$p"
	fi
done
injected=$((2000000 - $(cat $F/failslab/times) - $(cat $F/fail_page_alloc/times)))
inject 0
for p in $(pgrep '^sroce/'); do echo 0 > "/proc/$p/make-it-fail"; done
grep -h 'ok - ' /tmp/fi_wf.log /tmp/fi_ud.log /tmp/fi_fz.log | head -n 20 | sed 's/^/# /'
check "allocation failures were injected during the traffic ($injected)" [ "$injected" -gt 0 ]
check "every program ended on its own (status wire fuzz, ud, verbs fuzz: ${status[*]})" \
	[ "${status[*]}" = "${status[*]//hung/}" ]
check "the objects return to the baseline" wait_for 20 objects_at "$base"
timeout 120 "$T/rc_integrity" sroce0 "$gidx" 2 50 2 $((256 << 10))
check "without injection, verified RC traffic runs again" [ $? -eq 0 ]
check "rdma link delete succeeds" timeout 30 rdma link delete sroce0
check "rmmod sroce succeeds" timeout 30 rmmod sroce
ip netns del fi
finish
