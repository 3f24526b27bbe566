/* A test double of libcuda.so.1 (tests only, never installed): the driver API entry points gpup2p
 * loads, over host memory, with a virtual clock so that timings are known in advance. It lets the copy
 * and bench commands run end to end on a machine without a GPU (GPUP2P_LIBCUDA=.../libcuda.so.1).
 *
 * Controls (environment):
 *   FAKECUDA_GPUS=N        number of GPUs (default 2; 0 = cuInit says CUDA_ERROR_NO_DEVICE)
 *   FAKECUDA_NOPEER=1      cuDeviceCanAccessPeer says no
 *   FAKECUDA_CORRUPT=KIND  flip byte 4097 (or the last byte) of every copy of KIND: h2d, d2h, d2d, peer
 *   FAKECUDA_CORRUPT_NTH=N only the Nth copy of KIND (counting from 1, every copy of that kind)
 *   FAKECUDA_PEER_GBPS=S:D=R[,S:D=R...]  peer copies with access from CUDA device S to D at R GB/s
 *   FAKECUDA_FAIL=SYMBOL   that entry point returns CUDA_ERROR_OUT_OF_MEMORY (e.g. cuMemAlloc_v2)
 *   FAKECUDA_STUB=1        in the test guest: device memory comes from /dev/nvp2p_stub (the fake GPU
 *                          address space gpup2p.ko pins) and is reached through the ivshmem BAR2
 *                          (sysfs resource2), so that pin/map run end to end; cuMemFree frees the range
 *                          (the free callback fires); FAKECUDA_STUB_FLAGS=N passes allocation flags
 *                          to the stub (2: pinning fails with -ENOMEM, as when BAR1 is exhausted)
 * Rates of the virtual clock (GB/s): h2d 25, d2h 26 (pageable: half), within a GPU 1000, peer with
 * access 300, peer without 20 (bidir: each direction the same); every copy also costs 2 us. */
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

#include <cuda.h>

#define MAXG 8
#define EXPORT __attribute__((visibility("default")))

struct fctx { int dev; };
struct fstream { int dev; double t; };
struct fevent { double t; int recorded; };

static struct fctx ctxs[MAXG];
static struct fctx *current;
static int peer_on[MAXG][MAXG];
static int inited;

static int ngpus(void)
{
	const char *s = getenv("FAKECUDA_GPUS");
	int n = s ? atoi(s) : 2;

	return n < 0 ? 0 : n > MAXG ? MAXG : n;
}

static int failing(const char *sym)
{
	const char *s = getenv("FAKECUDA_FAIL");

	return s && !strcmp(s, sym);
}

#define FAILPOINT(sym) do { if (failing(sym)) return CUDA_ERROR_OUT_OF_MEMORY; } while (0)

/* Pinned host allocations, to tell pinned from pageable. */
static struct { void *p; size_t n; } pinned[256];

static int is_pinned(const void *p)
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

/* Where a device pointer's bytes are in this process. */
static void *host_of(CUdeviceptr d)
{
	if (bar && d >= NVP2P_STUB_VA_BASE && d < NVP2P_STUB_VA_BASE + bar_len)
		return bar + (d - NVP2P_STUB_VA_BASE);
	return (void *)(uintptr_t)d;
}

static int dev_of(CUdeviceptr d)
{
	if (bar && d >= NVP2P_STUB_VA_BASE && d < NVP2P_STUB_VA_BASE + bar_len)
		return 0;
	for (int i = 0; i < 256; i++)
		if (dmem[i].p && (char *)(uintptr_t)d >= (char *)dmem[i].p && (char *)(uintptr_t)d < (char *)dmem[i].p + dmem[i].n)
			return dmem[i].dev;
	return -1;
}

static void copy(void *dst, const void *src, size_t n, const char *kind, struct fstream *s, double gbps)
{
	static long seen;
	const char *c = getenv("FAKECUDA_CORRUPT"), *nth = getenv("FAKECUDA_CORRUPT_NTH");

	memcpy(dst, src, n);
	if (c && !strcmp(c, kind) && n && (!nth || ++seen == atol(nth)))
		((unsigned char *)dst)[n > 4097 ? 4097 : n - 1] ^= 0xff;
	if (s)
		s->t += 2e-6 + (double)n / (gbps * 1e9);
}

EXPORT CUresult cuInit(unsigned flags)
{
	(void)flags;
	FAILPOINT("cuInit");
	if (ngpus() == 0)
		return CUDA_ERROR_NO_DEVICE;
	for (int i = 0; i < MAXG; i++)
		ctxs[i].dev = i;
	inited = 1;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDriverGetVersion(int *v) { *v = 13000; return CUDA_SUCCESS; }

EXPORT CUresult cuGetErrorName(CUresult r, const char **name)
{
	switch (r) {
	case CUDA_SUCCESS: *name = "CUDA_SUCCESS"; break;
	case CUDA_ERROR_OUT_OF_MEMORY: *name = "CUDA_ERROR_OUT_OF_MEMORY"; break;
	case CUDA_ERROR_NO_DEVICE: *name = "CUDA_ERROR_NO_DEVICE"; break;
	case CUDA_ERROR_INVALID_VALUE: *name = "CUDA_ERROR_INVALID_VALUE"; break;
	default: return CUDA_ERROR_INVALID_VALUE;
	}
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetCount(int *n) { *n = inited ? ngpus() : 0; return inited ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED; }
EXPORT CUresult cuDeviceGet(CUdevice *d, int i) { *d = i; return i < ngpus() ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE; }

EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
	snprintf(name, (size_t)len, "Fake GPU %d", (int)d);
	return CUDA_SUCCESS;
}

/* Listed in reverse bus order, so that gpup2p's PCI ordering is exercised. */
EXPORT CUresult cuDeviceGetPCIBusId(char *id, int len, CUdevice d)
{
	snprintf(id, (size_t)len, "0000:%02X:00.0", 0x10 * (ngpus() - (int)d));
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceCanAccessPeer(int *ok, CUdevice a, CUdevice b)
{
	const char *s = getenv("FAKECUDA_NOPEER");

	*ok = a != b && !(s && *s == '1');
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) { *c = (CUcontext)&ctxs[d]; return CUDA_SUCCESS; }
EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) { (void)d; return CUDA_SUCCESS; }
EXPORT CUresult cuCtxSetCurrent(CUcontext c) { current = (struct fctx *)c; return CUDA_SUCCESS; }

EXPORT CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned flags)
{
	(void)flags;
	if (!current)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (peer_on[current->dev][((struct fctx *)peer)->dev])
		return CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
	peer_on[current->dev][((struct fctx *)peer)->dev] = 1;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxDisablePeerAccess(CUcontext peer)
{
	if (!current)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!peer_on[current->dev][((struct fctx *)peer)->dev])
		return CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
	peer_on[current->dev][((struct fctx *)peer)->dev] = 0;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
	FAILPOINT("cuMemAlloc_v2");
	if (stub_mode()) {
		const char *fl = getenv("FAKECUDA_STUB_FLAGS");
		struct nvp2p_stub_alloc a = { .len = n, .flags = fl ? (__u32)atoi(fl) : 0 };

		if (ioctl(stubfd, NVP2P_STUB_ALLOC, &a))
			return CUDA_ERROR_OUT_OF_MEMORY;
		*p = (CUdeviceptr)a.va;
		return CUDA_SUCCESS;
	}
	for (int i = 0; i < 256; i++)
		if (!dmem[i].p) {
			dmem[i].p = malloc(n);
			if (!dmem[i].p)
				return CUDA_ERROR_OUT_OF_MEMORY;
			dmem[i].n = n;
			dmem[i].dev = current ? current->dev : 0;
			*p = (CUdeviceptr)(uintptr_t)dmem[i].p;
			return CUDA_SUCCESS;
		}
	return CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr p)
{
	if (stub_mode() && p >= NVP2P_STUB_VA_BASE) {
		__u64 va = p;

		return ioctl(stubfd, NVP2P_STUB_FREE, &va) ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
	}
	for (int i = 0; i < 256; i++)
		if (dmem[i].p && (CUdeviceptr)(uintptr_t)dmem[i].p == p) {
			free(dmem[i].p);
			dmem[i].p = NULL;
			return CUDA_SUCCESS;
		}
	return CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuMemHostAlloc(void **p, size_t n, unsigned flags)
{
	(void)flags;
	FAILPOINT("cuMemHostAlloc");
	for (int i = 0; i < 256; i++)
		if (!pinned[i].p) {
			pinned[i].p = calloc(1, n);
			pinned[i].n = n;
			*p = pinned[i].p;
			return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
		}
	return CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult cuMemFreeHost(void *p)
{
	for (int i = 0; i < 256; i++)
		if (pinned[i].p == p) {
			free(p);
			pinned[i].p = NULL;
			return CUDA_SUCCESS;
		}
	return CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *d, void *h, unsigned flags)
{
	(void)flags;
	*d = (CUdeviceptr)(uintptr_t)h;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
	FAILPOINT("cuMemcpyHtoDAsync_v2");
	copy(host_of(dst), src, n, "h2d", (struct fstream *)s, is_pinned(src) ? 25 : 12.5);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
	FAILPOINT("cuMemcpyDtoHAsync_v2");
	copy(dst, host_of(src), n, "d2h", (struct fstream *)s, is_pinned(dst) ? 26 : 13);
	return CUDA_SUCCESS;
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

EXPORT CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n, CUstream s)
{
	int a = ((struct fctx *)sc)->dev, b = ((struct fctx *)dc)->dev, q = ((struct fstream *)s)->dev;
	int other = q == a ? b : a;

	FAILPOINT("cuMemcpyPeerAsync");
	if (dev_of(dst) != b || dev_of(src) != a)
		return CUDA_ERROR_INVALID_VALUE;
	copy(host_of(dst), host_of(src), n, a == b ? "d2d" : "peer", (struct fstream *)s,
	     a == b ? 1000 : peer_on[q][other] ? peer_gbps(a, b) : 20);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamCreate(CUstream *s, unsigned flags)
{
	struct fstream *f = calloc(1, sizeof(*f));

	(void)flags;
	if (!f)
		return CUDA_ERROR_OUT_OF_MEMORY;
	f->dev = current ? current->dev : 0;
	*s = (CUstream)f;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamDestroy_v2(CUstream s) { free(s); return CUDA_SUCCESS; }
EXPORT CUresult cuStreamSynchronize(CUstream s) { (void)s; return CUDA_SUCCESS; }

/* The gate: every gated stream starts at one common virtual instant. */
EXPORT CUresult cuStreamWaitValue32_v2(CUstream s, CUdeviceptr addr, cuuint32_t v, unsigned flags)
{
	(void)addr, (void)v, (void)flags;
	((struct fstream *)s)->t = 0;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuEventCreate(CUevent *e, unsigned flags)
{
	(void)flags;
	*e = (CUevent)calloc(1, sizeof(struct fevent));
	return *e ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult cuEventDestroy_v2(CUevent e) { free(e); return CUDA_SUCCESS; }

EXPORT CUresult cuEventRecord(CUevent e, CUstream s)
{
	((struct fevent *)e)->t = ((struct fstream *)s)->t;
	((struct fevent *)e)->recorded = 1;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuEventSynchronize(CUevent e) { (void)e; return CUDA_SUCCESS; }

EXPORT CUresult cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b)
{
	if (!((struct fevent *)a)->recorded || !((struct fevent *)b)->recorded)
		return CUDA_ERROR_INVALID_HANDLE;
	*ms = (float)((((struct fevent *)b)->t - ((struct fevent *)a)->t) * 1e3);
	return CUDA_SUCCESS;
}
