#!/bin/bash
# Runs inside the lab VM (scripts/bench storage same-host): fio against an
# NVMe-oF null_blk namespace on this host, over nvme-rdma on rdma_rxe,
# nvme-rdma on sroce and nvme-tcp, one after the other in this boot over
# the same veth, 2 I/O queues each, in SROCE_BENCH_ROUNDS rounds (default
# 3) that alternate the transports; prints the medians with sroce's ratio
# to the others, and every round's values.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/vm/lib.sh
. "$here/../../tests/vm/lib.sh"
# shellcheck source=scripts/lab/bench-storage-lib.sh
. "$here/bench-storage-lib.sh"
bench_local_target || exit 1

rounds=${SROCE_BENCH_ROUNDS:-3}
declare -A r r_all
# measure KEY TRTYPE ROUND: connects over TRTYPE and runs every job.
measure() {
	nvmet_port 1 "$2" ipv4 192.0.2.1 4420 "$NQN" || return
	sleep 1
	if ! nvme_attach "$NQN" "$2" 192.0.2.1 4420 -i 2; then
		echo "# $1, round $3: nvme connect failed"
		nvmet_port_del 1
		return
	fi
	host_jobs "$1" "$(nvme_ns "$NQN" 1)" "$3"
	nvme_detach "$NQN"
	nvmet_port_del 1
	sleep 1
}

for round in $(seq 1 "$rounds"); do
	modprobe rdma_rxe
	rdma link add rxe0 type rxe netdev v0
	measure rxe rdma "$round"
	rdma link delete rxe0
	rmmod rdma_rxe
	rdma link add sroce0 type sroce netdev v0
	measure sroce rdma "$round"
	rdma link delete sroce0
	measure tcp tcp "$round"
done
nvmet_clear

storage_table "nvme, null_blk, 2 queues" "CPU us per I/O (QD32 4KiB)"
echo "(ratio: how many times better sroce is; same-host, TCG, ${runtime} s per job;"
echo " medians of $rounds rounds that alternate the transports)"
