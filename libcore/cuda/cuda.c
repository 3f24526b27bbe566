/* gpup2p — libcuda through dlopen: loading, GPUs, contexts, peers, memory and the probe. The driver API
 * is declared in drv.h: no CUDA toolkit at build time, no link-time dependency. Streams, copies, events
 * and launches: stream.c. */
#include <dlfcn.h>
#include <limits.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gpup2p/cuda.h"
#include "cuda/drv.h"

struct gp_cu_api gp_cu;

int gp_cu_fail(struct gp_err *e, const char *call, gp_cu_result r)
{
	const char *name = NULL;

	if (!gp_cu.p_cuGetErrorName || gp_cu.p_cuGetErrorName(r, &name) != GP_CUDA_SUCCESS || !name)
		name = "unknown CUDA error";
	return gp_err_set(e, GP_E_FAIL, EIO, "%s failed: %s (%d)", call, name, (int)r);
}

/* The library gpup2p loads: GPUP2P_LIBCUDA (tests), else libcuda.so.1. */
static const char *lib_path(void)
{
	const char *path = getenv("GPUP2P_LIBCUDA");

	return path && *path ? path : "libcuda.so.1";
}

/* Bind the driver API of c->lib (dlopen'ed) into gp_cu. 0, or GP_E_UNAVAIL (c->lib closed, NULL) when a
 * needed function is missing. */
static int bind_api(struct gp_cuda *c, struct gp_err *e)
{
	const char *miss = NULL;

#define X_LOAD(f, sym, args) \
	if (!(*(void **)&gp_cu.p_##f = dlsym(c->lib, #sym)) && !miss) \
		miss = #sym;
	GP_CU_FUNCS(X_LOAD)
#define X_LOAD_OPT(f, sym, args) *(void **)&gp_cu.p_##f = dlsym(c->lib, #sym);
	GP_CU_FUNCS_OPTIONAL(X_LOAD_OPT)
	if (!gp_cu.p_cuEventElapsedTime) /* drivers before 12.8 export only the first version */
		*(void **)&gp_cu.p_cuEventElapsedTime = dlsym(c->lib, GP_CU_ELAPSED_V1);
	if (miss && !(gp_cu.p_cuEventElapsedTime && !strcmp(miss, "cuEventElapsedTime_v2"))) {
		dlclose(c->lib);
		c->lib = NULL;
		return gp_err_set(e, GP_E_UNAVAIL, ENOSYS, "CUDA not available: libcuda lacks %s (driver too old)", miss);
	}
	return 0;
}

/* lock: the function table gp_cu, probe_lib and sessions (a prefetch thread probes while the main thread
 * may open or close a session). libcuda for gp_cuda_probe is opened once per library path and never
 * closed (unloading it after cuInit is unsafe; a session's gp_cuda_close closes only its own
 * reference); a new GPUP2P_LIBCUDA (tests switch libraries in-process) opens that one, the one before
 * staying loaded. sessions: loaded gp_cuda sessions; gp_cu is cleared only when none is and the probe has
 * not loaded libcuda (whose reference keeps the pointers valid). */
static pthread_mutex_t probe_lock = PTHREAD_MUTEX_INITIALIZER;
static void *probe_lib;
static char probe_path[4096];
static int sessions;

static int load(struct gp_cuda *c, struct gp_err *e)
{
	int rc;

	pthread_mutex_lock(&probe_lock);
	c->lib = dlopen(lib_path(), RTLD_NOW | RTLD_LOCAL);
	if (!c->lib) {
		rc = gp_err_set(e, GP_E_UNAVAIL, ENOENT, "CUDA not available (%s): install the NVIDIA driver", dlerror());
	} else if (!(rc = bind_api(c, e))) {
		sessions++;
	}
	pthread_mutex_unlock(&probe_lock);
	return rc;
}

static int probe_load(struct gp_cuda *c, struct gp_err *e)
{
	const char *path = lib_path();

	if (!probe_lib || strcmp(probe_path, path)) {
		probe_lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		snprintf(probe_path, sizeof(probe_path), "%s", probe_lib ? path : "");
		if (!probe_lib)
			return gp_err_set(e, GP_E_UNAVAIL, ENOENT, "CUDA not available (%s): install the NVIDIA driver",
					  dlerror());
	}
	c->lib = probe_lib;
	if (bind_api(c, e)) { /* bind closed it */
		probe_lib = NULL;
		probe_path[0] = '\0';
		return -ENOSYS;
	}
	return 0;
}

/* PCI bus order: numeric (a domain of 5 or more digits, Intel VMD's 10000 and up, sorts after 0000-ffff,
 * which its string would not). The addresses were checked by gp_pci_parse_bdf. */
static int by_bdf(const void *a, const void *b)
{
	struct gp_pci_addr x = { 0 }, y = { 0 };

	(void)gp_pci_addr_parse(((const struct gp_cuda_gpu *)a)->bdf, &x);
	(void)gp_pci_addr_parse(((const struct gp_cuda_gpu *)b)->bdf, &y);
	return gp_pci_addr_cmp(&x, &y);
}

/* Each GPU's name and PCI address by CUDA ordinal, then sorted into PCI bus order. */
static int list_gpus(struct gp_cuda *c, int n, struct gp_err *e)
{
	c->gpu = calloc((size_t)n, sizeof(*c->gpu));
	c->peer_on = calloc((size_t)n * (size_t)n, 1);
	if (!c->gpu || !c->peer_on)
		return gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory listing %d GPUs", n);
	for (int i = 0; i < n; i++) {
		struct gp_cuda_gpu *g = &c->gpu[i];
		char id[64] = "";
		gp_cu_device d;
		gp_cu_result r;

		if ((r = gp_cu.p_cuDeviceGet(&d, i)) != GP_CUDA_SUCCESS ||
		    (r = gp_cu.p_cuDeviceGetName(g->name, sizeof(g->name), d)) ||
		    (r = gp_cu.p_cuDeviceGetPCIBusId(id, sizeof(id), d)))
			return gp_cu_fail(e, "cuDeviceGet/GetName/GetPCIBusId", r);
		id[sizeof(id) - 1] = '\0';
		if (gp_pci_parse_bdf(id, g->bdf))
			return gp_err_set(e, GP_E_DATA, EINVAL, "CUDA device %d: bus id '%s' is not a PCI address "
					  "(domain:bus:device.function)", i, id);
		g->ordinal = i;
	}
	c->n = n;
	qsort(c->gpu, (size_t)n, sizeof(c->gpu[0]), by_bdf);
	return 0;
}

int gp_cuda_list(struct gp_cuda *c, struct gp_err *e)
{
	int n, rc;

	memset(c, 0, sizeof(*c));
	if ((rc = load(c, e)))
		return rc;
	{
		gp_cu_result r = gp_cu.p_cuInit(0);

		if (r == GP_CUDA_ERROR_NO_DEVICE) {
			gp_cuda_close(c);
			return gp_err_set(e, GP_E_UNAVAIL, ENODEV, "no GPU: CUDA sees no device");
		}
		if (r != GP_CUDA_SUCCESS) {
			rc = gp_cu_fail(e, "cuInit", r);
			e->cls = GP_E_UNAVAIL;
			gp_cuda_close(c);
			return rc;
		}
	}
	if (gp_cu.p_cuDriverGetVersion(&c->driver_version) != GP_CUDA_SUCCESS ||
	    gp_cu.p_cuDeviceGetCount(&n) != GP_CUDA_SUCCESS) {
		gp_cuda_close(c);
		return gp_err_set(e, GP_E_FAIL, EIO, "cuDriverGetVersion/cuDeviceGetCount failed");
	}
	if (n <= 0) {
		gp_cuda_close(c);
		return gp_err_set(e, GP_E_UNAVAIL, ENODEV, "no GPU: CUDA sees no device");
	}
	if ((rc = list_gpus(c, n, e))) {
		gp_cuda_close(c);
		return rc;
	}
	return 0;
}

/* Retain the primary contexts of the first nctx GPUs (PCI order) that have none yet. */
static int retain(struct gp_cuda *c, int nctx, struct gp_err *e)
{
	int rc;

	for (int i = 0; i < c->n && i < nctx; i++) {
		gp_cu_context ctx;
		gp_cu_result r;

		if (c->gpu[i].ctx)
			continue;
		r = gp_cu.p_cuDevicePrimaryCtxRetain(&ctx, c->gpu[i].ordinal);
		if (r != GP_CUDA_SUCCESS) {
			rc = gp_cu_fail(e, "cuDevicePrimaryCtxRetain", r);
			gp_cuda_close(c);
			return rc;
		}
		c->gpu[i].ctx = ctx;
	}
	return 0;
}

int gp_cuda_retain(struct gp_cuda *c, struct gp_err *e)
{
	return retain(c, c->n, e);
}

int gp_cuda_open(struct gp_cuda *c, struct gp_err *e)
{
	int rc = gp_cuda_list(c, e);

	return rc ? rc : retain(c, c->n, e);
}

int gp_cuda_open_gpus(struct gp_cuda *c, int nctx, struct gp_err *e)
{
	int rc = gp_cuda_list(c, e);

	return rc ? rc : retain(c, nctx, e);
}

int gp_cuda_scratch(struct gp_cuda *c, size_t n, void **p, struct gp_err *e)
{
	if (c->scratch_n < n) {
		gp_cuda_host_free(c, c->scratch);
		c->scratch = NULL;
		c->scratch_n = 0;
		if (gp_cuda_host_alloc(c, n, &c->scratch, e))
			return -EIO;
		c->scratch_n = n;
	}
	*p = c->scratch;
	return 0;
}

void gp_cuda_close(struct gp_cuda *c)
{
	if (!c->lib)
		return;
	gp_cuda_host_free(c, c->scratch);
	for (int i = 0; i < c->n; i++)
		for (int k = 0; k < GP_CUDA_MODULES; k++)
			if (c->gpu[i].module[k] && gp_cu.p_cuCtxSetCurrent(c->gpu[i].ctx) == GP_CUDA_SUCCESS)
				(void)gp_cu.p_cuModuleUnload((gp_cu_module)c->gpu[i].module[k]);
	for (int i = 0; i < c->n; i++)
		for (int j = 0; j < c->n; j++)
			if (c->peer_on[i * c->n + j] && gp_cu.p_cuCtxSetCurrent(c->gpu[i].ctx) == GP_CUDA_SUCCESS)
				(void)gp_cu.p_cuCtxDisablePeerAccess(c->gpu[j].ctx);
	for (int i = 0; i < c->n; i++)
		if (c->gpu[i].ctx)
			(void)gp_cu.p_cuDevicePrimaryCtxRelease(c->gpu[i].ordinal);
	if (gp_cu.p_cuCtxSetCurrent)
		(void)gp_cu.p_cuCtxSetCurrent(NULL);
	pthread_mutex_lock(&probe_lock);
	dlclose(c->lib);
	if (--sessions == 0 && !probe_lib)
		memset(&gp_cu, 0, sizeof(gp_cu));
	pthread_mutex_unlock(&probe_lock);
	free(c->gpu);
	free(c->peer_on);
	memset(c, 0, sizeof(*c));
}

int gp_cuda_use(struct gp_cuda *c, int g, struct gp_err *e)
{
	CU(cuCtxSetCurrent, (c->gpu[g].ctx));
	return 0;
}

int gp_cuda_can_peer(struct gp_cuda *c, int a, int b, struct gp_err *e)
{
	int ok = 0;

	CU(cuDeviceCanAccessPeer, (&ok, c->gpu[a].ordinal, c->gpu[b].ordinal));
	return ok != 0;
}

int gp_cuda_peer(struct gp_cuda *c, int a, int b, int on, struct gp_err *e)
{
	gp_cu_result r;

	if (c->peer_on[a * c->n + b] == on)
		return 0;
	if (gp_cuda_use(c, a, e))
		return -EIO;
	r = on ? gp_cu.p_cuCtxEnablePeerAccess(c->gpu[b].ctx, 0) : gp_cu.p_cuCtxDisablePeerAccess(c->gpu[b].ctx);
	if (r != GP_CUDA_SUCCESS && r != GP_CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED && r != GP_CUDA_ERROR_PEER_ACCESS_NOT_ENABLED)
		return gp_cu_fail(e, on ? "cuCtxEnablePeerAccess" : "cuCtxDisablePeerAccess", r);
	c->peer_on[a * c->n + b] = (unsigned char)on;
	return 0;
}

int gp_cuda_peer_require(struct gp_cuda *c, int a, int b, struct gp_err *e)
{
	int ok = gp_cuda_can_peer(c, a, b, e);

	if (ok < 0)
		return ok;
	if (!ok)
		return gp_err_set(e, GP_E_UNAVAIL, EOPNOTSUPP,
				  "GPU%d cannot access GPU%d's memory directly (cuDeviceCanAccessPeer = 0)", a, b);
	return gp_cuda_peer(c, a, b, 1, e) ? -EIO : 0;
}

int gp_cuda_alloc(struct gp_cuda *c, int g, size_t n, gp_dptr *p, struct gp_err *e)
{
	gp_cu_dptr d;

	if (gp_cuda_use(c, g, e))
		return -EIO;
	CU(cuMemAlloc, (&d, n));
	*p = (gp_dptr)d;
	return 0;
}

void gp_cuda_free(struct gp_cuda *c, int g, gp_dptr p)
{
	if (p && gp_cu.p_cuCtxSetCurrent(c->gpu[g].ctx) == GP_CUDA_SUCCESS)
		(void)gp_cu.p_cuMemFree((gp_cu_dptr)p);
}

int gp_cuda_host_alloc(struct gp_cuda *c, size_t n, void **p, struct gp_err *e)
{
	if (gp_cuda_use(c, 0, e))
		return -EIO;
	CU(cuMemHostAlloc, (p, n, GP_CU_MEMHOSTALLOC_PORTABLE | GP_CU_MEMHOSTALLOC_DEVICEMAP));
	return 0;
}

void gp_cuda_host_free(struct gp_cuda *c, void *p)
{
	if (p)
		(void)gp_cu.p_cuMemFreeHost(p);
	(void)c;
}

int gp_cuda_host_dptr(struct gp_cuda *c, void *h, gp_dptr *d, struct gp_err *e)
{
	gp_cu_dptr p;

	(void)c;
	CU(cuMemHostGetDevicePointer, (&p, h, 0));
	*d = (gp_dptr)p;
	return 0;
}

int gp_cuda_attr(struct gp_cuda *c, int g, int attr, int *v, struct gp_err *e)
{
	CU(cuDeviceGetAttribute, (v, (gp_cu_device_attribute)attr, c->gpu[g].ordinal));
	return 0;
}

void gp_cuda_probe(struct gp_cuda_probe *p)
{
	static struct gp_cuda c;
	struct gp_err e = { 0 };
	const char *name = NULL;
	gp_cu_result r;
	int n = 0;

	memset(p, 0, sizeof(*p));
	p->devices = -1;
	pthread_mutex_lock(&probe_lock);
	if (probe_load(&c, &e)) {
		pthread_mutex_unlock(&probe_lock);
		snprintf(p->why, sizeof(p->why), "%s", e.msg);
		return;
	}
	p->loaded = 1;
	{
		Dl_info dl;
		char real[PATH_MAX];

		if (dladdr(*(void **)&gp_cu.p_cuInit, &dl) && dl.dli_fname && realpath(dl.dli_fname, real))
			snprintf(p->lib, sizeof(p->lib), "%s", real);
	}
	r = gp_cu.p_cuInit(0);
	p->init = (int)r;
	if (gp_cu.p_cuGetErrorName(r, &name) != GP_CUDA_SUCCESS || !name)
		name = "unknown CUDA error";
	snprintf(p->init_name, sizeof(p->init_name), "%s", name);
	if (gp_cu.p_cuDriverGetVersion(&p->driver_version) != GP_CUDA_SUCCESS)
		p->driver_version = 0;
	if (r == GP_CUDA_SUCCESS && gp_cu.p_cuDeviceGetCount(&n) == GP_CUDA_SUCCESS)
		p->devices = n;
	p->dmabuf = p->devices > 0 ? 1 : -1;
	for (int i = 0; i < p->devices; i++) {
		struct gp_cuda_probe_gpu *g = i < GP_CUDA_PROBE_GPUS ? &p->gpu[p->ngpu++] : NULL;
		char id[64] = "";
		gp_cu_device d;
		int v = 0, ma = 0, mi = 0;

		if (gp_cu.p_cuDeviceGet(&d, i) != GP_CUDA_SUCCESS) {
			p->dmabuf = p->dmabuf ? -1 : 0;
			if (g)
				g->gdr = -1;
			continue;
		}
		if (gp_cu.p_cuDeviceGetAttribute(&v, GP_CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, d) != GP_CUDA_SUCCESS) {
			p->dmabuf = p->dmabuf ? -1 : 0;
		} else if (!v && p->dmabuf) {
			p->dmabuf = 0;             /* a "no" outweighs an unknown */
			p->dmabuf_dev = i;
		}
		if (!g)
			continue;
		if (gp_cu.p_cuDeviceGetPCIBusId(id, sizeof(id), d) == GP_CUDA_SUCCESS) {
			id[sizeof(id) - 1] = '\0';
			if (gp_pci_parse_bdf(id, g->bdf))
				g->bdf[0] = '\0';
		}
		g->gdr = gp_cu.p_cuDeviceGetAttribute(&v, GP_CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED, d) ==
			 GP_CUDA_SUCCESS ? !!v : -1;
		if (gp_cu.p_cuDeviceGetAttribute(&ma, GP_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d) == GP_CUDA_SUCCESS &&
		    gp_cu.p_cuDeviceGetAttribute(&mi, GP_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d) == GP_CUDA_SUCCESS)
			g->cc = ma * 10 + mi;
	}
	pthread_mutex_unlock(&probe_lock);
}

const struct gp_cuda_probe_gpu *gp_cuda_probe_find(const struct gp_cuda_probe *p, const char *bdf)
{
	for (int i = 0; p && i < p->ngpu; i++)
		if (p->gpu[i].bdf[0] && !strcasecmp(p->gpu[i].bdf, bdf))
			return &p->gpu[i];
	return NULL;
}
