/* gpup2p — device selection and pair classification. */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpup2p/stats.h"
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

/* The same bridge: by index (a function's chain names enumerated functions), by name only where one
 * side's is not enumerated. */
static int same_bridge(const struct gp_pci_dev *a, const struct gp_pci_dev *b, int k)
{
	if (a->chain_idx[k] >= 0 || b->chain_idx[k] >= 0)
		return a->chain_idx[k] == b->chain_idx[k];
	return strcmp(a->chain[k], b->chain[k]) == 0;
}

int gp_topo_common_bridges(const struct gp_pci_dev *a, const struct gp_pci_dev *b)
{
	int k = 0;

	if (a->hb != b->hb)
		return 0;
	while (k < a->chain_len && k < b->chain_len && same_bridge(a, b, k))
		k++;
	GP_STAT_ADD(path_steps, k + 1);
	return k;
}

enum gp_topo_class gp_topo_classify_pcie(const struct gp_pci *p, int ia, int ib, int *switches)
{
	const struct gp_pci_dev *a = &p->devs[ia], *b = &p->devs[ib];
	int k, sa, sb;

	*switches = 0;
	if (ia == ib)
		return GP_TC_X;
	if (a->hb != b->hb) {
		if (a->numa_node >= 0 && b->numa_node >= 0 && a->numa_node != b->numa_node)
			return GP_TC_SYS;
		return GP_TC_NODE;
	}
	k = gp_topo_common_bridges(a, b);
	/* No bridge in common, or the last one hosts a PCI domain (Intel VMD) and the two part right
	 * below it, on that domain's root ports: through a host bridge either way. */
	if (k == 0 || (a->domain_below >> (k - 1) & 1u))
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
	if (l->cls == GP_TC_NV) {
		snprintf(buf, n, "NV%d", l->nvlinks);
	} else if (n > 0) {
		/* no snprintf for the common codes: a matrix of 4000 NICs has 16 million cells */
		const char *name = gp_topo_class_name(l->cls);
		size_t len = strlen(name);

		if (len >= n)
			len = n - 1;
		memcpy(buf, name, len);
		buf[len] = '\0';
	}
	return buf;
}

struct gp_topo_link gp_topo_link_at(const struct gp_topo *t, int i, int j)
{
	struct gp_topo_link l = { 0 };
	int sw, nv = -1;

	GP_STAT_ADD(pair_visits, 1);
	/* classified as the lower index against the higher: Intel VMD's test reads the first one's chain */
	if (i > j) {
		int x = i;

		i = j;
		j = x;
	}
	l.pcie = (uint8_t)gp_topo_classify_pcie(t->pci, t->devs[i].pci, t->devs[j].pci, &sw);
	l.switches = (uint8_t)sw;
	l.cls = l.pcie;
	if (i != j && j < t->ngpu && t->nv) {
		nv = t->nv[(size_t)i * (size_t)t->ngpu + (size_t)j];
		if (nv > 0)
			l.cls = GP_TC_NV;
	}
	l.nvlinks = (int16_t)nv;
	return l;
}

const char *gp_topo_code_at(const struct gp_topo *t, int i, int j, char *buf, size_t n)
{
	struct gp_topo_link l = gp_topo_link_at(t, i, j);

	return gp_topo_code(&l, buf, n);
}

const char *gp_topo_vfs_name(const struct gp_topo *t, int i, int nvfs, char *buf, size_t n)
{
	if (nvfs > 0)
		snprintf(buf, n, "%s+%dVF%s", t->devs[i].name, nvfs, nvfs > 1 ? "s" : "");
	else
		snprintf(buf, n, "%s", t->devs[i].name);
	return buf;
}

const char *gp_topo_group_name(const struct gp_topo *t, int g, char *buf, size_t n)
{
	const struct gp_topo_dev *d = &t->devs[g];

	return gp_topo_vfs_name(t, d->lead, d->members - 1, buf, n);
}

void gp_topo_fold_vfs(const struct gp_topo *t, const int *in, int n, int *vfs, int *pos)
{
	for (int k = 0; k < n; k++) {
		vfs[k] = 0;
		if (in[k] >= 0 && in[k] < t->n)
			pos[in[k]] = k;
	}
	for (int k = 0; k < n; k++) {
		int e = in[k], lead = e >= 0 && e < t->n ? t->devs[t->devs[e].group].lead : -1;

		if (lead >= 0 && lead != e && pos[lead] >= 0) {
			vfs[k] = -1 - pos[lead];
			vfs[pos[lead]]++;
		}
	}
	for (int k = 0; k < n; k++)
		if (in[k] >= 0 && in[k] < t->n)
			pos[in[k]] = -1;
}

const struct gp_topo_dev *gp_topo_find(const struct gp_topo *t, int pci)
{
	if (pci < 0 || pci >= t->pci->n || !t->of_pci || t->of_pci[pci] < 0)
		return NULL;
	return &t->devs[t->of_pci[pci]];
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

#define CPUS_MAX 16384

/* A CPU list ("0-3,8") into a bit set of CPUS_MAX; 0, or -1 when malformed or empty. */
static int cpuset(const char *s, uint64_t *set)
{
	int any = 0;

	memset(set, 0, CPUS_MAX / 8);
	while (*s) {
		char *end;
		unsigned long a = strtoul(s, &end, 10), b = a;

		if (end == s)
			return -1;
		if (*end == '-') {
			s = end + 1;
			b = strtoul(s, &end, 10);
			if (end == s || b < a)
				return -1;
		}
		for (unsigned long c = a; c <= b && c < CPUS_MAX; c++)
			set[c / 64] |= 1ULL << (c % 64);
		any = 1;
		s = end + (*end == ',');
		if (*end && *end != ',')
			return -1;
	}
	return any ? 0 : -1;
}

/* 1 when every CPU of sub is in set. */
static int covers(const uint64_t *set, const uint64_t *sub)
{
	for (int w = 0; w < CPUS_MAX / 64; w++)
		if (sub[w] & ~set[w])
			return 0;
	return 1;
}

/* The ids of the nodes whose CPUs all lie in dev, ascending, into ids; how many. */
static int covered_nodes(const struct gp_pci *p, const uint64_t *dev, int *ids, int max)
{
	static _Thread_local uint64_t node[CPUS_MAX / 64];
	int m = 0;

	for (int k = 0; k < p->nnodes && m < max; k++) {
		int at = m;

		if (!p->nodes[k].cpulist[0] || cpuset(p->nodes[k].cpulist, node) || !covers(dev, node))
			continue;
		while (at > 0 && ids[at - 1] > p->nodes[k].id) { /* insertion: sysfs lists node10 before node2 */
			ids[at] = ids[at - 1];
			at--;
		}
		ids[at] = p->nodes[k].id;
		m++;
	}
	return m;
}

const char *gp_topo_numa_affinity(const struct gp_topo *t, int i, char *buf, size_t n)
{
	static _Thread_local uint64_t dev[CPUS_MAX / 64];
	const struct gp_pci_dev *d = &t->pci->devs[t->devs[i].pci];
	int ids[256], m;
	size_t used = 0;

	snprintf(buf, n, "N/A");
	if (d->numa_node >= 0) {
		snprintf(buf, n, "%d", d->numa_node);
		return buf;
	}
	if (!d->cpulist[0] || cpuset(d->cpulist, dev))
		return buf;
	if (t->pci->nnodes <= 1) { /* one node holds every CPU (none listed: a kernel without NUMA, node 0) */
		snprintf(buf, n, "%d", t->pci->nnodes ? t->pci->nodes[0].id : 0);
		return buf;
	}
	if (!(m = covered_nodes(t->pci, dev, ids, 256)))
		return buf;
	for (int k = 0; k < m && used < n; k++) { /* as a list: "0-1,3" */
		int e = k;

		while (e + 1 < m && ids[e + 1] == ids[e] + 1)
			e++;
		used += (size_t)(e > k ? snprintf(buf + used, n - used, "%s%d-%d", k ? "," : "", ids[k], ids[e])
				       : snprintf(buf + used, n - used, "%s%d", k ? "," : "", ids[k]));
		k = e;
	}
	return buf;
}

const char *gp_topo_gpu_numa_id(const struct gp_topo *t, int i, char *buf, size_t n)
{
	const struct gp_pci_dev *d = &t->pci->devs[t->devs[i].pci];
	const struct gp_gpu_info *g = t->devs[i].kind == GP_TOPO_GPU && t->facts && t->facts->available
					      ? gp_gpu_find(t->facts, d->bdf) : NULL;

	if (g && g->st.numa_id >= 0)
		snprintf(buf, n, "%d", g->st.numa_id);
	else
		snprintf(buf, n, "N/A");
	return buf;
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

/* Natural order of two names: runs of digits compare as numbers ("mlx5_2" < "mlx5_10"). */
int gp_topo_name_cmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
			size_t za = strspn(a, "0"), zb = strspn(b, "0"), la, lb;
			int c;

			a += za;
			b += zb;
			la = strspn(a, "0123456789");
			lb = strspn(b, "0123456789");
			if (la != lb)
				return la < lb ? -1 : 1;
			c = strncmp(a, b, la);
			if (c)
				return c;
			a += la;
			b += lb;
			continue;
		}
		if (*a != *b)
			return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
		a++;
		b++;
	}
	return *a ? 1 : *b ? -1 : 0;
}

/* nvidia-smi's NIC order: by RDMA device name (the kernel hands out mlx5_N as devices register, which
 * need not be bus order); NICs without an RDMA device, which nvidia-smi does not list, after them
 * in bus order. */
static int cmp_nic(const void *x, const void *y)
{
	const struct gp_pci_dev *a = *(const struct gp_pci_dev *const *)x, *b = *(const struct gp_pci_dev *const *)y;
	int c;

	if (!a->rdma[0] != !b->rdma[0])
		return a->rdma[0] ? -1 : 1;
	c = a->rdma[0] ? gp_topo_name_cmp(a->rdma, b->rdma) : 0;
	return c ? c : (a > b) - (a < b); /* p->devs is in bus order */
}

/* The NVLinks between every two GPUs (the first ngpu entries), looked up once. */
static void nvlinks_all(struct gp_topo *t, const struct gp_pci *p, const struct gp_gpu_facts *facts)
{
	size_t ng = (size_t)t->ngpu;

	for (size_t i = 0; i < ng; i++)
		for (size_t j = 0; j < ng; j++) {
			const char *a = p->devs[t->devs[i].pci].bdf, *b = p->devs[t->devs[j].pci].bdf;
			int nv = i == j || !t->nvlink_checked ? -1 : gp_gpu_nvlinks(facts, a, b);

			t->nv[i * ng + j] = (int16_t)(nv > INT16_MAX ? INT16_MAX : nv);
		}
}

/* 1 when a virtual function sits where its physical function does: the same parent bridge, host
 * bridge, chain and NUMA node, so every pair class and every bridge crossed is the same. */
static int same_path(const struct gp_pci_dev *vf, const struct gp_pci_dev *pf)
{
	return vf->parent >= 0 && vf->parent == pf->parent && vf->hb == pf->hb && vf->chain_len == pf->chain_len &&
	       vf->domain_below == pf->domain_below && vf->numa_node == pf->numa_node;
}

/* Groups: a NIC's physical function and its virtual functions on the same path are one; a group is
 * known by its lowest entry (the order pairs are listed in), named after the PF. */
static void group_all(struct gp_topo *t, const struct gp_pci *p)
{
	for (int i = 0; i < t->n; i++) {
		const struct gp_pci_dev *d = &p->devs[t->devs[i].pci];
		int pf = d->physfn >= 0 ? t->of_pci[d->physfn] : -1;

		t->devs[i].lead = pf >= 0 && t->devs[i].kind == GP_TOPO_NIC && t->devs[pf].kind == GP_TOPO_NIC &&
				  same_path(d, &p->devs[d->physfn]) ? pf : i;
		t->devs[i].group = -1;
		t->devs[i].members = 0;
	}
	/* the lead's group field first holds the group's lowest entry */
	for (int i = 0; i < t->n; i++) {
		struct gp_topo_dev *l = &t->devs[t->devs[i].lead];

		if (l->group < 0 || i < l->group)
			l->group = i;
	}
	for (int i = 0; i < t->n; i++)
		if (t->devs[i].lead != i)
			t->devs[i].group = t->devs[t->devs[i].lead].group;
	for (int i = 0; i < t->n; i++) {
		struct gp_topo_dev *g = &t->devs[t->devs[i].group];

		g->members++;
		if (t->devs[i].lead == i)
			g->lead = i;
	}
}

int gp_topo_build(struct gp_topo *t, const struct gp_pci *p, const struct gp_gpu_facts *facts,
		  const struct gp_topo_match *m, int nm, struct gp_err *e)
{
	size_t np = (size_t)(p->n ? p->n : 1);
	const struct gp_pci_dev **nics;
	int n = 0;

	memset(t, 0, sizeof(*t));
	t->pci = p;
	t->facts = facts;
	t->nvlink_checked = facts && facts->available;
	t->devs = calloc(np, sizeof(*t->devs));
	t->of_pci = malloc(np * sizeof(*t->of_pci));
	t->on_path = calloc(np, 1);
	nics = malloc(np * sizeof(*nics));
	if (!t->devs || !t->of_pci || !t->on_path || !nics) {
		free(nics);
		gp_topo_free(t);
		return gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory");
	}
	/* GPUs in PCI bus order (p->devs is in address order), as nvidia-smi and
	 * CUDA_DEVICE_ORDER=PCI_BUS_ID; then the NICs in nvidia-smi's order. */
	for (int i = 0; i < p->n; i++) {
		const struct gp_pci_dev *d = &p->devs[i];

		t->of_pci[i] = -1;
		if (gp_topo_is_gpu(d, m, nm)) {
			t->devs[n].pci = i;
			t->devs[n].kind = GP_TOPO_GPU;
			snprintf(t->devs[n].name, sizeof(t->devs[n].name), "GPU%d", t->ngpu++);
			n++;
		} else if (gp_topo_is_nic(d)) {
			nics[t->nnic++] = d;
		}
	}
	qsort(nics, (size_t)t->nnic, sizeof(*nics), cmp_nic);
	for (int k = 0; k < t->nnic; k++, n++) {
		t->devs[n].pci = (int)(nics[k] - p->devs);
		t->devs[n].kind = GP_TOPO_NIC;
		snprintf(t->devs[n].name, sizeof(t->devs[n].name), "NIC%d", k);
	}
	free(nics);
	t->n = n;
	for (int i = 0; i < n; i++) {
		const struct gp_pci_dev *d = &p->devs[t->devs[i].pci];

		label_of(&t->devs[i], d, facts);
		t->of_pci[t->devs[i].pci] = i;
		t->on_path[t->devs[i].pci] = 1;
		for (int k = 0; k < d->chain_len; k++)
			if (d->chain_idx[k] >= 0)
				t->on_path[d->chain_idx[k]] = 1;
	}
	t->nv = calloc((size_t)t->ngpu * (size_t)t->ngpu + 1, sizeof(*t->nv));
	if (!t->nv) {
		gp_topo_free(t);
		return gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory");
	}
	nvlinks_all(t, p, facts);
	group_all(t, p);
	return 0;
}

void gp_topo_free(struct gp_topo *t)
{
	free(t->devs);
	free(t->nv);
	free(t->of_pci);
	free(t->on_path);
	t->devs = NULL;
	t->nv = NULL;
	t->of_pci = NULL;
	t->on_path = NULL;
	t->n = 0;
}

int gp_topo_on_path(const struct gp_topo *t, int idx)
{
	return idx >= 0 && idx < t->pci->n && t->on_path && t->on_path[idx];
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
