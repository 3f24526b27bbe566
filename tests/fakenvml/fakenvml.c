/* A test double of the NVML entry points libcore/gpu_state.c reads (tests only, never installed). Two
 * devices, by handle: (void *)1 answers every call, each with a value of its own (so that an answer
 * read from the wrong variable shows), its counters rising between two reads; (void *)2 supports
 * nothing (NVML_ERROR_NOT_SUPPORTED) except persistence mode, which fails (NVML_ERROR_UNKNOWN).
 * nvmlDeviceGetRetiredPagesPendingStatus is not exported: the library of a driver that lacks it.
 * P2P status (libcore/gpu_p2p.c, through GPUP2P_LIBNVML): a handle for any PCI bus id; every pair
 * answers FAKENVML_P2P (default 0, OK) for read, write and atomics, FAKENVML_P2P_NVLINK (default 5,
 * not supported) for NVLink.
 * Knob (environment): FAKENVML_BAR1_USED_MIB=N: MiB of device 1's 256 MiB BAR1 in use (default 3). */
#include <stdint.h>
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
	*v = n += 2;
	return OK;
}

/* Links 0-11 up, 12-15 down, none beyond 15. */
EXPORT int nvmlDeviceGetNvLinkState(void *dev, unsigned link, int *active)
{
	if (!full(dev))
		return NOT_SUPPORTED;
	if (link > 15)
		return INVALID_ARGUMENT;
	*active = link < 12;
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
