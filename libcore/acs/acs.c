/* gpup2p — ACS decode and audit. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpup2p/acs.h"

int gp_acs_intel_pch_quirk(const struct gp_pci_dev *d)
{
	/* Device ids as in the kernel's pci_quirk_intel_spt_pch_acs_match (drivers/pci/quirks.c) */
	static const uint16_t ranges[][2] = {
		{ 0xa110, 0xa11f }, { 0xa167, 0xa16a }, /* Sunrise Point-H */
		{ 0xa290, 0xa29f }, { 0xa2e7, 0xa2ee }, /* Union Point */
		{ 0x9d10, 0x9d1b },                     /* 7th/8th generation mobile */
	};

	if (d->vendor != 0x8086 || d->port_type != GP_PORT_ROOT)
		return 0;
	for (size_t k = 0; k < sizeof(ranges) / sizeof(ranges[0]); k++)
		if (d->device >= ranges[k][0] && d->device <= ranges[k][1])
			return 1;
	return 0;
}

int gp_acs_ctl_offset(const struct gp_pci_dev *d)
{
	if (d->acs_cap <= 0)
		return 0;
	return d->acs_cap + (gp_acs_intel_pch_quirk(d) ? 8 : 6);
}

int gp_acs_read(const struct gp_pci_dev *d, uint16_t *cap, uint16_t *ctl)
{
	int64_t c, t;

	if (d->acs_cap < 0)
		return -1;
	if (d->acs_cap == 0)
		return 0;
	c = gp_pci_cfg_read(d, d->acs_cap + 4, 2);
	t = gp_pci_cfg_read(d, gp_acs_ctl_offset(d), 2);
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

/* 1 when a and b are two functions of one device. */
static int same_device(const struct gp_pci_dev *a, const struct gp_pci_dev *b)
{
	return a != b && a->domain == b->domain && a->bus == b->bus && a->dev == b->dev;
}

int gp_acs_on_pair_path(const struct gp_topo *t, int pci, int i, int j)
{
	const struct gp_pci_dev *a = &t->pci->devs[t->devs[i].pci], *b = &t->pci->devs[t->devs[j].pci];
	const char *bdf = t->pci->devs[pci].bdf;
	/* Below the lowest common bridge each side's bridges see the request; with no common bridge
	 * (through the host bridge, or across host bridges) every bridge of both chains does. */
	int k = gp_topo_common_bridges(a, b);

	/* between two functions of one device, each function's own ACS decides */
	if (!t->pci->devs[pci].is_bridge)
		return same_device(a, b) && (t->devs[i].pci == pci || t->devs[j].pci == pci);

	for (int x = k; x < a->chain_len; x++)
		if (!strcmp(a->chain[x], bdf))
			return 1;
	for (int x = k; x < b->chain_len; x++)
		if (!strcmp(b->chain[x], bdf))
			return 1;
	return 0;
}

int gp_acs_pair_local(const struct gp_topo *t, int i, int j)
{
	const struct gp_topo_link *l = gp_topo_link_at(t, i, j);

	if (same_device(&t->pci->devs[t->devs[i].pci], &t->pci->devs[t->devs[j].pci]))
		return 1;
	return l->cls == GP_TC_PIX || l->cls == GP_TC_PXB;
}

const char *gp_acs_impact_name(enum gp_acs_impact m)
{
	switch (m) {
	case GP_ACS_IMPACT_UNKNOWN: return "unknown";
	case GP_ACS_IMPACT_NONE: return "none";
	case GP_ACS_IMPACT_LOW: return "low";
	case GP_ACS_IMPACT_HIGH: return "high";
	}
	return "unknown";
}

/* 1 when function i of p is a GPU/NIC with another function of its device that is one too: its own
 * ACS capability then governs peer traffic between them. */
static int multifunction_peer(const struct gp_topo *t, int i)
{
	const struct gp_pci *p = t->pci;

	if (p->devs[i].is_bridge || !gp_topo_find(t, i))
		return 0;
	for (int k = 0; k < t->n; k++)
		if (same_device(&p->devs[i], &p->devs[t->devs[k].pci]))
			return 1;
	return 0;
}

static enum gp_acs_impact impact_of(const struct gp_acs_bridge *b)
{
	if (!b->npairs || b->redirects == 0)
		return GP_ACS_IMPACT_NONE;
	if (b->redirects < 0)
		return GP_ACS_IMPACT_UNKNOWN;
	return b->nlocal ? GP_ACS_IMPACT_HIGH : GP_ACS_IMPACT_LOW;
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

		if (!d->is_bridge && !multifunction_peer(t, i))
			continue;
		st = gp_acs_read(d, &b->cap, &b->ctl);
		if (st == 0)
			continue;
		b->pci = i;
		b->state = st > 0 ? GP_PRESENT : GP_UNKNOWN;
		b->ctl_off = gp_acs_ctl_offset(d);
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
					b->nlocal += gp_acs_pair_local(t, x, y);
				}
		b->impact = impact_of(b);
		a->redirect_high += b->impact == GP_ACS_IMPACT_HIGH;
		a->redirect_low += b->impact == GP_ACS_IMPACT_LOW;
		if (b->npairs && b->redirects > 0)
			a->on_path_redirecting++;
		if (b->npairs && b->redirects < 0)
			a->on_path_unknown++;
		a->n++;
	}
	return 0;
}

int gp_acs_boot_param(const struct gp_topo *t, const struct gp_acs_audit *a, struct gp_buf *b)
{
	int first = 1;

	for (int i = 0; i < a->n; i++) {
		if (!a->b[i].npairs || a->b[i].redirects <= 0)
			continue;
		if (gp_buf_addf(b, "%s%s", first ? "pci=disable_acs_redir=" : ";", t->pci->devs[a->b[i].pci].bdf))
			return -ENOMEM;
		first = 0;
	}
	return 0;
}
