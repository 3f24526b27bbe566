/* gpup2p — what gpup2p bench rdma runs: its defaults (which options exclude each other is cli/'s table), the
 * message sizes and how large the buffers are; and, for GPU memory in loopback, the NIC closest to the GPU. */
#include <errno.h>
#include <string.h>

#include "gpup2p/rdma.h"

#define RDMA_MSG_MAX (1ULL << 31)                  /* the largest message: 2G */
#define RDMA_SERVER_BUF (64ULL << 20)              /* a server's buffer when no size is given */

void gp_rdma_plan_init(struct gp_rdma_plan *p)
{
	memset(p, 0, sizeof(*p));
	p->o.gid_index = p->o.peer_gid_index = -1;
	p->o.mem = p->o.peer_mem = (struct gp_rdma_mem){ GP_RMEM_HOST, -1 };
}

static int usage(struct gp_err *e, const char *msg)
{
	return gp_err_set(e, GP_E_USAGE, EINVAL, "%s", msg);
}

int gp_rdma_plan(struct gp_rdma_plan *p, struct gp_err *e)
{
	struct gp_rdma_opts *o = &p->o;

	if (o->host)
		o->role = GP_RDMA_CLIENT;
	if (!p->peer_mem_set)
		o->peer_mem = o->mem;
	if (p->min) {
		int n = gp_size_sweep(p->min, p->max, p->factor ? p->factor : 2, p->sizes, GP_SWEEP_MAX);

		if (n == -E2BIG)
			return gp_err_set(e, GP_E_USAGE, E2BIG, "this sweep has more than %d sizes", GP_SWEEP_MAX);
		if (n < 0)
			return usage(e, "the sweep's smallest size is above its largest");
		p->nsizes = n;
	} else {
		p->sizes[0] = p->size ? p->size : p->lat ? 8 : 64 << 10;
		p->nsizes = 1;
	}
	for (int i = 0; i < p->nsizes; i++)
		if (p->sizes[i] > RDMA_MSG_MAX)
			return gp_err_set(e, GP_E_USAGE, EINVAL, "an RDMA message is at most 2G, not %llu bytes",
					  (unsigned long long)p->sizes[i]);
	o->max_size = p->sizes[p->nsizes - 1];
	if (o->role == GP_RDMA_SERVER && !p->size && !p->min && o->max_size < RDMA_SERVER_BUF)
		o->max_size = RDMA_SERVER_BUF;            /* a server's buffer holds what a client may ask */
	if (!p->ops)
		p->ops = GP_RDMA_WRITE | GP_RDMA_READ | GP_RDMA_SEND;
	if (!p->iters)
		p->iters = 1000;
	if (!p->reps)
		p->reps = 5;
	return 0;
}

void gp_rdma_plan_nic(struct gp_rdma_plan *p, const struct gp_topo *t)
{
	int gpu = p->o.mem.kind == GP_RMEM_HOST ? -1 : p->o.mem.gpu < 0 ? 0 : p->o.mem.gpu;

	if (gpu >= 0 && t && !p->o.device && p->o.role == GP_RDMA_LOOPBACK)   /* between hosts the address picks */
		p->o.device = gp_rdma_closest_nic(t, gpu);
}
