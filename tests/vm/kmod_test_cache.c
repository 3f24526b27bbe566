/* kmod_test: the cache mode a pin reports (GPUP2P_IOC_INFO) against what the kernel says its pages
 * got: the PAT memtype list for BAR pages, /proc/kpageflags for RAM pages (x86 guests). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kmod_test.h"

static const char *mode_name(uint32_t t)
{
	return t == GPUP2P_MAP_WC ? "write-combined" : t == GPUP2P_MAP_UC ? "uncached" :
	       t == GPUP2P_MAP_WB ? "cached" : "unknown";
}

/* 1 when the kernel keeps a PAT memtype list (PAT is on), else 0. */
static int pat_on(void)
{
	return memtype_pages(0, 0, "") >= 0;
}

/* What the kernel gave BAR pages [phys, +len): GPUP2P_MAP_WC or _UC, one type for all; else 0. */
static uint32_t bar_truth(uint64_t phys, uint64_t len)
{
	long n = (long)(len / 4096), wc, uc;

	if (!pat_on())
		return GPUP2P_MAP_UC; /* without PAT, write-combining is UC- in the page table */
	wc = memtype_pages(phys, len, "write-combining");
	uc = memtype_pages(phys, len, "uncached-minus");
	return wc == n && uc == 0 ? GPUP2P_MAP_WC : uc == n && wc == 0 ? GPUP2P_MAP_UC : 0;
}

/* What PAT keeps for RAM pages [phys, +len) in their page flags, read from /proc/kpageflags:
 * KPF_ARCH (38, PG_arch_1) alone is WC, KPF_UNCACHED (39) alone UC-, neither WB (both: WT).
 * GPUP2P_MAP_WB, _WC or _UC when every page has that type; else 0. */
static uint32_t ram_truth(uint64_t phys, uint64_t len)
{
	static const uint32_t types[4] = { GPUP2P_MAP_WB, GPUP2P_MAP_WC, GPUP2P_MAP_UC, 0 };
	int f = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	uint32_t t = 0;

	for (uint64_t p = phys; f >= 0 && p < phys + len; p += 4096) {
		uint64_t fl;

		if (pread(f, &fl, sizeof(fl), (off_t)(p / 4096 * sizeof(fl))) != sizeof(fl) ||
		    (p != phys && types[fl >> 38 & 3] != t)) {
			t = 0;
			break;
		}
		t = types[fl >> 38 & 3];
	}
	if (f >= 0)
		close(f);
	return t;
}

/* Pin len bytes of a, compare the reported mode with the kernel's (it must be want), write and read
 * back through a mapping, unpin. */
static void pin_compare(int fd, struct nvp2p_stub_alloc a, uint64_t len, int ram, uint32_t want,
			const char *what)
{
	struct gpup2p_info in = { 0 };
	uint64_t h;
	uint32_t truth;
	uint8_t *m;
	int rc = a.va ? pin(fd, a.va, len, 0, &h) : -ENOMEM, bad = 0;

	CHECK(rc == 0 && info(fd, h, &in) == 0, "%s: pinned (%d)", what, rc);
	if (rc)
		return;
	truth = ram ? ram_truth(a.bar_off, len) : bar_truth(bar2_start() + a.bar_off, len);
	CHECK(in.map_type == truth && truth == want, "%s: reports %s; the kernel gave its pages %s (%s expected)",
	      what, mode_name(in.map_type), mode_name(truth), mode_name(want));
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)in.mmap_offset);
	if (m != MAP_FAILED) {
		for (uint64_t i = 0; i < len; i++)
			m[i] = pat(7, i);
		for (uint64_t i = 1; i < len; i += 2) /* odd addresses: unaligned-safe on every mode */
			bad += m[i] != pat(7, i);
		munmap(m, len);
	}
	CHECK(m != MAP_FAILED && !bad, "%s: written and read back through a mapping", what);
	unpin(fd, h);
}

uint32_t bar_mode_with(const char *file)
{
	char path[400];
	uint64_t start = bar2_start();
	int f;
	void *m;
	uint32_t t = 0;

	snprintf(path, sizeof(path), "%s/%s", bar2_dir, file);
	f = open(path, O_RDWR | O_CLOEXEC);
	m = f < 0 ? MAP_FAILED : mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
	if (m != MAP_FAILED) {
		t = bar_truth(start, 1 << 20);
		munmap(m, 1 << 20);
	}
	if (f >= 0)
		close(f);
	return t;
}

void cache_tests(int fd)
{
	const uint64_t len = 256 << 10;
	uint32_t bar_wc = pat_on() ? GPUP2P_MAP_WC : GPUP2P_MAP_UC;
	char path[400];
	long pins = counter("pins");
	int f;
	void *m;

	CHECK(pins == 0 && bar2_start(), "cache modes: no pin outstanding, BAR2 at 0x%llx; PAT %s",
	      (unsigned long long)bar2_start(), pat_on() ? "on (memtype list)" : "off (no memtype list)");
	pin_compare(fd, alloc_fake(len, 0), len, 0, bar_wc, "BAR pages");
	pin_compare(fd, alloc_fake(len, NVP2P_STUB_TABLE_V2), len, 0, bar_wc,
		    "BAR pages, page table 2.0 (driver 580.65.06+, not CPU-cacheable)");
	/* an uncached mapping of the whole BAR first (as fakecuda's of resource2): a WC reservation
	 * made while it exists succeeds but gets UC- */
	snprintf(path, sizeof(path), "%s/resource2", bar2_dir);
	f = open(path, O_RDWR | O_CLOEXEC);
	m = f < 0 ? MAP_FAILED : mmap(NULL, 16 << 20, PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
	CHECK(m != MAP_FAILED && bar_truth(bar2_start(), 16 << 20) == GPUP2P_MAP_UC,
	      "the whole BAR mapped through %s: the kernel holds it uncached", path);
	pin_compare(fd, alloc_fake(len, 0), len, 0, GPUP2P_MAP_UC, "BAR pages under an uncached mapping");
	if (m != MAP_FAILED)
		munmap(m, 16 << 20);
	if (f >= 0)
		close(f);
	pin_compare(fd, alloc_fake(len, 0), len, 0, bar_wc, "BAR pages once that mapping is gone");
	pin_compare(fd, alloc_fake(len, NVP2P_STUB_COHERENT | NVP2P_STUB_TABLE_V2), len, 1, GPUP2P_MAP_WB,
		    "coherent GPU memory (System RAM), page table 2.0 says CPU-cacheable");
	pin_compare(fd, alloc_fake(len, NVP2P_STUB_COHERENT), len, 1, GPUP2P_MAP_WB,
		    "coherent GPU memory (System RAM), page table 1.2 (no flags)");
}
