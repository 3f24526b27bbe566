/* gpup2p unit tests — a fixture tree loaded the way the command line loads one: root, PCI scan, GPU
 * facts, topology and (optionally) the ACS audit. */
#ifndef GPUP2P_UNIT_FX_H
#define GPUP2P_UNIT_FX_H

#include "gpup2p/acs.h"
#include "gpup2p/doctor.h"
#include "unit.h"

struct fx {
	struct gp_root r;
	struct gp_pci p;
	struct gp_gpu_facts f;
	struct gp_topo t;
	struct gp_acs_audit a;
	int audited;
};

/* Load the tree at dir (unit_fixture(name) for a shared fixture); audit ACS when asked.
 * 0, or -1 counted as a failed check (a fixture that is missing or does not load is a failure). */
static inline int fx_load(struct fx *x, const char *dir, const struct gp_topo_match *m, int nm, int audit)
{
	struct gp_err e = { 0 };

	memset(x, 0, sizeof(*x));
	if (gp_root_init(&x->r, dir, &e) || gp_pci_scan(&x->p, &x->r, &e) || gp_gpu_facts_load(&x->r, &x->f, GP_GPU_HEALTH, &e) ||
	    gp_topo_build(&x->t, &x->p, &x->f, m, nm, &e) || (audit && gp_acs_audit(&x->t, &x->a))) {
		unit_failed++;
		printf("not ok - fixture %s loads: %s\n", dir, e.msg[0] ? e.msg : "out of memory");
		return -1;
	}
	x->audited = audit;
	return 0;
}

/* Release what fx_load loaded. */
static inline void fx_unload(struct fx *x)
{
	if (x->audited)
		gp_acs_audit_free(&x->a);
	gp_topo_free(&x->t);
	gp_pci_free(&x->p);
}

/* 1 when doctor finding f (may be NULL) lists bdf. */
static inline int fx_has_bdf(const struct gp_finding *f, const char *bdf)
{
	for (int i = 0; f && i < f->nbdf; i++)
		if (!strcmp(f->bdf[i], bdf))
			return 1;
	return 0;
}

#endif
