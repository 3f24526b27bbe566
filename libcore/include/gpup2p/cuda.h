/* gpup2p — the CUDA driver API, loaded with dlopen at run time: the binary runs, and says "CUDA not
 * available", on a machine without libcuda. Every call's result is checked; an error carries the
 * CUDA error name (cuGetErrorName) and the call that failed. GPUP2P_LIBCUDA names another library
 * (a test double, or a specific driver's libcuda.so.1). */
#ifndef GPUP2P_CUDA_H
#define GPUP2P_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "gpup2p/err.h"
#include "gpup2p/pci.h"

typedef uint64_t gp_dptr;          /* a device address (CUdeviceptr) */
typedef struct gp_cuda_stream gp_cuda_stream;

#define GP_CUDA_MODULES 3              /* PTX texts per GPU: SM kernels, Hopper bulk copy, verification */

struct gp_cuda_gpu {
	int ordinal;                   /* CUDA device ordinal */
	char name[128];
	char bdf[GP_BDF_LEN];          /* "0000:3b:00.0" (gp_pci_parse_bdf's form; domain up to 8 digits) */
	void *ctx;                     /* primary context (CUcontext), retained */
	/* PTX modules loaded on it by gp_cuda_kernel: the text, the module (NULL when the load failed) and
	 * the load's CUresult (a text that failed is not tried again) */
	const char *module_ptx[GP_CUDA_MODULES];
	void *module[GP_CUDA_MODULES];
	int module_rc[GP_CUDA_MODULES];
};

struct gp_cuda {
	void *lib;
	int driver_version;            /* 13000 = 13.0 */
	int n;                         /* GPUs, in PCI bus order: every one CUDA sees */
	struct gp_cuda_gpu *gpu;       /* n of them (heap) */
	unsigned char *peer_on;        /* n * n: peer access enabled from i to j at [i * n + j] */
	void *scratch;                 /* pinned host memory kept for reuse (gp_cuda_scratch) */
	size_t scratch_n;
};

#define GP_CUDA_PROBE_GPUS 64

/* What gp_cuda_probe found. */
struct gp_cuda_probe {
	int loaded;                    /* libcuda and its entry points could be loaded */
	char why[256];                 /* why not */
	int init;                      /* cuInit's CUresult: 0 success */
	char init_name[64];            /* its name (cuGetErrorName) */
	int driver_version;            /* cuDriverGetVersion (13000 = 13.0), 0 unknown */
	char lib[256];                 /* the library loaded, links resolved ("/usr/lib/.../libcuda.so.580.159.04"),
	                                  "" unknown: its file name carries the driver's version */
	int devices;                   /* cuDeviceGetCount after a successful cuInit, else -1 */
	int dmabuf;                    /* CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED: 1 every device, 0 some device
	                                  says no (dmabuf_dev: the first), -1 unknown (no device, call failed) */
	int dmabuf_dev;
	int ngpu;                      /* devices described in gpu[] (the first GP_CUDA_PROBE_GPUS) */
	struct gp_cuda_probe_gpu {
		char bdf[GP_BDF_LEN];      /* its PCI address, "" when CUDA did not give one */
		int gdr;                   /* CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED: 1, 0, -1 unknown */
		int cc;                    /* compute capability x10 (90 is 9.0), 0 unknown */
	} gpu[GP_CUDA_PROBE_GPUS];
};

/* Load libcuda and call cuInit, cuDriverGetVersion, cuDeviceGetCount and each device's dma-buf
 * attribute only: no context is created.
 * Never fails: p says what happened. The library stays loaded (unloading it after cuInit is unsafe). */
void gp_cuda_probe(struct gp_cuda_probe *p);

/* The probe's entry for the GPU at PCI address bdf, or NULL when CUDA did not list it. */
const struct gp_cuda_probe_gpu *gp_cuda_probe_find(const struct gp_cuda_probe *p, const char *bdf);

/* Load libcuda, cuInit, list every GPU in PCI bus order (numeric: domain, bus, device, function) and
 * retain their primary contexts. A bus id CUDA gives that is no PCI address ⇒ GP_E_DATA.
 * No library ⇒ GP_E_UNAVAIL "CUDA not available (...)"; no GPU ⇒ GP_E_UNAVAIL "no GPU";
 * any failing call ⇒ GP_E_FAIL naming it and its CUDA error. */
int gp_cuda_open(struct gp_cuda *c, struct gp_err *e);

/* gp_cuda_open in two steps: gp_cuda_list loads libcuda, calls cuInit and lists the GPUs in PCI bus
 * order without creating a context (enough for gp_cuda_can_peer; errors as gp_cuda_open);
 * gp_cuda_retain then retains the primary contexts the other calls need (GP_E_FAIL, the session closed). */
int gp_cuda_list(struct gp_cuda *c, struct gp_err *e);
int gp_cuda_retain(struct gp_cuda *c, struct gp_err *e);
/* gp_cuda_open retaining the contexts of the first nctx GPUs (PCI order) only: a probe that needs one
 * GPU does not set up the others. GPUs from nctx on are listed but must not be used. */
int gp_cuda_open_gpus(struct gp_cuda *c, int nctx, struct gp_err *e);

/* Disable what was enabled, release the contexts, unload the library. */
void gp_cuda_close(struct gp_cuda *c);

/* Make GPU g's context current on this thread. */
int gp_cuda_use(struct gp_cuda *c, int g, struct gp_err *e);

/* Whether GPU a can access GPU b's memory directly (cuDeviceCanAccessPeer): 1, 0, or -errno. */
int gp_cuda_can_peer(struct gp_cuda *c, int a, int b, struct gp_err *e);

/* Enable (on=1) or disable (on=0) peer access from GPU a to GPU b's memory. Idempotent. */
int gp_cuda_peer(struct gp_cuda *c, int a, int b, int on, struct gp_err *e);

/* Peer access from GPU a to GPU b's memory, which the copy cannot do without: turned on (0), or
 * GP_E_UNAVAIL "GPUa cannot access GPUb's memory directly (cuDeviceCanAccessPeer = 0)", or -errno. */
int gp_cuda_peer_require(struct gp_cuda *c, int a, int b, struct gp_err *e);

/* Device memory on GPU g. */
int gp_cuda_alloc(struct gp_cuda *c, int g, size_t n, gp_dptr *p, struct gp_err *e);
void gp_cuda_free(struct gp_cuda *c, int g, gp_dptr p);

/* Page-locked host memory (cuMemHostAlloc, portable: usable from every GPU), and its release. */
int gp_cuda_host_alloc(struct gp_cuda *c, size_t n, void **p, struct gp_err *e);
void gp_cuda_host_free(struct gp_cuda *c, void *p);

/* Pinned host memory of at least n bytes, kept by the session and reused by the next caller
 * (pinning is slow: a GiB can take a second). Valid until the next call or gp_cuda_close. */
int gp_cuda_scratch(struct gp_cuda *c, size_t n, void **p, struct gp_err *e);

/* A device-visible pointer for mapped pinned host memory (for the stream gate). */
int gp_cuda_host_dptr(struct gp_cuda *c, void *h, gp_dptr *d, struct gp_err *e);

/* Streams and events on GPU g. */
int gp_cuda_stream_new(struct gp_cuda *c, int g, gp_cuda_stream **s, struct gp_err *e);
void gp_cuda_stream_free(struct gp_cuda *c, gp_cuda_stream *s);
int gp_cuda_sync(struct gp_cuda *c, gp_cuda_stream *s, struct gp_err *e);

/* Copies queued on a stream (the copy engine of the stream's GPU). Host pointers may be pageable. */
int gp_cuda_h2d(struct gp_cuda *c, gp_cuda_stream *s, gp_dptr dst, const void *src, size_t n, struct gp_err *e);
int gp_cuda_d2h(struct gp_cuda *c, gp_cuda_stream *s, void *dst, gp_dptr src, size_t n, struct gp_err *e);
/* Between two GPUs' memory (or within one): cuMemcpyPeerAsync; direct when peer access is on,
 * staged through the host by the driver when it is off. */
int gp_cuda_d2d(struct gp_cuda *c, gp_cuda_stream *s, int gdst, gp_dptr dst, int gsrc, gp_dptr src, size_t n,
		struct gp_err *e);

/* Hold the stream until the 32-bit word at flag (mapped pinned host memory) becomes nonzero. */
int gp_cuda_gate(struct gp_cuda *c, gp_cuda_stream *s, gp_dptr flag, struct gp_err *e);

/* Record an event on the stream; *ev is created on first use. */
int gp_cuda_mark(struct gp_cuda *c, gp_cuda_stream *s, void **ev, struct gp_err *e);
/* Hold the stream until the work before event ev's last record (on any GPU's stream) is done. */
int gp_cuda_wait(struct gp_cuda *c, gp_cuda_stream *s, void *ev, struct gp_err *e);
/* Milliseconds between two recorded events (waits for the second). */
int gp_cuda_elapsed(struct gp_cuda *c, void *a, void *b, float *ms, struct gp_err *e);
void gp_cuda_event_free(struct gp_cuda *c, void *ev);

/* An attribute of GPU g (cuDeviceGetAttribute; attr is a CUdevice_attribute value). */
int gp_cuda_attr(struct gp_cuda *c, int g, int attr, int *v, struct gp_err *e);

/* The kernel `name` of the PTX module `ptx`, JIT-compiled for GPU g on first use (a module per text,
 * GP_CUDA_MODULES texts per GPU and session, told apart by address). A text the JIT refused (a driver
 * too old for its PTX version or target) fails again at once with the same error, without a new JIT;
 * after CUDA_ERROR_OUT_OF_MEMORY the next call tries again. *fn is a CUfunction. */
int gp_cuda_kernel(struct gp_cuda *c, int g, const char *ptx, const char *name, void **fn, struct gp_err *e);

/* Let kernel fn of GPU g use `bytes` of dynamic shared memory (static and dynamic together above 48 KiB
 * need this opt-in). */
int gp_cuda_kernel_smem(struct gp_cuda *c, int g, void *fn, int bytes, struct gp_err *e);

/* Queue a kernel on the stream: grid x block threads, smem bytes of dynamic shared memory, params as
 * cuLaunchKernel takes them. */
int gp_cuda_launch(struct gp_cuda *c, gp_cuda_stream *s, void *fn, unsigned grid, unsigned block, unsigned smem,
		   void **params, struct gp_err *e);

/* An 8-byte word of the stream's GPU memory that belongs to the stream: allocated and set to 0 (on the
 * stream) at the first call, the same address after, freed with the stream. Kernels of one stream
 * run one after another, so a kernel may keep state there for the next, as the bulk copy keeps its
 * chunk counter (smcopy.h). */
int gp_cuda_stream_word(struct gp_cuda *c, gp_cuda_stream *s, gp_dptr *word, struct gp_err *e);

/* The GPU a stream belongs to. */
int gp_cuda_stream_gpu(const gp_cuda_stream *s);

/* Export [p, p+n) of GPU g's memory as a dma-buf file descriptor (cuMemGetHandleForAddressRange).
 * GP_E_UNAVAIL when the driver has no such call. */
int gp_cuda_dmabuf_fd(struct gp_cuda *c, int g, gp_dptr p, size_t n, int *fd, struct gp_err *e);

#endif
