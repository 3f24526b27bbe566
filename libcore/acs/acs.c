/* gpup2p — ACS decode and audit. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpup2p/acs.h"
#include "gpup2p/stats.h"

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
	/* Below the lowest common bridge each side's bridges see the request; with no common bridge
	 * (through the host bridge, or across host bridges) every bridge of both chains does. */
	int k = gp_topo_common_bridges(a, b);

	/* between two functions of one device, each function's own ACS decides */
	if (!t->pci->devs[pci].is_bridge)
		return same_device(a, b) && (t->devs[i].pci == pci || t->devs[j].pci == pci);
	/* an enumerated function: its index is in every chain that names it */
	GP_STAT_ADD(path_steps, a->chain_len - k + b->chain_len - k);
	for (int x = k; x < a->chain_len; x++)
		if (a->chain_idx[x] == pci)
			return 1;
	for (int x = k; x < b->chain_len; x++)
		if (b->chain_idx[x] == pci)
			return 1;
	return 0;
}

int gp_acs_pair_local(const struct gp_topo *t, int i, int j)
{
	const struct gp_topo_link lv = gp_topo_link_at(t, i, j), *l = &lv;

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
 * ACS capability then governs peer traffic between them. A device's functions are neighbours in
 * p->devs (address order). */
static int multifunction_peer(const struct gp_topo *t, int i)
{
	const struct gp_pci *p = t->pci;

	if (p->devs[i].is_bridge || !gp_topo_find(t, i))
		return 0;
	for (int k = i - 1; k >= 0 && same_device(&p->devs[i], &p->devs[k]); k--)
		if (gp_topo_find(t, k))
			return 1;
	for (int k = i + 1; k < p->n && same_device(&p->devs[i], &p->devs[k]); k++)
		if (gp_topo_find(t, k))
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
	for (int i = 0; i < a->n; i++) {
		free(a->b[i].side);
		free(a->b[i].other);
	}
	free(a->b);
	free(a->firsts);
	memset(a, 0, sizeof(*a));
}

#define BIT_SET(m, x) ((m)[(x) >> 6] |= 1ull << ((x) & 63))
#define BIT_GET(m, x) (((m)[(x) >> 6] >> ((x) & 63)) & 1u)

/* The lowest x >= from (below n) whose bit is set in m (clear where inv), and set in mask (NULL: any).
 * n when none. Word by word: a listing skips the entries on the wrong side 64 at a time. */
static int next_bit(const uint64_t *m, int inv, const uint64_t *mask, int n, int from)
{
	for (int w = from >> 6; from < n; w++, from = w << 6) {
		uint64_t v = (inv ? ~m[w] : m[w]) & (mask ? mask[w] : ~0ull) & (~0ull << (from & 63));

		if (v) {
			int x = (w << 6) + __builtin_ctzll(v);

			return x < n ? x : n;
		}
	}
	return n;
}

int gp_acs_pair_next(const struct gp_acs_audit *a, const struct gp_acs_bridge *b, int grouped, int *i, int *j)
{
	const uint64_t *mask = grouped && !b->other ? a->firsts : NULL;
	int n = a->nent, x = *i < 0 ? 0 : *i, y = *i < 0 ? 0 : *j + 1;

	for (; x < n; x++, y = 0) {
		int in_side, from;

		if (b->other) { /* a function's few pairs: straight to the next entry on either side */
			int xs = next_bit(b->side, 0, NULL, n, x), xo = next_bit(b->other, 0, NULL, n, x);

			if (xs != x && xo != x) {
				x = (xs < xo ? xs : xo) - 1;
				continue;
			}
		}
		if (mask && !BIT_GET(mask, x))
			continue;
		in_side = (int)BIT_GET(b->side, x);
		from = y > x ? y : x + 1;
		if (in_side)
			y = b->other ? next_bit(b->other, 0, mask, n, from) : next_bit(b->side, 1, mask, n, from);
		else
			y = next_bit(b->side, 0, mask, n, from);
		if (y < n) {
			*i = x;
			*j = y;
			GP_STAT_ADD(pair_visits, 1);
			return 1;
		}
	}
	return 0;
}

const char *gp_acs_pair_name(const struct gp_topo *t, const struct gp_acs_bridge *b, int grouped, int i, char *buf,
			     size_t n)
{
	if (grouped && !b->other)
		return gp_topo_group_name(t, i, buf, n);
	snprintf(buf, n, "%s", t->devs[i].name);
	return buf;
}

static int popcount(const uint64_t *m, int n)
{
	int c = 0;

	for (int w = 0; w < (n + 63) / 64; w++)
		c += __builtin_popcountll(m[w]);
	return c;
}

/* Pairs across bridge b (its side: the entries below it) that would stay below the host bridge. An
 * entry y outside meets the side at the lowest bridge they share, an ancestor A of b's: PIX/PXB unless
 * none (through the host bridge) or A hosts a PCI domain (Intel VMD). So the count is the side times,
 * for each ancestor A, the entries below A but not below its child on b's path (below[]: entries per
 * function); less the GPU pairs that NVLink joins. -1 where a chain names a function not enumerated. */
static int local_pairs(const struct gp_topo *t, const struct gp_acs_bridge *b, const int *below)
{
	const struct gp_pci_dev *d = &t->pci->devs[b->pci];
	long outside = 0;
	int child = b->pci, nl;

	for (int k = d->chain_len - 1; k >= 0; k--) {
		int anc = d->chain_idx[k];

		GP_STAT_ADD(path_steps, 1);
		if (anc < 0)
			return -1;
		if (!(d->domain_below >> k & 1u))
			outside += below[anc] - below[child];
		child = anc;
	}
	nl = (int)(outside * b->nside);
	for (int g = 0; g < t->ngpu; g++)
		for (int h = g + 1; h < t->ngpu; h++) {
			struct gp_topo_link l;

			if (BIT_GET(b->side, g) == BIT_GET(b->side, h))
				continue;
			l = gp_topo_link_at(t, g, h);
			nl -= l.cls == GP_TC_NV && (l.pcie == GP_TC_PIX || l.pcie == GP_TC_PXB);
		}
	return nl;
}

/* The same, one pair at a time (where a chain names a function that was not enumerated). */
static int local_pairs_each(const struct gp_acs_audit *a, const struct gp_topo *t, const struct gp_acs_bridge *b)
{
	int i = -1, j = -1, nl = 0;

	while (gp_acs_pair_next(a, b, 0, &i, &j))
		nl += gp_acs_pair_local(t, i, j);
	return nl;
}

/* The sides of every audited function: one walk up each entry's chain (slot: audit index per PCI
 * function, -1 none), counting entries below every function as it goes. */
static void fill_sides(const struct gp_topo *t, struct gp_acs_audit *a, const int *slot, int *below)
{
	const struct gp_pci *p = t->pci;

	for (int x = 0; x < t->n; x++) {
		const struct gp_pci_dev *d = &p->devs[t->devs[x].pci];

		GP_STAT_ADD(path_steps, d->chain_len);
		for (int k = 0; k < d->chain_len; k++) {
			int c = d->chain_idx[k];

			if (c < 0)
				continue;
			below[c]++;
			if (slot[c] >= 0 && p->devs[c].is_bridge)
				BIT_SET(a->b[slot[c]].side, x);
		}
	}
}

int gp_acs_audit(const struct gp_topo *t, struct gp_acs_audit *a)
{
	const struct gp_pci *p = t->pci;
	size_t words = (size_t)(t->n + 63) / 64 + 1;
	int *slot = NULL, *below = NULL;

	memset(a, 0, sizeof(*a));
	a->nent = t->n;
	a->b = calloc((size_t)(p->n ? p->n : 1), sizeof(*a->b));
	a->firsts = calloc(words, sizeof(*a->firsts));
	slot = malloc((size_t)(p->n ? p->n : 1) * sizeof(*slot));
	below = calloc((size_t)(p->n ? p->n : 1), sizeof(*below));
	if (!a->b || !a->firsts || !slot || !below)
		goto oom;
	for (int x = 0; x < t->n; x++)
		if (t->devs[x].group == x)
			BIT_SET(a->firsts, x);
	for (int i = 0; i < p->n; i++) {
		const struct gp_pci_dev *d = &p->devs[i];
		struct gp_acs_bridge *b = &a->b[a->n];
		int st;

		slot[i] = -1;
		if (!d->is_bridge && !multifunction_peer(t, i))
			continue;
		st = gp_acs_read(d, &b->cap, &b->ctl);
		if (st == 0)
			continue;
		b->pci = i;
		b->state = st > 0 ? GP_PRESENT : GP_UNKNOWN;
		b->ctl_off = gp_acs_ctl_offset(d);
		b->redirects = st > 0 ? (b->ctl & GP_ACS_REDIRECT) != 0 : -1;
		b->side = calloc(words, sizeof(*b->side));
		if (!d->is_bridge)
			b->other = calloc(words, sizeof(*b->other));
		slot[i] = a->n++;
		if (!b->side || (!d->is_bridge && !b->other))
			goto oom;
		if (!d->is_bridge) {
			/* itself, against its device's other GPU/NIC functions (its neighbours in p->devs) */
			int self = t->of_pci[i];

			BIT_SET(b->side, self);
			for (int k = i - 1; k >= 0 && same_device(d, &p->devs[k]); k--)
				if (t->of_pci[k] >= 0)
					BIT_SET(b->other, t->of_pci[k]);
			for (int k = i + 1; k < p->n && same_device(d, &p->devs[k]); k++)
				if (t->of_pci[k] >= 0)
					BIT_SET(b->other, t->of_pci[k]);
		}
	}
	fill_sides(t, a, slot, below);
	for (int k = 0; k < a->n; k++) {
		struct gp_acs_bridge *b = &a->b[k];

		b->nside = popcount(b->side, t->n);
		b->nother = b->other ? popcount(b->other, t->n) : t->n - b->nside;
		b->npairs = b->nside * b->nother;
		if (!b->other) {
			b->nlocal = b->npairs ? local_pairs(t, b, below) : 0;
			if (b->nlocal < 0)
				b->nlocal = local_pairs_each(a, t, b);
		} else {
			b->nlocal = b->npairs; /* functions of one device: each pair is local */
		}
		b->impact = impact_of(b);
		a->redirect_high += b->impact == GP_ACS_IMPACT_HIGH;
		a->redirect_low += b->impact == GP_ACS_IMPACT_LOW;
		if (b->npairs && b->redirects > 0)
			a->on_path_redirecting++;
		if (b->npairs && b->redirects < 0)
			a->on_path_unknown++;
	}
	free(slot);
	free(below);
	return 0;
oom:
	free(slot);
	free(below);
	gp_acs_audit_free(a);
	return -ENOMEM;
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
