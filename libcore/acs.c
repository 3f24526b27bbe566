/* gpup2p — ACS decode and audit. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpup2p/acs.h"

int gp_acs_read(const struct gp_pci_dev *d, uint16_t *cap, uint16_t *ctl)
{
	int64_t c, t;

	if (d->acs_cap < 0)
		return -1;
	if (d->acs_cap == 0)
		return 0;
	c = gp_pci_cfg_read(d, d->acs_cap + 4, 2);
	t = gp_pci_cfg_read(d, d->acs_cap + 6, 2);
	if (c < 0 || t < 0)
		return -1;
	*cap = (uint16_t)c;
	*ctl = (uint16_t)t;
	return 1;
}

const char *gp_acs_decode(uint16_t v, char *buf, size_t n)
{
	static const char *const names[] = { "SrcValid", "TransBlk", "ReqRedir", "CmpltRedir",
					     "UpstreamFwd", "EgressCtrl", "DirectTrans" };
	size_t used = 0;

	buf[0] = '\0';
	for (int k = 0; k < 7; k++)
		used += (size_t)snprintf(buf + used, used < n ? n - used : 0, "%s%s%c", k ? " " : "", names[k],
					 (v & (1u << k)) ? '+' : '-');
	return buf;
}

int gp_acs_on_pair_path(const struct gp_topo *t, int pci, int i, int j)
{
	const struct gp_pci_dev *a = &t->pci->devs[t->devs[i].pci], *b = &t->pci->devs[t->devs[j].pci];
	const char *bdf = t->pci->devs[pci].bdf;
	/* Below the lowest common bridge each side's bridges see the request; with no common bridge
	 * (through the host bridge, or across host bridges) every bridge of both chains does. */
	int k = gp_topo_common_bridges(a, b);

	for (int x = k; x < a->chain_len; x++)
		if (!strcmp(a->chain[x], bdf))
			return 1;
	for (int x = k; x < b->chain_len; x++)
		if (!strcmp(b->chain[x], bdf))
			return 1;
	return 0;
}

void gp_acs_audit_free(struct gp_acs_audit *a)
{
	for (int i = 0; i < a->n; i++)
		free(a->b[i].pairs);
	free(a->b);
	memset(a, 0, sizeof(*a));
}

int gp_acs_audit(const struct gp_topo *t, struct gp_acs_audit *a)
{
	const struct gp_pci *p = t->pci;

	memset(a, 0, sizeof(*a));
	a->b = calloc((size_t)(p->n ? p->n : 1), sizeof(*a->b));
	if (!a->b)
		return -ENOMEM;
	for (int i = 0; i < p->n; i++) {
		const struct gp_pci_dev *d = &p->devs[i];
		struct gp_acs_bridge *b = &a->b[a->n];
		int st;

		if (!d->is_bridge)
			continue;
		st = gp_acs_read(d, &b->cap, &b->ctl);
		if (st == 0)
			continue;
		b->pci = i;
		b->state = st > 0 ? GP_PRESENT : GP_UNKNOWN;
		b->redirects = st > 0 ? (b->ctl & GP_ACS_REDIRECT) != 0 : -1;
		b->pairs = calloc((size_t)(t->n * t->n / 2 + 1), sizeof(*b->pairs));
		if (!b->pairs) {
			gp_acs_audit_free(a);
			return -ENOMEM;
		}
		for (int x = 0; x < t->n; x++)
			for (int y = x + 1; y < t->n; y++)
				if (gp_acs_on_pair_path(t, i, x, y)) {
					b->pairs[b->npairs][0] = x;
					b->pairs[b->npairs][1] = y;
					b->npairs++;
				}
		if (b->npairs && b->redirects > 0)
			a->on_path_redirecting++;
		if (b->npairs && b->redirects < 0)
			a->on_path_unknown++;
		a->n++;
	}
	return 0;
}

const char *gp_acs_boot_param(const struct gp_topo *t, const struct gp_acs_audit *a, char *buf, size_t n)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < a->n; i++) {
		if (!a->b[i].npairs || a->b[i].redirects <= 0)
			continue;
		used += (size_t)snprintf(buf + used, used < n ? n - used : 0, "%s%s",
					 used ? ";" : "pci=disable_acs_redir=", t->pci->devs[a->b[i].pci].bdf);
	}
	return buf;
}
