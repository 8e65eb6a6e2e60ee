# rdma-core's pyverbs suite (the one Debian ships) against sroce0: every
# test that runs must pass; skips are listed with their reasons.
. ./lib.sh
make_veth v0 1
ip -6 addr add 2001:db8::7/64 dev v0 nodad
rdma link add sroce0 type sroce netdev v0
base=$(cat "$OBJECTS")
src=/usr/share/doc/rdma-core/tests
if [ ! -d "$src" ]; then
	echo "not ok - pyverbs tests not installed ($src)"
	finish
fi
work=$(mktemp -d)
cp -r "$src" "$work/tests"
gunzip -f "$work"/tests/*.gz
cd "$work/tests" || exit 1
timeout 900 /usr/bin/python3 run_tests.py --dev sroce0 --gid 1 -v > "$work/log" 2>&1
rc=$?
awk '/ \.\.\. ok$/ { sub(/ \.\.\. ok$/, ""); print "ok - pyverbs: " $0 }
     / \.\.\. (FAIL|ERROR)$/ { sub(/ \.\.\. (FAIL|ERROR)$/, ""); print "not ok - pyverbs: " $0 }' "$work/log"
grep -E "skipped '" "$work/log" | sed "s/.*skipped '//; s/'$//" | sort | uniq -c |
	sort -rn | sed 's/^/# skipped: /'
grep -E '^(Ran|OK|FAILED)' "$work/log" | sed 's/^/# /'
check "pyverbs run completed" test $rc -eq 0
check "no objects left" wait_for 10 objects_at "$base"
rm -rf "$work"
finish
