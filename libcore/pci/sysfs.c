/* gpup2p — sysfs facts about PCI functions that libpci does not keep. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpup2p/pci.h"
#include "pci/internal.h"

void gp_pci_warn(struct gp_pci *p, const char *fmt, ...)
{
	va_list ap;
	char **nw, *s = NULL;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (!s)
		return;
	nw = realloc(p->warnings, (size_t)(p->nwarn + 2) * sizeof(*nw));
	if (!nw) {
		free(s);
		return;
	}
	p->warnings = nw;
	p->warnings[p->nwarn++] = s;
	p->warnings[p->nwarn] = NULL;
}

/* The strings functions point at live in chunks of this size (a longer one gets a chunk of its own). */
#define STR_CHUNK 65536

struct str_chunk {
	struct str_chunk *next;
	size_t used, cap;
	char data[];
};

const char *gp_pci_keep_str(struct gp_pci *p, const char *s)
{
	struct str_chunk *c = p->strs;
	size_t len = strlen(s) + 1;

	if (len == 1)
		return "";
	if (!c || c->cap - c->used < len) {
		size_t cap = len > STR_CHUNK ? len : STR_CHUNK;

		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->used = 0;
		c->cap = cap;
		c->next = p->strs;
		p->strs = c;
	}
	memcpy(c->data + c->used, s, len);
	c->used += len;
	return c->data + c->used - len;
}

void gp_pci_free_strs(struct gp_pci *p)
{
	for (struct str_chunk *c = p->strs, *next; c; c = next) {
		next = c->next;
		free(c);
	}
	p->strs = NULL;
}

/* "32.0 GT/s PCIe" → 32.0; "Unknown" or missing → 0. */
static double parse_speed(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || v <= 0 || v > 1000)
		return 0;
	return v;
}

/* gp_root_read_text_in of the function's file `name`: not asked when its folder's listing lacks it
 * (-ENOENT), read with one open, read and close when the listing shows a regular file. */
static ssize_t fn_text(const struct gp_pci *p, struct gp_pci_fn *f, const char *name, char *buf, size_t n)
{
	char path[GP_PATH_MAX];
	int t = gp_root_ent_type(f->d.ents, f->d.n, name);

	if (t == DT_REG)
		return gp_pci_fn_text_listed(p->root, f, name, buf, n);
	if (t != -1)
		return gp_root_read_text_in(p->root, f->d.fd, f->d.path, name, buf, n);
	snprintf(path, sizeof(path), "%s/%s", f->d.path, name);
	gp_root_trace(path, ENOENT);
	return -ENOENT;
}

/* The function's files are read in its folder f. */
static void read_link(struct gp_pci *p, struct gp_pci_dev *g, struct gp_pci_fn *f)
{
	const char *dir = f->d.path;
	static const char *const files[] = { "current_link_speed", "max_link_speed",
					     "current_link_width", "max_link_width" };
	char path[GP_PATH_MAX], buf[64], *end;
	ssize_t rc;

	for (int i = 0; i < 4; i++) {
		long w;

		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		rc = fn_text(p, f, files[i], buf, sizeof(buf));
		if (rc == -EFBIG)
			gp_pci_warn(p, "%s%s: malformed link %s (longer than %zu bytes)", p->root->dir, path,
				    i < 2 ? "speed" : "width", sizeof(buf) - 1);
		if (rc <= 0)
			continue;
		if (i < 2) {
			double v = parse_speed(buf);

			if (v == 0 && strncmp(buf, "Unknown", 7) != 0)
				gp_pci_warn(p, "%s%s: malformed link speed \"%s\"", p->root->dir, path, buf);
			*(i == 0 ? &g->cur_gts : &g->max_gts) = v;
			continue;
		}
		w = strtol(buf, &end, 10);
		if (*end || w < 0 || w > 32) {
			gp_pci_warn(p, "%s%s: malformed link width \"%s\"", p->root->dir, path, buf);
			continue;
		}
		*(i == 2 ? &g->cur_width : &g->max_width) = (int)w;
	}
}

static int read_numa(struct gp_pci *p, struct gp_pci_dev *g, struct gp_pci_fn *f, const struct gp_pci_dev *prev,
		     struct gp_err *e)
{
	const char *dir = f->d.path;
	char path[GP_PATH_MAX], buf[64], *end, list[4096];
	ssize_t rc;
	long v;

	g->numa_node = -1;
	snprintf(path, sizeof(path), "%s/numa_node", dir);
	if ((rc = fn_text(p, f, "numa_node", buf, sizeof(buf))) == -EFBIG)
		gp_pci_warn(p, "%s%s: malformed NUMA node (longer than %zu bytes; treated as unknown)", p->root->dir,
			    path, sizeof(buf) - 1);
	if (rc >= 0) {
		v = strtol(buf, &end, 10);
		if (!*buf || *end || v < -1 || v > 4095)
			gp_pci_warn(p, "%s%s: malformed NUMA node \"%s\" (treated as unknown)", p->root->dir, path, buf);
		else
			g->numa_node = (int)v;
	}
	snprintf(path, sizeof(path), "%s/local_cpulist", dir);
	if ((rc = fn_text(p, f, "local_cpulist", list, sizeof(list))) < 0) {
		if (rc == -EFBIG)
			gp_pci_warn(p, "%s%s: CPU list longer than %zu bytes (treated as unknown)", p->root->dir, path,
				    sizeof(list) - 1);
		list[0] = '\0';
	} else if (strspn(list, "0123456789,-") != strlen(list)) {
		gp_pci_warn(p, "%s%s: malformed CPU list \"%s\" (treated as unknown)", p->root->dir, path, list);
		list[0] = '\0';
	}
	/* functions of one socket have one list: keep it once */
	g->cpulist = prev && !strcmp(prev->cpulist, list) ? prev->cpulist : gp_pci_keep_str(p, list);
	if (!g->cpulist)
		return gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory");
	return 0;
}

/* "pciDDDD:BB" (the domain up to 8 digits), as the kernel names a PCI host bridge's bus. */
static int is_host_bridge(const char *tok)
{
	size_t nd, nb;

	if (strncmp(tok, "pci", 3) != 0)
		return 0;
	nd = strspn(tok + 3, "0123456789abcdef");
	if (nd < 4 || nd > 8 || tok[3 + nd] != ':')
		return 0;
	nb = strspn(tok + 4 + nd, "0123456789abcdef");
	return nb == 2 && tok[4 + nd + nb] == '\0';
}

/* The realpath /sys/devices/.../pciDDDD:BB/BDF/BDF/... gives the host bridge and
 * the chain of upstream bridges. */
static int read_chain(struct gp_pci *p, struct gp_pci_dev *g, struct gp_pci_fn *f, struct gp_err *e)
{
	char path[GP_PATH_MAX], *save = NULL, *tok, buf[512];
	int rc;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s", g->bdf);
	rc = gp_pci_fn_canon(p->root, f);
	if (!rc && strlen(f->canon) >= sizeof(buf))
		rc = -ENAMETOOLONG;
	if (!rc)
		strcpy(buf, f->canon);
	if (rc)
		return gp_err_set(e, GP_E_DATA, -rc, "%s%s: cannot resolve link: %s", p->root->dir, path,
				  rc == -EXDEV ? "it points outside the root" : strerror(-rc));
	if (!(g->sysfs_path = gp_pci_keep_str(p, buf)))
		return gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory");
	g->chain_len = 0;
	g->domain_below = 0;
	g->host_bridge[0] = '\0';
	for (tok = strtok_r(buf, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
		char bdf[GP_BDF_LEN];

		if (is_host_bridge(tok)) {
			/* the first one is the host bridge; one further down is a domain that a function above
			 * hosts (Intel VMD: .../0000:00:0e.0/pci10000:00/10000:00:02.0/...) */
			if (!g->host_bridge[0])
				snprintf(g->host_bridge, sizeof(g->host_bridge), "%s", tok);
			else if (g->chain_len > 0)
				g->domain_below |= 1u << (g->chain_len - 1);
			continue;
		}
		if (!g->host_bridge[0] || gp_pci_parse_bdf(tok, bdf) || strcmp(bdf, tok) != 0)
			continue;
		if (strcmp(bdf, g->bdf) == 0)
			break;
		if (g->chain_len >= GP_CHAIN_MAX)
			return gp_err_set(e, GP_E_DATA, E2BIG, "%s: more than %d bridges above the device",
					  g->sysfs_path, GP_CHAIN_MAX);
		snprintf(g->chain[g->chain_len++], GP_BDF_LEN, "%s", bdf);
	}
	if (!g->host_bridge[0])
		return gp_err_set(e, GP_E_DATA, EINVAL, "%s%s -> %s: no pciDDDD:BB host bridge in the path",
				  p->root->dir, path, g->sysfs_path);
	return 0;
}

/* Index of the PCI function a sysfs device path belongs to: the path itself or its nearest PCI
 * ancestor (a virtio-net netdev's device is .../0000:01:00.0/virtio0). -1 when none. */
static int owner_of(const struct gp_pci *p, const char *real)
{
	char buf[512], bdf[GP_BDF_LEN], *slash;

	snprintf(buf, sizeof(buf), "%s", real);
	while ((slash = strrchr(buf, '/')) != NULL) {
		/* a component named exactly as sysfs names a function */
		int idx = gp_pci_parse_bdf(slash + 1, bdf) || strcmp(bdf, slash + 1) ? -1 : gp_pci_index(p, bdf);

		if (idx >= 0)
			return idx;
		*slash = '\0';
	}
	return -1;
}

/* A function's network interface: <dev>/net/NAME (not asked where its folder's listing has no net/). */
static void read_netdev(struct gp_pci *p, struct gp_pci_dev *g, const struct gp_pci_fn *f)
{
	char **names = NULL, path[GP_PATH_MAX];

	snprintf(path, sizeof(path), "%s/net", f->d.path);
	if (gp_root_ent_type(f->d.ents, f->d.n, "net") == -1) {
		gp_root_trace(path, ENOENT);
		return;
	}
	if (gp_root_list(p->root, path, &names) > 0)
		snprintf(g->netdev, sizeof(g->netdev), "%s", names[0]);
	gp_root_free_list(names);
}

/* Network interfaces where the function's folder names none (read_netdev): /sys/class/net/NAME/device
 * pointing at the function or below it (virtio-net). */
static void read_netdevs(struct gp_pci *p)
{
	char **names = NULL, path[GP_PATH_MAX], real[512];
	int n = gp_root_list(p->root, "/sys/class/net", &names);

	for (int i = 0; i < n; i++) {
		int idx;

		snprintf(path, sizeof(path), "/sys/class/net/%s/device", names[i]);
		if (gp_root_realpath(p->root, path, real, sizeof(real)) || (idx = owner_of(p, real)) < 0)
			continue;
		if (!p->devs[idx].netdev[0])
			snprintf(p->devs[idx].netdev, sizeof(p->devs[idx].netdev), "%s", names[i]);
	}
	gp_root_free_list(names);
}

/* Where /sys/class/infiniband/NAME/device leads, as gp_root_link_target gives it: the device's folder
 * opened once (its place read back from the fd), the link read through it and resolved from there
 * (its usual "../.." an ancestor: nothing more to ask). 0 or a negative errno. */
static int rdma_device(const struct gp_root *r, const char *name, char *real, size_t n)
{
	char dir[GP_PATH_MAX], canon[GP_PATH_MAX], text[GP_PATH_MAX], path[GP_PATH_MAX], nm[256];
	ssize_t len;
	int fd, rc;

	snprintf(dir, sizeof(dir), "/sys/class/infiniband/%s", name);
	snprintf(path, sizeof(path), "%s/device", dir);
	fd = gp_root_open(r, dir, O_PATH | O_DIRECTORY);
	if (fd < 0 || gp_root_fd_realpath(r, fd, dir, canon, sizeof(canon))) {
		if (fd >= 0)
			close(fd);
		return gp_root_link_target(r, path, real, n, nm, sizeof(nm));
	}
	len = readlinkat(fd, "device", text, sizeof(text) - 1);
	rc = len < 0 ? errno : 0;
	close(fd);
	gp_root_trace(path, rc);
	if (len < 0)
		return -rc;
	text[len] = '\0';
	return gp_root_link_resolve(r, canon, "device", text, NULL, real, n);
}

/* RDMA devices: /sys/class/infiniband/NAME/device points at the PCI function. A software RDMA device
 * (soft-RoCE, rxe) has no PCI device of its own: its "parent" file names the network interface it
 * runs over, whose function then counts as the RDMA NIC. */
static void read_rdma(struct gp_pci *p)
{
	char **names = NULL, path[GP_PATH_MAX], real[512], parent[64];
	int n = gp_root_list(p->root, "/sys/class/infiniband", &names);

	for (int i = 0; i < n; i++) {
		int idx = -1;

		/* "device" is a link to the function (a file there names nothing: a snapshot would not keep it) */
		if (!rdma_device(p->root, names[i], real, sizeof(real)))
			idx = owner_of(p, real);
		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/parent", names[i]);
		if (idx < 0 && gp_root_read_text(p->root, path, parent, sizeof(parent)) > 0)
			for (int k = 0; idx < 0 && k < p->n; k++)
				if (!strcmp(p->devs[k].netdev, parent))
					idx = k;
		if (idx >= 0 && !p->devs[idx].rdma[0])
			snprintf(p->devs[idx].rdma, sizeof(p->devs[idx].rdma), "%s", names[i]);
	}
	gp_root_free_list(names);
}

/* The NUMA nodes and their CPUs (topo's NUMA Affinity where a device's numa_node is -1). */
static void read_nodes(struct gp_pci *p)
{
	char **names = NULL, path[GP_PATH_MAX];
	int n = gp_root_list(p->root, "/sys/devices/system/node", &names);

	for (int i = 0; i < n; i++) {
		struct gp_pci_node *nd, *more;
		char *end;
		long id;

		if (strncmp(names[i], "node", 4) || (id = strtol(names[i] + 4, &end, 10)) < 0 || *end ||
		    end == names[i] + 4 || id > 1 << 20)
			continue;
		if (!(more = realloc(p->nodes, sizeof(*p->nodes) * (size_t)(p->nnodes + 1))))
			break;
		p->nodes = more;
		nd = &p->nodes[p->nnodes];
		nd->id = (int)id;
		snprintf(path, sizeof(path), "/sys/devices/system/node/%s/cpulist", names[i]);
		if (gp_root_read_text(p->root, path, nd->cpulist, sizeof(nd->cpulist)) < 0 ||
		    strspn(nd->cpulist, "0123456789,-") != strlen(nd->cpulist))
			nd->cpulist[0] = '\0';
		p->nnodes++;
	}
	gp_root_free_list(names);
}

/* A virtual function's physical function: the name its physfn link points at ("" when none). The
 * link is read, not followed (gp_root_link_name). */
static void read_physfn(struct gp_pci_fn *f, char pf[GP_BDF_LEN])
{
	char target[GP_PATH_MAX];
	const char *base;
	int t = gp_root_ent_type(f->d.ents, f->d.n, "physfn");
	ssize_t len = f->d.fd >= 0 && t != -1 ? readlinkat(f->d.fd, "physfn", target, sizeof(target) - 1) : -1;

	pf[0] = '\0';
	if (len <= 0)
		return;
	target[len] = '\0';
	gp_pci_fn_keep(f, "physfn", 1, target, (size_t)len + 1);
	base = strrchr(target, '/');
	if (gp_pci_parse_bdf(base ? base + 1 : target, pf))
		pf[0] = '\0';
}

/* Number the host bridges: the same number, the same host bridge (one name compare per function and
 * host bridge seen). */
static int number_host_bridges(struct gp_pci *p)
{
	int n = 0, *first = malloc((size_t)(p->n ? p->n : 1) * sizeof(*first)); /* a function of each */

	if (!first)
		return -ENOMEM;
	for (int i = 0; i < p->n; i++) {
		struct gp_pci_dev *g = &p->devs[i];
		int k = i > 0 && !strcmp(p->devs[i - 1].host_bridge, g->host_bridge) ? p->devs[i - 1].hb : -1;

		for (int j = 0; k < 0 && j < n; j++)
			if (!strcmp(p->devs[first[j]].host_bridge, g->host_bridge))
				k = j;
		if (k < 0)
			first[n] = i;
		g->hb = k >= 0 ? k : n++;
	}
	free(first);
	return 0;
}

void gp_pci_fn_keep(struct gp_pci_fn *f, const char *name, int link, const void *data, size_t len)
{
	if (!f->keep || f->nkept == GP_PCI_KEPT_MAX || len > sizeof(f->bytes) - f->used)
		return;
	f->kept[f->nkept].name = name;
	f->kept[f->nkept].link = link;
	f->kept[f->nkept].off = f->used;
	f->kept[f->nkept++].len = len;
	memmove(f->bytes + f->used, data, len); /* (data may lie there already) */
	f->used += len;
}

ssize_t gp_pci_fn_text_listed(const struct gp_root *r, struct gp_pci_fn *f, const char *name, char *buf, size_t n)
{
	ssize_t len;
	int whole;

	if (n == 0)
		return -EINVAL;
	if ((len = gp_root_read_raw_listed(r, f->d.fd, f->d.path, name, buf, n, &whole)) >= 0 && whole)
		gp_pci_fn_keep(f, name, 0, buf, (size_t)len);
	return gp_root_text_end(buf, len, n);
}

static const char *kept(const struct gp_pci_fn *f, const char *name, int link, size_t *len)
{
	for (int i = 0; i < f->nkept; i++)
		if (f->kept[i].link == link && f->kept[i].name[0] == name[0] && !strcmp(f->kept[i].name, name)) {
			if (len)
				*len = f->kept[i].len;
			return f->bytes + f->kept[i].off;
		}
	return NULL;
}

const char *gp_pci_fn_file(const struct gp_pci_fn *f, const char *name, size_t *len)
{
	return kept(f, name, 0, len);
}

const char *gp_pci_fn_link(const struct gp_pci_fn *f, const char *name)
{
	return kept(f, name, 1, NULL);
}

const struct gp_root_dir *gp_pci_fn_dir(const struct gp_pci_fn *f)
{
	return &f->d;
}

int gp_pci_fn_canon(const struct gp_root *r, struct gp_pci_fn *f)
{
	if (f->canon_rc == 1 && (f->canon_rc = gp_root_fd_realpath(r, f->d.fd, f->d.path, f->canon, sizeof(f->canon))))
		f->canon[0] = '\0';
	return f->canon_rc;
}

int gp_pci_fill_fn(struct gp_pci *p, int i, struct gp_pci_fn *f, char pf[GP_BDF_LEN], struct gp_err *e)
{
	struct gp_pci_dev *g = &p->devs[i];
	int rc;

	g->cpulist = "";
	pf[0] = '\0';
	if ((rc = read_chain(p, g, f, e)))
		return rc;
	read_link(p, g, f);
	if ((rc = read_numa(p, g, f, i ? &p->devs[i - 1] : NULL, e)))
		return rc;
	read_physfn(f, pf);
	read_netdev(p, g, f);
	return 0;
}

int gp_pci_fill_sysfs(struct gp_pci *p, char (*pf)[GP_BDF_LEN], int rdma, struct gp_err *e)
{
	read_netdevs(p);
	if (number_host_bridges(p))
		return gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory");
	for (int i = 0; i < p->n; i++) {
		struct gp_pci_dev *g = &p->devs[i];

		for (int k = 0; k < g->chain_len; k++)
			g->chain_idx[k] = gp_pci_index(p, g->chain[k]);
		g->parent = g->chain_len ? g->chain_idx[g->chain_len - 1] : -1;
		g->physfn = pf[i][0] ? gp_pci_index(p, pf[i]) : -1;
	}
	if (rdma)
		read_rdma(p);
	read_nodes(p);
	return 0;
}
