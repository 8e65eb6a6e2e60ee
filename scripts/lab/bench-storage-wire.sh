#!/bin/bash
# Runs inside each of the two lab VMs of scripts/bench storage two-hosts:
# bench-storage-wire.sh target|host. The target VM (192.0.2.10) exports a
# null_blk namespace through nvmet over rdma_rxe, over sroce, then over
# TCP; the host VM (192.0.2.11) connects to each with 2 I/O queues, runs
# the same fio jobs as the same-host bench, says "next"; in
# SROCE_BENCH_ROUNDS rounds (default 3) that alternate the transports. At
# the end the host prints the medians with sroce's ratios.
# SROCE_BENCH_SET_B="name=value,...": one more transport in each round,
# sroce with those switches (sroce_switch) on both VMs, printed after the
# table beside sroce as it is (B/A): a change measured in one boot; or
# SROCE_BENCH_SET_B="ko=PATH": sroce.ko from PATH on both VMs instead
# (scripts/bench storage compare REV two-hosts).
set -u
role=$1
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/lab/bench-storage-lib.sh
. "$here/bench-storage-lib.sh"
TARGET=192.0.2.10
if [ "$role" = target ]; then bench_lab_net 10 11; else bench_lab_net 11 10; fi
if [ "$role" = target ]; then
	bench_null_target || exit 1
else
	modprobe nvme-rdma && modprobe nvme-tcp || exit 1
fi

rounds=${SROCE_BENCH_ROUNDS:-3}
set_b=${SROCE_BENCH_SET_B:-}
ko_b=
[ "${set_b#ko=}" = "$set_b" ] || ko_b=${set_b#ko=}
# switches_write SET: writes each name=value of SET, printing what each
# was before as a SET.
switches_write() {
	local pv f old=
	for pv in ${1//,/ }; do
		f=$(sroce_switch "${pv%%=*}")
		old="$old${old:+,}${pv%%=*}=$(cat "$f")" || return 1
		echo "${pv#*=}" > "$f" || return 1
	done
	echo "$old"
}
declare -A r r_all
for round in $(seq 1 "$rounds"); do
	for tr in rxe sroce ${set_b:+sroceB} tcp; do
		trtype=rdma
		case $tr in
		rxe) modprobe rdma_rxe && rdma link add rxe0 type rxe netdev "$IF" ;;
		sroce)
			modprobe sroce && rdma link add sroce0 type sroce netdev "$IF"
			;;
		sroceB)
			# modprobe would keep a module of the name loaded.
			if [ -n "$ko_b" ]; then
				rmmod sroce 2> /dev/null
				insmod "$ko_b"
			else
				modprobe sroce
			fi && rdma link add sroce0 type sroce netdev "$IF"
			;;
		tcp) trtype=tcp ;;
		esac
		if [ "$tr" = sroceB ] && [ -z "$ko_b" ]; then
			saved=$(switches_write "$set_b") || echo "# sroceB: cannot set $set_b"
		fi
		if [ "$role" = target ]; then
			nvmet_port 1 "$trtype" ipv4 "$TARGET" 4420 "$NQN" ||
				echo "# $tr: no nvmet port"
			word=$(peer_hear)
			[ "$word" = next ] || echo "# $tr: the host said '$word'"
			nvmet_port_del 1
		else
			for _ in $(seq 1 120); do
				nvme_attach "$NQN" "$trtype" "$TARGET" 4420 -i 2 \
					2> /dev/null && break
				sleep 1
			done
			if dev=$(nvme_ns "$NQN" 1); then
				echo "# $tr: $(dmesg | grep -o 'creating [0-9]* I/O queues' | tail -n 1)"
				host_jobs "$tr" "$dev" "$round"
				nvme_detach "$NQN"
			else
				echo "# $tr, round $round: nvme connect failed"
			fi
			peer_say "$TARGET" next
		fi
		sleep 1
		case $tr in
		rxe) rdma link delete rxe0; rmmod rdma_rxe ;;
		sroce) rdma link delete sroce0 ;;
		sroceB) rdma link delete sroce0; [ -z "$ko_b" ] || rmmod sroce ;;
		esac
		[ "$tr" = sroceB ] && [ -n "${saved:-}" ] && switches_write "$saved" > /dev/null
	done
done
[ "$role" = target ] && { nvmet_clear; exit 0; }
storage_table "nvme across two VMs, null_blk" "CPU us per I/O (host VM, QD32)"
echo "(ratio: how many times better sroce is; two TCG VMs, host 2 vCPUs, target 1; ${runtime} s per job;"
echo " medians of $rounds rounds that alternate the transports)"
[ -n "$set_b" ] || exit 0
echo "sroce with $set_b (B) beside sroce as it is (A), medians:"
for k in p50 p99 iops read_bw write_bw cpu; do
	printf '  %-8s A %10s  B %10s  B/A %s   (B rounds: %s)\n' "$k" \
		"${r[sroce.$k]:-fail}" "${r[sroceB.$k]:-fail}" \
		"$(ratio "${r[sroceB.$k]:-}" "${r[sroce.$k]:-}")" "${r_all[sroceB.$k]:-}"
done
