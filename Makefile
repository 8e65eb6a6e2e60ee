# SPDX-License-Identifier: GPL-2.0
#
# sroce: the kernel module (out-of-tree kbuild), the rdma-core provider and
# the test programs, plus the lab's entry points.
#
#   make              module + provider + test programs
#   make kunit        KUnit suites under UML (scripts/kunit)
#   make kunit-debug  the same with KASAN, lockdep and UBSAN (scripts/kunit
#                     --debug; part of make check-debug)
#   make check        every test: style, KUnit, the VM suite (scripts/check)
#   make check-debug  the VM suites, fuzzers and fault injection on the
#                     debug lab kernel (scripts/check-debug; not in CI)
#   make check-kernels  the build, VM suite and wire lab on the 6.1 RT and
#                     6.12 kernels (scripts/check-kernels; not in CI)
#   make demo         boot the lab VM and show sroce0 (scripts/demo)
#   make install      install module, provider and sroce(7) (DESTDIR, KVER)
#   make uninstall    remove them again
#   make dkms-install the module's source to /usr/src/sroce-VERSION, built
#                     and installed by DKMS for every kernel with headers
#   make dkms-uninstall  remove it from DKMS and /usr/src
#   make deb          Debian packages sroce-dkms and sroce-provider in
#                     build/deb (dpkg-buildpackage)
#   make docs         Documentation/ as HTML in build/docs (Sphinx; a
#                     warning fails it)

KVER ?= $(shell scripts/kver)
# A kernel's name (stock, rt, 6.12) stands for the release scripts/kver finds.
ifneq ($(filter stock rt 6.12,$(KVER)),)
override KVER := $(shell KVER=$(KVER) scripts/kver)
endif
BUILD ?= $(CURDIR)/build
KSRC_CACHE ?= $(or $(SROCE_CACHE),/var/tmp/sroce-cache)
# KVER=debug: the debug lab kernel of scripts/debug-kernel.
ifeq ($(KVER),debug)
KDIR ?= $(KSRC_CACHE)/debug-kernel/build
endif
KDIR ?= /lib/modules/$(KVER)/build

KMAKE = $(MAKE) -C $(KDIR) M=$(CURDIR) CONFIG_RDMA_SROCE=m \
	CONFIG_SROCE_TEST_MODULES=m

CFLAGS_USER ?= -O2 -g -Wall -Wextra -Werror -Wno-unused-parameter \
	       -Wmissing-prototypes -Wstrict-prototypes
PROVIDER_CFLAGS = $(CFLAGS_USER) -fPIC -fvisibility=hidden -I$(CURDIR)/uapi \
		  -I$(CURDIR)/include -Iproviders/sroce

PROVIDER_SRC = $(wildcard providers/sroce/*.c)
PROVIDER_HDR = $(wildcard providers/sroce/*.h) uapi/rdma/sroce-abi.h \
	       include/sroce/wqe_enc.h
PROVIDER_SO = $(BUILD)/libsroce-rdmav34.so
TEST_PROGS = $(patsubst tests/progs/%.c,$(BUILD)/tests/%,$(wildcard tests/progs/*.c))

.PHONY: all module provider test-progs kunit kunit-debug check check-debug check-kernels demo install uninstall sparse \
	checkpatch style clean module-only module-clean dkms-source dkms-install dkms-uninstall deb docs

all: module provider test-progs

module:
	$(KMAKE) W=1 modules

# sroce.ko alone, as DKMS builds it (dkms.conf).
module-only:
	$(MAKE) -C $(KDIR) M=$(CURDIR) CONFIG_RDMA_SROCE=m modules

module-clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) CONFIG_RDMA_SROCE=m clean

provider: $(PROVIDER_SO) $(BUILD)/sroce.driver

$(PROVIDER_SO): $(PROVIDER_SRC) $(PROVIDER_HDR) providers/sroce/sroce.map
	@mkdir -p $(BUILD)
	$(CC) $(PROVIDER_CFLAGS) -shared -o $@ $(PROVIDER_SRC) \
		-Wl,--version-script=providers/sroce/sroce.map \
		-Wl,-z,defs -libverbs

$(BUILD)/sroce.driver:
	@mkdir -p $(BUILD)
	echo "driver sroce" > $@

# An MPI program (tests/vm/t_clients_mpi.sh), built with Open MPI's mpicc
# where it is installed (scripts/setup installs it; a host that only
# builds the driver needs none).
MPICC := $(shell command -v mpicc 2>/dev/null)
MPI_PROGS := $(if $(MPICC),$(BUILD)/tests/mpi_check)

test-progs: $(TEST_PROGS) $(BUILD)/tests/abi2/libsroce-rdmav34.so $(MPI_PROGS)

$(BUILD)/tests/mpi_check: tests/mpi/mpi_check.c
	@mkdir -p $(BUILD)/tests
	$(MPICC) $(CFLAGS_USER) -o $@ $<

# A provider speaking ABI 2, which must refuse today's kernel (tests/vm).
$(BUILD)/tests/abi2/libsroce-rdmav34.so: $(PROVIDER_SRC) $(PROVIDER_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(PROVIDER_CFLAGS) -DSROCE_PROVIDER_ABI=2 -shared -o $@ \
		$(PROVIDER_SRC) -Wl,--version-script=providers/sroce/sroce.map \
		-Wl,-z,defs -libverbs

$(BUILD)/tests/%: tests/progs/%.c tests/progs/testlib.h tests/progs/rings.h uapi/rdma/sroce-abi.h $(PROVIDER_HDR)
	@mkdir -p $(BUILD)/tests
	$(CC) $(CFLAGS_USER) -I$(CURDIR)/uapi -I$(CURDIR)/include -o $@ $< -libverbs -lpthread

kunit:
	scripts/kunit

kunit-debug:
	scripts/kunit --debug

check:
	scripts/check

check-debug:
	scripts/check-debug

check-kernels:
	scripts/check-kernels

demo:
	scripts/demo

sparse:
	$(KMAKE) C=2 CHECK="sparse -Wno-decl" W=1 modules

checkpatch:
	scripts/checkpatch

style: sparse checkpatch

docs:
	sphinx-build -W -q -b html Documentation $(BUILD)/docs

# install/uninstall: DESTDIR stages the files for a package (and skips
# depmod, the package's to run); KVER picks the kernel.
MODDIR = $(DESTDIR)/lib/modules/$(KVER)/extra
LIBDIR ?= $(shell pkg-config --variable=libdir libibverbs 2>/dev/null || \
	    echo /usr/lib/x86_64-linux-gnu)
MANDIR ?= /usr/share/man
INSTALLED = $(MODDIR)/sroce.ko \
	    $(DESTDIR)$(LIBDIR)/libibverbs/libsroce-rdmav34.so \
	    $(DESTDIR)/etc/libibverbs.d/sroce.driver \
	    $(DESTDIR)$(MANDIR)/man7/sroce.7
# Where modules_install put them before, removed so that no stale copy stays.
OLD_INSTALLED = $(MODDIR)/drivers/infiniband/sw/sroce/sroce.ko \
		$(MODDIR)/tests/kmod/sroce_frwr_test.ko

install: all
	rm -f $(OLD_INSTALLED)
	install -D -m 0644 drivers/infiniband/sw/sroce/sroce.ko $(MODDIR)/sroce.ko
	install -D -m 0644 $(PROVIDER_SO) \
		$(DESTDIR)$(LIBDIR)/libibverbs/libsroce-rdmav34.so
	install -D -m 0644 $(BUILD)/sroce.driver $(DESTDIR)/etc/libibverbs.d/sroce.driver
	install -D -m 0644 Documentation/sroce.7 $(DESTDIR)$(MANDIR)/man7/sroce.7
	$(if $(DESTDIR),,depmod -a $(KVER))

uninstall:
	rm -f $(INSTALLED) $(OLD_INSTALLED)
	$(if $(DESTDIR),,depmod -a $(KVER))

clean:
	$(KMAKE) clean
	rm -rf $(BUILD)

# DKMS and Debian packages. The version is debian/changelog's upstream part.
VERSION ?= $(shell dpkg-parsechangelog -l debian/changelog -S Version | cut -d- -f1)
DKMS_SRC = $(DESTDIR)/usr/src/sroce-$(VERSION)
DKMS_FILES = Kbuild Makefile drivers/infiniband/sw/sroce/Kbuild \
	     drivers/infiniband/sw/sroce/Kconfig \
	     $(filter-out %.mod.c,$(wildcard drivers/infiniband/sw/sroce/*.[ch])) \
	     $(wildcard include/sroce/*.h) uapi/rdma/sroce-abi.h

# The module's source tree as DKMS takes it (DESTDIR for a package).
dkms-source:
	rm -rf $(DKMS_SRC)
	install -d $(DKMS_SRC)
	cp --parents $(DKMS_FILES) $(DKMS_SRC)/
	sed 's/#MODULE_VERSION#/$(VERSION)/' dkms.conf > $(DKMS_SRC)/dkms.conf

dkms-install: dkms-source
	dkms add -m sroce -v $(VERSION)
	for k in /lib/modules/*/build; do \
		k=$${k%/build}; dkms install -m sroce -v $(VERSION) -k $${k##*/} || exit 1; \
	done

dkms-uninstall:
	-dkms remove -m sroce -v $(VERSION) --all
	rm -rf $(DKMS_SRC)

# dpkg-buildpackage writes beside the tree; the packages move to build/deb.
deb:
	dpkg-buildpackage -b -us -uc
	mkdir -p $(BUILD)/deb
	mv ../sroce-dkms_$(VERSION)-*_all.deb ../sroce-provider_$(VERSION)-*.deb \
	   $(BUILD)/deb/
	rm -f ../sroce_$(VERSION)-*.buildinfo ../sroce_$(VERSION)-*.changes \
	      ../sroce-provider-dbgsym_$(VERSION)-*.deb
