/* gpup2p bar — BARs, Resizable BAR and the large-BAR verdict per GPU, and the IOMMU mode. */
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gpup2p/bar.h"
#include "gpup2p/buf.h"
#include "gpup2p/iommu.h"
#include "gpup2p/topo.h"

struct bar_opts {
	struct cli_matches match;
	int all;
};

static const struct opt bar_opts[] = {
	{ "--all", NULL, NULL, OPT_FLAG, (long)offsetof(struct bar_opts, all), 1,
	  .help = "every PCI function, not only GPUs" },
	CLI_OPT_MATCH(struct bar_opts, match, "also treat these endpoints as GPUs (repeatable)"),
	{ 0 },
};

const struct opts_cmd opts_bar = {
	.name = "bar", .opts = bar_opts, .col = 25, .help = help_bar,
	.globals = "--json, --csv, --jsonl, --no-header, --root DIR, -q: see gpup2p --help",
};

void help_bar(FILE *f)
{
	fprintf(f,
		"usage: gpup2p bar [--all] [--match VENDOR:DEVICE]... [--json|--csv|--jsonl]\n\n"
		"For each GPU: every BAR (index, size, 32/64-bit, prefetchable, address\n"
		"assigned), the VRAM aperture (largest 64-bit prefetchable BAR) against VRAM\n"
		"size (from NVML; unknown without it), Resizable BAR (supported and current\n"
		"sizes), the verdict \"large BAR\" (aperture >= VRAM: BAR1 P2P and unrestricted\n"
		"pinning) or \"small BAR\" with what it limits, the device's IOMMU group and type,\n"
		"and the system IOMMU mode (off / identity / DMA / DMA-FQ).\n\n");
	opts_help(f, &opts_bar);
	fprintf(f,
		"\nResizable BAR needs the extended config space: as non-root it is reported\n"
		"\"unknown\".\n"
		"Exit: 0 ok, 3 input unreadable, 64 usage, 69 no PCI/root.\n");
}

struct bar_ctx {
	struct cli *c;
	struct gp_iommu io;
	struct gp_topo t;
	int all;
};

static const char *gpu_name(const struct gp_topo *t, int pci)
{
	const struct gp_topo_dev *td = gp_topo_find(t, pci);

	return td && td->kind == GP_TOPO_GPU ? td->name : NULL;
}

static int selected(const struct bar_ctx *b, int pci)
{
	return b->all || gpu_name(&b->t, pci) != NULL;
}

/* The Resizable BAR line into buf (reset first); a reserved size encoding is shown as such. */
static const char *rebar_text(const struct gp_bar_report *r, struct gp_buf *buf)
{
	char cur[48], sizes[512]; /* sizes: at most 44 entries of 6 characters */

	gp_buf_reset(buf);
	if (r->rebar.known == GP_UNKNOWN)
		gp_buf_addf(buf, "unknown (extended config space not readable: run as root)");
	else if (r->rebar.known == GP_ABSENT)
		gp_buf_addf(buf, "not supported");
	for (int i = 0; i < r->rebar.n && r->rebar.known == GP_PRESENT; i++) {
		const struct gp_rebar_entry *e = &r->rebar.e[i];

		if (e->cur_size)
			gp_bar_size_str(e->cur_size, cur, sizeof(cur));
		else
			snprintf(cur, sizeof(cur), "reserved (size code %d)", e->cur_log);
		gp_buf_addf(buf, "%sBAR %d current %s, supported %s", i ? "; " : "", e->bar, cur,
			    gp_bar_sizes_str(e->sizes, sizes, sizeof(sizes)));
	}
	return buf->oom ? "(out of memory)" : gp_buf_str(buf);
}

static void bar_type(const struct gp_bar *b, char *buf, size_t n)
{
	if (b->is_io)
		snprintf(buf, n, "I/O");
	else
		snprintf(buf, n, "%s%s", b->is_64 ? "64-bit" : "32-bit", b->prefetch ? " prefetchable" : "");
}

static const char *iommu_type(const struct bar_ctx *b, const struct gp_pci_dev *d)
{
	if (d->iommu_group < 0)
		return NULL;
	return gp_iommu_mode_name(gp_iommu_group_mode(&b->c->root, d->iommu_group));
}

/* One device's record: what every format prints of it. */
struct bar_rec {
	const struct bar_ctx *b;
	const struct gp_pci_dev *d;
	const char *name;              /* "GPU0", NULL when not a GPU (--all) */
	struct gp_bar_report r;
	char dname[160];               /* the model's name, "" unknown */
};

#define REC(x) ((const struct bar_rec *)(x))

static void f_name(const void *x, struct gp_value *v) { v->s = REC(x)->name; v->null = !v->s; }
static void f_bdf(const void *x, struct gp_value *v) { v->s = REC(x)->d->bdf; }

static void f_vendor(const void *x, struct gp_value *v)
{
	v->s = v->num;
	snprintf(v->num, 8, "%04x", REC(x)->d->vendor);
}

static void f_device(const void *x, struct gp_value *v)
{
	v->s = v->num;
	snprintf(v->num, 8, "%04x", REC(x)->d->device);
}

static void f_dname(const void *x, struct gp_value *v)
{
	v->s = REC(x)->dname[0] ? REC(x)->dname : NULL;
	v->null = !v->s;
}

/* bars as text: "INDEX:SIZE:TYPE:assigned|UNASSIGNED" for each BAR, ';' between them (the table's words) */
static void f_bars(const void *x, struct gp_value *v)
{
	for (int k = 0; k < 6; k++) {
		const struct gp_bar *bar = &REC(x)->d->bars[k];
		char type[48];

		if (!bar->size)
			continue;
		bar_type(bar, type, sizeof(type));
		gp_buf_addf(v->buf, "%s%d:%" PRIu64 ":%s:%s", v->buf->len ? ";" : "", k, bar->size, type,
			    bar->assigned ? "assigned" : "UNASSIGNED");
	}
	v->s = gp_buf_str(v->buf);
}

static void j_bars(const void *x, struct gp_json *j, const char *key)
{
	gp_json_arr(j, key);
	for (int k = 0; k < 6; k++) {
		const struct gp_bar *bar = &REC(x)->d->bars[k];

		if (!bar->size)
			continue;
		gp_json_obj(j, NULL);
		gp_json_int(j, "index", k);
		gp_json_u64(j, "size", bar->size);
		gp_json_bool(j, "io", bar->is_io);
		gp_json_bool(j, "is_64bit", bar->is_64);
		gp_json_bool(j, "prefetchable", bar->prefetch);
		gp_json_bool(j, "assigned", bar->assigned);
		gp_json_end(j, '}');
	}
	gp_json_end(j, ']');
}

static void f_aperture_bar(const void *x, struct gp_value *v) { v->i = REC(x)->r.aperture_bar; v->null = v->i < 0; }
static void f_aperture(const void *x, struct gp_value *v) { v->u = REC(x)->r.aperture; v->null = !v->u; }
static void f_vram(const void *x, struct gp_value *v) { v->u = REC(x)->r.vram; v->null = !v->u; }
static void f_bar1(const void *x, struct gp_value *v) { v->u = REC(x)->r.driver_bar1; v->null = !v->u; }
static void f_verdict(const void *x, struct gp_value *v) { v->s = gp_bar_verdict_name(REC(x)->r.verdict); }

/* why the verdict is unknown, as the table says it; null otherwise */
static void f_verdict_why(const void *x, struct gp_value *v)
{
	const struct gp_gpu_facts *facts = REC(x)->b->c->facts;

	v->s = REC(x)->r.verdict != GP_BAR_UNKNOWN ? NULL : facts->available ? "GPU not in NVML's list" : facts->why;
	v->null = !v->s;
}

static const char *rebar_state(const struct gp_bar_report *r)
{
	return r->rebar.known == GP_UNKNOWN ? "unknown" : r->rebar.known == GP_ABSENT ? "absent" : "present";
}

static void f_rebar(const void *x, struct gp_value *v) { v->s = rebar_state(&REC(x)->r); }

static void j_rebar(const void *x, struct gp_json *j, const char *key)
{
	const struct gp_bar_report *r = &REC(x)->r;

	gp_json_obj(j, key);
	gp_json_str(j, "state", rebar_state(r));
	gp_json_arr(j, "entries");
	for (int k = 0; k < r->rebar.n; k++) {
		gp_json_obj(j, NULL);
		gp_json_int(j, "bar", r->rebar.e[k].bar);
		if (r->rebar.e[k].cur_size)
			gp_json_u64(j, "current", r->rebar.e[k].cur_size);
		else /* a reserved encoding: say which */
			gp_json_null(j, "current"), gp_json_int(j, "current_code", r->rebar.e[k].cur_log);
		gp_json_arr_flat(j, "supported");
		for (int s = 0; s <= GP_REBAR_LOG_MAX; s++)
			if (r->rebar.e[k].sizes & (1ULL << s))
				gp_json_u64(j, NULL, gp_bar_rebar_size(s));
		gp_json_end(j, ']');
		gp_json_end(j, '}');
	}
	gp_json_end(j, ']');
	gp_json_end(j, '}');
}

/* the aperture's Resizable BAR entry, or NULL */
static const struct gp_rebar_entry *aperture_rebar(const struct gp_bar_report *r)
{
	for (int k = 0; k < r->rebar.n; k++)
		if (r->rebar.e[k].bar == r->aperture_bar)
			return &r->rebar.e[k];
	return NULL;
}

static void f_rebar_current(const void *x, struct gp_value *v) /* null: no entry, or a reserved size code */
{
	const struct gp_rebar_entry *e = aperture_rebar(&REC(x)->r);

	v->u = e ? e->cur_size : 0;
	v->null = !v->u;
}

static void f_rebar_max(const void *x, struct gp_value *v) { v->u = REC(x)->r.rebar_max; v->null = !v->u; }

/* every entry as text: "BAR:CURRENT:SIZE SIZE..." (CURRENT "code N" for a reserved encoding), ';' between */
static void f_rebar_entries(const void *x, struct gp_value *v)
{
	const struct gp_bar_report *r = &REC(x)->r;

	for (int k = 0; k < r->rebar.n; k++) {
		const struct gp_rebar_entry *e = &r->rebar.e[k];

		gp_buf_addf(v->buf, "%s%d:", k ? ";" : "", e->bar);
		if (e->cur_size)
			gp_buf_addf(v->buf, "%" PRIu64 ":", e->cur_size);
		else
			gp_buf_addf(v->buf, "code %d:", e->cur_log);
		for (int s = 0, n = 0; s <= GP_REBAR_LOG_MAX; s++)
			if (e->sizes & (1ULL << s))
				gp_buf_addf(v->buf, "%s%" PRIu64, n++ ? " " : "", gp_bar_rebar_size(s));
	}
	v->s = gp_buf_str(v->buf);
}

static void f_iommu_group(const void *x, struct gp_value *v) { v->i = REC(x)->d->iommu_group; v->null = v->i < 0; }

static void f_iommu_type(const void *x, struct gp_value *v)
{
	v->s = iommu_type(REC(x)->b, REC(x)->d);
	v->null = !v->s;
}

static void f_advice(const void *x, struct gp_value *v)
{
	v->s = REC(x)->r.advice[0] ? REC(x)->r.advice : NULL;
	v->null = !v->s;
}

static void f_iommu_mode(const void *x, struct gp_value *v) { v->s = gp_iommu_mode_name(REC(x)->b->io.mode); }

static void f_iommu_units(const void *x, struct gp_value *v)
{
	v->s = REC(x)->b->io.units ? REC(x)->b->io.unit_names : NULL;
	v->null = !v->s;
}

static void f_iommu_groups(const void *x, struct gp_value *v) { v->i = REC(x)->b->io.groups; }
static void f_iommu_cmdline(const void *x, struct gp_value *v) { v->s = REC(x)->b->io.cmdline; }

static void f_iommu_note(const void *x, struct gp_value *v)
{
	v->s = REC(x)->b->io.note[0] ? REC(x)->b->io.note : NULL;
	v->null = !v->s;
}

/* The text's forms: the block's first line, the BARs as a table, the verdict's line (coloured), and
 * the rest of the lines as people read them. */
static void t_title(const void *x, struct gp_value *v)
{
	const char *name = REC(x)->name, *dname = REC(x)->dname;
	const struct gp_pci_dev *d = REC(x)->d;

	gp_buf_addf(v->buf, "%s%s %s [%04x:%04x]%s%s", name ? name : "", name ? " " : "", d->bdf, d->vendor, d->device,
		    dname[0] ? " " : "", dname);
	v->s = gp_buf_str(v->buf);
}

static void t_bars(const void *x, struct gp_value *v)
{
	const struct gp_pci_dev *d = REC(x)->d;
	const char *hdr[] = { "BAR", "size", "type", "address", "" };
	struct gp_table tab;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	if (gp_table_init(&tab, 5))
		return;
	tab.right[1] = 1;
	gp_table_row(&tab, hdr);
	for (int k = 0; k < 6; k++) {
		const struct gp_bar *bar = &d->bars[k];
		char idx[8], type[48], size[32];
		const char *row[5] = { idx, size, type, bar->assigned ? "assigned" : "UNASSIGNED",
				       k == REC(x)->r.aperture_bar ? "<- VRAM aperture" : "" };

		if (!bar->size)
			continue;
		snprintf(idx, sizeof(idx), "%d", k);
		bar_type(bar, type, sizeof(type));
		gp_bar_size_str(bar->size, size, sizeof(size));
		gp_table_row(&tab, row);
	}
	if ((f = open_memstream(&text, &len))) {
		gp_table_print(&tab, f, 2, 2, NULL);
		fclose(f);
	}
	gp_table_free(&tab);
	if (text && len && text[len - 1] == '\n')
		text[len - 1] = '\0';
	gp_buf_addf(v->buf, "%s", text ? text : "");
	free(text);
	v->s = gp_buf_str(v->buf);
}

/* the VRAM line: shown for a GPU, or a device whose VRAM is known */
#define VRAM_LINE(x) (REC(x)->name || REC(x)->r.vram)

static void t_verdict(const void *x, struct gp_value *v)
{
	const struct gp_bar_report *r = &REC(x)->r;
	const struct cli *c = REC(x)->b->c;
	const char *sgr = !c->color ? "" : r->verdict == GP_BAR_LARGE ? "\033[32m" :
			  r->verdict == GP_BAR_SMALL ? "\033[31m" : "";
	char s1[32], s2[32];

	v->omit = !VRAM_LINE(x);
	gp_buf_addf(v->buf, " %s, aperture %s", r->vram ? gp_bar_size_str(r->vram, s1, sizeof(s1)) : "unknown",
		    r->aperture_bar >= 0 ? gp_bar_size_str(r->aperture, s2, sizeof(s2)) : "none");
	if (r->aperture_bar >= 0)
		gp_buf_addf(v->buf, " (BAR %d)", r->aperture_bar);
	gp_buf_addf(v->buf, ": %s%s%s", sgr, gp_bar_verdict_name(r->verdict), *sgr ? "\033[0m" : "");
	if (r->verdict == GP_BAR_UNKNOWN)
		gp_buf_addf(v->buf, " (VRAM size unknown: %s)", c->facts->available ? "GPU not in NVML's list" : c->facts->why);
	v->s = gp_buf_str(v->buf);
}

static void t_bar1(const void *x, struct gp_value *v)
{
	v->omit = !VRAM_LINE(x) || !REC(x)->r.driver_bar1;
	v->s = gp_bar_size_str(REC(x)->r.driver_bar1, v->num, sizeof(v->num));
}

static void t_rebar(const void *x, struct gp_value *v) { v->s = rebar_text(&REC(x)->r, v->buf); }

static void t_iommu_group(const void *x, struct gp_value *v)
{
	const struct gp_pci_dev *d = REC(x)->d;

	if (d->iommu_group >= 0)
		gp_buf_addf(v->buf, " %d, type %s", d->iommu_group, iommu_type(REC(x)->b, d));
	else
		gp_buf_addf(v->buf, ": none");
	v->s = gp_buf_str(v->buf);
}

static void t_advice(const void *x, struct gp_value *v)
{
	v->s = REC(x)->r.advice;
	v->omit = REC(x)->b->c->quiet;
}

#define NS GP_FIELD_NOSEP

/* A device's fields, in JSON order; col: the CSV column (a new field takes the next number); header: the
 * text block's line (label), at pos, text: its form there. The host's
 * IOMMU (GP_FIELD_HOST) is in each CSV and JSON lines record, once in the JSON document ("iommu"). */
static const struct gp_field bar_fields[] = {
	{ "name", "name", 1, NULL, GP_FIELD_STR, 0, f_name, NULL, 0, NULL },
	{ "bdf", "bdf", 2, "", GP_FIELD_STR, 0, f_bdf, NULL, 1, t_title },
	{ "vendor_id", "vendor_id", 13, NULL, GP_FIELD_STR, 0, f_vendor, NULL, 0, NULL },
	{ "device_id", "device_id", 14, NULL, GP_FIELD_STR, 0, f_device, NULL, 0, NULL },
	{ "device_name", "device_name", 15, NULL, GP_FIELD_STR, 0, f_dname, NULL, 0, NULL },
	{ "bars", "bars", 16, "", GP_FIELD_JSON, 0, f_bars, j_bars, 2, t_bars },
	{ "aperture_bar", "aperture_bar", 3, NULL, GP_FIELD_INT, 0, f_aperture_bar, NULL, 0, NULL },
	{ "aperture_size", "aperture_size", 4, NULL, GP_FIELD_U64, 0, f_aperture, NULL, 0, NULL },
	{ "vram", "vram", 5, NULL, GP_FIELD_U64, 0, f_vram, NULL, 0, NULL },
	{ "driver_bar1", "driver_bar1", 17, "driver BAR1 ", GP_FIELD_U64, NS, f_bar1, NULL, 4, t_bar1 },
	{ "verdict", "verdict", 6, "VRAM", GP_FIELD_STR, NS, f_verdict, NULL, 3, t_verdict },
	{ "verdict_why", "verdict_why", 18, NULL, GP_FIELD_STR, 0, f_verdict_why, NULL, 0, NULL },
	{ "rebar", "rebar", 7, "Resizable BAR", GP_FIELD_JSON, 0, f_rebar, j_rebar, 5, t_rebar },
	{ NULL, "rebar_current", 8, NULL, GP_FIELD_U64, 0, f_rebar_current, NULL, 0, NULL },
	{ NULL, "rebar_max", 9, NULL, GP_FIELD_U64, 0, f_rebar_max, NULL, 0, NULL },
	{ NULL, "rebar_entries", 19, NULL, GP_FIELD_STR, 0, f_rebar_entries, NULL, 0, NULL },
	{ "iommu_group", "iommu_group", 10, "IOMMU group", GP_FIELD_INT, NS, f_iommu_group, NULL, 6, t_iommu_group },
	{ "iommu_type", "iommu_type", 11, NULL, GP_FIELD_STR, 0, f_iommu_type, NULL, 0, NULL },
	{ "advice", "advice", 20, "advice", GP_FIELD_STR, 0, f_advice, NULL, 7, t_advice },
	{ "iommu_mode", "iommu_mode", 12, NULL, GP_FIELD_STR, GP_FIELD_HOST, f_iommu_mode, NULL, 0, NULL },
	{ "iommu_units", "iommu_units", 21, NULL, GP_FIELD_STR, GP_FIELD_HOST, f_iommu_units, NULL, 0, NULL },
	{ "iommu_groups", "iommu_groups", 22, NULL, GP_FIELD_INT, GP_FIELD_HOST, f_iommu_groups, NULL, 0, NULL },
	{ "iommu_cmdline", "iommu_cmdline", 23, NULL, GP_FIELD_STR, GP_FIELD_HOST, f_iommu_cmdline, NULL, 0, NULL },
	{ "iommu_note", "iommu_note", 24, NULL, GP_FIELD_STR, GP_FIELD_HOST, f_iommu_note, NULL, 0, NULL },
};

#define NFIELDS ((int)(sizeof(bar_fields) / sizeof(bar_fields[0])))

static void bar_rec(const struct bar_ctx *b, int i, struct bar_rec *x)
{
	x->b = b;
	x->d = &b->c->pci.devs[i];
	x->name = gpu_name(&b->t, i);
	gp_bar_report(x->d, b->c->facts, &x->r);
	gp_topo_display_name(&b->t, i, x->dname, sizeof(x->dname));
}

/* The text: each device's block from bar_fields, then the host's IOMMU. */
static void print_table(struct bar_ctx *b)
{
	struct gp_buf scratch = GP_BUF_INIT;
	struct bar_rec x;
	char units[320];
	int shown = 0;

	for (int i = 0; i < b->c->pci.n; i++) {
		if (!selected(b, i))
			continue;
		bar_rec(b, i, &x);
		if (shown++)
			putchar('\n');
		cli_record_block(bar_fields, NFIELDS, 0, &x, &scratch);
	}
	gp_buf_free(&scratch);
	if (!shown && !b->c->quiet)
		printf("No GPU found (NVIDIA class 03xx or --match); --all lists every function.\n");
	if (shown)
		putchar('\n');
	if (b->io.units)
		snprintf(units, sizeof(units), "units %s, %d groups", b->io.unit_names, b->io.groups);
	else
		snprintf(units, sizeof(units), "no units in /sys/class/iommu, %d groups", b->io.groups);
	cli_wrapf(stdout, 0, 4, "IOMMU: %s (%s); kernel command line: %s", gp_iommu_mode_name(b->io.mode), units,
		  b->io.cmdline[0] ? b->io.cmdline : "no IOMMU options");
	if (b->io.note[0] && !b->c->quiet)
		cli_wrapf(stdout, 0, 4, "Note: %s", b->io.note);
}


static void json_iommu(struct bar_ctx *b, struct gp_json *j)
{
	gp_json_obj(j, "iommu");
	gp_json_str(j, "mode", gp_iommu_mode_name(b->io.mode));
	gp_json_int(j, "units", b->io.units);
	gp_json_int(j, "groups", b->io.groups);
	gp_json_str(j, "cmdline", b->io.cmdline);
	gp_json_str(j, "note", b->io.note[0] ? b->io.note : NULL);
	gp_json_end(j, '}');
}

/* --json, --jsonl and --csv: the devices' records from bar_fields */
static void print_records(struct bar_ctx *b)
{
	struct gp_buf scratch = GP_BUF_INIT;
	struct bar_rec x;
	struct gp_json j;
	int doc = b->c->fmt == GP_OUT_JSON;

	if (doc) {
		cli_json_begin(b->c, &j, "bar", b->c->argc, b->c->argv);
		json_iommu(b, &j);
		gp_json_arr(&j, "devices");
	} else if (b->c->fmt == GP_OUT_CSV && !b->c->no_header) {
		gp_fields_csv_header(stdout, bar_fields, NFIELDS);
	}
	for (int i = 0; i < b->c->pci.n; i++) {
		if (!selected(b, i))
			continue;
		bar_rec(b, i, &x);
		cli_record(b->c, &j, "bar", bar_fields, NFIELDS, &x, &scratch);
	}
	if (doc) {
		gp_json_end(&j, ']');
		cli_json_end(b->c, &j, 0);
	}
	gp_buf_free(&scratch);
}

int cmd_bar(struct cli *c, int argc, char **argv)
{
	struct bar_opts o = { 0 };
	struct bar_ctx b;
	int rc;

	if ((rc = opts_parse(&opts_bar, c, argc, argv, &o)) >= 0)
		return rc;
	memset(&b, 0, sizeof(b));
	b.c = c;
	b.all = o.all;
	rc = cli_load_topo(c, &b.t, o.match.m, o.match.n);
	if (rc)
		return rc;
	gp_iommu_read(&c->root, &b.io);
	if (c->fmt == GP_OUT_TABLE)
		print_table(&b);
	else
		print_records(&b);
	gp_topo_free(&b.t);
	return 0;
}
