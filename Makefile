# gpup2p — build, test, install.
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR = $(PREFIX)/bin
MANDIR = $(PREFIX)/share/man/man1
BASHCOMPDIR = $(PREFIX)/share/bash-completion/completions
# zsh completions go where zsh's $fpath looks: $(PREFIX)/share/zsh/site-functions is zsh's default (and
# Debian's for /usr/local); Debian's zsh has no /usr/share/zsh/site-functions but reads
# /usr/share/zsh/vendor-completions. The zsh installed here decides, else Debian or not.
ZSHCOMPDIR ?= $(firstword $(filter $(addprefix $(PREFIX)/share/zsh/,site-functions vendor-completions),\
	$(shell zsh -fc 'print -l $$fpath' 2>/dev/null)) $(if $(and $(filter /usr,$(PREFIX)),\
	$(wildcard /etc/debian_version)),$(PREFIX)/share/zsh/vendor-completions) $(PREFIX)/share/zsh/site-functions)
SYSTEMDDIR ?= $(PREFIX)/lib/systemd/system
UDEVDIR ?= $(PREFIX)/lib/udev/rules.d
CONTRIBDIR = $(PREFIX)/share/gpup2p/contrib

CC ?= cc
PKG_CONFIG ?= pkg-config
VERSION := $(shell cat VERSION 2>/dev/null || echo 0.0.0)

# CPPFLAGS, CFLAGS, LDFLAGS and LDLIBS are the user's (GNU conventions): added after the project's own,
# so that they can override. WERROR=1 (CI, tests) turns warnings into errors; a user's newer compiler
# may warn where ours did not, and that must not break their build.
WERROR ?=
WARN = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-format-truncation
WARN += $(if $(filter-out 0 no,$(WERROR)),-Werror,)
CFLAGS ?= -O2 -g
# clang does not know gcc's -Wformat-truncation: let it ignore that one option
WARN += $(if $(findstring clang,$(shell $(CC) --version 2>/dev/null)),-Wno-unknown-warning-option,)
# Debian's hardening flags (dpkg-buildflags, hardening=+all) in every build, not only the .deb: stack
# protector, fortified libc calls, stack clash protection, CET/BTI branch protection where the compiler
# takes it, format-security errors, full RELRO, PIE. They come before the user's CFLAGS and LDFLAGS, which
# can turn each off (-fno-stack-protector, -no-pie, -Wl,-z,lazy); HARDEN=0 drops them all. _FORTIFY_SOURCE
# needs optimisation, and is left to the user's flags when they name it, and to the sanitizers' build.
HARDEN ?= 1
cc_takes = $(shell $(CC) -Werror $(1) -S -o /dev/null -x c /dev/null >/dev/null 2>&1 && echo $(1))
HARDEN_FORTIFY = $(if $(or $(findstring _FORTIFY_SOURCE,$(CPPFLAGS) $(CFLAGS)),$(findstring -fsanitize,$(CFLAGS)),\
	$(filter -O0,$(lastword -O0 $(filter -O%,$(CFLAGS))))),,-D_FORTIFY_SOURCE=2)
ifneq ($(filter-out 0 no,$(HARDEN)),)
HARDEN_CFLAGS := -fstack-protector-strong -Wformat -Werror=format-security -fPIE \
	$(call cc_takes,-fstack-clash-protection) $(call cc_takes,-fcf-protection) \
	$(call cc_takes,-mbranch-protection=standard)
HARDEN_LDFLAGS = -pie -Wl,-z,relro -Wl,-z,now
else
HARDEN_CFLAGS =
HARDEN_LDFLAGS =
HARDEN_FORTIFY =
endif
PKGS = libpci libkmod zlib
# cli/ sees the public headers only (HACKING.md: what may use what); libcore/ its own folders too.
INCLUDES = -Ilibcore/include -Ilibcore
ALL_CPPFLAGS = -D_GNU_SOURCE $(HARDEN_FORTIFY) $(INCLUDES) -DGPUP2P_VERSION=\"$(VERSION)\" \
	$(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null) $(CPPFLAGS)
ALL_CFLAGS = -std=c11 $(ALL_CPPFLAGS) $(WARN) $(HARDEN_CFLAGS) $(CFLAGS)
ALL_LDFLAGS = $(HARDEN_LDFLAGS) $(LDFLAGS)
LIBS = $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null || echo -lpci -lkmod -lz) -ldl -lm -pthread $(LDLIBS)

BUILD = build
LIB_SRC = $(wildcard libcore/*.c libcore/*/*.c)
LIB_OBJ = $(patsubst %.c,$(BUILD)/%.o,$(LIB_SRC))
CLI_SRC = $(wildcard cli/*.c)
CLI_OBJ = $(patsubst %.c,$(BUILD)/%.o,$(CLI_SRC))
UNIT_SRC = $(wildcard tests/unit/test_*.c)
UNIT_BIN = $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRC))
LIBA = $(BUILD)/libgpup2p.a
BIN = $(BUILD)/gpup2p

.PHONY: all check check-only check-asan check-vm check-fleet kmod run deps install install-dkms uninstall clean check-pkg check-kmod-arm64 fixtures pkgcheck version-sync

all: $(BIN)

# Before any compiler error about a missing kmod.h or pci.h: say which -dev package is missing.
pkgcheck:
	@command -v $(PKG_CONFIG) >/dev/null || { echo "gpup2p: $(PKG_CONFIG) not found: run 'make deps'" \
		"(Debian: apt install pkg-config libpci-dev libkmod-dev zlib1g-dev)" >&2; exit 1; }
	@m=; d=; for p in $(PKGS); do $(PKG_CONFIG) --exists $$p || { m="$$m $$p"; d="$$d $$(echo $$p | sed 's/^zlib$$/zlib1g/')-dev"; }; done; \
	[ -z "$$m" ] || { echo "gpup2p: no development files for$$m (pkg-config): run 'make deps'" \
		"(Debian: apt install$$d)" >&2; exit 1; }

$(BUILD)/%.o: %.c $(wildcard libcore/include/gpup2p/*.h) $(wildcard libcore/*.h libcore/*/*.h) \
		$(wildcard cli/*.h) | pkgcheck
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(CLI_OBJ): INCLUDES = -Ilibcore/include

$(LIBA): $(LIB_OBJ)
	@rm -f $@
	@echo "  AR      $@"
	@ar rcs $@ $^

$(BIN): $(CLI_OBJ) $(LIBA)
	@echo "  LD      $@"
	@$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $(CLI_OBJ) $(LIBA) $(LIBS)

$(BUILD)/tests/test_%: tests/unit/test_%.c tests/unit/unit.h tests/unit/fx.h $(LIBA)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	@$(CC) $(ALL_CFLAGS) -Itests/unit $(ALL_LDFLAGS) -o $@ $< $(LIBA) $(LIBS)

# A test double of libcuda (tests/fakecuda): copy and bench run end to end without a GPU.
FAKECUDA = $(BUILD)/tests/fakecuda/libcuda.so.1
FAKECUDA_SRC = tests/fakecuda/fakecuda.c tests/fakecuda/kernels.c tests/fakecuda/sched.c
$(FAKECUDA): $(FAKECUDA_SRC) tests/fakecuda/fakecuda.h libcore/cuda/drv.h libcore/include/gpup2p/smcopy.h
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	@$(CC) -std=c11 -D_GNU_SOURCE -Ilibcore -Ilibcore/include $(CPPFLAGS) $(WARN) $(CFLAGS) -fPIC -shared -fvisibility=hidden \
		$(LDFLAGS) -o $@ $(FAKECUDA_SRC)
# ... and one whose driver exports dma-bufs (doctor's driver.version probe, tests/unit/test_doctor.c).
FAKECUDA_DMABUF = $(BUILD)/tests/fakecuda-dmabuf/libcuda.so.1
$(FAKECUDA_DMABUF): $(FAKECUDA_SRC) tests/fakecuda/fakecuda.h libcore/cuda/drv.h libcore/include/gpup2p/smcopy.h
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	@$(CC) -std=c11 -D_GNU_SOURCE -DFAKECUDA_DMABUF -Ilibcore -Ilibcore/include $(CPPFLAGS) $(WARN) $(CFLAGS) -fPIC -shared \
		-fvisibility=hidden $(LDFLAGS) -o $@ $(FAKECUDA_SRC)

-include tests/fuzz/fuzz.mk

# A test double of the NVML calls gpu_nvml.c and gpu_state.c make (tests/fakenvml), for the unit tests.
FAKENVML = $(BUILD)/tests/fakenvml/libnvidia-ml.so.1
$(FAKENVML): tests/fakenvml/fakenvml.c tests/fakenvml/profile.c tests/fakenvml/fakenvml.h
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	@$(CC) -std=c11 -D_GNU_SOURCE $(CPPFLAGS) $(WARN) $(CFLAGS) -Wno-missing-prototypes -fPIC -shared \
		-fvisibility=hidden -pthread -Wl,-soname,libnvidia-ml.so.1 $(LDFLAGS) -o $@ $(filter %.c,$^)

# A test double of libibverbs and librdmacm (tests/fakeverbs), with and without ibv_reg_dmabuf_mr, for
# test_doctor.c and bench rdma (QPs connected in-process: loopback, and client/server in two threads).
FAKEVERBS = $(BUILD)/tests/fakeverbs/libibverbs.so.1 $(BUILD)/tests/fakeverbs-old/libibverbs.so.1
$(FAKEVERBS): tests/fakeverbs/fakeverbs.c tests/fakeverbs/fakedev.c tests/fakeverbs/fakeport.c \
		tests/fakeverbs/fakecm.c tests/fakeverbs/fakeverbs.h tests/fakeverbs/fakeverbs.map libcore/rdma/verbs_abi.h
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	@$(CC) -std=c11 -D_GNU_SOURCE -Ilibcore $(CPPFLAGS) $(WARN) $(CFLAGS) $(if $(findstring -old,$@),-DFAKEVERBS_OLD) \
		-fPIC -shared -fvisibility=hidden -pthread -Wl,--version-script=tests/fakeverbs/fakeverbs.map $(LDFLAGS) \
		-o $@ $(filter %.c,$^)

# Fixture trees are generated from tests/fixtures/specs/*.spec.
fixtures:
	@mkdir -p $(BUILD)/fixtures
	@for s in tests/fixtures/specs/*.spec; do \
		n=$$(basename $$s .spec); \
		python3 tests/fixtures/gen.py $$s $(BUILD)/fixtures/$$n || exit 1; \
	done
	@for s in tests/fixtures/doctor/*.spec; do \
		python3 tests/fixtures/gen.py $$s $(BUILD)/fixtures/doctor/$$(basename $$s .spec) || exit 1; \
	done
	@# real captures: snapshots of real machines, NVIDIA's own views beside them (README.md there)
	@for c in tests/fixtures/h200x4-hgx; do \
		rm -rf $(BUILD)/fixtures/$$(basename $$c) && mkdir -p $(BUILD)/fixtures/$$(basename $$c) && \
		tar -C $(BUILD)/fixtures/$$(basename $$c) -xzf $$c/snapshot.tar.gz && \
		cp -r $$c/vendor $(BUILD)/fixtures/$$(basename $$c)/ || exit 1; \
	done

# `make check` and `make run` install what is missing first (Debian 12), then build.
check:
	@bash tests/deps.sh
	@$(MAKE) --no-print-directory check-only

check-only: $(BIN) $(UNIT_BIN) $(FAKECUDA) $(FAKECUDA_DMABUF) $(FAKENVML) $(FAKEVERBS) $(FUZZ_BIN) fixtures
	@BUILD=$(BUILD) bash tests/run.sh

# The Debian packages (debian/): build both, lintian, install in a throwaway root, DKMS build (tests/pkg).
check-pkg:
	@bash tests/deps.sh pkg
	@BUILD=$(BUILD) bash tests/run.sh tests/pkg/test_deb.sh

# gpup2p.ko cross-built for arm64 against Debian's arm64 kernel headers, warnings as errors
# (tests/pkg/test_kmod_arm64.sh; the headers are fetched into $(BUILD)/kmod-arm64, not installed).
check-kmod-arm64:
	@bash tests/deps.sh kmod-arm64
	@BUILD=$(BUILD) bash tests/run.sh tests/pkg/test_kmod_arm64.sh

# The fleet glue with the real programs from Debian (tests/fleet): slurmctld/slurmd/munge in a private
# namespace draining and resuming a node, srun --label into report, node_exporter and promtool,
# nagios4 -v and the plugin, the timer's and cron's command lines. Needs root; about a minute. The
# fixtures `make check` generated are reused (generating them takes minutes on a loaded machine).
check-fleet: $(BIN) $(FAKECUDA)
	@bash tests/deps.sh fleet
	@[ -d $(BUILD)/fixtures/doctor/bar-small ] || $(MAKE) --no-print-directory fixtures
	@BUILD=$(BUILD) bash tests/run.sh tests/fleet/test_*.sh

# The unit tests and the fuzz regression cases (fuzz.py's and the in-process targets') under ASan, LeakSanitizer
# and UBSan, built in the
# sanitizer build dir of `make fuzz` ($(BUILD)/fuzz, tests/fuzz/fuzz.mk): any report fails (tests/asan.sh).
check-asan: $(FUZZ_BIN) $(FZ_REPLAY) $(FAKECUDA) $(FAKECUDA_DMABUF) $(FAKENVML) $(FAKEVERBS) fixtures
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/fuzz CFLAGS="$(FUZZ_SAN)" $(patsubst $(BUILD)/%,$(BUILD)/fuzz/%,$(UNIT_BIN))
	@BUILD=$(BUILD) bash tests/asan.sh

# The QEMU guest harness (tests/vm): Debian's kernel under software emulation, topo/bar/acs against
# a real kernel's sysfs and config space, soft-RoCE (rdma_rxe) in one guest and in two joined by a
# link. Installs qemu and fetches the kernel on first use.
check-vm: $(BIN) $(FAKECUDA) $(FAKECUDA_DMABUF)
	@BUILD=$(BUILD) bash tests/vm/check.sh

# gpup2p.ko for the running kernel (or KVER=/KDIR=); NVIDIA_SRC_DIR= to use the driver's nv-p2p.h
kmod:
	$(MAKE) -C kmod

run:
	@bash tests/deps.sh
	@$(MAKE) --no-print-directory all
	@rc=0; $(BIN) doctor || rc=$$?; \
	if [ $$rc -eq 69 ]; then \
		echo "== No NVIDIA GPU on this machine. An example instead: doctor on the bundled snapshot of a 2x H200 server"; \
		echo "== (tests/fixtures/h200x2-live, --root: live-only checks are skipped)"; \
		d=$$(mktemp -d) && tar -C $$d -xzf tests/fixtures/h200x2-live/h200-live.tar.gz && \
		{ $(BIN) --root $$d/h200-live doctor; rc=$$?; rm -rf $$d; }; \
	fi; [ $$rc -le 2 ]


deps:
	@bash tests/deps.sh

# VERSION is the one source of the version: this copies it into the files that must state it literally
# (man pages, the module, dkms.conf) and adds a debian/changelog entry for it; tests/cli/test_version.sh
# fails while they differ.
version-sync:
	sed -i 's/^\(\.TH .* "gpup2p \)[^"]*"/\1$(VERSION)"/' man/*.1
	sed -i 's/^MODULE_VERSION("[^"]*");/MODULE_VERSION("$(VERSION)");/' kmod/main.c
	sed -i 's/^PACKAGE_VERSION="[^"]*"/PACKAGE_VERSION="$(VERSION)"/' kmod/dkms.conf
	head -1 debian/changelog | grep -q '^gpup2p ($(VERSION)) ' || { \
		printf 'gpup2p (%s) unstable; urgency=medium\n\n  * New upstream version %s.\n\n -- %s  %s\n\n' \
		'$(VERSION)' '$(VERSION)' "$$(sed -n 's/^ -- \(.*>\)  .*/\1/p' debian/changelog | head -1)" \
		"$$(date -R)" | cat - debian/changelog >debian/changelog.new && mv debian/changelog.new debian/changelog; }

install: $(BIN)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR) $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR)
	install -m 0755 $(BIN) $(DESTDIR)$(BINDIR)/gpup2p
	install -m 0644 man/*.1 $(DESTDIR)$(MANDIR)/
	install -m 0644 completions/gpup2p.bash $(DESTDIR)$(BASHCOMPDIR)/gpup2p
	install -m 0644 completions/_gpup2p $(DESTDIR)$(ZSHCOMPDIR)/_gpup2p
	install -d $(DESTDIR)$(SYSTEMDDIR)
	sed 's|@BINDIR@|$(BINDIR)|g' systemd/gpup2p-acs.service.in >$(DESTDIR)$(SYSTEMDDIR)/gpup2p-acs.service
	chmod 0644 $(DESTDIR)$(SYSTEMDDIR)/gpup2p-acs.service
	sed 's|@BINDIR@|$(BINDIR)|g' systemd/gpup2p-textfile.service.in >$(DESTDIR)$(SYSTEMDDIR)/gpup2p-textfile.service
	chmod 0644 $(DESTDIR)$(SYSTEMDDIR)/gpup2p-textfile.service
	install -m 0644 systemd/gpup2p-textfile.timer $(DESTDIR)$(SYSTEMDDIR)/
	install -d $(addprefix $(DESTDIR)$(CONTRIBDIR)/,slurm nhc npd prometheus cron expect)
	install -m 0755 contrib/slurm/gpup2p-healthcheck $(DESTDIR)$(CONTRIBDIR)/slurm/
	install -m 0644 contrib/slurm/README.md contrib/slurm/gpup2p.default $(DESTDIR)$(CONTRIBDIR)/slurm/
	install -m 0644 contrib/nhc/gpup2p.nhc $(DESTDIR)$(CONTRIBDIR)/nhc/
	install -m 0755 contrib/npd/gpup2p-doctor-npd $(DESTDIR)$(CONTRIBDIR)/npd/
	install -m 0644 contrib/npd/gpup2p-doctor.json $(DESTDIR)$(CONTRIBDIR)/npd/
	install -m 0644 contrib/prometheus/*.yml $(DESTDIR)$(CONTRIBDIR)/prometheus/
	install -m 0644 contrib/expect/*.expect $(DESTDIR)$(CONTRIBDIR)/expect/
	sed 's|/usr/local/bin/gpup2p|$(BINDIR)/gpup2p|g' contrib/cron/gpup2p >$(DESTDIR)$(CONTRIBDIR)/cron/gpup2p
	chmod 0644 $(DESTDIR)$(CONTRIBDIR)/cron/gpup2p
	install -d $(DESTDIR)$(UDEVDIR)
	install -m 0644 udev/60-gpup2p.rules $(DESTDIR)$(UDEVDIR)/60-gpup2p.rules

# gpup2p.ko's source where DKMS looks for it (then: dkms install gpup2p/$(VERSION)); debian/rules uses it.
DKMSDIR ?= /usr/src/gpup2p-$(VERSION)
install-dkms:
	install -d $(DESTDIR)$(DKMSDIR)/uapi
	install -m 0644 kmod/Kbuild kmod/Makefile kmod/dkms.conf kmod/*.c kmod/*.h $(DESTDIR)$(DKMSDIR)/
	install -m 0644 kmod/uapi/*.h $(DESTDIR)$(DKMSDIR)/uapi/

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/gpup2p $(DESTDIR)$(BASHCOMPDIR)/gpup2p $(DESTDIR)$(ZSHCOMPDIR)/_gpup2p
	rm -f $(DESTDIR)$(SYSTEMDDIR)/gpup2p-acs.service $(DESTDIR)$(UDEVDIR)/60-gpup2p.rules
	rm -f $(DESTDIR)$(SYSTEMDDIR)/gpup2p-textfile.service $(DESTDIR)$(SYSTEMDDIR)/gpup2p-textfile.timer
	rm -rf $(DESTDIR)$(CONTRIBDIR)
	rm -f $(patsubst man/%,$(DESTDIR)$(MANDIR)/%,$(wildcard man/*.1))

clean:
	rm -rf $(BUILD)
