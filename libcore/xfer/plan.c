/* gpup2p — the rows of gpup2p bench. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpup2p/bench_plan.h"
#include "gpup2p/smcopy.h"

const char *const gp_bench_threshold_modes[] = { "h2d", "d2h", "d2d", "p2p", "bidir", "one2all",
							       "all2one", "all2host", "host2all", NULL };

struct plan {
	const struct gp_bench_opts *o;
	uint64_t chain;                 /* SM latency: chain bytes (o->chain_size, or its default) */
	int sm;                         /* rows being planned are SM rows */
	struct gp_bench_row *rows;
	int n, cap;
	int group;                      /* the last pattern group number given */
};

static struct gp_bench_row *add(struct plan *p, const char *mode, const char *what)
{
	struct gp_bench_row *r;

	if (p->n == p->cap) {
		int cap = p->cap ? 2 * p->cap : 32;
		struct gp_bench_row *nr = realloc(p->rows, (size_t)cap * sizeof(*nr));

		if (!nr)
			return NULL;
		p->rows = nr;
		p->cap = cap;
	}
	r = &p->rows[p->n++];
	memset(r, 0, sizeof(*r));
	r->mode = mode;
	r->what = what;
	r->floor = -1;
	r->spec.iters = p->o->iters;
	r->spec.reps = p->o->reps;
	r->spec.numa = -1;
	r->spec.no_verify = p->o->no_verify;
	r->spec.seed = p->o->seed + (uint64_t)p->n * 7919;
	r->spec.sm = p->sm;
	return r;
}

static int host_node(const struct gp_bench_opts *o, int g)
{
	return o->numa >= 0 ? o->numa : o->gpu_numa ? o->gpu_numa[g] : -1;
}

static int peer_ok(const struct gp_bench_opts *o, int a, int b)
{
	return o->can_peer ? o->can_peer(o->ctx, a, b) > 0 : 0;
}

static int plan_host(struct plan *p, const char *mode, enum gp_xfer_kind kind)
{
	const struct gp_bench_opts *o = p->o;

	for (int i = 0; i < o->ngpus; i++)
		for (int m = GP_MEM_PINNED; m <= GP_MEM_PAGEABLE; m <<= 1) {
			if (!(o->mem & m) || (p->sm && m != GP_MEM_PINNED))
				continue;
			for (int k = 0; k < o->nsizes; k++) {
				struct gp_bench_row *r = add(p, mode, mode);

				if (!r)
					return -ENOMEM;
				r->spec.kind = kind;
				r->spec.gpu = o->gpus[i];
				r->spec.pinned = m == GP_MEM_PINNED;
				r->spec.size = o->sizes[k];
				r->spec.numa = host_node(o, o->gpus[i]);
				r->spec.bidir = o->duplex;
			}
		}
	return 0;
}

/* Whether peer copies pulled (read 1) or pushed are asked for; dflt: the GPU_OP_* bits of no --op. */
static int op_wanted(const struct plan *p, int read, int dflt)
{
	return ((p->o->op ? p->o->op : dflt) & (read ? GP_OP_READ : GP_OP_WRITE)) != 0;
}

/* One peer row: a → b; skipped when peer access is asked for and impossible (either way for bidir). */
static struct gp_bench_row *peer_row(struct plan *p, const char *mode, const char *what, int a, int b, int p2p,
				     int read, int bidir, uint64_t size)
{
	const struct gp_bench_opts *o = p->o;
	struct gp_bench_row *r = add(p, mode, what);

	if (!r)
		return NULL;
	r->spec.kind = GP_XFER_PEER;
	r->spec.gpu = a;
	r->spec.peer_gpu = b;
	r->spec.p2p = p2p;
	r->spec.read = read;
	r->spec.bidir = bidir;
	r->spec.size = size;
	if (p2p && (!peer_ok(o, a, b) || ((bidir || read) && !peer_ok(o, b, a))))
		r->skip = "no peer access between these GPUs";
	return r;
}

/* Whether the peer setting p2p (1 on, 0 off) is asked for (SMs: on only). */
static int wants(const struct plan *p, int p2p)
{
	return (!p->o->peer || (p->o->peer & (p2p ? 1 : 2))) && (p2p || !p->sm);
}

static int plan_d2d(struct plan *p)
{
	const struct gp_bench_opts *o = p->o;

	for (int i = 0; i < o->ngpus; i++)
		for (int k = 0; k < o->nsizes; k++) {
			struct gp_bench_row *r = add(p, "d2d", "d2d");

			if (!r)
				return -ENOMEM;
			r->spec.kind = GP_XFER_D2D;
			r->spec.gpu = o->gpus[i];
			r->spec.size = o->sizes[k];
		}
	return 0;
}

static int plan_p2p(struct plan *p)
{
	const struct gp_bench_opts *o = p->o;

	for (int i = 0; i < o->ngpus; i++)
		for (int j = 0; j < o->ngpus; j++) {
			if (i == j)
				continue;
			for (int p2p = 1; p2p >= 0; p2p--)
				for (int read = 0; read <= 1 && wants(p, p2p); read++)
					for (int k = 0; k < o->nsizes && op_wanted(p, read, GP_OP_WRITE | GP_OP_READ); k++)
						if (!peer_row(p, "p2p", "p2p", o->gpus[i], o->gpus[j], p2p, read, 0, o->sizes[k]))
							return -ENOMEM;
		}
	return 0;
}

static int plan_bidir(struct plan *p)
{
	const struct gp_bench_opts *o = p->o;

	for (int i = 0; i < o->ngpus; i++)
		for (int j = i + 1; j < o->ngpus; j++)
			for (int p2p = 1; p2p >= 0; p2p--)
				for (int read = 0; read <= 1; read++)
					for (int k = 0; k < o->nsizes && wants(p, p2p) && op_wanted(p, read, GP_OP_WRITE); k++)
						if (!peer_row(p, "bidir", "bidir", o->gpus[i], o->gpus[j], p2p, read, 1, o->sizes[k]))
							return -ENOMEM;
	return 0;
}

/* The latency rows: host memory with each GPU (copy engines: h2d and d2h; SMs: one pointer chase in
 * pinned host memory, "host"), then every ordered pair with peer access. */
static int latency_rows(struct plan *p)
{
	const struct gp_bench_opts *o = p->o;

	for (int i = 0; i < o->ngpus; i++)
		for (int d = 0; d < (p->sm ? 1 : 2); d++) {
			struct gp_bench_row *r = add(p, "latency", p->sm ? "host" : d ? "d2h" : "h2d");

			if (!r)
				return -ENOMEM;
			r->spec.kind = d ? GP_XFER_D2H : GP_XFER_H2D;
			r->spec.gpu = o->gpus[i];
			r->spec.pinned = 1;
			r->spec.numa = host_node(o, o->gpus[i]);
		}
	for (int i = 0; i < o->ngpus; i++)
		for (int j = 0; j < o->ngpus; j++)
			if (i != j && !peer_row(p, "latency", "p2p", o->gpus[i], o->gpus[j], 1, 0, 0, 0))
				return -ENOMEM;
	return 0;
}

static int plan_latency(struct plan *p)
{
	const struct gp_bench_opts *o = p->o;
	int first = p->n;

	if (latency_rows(p))
		return -ENOMEM;
	for (int i = first; i < p->n; i++) {
		struct gp_xfer_spec *s = &p->rows[i].spec;

		s->reps = o->lat_reps;
		if (p->sm) {                     /* pointer chases */
			s->chase = 1;
			s->size = p->chain;
			s->stride = o->chain_stride;
			s->random = o->chain_random;
			s->iters = o->chase_hops;
			s->seed = o->chain_seed;
		} else {                         /* small copies */
			s->size = o->lat_size;
			s->iters = o->lat_iters;
			s->host_timing = 1;
		}
	}
	return 0;
}

/* Patterns: one group per hub GPU (or one for the host) and size: a row per pair (h2d/d2h/p2p, pinned
 * host memory, peer access on: pairs without it are skipped), then the aggregate. `hub` is the GPU at
 * the fixed end (-1 host), `out` 1 when data leaves the hub. Fewer than two GPUs for a GPU hub: only the
 * aggregate row, skipped. */
static int plan_group(struct plan *p, const char *mode, int hub, int out, int read, uint64_t size)
{
	const struct gp_bench_opts *o = p->o;
	int first = p->n, measured = 0;
	struct gp_bench_row *r;

	p->group++;
	for (int i = 0; i < o->ngpus; i++) {
		int g = o->gpus[i];

		if (g == hub)
			continue;
		if (hub >= 0)
			r = peer_row(p, mode, "p2p", out ? hub : g, out ? g : hub, 1, read, 0, size);
		else if ((r = add(p, mode, out ? "h2d" : "d2h"))) {
			r->spec.kind = out ? GP_XFER_H2D : GP_XFER_D2H;
			r->spec.gpu = g;
			r->spec.pinned = 1;
			r->spec.size = size;
			r->spec.bidir = o->duplex;
		}
		if (!r)
			return -ENOMEM;
		r->group = p->group;
		measured += !r->skip;
	}
	if (!(r = add(p, mode, "aggregate")))
		return -ENOMEM;
	r->group = p->group;
	r->aggregate = 1;
	r->spec.kind = hub >= 0 ? GP_XFER_PEER : out ? GP_XFER_H2D : GP_XFER_D2H;
	r->spec.pinned = hub < 0;
	r->spec.p2p = hub >= 0;
	r->spec.read = read;
	r->spec.bidir = hub < 0 && o->duplex;
	r->spec.size = size;
	r->spec.gpu = hub >= 0 && out ? hub : -1;
	r->spec.peer_gpu = hub >= 0 && !out ? hub : -1;
	if (first == p->n - 1)
		r->skip = "one GPU: no pair to copy between";
	else if (!measured)
		r->skip = "no peer access between these GPUs";
	return 0;
}

static int plan_pattern(struct plan *p, const char *mode, int gpu_hub, int out)
{
	const struct gp_bench_opts *o = p->o;

	for (int read = 0; read <= gpu_hub; read++)
		for (int i = 0; i < (gpu_hub ? o->ngpus : 1) && (!gpu_hub || op_wanted(p, read, GP_OP_WRITE)); i++)
			for (int k = 0; k < o->nsizes; k++)
				if (plan_group(p, mode, gpu_hub ? o->gpus[i] : -1, out, read, o->sizes[k]))
					return -ENOMEM;
	return 0;
}

static int plan_one2all(struct plan *p)
{
	return plan_pattern(p, "one2all", 1, 1);
}

static int plan_all2one(struct plan *p)
{
	return plan_pattern(p, "all2one", 1, 0);
}

static int plan_all2host(struct plan *p)
{
	return plan_pattern(p, "all2host", 0, 0);
}

static int plan_host2all(struct plan *p)
{
	return plan_pattern(p, "host2all", 0, 1);
}

/* One mode's rows for every engine asked for, copy engines first. */
static int plan_mode(struct plan *p, int (*fn)(struct plan *))
{
	int engines = p->o->engine ? p->o->engine : GP_ENGINE_CE, rc = 0;

	for (int sm = 0; sm <= 1 && !rc; sm++)
		if (engines & (sm ? GP_ENGINE_SM : GP_ENGINE_CE)) {
			p->sm = sm;
			rc = fn(p);
		}
	return rc;
}

static int plan_h2d(struct plan *p)
{
	return plan_host(p, "h2d", GP_XFER_H2D);
}

static int plan_d2h(struct plan *p)
{
	return plan_host(p, "d2h", GP_XFER_D2H);
}

int gp_bench_plan(const struct gp_bench_opts *o, struct gp_bench_row **rows, struct gp_err *e)
{
	static int (*const fns[])(struct plan *) = { plan_h2d, plan_d2h, plan_d2d, plan_p2p, plan_bidir, plan_latency,
						     plan_one2all, plan_all2one, plan_all2host, plan_host2all };
	static const int bits[] = { GP_BENCH_H2D, GP_BENCH_D2H, GP_BENCH_D2D, GP_BENCH_P2P, GP_BENCH_BIDIR,
				    GP_BENCH_LATENCY, GP_BENCH_ONE2ALL, GP_BENCH_ALL2ONE, GP_BENCH_ALL2HOST,
				    GP_BENCH_HOST2ALL };
	struct plan p = { .o = o, .chain = o->chain_size };
	int rc = 0, sm = o->engine & GP_ENGINE_SM;

	*rows = NULL;
	if ((o->modes & GP_BENCH_LATENCY) && sm && !p.chain && o->cuda && gp_sm_chain_default(o->cuda, &p.chain, e))
		return -EIO;
	if (!o->modes || (o->modes & ~(GP_BENCH_ALL | GP_BENCH_PATTERNS)) || o->ngpus < 1 ||
	    (o->nsizes < 1 && (o->modes & ~GP_BENCH_LATENCY)) || o->iters < 1 ||
	    o->reps < 1 || ((o->modes & (GP_BENCH_H2D | GP_BENCH_D2H)) && !o->mem) || (o->engine & ~3) || (o->op & ~3) ||
	    ((o->modes & GP_BENCH_LATENCY) && (!o->lat_size || o->lat_iters < 1 || o->lat_reps < 1)) ||
	    ((o->modes & GP_BENCH_LATENCY) && sm && (!p.chain || !o->chain_stride || o->chase_hops < 1)))
		return gp_err_set(e, GP_E_FAIL, EINVAL, "bench: cannot plan the measurements (invalid options)");
	for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]) && !rc; i++)
		if (o->modes & bits[i])
			rc = plan_mode(&p, fns[i]);
	if (rc) {
		free(p.rows);
		return gp_err_set(e, GP_E_FAIL, -rc, "bench: cannot plan the measurements (%s)", strerror(-rc));
	}
	*rows = p.rows;
	return p.n;
}

void gp_bench_floors(struct gp_bench_row *rows, int n, const struct gp_threshold *t, int nt)
{
	for (int i = 0; i < n; i++)
		rows[i].floor = strcmp(rows[i].mode, "latency") && (!rows[i].group || rows[i].aggregate) ?
				gp_threshold_for(t, nt, rows[i].mode) : -1;
}

int gp_bench_below(const struct gp_bench_row *r)
{
	return r->done && r->floor > 0 && r->res.gbps.median < r->floor;
}

int gp_bench_impossible(const struct gp_bench_row *r, double margin)
{
	return r->done && !r->skip && r->ceiling > 0 && r->res.gbps.median > r->ceiling * (1 + margin);
}
