/* gpup2p unit tests — doctor on a fixture: the set-ups that pretend to be live (process facts, libcuda
 * test double, --kmsg), running a selection of checks, and reading a finding's evidence. */
#ifndef GPUP2P_UNIT_DOCTOR_FX_H
#define GPUP2P_UNIT_DOCTOR_FX_H

#include <stdint.h>

#include "doctor/check.h"
#include "fx.h"
#include "p2p_env.h"

#define D(name) "doctor/" name

/* Process facts by hand, on a root that pretends to be live (limits.* are live-only). */
static inline void live(struct fx *x, struct gp_doctor_ctx *c)
{
	x->r.live = 1;
	c->proc.known = 1;
	c->proc.euid = 1000;
	c->proc.memlock = UINT64_MAX;
	c->proc.shm_known = 1;
	c->proc.shm_size = 16ULL << 30;
}

/* libcuda: the test double (tests/fakecuda, built next to the fixtures) with two GPUs, with none, or
 * a library that is not there. */
static inline void cuda_lib(const char *lib, const char *gpus)
{
	static char path[1024];
	const char *fx = getenv("GPUP2P_FIXTURES");

	snprintf(path, sizeof(path), "%s/../tests/fakecuda/libcuda.so.1", fx ? fx : "build/fixtures");
	setenv("GPUP2P_LIBCUDA", lib ? lib : path, 1);
	if (gpus)
		setenv("FAKECUDA_GPUS", gpus, 1);
	else
		unsetenv("FAKECUDA_GPUS");
	unsetenv("CUDA_VISIBLE_DEVICES");
	unsetenv("FAKECUDA_NOGDR");
	unsetenv("FAKECUDA_CC");
	unit_p2p_env(NULL, NULL, NULL, NULL, NULL);
}

static inline void cuda_ok(struct fx *x, struct gp_doctor_ctx *c)
{
	live(x, c);
	cuda_lib(NULL, NULL);
}

/* gpu.xid: asked for (--kmsg). */
static inline void kmsg_on(struct fx *x, struct gp_doctor_ctx *c)
{
	(void)x;
	c->kmsg = 1;
}

/* Run the checks `only` names minus those `skip` names (NULL: every check) on a fixture (a name under
 * GPUP2P_FIXTURES, or an absolute path: a test's own copy) after setup;
 * findings stay in *c. 0, or -1 after a failed CHECK (a run that cannot start is a test failure). */
static inline int run_sel(const char *fixture, void (*setup)(struct fx *, struct gp_doctor_ctx *), const char *only,
			  const char *skip, struct fx *x, struct gp_doctor_ctx *c)
{
	static unsigned char on[512];
	struct gp_err e = { 0 };

	if (gp_doctor_select(on, only, skip, &e)) {
		CHECK(0, "%s: select %s / skip %s: %s", fixture, only ? only : "all", skip ? skip : "none", e.msg);
		return -1;
	}
	if (fx_load(x, fixture[0] == '/' ? fixture : unit_fixture(fixture), NULL, 0, 0))
		return -1; /* fx_load reported it */
	if (gp_doctor_ctx_init(c, &x->r, &x->p, &x->f, &x->t, &e)) {
		CHECK(0, "%s: doctor context: %s", fixture, e.msg);
		fx_unload(x);
		return -1;
	}
	if (setup)
		setup(x, c);
	if (gp_doctor_run(c, on, &e)) {
		CHECK(0, "%s: doctor run: %s", fixture, e.msg);
		gp_doctor_ctx_free(c);
		fx_unload(x);
		return -1;
	}
	return 0;
}

static inline int run_on(const char *fixture, void (*setup)(struct fx *, struct gp_doctor_ctx *), struct fx *x,
		  struct gp_doctor_ctx *c)
{
	return run_sel(fixture, setup, NULL, NULL, x, c);
}

static inline void done(struct fx *x, struct gp_doctor_ctx *c)
{
	gp_doctor_ctx_free(c);
	fx_unload(x);
}

/* The evidence value of key on check id's finding about subject, or NULL. */
static inline const char *ev_of(const struct gp_doctor_ctx *c, const char *id, const char *subject, const char *key)
{
	for (int i = 0; i < c->out.n; i++) {
		const struct gp_finding *f = &c->out.v[i];

		if (strcmp(f->check->id, id) || (subject && strcmp(f->subject, subject)))
			continue;
		for (int k = 0; k < f->nev; k++)
			if (!strcmp(f->ev[k].key, key))
				return f->ev[k].value;
	}
	return NULL;
}

#endif
