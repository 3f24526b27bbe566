/* gpup2p — GPU facts from libnvidia-ml.so.1, loaded at run time.
 *
 * The few NVML entry points used are declared here from NVML's documented ABI
 * so that building needs no NVML header and running needs no NVML at all. This file only asks
 * NVML; gpu.c turns the answers into facts (it calls nothing in gpu.c). */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "gpup2p/clock.h"
#include "gpup2p/gpu.h"

typedef int nvml_ret;
typedef struct nvml_device *nvml_dev;

struct nvml_pci_info {           /* nvmlPciInfo_t (v3 layout) */
	char bus_id_legacy[16];
	unsigned int domain, bus, device, pci_device_id, pci_subsystem_id;
	char bus_id[32];
};

struct nvml_memory {             /* nvmlMemory_t (v1) */
	unsigned long long total, free, used;
};

#define NVML_OK 0
#define NVML_NVLINK_LINKS 18     /* NVML_NVLINK_MAX_LINKS in current drivers */
#define NVML_LINK_INACTIVE 0     /* nvmlEnableState_t of a link; 2 is NVML_NVLINK_STATE_SLEEP */
#define NVML_LINK_ACTIVE 1
#define NVML_NVLINK_CAP_P2P 0    /* NVML_NVLINK_CAP_P2P_SUPPORTED */

struct nvml_api {
	void *lib;
	nvml_ret (*init)(void);
	nvml_ret (*shutdown)(void);
	const char *(*error_string)(nvml_ret);
	nvml_ret (*driver_version)(char *, unsigned);
	nvml_ret (*count)(unsigned *);
	nvml_ret (*handle)(unsigned, nvml_dev *);
	nvml_ret (*pci)(nvml_dev, struct nvml_pci_info *);
	nvml_ret (*name)(nvml_dev, char *, unsigned);
	nvml_ret (*memory)(nvml_dev, struct nvml_memory *);
	nvml_ret (*link_state)(nvml_dev, unsigned, int *);
	nvml_ret (*link_remote_pci)(nvml_dev, unsigned, struct nvml_pci_info *);
	nvml_ret (*link_remote_type)(nvml_dev, unsigned, int *);
	nvml_ret (*link_cap)(nvml_dev, unsigned, int, unsigned *);
	nvml_ret (*handle_bus)(const char *, nvml_dev *);
};

static void *sym(void *lib, const char *name, int *missing)
{
	void *p = dlsym(lib, name);

	if (!p)
		*missing = 1;
	return p;
}

static int nvml_open(struct nvml_api *a, char *why, size_t n)
{
	int missing = 0;

	memset(a, 0, sizeof(*a));
	a->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!a->lib) {
		snprintf(why, n, "libnvidia-ml.so.1 not found (NVIDIA driver not installed)");
		return -1;
	}
	*(void **)&a->init = sym(a->lib, "nvmlInit_v2", &missing);
	*(void **)&a->shutdown = sym(a->lib, "nvmlShutdown", &missing);
	*(void **)&a->error_string = sym(a->lib, "nvmlErrorString", &missing);
	*(void **)&a->driver_version = sym(a->lib, "nvmlSystemGetDriverVersion", &missing);
	*(void **)&a->count = sym(a->lib, "nvmlDeviceGetCount_v2", &missing);
	*(void **)&a->handle = sym(a->lib, "nvmlDeviceGetHandleByIndex_v2", &missing);
	*(void **)&a->pci = sym(a->lib, "nvmlDeviceGetPciInfo_v3", &missing);
	*(void **)&a->name = sym(a->lib, "nvmlDeviceGetName", &missing);
	*(void **)&a->memory = sym(a->lib, "nvmlDeviceGetMemoryInfo", &missing);
	*(void **)&a->link_state = sym(a->lib, "nvmlDeviceGetNvLinkState", &missing);
	*(void **)&a->link_remote_pci = sym(a->lib, "nvmlDeviceGetNvLinkRemotePciInfo_v2", &missing);
	/* optional: older drivers lack it; a remote that is not a GPU is then taken for a switch */
	*(void **)&a->link_remote_type = dlsym(a->lib, "nvmlDeviceGetNvLinkRemoteDeviceType");
	*(void **)&a->link_cap = dlsym(a->lib, "nvmlDeviceGetNvLinkCapability"); /* optional */
	*(void **)&a->handle_bus = dlsym(a->lib, "nvmlDeviceGetHandleByPciBusId_v2"); /* gp_gpu_nvml_recount_facts */
	if (missing) {
		snprintf(why, n, "libnvidia-ml.so.1 lacks a needed function (driver too old)");
		dlclose(a->lib);
		return -1;
	}
	return 0;
}

/* The process's NVML session, held by gp_gpu_nvml_open: while it is open the queries below use it and
 * neither initialise nor shut NVML down (gpu.h says why). */
static struct {
	struct nvml_api a;
	int open;
} sess;

int gp_gpu_nvml_open(void)
{
	char why[256];

	if (sess.open)
		return 0;
	if (nvml_open(&sess.a, why, sizeof(why)))
		return -1;
	if (sess.a.init() != NVML_OK) {
		dlclose(sess.a.lib);
		return -1;
	}
	sess.open = 1;
	return 0;
}

void gp_gpu_nvml_close(void)
{
	if (!sess.open)
		return;
	sess.a.shutdown();
	dlclose(sess.a.lib);
	sess.open = 0;
}

/* The API ready to ask: the open session's, else NVML loaded and initialised for this call (released by
 * api_release). -1 when it cannot be had: why says what. */
static int api_get(struct nvml_api *a, char *why, size_t n)
{
	nvml_ret rc;

	if (sess.open) {
		*a = sess.a;
		return 0;
	}
	if (nvml_open(a, why, n))
		return -1;
	rc = a->init();
	if (rc != NVML_OK) {
		snprintf(why, n, "NVML: %s", a->error_string(rc));
		dlclose(a->lib);
		return -1;
	}
	return 0;
}

static void api_release(struct nvml_api *a)
{
	if (sess.open && a->lib == sess.a.lib)
		return;
	a->shutdown();
	dlclose(a->lib);
}

/* Is inactive link l there all the same: P2P capability over it, or a remote end with a PCI address
 * (a bridge seated, a switch port wired)? */
static int link_present(struct nvml_api *a, nvml_dev dev, unsigned l)
{
	struct nvml_pci_info pi;
	char bdf[GP_BDF_LEN];
	unsigned cap = 0;

	if (a->link_cap && a->link_cap(dev, l, NVML_NVLINK_CAP_P2P, &cap) == NVML_OK && cap)
		return 1;
	memset(&pi, 0, sizeof(pi));
	return a->link_remote_pci(dev, l, &pi) == NVML_OK && !gp_pci_parse_bdf(pi.bus_id, bdf) &&
	       strcmp(bdf, "0000:00:00.0");
}

/* The active NVLinks of a GPU: each remote end's PCI address and device type; the inactive ones NVML
 * reports present into the GPU's down mask (a link asleep, NVML's state 2, is not down). */
static void read_links(struct nvml_api *a, nvml_dev dev, struct gp_gpu_nvml_gpu *g)
{
	g->nlinks = 0;
	g->info.nvl_down_mask = 0;
	for (unsigned l = 0; l < NVML_NVLINK_LINKS && l < GP_GPU_LINKS_PER_GPU; l++) {
		struct nvml_pci_info pi;
		int active = 0, type = -1;

		if (a->link_state(dev, l, &active) != NVML_OK)
			continue;
		if (active != NVML_LINK_ACTIVE) {
			if (active == NVML_LINK_INACTIVE && link_present(a, dev, l))
				g->info.nvl_down_mask |= 1LL << l;
			continue;
		}
		memset(&pi, 0, sizeof(pi));
		if (a->link_remote_type)
			a->link_remote_type(dev, l, &type);
		if (a->link_remote_pci(dev, l, &pi) != NVML_OK || gp_pci_parse_bdf(pi.bus_id, g->links[g->nlinks].remote))
			g->links[g->nlinks].remote[0] = '\0';
		g->links[g->nlinks++].type = type >= 0 && type <= GP_NVLINK_REMOTE_SWITCH ? (enum gp_nvlink_remote)type
										: GP_NVLINK_REMOTE_UNKNOWN;
	}
}

/* Run one(arg, i) for i in 0..n-1, each on a thread of its own (NVML is thread-safe; its calls block
 * in the driver, so GPUs answer in parallel); inline where a thread cannot be had. */
static void each_gpu(int n, void *(*one)(void *), void *arg, size_t size)
{
	pthread_t t[GP_GPU_MAX];
	int started[GP_GPU_MAX];

	for (int i = 0; i < n && i < GP_GPU_MAX; i++)
		started[i] = n > 1 && pthread_create(&t[i], NULL, one, (char *)arg + (size_t)i * size) == 0;
	for (int i = 0; i < n && i < GP_GPU_MAX; i++) {
		if (started[i])
			pthread_join(t[i], NULL);
		else
			one((char *)arg + (size_t)i * size);
	}
}

/* One GPU's facts, read on its own thread. */
struct query_one {
	struct nvml_api *a;
	unsigned index, flags;
	int ok;
	nvml_dev dev;
	struct gp_gpu_nvml_gpu g;
};

static void *query_one(void *p)
{
	struct query_one *q = p;
	struct gp_gpu_info *g = &q->g.info;
	struct nvml_pci_info pi;
	struct nvml_memory mem;

	if (q->a->handle(q->index, &q->dev) != NVML_OK)
		return NULL; /* a GPU NVML cannot open (fallen off the bus, ...) */
	memset(&pi, 0, sizeof(pi));
	if (q->a->pci(q->dev, &pi) != NVML_OK || gp_pci_parse_bdf(pi.bus_id, g->bdf))
		return NULL;
	/* the counters first (GP_GPU_HEALTH), then every other fact of this GPU, then the counters again:
	 * the longer the window, the likelier a link erring now shows (no pause: doctor --active reads them
	 * once more, gp_gpu_nvml_recount_facts); NVLink counters again only where one counted (gpu.h) */
	gp_gpu_nvml_state(q->a->lib, q->dev, q->flags, &g->st); /* BAR1 too (state.c) */
	if (q->a->name(q->dev, g->name, sizeof(g->name)) != NVML_OK)
		g->name[0] = '\0';
	if (q->a->memory(q->dev, &mem) == NVML_OK)
		g->vram = mem.total;
	read_links(q->a, q->dev, &q->g);
	if (g->st.bar1_total > 0 && g->st.bar1_used >= 0) {
		g->bar1 = (uint64_t)g->st.bar1_total;
		g->bar1_free = g->bar1 > (uint64_t)g->st.bar1_used ? g->bar1 - (uint64_t)g->st.bar1_used : 0;
	}
	if (q->flags & GP_GPU_HEALTH)
		gp_gpu_nvml_recount(q->a->lib, q->dev, &g->st, 0);
	q->ok = 1;
	return NULL;
}

int gp_gpu_nvml_query(struct gp_gpu_nvml *raw, unsigned flags)
{
	struct nvml_api a;
	unsigned count = 0;
	nvml_ret rc;
	struct query_one *q;

	memset(raw, 0, sizeof(*raw));
	if (api_get(&a, raw->why, sizeof(raw->why)))
		return 0;
	if (a.driver_version(raw->driver, sizeof(raw->driver)) != NVML_OK)
		raw->driver[0] = '\0';
	rc = a.count(&count);
	if (rc != NVML_OK) {
		snprintf(raw->why, sizeof(raw->why), "NVML: nvmlDeviceGetCount: %s", a.error_string(rc));
		goto out;
	}
	if (count > GP_GPU_MAX) { /* never a silent cut: the facts of the GPUs past the limit would be missing */
		snprintf(raw->why, sizeof(raw->why), "NVML reports %u GPUs; gpup2p handles at most %d", count, GP_GPU_MAX);
		api_release(&a);
		return -E2BIG;
	}
	q = calloc(count ? count : 1, sizeof(*q));
	if (!q) {
		snprintf(raw->why, sizeof(raw->why), "out of memory");
		goto out;
	}
	for (unsigned i = 0; i < count; i++) {
		q[i].a = &a;
		q[i].index = i;
		q[i].flags = flags;
	}
	raw->counted_at = gp_clock_s();
	each_gpu((int)count, query_one, q, sizeof(*q));
	for (unsigned i = 0; i < count; i++) /* in NVML's order, those that answered */
		if (q[i].ok)
			raw->gpus[raw->n++] = q[i].g;
	free(q);
	raw->available = 1;
out:
	api_release(&a);
	return 0;
}

/* One GPU's counters read again, on its own thread. */
struct recount_one {
	struct nvml_api *a;
	const char *bdf;
	struct gp_gpu_state *st;
};

static void *recount_one(void *p)
{
	struct recount_one *r = p;
	nvml_dev dev;

	if (r->a->handle_bus(r->bdf, &dev) == NVML_OK)
		gp_gpu_nvml_recount(r->a->lib, dev, r->st, 1);
	return NULL;
}

double gp_gpu_nvml_pause_s(double counted_at, double window_s, double now)
{
	double wait = counted_at + window_s - now;

	return wait <= 0 ? 0 : wait < window_s ? wait : window_s;
}

int gp_gpu_nvml_recount_facts(const struct gp_gpu_facts *f, struct gp_gpu_state *st, double window_s)
{
	struct nvml_api a;
	char why[256];
	double wait;

	for (int i = 0; i < f->n; i++)
		st[i] = f->gpus[i].st;
	if (!f->available || api_get(&a, why, sizeof(why)))
		return -ENOENT;
	if (!a.handle_bus) {
		api_release(&a);
		return -ENOENT;
	}
	wait = gp_gpu_nvml_pause_s(f->counted_at, window_s, gp_clock_s());
	if (wait > 0) {
		struct timespec ts;

		ts.tv_sec = (time_t)wait;
		ts.tv_nsec = (long)((wait - (double)ts.tv_sec) * 1e9);
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
	{
		struct recount_one r[GP_GPU_MAX];

		for (int i = 0; i < f->n && i < GP_GPU_MAX; i++) {
			r[i].a = &a;
			r[i].bdf = f->gpus[i].bdf;
			r[i].st = &st[i];
		}
		each_gpu(f->n, recount_one, r, sizeof(r[0]));
	}
	api_release(&a);
	return 0;
}

/* What the sampler of gp_gpu_nvml_during shares with its caller. */
struct during {
	struct nvml_api *a;
	nvml_dev dev;                 /* NULL: NVML cannot be asked, only tick runs */
	void (*tick)(void *);
	void *arg;
	int done;                     /* set (atomically) when the job returned */
	long long reasons;
	int samples;
};

static void *sampler(void *p)
{
	struct during *d = p;
	struct timespec ts = { 0, GP_GPU_SAMPLE_NS };

	for (;;) {
		int last = __atomic_load_n(&d->done, __ATOMIC_ACQUIRE);

		if (d->dev) {
			long long r = gp_gpu_nvml_clk_reasons(d->a->lib, d->dev);

			if (r >= 0)
				d->reasons = (d->reasons < 0 ? 0 : d->reasons) | r;
			else if (d->reasons < 0 && d->reasons != GP_GPU_UNKNOWN)
				d->reasons = r; /* NA, unless a read failed: unknown */
		}
		if (d->tick)
			d->tick(d->arg);
		d->samples++;
		if (last)
			return NULL;
		nanosleep(&ts, NULL);
	}
}

int gp_gpu_nvml_during(const char *bdf, int (*job)(void *), void (*tick)(void *), void *arg, long long *reasons,
		       int *samples)
{
	struct nvml_api a;
	struct during d = { .a = &a, .tick = tick, .arg = arg, .reasons = GP_GPU_NA };
	char why[256];
	pthread_t t;
	int rc, inited = 0, opened = !nvml_open(&a, why, sizeof(why));

	if (opened && a.handle_bus && (!(inited = a.init() == NVML_OK) || a.handle_bus(bdf, &d.dev) != NVML_OK)) {
		d.dev = NULL; /* NVML is there but cannot tell about this GPU */
		d.reasons = GP_GPU_UNKNOWN;
	}
	if (pthread_create(&t, NULL, sampler, &d)) {
		rc = job(arg);
		__atomic_store_n(&d.done, 1, __ATOMIC_RELEASE);
		sampler(&d); /* one sample after the job, on this thread */
	} else {
		rc = job(arg);
		__atomic_store_n(&d.done, 1, __ATOMIC_RELEASE);
		pthread_join(t, NULL);
	}
	if (inited)
		a.shutdown();
	if (opened)
		dlclose(a.lib);
	*reasons = d.reasons;
	*samples = d.samples;
	return rc;
}
