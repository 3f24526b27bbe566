/* gpup2p — pin, map, copy through the mapping, verify through CUDA. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "gpup2p/clock.h"
#include "gpup2p/bench.h"
#include "gpup2p/gpu.h"
#include "gpup2p/pinmap.h"

struct pm {
	struct gp_cuda *c;
	const struct gp_pinmap_spec *s;
	struct gp_pinmap_result *r;
	struct gp_err *e;
	gp_cuda_stream *st;
	uint8_t *host;             /* pinned, size bytes */
	void *map;
	void *dmabuf_base;         /* the dma-buf backend's whole mapping */
	uint64_t dmabuf_len;
};

/* Copy through the mapping `iters` times (direction dir), then check through CUDA. */
static int through_map(struct pm *P, int dir)
{
	const struct gp_pinmap_spec *s = P->s;
	double *t = calloc((size_t)s->iters, sizeof(double));
	uint64_t seed = dir == GP_PM_WRITE ? 11 : 12;
	gp_dptr at = P->r->va + s->offset;
	struct gp_stats st;
	double tmin;
	int64_t bad;

	if (!t)
		return gp_err_set(P->e, GP_E_FAIL, ENOMEM, "out of memory");
	if (dir == GP_PM_READ) {
		/* the GPU holds the pattern (written by CUDA), the host buffer something else */
		gp_pattern_fill(P->host, s->size, seed);
		if (gp_cuda_h2d(P->c, P->st, at, P->host, s->size, P->e) || gp_cuda_sync(P->c, P->st, P->e)) {
			free(t);
			return -EIO;
		}
		memset(P->host, 0, s->size);
	} else {
		gp_pattern_fill(P->host, s->size, seed);
	}
	for (int k = 0; k < s->iters; k++) {
		double t0 = (gp_clock_s() * 1e6);

		if (dir == GP_PM_WRITE)
			gp_wccopy_to(P->map, P->host, s->size, s->isa);
		else
			gp_wccopy_from(P->host, P->map, s->size, s->isa);
		t[k] = (gp_clock_s() * 1e6) - t0;
	}
	if (dir == GP_PM_WRITE) {
		/* read back through CUDA into the cleared host buffer */
		memset(P->host, 0, s->size);
		if (gp_cuda_d2h(P->c, P->st, P->host, at, s->size, P->e) || gp_cuda_sync(P->c, P->st, P->e)) {
			free(t);
			return -EIO;
		}
	}
	tmin = t[0];
	bad = gp_pattern_check(P->host, s->size, seed, &P->r->want, &P->r->got);
	if (bad >= 0 && P->r->verified != 0) {
		P->r->verified = 0;
		P->r->bad_dir = dir;
		P->r->bad_offset = bad;
	} else if (P->r->verified < 0) {
		P->r->verified = 1;
	}
	/* bandwidth statistics over the copies, and the fastest copy's time */
	{
		double *g = calloc((size_t)s->iters, sizeof(double));

		for (int k = 0; g && k < s->iters; k++)
			g[k] = gp_gbps(s->size, t[k] / 1e3);
		gp_stats_compute(g, g ? s->iters : 0, &st);
		free(g);
	}
	for (int k = 1; k < s->iters; k++)
		tmin = t[k] < tmin ? t[k] : tmin;
	if (dir == GP_PM_WRITE) {
		P->r->write_gbps = st.median;
		P->r->write_min = st.min;
		P->r->write_max = st.max;
		P->r->write_us_min = tmin;
	} else {
		P->r->read_gbps = st.median;
		P->r->read_min = st.min;
		P->r->read_max = st.max;
		P->r->read_us_min = tmin;
	}
	free(t);
	return 0;
}

/* After a pin failed for lack of BAR space: add how much BAR1 the driver says is left (live NVML). */
static void bar1_left(const char *bdf, struct gp_err *e)
{
	struct gp_gpu_facts *f = calloc(1, sizeof(*f));
	struct gp_err e2 = { 0 };
	const struct gp_gpu_info *g;

	if (f && gp_gpu_nvml_read(f, 0, &e2) == 0 && (g = gp_gpu_find(f, bdf)) && g->bar1) {
		size_t l = strlen(e->msg);

		snprintf(e->msg + l, sizeof(e->msg) - l, "; BAR1 of %s: %llu MiB free of %llu MiB", bdf,
			 (unsigned long long)(g->bar1_free >> 20), (unsigned long long)(g->bar1 >> 20));
	}
	free(f);
}

/* Export [va, va+len) of GPU gpu as a dma-buf and mmap it. 0 and the mapping, or -errno and why. */
static int dmabuf_mmap(struct gp_cuda *c, int gpu, gp_dptr va, uint64_t len, void **m, char *why, size_t n)
{
	struct gp_err e2 = { 0 };
	int fd = -1, err;

	if (gp_cuda_dmabuf_fd(c, gpu, va, len, &fd, &e2)) {
		snprintf(why, n, "%s", e2.msg);
		return -ENODEV;
	}
	*m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	err = errno;
	close(fd);
	if (*m != MAP_FAILED)
		return 0;
	snprintf(why, n, "exported, but mmap of it fails with errno %d (%s): this driver does not map dma-bufs for "
		 "the CPU", err, err == 524 ? "ENOTSUPP" : strerror(err));
	return -err;
}

int gp_pinmap_dmabuf_probe(struct gp_cuda *c, int gpu, char *why, size_t n)
{
	struct gp_err e2 = { 0 };
	gp_dptr va = 0;
	void *m;
	int rc;

	if (gp_cuda_alloc(c, gpu, 65536, &va, &e2)) {
		snprintf(why, n, "%s", e2.msg);
		return 0;
	}
	rc = dmabuf_mmap(c, gpu, va, 65536, &m, why, n);
	if (!rc) {
		munmap(m, 65536);
		snprintf(why, n, "CUDA dma-buf export, mapped with mmap");
	}
	gp_cuda_free(c, gpu, va);
	return rc == 0;
}

/* Without gpup2p.ko: map through a dma-buf export where the driver allows it (mmap of the fd).
 * Returns 0 and the mapping, or the combined reason neither backend works. */
static int dmabuf_map(struct pm *P, const char *kmod_why, uint64_t span)
{
	char why[512];
	void *m;

	if (gp_cuda_alloc(P->c, P->s->gpu, span, &P->r->va, P->e))
		return -EIO;
	if (dmabuf_mmap(P->c, P->s->gpu, P->r->va, span, &m, why, sizeof(why)))
		return gp_err_set(P->e, GP_E_UNAVAIL, ENODEV, "no pin backend: %s; dma-buf: %s", kmod_why, why);
	P->map = (uint8_t *)m + P->s->offset;
	P->dmabuf_len = span;
	P->dmabuf_base = m;
	P->r->backend = "dmabuf";
	return 0;
}

int gp_pinmap_run(struct gp_cuda *c, const struct gp_pinmap_spec *s, struct gp_pinmap_result *r, struct gp_err *e)
{
	struct pm P = { .c = c, .s = s, .r = r, .e = e };
	struct gp_pin_dev d;
	uint64_t span = (s->offset + s->size + 65535) & ~65535ULL;
	double t0;
	int rc, pinned = 0;

	memset(r, 0, sizeof(*r));
	r->verified = -1;
	r->bad_offset = -1;
	if (s->offset % 4096 || s->size == 0 || s->iters < 1 || s->gpu < 0 || s->gpu >= c->n)
		return gp_err_set(e, GP_E_USAGE, EINVAL, "size must be > 0, offset a multiple of 4 KiB, GPU in range");
	r->backend = "kmod";
	if ((rc = gp_pin_open(&d, s->device, e))) {
		char why[768];

		if (e->cls != GP_E_UNAVAIL || s->what == GP_PM_PIN_ONLY)
			return rc;
		snprintf(why, sizeof(why), "%s", e->msg);
		rc = dmabuf_map(&P, why, span);
		if (!rc && !(rc = gp_cuda_stream_new(c, s->gpu, &P.st, e) || gp_cuda_scratch(c, s->size, (void **)&P.host, e)
				   ? -EIO : 0)) {
			if (s->what & GP_PM_WRITE)
				rc = through_map(&P, GP_PM_WRITE);
			if (!rc && (s->what & GP_PM_READ))
				rc = through_map(&P, GP_PM_READ);
		}
		if (P.dmabuf_base)
			munmap(P.dmabuf_base, P.dmabuf_len);
		gp_cuda_stream_free(c, P.st);
		if (r->va)
			gp_cuda_free(c, s->gpu, r->va);
		return rc;
	}
	t0 = (gp_clock_s() * 1e6);
	rc = gp_cuda_alloc(c, s->gpu, span, &r->va, e);
	r->alloc_us = (gp_clock_s() * 1e6) - t0;
	if (!rc && r->va % 65536)
		rc = gp_err_set(e, GP_E_FAIL, EINVAL, "cuMemAlloc returned 0x%llx, not 64 KiB aligned",
				(unsigned long long)r->va);
	if (!rc) {
		t0 = (gp_clock_s() * 1e6);
		rc = gp_pin_range(&d, r->va, span, s->persistent ? 1 : 0, &r->r, e);
		r->pin_us = (gp_clock_s() * 1e6) - t0;
		pinned = !rc;
		if (rc && e->errnum == ENOMEM)
			bar1_left(c->gpu[s->gpu].bdf, e);
	}
	if (!rc && s->what != GP_PM_PIN_ONLY) {
		rc = gp_cuda_stream_new(c, s->gpu, &P.st, e) || gp_cuda_scratch(c, s->size, (void **)&P.host, e) ? -EIO : 0;
		if (!rc) {
			t0 = (gp_clock_s() * 1e6);
			rc = gp_pin_map(&d, &r->r, s->offset, s->size, &P.map, e);
			r->map_us = (gp_clock_s() * 1e6) - t0;
		}
		if (!rc && (s->what & GP_PM_WRITE))
			rc = through_map(&P, GP_PM_WRITE);
		if (!rc && (s->what & GP_PM_READ))
			rc = through_map(&P, GP_PM_READ);
		if (P.map) {
			t0 = (gp_clock_s() * 1e6);
			gp_pin_unmap(P.map, s->size);
			r->unmap_us = (gp_clock_s() * 1e6) - t0;
		}
		gp_cuda_stream_free(c, P.st);
	}
	if (pinned) {
		struct gp_err e2 = { 0 };

		t0 = (gp_clock_s() * 1e6);
		if (gp_pin_release(&d, &r->r, rc ? &e2 : e) && !rc)
			rc = -EIO;
		r->unpin_us = (gp_clock_s() * 1e6) - t0;
	}
	if (r->va)
		gp_cuda_free(c, s->gpu, r->va);
	gp_pin_close(&d);
	return rc;
}
