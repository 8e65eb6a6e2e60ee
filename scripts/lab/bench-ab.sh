#!/bin/bash
# Runs inside the lab VM (scripts/bench compare): the same-host sroce rows
# of bench.sh for two builds of sroce.ko in this one boot, alternated
# ROUNDS times (A B A B ...), and prints each row's median per build and
# the ratio of B to A (above 1: B is better). Boots differ more than
# builds, so two builds are compared only inside one boot.
#   bench-ab.sh KO_A KO_B [ROUNDS]
# SROCE_BENCH_ROWS: the rows to run (the keys of measure() below; default
# all but atomic_lat), for more rounds of a few.
set -u
ko_a=$1 ko_b=$2 rounds=${3:-3}
iters=${SROCE_BENCH_ITERS:-2000}
rows=${SROCE_BENCH_ROWS:-write_bw write_rate send_lat read_bw send_bw atomic_rate}
# shellcheck source=scripts/lab/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"
bench_veth

# measure KEY: the result of that row's perftest run
measure() {
	case $1 in
	write_bw) perf sroce0 ib_write_bw -s 65536 -n "$iters" | col 4 ;;
	write_rate) perf sroce0 ib_write_bw -s 64 -n $((iters * 5)) | col 5 ;;
	send_lat) perf sroce0 ib_send_lat -s 64 -n "$iters" | col 5 ;;
	read_bw) perf sroce0 ib_read_bw -s 65536 -n "$iters" | col 4 ;;
	send_bw) perf sroce0 ib_send_bw -s 65536 -n "$iters" | col 4 ;;
	atomic_rate) perf sroce0 ib_atomic_bw -n "$iters" | col 5 ;;
	atomic_lat) perf sroce0 ib_atomic_lat -n "$iters" | col 5 ;;
	esac
}

known=" write_bw write_rate send_lat read_bw send_bw atomic_rate atomic_lat "
for key in $rows; do
	[[ $known == *" $key "* ]] || { echo "bench-ab.sh: no row $key" >&2; exit 2; }
done

declare -A all
for ((round = 0; round < rounds; round++)); do
	for build in A B; do
		ko=$ko_a
		[ $build = B ] && ko=$ko_b
		bench_sroce_up "$ko" || exit 1
		for key in $rows; do
			v=$(measure "$key")
			all[$build.$key]+="${v:-fail} "
		done
		rdma link delete sroce0
		rmmod sroce || exit 1
	done
done

printf '%-28s %10s %10s %7s  %s\n' benchmark A B B/A "rounds A | B"
row() {	# row NAME KEY HIGHER_IS_BETTER: if the row ran
	local a b q
	[ -n "${all[A.$2]:-}" ] || return 0
	# shellcheck disable=SC2086
	a=$(median ${all[A.$2]}) && a=${a:-fail}
	# shellcheck disable=SC2086
	b=$(median ${all[B.$2]}) && b=${b:-fail}
	q=$(awk -v a="$a" -v b="$b" -v h="$3" 'BEGIN {
		if (a + 0 == 0 || b + 0 == 0) print "n/a";
		else printf "%.2f", h ? b / a : a / b }')
	printf '%-28s %10s %10s %7s  %s| %s\n' "$1" "$a" "$b" "$q" \
		"${all[A.$2]}" "${all[B.$2]}"
}
bench_rows
row "ib_atomic_lat typical us" atomic_lat 0
echo "(B/A: how many times better B is; medians of $rounds alternated rounds in one boot, $iters iterations)"
