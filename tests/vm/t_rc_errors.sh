# RC error paths: statuses for bad keys, access, ranges, RNR, short
# receive buffers, a vanished peer, misaligned atomics and flushes, with
# packets handed over and queued (t_rc_data); CQ
# resizing with completions held, including a refused shrink; a CQ
# overrun with and without IGNORE_OVERRUN (CQ_ERR or no event);
# completion timestamps (cq_timestamp).
# vm-checks: 98
. ./lib.sh
make_veth v0 1
rdma link add sroce0 type sroce netdev v0
base=$(cat "$OBJECTS")
timeout 120 "$T/rc_errors" sroce0 1
check "rc_errors finished" test $? -le 1
# The same over descriptors only (see t_rc_data).
echo 0 > "$(sroce_switch shortcut_hand_over)"
timeout 120 "$T/rc_errors" sroce0 1
check "rc_errors finished, descriptors only (shortcut_hand_over=0)" test $? -le 1
echo 1 > "$(sroce_switch shortcut_hand_over)"
timeout 60 "$T/cq_resize" sroce0 1
check "cq_resize finished" test $? -le 1
timeout 60 "$T/cq_overrun" sroce0 1
check "cq_overrun finished" test $? -le 1
timeout 60 "$T/cq_timestamp" sroce0 1
check "cq_timestamp finished" test $? -le 1
check "no objects left" wait_for 10 objects_at "$base"
finish
