# Shared settings of the lab scripts; sourced, not run.
# SROCE_CACHE holds everything that outlives a checkout: the kernel source
# tree, the UML build, ccache, the lab initramfs.
SROCE_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SROCE_CACHE=${SROCE_CACHE:-/var/tmp/sroce-cache}
SROCE_KSRC=${SROCE_KSRC:-$SROCE_CACHE/linux-source-6.1}
SROCE_BUILD=${SROCE_BUILD:-$SROCE_TOP/build}
export SROCE_TOP SROCE_CACHE SROCE_KSRC SROCE_BUILD

die() {
	echo "$(basename "$0"): $*" >&2
	exit 1
}

# The kernel source tree from Debian's linux-source-6.1 package.
ensure_ksrc() {
	[ -f "$SROCE_KSRC/Makefile" ] && return 0
	local tarball
	tarball=$(ls /usr/src/linux-source-6.1.tar.xz 2>/dev/null) ||
		die "linux-source-6.1 is not installed (run scripts/setup)"
	mkdir -p "$SROCE_CACHE"
	echo "unpacking $tarball into $SROCE_CACHE" >&2
	tar -C "$SROCE_CACHE" -xf "$tarball"
}
