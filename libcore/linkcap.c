/* gpup2p — what the links can carry (linkcap.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpup2p/linkcap.h"

/* GB/s one way per PCIe lane, by generation (after line coding). */
static const double lane_gbps[] = { 0, 0.25, 0.5, 0.985, 1.969, 3.938, 7.563 };

double gp_linkcap_nvlink_rate(int arch, const char *name)
{
	static const struct { int arch; const char *name; double rate; } t[] = {
		{ 4, "P100", 20 }, { 5, "V100", 25.78125 }, { 6, "TU10", 25.78125 }, { 7, "A100", 25 },
		{ 7, "A800", 25 }, { 9, "H100", 26.5625 }, { 9, "H200", 26.5625 }, { 9, "H800", 26.5625 },
		{ 9, "H20", 26.5625 }, { 9, "GH200", 26.5625 }, { 10, "B200", 53.125 }, { 10, "B100", 53.125 },
		{ 10, "B300", 53.125 },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (arch >= 0 ? arch == t[i].arch : name && strstr(name, t[i].name))
			return t[i].rate;
	return 53.125;
}

void gp_linkcap_free(struct gp_linkcap *L)
{
	free(L->pcie);
	free(L->gen);
	free(L->width);
	free(L->rate);
	free(L->port);
	free(L->links);
	memset(L, 0, sizeof(*L));
}

/* The PCIe link of GPU bdf at its best: its own capability and its upstream port's. */
static void pcie(struct gp_linkcap *L, int i, const struct gp_pci *pci, const char *bdf)
{
	const struct gp_pci_dev *d = pci ? gp_pci_find(pci, bdf) : NULL;
	int gen, w;

	if (!d)
		return;
	gen = gp_pci_gen(d->max_gts > d->cur_gts ? d->max_gts : d->cur_gts);
	w = d->max_width > d->cur_width ? d->max_width : d->cur_width;
	if (gen > 0 && gen < (int)(sizeof(lane_gbps) / sizeof(lane_gbps[0])) && w > 0) {
		L->gen[i] = gen;
		L->width[i] = w;
		L->pcie[i] = lane_gbps[gen] * w;
	}
}

int gp_linkcap_load(struct gp_linkcap *L, const struct gp_pci *pci, const struct gp_gpu_facts *f,
		    const char *const *bdf, int n)
{
	memset(L, 0, sizeof(*L));
	L->n = n;
	L->pcie = calloc((size_t)n + 1, sizeof(double));
	L->gen = calloc((size_t)n + 1, sizeof(int));
	L->width = calloc((size_t)n + 1, sizeof(int));
	L->rate = calloc((size_t)n + 1, sizeof(double));
	L->port = calloc((size_t)n + 1, sizeof(int));
	L->links = calloc((size_t)n * (size_t)n + 1, sizeof(int));
	if (!L->pcie || !L->gen || !L->width || !L->rate || !L->port || !L->links) {
		gp_linkcap_free(L);
		return -ENOMEM;
	}
	for (int i = 0; i < n; i++) {
		const struct gp_gpu_info *g = f && f->available ? gp_gpu_find(f, bdf[i]) : NULL;

		pcie(L, i, pci, bdf[i]);
		L->port[i] = -1;
		for (int j = 0; j < n; j++)
			L->links[i * n + j] = g && i != j ? gp_gpu_nvlinks(f, bdf[i], bdf[j]) : -1;
		if (!g)
			continue;
		if (g->st.numa_id >= 0)         /* GPU memory a NUMA node: the host is reached over C2C */
			L->pcie[i] = 0;
		L->rate[i] = gp_linkcap_nvlink_rate(g->st.arch, g->name);
		L->port[i] = g->st.nvl_active >= 0 ? g->st.nvl_active : g->switch_links;
		if (g->st.nvl_active < 0)
			for (int j = 0; j < f->nlinks; j++)
				if (!strcmp(f->links[j].a, bdf[i]) || !strcmp(f->links[j].b, bdf[i]))
					L->port[i] += g->switch_links ? 0 : f->links[j].count;
	}
	return 0;
}

/* One way between GPUs a and b: their NVLinks, else PCIe through the host or a switch (the slower end);
 * p2p 0 (copies staged by the driver): PCIe. 0 unknown. */
static double pair(const struct gp_linkcap *L, int a, int b, int p2p, char *why, size_t len)
{
	int k = a >= 0 && b >= 0 && a < L->n && b < L->n ? L->links[a * L->n + b] : -1;
	double r;

	if (k < 0 && p2p)
		return 0;
	if (k > 0 && p2p && L->rate[a] > 0) {
		r = L->rate[a] < L->rate[b] || L->rate[b] <= 0 ? L->rate[a] : L->rate[b];
		snprintf(why, len, "%d NVLinks x %.2f GB/s", k, r);
		return k * r;
	}
	if (a < 0 || b < 0 || a >= L->n || b >= L->n || L->pcie[a] <= 0 || L->pcie[b] <= 0)
		return 0;
	k = L->pcie[a] <= L->pcie[b] ? a : b;
	snprintf(why, len, "PCIe Gen%d x%d", L->gen[k], L->width[k]);
	return L->pcie[k];
}

/* A GPU's PCIe link to host memory. */
static double host(const struct gp_linkcap *L, int g, char *why, size_t len)
{
	if (g < 0 || g >= L->n || L->pcie[g] <= 0)
		return 0;
	snprintf(why, len, "PCIe Gen%d x%d", L->gen[g], L->width[g]);
	return L->pcie[g];
}

/* A pattern's aggregate: the sum over its measured pairs, and no more than the hub's own links. */
static double group(const struct gp_linkcap *L, const struct gp_bench_row *rows, int i, char *why, size_t len)
{
	const struct gp_xfer_spec *a = &rows[i].spec;
	int hub = a->gpu >= 0 ? a->gpu : a->peer_gpu, nvl = 1;
	double sum = 0, port;
	char w[64];

	for (int k = i - 1; k >= 0 && rows[k].group == rows[i].group; k--) {
		const struct gp_xfer_spec *s = &rows[k].spec;
		double c;

		if (rows[k].skip)
			continue;
		c = s->kind == GP_XFER_PEER ? pair(L, s->gpu, s->peer_gpu, s->p2p, w, sizeof(w)) : host(L, s->gpu, w, sizeof(w));
		if (c <= 0)
			return 0;
		nvl &= s->kind == GP_XFER_PEER && strstr(w, "NVLink") != NULL;
		sum += c;
	}
	snprintf(why, len, "the pairs' links together");
	if (hub < 0 || hub >= L->n || L->port[hub] <= 0 || L->rate[hub] <= 0 || !nvl)
		return sum;
	port = L->port[hub] * L->rate[hub];
	if (port < sum) {
		snprintf(why, len, "GPU%d's %d NVLinks x %.2f GB/s", hub, L->port[hub], L->rate[hub]);
		return port;
	}
	return sum;
}

double gp_linkcap_row(const struct gp_linkcap *L, const struct gp_bench_row *rows, int n, int i, char *why,
		      size_t len)
{
	const struct gp_xfer_spec *s = &rows[i].spec;
	double c;

	snprintf(why, len, "unknown");
	if (i < 0 || i >= n || s->chase || !strcmp(rows[i].mode, "latency") || s->kind == GP_XFER_D2D)
		return 0;
	if (rows[i].aggregate)
		return group(L, rows, i, why, len);
	if (s->kind != GP_XFER_PEER)
		return host(L, s->gpu, why, len);
	c = pair(L, s->gpu, s->peer_gpu, s->p2p, why, len);
	if (s->bidir && c > 0)
		snprintf(why + strlen(why), len - strlen(why), ", each way");
	return s->bidir ? 2 * c : c;
}
