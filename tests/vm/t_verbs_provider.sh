# The provider binds sroce devices, PDs and parent domains work through it,
# and a provider that speaks another ABI refuses the device with a clear
# message.
# vm-checks: 31
. ./lib.sh
make_veth v0 1
rdma link add sroce0 type sroce netdev v0
base=$(cat "$OBJECTS")
check "ibv_devices lists sroce0" sh -c 'ibv_devices | grep -q "sroce0"'
check "ibv_devinfo -v -d sroce0" sh -c 'ibv_devinfo -v -d sroce0 > /dev/null'
"$T/pd_loop" sroce0 20 500
check "pd_loop: 20 rounds of 500 PDs" test $? -eq 0
check "no PD left after the loop" objects_at "$base" pds
check "no context left after the loop" objects_at "$base" ucontexts
"$T/parent_domain" sroce0 1
check "parent_domain" test $? -eq 0
check "no object left after parent_domain" objects_at "$base"

libdir=/usr/lib/x86_64-linux-gnu/libibverbs
cp "$libdir/libsroce-rdmav34.so" /tmp/libsroce.keep
cp "$T/abi2/libsroce-rdmav34.so" "$libdir/libsroce-rdmav34.so"
listed=$(ibv_devices 2>/tmp/abi2.err)
cp /tmp/libsroce.keep "$libdir/libsroce-rdmav34.so"
sed 's/^/# /' /tmp/abi2.err
not_listed() { ! grep -q sroce0 <<<"$listed"; }
check "an ABI-2 provider does not bind the ABI-1 kernel" not_listed
check "and says why" grep -q "kernel sroce ABI version 1 is not the 2 this provider speaks" /tmp/abi2.err
check "the right provider binds again" sh -c 'ibv_devices | grep -q sroce0'
finish
