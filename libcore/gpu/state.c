/* gpup2p — a GPU's state and health from NVML (persistence, MIG, virtualization, compute mode, ECC
 * retirement and row remapping, PCIe replays, NVLink state and errors, NVSwitch fabric state, BAR1
 * size and use: the last never recorded), and
 * its recorded form: numeric keys on the GPU's line of the facts file, so that older readers, which
 * skip unknown numeric keys, still load it; "na" is a bit mask of the fields the GPU does not support. Every entry point is looked up on its own: a driver that
 * lacks one leaves that field GP_GPU_NA. The NVML calls are declared from NVML's documented ABI. */
#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "gpup2p/gpu.h"

#define NVML_OK 0
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_FUNCTION_NOT_FOUND 13
#define NVML_LINKS 18            /* NVML_NVLINK_MAX_LINKS */

typedef int nvml_ret;
typedef void *nvml_dev;

struct nvml_bar1 {               /* nvmlBAR1Memory_t */
	unsigned long long total, free, used;
};

struct nvml_fabric {             /* nvmlGpuFabricInfo_t */
	unsigned char cluster_uuid[16];
	nvml_ret status;
	unsigned int clique;
	unsigned char state;
};

/* The recorded keys. Append only: bit k of the "na" mask stands for keys[k]. A retired key (off
 * RETIRED) is read and ignored: nvlink_errors was the sum of every NVLink counter, CRC data included,
 * which rises at idle on Hopper; facts format 2 keeps each counter apart. */
#define RETIRED ((size_t)-1)
static const struct {
	const char *key;
	size_t off;
	int wide;                /* long long */
} keys[] = {
#define K(name, field, wide) { name, offsetof(struct gp_gpu_state, field), wide }
#define R(name) { name, RETIRED, 1 }
	K("persistence", persistence, 0),     K("mig", mig, 0),
	K("virt", virt, 0),                   K("compute", compute, 0),
	K("retired_pending", retired_pending, 0), K("remap_pending", remap_pending, 0),
	K("remap_failed", remap_failed, 0),   K("replay", replay, 1),
	K("replay_rise", replay_rise, 1),     K("nvlink_active", nvl_active, 0),
	K("nvlink_inactive", nvl_inactive, 0), R("nvlink_errors"),
	R("nvlink_errors_rise"),              K("fabric", fabric, 0),
	K("fabric_status", fabric_status, 0), K("arch", arch, 0),
	K("nvlink_replay", nvl_err[GP_NVL_REPLAY], 1),
	K("nvlink_replay_rise", nvl_err_rise[GP_NVL_REPLAY], 1),
	K("nvlink_recovery", nvl_err[GP_NVL_RECOVERY], 1),
	K("nvlink_recovery_rise", nvl_err_rise[GP_NVL_RECOVERY], 1),
	K("nvlink_crc_flit", nvl_err[GP_NVL_CRC_FLIT], 1),
	K("nvlink_crc_flit_rise", nvl_err_rise[GP_NVL_CRC_FLIT], 1),
	K("nvlink_crc_data", nvl_err[GP_NVL_CRC_DATA], 1),
	K("nvlink_crc_data_rise", nvl_err_rise[GP_NVL_CRC_DATA], 1),
	K("numa_id", numa_id, 0),
	K("ecc_unc_volatile", ecc_unc_volatile, 1),
	K("clk_reasons", clk_reasons, 1),
#undef R
#undef K
};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

static long long get(const struct gp_gpu_state *s, size_t k)
{
	const char *p;

	if (keys[k].off == RETIRED)
		return GP_GPU_UNKNOWN;
	p = (const char *)s + keys[k].off;
	return keys[k].wide ? *(const long long *)(const void *)p : *(const int *)(const void *)p;
}

static void put(struct gp_gpu_state *s, size_t k, long long v)
{
	char *p;

	if (keys[k].off == RETIRED)
		return;
	p = (char *)s + keys[k].off;
	if (keys[k].wide)
		*(long long *)(void *)p = v;
	else
		*(int *)(void *)p = (int)v;
}

void gp_gpu_state_init(struct gp_gpu_state *s)
{
	for (size_t k = 0; k < NKEYS; k++)
		put(s, k, GP_GPU_UNKNOWN);
	s->bar1_total = s->bar1_used = GP_GPU_UNKNOWN; /* live only: no key */
}

int gp_gpu_state_key(struct gp_gpu_state *s, const char *key, uint64_t v)
{
	if (!strcmp(key, "na")) { /* the fields this GPU does not support, bit k for keys[k] */
		for (size_t k = 0; k < NKEYS; k++)
			if (v & (1ULL << k))
				put(s, k, GP_GPU_NA);
		return 1;
	}
	for (size_t k = 0; k < NKEYS; k++) {
		if (strcmp(keys[k].key, key))
			continue;
		if (v <= (keys[k].wide ? (uint64_t)INT64_MAX : (uint64_t)INT32_MAX))
			put(s, k, (long long)v);
		return 1;
	}
	return 0;
}

void gp_gpu_state_write(const struct gp_gpu_state *s, FILE *out)
{
	uint64_t na = 0;

	for (size_t k = 0; k < NKEYS; k++) {
		if (get(s, k) >= 0)
			fprintf(out, " %s=%lld", keys[k].key, get(s, k));
		else if (get(s, k) == GP_GPU_NA)
			na |= 1ULL << k;
	}
	if (na)
		fprintf(out, " na=%" PRIu64, na);
}

/* The value of a call's answer: v when it succeeded, GP_GPU_NA when the GPU or driver does not
 * support it, GP_GPU_UNKNOWN on any other failure. Call it with rc saved first: the order in which
 * a function's arguments are evaluated is unspecified, so answer(call(&v), v) may read v too early. */
static long long answer(nvml_ret rc, long long v)
{
	if (rc == NVML_OK)
		return v;
	return rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_FUNCTION_NOT_FOUND ? GP_GPU_NA : GP_GPU_UNKNOWN;
}

int gp_gpu_nvl_counter_counts(int arch, int k)
{
	if (k == GP_NVL_CRC_DATA)
		return arch >= 0 && arch < GP_GPU_ARCH_HOPPER;
	return k >= 0 && k < GP_NVL_COUNTERS;
}

const char *gp_gpu_nvl_counter_name(int k)
{
	static const char *const n[GP_NVL_COUNTERS] = { "replay", "recovery", "CRC flit", "CRC data" };

	return k >= 0 && k < GP_NVL_COUNTERS ? n[k] : "?";
}

/* nvmlFieldValue_t, as NVML documents it: a field id, its scope (here the link), when it was read, how
 * long the read took, the value's type, the field's own return code and the value (8 bytes). */
struct nvml_field {
	unsigned id, scope;
	long long timestamp, latency_us;
	int type;
	nvml_ret rc;
	unsigned long long value;
};

/* The per-link field ids of the counters `nvidia-smi nvlink -e` shows on Hopper onwards
 * (NVML_FI_DEV_NVLINK_ERROR_DL_REPLAY, _RECOVERY, _CRC: the CRC one counts flit CRC errors). */
#define NVML_FI_DL_REPLAY 161
#define NVML_FI_DL_RECOVERY 162
#define NVML_FI_DL_CRC 163
#define NVML_ARCH_HOPPER 9

struct api {
	nvml_ret (*persistence)(nvml_dev, int *);
	nvml_ret (*mig)(nvml_dev, unsigned *, unsigned *);
	nvml_ret (*virt)(nvml_dev, int *);
	nvml_ret (*compute)(nvml_dev, int *);
	nvml_ret (*retired_pending)(nvml_dev, int *);
	nvml_ret (*remapped)(nvml_dev, unsigned *, unsigned *, unsigned *, unsigned *);
	nvml_ret (*replay)(nvml_dev, unsigned *);
	nvml_ret (*link_state)(nvml_dev, unsigned, int *);
	nvml_ret (*link_errors)(nvml_dev, unsigned, int, unsigned long long *);
	nvml_ret (*field_values)(nvml_dev, int, struct nvml_field *);
	nvml_ret (*fabric)(nvml_dev, struct nvml_fabric *);
	nvml_ret (*bar1)(nvml_dev, struct nvml_bar1 *);
	nvml_ret (*arch)(nvml_dev, unsigned *);
	nvml_ret (*numa_id)(nvml_dev, unsigned *);
	nvml_ret (*ecc_total)(nvml_dev, int, int, unsigned long long *);
	nvml_ret (*clk_reasons)(nvml_dev, unsigned long long *);
};

static void load(void *lib, struct api *a)
{
	*(void **)&a->persistence = dlsym(lib, "nvmlDeviceGetPersistenceMode");
	*(void **)&a->mig = dlsym(lib, "nvmlDeviceGetMigMode");
	*(void **)&a->virt = dlsym(lib, "nvmlDeviceGetVirtualizationMode");
	*(void **)&a->compute = dlsym(lib, "nvmlDeviceGetComputeMode");
	*(void **)&a->retired_pending = dlsym(lib, "nvmlDeviceGetRetiredPagesPendingStatus");
	*(void **)&a->remapped = dlsym(lib, "nvmlDeviceGetRemappedRows");
	*(void **)&a->replay = dlsym(lib, "nvmlDeviceGetPcieReplayCounter");
	*(void **)&a->link_state = dlsym(lib, "nvmlDeviceGetNvLinkState");
	*(void **)&a->link_errors = dlsym(lib, "nvmlDeviceGetNvLinkErrorCounter");
	*(void **)&a->field_values = dlsym(lib, "nvmlDeviceGetFieldValues");
	*(void **)&a->fabric = dlsym(lib, "nvmlDeviceGetGpuFabricInfo");
	*(void **)&a->bar1 = dlsym(lib, "nvmlDeviceGetBAR1MemoryInfo");
	*(void **)&a->arch = dlsym(lib, "nvmlDeviceGetArchitecture");
	*(void **)&a->numa_id = dlsym(lib, "nvmlDeviceGetNumaNodeId");
	*(void **)&a->ecc_total = dlsym(lib, "nvmlDeviceGetTotalEccErrors");
	/* R535 renamed the call; the old name stays exported for a while, and is all older drivers have */
	*(void **)&a->clk_reasons = dlsym(lib, "nvmlDeviceGetCurrentClocksEventReasons");
	if (!a->clk_reasons)
		*(void **)&a->clk_reasons = dlsym(lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
}

long long gp_gpu_nvml_clk_reasons(void *lib, void *dev)
{
	struct api a;
	unsigned long long v = 0;
	nvml_ret rc;

	load(lib, &a);
	if (!a.clk_reasons)
		return GP_GPU_NA;
	rc = a.clk_reasons(dev, &v);
	return answer(rc, (long long)(v & 0xffffffffULL));
}

/* BAR1 size and the part mapped now (pinned buffers, P2P and GPUDirect mappings), live only. */
static void read_bar1(const struct api *a, nvml_dev dev, struct gp_gpu_state *s)
{
	struct nvml_bar1 b;
	nvml_ret rc;

	memset(&b, 0, sizeof(b));
	if (!a->bar1) {
		s->bar1_total = s->bar1_used = GP_GPU_NA;
		return;
	}
	rc = a->bar1(dev, &b);
	s->bar1_total = answer(rc, (long long)(b.total & INT64_MAX));
	s->bar1_used = answer(rc, (long long)(b.used & INT64_MAX));
}

static long long read_replay(const struct api *a, nvml_dev dev)
{
	unsigned v = 0;
	nvml_ret rc;

	if (!a->replay)
		return GP_GPU_NA;
	rc = a->replay(dev, &v);
	return answer(rc, v);
}

/* One int-valued query (an enum or a flag): its answer, or GP_GPU_NA when the library lacks it. */
static int read_int(nvml_ret (*fn)(nvml_dev, int *), nvml_dev dev)
{
	int v = 0;
	nvml_ret rc;

	if (!fn)
		return GP_GPU_NA;
	rc = fn(dev, &v);
	return (int)answer(rc, v);
}

/* NVLink states into s (active, inactive); active[l] set for the links that are up. */
static void read_links(const struct api *a, nvml_dev dev, struct gp_gpu_state *s, int *active)
{
	int up = 0, down = 0, any = 0, failed = 0;

	for (unsigned l = 0; l < NVML_LINKS; l++) {
		int st = 0;
		nvml_ret rc = a->link_state ? a->link_state(dev, l, &st) : NVML_ERROR_FUNCTION_NOT_FOUND;

		active[l] = rc == NVML_OK && st == 1;
		if (rc == NVML_OK) {
			any = 1;
			up += st == 1;
			down += st != 1;
		} else if (rc != NVML_ERROR_NOT_SUPPORTED && rc != NVML_ERROR_FUNCTION_NOT_FOUND && rc != 2) {
			failed = 1; /* 2: NVML_ERROR_INVALID_ARGUMENT, a link number beyond the GPU's */
		}
		if (rc == 2)
			break; /* no link beyond the GPU's last: no further call */
	}
	s->nvl_active = any ? up : failed ? GP_GPU_UNKNOWN : GP_GPU_NA;
	s->nvl_inactive = any ? down : s->nvl_active;
}

/* Each counter the architecture counts, summed over the active links (one call per link and counter,
 * ~0.9 ms each on Hopper: nothing else is read); GP_GPU_NA when none can be read, GP_GPU_UNKNOWN
 * when a read failed. Counters the architecture does not count stay GP_GPU_UNKNOWN (not read). */
/* Hopper onwards: every counter that counts there, of every active link, in one nvmlDeviceGetFieldValues
 * call (measured on H100, 18 links: 54 fields in 14-16 ms, against 0.87 ms for each of the 54 calls of
 * nvmlDeviceGetNvLinkErrorCounter). 0, or -1 when the call or any field failed (the caller asks link by
 * link instead). */
static int read_link_fields(const struct api *a, nvml_dev dev, int arch, const int *active, long long *sum)
{
	static const unsigned id[GP_NVL_COUNTERS] = { NVML_FI_DL_REPLAY, NVML_FI_DL_RECOVERY, NVML_FI_DL_CRC, 0 };
	struct nvml_field f[NVML_LINKS * GP_NVL_COUNTERS];
	int n = 0;

	if (!a->field_values || arch < NVML_ARCH_HOPPER)
		return -1;
	memset(f, 0, sizeof(f));
	/* link by link, each link's counters together: NVML then asks the driver once per link (on 2xH200,
	 * 580.159.04: 54 fields in 100-112 ms ordered counter by counter, 15 ms link by link) */
	for (unsigned l = 0; l < NVML_LINKS; l++)
		for (int k = 0; active[l] && k < GP_NVL_COUNTERS; k++)
			if (id[k] && gp_gpu_nvl_counter_counts(arch, k)) {
				f[n].id = id[k];
				f[n++].scope = l;
			}
	if (!n || a->field_values(dev, n, f) != NVML_OK)
		return -1;
	for (int i = 0; i < n; i++)
		if (f[i].rc != NVML_OK)
			return -1;
	for (int k = 0; k < GP_NVL_COUNTERS; k++)
		sum[k] = id[k] && gp_gpu_nvl_counter_counts(arch, k) ? 0 : GP_GPU_UNKNOWN;
	for (int i = 0; i < n; i++)
		for (int k = 0; k < GP_NVL_COUNTERS; k++)
			if (id[k] == f[i].id)
				sum[k] += (long long)(f[i].value & INT64_MAX);
	return 0;
}

static void read_link_errors(const struct api *a, nvml_dev dev, int arch, const int *active, long long *sum)
{
	if (!read_link_fields(a, dev, arch, active, sum))
		return;
	for (int k = 0; k < GP_NVL_COUNTERS; k++) {
		sum[k] = GP_GPU_UNKNOWN;
		if (!gp_gpu_nvl_counter_counts(arch, k))
			continue;
		sum[k] = GP_GPU_NA;
		for (unsigned l = 0; a->link_errors && l < NVML_LINKS; l++) {
			unsigned long long v = 0;
			nvml_ret rc;

			if (!active[l])
				continue;
			rc = a->link_errors(dev, l, k, &v);
			if (rc == NVML_OK)
				sum[k] = (sum[k] < 0 ? 0 : sum[k]) + (long long)(v & INT64_MAX);
			else if (rc != NVML_ERROR_NOT_SUPPORTED && sum[k] == GP_GPU_NA)
				sum[k] = GP_GPU_UNKNOWN;
		}
	}
}

static void read_counters(const struct api *a, nvml_dev dev, struct gp_gpu_state *s, const int *active)
{
	s->replay = read_replay(a, dev);
	s->replay_rise = s->replay >= 0 ? 0 : s->replay;
	for (int k = 0; k < GP_NVL_COUNTERS; k++)
		s->nvl_err[k] = s->nvl_err_rise[k] = s->nvl_active > 0 ? GP_GPU_UNKNOWN : GP_GPU_NA;
	if (s->nvl_active > 0)
		read_link_errors(a, dev, s->arch, active, s->nvl_err);
	for (int k = 0; k < GP_NVL_COUNTERS; k++)
		s->nvl_err_rise[k] = s->nvl_err[k] >= 0 ? 0 : s->nvl_err[k];
}

void gp_gpu_nvml_state(void *lib, void *dev, unsigned flags, struct gp_gpu_state *s)
{
	struct api a;
	struct nvml_fabric fab;
	unsigned cur = 0, pend = 0, corr = 0, unc = 0, rpend = 0, rfail = 0, arch = 0;
	int active[NVML_LINKS];

	gp_gpu_state_init(s);
	load(lib, &a);
	if (a.arch) {
		nvml_ret rc = a.arch(dev, &arch);

		s->arch = (int)answer(rc, arch < 1000 ? arch : 0);
	} else {
		s->arch = GP_GPU_NA;
	}
	if (a.numa_id) { /* not supported: PCIe-attached memory (nvidia-smi topo -m's GPU NUMA ID N/A) */
		unsigned node = 0;
		nvml_ret rc = a.numa_id(dev, &node);

		s->numa_id = (int)answer(rc, node < 1u << 20 ? node : 0);
	} else {
		s->numa_id = GP_GPU_NA;
	}
	read_links(&a, dev, s, active);
	/* The counters first: gp_gpu_nvml_recount reads them again, a rise between is a link erring now. */
	if (flags & GP_GPU_HEALTH)
		read_counters(&a, dev, s, active);
	read_bar1(&a, dev, s);
	s->persistence = read_int(a.persistence, dev);
	s->virt = read_int(a.virt, dev);
	s->compute = read_int(a.compute, dev);
	s->retired_pending = read_int(a.retired_pending, dev);
	if (a.ecc_total) { /* NVML_MEMORY_ERROR_TYPE_UNCORRECTED (1), NVML_VOLATILE_ECC (0) */
		unsigned long long ecc = 0;
		nvml_ret rc = a.ecc_total(dev, 1, 0, &ecc);

		s->ecc_unc_volatile = answer(rc, (long long)(ecc & INT64_MAX));
	} else {
		s->ecc_unc_volatile = GP_GPU_NA;
	}
	s->clk_reasons = gp_gpu_nvml_clk_reasons(lib, dev);
	if (a.mig) {
		nvml_ret rc = a.mig(dev, &cur, &pend);

		s->mig = (int)answer(rc, cur);
	} else {
		s->mig = GP_GPU_NA;
	}
	if (a.remapped) {
		nvml_ret rc = a.remapped(dev, &corr, &unc, &rpend, &rfail);

		s->remap_pending = (int)answer(rc, rpend != 0);
		s->remap_failed = (int)answer(rc, rfail != 0);
	} else {
		s->remap_pending = s->remap_failed = GP_GPU_NA;
	}
	memset(&fab, 0, sizeof(fab));
	if (a.fabric) {
		nvml_ret rc = a.fabric(dev, &fab);

		s->fabric = (int)answer(rc, fab.state);
		s->fabric_status = rc == NVML_OK && fab.state == 3 ? (fab.status >= 0 ? fab.status : GP_GPU_UNKNOWN)
								   : GP_GPU_NA;
	} else {
		s->fabric = s->fabric_status = GP_GPU_NA;
	}
}

/* A counter read again: *v the new value, *rise its rise since the first read (first = *v - *rise).
 * A failed second read keeps what the first said. */
static void recount(long long now, long long *v, long long *rise)
{
	long long first = *v - *rise;

	if (*v < 0 || now < 0)
		return;
	*rise = now > first ? now - first : 0;
	*v = now;
}

void gp_gpu_nvml_recount(void *lib, void *dev, struct gp_gpu_state *s, int from_zero)
{
	struct api a;
	struct gp_gpu_state links;
	long long now[GP_NVL_COUNTERS];
	int active[NVML_LINKS], any = 0;

	load(lib, &a);
	recount(read_replay(&a, dev), &s->replay, &s->replay_rise);
	for (int k = 0; k < GP_NVL_COUNTERS; k++)
		any |= from_zero ? s->nvl_err[k] >= 0 : s->nvl_err[k] > 0; /* from 0: 0 -> N is a rise */
	if (!any)
		return;
	read_links(&a, dev, &links, active);
	/* the same links as the first read, or no rise: a link that came up brings its lifetime count,
	 * one that went down takes its count away */
	if (links.nvl_active != s->nvl_active)
		return;
	read_link_errors(&a, dev, s->arch, active, now);
	for (int k = 0; k < GP_NVL_COUNTERS; k++)
		recount(now[k], &s->nvl_err[k], &s->nvl_err_rise[k]);
}
