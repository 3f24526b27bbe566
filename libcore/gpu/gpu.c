/* gpup2p — GPU facts: recorded format, lookups. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpup2p/gpu.h"

const struct gp_gpu_info *gp_gpu_find(const struct gp_gpu_facts *f, const char *bdf)
{
	for (int i = 0; i < f->n; i++)
		if (strcmp(f->gpus[i].bdf, bdf) == 0)
			return &f->gpus[i];
	return NULL;
}

/* Index of the pair's entry in f->links (either order), or -1. */
static int link_index(const struct gp_gpu_facts *f, const char *a, const char *b)
{
	if (strcmp(a, b) > 0) {
		const char *t = a;

		a = b;
		b = t;
	}
	for (int i = 0; i < f->nlinks; i++)
		if (strcmp(f->links[i].a, a) == 0 && strcmp(f->links[i].b, b) == 0)
			return i;
	return -1;
}

int gp_gpu_add_link(struct gp_gpu_facts *f, const char *a, const char *b, int count)
{
	int i = link_index(f, a, b);

	if (i >= 0) {
		f->links[i].count += count;
		return 0;
	}
	if (f->nlinks >= GP_GPU_LINKS_MAX)
		return -ENOSPC;
	if (strcmp(a, b) > 0) {
		const char *t = a;

		a = b;
		b = t;
	}
	snprintf(f->links[f->nlinks].a, GP_BDF_LEN, "%s", a);
	snprintf(f->links[f->nlinks].b, GP_BDF_LEN, "%s", b);
	f->links[f->nlinks++].count = count;
	return 0;
}

int gp_gpu_nvlinks(const struct gp_gpu_facts *f, const char *a, const char *b)
{
	int i;

	if (!f || !f->available)
		return -1;
	i = link_index(f, a, b);
	return i < 0 ? 0 : f->links[i].count;
}

int gp_gpu_facts_write(const struct gp_gpu_facts *f, FILE *out)
{
	fprintf(out, "gpup2p-gpu-facts %d\n", GP_GPU_FACTS_FORMAT);
	if (!f->available) {
		fprintf(out, "unavailable %s\n", f->why[0] ? f->why : "no reason recorded");
		return ferror(out) ? -EIO : 0;
	}
	fprintf(out, "source nvml\n");
	if (f->driver[0])
		fprintf(out, "driver %s\n", f->driver);
	for (int i = 0; i < f->n; i++) {
		const struct gp_gpu_info *g = &f->gpus[i];

		fprintf(out, "gpu %s vram=%" PRIu64 " bar1=%" PRIu64, g->bdf, g->vram, g->bar1);
		if (g->switch_links)
			fprintf(out, " switch_links=%d", g->switch_links);
		if (g->nvl_down_mask >= 0)
			fprintf(out, " nvlink_down_links=%lld", g->nvl_down_mask);
		if (g->nvl_peer_down >= 0)
			fprintf(out, " nvlink_peer_down=%d", g->nvl_peer_down);
		gp_gpu_state_write(&g->st, out);
		fprintf(out, " name=%s\n", g->name);
	}
	for (int i = 0; i < f->nlinks; i++)
		fprintf(out, "nvlink %s %s %d\n", f->links[i].a, f->links[i].b, f->links[i].count);
	return ferror(out) ? -EIO : 0;
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 10);
	return (*s && !*end && !errno && *s != '-') ? 0 : -1;
}

static int parse_gpu(char *rest, struct gp_gpu_info *g)
{
	char *name = strstr(rest, " name=");
	char *save = NULL, *tok;

	gp_gpu_state_init(&g->st);
	g->nvl_down_mask = g->nvl_peer_down = -1; /* not recorded (an older writer) */
	if (!name)
		return -1;
	*name = '\0';
	snprintf(g->name, sizeof(g->name), "%s", name + 6);
	tok = strtok_r(rest, " ", &save);
	if (!tok || gp_pci_parse_bdf(tok, g->bdf))
		return -1;
	while ((tok = strtok_r(NULL, " ", &save))) {
		uint64_t v;
		char *eq = strchr(tok, '=');

		if (!eq || parse_u64(eq + 1, &v))
			return -1;
		*eq = '\0';
		if (strcmp(tok, "vram") == 0)
			g->vram = v;
		else if (strcmp(tok, "bar1") == 0)
			g->bar1 = v;
		else if (strcmp(tok, "switch_links") == 0 && v < 1000)
			g->switch_links = (int)v;
		else if (strcmp(tok, "nvlink_down_links") == 0 && v < (1ULL << GP_GPU_LINKS_PER_GPU))
			g->nvl_down_mask = (long long)v;
		else if (strcmp(tok, "nvlink_peer_down") == 0 && v <= GP_GPU_NVLINKS_MAX)
			g->nvl_peer_down = (int)v;
		else
			gp_gpu_state_key(&g->st, tok, v); /* other unknown keys: a newer writer; ignore */
	}
	return 0;
}

int gp_gpu_facts_parse(FILE *in, const char *name, struct gp_gpu_facts *f, struct gp_err *e)
{
	int link_line[GP_GPU_LINKS_MAX];
	char line[512];
	int lineno = 0, unavailable = 0;

	memset(f, 0, sizeof(*f));
	while (fgets(line, sizeof(line), in)) {
		char a[32], b[32], bdf_a[GP_BDF_LEN], bdf_b[GP_BDF_LEN];
		int count;
		size_t l = strlen(line);

		lineno++;
		if (l && line[l - 1] == '\n')
			line[--l] = '\0';
		if (!l || line[0] == '#')
			continue;
		if (lineno == 1) {
			/* format 1 stored the NVLink counters as one sum (nvlink_errors), which rises at idle on
			 * Hopper: its keys are retired (state.c), so such a file has no NVLink counter at all */
			if (strcmp(line, "gpup2p-gpu-facts 1") != 0 && strcmp(line, "gpup2p-gpu-facts 2") != 0)
				return gp_err_set(e, GP_E_DATA, EINVAL, "%s:1: not a gpup2p GPU facts file (format 1 or 2)",
						  name);
			continue;
		}
		if (strncmp(line, "source ", 7) == 0)
			continue;
		if (strncmp(line, "unavailable ", 12) == 0) {
			unavailable = 1;
			snprintf(f->why, sizeof(f->why), "%s", line + 12);
			continue;
		}
		if (strncmp(line, "driver ", 7) == 0) {
			snprintf(f->driver, sizeof(f->driver), "%s", line + 7);
		} else if (strncmp(line, "gpu ", 4) == 0) {
			if (f->n >= GP_GPU_MAX)
				return gp_err_set(e, GP_E_DATA, E2BIG, "%s:%d: more than %d GPUs", name, lineno, GP_GPU_MAX);
			if (parse_gpu(line + 4, &f->gpus[f->n]))
				return gp_err_set(e, GP_E_DATA, EINVAL,
						  "%s:%d: malformed gpu line (want: gpu BDF vram=N bar1=N name=TEXT)", name, lineno);
			if (gp_gpu_find(f, f->gpus[f->n].bdf))
				return gp_err_set(e, GP_E_DATA, EINVAL, "%s:%d: GPU %s given twice (one gpu line per GPU)",
						  name, lineno, f->gpus[f->n].bdf);
			f->n++;
		} else if (sscanf(line, "nvlink %31s %31s %d", a, b, &count) == 3) {
			int k;

			if (gp_pci_parse_bdf(a, bdf_a) || gp_pci_parse_bdf(b, bdf_b) || count < 0 ||
			    count > GP_GPU_NVLINKS_MAX)
				return gp_err_set(e, GP_E_DATA, EINVAL, "%s:%d: malformed nvlink line (want: nvlink BDF BDF N, "
						  "N from 0 to %d)", name, lineno, GP_GPU_NVLINKS_MAX);
			/* A line gives a pair's whole bond, as nvidia-smi's NV# does: the same bond listed
			 * again (as seen from the other GPU) must not double it. */
			if ((k = link_index(f, bdf_a, bdf_b)) >= 0)
				return gp_err_set(e, GP_E_DATA, EINVAL, "%s:%d: nvlink %s %s given twice (first on line %d): "
						  "give each GPU pair once, with its number of links", name, lineno,
						  bdf_a, bdf_b, link_line[k]);
			if (gp_gpu_add_link(f, bdf_a, bdf_b, count))
				return gp_err_set(e, GP_E_DATA, E2BIG, "%s:%d: too many links", name, lineno);
			link_line[f->nlinks - 1] = lineno;
		} else {
			return gp_err_set(e, GP_E_DATA, EINVAL, "%s:%d: unknown line \"%.40s\"", name, lineno, line);
		}
	}
	if (lineno == 0)
		return gp_err_set(e, GP_E_DATA, EINVAL, "%s: empty file", name);
	if (unavailable) { /* the writer keeps only the reason: so does the reader */
		char why[sizeof(f->why)];

		memcpy(why, f->why, sizeof(why));
		memset(f, 0, sizeof(*f));
		memcpy(f->why, why, sizeof(why));
	}
	f->available = !unavailable;
	return 0;
}

/* Active direct links of raw GPU i whose remote end is GPU bdf. */
static int links_to(const struct gp_gpu_nvml_gpu *g, const char *bdf)
{
	int n = 0;

	for (int l = 0; l < g->nlinks && l < GP_GPU_LINKS_PER_GPU; l++)
		n += g->links[l].type != GP_NVLINK_REMOTE_SWITCH && !strcmp(g->links[l].remote, bdf);
	return n;
}

/* A link up on one end and not on the other: GPU j has fewer active links to i than i has to j, so
 * the rest are down on j's end (a peer that is up says the link is there). */
static void peer_down(const struct gp_gpu_nvml *raw, struct gp_gpu_facts *f)
{
	for (int j = 0; j < f->n; j++) {
		f->gpus[j].nvl_peer_down = 0;
		for (int i = 0; i < f->n; i++) {
			int in = i == j ? 0 : links_to(&raw->gpus[i], f->gpus[j].bdf);
			int out = in ? links_to(&raw->gpus[j], f->gpus[i].bdf) : 0;

			f->gpus[j].nvl_peer_down += in > out ? in - out : 0;
		}
	}
}

void gp_gpu_facts_from_nvml(const struct gp_gpu_nvml *raw, struct gp_gpu_facts *f)
{
	memset(f, 0, sizeof(*f));
	snprintf(f->why, sizeof(f->why), "%s", raw->why);
	if (!raw->available)
		return;
	snprintf(f->driver, sizeof(f->driver), "%s", raw->driver);
	f->counted_at = raw->counted_at;
	for (int i = 0; i < raw->n && i < GP_GPU_MAX; i++)
		f->gpus[f->n++] = raw->gpus[i].info;
	/* Links to another GPU count for that pair (once: from the lower address); links to a switch,
	 * or to an end NVML cannot name, join every GPU that has switch links (NVSwitch systems:
	 * nvidia-smi shows NV# for those pairs). */
	for (int i = 0; i < f->n; i++) {
		const struct gp_gpu_nvml_gpu *rg = &raw->gpus[i];

		for (int l = 0; l < rg->nlinks && l < GP_GPU_LINKS_PER_GPU; l++) {
			const char *remote = rg->links[l].remote;
			const struct gp_gpu_info *peer = remote[0] ? gp_gpu_find(f, remote) : NULL;

			if (peer && rg->links[l].type != GP_NVLINK_REMOTE_SWITCH) {
				if (strcmp(f->gpus[i].bdf, peer->bdf) < 0)
					(void)gp_gpu_add_link(f, f->gpus[i].bdf, peer->bdf, 1);
			} else if (rg->links[l].type == GP_NVLINK_REMOTE_SWITCH || !peer) {
				f->gpus[i].switch_links++;
			}
		}
	}
	peer_down(raw, f);
	for (int i = 0; i < f->n; i++)
		for (int j = i + 1; j < f->n; j++) {
			int si = f->gpus[i].switch_links, sj = f->gpus[j].switch_links;

			if (si && sj)
				(void)gp_gpu_add_link(f, f->gpus[i].bdf, f->gpus[j].bdf, si < sj ? si : sj);
		}
	f->available = 1;
}

int gp_gpu_nvml_read(struct gp_gpu_facts *f, unsigned flags, struct gp_err *e)
{
	struct gp_gpu_nvml *raw = malloc(sizeof(*raw));

	memset(f, 0, sizeof(*f));
	if (!raw)
		return gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory");
	if (gp_gpu_nvml_query(raw, flags) == -E2BIG) {
		gp_err_set(e, GP_E_DATA, E2BIG, "%s", raw->why);
		free(raw);
		return -E2BIG;
	}
	gp_gpu_facts_from_nvml(raw, f);
	free(raw);
	return 0;
}

int gp_gpu_facts_load(const struct gp_root *r, struct gp_gpu_facts *f, unsigned flags, struct gp_err *e)
{
	char path[GP_PATH_MAX];
	FILE *in;
	int rc, fd;

	memset(f, 0, sizeof(*f));
	if (r->live)
		return gp_gpu_nvml_read(f, flags, e);
	if (gp_root_path(r, GP_GPU_FACTS_PATH, path, sizeof(path)))
		return gp_err_set(e, GP_E_USAGE, ENAMETOOLONG, "root path too long");
	fd = gp_root_open(r, GP_GPU_FACTS_PATH, O_RDONLY);
	if (fd == -ENOENT) {
		snprintf(f->why, sizeof(f->why), "no NVML facts recorded under the root (%s)", &GP_GPU_FACTS_PATH[1]);
		return 0;
	}
	if (fd < 0 || !(in = fdopen(fd, "r"))) {
		rc = fd < 0 ? -fd : errno;
		if (fd >= 0)
			close(fd);
		return gp_err_set(e, GP_E_DATA, rc, "%s: %s", path, gp_root_strerror(rc));
	}
	rc = gp_gpu_facts_parse(in, path, f, e);
	fclose(in);
	return rc;
}
