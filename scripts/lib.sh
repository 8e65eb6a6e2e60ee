# Shared settings of the lab scripts; sourced, not run.
# SROCE_CACHE holds everything that outlives a checkout: the kernel source
# tree, the UML build, ccache, the lab initramfs.
SROCE_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SROCE_CACHE=${SROCE_CACHE:-/var/tmp/sroce-cache}
SROCE_KSRC=${SROCE_KSRC:-$SROCE_CACHE/linux-source-6.1}
SROCE_BUILD=${SROCE_BUILD:-$SROCE_TOP/build}
export SROCE_TOP SROCE_CACHE SROCE_KSRC SROCE_BUILD

# What in a kernel log fails the run that produced it (scripts/vm-run,
# tests/lab/wire.sh): oopses, warnings, hung tasks, lockdep, the
# sanitizers, kmemleak, refcount and list corruption, stuck netdevs.
# shellcheck disable=SC2034 # used by the scripts that source this
SROCE_KERNEL_BAD='(BUG:|WARNING:|Oops|general protection fault|kernel BUG|Call Trace:|INFO: task .* blocked|possible circular locking|possible recursive locking|UBSAN:|KASAN:|KFENCE:|ODEBUG:|suspected memory leak|refcount_t:|list_(add|del) corruption|unregister_netdevice: waiting|stalled pool shutdown)'

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
