/* kmod_test's helpers: the stub's allocations, pin/unpin/info ioctls, faulting reads and writes, the
 * ivshmem BAR's address and the kernel's write-combining ranges. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../kmod/uapi/gpup2p_ioctl.h"
#include "nvp2p_stub/nvp2p_stub.h"

#include "kmod_test.h"

int failed;

int stub;
FILE *expect_f;

uint8_t pat(uint64_t seed, uint64_t i)
{
	uint64_t x = (i + 1) * 0x9e3779b97f4a7c15ULL ^ seed;

	x ^= x >> 29;
	return (uint8_t)(x * 0xbf58476d1ce4e5b9ULL >> 56);
}

struct nvp2p_stub_alloc alloc_fake(uint64_t len, uint32_t flags)
{
	struct nvp2p_stub_alloc a = { .len = len, .flags = flags };

	if (ioctl(stub, NVP2P_STUB_ALLOC, &a))
		a.va = 0;
	return a;
}

int pin(int fd, uint64_t va, uint64_t len, uint32_t flags, uint64_t *h)
{
	struct gpup2p_pin p = { .size = sizeof(p), .flags = flags, .va = va, .len = len };
	int rc = ioctl(fd, GPUP2P_IOC_PIN, &p);

	*h = p.handle;
	return rc ? -errno : 0;
}

int unpin(int fd, uint64_t h)
{
	struct gpup2p_unpin u = { .size = sizeof(u), .handle = h };

	return ioctl(fd, GPUP2P_IOC_UNPIN, &u) ? -errno : 0;
}

int info(int fd, uint64_t h, struct gpup2p_info *i)
{
	memset(i, 0, sizeof(*i));
	i->size = sizeof(*i);
	i->handle = h;
	return ioctl(fd, GPUP2P_IOC_INFO, i) ? -errno : 0;
}

long counter(const char *name)
{
	char path[128], buf[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/misc/gpup2p/%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return atol(buf);
}

static sigjmp_buf jb;
void on_bus(int sig)
{
	siglongjmp(jb, sig);
}

/* Read one byte at p; the signal number if the read faulted, else 0. */
int touch(volatile uint8_t *p, uint8_t *out)
{
	int sig = sigsetjmp(jb, 1);

	if (sig)
		return sig;
	*out = *p;
	return 0;
}

/* Write v at p; the signal number if the write faulted, else 0. */
int poke(volatile uint8_t *p, uint8_t v)
{
	int sig = sigsetjmp(jb, 1);

	if (sig)
		return sig;
	*p = v;
	return 0;
}

/* How many 4 KiB pages of [m, m + len) can be read (no SIGBUS), and how many of those read what
 * pat(seed) wrote there (the old contents of freed GPU memory). */
int readable_pages(uint8_t *m, uint64_t len, uint64_t seed, int *stale)
{
	int n = 0;
	uint8_t b;

	*stale = 0;
	for (uint64_t o = 0; o < len; o += 4096)
		if (touch(m + o + 7, &b) == 0) {
			n++;
			*stale += b == pat(seed, o + 7);
		}
	return n;
}

char bar2_dir[300];

uint64_t bar2_start(void)
{
	DIR *d = opendir("/sys/bus/pci/devices");
	struct dirent *e;
	uint64_t start = 0;

	while (d && !start && (e = readdir(d))) {
		char path[300], line[128];
		unsigned int ven = 0, dev = 0;
		FILE *f;

		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/vendor", e->d_name);
		if ((f = fopen(path, "r"))) {
			if (fscanf(f, "%x", &ven) != 1)
				ven = 0;
			fclose(f);
		}
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/device", e->d_name);
		if ((f = fopen(path, "r"))) {
			if (fscanf(f, "%x", &dev) != 1)
				dev = 0;
			fclose(f);
		}
		if (ven != 0x1af4 || dev != 0x1110)
			continue;
		snprintf(bar2_dir, sizeof(bar2_dir), "/sys/bus/pci/devices/%s", e->d_name);
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource", e->d_name);
		if ((f = fopen(path, "r"))) {
			for (int i = 0; i < 3 && fgets(line, sizeof(line), f); i++)
				if (i == 2)
					start = strtoull(line, NULL, 16);
			fclose(f);
		}
	}
	if (d)
		closedir(d);
	return start;
}

long memtype_pages(uint64_t phys, uint64_t len, const char *want)
{
	const char *list = "/sys/kernel/debug/x86/pat_memtype_list";
	uint64_t s[256], e[256];
	char line[256], type[64];
	int n = 0;
	long pages = 0;
	FILE *f = fopen(list, "r");

	if (!f && mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL) == 0)
		f = fopen(list, "r");
	if (!f)
		return -1;
	while (n < 256 && fgets(line, sizeof(line), f)) {
		unsigned long long a, b;

		if ((sscanf(line, "PAT: [mem 0x%llx-0x%llx] %63s", &a, &b, type) == 3 ||
		     sscanf(line, "%63s @ 0x%llx-0x%llx", type, &a, &b) == 3) &&
		    !strcmp(type, want)) {
			s[n] = a;
			e[n++] = b;
		}
	}
	fclose(f);
	for (uint64_t p = phys; p < phys + len; p += 4096)
		for (int i = 0; i < n; i++)
			if (p >= s[i] && p + 4096 <= e[i]) {
				pages++;
				break;
			}
	return pages;
}

struct nvp2p_stub_stats stub_stats(void)
{
	struct nvp2p_stub_stats st;

	memset(&st, 0xff, sizeof(st));
	ioctl(stub, NVP2P_STUB_STATS, &st);
	return st;
}

