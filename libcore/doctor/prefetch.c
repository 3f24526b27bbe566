/* gpup2p doctor — the slow live sources, started before the PCI scan so they overlap it and the other
 * checks. On an H100 (tests/perf/doctor_cost.sh) cuInit costs 100–180 ms in a fresh process and reading
 * /proc/kallsyms ~50 ms (the kernel formats 120 000 lines), against ~30 ms for the PCI scan, NVML and
 * the topology together. Each runs on its own thread; the first check that needs the answer joins it.
 * No thread could start: the check reads the source itself, as without a prefetch. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gpup2p/clock.h"
#include "gpup2p/cuda.h"
#include "gpup2p/gpu.h"
#include "check.h"

struct gp_doctor_pre {
	const struct gp_root *root;
	pthread_t cuda_th, sym_th;
	int cuda_started, sym_started;   /* a thread runs (or ran and was not joined yet) */
	int cuda_done, sym_done;         /* joined: the answer below is valid */
	struct gp_cuda_probe probe;
	int sym_has;                     /* gp_doctor_kallsyms_scan for GP_DOCTOR_P2P_SYM */
	int nvml_open;                   /* gp_gpu_nvml_open succeeded: closed with the prefetch */
	double cuda_ms, sym_ms;          /* each thread's wall time, -1 before it ends */
};

static void *cuda_thread(void *arg)
{
	struct gp_doctor_pre *p = arg;
	double t0 = (gp_clock_s() * 1e3);

	gp_cuda_probe(&p->probe);
	p->cuda_ms = (gp_clock_s() * 1e3) - t0;
	return NULL;
}

static void *sym_thread(void *arg)
{
	struct gp_doctor_pre *p = arg;
	double t0 = (gp_clock_s() * 1e3);

	p->sym_has = gp_doctor_kallsyms_scan(p->root, GP_DOCTOR_P2P_SYM);
	p->sym_ms = (gp_clock_s() * 1e3) - t0;
	return NULL;
}

int gp_doctor_wants(const unsigned char *on, int active, unsigned src, const char *id)
{
	for (int i = 0; i < gp_doctor_count(); i++) {
		const struct gp_doctor_check *k = gp_doctor_at(i);

		if ((!on || on[i]) && (!k->active || active) &&
		    ((src && (k->sources & src)) || (id && !strcmp(k->id, id))))
			return 1;
	}
	return 0;
}

struct gp_doctor_pre *gp_doctor_prefetch(const struct gp_root *r, const unsigned char *on, int active, int no_cuda)
{
	struct gp_doctor_pre *p;

	if (!r->live || !(p = calloc(1, sizeof(*p))))
		return NULL;
	p->root = r;
	p->cuda_ms = p->sym_ms = -1;
	if (!no_cuda && gp_doctor_wants(on, active, GP_SRC_CUDA, NULL)) {
		/* NVML first: its init and shutdown would wait for cuInit (gpu.h) */
		p->nvml_open = !gp_gpu_nvml_open();
		p->cuda_started = !pthread_create(&p->cuda_th, NULL, cuda_thread, p);
	}
	if (gp_doctor_wants(on, active, 0, "kmod.nv_p2p_api"))
		p->sym_started = !pthread_create(&p->sym_th, NULL, sym_thread, p);
	return p;
}

struct gp_cuda_probe *gp_doctor_pre_cuda(struct gp_doctor_pre *p)
{
	struct gp_cuda_probe *r;

	if (!p || !(p->cuda_started || p->cuda_done))
		return NULL;
	if (p->cuda_started)
		pthread_join(p->cuda_th, NULL);
	p->cuda_started = 0;
	p->cuda_done = 1;
	if ((r = malloc(sizeof(*r))))
		*r = p->probe;
	return r;
}

int gp_doctor_pre_kallsyms(struct gp_doctor_pre *p, const char *sym, int *has)
{
	if (!p || strcmp(sym, GP_DOCTOR_P2P_SYM) || !(p->sym_started || p->sym_done))
		return 0;
	if (p->sym_started)
		pthread_join(p->sym_th, NULL);
	p->sym_started = 0;
	p->sym_done = 1;
	*has = p->sym_has;
	return 1;
}

void gp_doctor_prefetch_free(struct gp_doctor_pre *p)
{
	if (!p)
		return;
	if (p->cuda_started)
		pthread_join(p->cuda_th, NULL);
	if (p->sym_started)
		pthread_join(p->sym_th, NULL);
	if (p->nvml_open)
		gp_gpu_nvml_close();
	free(p);
}

void gp_doctor_prefetch_ms(const struct gp_doctor_pre *p, double *cuda_ms, double *sym_ms)
{
	*cuda_ms = p && p->cuda_done ? p->cuda_ms : -1;
	*sym_ms = p && p->sym_done ? p->sym_ms : -1;
}
