/* gpup2p — device selection and pair classification. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpup2p/topo.h"

#define VENDOR_NVIDIA 0x10de
#define VENDOR_MELLANOX 0x15b3

int gp_topo_parse_match(const char *s, struct gp_topo_match *m)
{
	unsigned v, d;
	char tail;

	if (!s)
		return -EINVAL;
	if (sscanf(s, "%4x:%4x%c", &v, &d, &tail) == 2 && strlen(s) <= 9) {
		m->vendor = v;
		m->device = d;
		return 0;
	}
	if (sscanf(s, "%4x:*%c", &v, &tail) == 1 && s[strlen(s) - 1] == '*' && strlen(s) <= 6) {
		m->vendor = v;
		m->device = GP_TOPO_ANY_DEVICE;
		return 0;
	}
	return -EINVAL;
}

int gp_topo_is_gpu(const struct gp_pci_dev *d, const struct gp_topo_match *m, int nm)
{
	if (d->is_bridge)
		return 0;
	if (d->vendor == VENDOR_NVIDIA && (d->class_code >> 16) == 0x03)
		return 1;
	for (int i = 0; i < nm; i++)
		if (m[i].vendor == d->vendor && (m[i].device == GP_TOPO_ANY_DEVICE || m[i].device == d->device))
			return 1;
	return 0;
}

int gp_topo_is_nic(const struct gp_pci_dev *d)
{
	int network = (d->class_code >> 16) == 0x02 || (d->class_code >> 8) == 0x0c06;

	if (d->is_bridge || !network)
		return 0;
	return d->rdma[0] || d->vendor == VENDOR_MELLANOX;
}

int gp_topo_common_bridges(const struct gp_pci_dev *a, const struct gp_pci_dev *b)
{
	int k = 0;

	if (strcmp(a->host_bridge, b->host_bridge) != 0)
		return 0;
	while (k < a->chain_len && k < b->chain_len && strcmp(a->chain[k], b->chain[k]) == 0)
		k++;
	return k;
}

enum gp_topo_class gp_topo_classify_pcie(const struct gp_pci *p, int ia, int ib, int *switches)
{
	const struct gp_pci_dev *a = &p->devs[ia], *b = &p->devs[ib];
	int k, sa, sb;

	*switches = 0;
	if (ia == ib)
		return GP_TC_X;
	if (strcmp(a->host_bridge, b->host_bridge) != 0) {
		if (a->numa_node >= 0 && b->numa_node >= 0 && a->numa_node != b->numa_node)
			return GP_TC_SYS;
		return GP_TC_NODE;
	}
	k = gp_topo_common_bridges(a, b);
	if (k == 0)
		return GP_TC_PHB;
	/* The lowest common bridge is one switch (or the root port); below it each side
	 * crosses a downstream port, then (upstream, downstream) per further switch. */
	sa = a->chain_len - k;
	sb = b->chain_len - k;
	*switches = 1 + (sa > 1 ? (sa - 1) / 2 : 0) + (sb > 1 ? (sb - 1) / 2 : 0);
	return *switches == 1 ? GP_TC_PIX : GP_TC_PXB;
}

const char *gp_topo_class_name(enum gp_topo_class c)
{
	switch (c) {
	case GP_TC_X: return "X";
	case GP_TC_NV: return "NV";
	case GP_TC_PIX: return "PIX";
	case GP_TC_PXB: return "PXB";
	case GP_TC_PHB: return "PHB";
	case GP_TC_NODE: return "NODE";
	case GP_TC_SYS: return "SYS";
	}
	return "?";
}

const char *gp_topo_code(const struct gp_topo_link *l, char *buf, size_t n)
{
	if (l->cls == GP_TC_NV)
		snprintf(buf, n, "NV%d", l->nvlinks);
	else
		snprintf(buf, n, "%s", gp_topo_class_name(l->cls));
	return buf;
}

const struct gp_topo_link *gp_topo_link_at(const struct gp_topo *t, int i, int j)
{
	return &t->links[(size_t)i * (size_t)t->n + (size_t)j];
}

const struct gp_topo_dev *gp_topo_find(const struct gp_topo *t, int pci)
{
	for (int i = 0; i < t->n; i++)
		if (t->devs[i].pci == pci)
			return &t->devs[i];
	return NULL;
}

const char *gp_topo_display_name(const struct gp_topo *t, int pci, char *buf, size_t n)
{
	const struct gp_pci_dev *d = &t->pci->devs[pci];
	const struct gp_gpu_info *g = t->facts && t->facts->available ? gp_gpu_find(t->facts, d->bdf) : NULL;

	if (g && g->name[0])
		snprintf(buf, n, "%s", g->name);
	else
		gp_pci_name(t->pci, d, GP_NAME_DEVICE, buf, n);
	return buf;
}

int gp_topo_numa(const struct gp_topo *t, int i)
{
	return t->pci->devs[t->devs[i].pci].numa_node;
}

static void label_of(struct gp_topo_dev *td, const struct gp_pci_dev *d, const struct gp_gpu_facts *facts)
{
	const struct gp_gpu_info *g;

	if (td->kind == GP_TOPO_NIC) {
		snprintf(td->label, sizeof(td->label), "%s", d->rdma[0] ? d->rdma : d->netdev[0] ? d->netdev : d->bdf);
		return;
	}
	g = facts && facts->available ? gp_gpu_find(facts, d->bdf) : NULL;
	snprintf(td->label, sizeof(td->label), "%s", g ? g->name : "");
}

int gp_topo_build(struct gp_topo *t, const struct gp_pci *p, const struct gp_gpu_facts *facts,
		  const struct gp_topo_match *m, int nm, struct gp_err *e)
{
	int n = 0;

	memset(t, 0, sizeof(*t));
	t->pci = p;
	t->facts = facts;
	t->nvlink_checked = facts && facts->available;
	t->devs = calloc((size_t)(p->n ? p->n : 1), sizeof(*t->devs));
	if (!t->devs)
		return gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory");
	/* p->devs is sorted by BDF: PCI bus order, as nvidia-smi and CUDA_DEVICE_ORDER=PCI_BUS_ID. */
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < p->n; i++) {
			const struct gp_pci_dev *d = &p->devs[i];
			struct gp_topo_dev *td = &t->devs[n];

			if (pass == 0 ? !gp_topo_is_gpu(d, m, nm) : (gp_topo_is_gpu(d, m, nm) || !gp_topo_is_nic(d)))
				continue;
			td->pci = i;
			td->kind = pass == 0 ? GP_TOPO_GPU : GP_TOPO_NIC;
			snprintf(td->name, sizeof(td->name), "%s%d", pass == 0 ? "GPU" : "NIC",
				 pass == 0 ? t->ngpu++ : t->nnic++);
			label_of(td, d, facts);
			n++;
		}
	}
	t->n = n;
	t->links = calloc((size_t)(n ? n * n : 1), sizeof(*t->links));
	if (!t->links) {
		gp_topo_free(t);
		return gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory");
	}
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < n; j++) {
			struct gp_topo_link *l = &t->links[(size_t)i * (size_t)n + (size_t)j];
			const struct gp_pci_dev *a = &p->devs[t->devs[i].pci], *b = &p->devs[t->devs[j].pci];

			l->pcie = gp_topo_classify_pcie(p, t->devs[i].pci, t->devs[j].pci, &l->switches);
			l->cls = l->pcie;
			l->nvlinks = -1;
			if (i != j && t->devs[i].kind == GP_TOPO_GPU && t->devs[j].kind == GP_TOPO_GPU) {
				l->nvlinks = t->nvlink_checked ? gp_gpu_nvlinks(facts, a->bdf, b->bdf) : -1;
				if (l->nvlinks > 0)
					l->cls = GP_TC_NV;
			}
		}
	}
	return 0;
}

void gp_topo_free(struct gp_topo *t)
{
	free(t->devs);
	free(t->links);
	t->devs = NULL;
	t->links = NULL;
	t->n = 0;
}

int gp_topo_on_path(const struct gp_topo *t, int idx)
{
	const char *bdf = t->pci->devs[idx].bdf;

	for (int i = 0; i < t->n; i++) {
		const struct gp_pci_dev *d = &t->pci->devs[t->devs[i].pci];

		if (t->devs[i].pci == idx)
			return 1;
		for (int k = 0; k < d->chain_len; k++)
			if (strcmp(d->chain[k], bdf) == 0)
				return 1;
	}
	return 0;
}

int gp_topo_host_bridges(const struct gp_pci *p, char (*out)[32], int max)
{
	int n = 0;

	for (int i = 0; i < p->n; i++) {
		int seen = 0;

		for (int k = 0; k < n && !seen; k++)
			seen = strcmp(out[k], p->devs[i].host_bridge) == 0;
		if (!seen && n < max)
			snprintf(out[n++], 32, "%s", p->devs[i].host_bridge);
	}
	return n;
}

int gp_topo_host_bridge_numa(const struct gp_pci *p, const char *hb)
{
	int node = -2;

	for (int i = 0; i < p->n; i++) {
		if (strcmp(p->devs[i].host_bridge, hb) != 0)
			continue;
		if (node == -2)
			node = p->devs[i].numa_node;
		else if (node != p->devs[i].numa_node)
			return -1;
	}
	return node < 0 ? -1 : node;
}

int gp_topo_link_degraded(const struct gp_pci_dev *d)
{
	if (d->cur_gts > 0 && d->max_gts > 0 && d->cur_gts + 0.1 < d->max_gts)
		return 1;
	return d->cur_width > 0 && d->max_width > 0 && d->cur_width < d->max_width;
}
