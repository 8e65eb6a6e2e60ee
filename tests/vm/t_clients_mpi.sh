# Open MPI from Debian's packages over UCX on sroce0, on one host: two
# ranks of our mpi_check (tests/mpi) exchange 8 B to 4 MiB in a ring and
# sum a vector, checking every byte. UCX_TLS=rc keeps the ranks off shared
# memory, which two ranks of one host would use otherwise.
# vm-timeout: 300
# vm-checks: 10
. ./lib.sh
make_veth v0 1
rdma link add sroce0 type sroce netdev v0
check "sroce0 has its IPv4 GID" wait_for 10 have_gid ::ffff:192.0.2.1
w0=$(sroce_stat wqes)
timeout 180 mpirun --allow-run-as-root --oversubscribe -np 2 \
	--mca pml ucx --mca btl ^vader,tcp,openib,uct \
	-x UCX_TLS=rc -x UCX_NET_DEVICES=sroce0:1 "$T/mpi_check" 2>&1 |
	tee /tmp/mpi.out
rc=${PIPESTATUS[0]}
check "mpirun -np 2 --mca pml ucx ends with status 0 ($rc)" test "$rc" -eq 0
check "mpi_check made its 5 checks, each passing" \
	test "$(grep -c '^ok - ' /tmp/mpi.out)" -eq 5
check "the ranks' traffic went through sroce0 ($(($(sroce_stat wqes) - w0)) WQEs)" \
	test $(($(sroce_stat wqes) - w0)) -ge 10
rdma link delete sroce0
check "sroce0 gone" dev_absent sroce0
finish
