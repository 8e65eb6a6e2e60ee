# Memory registration beyond ibv_reg_mr, on the same host. Fast
# registration, local and remote invalidation from a kernel consumer
# (tests/kmod/sroce_frwr_test.c) over an IPv4 and an IPv6 GID: data placed
# through the page list, keys, states, access and PD checks, the
# unsignaled LOCAL_INV + REG_MR + SEND chain; the engine's counters move
# with them. ibv_rereg_mr in every mode (mr_rereg); memory windows of
# type 1 and 2 (mw_test), and a type 1 window rebound between two MRs
# while a peer accesses it (mw_race; SROCE_TEST_RACE_SECONDS, default 5).
# vm-checks: 101
. ./lib.sh
KMOD=$SROCE_TOP/tests/kmod/sroce_frwr_test.ko
make_veth v0 1
rdma link add sroce0 type sroce netdev v0
base=$(cat "$OBJECTS")
check "sroce0 has the GID 2001:db8::1" wait_for 10 have_gid 2001:db8::1
check "the device offers MEM_MGT_EXTENSIONS" \
	sh -c "ibv_devinfo -v -d sroce0 | grep -q MEM_MGT_EXTENSIONS"

run_kmod() {	# run_kmod GID_INDEX LABEL
	local log r0 i0 b0
	r0=$(sroce_stat fast_regs)
	i0=$(sroce_stat invalidates)
	b0=$(sroce_stat rx_bad_invalidate)
	dmesg -C
	check "$2: the test module loads" insmod "$KMOD" dev=sroce0 gid_index="$1"
	rmmod sroce_frwr_test 2> /dev/null
	log=$(dmesg | sed -n 's/.*sroce_frwr_test: //p')
	echo "$log" | sed "s/^/[$2] /"
	echo "$log" | grep -q '^not ok' && failures=$((failures + 1))
	check "$2: every check ran and passed" \
		grep -Eq '^[1-9][0-9]* passed, 0 failed$' <<< "$log"
	# REG_MRs that succeed: 5; keys invalidated: 4; bad SEND_INVs: 2.
	check_eq "$2: fast_regs counted" 5 $(($(sroce_stat fast_regs) - r0))
	check_eq "$2: invalidates counted" 4 $(($(sroce_stat invalidates) - i0))
	check_eq "$2: rx_bad_invalidate counted" 2 \
		$(($(sroce_stat rx_bad_invalidate) - b0))
}
run_kmod "$(gid_index ::ffff:192.0.2.1)" ipv4
run_kmod "$(gid_index 2001:db8::1)" ipv6
check "every object is gone after the module" wait_for 10 objects_at "$base"
"$T/mr_rereg" sroce0 1
check "mr_rereg" test $? -eq 0
check "every object is gone after mr_rereg" wait_for 10 objects_at "$base"
"$T/mw_test" sroce0 1
check "mw_test" test $? -eq 0
check "the device offers memory windows" \
	sh -c "ibv_devinfo -v -d sroce0 | grep -q MEM_WINDOW_TYPE_2B"
check "every object is gone after mw_test" wait_for 10 objects_at "$base"
"$T/mw_race" sroce0 1 "${SROCE_TEST_RACE_SECONDS:-5}"
check "mw_race: a window rebound under accesses through it" test $? -eq 0
check "every object is gone after mw_race" wait_for 10 objects_at "$base"
finish
