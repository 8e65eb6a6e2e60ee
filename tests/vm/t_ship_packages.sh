# The Debian packages of make deb, as a user gets them: dpkg -i installs
# sroce-dkms (DKMS installs the module for this kernel) and sroce-provider;
# rdma link add loads the module; traffic runs; dpkg --purge leaves no
# file behind. The lab's own module and provider are set aside meanwhile.
# DKMS's build of the package ran on the host (scripts/dkms-prebuild, a
# step of make check): its tarball goes where the postinst looks for
# prebuilt modules, so dpkg -i installs that build instead of compiling
# for ten minutes under TCG. SROCE_TEST_DKMS_BUILD=1 compiles in the VM.
# vm-timeout: 900
# vm-checks: 18
. ./lib.sh
kver=$(uname -r)
deb_dkms=$(ls "$SROCE_BUILD"/deb/sroce-dkms_*_all.deb 2> /dev/null)
deb_prov=$(ls "$SROCE_BUILD"/deb/sroce-provider_*_amd64.deb 2> /dev/null)
check "make deb built both packages" test -f "$deb_dkms" -a -f "$deb_prov"
version=$(dpkg-deb -f "$deb_dkms" Version)
version=${version%-*}
prebuilt=$SROCE_BUILD/deb/sroce-$version.dkms.tar.gz
if [ "${SROCE_TEST_DKMS_BUILD:-0}" = 1 ]; then
	prebuilt=
else
	check "scripts/dkms-prebuild made DKMS's tarball for $version" test -f "$prebuilt"
fi
lab_ko=/lib/modules/$kver/updates/sroce.ko
prov=/usr/lib/x86_64-linux-gnu/libibverbs/libsroce-rdmav34.so
aside=/tmp/lab-sroce
mkdir -p "$aside"
modprobe -r sroce 2> /dev/null
mv "$lab_ko" "$prov" /etc/libibverbs.d/sroce.driver "$aside/"
depmod -a "$kver"
check "without the lab's copy no sroce module is found" \
	sh -c '! modinfo -n sroce > /dev/null 2>&1'

# The postinst's prebuilt-module path: /usr/share/PACKAGE/NAME-VERSION.dkms.tar.gz.
tarball_root=/usr/share/sroce-dkms
if [ -n "$prebuilt" ]; then
	mkdir -p "$tarball_root"
	cp "$prebuilt" "$tarball_root/"
fi
t0=$SECONDS
if dpkg -i "$deb_dkms" "$deb_prov" > /tmp/dpkg-i.log 2>&1; then
	echo "ok - dpkg -i sroce-dkms sroce-provider"
else
	echo "not ok - dpkg -i sroce-dkms sroce-provider"
	failures=$((failures + 1))
	grep -v debconf /tmp/dpkg-i.log | tail -n 30 | sed 's/^/# dpkg: /'
	tail -n 20 /var/lib/dkms/sroce/*/build/make.log 2> /dev/null |
		sed 's/^/# make: /'
fi
echo "# dpkg -i took $((SECONDS - t0)) s"
if [ -n "$prebuilt" ]; then
	check "the postinst loaded the prebuilt module and compiled nothing" \
		sh -c "grep -q 'Loading tarball for sroce-$version' /tmp/dpkg-i.log &&
			! grep -q 'Building initial module' /tmp/dpkg-i.log"
	rm -rf "$tarball_root"
fi
check "DKMS built and installed sroce/$version for $kver" \
	sh -c "dkms status -m sroce -v '$version' -k '$kver' | grep -q installed"
# DKMS compresses the module as the kernel's own are (xz on 6.12).
dkms_ko=$(modinfo -n sroce 2>&1)
check "modprobe finds DKMS's module ($dkms_ko)" \
	test "${dkms_ko%.xz}" = "/lib/modules/$kver/updates/dkms/sroce.ko"
if [ -n "$prebuilt" ]; then
	# Each as it is stored (compressed or not), then decompressed.
	unpack() { case "$1" in *.xz) xz -dc ;; *.zst) zstd -qdc ;; *) cat ;; esac; }
	member=$(tar -tzf "$prebuilt" | grep -E "^\./dkms_main_tree/$kver/x86_64/module/sroce\.ko")
	tar -xzOf "$prebuilt" "$member" | unpack "$member" > /tmp/prebuilt.ko
	unpack "$dkms_ko" < "$dkms_ko" > /tmp/installed.ko
	check "the module DKMS installed is the host's build" cmp -s /tmp/prebuilt.ko /tmp/installed.ko
fi
check "the provider and its .driver file are the package's" \
	sh -c "dpkg -S $prov /etc/libibverbs.d/sroce.driver > /dev/null"

make_veth v0 1
check "rdma link add loads the module" \
	sh -c 'rdma link add sroce0 type sroce netdev v0 && test -d /sys/module/sroce'
"$T/rc_integrity" sroce0 1 2 50 "$RANDOM" $((1 << 20))
check "rc_integrity over the packaged module and provider" test $? -eq 0
rdma link delete sroce0
ip link del v0
check "rmmod sroce" rmmod sroce

check "dpkg --purge removes both packages" \
	sh -c 'dpkg --purge sroce-provider sroce-dkms > /tmp/dpkg-r.log 2>&1'
check "no DKMS state left" sh -c '[ -z "$(dkms status -m sroce)" ]'
check "no file left" sh -c "! ls -d /usr/src/sroce-* /lib/modules/$kver/updates/dkms/sroce.ko* \
	/var/lib/dkms/sroce $prov /etc/libibverbs.d/sroce.driver \
	/usr/share/man/man7/sroce.7.gz 2> /dev/null | grep ."

# dkms removed updates/ with the last module in it.
mkdir -p "$(dirname "$lab_ko")"
mv "$aside/sroce.ko" "$lab_ko"
mv "$aside/libsroce-rdmav34.so" "$prov"
mv "$aside/sroce.driver" /etc/libibverbs.d/sroce.driver
depmod -a "$kver"
check_eq "the lab's module is back" "$lab_ko" "$(modinfo -n sroce 2>&1)"
finish
