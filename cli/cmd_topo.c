/* gpup2p topo — print the GPU/NIC matrix, the PCIe tree, or both as data. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gpup2p/buf.h"
#include "gpup2p/topo.h"

struct topo_opts {
	struct cli_matches match;
	int tree, all;
};

#define O(f) (long)offsetof(struct topo_opts, f)
static const struct opt topo_opts[] = {
	{ "--tree", NULL, NULL, OPT_FLAG, O(tree), 1,
	  .help = "the PCIe tree from the host bridges down: bridges,\nlink gen x width (current and max), NUMA node, and\n"
		  "each GPU/NIC" },
	{ "--all", NULL, NULL, OPT_FLAG, O(all), 1, .help = "with --tree: every PCI function, not only GPU/NIC\npaths" },
	CLI_OPT_MATCH(struct topo_opts, match, "also treat these endpoints as GPUs (hex ids, DEVICE\nmay be *); repeatable"),
	{ 0 },
};
#undef O

static const struct opt_rule topo_rules[] = {
	{ OPT_NEEDS, "--all", "--tree", NULL, NULL },
	{ 0 },
};

const struct opts_cmd opts_topo = {
	.name = "topo", .opts = topo_opts, .rules = topo_rules, .col = 25, .help = help_topo,
	.globals = "--json, --csv, --jsonl, --no-header, --root DIR, -q: see gpup2p --help",
};

void help_topo(FILE *f)
{
	fprintf(f,
		"usage: gpup2p topo [--tree] [--all] [--match VENDOR:DEVICE]...\n"
		"              [--json|--csv|--jsonl]\n\n"
		"Which GPUs and NICs can talk directly: the matrix of `nvidia-smi topo -m` with\n"
		"the same codes (X PIX PXB PHB NODE SYS NV#), CPU and NUMA affinity. GPUs are\n"
		"numbered in PCI bus order; NICs as nvidia-smi numbers them, by RDMA device name\n"
		"(mlx5_2 before mlx5_10).\n\n");
	opts_help(f, &opts_topo);
	fprintf(f,
		"\nWithout NVML (libnvidia-ml.so.1) NVLink is not checked: GPU pairs show their\n"
		"PCIe class and a note says so. Exit: 0 ok, 3 input unreadable, 64 usage, 69 no\n"
		"PCI/root.\n");
}

static const char *const legend[] = {
	"  X    = Self",
	"  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)",
	"  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node",
	"  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)",
	"  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)",
	"  PIX  = Connection traversing at most a single PCIe bridge",
	"  NV#  = Connection traversing a bonded set of # NVLinks",
};

static const char *code_color(const char *s)
{
	if (!strncmp(s, "NV", 2) || !strcmp(s, "PIX") || !strcmp(s, "PXB"))
		return "\033[32m";
	if (!strcmp(s, "PHB"))
		return "\033[33m";
	if (!strcmp(s, "NODE") || !strcmp(s, "SYS"))
		return "\033[31m";
	return NULL;
}

/* One matrix row's cells ("\tPIX\t X \t..."), gathered in a buffer and written a few KiB at a time:
 * a matrix of 4000 NICs has 16 million cells, too many for a printf each. */
static void print_row(const struct cli *c, const struct gp_topo *t, int i)
{
	char buf[4096], code[16];
	size_t used = 0;

	for (int j = 0; j < t->n; j++) {
		const struct gp_topo_link lkv = gp_topo_link_at(t, i, j), *lk = &lkv;
		const char *s = lk->cls == GP_TC_NV ? gp_topo_code(lk, code, sizeof(code)) : gp_topo_class_name(lk->cls);
		const char *sgr = c->color ? code_color(s) : NULL;
		size_t l = strlen(s);

		if (used + 32 > sizeof(buf)) { /* a cell: tab, spaces, colour on/off, "NV" and a count */
			fwrite(buf, 1, used, stdout);
			used = 0;
		}
		buf[used++] = '\t';
		if (i == j)
			buf[used++] = ' ';
		if (sgr) {
			memcpy(buf + used, sgr, strlen(sgr));
			used += strlen(sgr);
		}
		memcpy(buf + used, s, l);
		used += l;
		if (sgr) {
			memcpy(buf + used, "\033[0m", 4);
			used += 4;
		}
		if (i == j)
			buf[used++] = ' ';
	}
	fwrite(buf, 1, used, stdout);
}

static const char *numa_str(int node, char *buf, size_t n)
{
	if (node < 0)
		snprintf(buf, n, "N/A");
	else
		snprintf(buf, n, "%d", node);
	return buf;
}

static void print_notes(const struct cli *c, const struct gp_topo *t, FILE *f)
{
	if (!t->nvlink_checked && t->ngpu > 1)
		cli_wrapf(f, 0, 6, "Note: NVLink not checked: %s; GPU pairs show their PCIe class.", c->facts->why);
	if (t->n == 0)
		cli_wrapf(f, 0, 6, "Note: no GPU or NIC found (GPUs: NVIDIA class 03xx or --match; NICs: RDMA-capable).");
}

static void print_matrix(const struct cli *c, const struct gp_topo *t)
{
	char nb[64];
	int nics = 0;

	char id[16];

	/* nvidia-smi's layout, byte for byte: the header underlined (on a terminal), two tabs before the
	 * GPU NUMA ID */
	printf("\t%s", c->color ? "\033[4m" : "");
	for (int i = 0; i < t->n; i++)
		printf("%s\t", t->devs[i].name);
	printf("CPU Affinity\tNUMA Affinity\tGPU NUMA ID%s\n", c->color ? "\033[0m" : "");
	for (int i = 0; i < t->n; i++) {
		const struct gp_pci_dev *d = &t->pci->devs[t->devs[i].pci];

		fputs(t->devs[i].name, stdout);
		print_row(c, t, i);
		printf("\t%s\t%s\t\t%s\n", d->cpulist[0] ? d->cpulist : "N/A", gp_topo_numa_affinity(t, i, nb, sizeof(nb)),
		       gp_topo_gpu_numa_id(t, i, id, sizeof(id)));
	}
	if (c->quiet)
		return;
	printf("\nLegend:\n\n");
	for (size_t k = 0; k < sizeof(legend) / sizeof(legend[0]); k++) {
		int key = (int)(strstr(legend[k], "= ") - legend[k]) + 2; /* the text after "= ", wrapped */

		printf("%.*s", key, legend[k]);
		cli_wrap(stdout, legend[k] + key, key, key, cli_term_width());
	}
	for (int i = 0; i < t->n; i++)
		nics += t->devs[i].kind == GP_TOPO_NIC;
	if (nics) {
		printf("\nNIC Legend:\n\n");
		for (int i = 0; i < t->n; i++)
			if (t->devs[i].kind == GP_TOPO_NIC)
				printf("  %s: %s\n", t->devs[i].name, t->devs[i].label);
	}
	if (!t->nvlink_checked && t->ngpu > 1)
		putchar('\n');
	print_notes(c, t, stdout);
}

static void link_str(const struct gp_pci_dev *d, char *buf, size_t n)
{
	int cg = gp_pci_gen(d->cur_gts), mg = gp_pci_gen(d->max_gts);

	if (!d->cur_width && !d->cur_gts) {
		buf[0] = '\0';
		return;
	}
	if (gp_topo_link_degraded(d))
		snprintf(buf, n, "Gen%d x%d (max Gen%d x%d, below max)", cg, d->cur_width, mg, d->max_width);
	else
		snprintf(buf, n, "Gen%d x%d", cg, d->cur_width);
}

/* 1 when PCI function i is shown in the tree. */
static int shown(const struct gp_topo *t, int i, int all)
{
	return all || gp_topo_on_path(t, i);
}

/* The functions the tree shows, each bridge's children linked in index order, so that printing is one
 * pass however many functions a bridge has below it (SR-IOV: thousands). */
struct tree {
	int *first;              /* [pci]: its first child shown, or -1 */
	int *next;               /* [pci]: the next child shown of the same parent (or host bridge), or -1 */
};

/* Link every shown function to its parent's list; top-level functions (parent -1) to no list: the
 * caller walks them per host bridge. 0, or -1 out of memory. */
static int tree_build(const struct gp_topo *t, int all, struct tree *tr)
{
	int n = t->pci->n, *tail;

	tr->first = malloc((size_t)(n ? n : 1) * sizeof(int));
	tr->next = malloc((size_t)(n ? n : 1) * sizeof(int));
	tail = malloc((size_t)(n ? n : 1) * sizeof(int));
	if (!tr->first || !tr->next || !tail) {
		free(tr->first);
		free(tr->next);
		free(tail);
		return -1;
	}
	for (int i = 0; i < n; i++)
		tr->first[i] = tr->next[i] = tail[i] = -1;
	for (int i = 0; i < n; i++) {
		int p = t->pci->devs[i].parent;

		if (p < 0 || p >= n || !shown(t, i, all))
			continue;
		if (tail[p] < 0)
			tr->first[p] = i;
		else
			tr->next[tail[p]] = i;
		tail[p] = i;
	}
	free(tail);
	return 0;
}

/* Print text after lead (already printed, lead_w columns), wrapped to width (0: not wrapped); each further
 * line starts with cont, so that the tree's vertical bars run on. */
static void print_wrapped(const char *text, int lead_w, const char *cont, int width)
{
	int col = lead_w, words = 0, cw = (int)strlen(cont);

	while (*text) {
		int w = (int)strcspn(text, " ");

		if (words && width > 0 && col + 1 + w > width && cw + w <= width) {
			printf("\n%s", cont);
			col = cw;
		} else if (words) {
			putchar(' ');
			col++;
		}
		words++;
		printf("%.*s", w, text);
		col += w;
		text += w;
		text += strspn(text, " ");
	}
	putchar('\n');
}

static void print_node(const struct cli *c, const struct gp_topo *t, const struct tree *tr, int idx,
		       const char *prefix, int last)
{
	const struct gp_pci_dev *d = &t->pci->devs[idx];
	const struct gp_topo_dev *td = gp_topo_find(t, idx);
	const char *name = td ? td->name : NULL;
	char link[96], sub[256], cont[264];
	struct gp_buf b = GP_BUF_INIT;

	link_str(d, link, sizeof(link));
	gp_buf_addf(&b, "%s", d->bdf);
	if (name)
		gp_buf_addf(&b, " %s", name);
	if (d->is_bridge)
		gp_buf_addf(&b, " %s", gp_pci_port_name(d->port_type));
	gp_buf_addf(&b, " [%04x:%04x]", d->vendor, d->device);
	if (name) {
		char nbuf[160];

		if (gp_topo_display_name(t, idx, nbuf, sizeof(nbuf))[0])
			gp_buf_addf(&b, " %s", nbuf);
	}
	if (link[0])
		gp_buf_addf(&b, " %s", link);
	if (name && d->numa_node >= 0)
		gp_buf_addf(&b, " NUMA %d", d->numa_node);
	if (d->rdma[0])
		gp_buf_addf(&b, " %s", d->rdma);
	snprintf(sub, sizeof(sub), "%s%s", prefix, last ? "    " : "|   ");
	/* a line too wide for the terminal goes on below its start, the children's bar kept */
	snprintf(cont, sizeof(cont), "%s%s     ", sub, tr->first[idx] >= 0 ? "|" : " ");
	printf("%s%s", prefix, last ? "`-- " : "|-- ");
	if (b.oom)
		printf("%s\n", d->bdf);          /* out of memory: the address at least */
	else
		print_wrapped(gp_buf_str(&b), (int)strlen(prefix) + 4, cont, cli_term_width());
	gp_buf_free(&b);
	for (int i = tr->first[idx]; i >= 0; i = tr->next[i])
		print_node(c, t, tr, i, sub, tr->next[i] < 0);
}

/* The last top-level function shown on host bridge hb, or -1 when none. */
static int last_top(const struct gp_topo *t, const char *hb, int all)
{
	int last = -1;

	for (int i = 0; i < t->pci->n; i++)
		if (t->pci->devs[i].parent < 0 && !strcmp(t->pci->devs[i].host_bridge, hb) && shown(t, i, all))
			last = i;
	return last;
}

static int print_tree(const struct cli *c, const struct gp_topo *t, int all)
{
	/* at most one host bridge per function: sized by the machine, not by a constant */
	char (*hbs)[32] = malloc((size_t)(t->pci->n ? t->pci->n : 1) * sizeof(*hbs)), nb[16];
	struct tree tr;
	int nh;

	if (!hbs || tree_build(t, all, &tr)) {
		free(hbs);
		fprintf(stderr, "gpup2p: topo: out of memory\n");
		return EX_ERROR;
	}
	nh = gp_topo_host_bridges(t->pci, hbs, t->pci->n);
	for (int h = 0; h < nh; h++) {
		int lk = last_top(t, hbs[h], all);

		if (lk < 0)
			continue;
		printf("%s host bridge, NUMA %s\n", hbs[h], numa_str(gp_topo_host_bridge_numa(t->pci, hbs[h]), nb, sizeof(nb)));
		for (int i = 0; i <= lk; i++)
			if (t->pci->devs[i].parent < 0 && !strcmp(t->pci->devs[i].host_bridge, hbs[h]) && shown(t, i, all))
				print_node(c, t, &tr, i, "", i == lk);
	}
	free(hbs);
	free(tr.first);
	free(tr.next);
	if (!c->quiet)
		print_notes(c, t, stdout);
	return 0;
}

static void json_dev(struct gp_json *j, const struct gp_topo *t, int i)
{
	const struct gp_pci_dev *d = &t->pci->devs[t->devs[i].pci];
	char v[8], na[64];

	gp_json_str(j, "name", t->devs[i].name);
	gp_json_str(j, "bdf", d->bdf);
	gp_json_str(j, "kind", t->devs[i].kind == GP_TOPO_GPU ? "gpu" : "nic");
	snprintf(v, sizeof(v), "%04x", d->vendor);
	gp_json_str(j, "vendor_id", v);
	snprintf(v, sizeof(v), "%04x", d->device);
	gp_json_str(j, "device_id", v);
	gp_json_str(j, "label", t->devs[i].label[0] ? t->devs[i].label : NULL);
	if (t->devs[i].kind == GP_TOPO_NIC)
		gp_json_str(j, "rdma_device", d->rdma[0] ? d->rdma : NULL);
	if (d->numa_node >= 0)
		gp_json_int(j, "numa_node", d->numa_node);
	else
		gp_json_null(j, "numa_node");
	gp_json_str(j, "cpu_affinity", d->cpulist[0] ? d->cpulist : NULL);
	gp_json_str(j, "numa_affinity", gp_topo_numa_affinity(t, i, na, sizeof(na)));
	gp_topo_gpu_numa_id(t, i, na, sizeof(na));
	if (strcmp(na, "N/A"))
		gp_json_int(j, "gpu_numa_id", atoi(na));
	else
		gp_json_null(j, "gpu_numa_id");
	gp_json_str(j, "host_bridge", d->host_bridge);
	gp_json_arr(j, "path");
	for (int k = 0; k < d->chain_len; k++)
		gp_json_str(j, NULL, d->chain[k]);
	gp_json_end(j, ']');
	gp_json_obj(j, "link");
	if (gp_pci_gen(d->cur_gts)) gp_json_int(j, "gen", gp_pci_gen(d->cur_gts)); else gp_json_null(j, "gen");
	if (d->cur_width) gp_json_int(j, "width", d->cur_width); else gp_json_null(j, "width");
	if (gp_pci_gen(d->max_gts)) gp_json_int(j, "max_gen", gp_pci_gen(d->max_gts)); else gp_json_null(j, "max_gen");
	if (d->max_width) gp_json_int(j, "max_width", d->max_width); else gp_json_null(j, "max_width");
	gp_json_end(j, '}');
}

static void print_json(const struct cli *c, const struct gp_topo *t)
{
	struct gp_json j;
	char code[16];

	cli_json_begin(c, &j, "topo", c->argc, c->argv);
	gp_json_bool(&j, "nvlink_checked", t->nvlink_checked);
	gp_json_str(&j, "nvlink_unchecked_reason", t->nvlink_checked ? NULL : c->facts->why);
	gp_json_arr(&j, "devices");
	for (int i = 0; i < t->n; i++) {
		gp_json_obj(&j, NULL);
		json_dev(&j, t, i);
		gp_json_end(&j, '}');
	}
	gp_json_end(&j, ']');
	gp_json_arr(&j, "matrix");
	for (int i = 0; i < t->n; i++) {
		gp_json_arr_flat(&j, NULL);
		for (int k = 0; k < t->n; k++)
			gp_json_str(&j, NULL, gp_topo_code_at(t, i, k, code, sizeof(code)));
		gp_json_end(&j, ']');
	}
	gp_json_end(&j, ']');
	cli_json_end(c, &j, 0);
}

static void print_jsonl(const struct gp_topo *t)
{
	char code[16];

	for (int i = 0; i < t->n; i++) {
		struct gp_json j;

		cli_jsonl_record(&j, "topo");
		json_dev(&j, t, i);
		gp_json_obj(&j, "links");
		for (int k = 0; k < t->n; k++)
			gp_json_str(&j, t->devs[k].name, gp_topo_code_at(t, i, k, code, sizeof(code)));
		gp_json_end(&j, '}');
		gp_json_end(&j, '}');
	}
}

static void print_csv(const struct cli *c, const struct gp_topo *t)
{
	char code[16], nb[16];

	if (!c->no_header) {
		printf("name,bdf,kind,label,numa_node,cpu_affinity");
		for (int i = 0; i < t->n; i++)
			printf(",%s", t->devs[i].name);
		putchar('\n');
	}
	for (int i = 0; i < t->n; i++) {
		const struct gp_pci_dev *d = &t->pci->devs[t->devs[i].pci];

		gp_csv_field(stdout, t->devs[i].name, ',');
		gp_csv_field(stdout, d->bdf, ',');
		gp_csv_field(stdout, t->devs[i].kind == GP_TOPO_GPU ? "gpu" : "nic", ',');
		gp_csv_field(stdout, t->devs[i].label, ',');
		gp_csv_field(stdout, d->numa_node >= 0 ? numa_str(d->numa_node, nb, sizeof(nb)) : "", ',');
		gp_csv_field(stdout, d->cpulist, t->n ? ',' : '\n');
		for (int k = 0; k < t->n; k++)
			gp_csv_field(stdout, gp_topo_code_at(t, i, k, code, sizeof(code)),
				     k == t->n - 1 ? '\n' : ',');
	}
}

int cmd_topo(struct cli *c, int argc, char **argv)
{
	struct topo_opts o = { 0 };
	struct gp_topo t;
	int rc, tree, all;

	if ((rc = opts_parse(&opts_topo, c, argc, argv, &o)) >= 0)
		return rc;
	tree = o.tree, all = o.all;
	rc = cli_load_topo(c, &t, o.match.m, o.match.n);
	if (rc)
		return rc;
	switch (c->fmt) {
	case GP_OUT_JSON: print_json(c, &t); break;
	case GP_OUT_JSONL: print_jsonl(&t); break;
	case GP_OUT_CSV: print_csv(c, &t); break;
	case GP_OUT_TABLE:
		if (tree)
			rc = print_tree(c, &t, all);
		else
			print_matrix(c, &t);
		break;
	}
	gp_topo_free(&t);
	return rc;
}
