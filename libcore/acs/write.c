/* gpup2p — ACS disable/restore: plan, verified writes, rollback. The state file is in acs_state.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acs/state.h"
#include "gpup2p/acs_write.h"

static int lp_read16(void *ctx, const struct gp_pci_dev *d, int off, uint16_t *v)
{
	return gp_pci_live_read16(ctx, d, off, v);
}

static int lp_write16(void *ctx, const struct gp_pci_dev *d, int off, uint16_t v)
{
	return gp_pci_live_write16(ctx, d, off, v);
}

struct gp_acs_io gp_acs_io_libpci(const struct gp_pci *p)
{
	struct gp_acs_io io = { lp_read16, lp_write16, (void *)p };

	return io;
}

uint16_t gp_acs_target(uint16_t ctl, enum gp_acs_mode mode)
{
	return mode == GP_ACS_ZERO ? 0 : (uint16_t)(ctl & ~GP_ACS_REDIRECT);
}

void gp_acs_plan_free(struct gp_acs_plan *pl)
{
	free(pl->c);
	memset(pl, 0, sizeof(*pl));
}

static const struct gp_acs_bridge *audit_find(const struct gp_acs_audit *a, int pci)
{
	for (int i = 0; i < a->n; i++)
		if (a->b[i].pci == pci)
			return &a->b[i];
	return NULL;
}

static int listed(const struct gp_pci *p, int pci, const char *const *bdfs, int nbdf)
{
	for (int k = 0; k < nbdf; k++)
		if (gp_pci_index(p, bdfs[k]) == pci)
			return 1;
	return 0;
}

int gp_acs_plan_disable(const struct gp_topo *t, const struct gp_acs_audit *a, enum gp_acs_scope scope,
			const char *const *bdfs, int nbdf, enum gp_acs_mode mode, struct gp_acs_plan *pl,
			struct gp_err *e)
{
	const struct gp_pci *p = t->pci;

	memset(pl, 0, sizeof(*pl));
	for (int k = 0; scope == GP_ACS_SCOPE_LISTED && k < nbdf; k++) {
		char bdf[GP_BDF_LEN];
		int idx;

		if (gp_pci_parse_bdf(bdfs[k], bdf))
			return gp_err_set(e, GP_E_USAGE, EINVAL, "'%s' is not a PCI address (use DDDD:BB:DD.F)", bdfs[k]);
		idx = gp_pci_index(p, bdf);
		if (idx < 0)
			return gp_err_set(e, GP_E_USAGE, ENODEV, "no PCI function %s (gpup2p acs lists the bridges)", bdf);
		if (!audit_find(a, idx))
			return gp_err_set(e, GP_E_USAGE, ENODEV, "%s has no ACS capability: nothing to disable there", bdf);
	}
	pl->c = calloc((size_t)(a->n ? a->n : 1), sizeof(*pl->c));
	if (!pl->c)
		return gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory");
	for (int i = 0; i < a->n; i++) {
		const struct gp_acs_bridge *b = &a->b[i];
		const struct gp_pci_dev *d = &p->devs[b->pci];
		struct gp_acs_change *c;

		if ((scope == GP_ACS_SCOPE_PATHS && !b->npairs) ||
		    (scope == GP_ACS_SCOPE_LISTED && !listed(p, b->pci, bdfs, nbdf)))
			continue;
		if (b->state != GP_PRESENT) {
			gp_acs_plan_free(pl);
			return gp_err_set(e, GP_E_DATA, EACCES,
					  "ACS of %s cannot be read (extended config space): run as root", d->bdf);
		}
		c = &pl->c[pl->n++];
		c->pci = b->pci;
		snprintf(c->bdf, sizeof(c->bdf), "%s", d->bdf);
		c->vendor = d->vendor;
		c->device = d->device;
		c->off = b->ctl_off;
		c->before = b->ctl;
		c->after = gp_acs_target(b->ctl, mode);
		pl->nwrite += c->before != c->after;
	}
	return 0;
}

int gp_acs_plan_boot_param(const struct gp_acs_plan *pl, enum gp_acs_mode mode, struct gp_buf *b)
{
	const char *head = mode == GP_ACS_ZERO ? "pci=config_acs=" : "pci=disable_acs_redir=";
	int first = 1;

	for (int i = 0; i < pl->n; i++) {
		if (pl->c[i].before == pl->c[i].after)
			continue;
		if (gp_buf_addf(b, "%s%s%s", first ? head : ";", mode == GP_ACS_ZERO ? "0000000@" : "", pl->c[i].bdf))
			return -ENOMEM;
		first = 0;
	}
	return 0;
}

/* Write `v` and read it back. 0, or a negative errno with what went wrong in why. */
static int write_verified(const struct gp_acs_io *io, const struct gp_pci_dev *d, int off, uint16_t v,
			  char *why, size_t n)
{
	uint16_t got;
	int rc = io->write16(io->ctx, d, off, v);

	if (rc) {
		snprintf(why, n, "write of 0x%04x failed: %s", v, strerror(-rc));
		return rc;
	}
	rc = io->read16(io->ctx, d, off, &got);
	if (rc) {
		snprintf(why, n, "read-back after writing 0x%04x failed: %s", v, strerror(-rc));
		return rc;
	}
	if (got != v) {
		snprintf(why, n, "read back 0x%04x after writing 0x%04x", got, v);
		return -EIO;
	}
	return 0;
}

/* Write every entry whose before != after; on the first failure put back, newest first, what was
 * written. Returns 0, or a GP_E_FAIL error naming the bridge and the outcome of the rollback. */
static int execute(const struct gp_pci *p, struct gp_acs_plan *pl, const struct gp_acs_io *io, const char *verb,
		   struct gp_err *e)
{
	char why[160], rb[160];
	int bad = -1, unrolled = 0;

	for (int i = 0; i < pl->n; i++) {
		struct gp_acs_change *c = &pl->c[i];

		if (c->before == c->after) {
			c->result = 2;
			continue;
		}
		if (write_verified(io, &p->devs[c->pci], c->off, c->after, why, sizeof(why))) {
			c->result = -1;
			bad = i;
			break;
		}
		c->result = 1;
	}
	if (bad < 0)
		return 0;
	rb[0] = '\0';
	for (int i = bad; i >= 0; i--) {
		struct gp_acs_change *c = &pl->c[i];
		char w2[160];

		/* the failed bridge too: its write may have landed although the read-back disagreed */
		if (c->result != 1 && i != bad)
			continue;
		if (write_verified(io, &p->devs[c->pci], c->off, c->before, w2, sizeof(w2))) {
			unrolled++;
			snprintf(rb, sizeof(rb), "; putting back 0x%04x on %s also failed (%s): check it with gpup2p acs",
				 c->before, c->bdf, w2);
			continue;
		}
		if (c->result == 1)
			c->result = -2;
	}
	return gp_err_set(e, GP_E_FAIL, EIO, "%s %s: %s; %s%s", verb, pl->c[bad].bdf, why,
			  unrolled ? "rollback incomplete" : "every bridge already changed was put back", rb);
}

/* Lock the state file and record the plan's writes in it. 0 (locked: the caller unlocks) or an error
 * (unlocked). */
static int record_writes(const char *state_path, struct gp_acs_state_file *old, const struct gp_acs_plan *pl,
			 struct gp_err *e)
{
	struct gp_acs_state_entry *w = calloc((size_t)pl->n + 1, sizeof(*w));
	int nw = 0, rc;

	if (!w)
		return gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory");
	for (int i = 0; i < pl->n; i++) {
		const struct gp_acs_change *c = &pl->c[i];

		if (c->before == c->after)
			continue;
		snprintf(w[nw].bdf, sizeof(w[nw].bdf), "%s", c->bdf);
		w[nw].vendor = c->vendor;
		w[nw].device = c->device;
		w[nw].off = c->off;
		w[nw].before = c->before;
		w[nw].after = c->after;
		nw++;
	}
	rc = gp_acs_state_lock(state_path, old, e);
	if (!rc && (rc = gp_acs_state_save(state_path, old, w, nw, e)))
		gp_acs_state_unlock(old);
	free(w);
	return rc;
}

int gp_acs_disable(const struct gp_pci *p, struct gp_acs_plan *pl, enum gp_acs_mode mode,
		   const struct gp_acs_io *io, const char *state_path, struct gp_err *e)
{
	struct gp_acs_state_file old;
	int rc;

	/* the plan follows what the bridges hold now, not what the scan saw */
	pl->nwrite = 0;
	for (int i = 0; i < pl->n; i++) {
		struct gp_acs_change *c = &pl->c[i];

		if ((rc = io->read16(io->ctx, &p->devs[c->pci], c->off, &c->before)))
			return gp_err_set(e, GP_E_FAIL, -rc, "reading the ACS control of %s: %s (nothing was changed)",
					  c->bdf, strerror(-rc));
		c->after = gp_acs_target(c->before, mode);
		pl->nwrite += c->before != c->after;
	}
	if (!pl->nwrite) {
		for (int i = 0; i < pl->n; i++)
			pl->c[i].result = 2;
		return 0;
	}
	if ((rc = record_writes(state_path, &old, pl, e)))
		return rc;
	rc = execute(p, pl, io, "changing ACS of", e);
	if (rc)
		gp_acs_state_put_back(state_path, &old);
	gp_acs_state_unlock(&old);
	return rc;
}

/* Turn the state file's entries into a restore plan (after = recorded before, recorded = recorded
 * after), each checked against this machine: present, same vendor:device, control register where
 * gpup2p finds it. 0 or GP_E_DATA (pl then empty). */
static int plan_from_state(const struct gp_pci *p, const char *state_path, const struct gp_acs_state_entry *v,
			   int n, struct gp_acs_plan *pl, struct gp_err *e)
{
	pl->c = calloc((size_t)(n ? n : 1), sizeof(*pl->c));
	if (!pl->c)
		return gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory");
	for (int k = 0; k < n; k++) {
		struct gp_acs_change *c = &pl->c[pl->n];
		int idx = gp_pci_index(p, v[k].bdf);

		if (idx < 0 || p->devs[idx].vendor != v[k].vendor || p->devs[idx].device != v[k].device ||
		    gp_acs_ctl_offset(&p->devs[idx]) != v[k].off) {
			gp_acs_plan_free(pl);
			return gp_err_set(e, GP_E_DATA, ENODEV,
					  "%s names %s [%04x:%04x], which this machine does not have (renumbered, or another "
					  "machine's file): nothing was changed", state_path, v[k].bdf, v[k].vendor, v[k].device);
		}
		c->pci = idx;
		snprintf(c->bdf, sizeof(c->bdf), "%s", v[k].bdf);
		c->vendor = v[k].vendor;
		c->device = v[k].device;
		c->off = v[k].off;
		c->after = v[k].before;
		c->recorded = v[k].after;
		pl->n++;
	}
	return 0;
}

int gp_acs_plan_restore(const struct gp_pci *p, const struct gp_acs_io *io, const char *state_path,
			struct gp_acs_plan *pl, struct gp_err *e)
{
	struct gp_acs_state_entry *v;
	int n, rc;

	memset(pl, 0, sizeof(*pl));
	if ((rc = gp_acs_state_load(state_path, &v, &n, e)))
		return rc;
	rc = plan_from_state(p, state_path, v, n, pl, e);
	free(v);
	if (rc)
		return rc;
	for (int i = 0; i < pl->n; i++) {
		struct gp_acs_change *c = &pl->c[i];

		if ((rc = io->read16(io->ctx, &p->devs[c->pci], c->off, &c->before))) {
			rc = gp_err_set(e, GP_E_FAIL, -rc, "reading the ACS control of %s: %s (nothing was changed)",
					c->bdf, strerror(-rc));
			gp_acs_plan_free(pl);
			return rc;
		}
		pl->nwrite += c->before != c->after;
	}
	return 0;
}

int gp_acs_restore(const struct gp_pci *p, struct gp_acs_plan *pl, const struct gp_acs_io *io,
		   const char *state_path, struct gp_err *e)
{
	struct gp_acs_state_file old;
	int rc;

	if ((rc = gp_acs_state_lock(state_path, &old, e)))
		return rc;
	rc = execute(p, pl, io, "restoring ACS of", e);
	if (!rc)
		rc = gp_acs_state_remove(state_path, e);
	gp_acs_state_unlock(&old);
	return rc;
}
