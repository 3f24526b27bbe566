/* A test double of libcuda.so.1 (tests only, never installed): the driver API entry points gpup2p
 * loads, over host memory, with a virtual clock so that timings are known in advance. It lets the copy
 * and bench commands run end to end on a machine without a GPU (GPUP2P_LIBCUDA=.../libcuda.so.1).
 *
 * Controls (environment):
 *   FAKECUDA_GPUS=N        number of GPUs (default 2, at most 256; 0 = cuInit says CUDA_ERROR_NO_DEVICE)
 *   FAKECUDA_BUSIDS=BDF,.. the GPUs' PCI addresses as given, device 0 first (sets their number too);
 *                          default: 0000:N0:00.0 ... 0000:10:00.0 (reverse bus order); over 15 GPUs,
 *                          device d of N at domain:bus = N - d (0000:01:00.0 is the last device)
 *   FAKECUDA_NOPEER=1      cuDeviceCanAccessPeer says no; =S:D[,S:D...] no from device S to D only
 *   FAKECUDA_NODMABUF=1    CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED is 0
 *   FAKECUDA_NOGDR=1       CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED is 0 (default 1)
 *   FAKECUDA_CC=M.N        compute capability (default 9.0)
 *   FAKECUDA_CORRUPT=KIND  flip byte 4097 (or the last byte) of every copy of KIND over 16 bytes: h2d, d2h,
 *                          d2d, peer (the pattern check's result and read-back word stay whole)
 *   FAKECUDA_CORRUPT_NTH=N only the Nth such copy of KIND (counting from 1)
 *   FAKECUDA_PEER_GBPS=S:D=R[,S:D=R...]  peer copies with access from CUDA device S to D at R GB/s
 *   FAKECUDA_FAIL=SYMBOL   that entry point returns CUDA_ERROR_OUT_OF_MEMORY (e.g. cuMemAlloc_v2)
 *   FAKECUDA_STUB=1        in the test guest: device memory comes from /dev/nvp2p_stub (the fake GPU
 *                          address space gpup2p.ko pins) and is reached through the ivshmem BAR2
 *                          (sysfs resource2), so that pin/map run end to end; cuMemFree frees the range
 *                          (the free callback fires); FAKECUDA_STUB_FLAGS=N passes allocation flags
 *                          to the stub (2: pinning fails with -ENOMEM, as when BAR1 is exhausted)
 *   FAKECUDA_SMS=N         SMs per GPU (default 132); FAKECUDA_L2=BYTES L2 size (default 1 MiB)
 *   FAKECUDA_CORRUPT=sm    flip byte 4097 (or the last) of SM copies; =chase: a chase stops one load short;
 *                          =chase-batch: only a chase by block 1 or later (not the warm-up's);
 *                          =bulkreset: the bulk copy never puts its chunk counter back to 0;
 *                          =duplex, =duplexback, =duplexhalf: the duplex SM copy (kernels.c)
 *   FAKECUDA_HOST_GBPS=R   one host link of R GB/s shared by every copy to or from host memory (below)
 *   FAKECUDA_NVLINK_GBPS=R each GPU's NVLinks carry R GB/s out and R in, shared by every peer copy
 *                          through them, and the copy engines of a GPU serve one stream at a time, as
 *                          the 4xH200 of issue 24 did (sched.c tells how)
 *   FAKECUDA_XWAIT_US=U    a stream waiting for an event recorded on another GPU goes on U us after
 *                          it: the signal's crossing between GPUs (sched.c)
 *   FAKECUDA_BADPTX=1      cuModuleLoadData fails as a JIT error would (CUDA_ERROR_INVALID_VALUE);
 *                          =bulk: only for the bulk-copy module (a driver too old for PTX 8.0)
 *   FAKECUDA_MARKER=FILE   append "load" to FILE when the library is loaded, "cuInit" at each cuInit
 *                          ("cuInit done" when it returns)
 *                          (a test that libcuda is not loaded at all, without strace), "cuModuleLoadData"
 *                          at each module load, a copy kernel's name at each launch of it (which SM
 *                          copy ran; gp_fill and gp_check: the pattern kernels)
 *   FAKECUDA_WINDOWS=FILE  append a line per timed window (cuEventElapsedTime): "ms=M copies=N gap=G",
 *                          N the work queued on the window's stream inside it (a gp_copy16 of reps
 *                          passes counts reps), G the work (copies,
 *                          kernels, memsets) queued anywhere between the previous window's end and its
 *                          start: a test that no verification runs between or inside timed batches
 * Built with -DFAKECUDA_DMABUF (tests/fakecuda-dmabuf/libcuda.so.1) it also exports
 * cuMemGetHandleForAddressRange: a dma-buf the CPU can mmap (a memfd), or with FAKECUDA_DMABUF_MMAP=0
 * one it cannot (a read-only pipe: mmap fails, as on drivers before CUDA 13.3). Without it the entry
 * point is absent, as in drivers that cannot export dma-bufs.
 * Rates of the virtual clock (GB/s): h2d 25, d2h 26 (pageable: half), within a GPU 1000, peer with
 * access 300, peer without 20 (bidir: each direction the same); every copy also costs 2 us.
 * Kernels: cuModuleLoadData takes a PTX image and knows the kernels gpup2p's PTX declares by name
 * (".entry gp_copy16(", ".entry gp_chase(", ".entry gp_copy_bulk(": refused, as a JIT would, on a
 * compute capability below 9.0; ".entry gp_fill(", ".entry gp_check(": the verification pattern written
 * and compared where the data is); cuLaunchKernel runs them here, in C. An SM copy costs
 * 3 us plus its bytes at h2d 27, d2h 28, within a GPU 1500, to a peer 350 GB/s (by where source and
 * destination are; a pattern kernel as a copy from its buffer to itself); a chase takes 1000 ns per load
 * in host memory, in a peer's 700 ns on average over the SMs, each SM as recorded on 2x H200 (674 to
 * 727 ns; a lone block's SM, as there, one of the slow ones: 721; kernels.c).
 * Streams run side by side, each on its own clock (the gate sets every one to 0; an event wait holds a
 * stream until the event's stream got there): concurrent copies do not slow each other, except through
 * the links of FAKECUDA_HOST_GBPS and FAKECUDA_NVLINK_GBPS when set: a copy's bytes also pass them, one
 * copy after another in queueing order, and the copy ends when both it and its turns on the links are
 * done (so copies that keep a link busy from 0 sum to exactly R). The clock is sched.c's. */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../vm/nvp2p_stub/nvp2p_stub.h"

#include "fakecuda.h"

static long ops_all;       /* work queued on every stream so far */
static long ops_timed;     /* ... up to the end of the last window timed (FAKECUDA_WINDOWS) */

void work(struct fstream *s)
{
	s->ops++;
	ops_all++;
}

static struct fctx ctxs[MAXG];
struct fctx *current;
int peer_on[MAXG][MAXG];
static int inited;

/* FAKECUDA_BUSIDS entry d (12 characters each, comma separated), or NULL. */
static const char *busid(int d)
{
	const char *s = getenv("FAKECUDA_BUSIDS");

	for (; s && *s && d > 0; d--)
		s = strchr(s, ',') ? strchr(s, ',') + 1 : NULL;
	return s && *s ? s : NULL;
}

static int ngpus(void)
{
	const char *s = getenv("FAKECUDA_GPUS");
	int n = s ? atoi(s) : 2;

	if (busid(0))
		for (n = 1; busid(n); n++)
			;

	return n < 0 ? 0 : n > MAXG ? MAXG : n;
}

int failing(const char *sym)
{
	const char *s = getenv("FAKECUDA_FAIL");

	return s && !strcmp(s, sym);
}

/* Pinned host allocations, to tell pinned from pageable. */
static struct { void *p; size_t n; } pinned[256];

int is_pinned(const void *p)
{
	for (int i = 0; i < 256; i++)
		if (pinned[i].p && (const char *)p >= (const char *)pinned[i].p &&
		    (const char *)p < (const char *)pinned[i].p + pinned[i].n)
			return 1;
	return 0;
}

/* Device allocations remember their GPU. */
static struct { void *p; size_t n; int dev; } dmem[256];

/* Stub mode: the ivshmem BAR mapped here, the stub's control device. */
static uint8_t *bar;
static size_t bar_len;
static int stubfd = -1;

static int stub_mode(void)
{
	const char *s = getenv("FAKECUDA_STUB");

	if (!s || *s != '1')
		return 0;
	if (stubfd >= 0)
		return 1;
	{
		DIR *d = opendir("/sys/bus/pci/devices");
		struct dirent *de;

		while (d && (de = readdir(d))) {
			char p[300], v[16] = "", dv[16] = "";
			FILE *f;
			int fd;

			snprintf(p, sizeof(p), "/sys/bus/pci/devices/%s/vendor", de->d_name);
			if ((f = fopen(p, "r"))) { if (!fgets(v, sizeof(v), f)) v[0] = 0; fclose(f); }
			snprintf(p, sizeof(p), "/sys/bus/pci/devices/%s/device", de->d_name);
			if ((f = fopen(p, "r"))) { if (!fgets(dv, sizeof(dv), f)) dv[0] = 0; fclose(f); }
			if (strncmp(v, "0x1af4", 6) || strncmp(dv, "0x1110", 6))
				continue;
			snprintf(p, sizeof(p), "/sys/bus/pci/devices/%s/resource2", de->d_name);
			fd = open(p, O_RDWR);
			if (fd >= 0) {
				struct stat st; /* sysfs resource files give their size in stat, not lseek */

				bar_len = fstat(fd, &st) ? 0 : (size_t)st.st_size;
				bar = mmap(NULL, bar_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
				close(fd);
				if (bar == MAP_FAILED)
					bar = NULL;
			}
			break;
		}
		if (d)
			closedir(d);
	}
	stubfd = bar ? open("/dev/nvp2p_stub", O_RDWR) : -1;
	if (stubfd < 0 && !bar_len++)
		fprintf(stderr, "fakecuda: FAKECUDA_STUB=1 but %s\n", bar ? "no /dev/nvp2p_stub" : "no ivshmem BAR2 to map");
	return stubfd >= 0;
}

void *host_of(gp_cu_dptr d)
{
	if (bar && d >= NVP2P_STUB_VA_BASE && d < NVP2P_STUB_VA_BASE + bar_len)
		return bar + (d - NVP2P_STUB_VA_BASE);
	return (void *)(uintptr_t)d;
}

int dev_of(gp_cu_dptr d)
{
	if (bar && d >= NVP2P_STUB_VA_BASE && d < NVP2P_STUB_VA_BASE + bar_len)
		return 0;
	for (int i = 0; i < 256; i++)
		if (dmem[i].p && (char *)(uintptr_t)d >= (char *)dmem[i].p && (char *)(uintptr_t)d < (char *)dmem[i].p + dmem[i].n)
			return dmem[i].dev;
	return -1;
}

void copy(void *dst, const void *src, size_t n, const char *kind)
{
	static long seen;
	const char *c = getenv("FAKECUDA_CORRUPT"), *nth = getenv("FAKECUDA_CORRUPT_NTH");

	memcpy(dst, src, n);
	/* data copies only: the pattern check's 16-byte result and the 8-byte word it reads back are left alone */
	if (c && !strcmp(c, kind) && n > 16 && (!nth || ++seen == atol(nth)))
		((unsigned char *)dst)[n > 4097 ? 4097 : n - 1] ^= 0xff;
}

/* A copy-engine copy of n bytes at gbps on s: 2 us plus its bytes. */
static void ce_time(gp_cu_stream s, size_t n, double gbps, int host, int eg, int in)
{
	sched_copy((struct fstream *)s, 2e-6 + (double)n / (gbps * 1e9), n, host, eg, in, 1);
}

void marker(const char *what)
{
	const char *path = getenv("FAKECUDA_MARKER");
	FILE *f = path && *path ? fopen(path, "a") : NULL;

	if (f) {
		fprintf(f, "%s\n", what);
		fclose(f);
	}
}

__attribute__((constructor)) static void loaded(void)
{
	marker("load");
}

EXPORT gp_cu_result cuInit(unsigned flags)
{
	(void)flags;
	marker("cuInit");
	FAILPOINT("cuInit");
	if (ngpus() == 0)
		return GP_CUDA_ERROR_NO_DEVICE;
	for (int i = 0; i < MAXG; i++)
		ctxs[i].dev = i;
	inited = 1;
	marker("cuInit done");
	return GP_CUDA_SUCCESS;
}

EXPORT gp_cu_result cuDriverGetVersion(int *v) { *v = 13000; return GP_CUDA_SUCCESS; }

EXPORT gp_cu_result cuGetErrorName(gp_cu_result r, const char **name)
{
	switch (r) {
#define X_NAME(n, v) case GP_##n: *name = #n; break;
	GP_CU_RESULTS(X_NAME)
	default: return GP_CUDA_ERROR_INVALID_VALUE;
	}
	return GP_CUDA_SUCCESS;
}

EXPORT gp_cu_result cuDeviceGetCount(int *n) { *n = inited ? ngpus() : 0; return inited ? GP_CUDA_SUCCESS : GP_CUDA_ERROR_NOT_INITIALIZED; }
EXPORT gp_cu_result cuDeviceGet(gp_cu_device *d, int i) { *d = i; return i < ngpus() ? GP_CUDA_SUCCESS : GP_CUDA_ERROR_INVALID_DEVICE; }

EXPORT gp_cu_result cuDeviceGetName(char *name, int len, gp_cu_device d)
{
	snprintf(name, (size_t)len, "Fake GPU %d", (int)d);
	return GP_CUDA_SUCCESS;
}

/* Listed in reverse bus order, so that gpup2p's PCI ordering is exercised. */
EXPORT gp_cu_result cuDeviceGetPCIBusId(char *id, int len, gp_cu_device d)
{
	const char *b = busid((int)d);
	int k = ngpus() - (int)d;

	if (b)
		snprintf(id, (size_t)len, "%.*s", (int)strcspn(b, ","), b);
	else if (ngpus() <= 15)
		snprintf(id, (size_t)len, "0000:%02X:00.0", 0x10 * k);
	else
		snprintf(id, (size_t)len, "%04X:%02X:00.0", k >> 8, k & 0xff);
	return GP_CUDA_SUCCESS;
}

EXPORT gp_cu_result cuDeviceCanAccessPeer(int *ok, gp_cu_device a, gp_cu_device b)
{
	const char *s = getenv("FAKECUDA_NOPEER");
	int x, y, no = s && !strcmp(s, "1");

	while (s && !no && sscanf(s, "%d:%d", &x, &y) == 2) {
		no = x == (int)a && y == (int)b;
		s = strchr(s, ',');
		s = s ? s + 1 : NULL;
	}
	*ok = a != b && !no;
	return GP_CUDA_SUCCESS;
}

EXPORT gp_cu_result cuDevicePrimaryCtxRetain(gp_cu_context *c, gp_cu_device d) { *c = (gp_cu_context)&ctxs[d]; return GP_CUDA_SUCCESS; }
EXPORT gp_cu_result cuDevicePrimaryCtxRelease_v2(gp_cu_device d) { (void)d; return GP_CUDA_SUCCESS; }
EXPORT gp_cu_result cuCtxSetCurrent(gp_cu_context c) { current = (struct fctx *)c; return GP_CUDA_SUCCESS; }

EXPORT gp_cu_result cuCtxEnablePeerAccess(gp_cu_context peer, unsigned flags)
{
	(void)flags;
	if (!current)
		return GP_CUDA_ERROR_INVALID_CONTEXT;
	if (peer_on[current->dev][((struct fctx *)peer)->dev])
		return GP_CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
	peer_on[current->dev][((struct fctx *)peer)->dev] = 1;
	return GP_CUDA_SUCCESS;
}

EXPORT gp_cu_result cuCtxDisablePeerAccess(gp_cu_context peer)
{
	if (!current)
		return GP_CUDA_ERROR_INVALID_CONTEXT;
	if (!peer_on[current->dev][((struct fctx *)peer)->dev])
		return GP_CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
	peer_on[current->dev][((struct fctx *)peer)->dev] = 0;
	return GP_CUDA_SUCCESS;
}

EXPORT gp_cu_result cuMemAlloc_v2(gp_cu_dptr *p, size_t n)
{
	FAILPOINT("cuMemAlloc_v2");
	if (stub_mode()) {
		const char *fl = getenv("FAKECUDA_STUB_FLAGS");
		struct nvp2p_stub_alloc a = { .len = n, .flags = fl ? (__u32)atoi(fl) : 0 };

		if (ioctl(stubfd, NVP2P_STUB_ALLOC, &a))
			return GP_CUDA_ERROR_OUT_OF_MEMORY;
		*p = (gp_cu_dptr)a.va;
		return GP_CUDA_SUCCESS;
	}
	for (int i = 0; i < 256; i++)
		if (!dmem[i].p) {
			dmem[i].p = malloc(n);
			if (!dmem[i].p)
				return GP_CUDA_ERROR_OUT_OF_MEMORY;
			if (n <= 1 << 20)
				memset(dmem[i].p, 0xa5, n); /* GPU memory is not zeroed: nor is this (small ones) */
			dmem[i].n = n;
			dmem[i].dev = current ? current->dev : 0;
			*p = (gp_cu_dptr)(uintptr_t)dmem[i].p;
			return GP_CUDA_SUCCESS;
		}
	return GP_CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT gp_cu_result cuMemFree_v2(gp_cu_dptr p)
{
	if (stub_mode() && p >= NVP2P_STUB_VA_BASE) {
		__u64 va = p;

		return ioctl(stubfd, NVP2P_STUB_FREE, &va) ? GP_CUDA_ERROR_INVALID_VALUE : GP_CUDA_SUCCESS;
	}
	for (int i = 0; i < 256; i++)
		if (dmem[i].p && (gp_cu_dptr)(uintptr_t)dmem[i].p == p) {
			free(dmem[i].p);
			dmem[i].p = NULL;
			return GP_CUDA_SUCCESS;
		}
	return GP_CUDA_ERROR_INVALID_VALUE;
}

EXPORT gp_cu_result cuMemHostAlloc(void **p, size_t n, unsigned flags)
{
	(void)flags;
	FAILPOINT("cuMemHostAlloc");
	for (int i = 0; i < 256; i++)
		if (!pinned[i].p) {
			pinned[i].p = calloc(1, n);
			pinned[i].n = n;
			*p = pinned[i].p;
			return *p ? GP_CUDA_SUCCESS : GP_CUDA_ERROR_OUT_OF_MEMORY;
		}
	return GP_CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT gp_cu_result cuMemFreeHost(void *p)
{
	for (int i = 0; i < 256; i++)
		if (pinned[i].p == p) {
			free(p);
			pinned[i].p = NULL;
			return GP_CUDA_SUCCESS;
		}
	return GP_CUDA_ERROR_INVALID_VALUE;
}

EXPORT gp_cu_result cuMemHostGetDevicePointer_v2(gp_cu_dptr *d, void *h, unsigned flags)
{
	(void)flags;
	*d = (gp_cu_dptr)(uintptr_t)h;
	return GP_CUDA_SUCCESS;
}

EXPORT gp_cu_result cuMemcpyHtoDAsync_v2(gp_cu_dptr dst, const void *src, size_t n, gp_cu_stream s)
{
	FAILPOINT("cuMemcpyHtoDAsync_v2");
	work((struct fstream *)s);
	copy(host_of(dst), src, n, "h2d");
	ce_time(s, n, is_pinned(src) ? 25 : 12.5, 1, -1, -1);
	return GP_CUDA_SUCCESS;
}

EXPORT gp_cu_result cuMemcpyDtoHAsync_v2(void *dst, gp_cu_dptr src, size_t n, gp_cu_stream s)
{
	FAILPOINT("cuMemcpyDtoHAsync_v2");
	work((struct fstream *)s);
	copy(dst, host_of(src), n, "d2h");
	ce_time(s, n, is_pinned(dst) ? 26 : 13, 1, -1, -1);
	return GP_CUDA_SUCCESS;
}

/* Rate of a peer copy with access from device a to b: FAKECUDA_PEER_GBPS, else 300. */
static double peer_gbps(int a, int b)
{
	const char *p = getenv("FAKECUDA_PEER_GBPS");
	int s, d;
	double r;

	while (p && sscanf(p, "%d:%d=%lf", &s, &d, &r) == 3) {
		if (s == a && d == b)
			return r;
		p = strchr(p, ',');
		p = p ? p + 1 : NULL;
	}
	return 300;
}

EXPORT gp_cu_result cuMemcpyPeerAsync(gp_cu_dptr dst, gp_cu_context dc, gp_cu_dptr src, gp_cu_context sc, size_t n, gp_cu_stream s)
{
	int a = ((struct fctx *)sc)->dev, b = ((struct fctx *)dc)->dev, q = ((struct fstream *)s)->dev;
	int other = q == a ? b : a;

	FAILPOINT("cuMemcpyPeerAsync");
	if (dev_of(dst) != b || dev_of(src) != a)
		return GP_CUDA_ERROR_INVALID_VALUE;
	work((struct fstream *)s);
	copy(host_of(dst), host_of(src), n, a == b ? "d2d" : "peer");
	if (a != b && peer_on[q][other])
		ce_time(s, n, peer_gbps(a, b), 0, a, b);
	else
		ce_time(s, n, a == b ? 1000 : 20, 0, -1, -1);
	return GP_CUDA_SUCCESS;
}

EXPORT gp_cu_result cuStreamCreate(gp_cu_stream *s, unsigned flags)
{
	struct fstream *f = calloc(1, sizeof(*f));

	(void)flags;
	if (!f)
		return GP_CUDA_ERROR_OUT_OF_MEMORY;
	f->dev = current ? current->dev : 0;
	sched_add(f);
	*s = (gp_cu_stream)f;
	return GP_CUDA_SUCCESS;
}

EXPORT gp_cu_result cuStreamDestroy_v2(gp_cu_stream s)
{
	sched_remove((struct fstream *)s);
	free(s);
	return GP_CUDA_SUCCESS;
}

EXPORT gp_cu_result cuStreamSynchronize(gp_cu_stream s) { (void)s; sched_settle(); return GP_CUDA_SUCCESS; }

/* Every stream may wait for an event of any GPU's stream. */
EXPORT gp_cu_result cuStreamWaitEvent(gp_cu_stream s, gp_cu_event e, unsigned flags)
{
	FAILPOINT("cuStreamWaitEvent");
	if (!s || !e || flags)
		return GP_CUDA_ERROR_INVALID_VALUE;
	sched_wait((struct fstream *)s, (struct fevent *)e);
	return GP_CUDA_SUCCESS;
}

/* The gate: every gated stream starts at one common virtual instant. */
EXPORT gp_cu_result cuMemsetD32Async(gp_cu_dptr d, unsigned v, size_t n, gp_cu_stream s)
{
	FAILPOINT("cuMemsetD32Async");
	if (!s || dev_of(d) < 0 || dev_of(d + n * 4 - 1) != dev_of(d) || (d & 3))
		return GP_CUDA_ERROR_INVALID_VALUE;
	work((struct fstream *)s);
	for (size_t i = 0; i < n; i++)
		memcpy((char *)host_of(d) + 4 * i, &v, 4);
	return GP_CUDA_SUCCESS;
}

EXPORT gp_cu_result cuStreamWaitValue32_v2(gp_cu_stream s, gp_cu_dptr addr, gp_cu_u32 v, unsigned flags)
{
	(void)addr, (void)v, (void)flags;
	sched_gate((struct fstream *)s);
	return GP_CUDA_SUCCESS;
}

EXPORT gp_cu_result cuEventCreate(gp_cu_event *e, unsigned flags)
{
	(void)flags;
	*e = (gp_cu_event)calloc(1, sizeof(struct fevent));
	return *e ? GP_CUDA_SUCCESS : GP_CUDA_ERROR_OUT_OF_MEMORY;
}

/* Its queued records and waits are played first (they point at it). */
EXPORT gp_cu_result cuEventDestroy_v2(gp_cu_event e) { sched_settle(); free(e); return GP_CUDA_SUCCESS; }

EXPORT gp_cu_result cuEventRecord(gp_cu_event e, gp_cu_stream s)
{
	sched_record((struct fstream *)s, (struct fevent *)e);
	((struct fevent *)e)->sops = ((struct fstream *)s)->ops;
	((struct fevent *)e)->ops = ops_all;
	return GP_CUDA_SUCCESS;
}

EXPORT gp_cu_result cuEventSynchronize(gp_cu_event e) { (void)e; sched_settle(); return GP_CUDA_SUCCESS; }

/* FAKECUDA_WINDOWS=FILE: a line per timed window (the events a, b of one stream): its milliseconds,
 * the work queued on its stream between a and b (copies), and the work queued anywhere since the end
 * of the previous window timed, before a (gap: what ran between two timed windows). */
static void window(gp_cu_event a, gp_cu_event b, float ms)
{
	const char *path = getenv("FAKECUDA_WINDOWS");
	const struct fevent *x = (const struct fevent *)a, *y = (const struct fevent *)b;
	FILE *f = path && *path ? fopen(path, "a") : NULL;

	if (f) {
		fprintf(f, "ms=%.6f copies=%ld gap=%ld\n", ms, y->sops - x->sops, x->ops > ops_timed ? x->ops - ops_timed : 0);
		fclose(f);
	}
	if (y->ops > ops_timed)
		ops_timed = y->ops;
}

EXPORT gp_cu_result cuEventElapsedTime_v2(float *ms, gp_cu_event a, gp_cu_event b)
{
	sched_settle();
	if (!((struct fevent *)a)->recorded || !((struct fevent *)b)->recorded)
		return GP_CUDA_ERROR_INVALID_HANDLE;
	*ms = (float)((((struct fevent *)b)->t - ((struct fevent *)a)->t) * 1e3);
	window(a, b, *ms);
	return GP_CUDA_SUCCESS;
}

#ifdef FAKECUDA_DMABUF
GP_CU_FUNCS_OPTIONAL(X_DECL)

EXPORT gp_cu_result cuMemGetHandleForAddressRange(void *handle, gp_cu_dptr p, size_t n, gp_cu_mem_range_handle_type t,
						  unsigned long long flags)
{
	const char *m = getenv("FAKECUDA_DMABUF_MMAP");
	int fd, pfd[2];

	(void)p;
	(void)t;
	(void)flags;
	if (m && !strcmp(m, "0")) {
		if (pipe(pfd))
			return GP_CUDA_ERROR_OUT_OF_MEMORY;
		close(pfd[1]);
		fd = pfd[0];
	} else if ((fd = memfd_create("fakecuda-dmabuf", MFD_CLOEXEC)) < 0 || ftruncate(fd, (off_t)n)) {
		if (fd >= 0)
			close(fd);
		return GP_CUDA_ERROR_OUT_OF_MEMORY;
	}
	*(int *)handle = fd;
	return GP_CUDA_SUCCESS;
}
#endif

EXPORT gp_cu_result cuDeviceGetAttribute(int *v, gp_cu_device_attribute a, gp_cu_device d)
{
	const char *sms = getenv("FAKECUDA_SMS"), *l2 = getenv("FAKECUDA_L2");

	if (d < 0 || d >= ngpus())
		return GP_CUDA_ERROR_INVALID_DEVICE;
	switch (a) {
	case GP_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = sms ? atoi(sms) : 132; break;
	case GP_CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *v = l2 ? atoi(l2) : 1 << 20; break;
	case GP_CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: *v = 2048; break;
	case GP_CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED: *v = !getenv("FAKECUDA_NODMABUF"); break; /* 1 unless set */
	case GP_CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED: *v = !getenv("FAKECUDA_NOGDR"); break;
	case GP_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = getenv("FAKECUDA_CC") ? atoi(getenv("FAKECUDA_CC")) : 9; break;
	case GP_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
		*v = getenv("FAKECUDA_CC") && strchr(getenv("FAKECUDA_CC"), '.') ? atoi(strchr(getenv("FAKECUDA_CC"), '.') + 1) : 0;
		break;
	default: return GP_CUDA_ERROR_INVALID_VALUE;
	}
	return GP_CUDA_SUCCESS;
}
