/* A test double of the NVML entry points libcore/gpu/state.c reads (tests only, never installed). Two
 * devices, by handle: (void *)1 answers every call, each with a value of its own (so that an answer
 * read from the wrong variable shows), its counters rising between two reads; (void *)2 supports
 * nothing (NVML_ERROR_NOT_SUPPORTED) except persistence mode, which fails (NVML_ERROR_UNKNOWN).
 * nvmlDeviceGetRetiredPagesPendingStatus is not exported: the library of a driver that lacks it.
 * P2P status (libcore/gpu/p2p.c, through GPUP2P_LIBNVML): a handle for any PCI bus id; every pair
 * answers FAKENVML_P2P (default 0, OK) for read, write and atomics, FAKENVML_P2P_NVLINK (default 5,
 * not supported) for NVLink.
 * Knobs (environment): FAKENVML_BAR1_USED_MIB=N: MiB of device 1's 256 MiB BAR1 in use (default 3);
 * FAKENVML_FULL_BUS=BUSID: nvmlDeviceGetHandleByPciBusId_v2 answers device 1 for that bus id (its
 * counters rise on every read); FAKENVML_REPLAY_FAIL=1: the replay counter read fails (NVML_ERROR_UNKNOWN);
 * FAKENVML_LINKS_UP=N: NVLinks 0 to N-1 up (default 12).
 * The calls gpu_nvml.c makes to list the GPUs answer too: FAKENVML_GPUS=N GPUs (default 2), the Ith
 * (from 0) with handle 0x10000 + I (so it supports nothing of the above) at PCI address 0000:BB:00.0,
 * BB = I + 1 (domain:bus = I + 1 past 254). Built with soname libnvidia-ml.so.1: once loaded by path,
 * gpup2p's dlopen("libnvidia-ml.so.1") finds it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))
#define OK 0
#define INVALID_ARGUMENT 2
#define NOT_SUPPORTED 3
#define UNKNOWN 999

struct fabric { unsigned char uuid[16]; int status; unsigned clique; unsigned char state; };

static int full(const void *dev) { return dev == (const void *)1; }

EXPORT int nvmlDeviceGetPersistenceMode(void *dev, int *v)
{
	if (!full(dev))
		return UNKNOWN;
	*v = 1;
	return OK;
}

EXPORT int nvmlDeviceGetMigMode(void *dev, unsigned *cur, unsigned *pend)
{
	(void)dev;
	*cur = 5; /* never read: MIG is not supported */
	*pend = 5;
	return NOT_SUPPORTED;
}

EXPORT int nvmlDeviceGetVirtualizationMode(void *dev, int *v)
{
	*v = 2; /* vGPU guest */
	return full(dev) ? OK : NOT_SUPPORTED;
}

EXPORT int nvmlDeviceGetComputeMode(void *dev, int *v)
{
	*v = 3; /* exclusive process */
	return full(dev) ? OK : NOT_SUPPORTED;
}

EXPORT int nvmlDeviceGetRemappedRows(void *dev, unsigned *corr, unsigned *unc, unsigned *pending, unsigned *failed)
{
	*corr = 4;
	*unc = 1;
	*pending = 1;
	*failed = 0;
	return full(dev) ? OK : NOT_SUPPORTED;
}

/* 7 on the first read, 9 on the second, ... */
EXPORT int nvmlDeviceGetPcieReplayCounter(void *dev, unsigned *v)
{
	static unsigned n = 5;

	if (!full(dev))
		return NOT_SUPPORTED;
	if (getenv("FAKENVML_REPLAY_FAIL"))
		return UNKNOWN;
	*v = n += 2;
	return OK;
}

/* Links 0-11 up (FAKENVML_LINKS_UP=N: 0 to N-1), the rest of 0-15 down, none beyond 15. */
EXPORT int nvmlDeviceGetNvLinkState(void *dev, unsigned link, int *active)
{
	const char *up = getenv("FAKENVML_LINKS_UP");

	if (!full(dev))
		return NOT_SUPPORTED;
	if (link > 15)
		return INVALID_ARGUMENT;
	*active = link < (up ? (unsigned)atoi(up) : 12u);
	return OK;
}

/* Link 3's replay counter counts the passes over the links (1, then 2); CRC flit counters are not
 * supported; every other counter is 0. */
EXPORT int nvmlDeviceGetNvLinkErrorCounter(void *dev, unsigned link, int counter, unsigned long long *v)
{
	static unsigned long long pass;

	if (!full(dev) || counter == 2)
		return NOT_SUPPORTED;
	if (link == 0 && counter == 0)
		pass++;
	*v = link == 3 && counter == 0 ? pass : 0;
	return OK;
}

EXPORT int nvmlDeviceGetGpuFabricInfo(void *dev, struct fabric *f)
{
	memset(f, 0, sizeof(*f));
	if (!full(dev))
		return NOT_SUPPORTED;
	f->state = 3;  /* completed */
	f->status = 0; /* success */
	f->clique = 7;
	return OK;
}

EXPORT int nvmlInit_v2(void) { return OK; }
EXPORT int nvmlShutdown(void) { return OK; }
EXPORT const char *nvmlErrorString(int r) { return r == OK ? "Success" : "Fake error"; }

/* Handles 16, 17, ...: one per bus id asked for (never 1 or 2, the handles above). */
EXPORT int nvmlDeviceGetHandleByPciBusId_v2(const char *bus, void **dev)
{
	static char seen[64][32];
	const char *full_bus = getenv("FAKENVML_FULL_BUS");

	if (full_bus && !strcmp(full_bus, bus)) {
		*dev = (void *)1;
		return OK;
	}
	for (uintptr_t i = 0; i < 64; i++)
		if (!seen[i][0] || !strcmp(seen[i], bus)) {
			strncpy(seen[i], bus, sizeof(seen[i]) - 1);
			*dev = (void *)(16 + i);
			return OK;
		}
	return UNKNOWN;
}

EXPORT int nvmlDeviceGetP2PStatus(void *a, void *b, int cap, int *status)
{
	const char *s = getenv(cap == 2 ? "FAKENVML_P2P_NVLINK" : "FAKENVML_P2P");

	if (a == b || cap < 0 || cap > 4)
		return INVALID_ARGUMENT;
	*status = s ? atoi(s) : cap == 2 ? 5 : 0;
	return OK;
}

struct bar1 { unsigned long long total, free, used; };

EXPORT int nvmlDeviceGetBAR1MemoryInfo(void *dev, struct bar1 *b)
{
	const char *k = getenv("FAKENVML_BAR1_USED_MIB");
	unsigned long long used = (k && *k ? strtoull(k, NULL, 10) : 3) << 20;

	memset(b, 0, sizeof(*b));
	if (!full(dev))
		return NOT_SUPPORTED;
	b->total = 256ULL << 20;
	b->used = used;
	b->free = b->total - used;
	return OK;
}

/* Listing the GPUs (gpu_nvml.c). */
struct pci_info { char bus_id_legacy[16]; unsigned domain, bus, device, pci_device_id, pci_subsystem_id; char bus_id[32]; };
struct memory { unsigned long long total, free, used; };
#define LIST_HANDLE 0x10000

static unsigned ngpus(void)
{
	const char *s = getenv("FAKENVML_GPUS");

	return s ? (unsigned)atoi(s) : 2;
}

EXPORT int nvmlSystemGetDriverVersion(char *v, unsigned n)
{
	snprintf(v, n, "580.0");
	return OK;
}

EXPORT int nvmlDeviceGetCount_v2(unsigned *n)
{
	*n = ngpus();
	return OK;
}

EXPORT int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **dev)
{
	if (i >= ngpus())
		return INVALID_ARGUMENT;
	*dev = (void *)((uintptr_t)i + LIST_HANDLE);
	return OK;
}

EXPORT int nvmlDeviceGetPciInfo_v3(void *dev, struct pci_info *p)
{
	unsigned k = (unsigned)((uintptr_t)dev - LIST_HANDLE) + 1;

	memset(p, 0, sizeof(*p));
	p->domain = k >> 8;
	p->bus = k & 0xff;
	snprintf(p->bus_id, sizeof(p->bus_id), "%08X:%02X:00.0", p->domain, p->bus);
	return OK;
}

EXPORT int nvmlDeviceGetName(void *dev, char *name, unsigned n)
{
	snprintf(name, n, "Fake GPU %u", (unsigned)((uintptr_t)dev - LIST_HANDLE));
	return OK;
}

EXPORT int nvmlDeviceGetMemoryInfo(void *dev, struct memory *m)
{
	(void)dev;
	m->total = 80ULL << 30;
	m->free = m->total;
	m->used = 0;
	return OK;
}

EXPORT int nvmlDeviceGetNvLinkRemotePciInfo_v2(void *dev, unsigned link, struct pci_info *p)
{
	(void)dev;
	(void)link;
	(void)p;
	return NOT_SUPPORTED;
}
