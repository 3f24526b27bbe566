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
 * FAKENVML_LINKS_UP=N: NVLinks 0 to N-1 up (default 12); FAKENVML_CLK_REASONS=N: device 1's clock event
 * reasons (default 0x48).
 * The calls gpu_nvml.c makes to list the GPUs answer too: FAKENVML_GPUS=N GPUs (default 2), the Ith
 * (from 0) with handle 0x10000 + I (so it supports nothing of the above) at PCI address 0000:BB:00.0,
 * BB = I + 1 (domain:bus = I + 1 past 254), or the Ith of FAKENVML_BUSIDS=ID,ID,... Built with soname
 * libnvidia-ml.so.1: once loaded by path, gpup2p's dlopen("libnvidia-ml.so.1") finds it.
 * A recorded machine (profile.c): FAKENVML_PROBE=nvml_probe.txt replays it.
 * FAKENVML_MARKER=FILE: append "nvmlInit" and "nvmlShutdown" to FILE at each call (the same file as
 * FAKECUDA_MARKER's shows the order of NVML's and CUDA's initialisation). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakenvml.h"

struct fabric { unsigned char uuid[16]; int status; unsigned clique; unsigned char state; };

/* Device 1 answers every call; so does each GPU of a recorded machine (FAKENVML_PROBE). */
static int full(const void *dev) { return dev == (const void *)1 || fake_profile_gpu(dev) >= 0; }

EXPORT int nvmlDeviceGetPersistenceMode(void *dev, int *v)
{
	fake_tick("GetPersistenceMode", dev);
	if (!full(dev))
		return UNKNOWN;
	*v = 1;
	return OK;
}

EXPORT int nvmlDeviceGetMigMode(void *dev, unsigned *cur, unsigned *pend)
{
	fake_tick("GetMigMode", dev);
	*cur = 5; /* never read: MIG is not supported */
	*pend = 5;
	return NOT_SUPPORTED;
}

EXPORT int nvmlDeviceGetVirtualizationMode(void *dev, int *v)
{
	fake_tick("GetVirtualizationMode", dev);
	*v = fake_profile_gpu(dev) >= 0 ? 1 : 2; /* pass-through as recorded; vGPU guest */
	return full(dev) ? OK : NOT_SUPPORTED;
}

EXPORT int nvmlDeviceGetComputeMode(void *dev, int *v)
{
	fake_tick("GetComputeMode", dev);
	*v = fake_profile_gpu(dev) >= 0 ? 0 : 3; /* exclusive process */
	return full(dev) ? OK : NOT_SUPPORTED;
}

EXPORT int nvmlDeviceGetRemappedRows(void *dev, unsigned *corr, unsigned *unc, unsigned *pending, unsigned *failed)
{
	int rec = fake_profile_gpu(dev) >= 0;

	fake_tick("GetRemappedRows", dev);
	*corr = rec ? 0 : 4;
	*unc = rec ? 0 : 1;
	*pending = !rec;
	*failed = 0;
	return full(dev) ? OK : NOT_SUPPORTED;
}

/* Uncorrected volatile ECC errors: 0 on a recorded machine, else FAKENVML_ECC_UNC (default 2);
 * ECC off (FAKENVML_ECC_UNC=off): not supported. */
EXPORT int nvmlDeviceGetTotalEccErrors(void *dev, int type, int counter, unsigned long long *v)
{
	const char *e = getenv("FAKENVML_ECC_UNC");

	fake_tick("GetTotalEccErrors", dev);
	if (type != 1 || counter != 0)
		return INVALID_ARGUMENT;
	*v = fake_profile_gpu(dev) >= 0 ? 0 : e ? strtoull(e, NULL, 10) : 2;
	return full(dev) && !(e && !strcmp(e, "off")) ? OK : NOT_SUPPORTED;
}

/* Clock event reasons: a recorded machine's GPUs answer 0x1 (idle alone), as nvidia-smi -q showed on
 * tests/fixtures/h200x4-hgx (vendor/q.txt: "Idle: Active", every other reason "Not Active"); device 1
 * FAKENVML_CLK_REASONS (a number, 0x for hex), by default 0x48 (HW slowdown and HW thermal slowdown). */
EXPORT int nvmlDeviceGetCurrentClocksEventReasons(void *dev, unsigned long long *v)
{
	const char *e = getenv("FAKENVML_CLK_REASONS");

	fake_tick("GetCurrentClocksEventReasons", dev);
	if (!full(dev))
		return NOT_SUPPORTED;
	*v = fake_profile_gpu(dev) >= 0 ? 0x1 : e ? strtoull(e, NULL, 0) : 0x48;
	return OK;
}

/* 7 on the first read, 9 on the second, ... */
EXPORT int nvmlDeviceGetPcieReplayCounter(void *dev, unsigned *v)
{
	static unsigned n = 5;

	fake_tick("GetPcieReplayCounter", dev);
	if (!full(dev))
		return NOT_SUPPORTED;
	if (getenv("FAKENVML_REPLAY_FAIL"))
		return UNKNOWN;
	if (fake_profile_gpu(dev) >= 0) {
		*v = 0; /* as recorded: no PCIe replay */
		return OK;
	}
	*v = n += 2;
	return OK;
}

/* Links 0-11 up (FAKENVML_LINKS_UP=N: 0 to N-1), the rest of 0-15 down, none beyond 15; a recorded
 * machine's GPUs: its 18 links up. */
EXPORT int nvmlDeviceGetNvLinkState(void *dev, unsigned link, int *active)
{
	const char *up = getenv("FAKENVML_LINKS_UP");

	fake_tick("GetNvLinkState", dev);
	if (!full(dev))
		return NOT_SUPPORTED;
	if (fake_profile_gpu(dev) >= 0) {
		if (link >= FAKE_LINKS)
			return INVALID_ARGUMENT;
		*active = 1;
		return OK;
	}
	if (link > 15)
		return INVALID_ARGUMENT;
	*active = link < (up ? (unsigned)atoi(up) : 12u);
	return OK;
}

/* Link 3's replay counter counts the passes over the links (1, then 2); CRC flit counters are not
 * supported; every other counter is 0. A recorded machine's GPUs replay its counters (profile.c). */
EXPORT int nvmlDeviceGetNvLinkErrorCounter(void *dev, unsigned link, int counter, unsigned long long *v)
{
	static unsigned long long pass;

	fake_tick("GetNvLinkErrorCounter", dev);
	if (fake_profile_gpu(dev) >= 0)
		return fake_profile_counter(dev, link, counter, v);
	if (!full(dev) || counter == 2)
		return NOT_SUPPORTED;
	if (link == 0 && counter == 0)
		pass++;
	*v = link == 3 && counter == 0 ? pass : 0;
	return OK;
}

/* nvmlFieldValue_t: field id, scope (the link), timestamp, latency, value type, its return, value. */
struct field {
	unsigned id, scope;
	long long timestamp, latency_us;
	int type, rc;
	unsigned long long value;
};

/* A recorded machine's GPUs answer NVML_FI_DEV_NVLINK_ERROR_DL_REPLAY (161), _RECOVERY (162) and _CRC
 * (163: flit CRC) per link, as their counters (one call, charged once); other fields and GPUs: not
 * supported, so gpup2p asks counter by counter as it did before. */
EXPORT int nvmlDeviceGetFieldValues(void *dev, int n, struct field *f)
{
	fake_tick("GetFieldValues", dev);
	if (fake_profile_gpu(dev) < 0 || n < 0)
		return NOT_SUPPORTED;
	/* the driver is asked once per run of fields of one link (tests/fixtures/h200x2-nvml/nvml_fieldorder.txt:
	 * 54 fields cost 54 runs ordered counter by counter, 18 link by link, ~0.8 ms a run) */
	for (int i = 0; i < n; i++)
		if (i == 0 || f[i].scope != f[i - 1].scope)
			fake_tick("GetFieldValuesRun", dev);
	for (int i = 0; i < n; i++) {
		f[i].type = 3; /* unsigned long long */
		f[i].rc = f[i].id >= 161 && f[i].id <= 163 ?
			fake_profile_counter(dev, f[i].scope, (int)f[i].id - 161, &f[i].value) : NOT_SUPPORTED;
	}
	return OK;
}

EXPORT int nvmlDeviceGetGpuFabricInfo(void *dev, struct fabric *f)
{
	fake_tick("GetGpuFabricInfo", dev);
	memset(f, 0, sizeof(*f));
	if (!full(dev))
		return NOT_SUPPORTED;
	f->state = 3;  /* completed */
	f->status = 0; /* success */
	f->clique = 7;
	return OK;
}

static void marker(const char *what)
{
	const char *path = getenv("FAKENVML_MARKER");
	FILE *f = path && *path ? fopen(path, "a") : NULL;

	if (f) {
		fprintf(f, "%s\n", what);
		fclose(f);
	}
}

EXPORT int nvmlInit_v2(void)
{
	fake_tick("nvmlInit_v2", NULL);
	marker("nvmlInit");
	return OK;
}

EXPORT int nvmlShutdown(void)
{
	marker("nvmlShutdown");
	return OK;
}
EXPORT const char *nvmlErrorString(int r) { return r == OK ? "Success" : "Fake error"; }

/* Handles 16, 17, ...: one per bus id asked for (never 1 or 2, the handles above). */
EXPORT int nvmlDeviceGetHandleByPciBusId_v2(const char *bus, void **dev)
{
	static char seen[64][32];
	const char *full_bus = getenv("FAKENVML_FULL_BUS");
	int rec = fake_profile_bus(bus);

	fake_tick("GetHandleByPciBusId", NULL);
	if (rec >= 0) {
		*dev = (void *)((uintptr_t)rec + FAKE_LIST_HANDLE);
		return OK;
	}
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

	fake_tick("GetP2PStatus", a);
	if (fake_profile_gpu(a) >= 0 && fake_profile_gpu(b) >= 0 && a != b && !s) {
		*status = 0; /* as recorded: OK for every pair (NV18 through NVSwitch) */
		return OK;
	}
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

	fake_tick("GetBAR1MemoryInfo", dev);
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
#define LIST_HANDLE FAKE_LIST_HANDLE

static unsigned ngpus(void)
{
	const char *s = getenv("FAKENVML_GPUS");

	return s ? (unsigned)atoi(s) : fake_profile_gpus() > 0 ? (unsigned)fake_profile_gpus() : 2;
}

EXPORT int nvmlSystemGetDriverVersion(char *v, unsigned n)
{
	snprintf(v, n, "580.0");
	return OK;
}

EXPORT int nvmlDeviceGetCount_v2(unsigned *n)
{
	fake_tick("GetCount", NULL);
	*n = ngpus();
	return OK;
}

EXPORT int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **dev)
{
	if (i >= ngpus())
		return INVALID_ARGUMENT;
	*dev = (void *)((uintptr_t)i + LIST_HANDLE);
	fake_tick("GetHandleByIndex", *dev);
	return OK;
}

EXPORT int nvmlDeviceGetPciInfo_v3(void *dev, struct pci_info *p)
{
	unsigned k = (unsigned)((uintptr_t)dev - LIST_HANDLE) + 1;

	fake_tick("GetPciInfo_v3", dev);
	memset(p, 0, sizeof(*p));
	if (fake_busid(k - 1, p->bus_id, sizeof(p->bus_id)))
		return OK;
	p->domain = k >> 8;
	p->bus = k & 0xff;
	snprintf(p->bus_id, sizeof(p->bus_id), "%08X:%02X:00.0", p->domain, p->bus);
	return OK;
}

EXPORT int nvmlDeviceGetName(void *dev, char *name, unsigned n)
{
	fake_tick("GetName", dev);
	if (fake_profile_gpu(dev) >= 0) {
		snprintf(name, n, "NVIDIA H200");
		return OK;
	}
	snprintf(name, n, "Fake GPU %u", (unsigned)((uintptr_t)dev - LIST_HANDLE));
	return OK;
}

EXPORT int nvmlDeviceGetMemoryInfo(void *dev, struct memory *m)
{
	fake_tick("GetMemoryInfo", dev);
	m->total = 80ULL << 30;
	m->free = m->total;
	m->used = 0;
	return OK;
}

EXPORT int nvmlDeviceGetNvLinkRemotePciInfo_v2(void *dev, unsigned link, struct pci_info *p)
{
	fake_tick("GetNvLinkRemotePciInfo_v2", dev);
	(void)link;
	(void)p;
	return NOT_SUPPORTED;
}

/* A recorded machine's links end at NVSwitches (2); others do not say. */
EXPORT int nvmlDeviceGetNvLinkRemoteDeviceType(void *dev, unsigned link, int *type)
{
	fake_tick("GetNvLinkRemoteDeviceType", dev);
	if (fake_profile_gpu(dev) < 0 || link >= FAKE_LINKS)
		return NOT_SUPPORTED;
	*type = 2;
	return OK;
}

/* Device 1: Ampere (7), so CRC data counts; a recorded machine's GPUs: Hopper (9). */
EXPORT int nvmlDeviceGetArchitecture(void *dev, unsigned *arch)
{
	fake_tick("GetArchitecture", dev);
	if (!full(dev))
		return NOT_SUPPORTED;
	*arch = fake_profile_gpu(dev) >= 0 ? 9 : 7;
	return OK;
}
