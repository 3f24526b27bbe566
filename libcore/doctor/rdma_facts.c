/* gpup2p doctor — the RDMA devices and their ports, read once per run for every check that walks them
 * (rdma.*, bar's and peermem's count of hardware RDMA NICs, rdma.gdr's software devices, expect's port
 * rate): each device's folder resolved once, its ports listed once, their files read by the resolved
 * path (no walk through /sys/class/infiniband's links for each file). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "rdma.h"

/* One port's files (gp_doctor_ib_file), read once: rc[f] the length read (at most IBF_MAX bytes) or the
 * negative errno the read gave; raw their bytes, one after the other (each NUL-terminated). */
struct ib_pfiles {
	int read;
	short rc[IBF_N];
	char *raw;
};

static const char *const ib_file_names[IBF_N] = { "state", "phys_state", "link_layer", "rate" };

const char *gp_doctor_ib_file_name(enum ib_file f)
{
	return ib_file_names[f];
}

/* One RDMA device, as gp_doctor_ib keeps it. */
struct ib_dev {
	struct ibdev d;        /* name, NIC, soft, over */
	char *at;              /* its folder, as gp_root_realpath resolves it; NULL: the class path */
	int np;                /* ports listed (gp_root_list); 0 none, negative the error */
	char **ports;
	struct ib_pfiles *pf;  /* np of them, allocated on the first port file asked */
	int first;             /* the index of its first port among all the devices' ports */
	char uv[64];           /* its uverbs device ("uverbs3"), "" none (once uv_read) */
};

struct gp_doctor_ib {
	int n;                 /* gp_root_list of /sys/class/infiniband: devices, 0 none, negative an error */
	char **names;          /* sorted */
	struct ib_dev *dev;
	int hw;                /* topology NICs whose RDMA device is not software RDMA */
	int uv_read;           /* /sys/class/infiniband_verbs read into each dev's uv */
};

/* The topology entry (a NIC) of RDMA device name, or -1. */
static int topo_nic(const struct gp_doctor_ctx *c, const char *name)
{
	for (int j = c->topo->ngpu; j < c->topo->n; j++)
		if (!strcmp(gp_doctor_dev(c, j)->rdma, name))
			return j;
	return -1;
}

/* The names in a folder's listing (gp_root_list's form: sorted, NULL-terminated, the count or a
 * negative errno; a missing folder or not one: 0). */
static int listed(const struct gp_root *r, int dfd, const char *dir, const char *name, char ***names)
{
	int fd = gp_root_open_in(r, dfd, dir, name, O_RDONLY | O_DIRECTORY), n;
	char path[GP_PATH_MAX + 16];
	struct gp_root_ent *ents = NULL;

	*names = NULL;
	if (fd < 0)
		return fd == -ENOENT || fd == -ENOTDIR ? 0 : fd;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	n = gp_root_entries(r, fd, path, &ents);
	close(fd);
	if (n >= 0 && !(*names = calloc((size_t)n + 1, sizeof(**names))))
		n = -ENOMEM;
	for (int i = 0; i < n; i++)
		if (!((*names)[i] = strdup(ents[i].name))) {
			gp_root_free_list(*names);
			*names = NULL;
			n = -ENOMEM;
		}
	free(ents);
	return n;
}

/* Fill device i from its folder, opened once: where it lies, soft/over (software RDMA has no device
 * link: mlx5_0/device points at the PCI function; rxe0 lives under /sys/devices/virtual and names its
 * interface in "parent"), its ports. As gp_root_exists, gp_doctor_read and gp_root_list of the paths
 * under /sys/class/infiniband/DEV would answer, without walking them. */
static int read_dev(struct gp_doctor_ctx *c, struct gp_doctor_ib *b, int i)
{
	struct ib_dev *v = &b->dev[i];
	char cls[160], real[GP_PATH_MAX];
	int fd, dev;

	v->d.name = b->names[i];
	v->d.nic = -1;
	snprintf(cls, sizeof(cls), "/sys/class/infiniband/%s", b->names[i]);
	fd = gp_root_open(c->root, cls, O_RDONLY | O_DIRECTORY);
	dev = fd < 0 ? -1 : gp_root_open_in(c->root, fd, cls, "device", O_PATH);
	v->d.soft = dev < 0;
	if (dev >= 0)
		close(dev);
	if (!v->d.soft || fd < 0 || gp_root_read_text_in(c->root, fd, cls, "parent", v->d.over, sizeof(v->d.over)) <= 0)
		v->d.over[0] = '\0';
	v->np = fd < 0 ? (fd == -ENOENT || fd == -ENOTDIR ? 0 : fd) : listed(c->root, fd, cls, "ports", &v->ports);
	/* where the ports' files are read: only a device with ports needs it */
	if (v->np > 0 && !gp_root_fd_realpath(c->root, fd, cls, real, sizeof(real)) && strlen(real) < 320 &&
	    !(v->at = strdup(real)))
		v->np = -ENOMEM;
	if (fd >= 0)
		close(fd);
	return v->np == -ENOMEM ? -ENOMEM : 0;
}

/* The devices' NICs: one pass over the topology's NICs, each looked up among the sorted names (the
 * first NIC in topology order that names a device, as topo_nic). */
static void find_nics(struct gp_doctor_ctx *c, struct gp_doctor_ib *b)
{
	for (int j = c->topo->ngpu; j < c->topo->n; j++) {
		const char *rdma = gp_doctor_dev(c, j)->rdma, **hit;

		if (!rdma[0] || !(hit = bsearch(&rdma, b->names, (size_t)b->n, sizeof(*b->names), gp_doctor_ib_cmp)))
			continue;
		if (b->dev[hit - (const char **)b->names].d.nic < 0)
			b->dev[hit - (const char **)b->names].d.nic = j;
	}
}

int gp_doctor_ib_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The devices, read on first use; NULL when out of memory (then c->out says so). */
static struct gp_doctor_ib *ib(struct gp_doctor_ctx *c)
{
	struct gp_doctor_ib *b = c->ib;
	int ports = 0;

	if (b)
		return b;
	if (!(b = calloc(1, sizeof(*b)))) {
		c->out.nomem = 1;
		return NULL;
	}
	b->n = gp_root_list(c->root, "/sys/class/infiniband", &b->names);
	if (b->n > 0 && !(b->dev = calloc((size_t)b->n, sizeof(*b->dev))))
		goto oom;
	for (int i = 0; i < b->n; i++) {
		if (read_dev(c, b, i))
			goto oom;
		b->dev[i].first = ports;
		ports += b->dev[i].np > 0 ? b->dev[i].np : 0;
	}
	c->ib = b;
	if (b->n > 0)
		find_nics(c, b);
	for (int j = 0; j < c->topo->n; j++) {
		int i = gp_doctor_ib_find(c, gp_doctor_dev(c, j)->rdma);

		b->hw += c->topo->devs[j].kind == GP_TOPO_NIC && i >= 0 && !b->dev[i].d.soft;
	}
	return b;
oom:
	c->ib = b;
	gp_doctor_ib_free(c);
	c->out.nomem = 1;
	return NULL;
}

int gp_doctor_ib_count(struct gp_doctor_ctx *c)
{
	return ib(c) ? c->ib->n : 0;
}

int gp_doctor_ib_find(struct gp_doctor_ctx *c, const char *name)
{
	struct gp_doctor_ib *b = ib(c);
	char **hit;

	if (!b || b->n <= 0 || !name[0])
		return -1;
	hit = bsearch(&name, b->names, (size_t)b->n, sizeof(*b->names), gp_doctor_ib_cmp);
	return hit ? (int)(hit - b->names) : -1;
}

int gp_doctor_ib_soft(struct gp_doctor_ctx *c, const char *name)
{
	int i = gp_doctor_ib_find(c, name);
	char path[160];

	if (i >= 0)
		return c->ib->dev[i].d.soft;
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device", name);
	return !gp_root_exists(c->root, path);
}

int gp_doctor_ib_nic(struct gp_doctor_ctx *c, const char *name)
{
	int i = gp_doctor_ib_find(c, name);

	return i >= 0 ? c->ib->dev[i].d.nic : topo_nic(c, name);
}

int gp_doctor_ib_hw_nics(struct gp_doctor_ctx *c)
{
	return ib(c) ? c->ib->hw : -1;
}

const char *gp_doctor_ib_name(struct gp_doctor_ctx *c, int i)
{
	return c->ib->names[i];
}

int gp_doctor_ib_ports(struct gp_doctor_ctx *c, int i, char ***ports)
{
	*ports = c->ib->dev[i].ports;
	return c->ib->dev[i].np;
}

void gp_doctor_ib_port(struct gp_doctor_ctx *c, int i, int k, struct ibport *p)
{
	const struct ib_dev *v = &c->ib->dev[i];

	memset(p, 0, sizeof(*p));
	p->d = v->d;
	p->port = v->ports[k];
	p->idx = v->first + k;
	p->dev = i;
	p->k = k;
	snprintf(p->subject, sizeof(p->subject), "%s/%s", v->d.name, p->port);
	snprintf(p->base, sizeof(p->base), "/sys/class/infiniband/%s/ports/%s", v->d.name, p->port);
	if (!v->at || (size_t)snprintf(p->at, sizeof(p->at), "%s/ports/%s", v->at, p->port) >= sizeof(p->at))
		snprintf(p->at, sizeof(p->at), "%s", p->base);
}

/* Read port p's files into pf: the folder opened and listed once, the files it shows read through it. */
static void read_pfiles(struct gp_doctor_ctx *c, const struct ibport *p, struct ib_pfiles *pf)
{
	struct gp_root_dir d;
	char *raw[IBF_N];
	size_t all = 0;

	gp_root_dir_open(c->root, &d, -1, p->at, NULL);
	for (int f = 0; f < IBF_N; f++) {
		long rc = gp_root_dir_read_alloc(c->root, &d, ib_file_names[f], &raw[f], IBF_MAX);

		pf->rc[f] = (short)rc;
		all += rc < 0 ? 0 : (size_t)rc + 1;
	}
	gp_root_dir_close(&d);
	/* kept in one block (thousands of ports) */
	if (all && !(pf->raw = malloc(all)))
		for (int f = 0; f < IBF_N; f++)
			pf->rc[f] = -ENOMEM;
	all = 0;
	for (int f = 0; f < IBF_N; f++) {
		if (pf->rc[f] >= 0 && pf->raw) {
			memcpy(pf->raw + all, raw[f], (size_t)pf->rc[f] + 1);
			all += (size_t)pf->rc[f] + 1;
		}
		free(raw[f]);
	}
	pf->read = 1;
}

/* Where file f's bytes begin in pf->raw. */
static const char *pfile(const struct ib_pfiles *pf, enum ib_file f)
{
	size_t at = 0;

	for (int g = 0; g < (int)f; g++)
		at += pf->rc[g] < 0 ? 0 : (size_t)pf->rc[g] + 1;
	return pf->raw + at;
}

long gp_doctor_ib_file(struct gp_doctor_ctx *c, const struct ibport *p, enum ib_file f, char *buf, size_t n)
{
	struct ib_dev *v = &c->ib->dev[p->dev];
	struct ib_pfiles *pf;
	size_t len;

	if (!v->pf && !(v->pf = calloc((size_t)v->np, sizeof(*v->pf))))
		return -ENOMEM;
	if (!(pf = &v->pf[p->k])->read)
		read_pfiles(c, p, pf);
	if (pf->rc[f] < 0 || n == 0 || n > IBF_MAX)
		return pf->rc[f] < 0 ? pf->rc[f] : -EINVAL;
	/* what a read of n bytes of the file saw (gp_root_read_text): all of it, or n bytes of a longer one */
	if ((len = (size_t)pf->rc[f]) >= n)
		return -EFBIG;
	memcpy(buf, pfile(pf, f), len);
	buf[len] = '\0';
	if (memchr(buf, '\0', len))
		return -EILSEQ;
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' ' || buf[len - 1] == '\t'))
		buf[--len] = '\0';
	return (long)len;
}

const char *gp_doctor_ib_uverbs(struct gp_doctor_ctx *c, const char *name)
{
	int i = gp_doctor_ib_find(c, name), k;
	char **uv = NULL;

	if (i < 0)
		return NULL;
	if (c->ib->uv_read)
		return c->ib->dev[i].uv;
	/* each uverbsN's ibdev read once; a device's is the first in name order that names it */
	k = gp_root_list(c->root, "/sys/class/infiniband_verbs", &uv);
	for (int u = 0; u < k; u++) {
		char path[160], dev[64];
		int j;

		snprintf(path, sizeof(path), "/sys/class/infiniband_verbs/%s/ibdev", uv[u]);
		if (!strncmp(uv[u], "uverbs", 6) && gp_doctor_read(c, path, dev, sizeof(dev)) > 0 &&
		    (j = gp_doctor_ib_find(c, dev)) >= 0 && !c->ib->dev[j].uv[0])
			snprintf(c->ib->dev[j].uv, sizeof(c->ib->dev[j].uv), "%s", uv[u]);
	}
	gp_root_free_list(uv);
	c->ib->uv_read = 1;
	return c->ib->dev[i].uv;
}

void gp_doctor_ib_free(struct gp_doctor_ctx *c)
{
	struct gp_doctor_ib *b = c->ib;

	if (!b)
		return;
	for (int i = 0; b->dev && i < b->n; i++) {
		for (int k = 0; b->dev[i].pf && k < b->dev[i].np; k++)
			free(b->dev[i].pf[k].raw);
		free(b->dev[i].pf);
		free(b->dev[i].at);
		gp_root_free_list(b->dev[i].ports);
	}
	free(b->dev);
	gp_root_free_list(b->names);
	free(b);
	c->ib = NULL;
}
