/* gpup2p — pointer-chase latency: a chain in host or peer memory followed by one GPU thread at a time,
 * on each SM in turn. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpup2p/chase.h"
#include "gpup2p/numa.h"
#include "gpup2p/smcopy.h"
#include "gpup2p/xfer.h"

#define WARMUP_HOPS 1000

struct chase {
	struct gp_cuda *c;
	const struct gp_xfer_spec *s;
	struct gp_err *e;
	void *host;                /* the chain in pinned host memory (H2D), or its image (PEER) */
	gp_dptr dev;               /* the chain as the GPU addresses it */
	int peer_alloc;            /* dev is peer_gpu's memory */
	uint64_t *out;             /* mapped pinned: last pointer, nanoseconds */
	gp_dptr dout;
	gp_cuda_stream *st;
	unsigned sms;              /* the chasing GPU's SMs: the launch's blocks */
};

/* One launch of `hops` loads from `from` by block `block` of a grid of k->sms; *ns = the kernel's own
 * timing, *end = where it stopped. */
static int launch(struct chase *k, gp_dptr from, uint64_t hops, unsigned block, double *ns, uint64_t *end)
{
	k->out[0] = k->out[1] = 0;
	if (gp_sm_chase(k->c, k->st, from, hops, k->dout, block, k->sms, k->e) || gp_cuda_sync(k->c, k->st, k->e))
		return -EIO;
	*end = __atomic_load_n(&k->out[0], __ATOMIC_ACQUIRE);
	*ns = (double)__atomic_load_n(&k->out[1], __ATOMIC_ACQUIRE);
	return 0;
}

static int64_t offset_in(const struct chase *k, uint64_t a)
{
	return a >= k->dev && a - k->dev < k->s->size ? (int64_t)(a - k->dev) : -1;
}

/* Launch `hops` loads from *at by block `block` and check where they ended against the host's walk of
 * the chain; *at moves on, *ns = the launch's nanoseconds. 0; 1 when the chase ended elsewhere, or the
 * walk itself failed (r says where, batch `batch`: -1 the warm-up); -EIO. */
static int chase_from(struct chase *k, uint64_t *at, uint64_t hops, unsigned block, int batch, double *ns,
		      struct gp_xfer_result *r)
{
	const struct gp_xfer_spec *s = k->s;
	uint64_t want = gp_chain_walk(k->host, s->size, s->stride, k->dev, *at, hops), end;

	if (launch(k, *at, hops, block, ns, &end))
		return -EIO;
	if (!want || end != want) {
		r->verified = 0;
		r->bad_copy = batch;
		r->want_offset = want ? offset_in(k, want) : -1;
		r->bad_offset = offset_in(k, end);
		return 1;
	}
	*at = want;
	return 0;
}

/* A warm-up, then `reps` batches of `iters` loads each, spread evenly over the GPU's SMs: one launch
 * per SM in turn (with fewer loads than SMs, the first `iters` SMs, a load each), each going on where
 * the previous one stopped. A batch's figure is the mean over those SMs of each one's time per load
 * (a peer load on 2x H200 took 794-856 ns by SM, results/chase-sm-h200x2-*.txt; nvbandwidth's latency
 * tests also report the mean over the SMs). */
static int measure(struct chase *k, struct gp_xfer_result *r)
{
	const struct gp_xfer_spec *s = k->s;
	double *us = calloc((size_t)s->reps, sizeof(double)), ns = 0;
	uint64_t at = k->dev, each = (uint64_t)s->iters / k->sms, extra = (uint64_t)s->iters % k->sms;
	unsigned used = each ? k->sms : (unsigned)extra;
	int n = 0, rc;

	if (!us)
		return gp_err_set(k->e, GP_E_FAIL, ENOMEM, "out of memory");
	r->verified = 1;
	rc = chase_from(k, &at, WARMUP_HOPS, 0, -1, &ns, r);
	for (int i = 0; i < s->reps && !rc; i++) {
		double per_load = 0;

		for (unsigned b = 0; b < used && !rc; b++) {
			uint64_t hops = each + (b < extra);

			rc = chase_from(k, &at, hops, b, i, &ns, r);
			per_load += ns / (double)hops;
		}
		if (!rc)
			us[n++] = per_load / used / 1e3;
	}
	if (rc >= 0)
		gp_stats_compute(us, n, &r->us);
	free(us);
	return rc < 0 ? rc : 0;
}

static int setup(struct chase *k)
{
	const struct gp_xfer_spec *s = k->s;
	int g = s->gpu;
	void *img;
	int64_t slots;

	if (gp_sm_count(k->c, g, &k->sms, k->e) || gp_cuda_stream_new(k->c, g, &k->st, k->e) ||
	    gp_sm_prepare(k->c, k->st, k->e) || gp_cuda_host_alloc(k->c, 64, (void **)&k->out, k->e) ||
	    gp_cuda_host_dptr(k->c, k->out, &k->dout, k->e))
		return -EIO;
	if (s->kind == GP_XFER_PEER) {
		int rc = gp_cuda_peer_require(k->c, g, s->peer_gpu, k->e);

		if (rc)
			return rc;
		if (gp_cuda_alloc(k->c, s->peer_gpu, s->size, &k->dev, k->e))
			return -EIO;
		k->peer_alloc = 1;
		/* the image stays on the host for the walk; the GPU gets a copy */
		if (!(k->host = malloc(s->size)))
			return gp_err_set(k->e, GP_E_FAIL, ENOMEM, "out of memory");
		if (gp_cuda_scratch(k->c, s->size, &img, k->e))
			return -EIO;
	} else {
		if (gp_cuda_host_alloc(k->c, s->size, &k->host, k->e) || gp_cuda_host_dptr(k->c, k->host, &k->dev, k->e))
			return -EIO;
		img = k->host;
	}
	slots = gp_chain_build(img, s->size, s->stride, s->random, s->seed, k->dev);
	if (slots == -ENOMEM)
		return gp_err_set(k->e, GP_E_FAIL, ENOMEM, "out of memory");
	if (slots < 0)
		return gp_err_set(k->e, GP_E_USAGE, EINVAL, "a chase chain needs a stride of 8 bytes or a multiple, "
				  "and room for two slots at least");
	if (k->peer_alloc) {
		memcpy(k->host, img, s->size);
		if (gp_cuda_h2d(k->c, k->st, k->dev, img, s->size, k->e) || gp_cuda_sync(k->c, k->st, k->e))
			return -EIO;
	}
	return 0;
}

int gp_chase_run(struct gp_cuda *c, const struct gp_xfer_spec *s, struct gp_xfer_result *r, struct gp_err *e)
{
	struct chase k = { .c = c, .s = s, .e = e };
	struct gp_numa_saved sv = { 0 };
	int rc;

	memset(r, 0, sizeof(*r));
	r->host_node = -1;
	r->bad_offset = r->want_offset = -1;
	if (!s->size || s->iters < 1 || s->reps < 1 || s->gpu < 0 || s->gpu >= c->n ||
	    (s->kind != GP_XFER_H2D && s->kind != GP_XFER_PEER) ||
	    (s->kind == GP_XFER_PEER && (s->peer_gpu < 0 || s->peer_gpu >= c->n || s->peer_gpu == s->gpu)))
		return gp_err_set(e, GP_E_USAGE, EINVAL, "invalid chase: size, counts or GPU numbers out of range");
	if (s->kind == GP_XFER_H2D && s->numa >= 0 && gp_numa_bind(s->numa, &sv, e))
		return -EINVAL;
	rc = setup(&k);
	if (!rc)
		rc = measure(&k, r);
	if (!rc && s->kind == GP_XFER_H2D)
		r->host_node = gp_numa_of(k.host);
	gp_cuda_stream_free(c, k.st);
	if (k.peer_alloc) {
		free(k.host);
		gp_cuda_free(c, s->peer_gpu, k.dev);
	} else {
		gp_cuda_host_free(c, k.host);
	}
	gp_cuda_host_free(c, k.out);
	gp_numa_unbind(&sv);
	return rc;
}
