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

static void print_table(struct bar_ctx *b)
{
	const struct gp_pci *p = &b->c->pci;
	struct gp_buf txt = GP_BUF_INIT;
	char s1[32], s2[32], nbuf[160], units[320];
	int shown = 0;

	for (int i = 0; i < p->n; i++) {
		const struct gp_pci_dev *d = &p->devs[i];
		const char *name = gpu_name(&b->t, i);
		const char *dname;
		struct gp_bar_report r;
		struct gp_table tab;
		const char *hdr[] = { "BAR", "size", "type", "address", "" };

		if (!selected(b, i))
			continue;
		gp_bar_report(d, b->c->facts, &r);
		dname = gp_topo_display_name(&b->t, i, nbuf, sizeof(nbuf));
		printf("%s%s%s %s [%04x:%04x]%s%s\n", shown++ ? "\n" : "", name ? name : "", name ? " " : "", d->bdf,
		       d->vendor, d->device, dname[0] ? " " : "", dname);
		if (gp_table_init(&tab, 5))
			continue;
		tab.right[1] = 1;
		gp_table_row(&tab, hdr);
		for (int k = 0; k < 6; k++) {
			const struct gp_bar *bar = &d->bars[k];
			char idx[8], type[48];
			const char *row[5];

			if (!bar->size)
				continue;
			snprintf(idx, sizeof(idx), "%d", k);
			bar_type(bar, type, sizeof(type));
			row[0] = idx;
			row[1] = gp_bar_size_str(bar->size, s1, sizeof(s1));
			row[2] = type;
			row[3] = bar->assigned ? "assigned" : "UNASSIGNED";
			row[4] = k == r.aperture_bar ? "<- VRAM aperture" : "";
			gp_table_row(&tab, row);
		}
		gp_table_print(&tab, stdout, 2, 2, NULL);
		gp_table_free(&tab);
		if (name || r.vram) {
			const char *sgr = !b->c->color ? "" : r.verdict == GP_BAR_LARGE ? "\033[32m" :
					  r.verdict == GP_BAR_SMALL ? "\033[31m" : "";

			struct gp_buf line = GP_BUF_INIT;

			gp_buf_addf(&line, "VRAM %s, aperture %s", r.vram ? gp_bar_size_str(r.vram, s1, sizeof(s1)) : "unknown",
				    r.aperture_bar >= 0 ? gp_bar_size_str(r.aperture, s2, sizeof(s2)) : "none");
			if (r.aperture_bar >= 0)
				gp_buf_addf(&line, " (BAR %d)", r.aperture_bar);
			gp_buf_addf(&line, ": %s%s%s", sgr, gp_bar_verdict_name(r.verdict), *sgr ? "\033[0m" : "");
			if (r.verdict == GP_BAR_UNKNOWN)
				gp_buf_addf(&line, " (VRAM size unknown: %s)",
					    b->c->facts->available ? "GPU not in NVML's list" : b->c->facts->why);
			cli_wrapf(stdout, 2, 4, "%s", gp_buf_str(&line));
			gp_buf_free(&line);
			if (r.driver_bar1)
				printf("  driver BAR1 %s\n", gp_bar_size_str(r.driver_bar1, s1, sizeof(s1)));
		}
		cli_wrapf(stdout, 2, 4, "Resizable BAR: %s", rebar_text(&r, &txt));
		if (d->iommu_group >= 0)
			printf("  IOMMU group %d, type %s\n", d->iommu_group, iommu_type(b, d));
		else
			printf("  IOMMU group: none\n");
		if (r.advice[0] && !b->c->quiet)
			cli_wrapf(stdout, 2, 4, "advice: %s", r.advice);
	}
	gp_buf_free(&txt);
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

static void json_u64_or_null(struct gp_json *j, const char *key, uint64_t v)
{
	if (v)
		gp_json_u64(j, key, v);
	else
		gp_json_null(j, key);
}

static void json_device(struct bar_ctx *b, struct gp_json *j, int i)
{
	const struct gp_pci_dev *d = &b->c->pci.devs[i];
	const char *name = gpu_name(&b->t, i);
	struct gp_bar_report r;
	char v[8];

	gp_bar_report(d, b->c->facts, &r);
	gp_json_str(j, "name", name);
	gp_json_str(j, "bdf", d->bdf);
	snprintf(v, sizeof(v), "%04x", d->vendor);
	gp_json_str(j, "vendor_id", v);
	snprintf(v, sizeof(v), "%04x", d->device);
	gp_json_str(j, "device_id", v);
	gp_json_arr(j, "bars");
	for (int k = 0; k < 6; k++) {
		const struct gp_bar *bar = &d->bars[k];

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
	if (r.aperture_bar >= 0)
		gp_json_int(j, "aperture_bar", r.aperture_bar);
	else
		gp_json_null(j, "aperture_bar");
	json_u64_or_null(j, "aperture_size", r.aperture);
	json_u64_or_null(j, "vram", r.vram);
	json_u64_or_null(j, "driver_bar1", r.driver_bar1);
	gp_json_str(j, "verdict", gp_bar_verdict_name(r.verdict));
	gp_json_obj(j, "rebar");
	gp_json_str(j, "state", r.rebar.known == GP_UNKNOWN ? "unknown" : r.rebar.known == GP_ABSENT ? "absent" : "present");
	gp_json_arr(j, "entries");
	for (int k = 0; k < r.rebar.n; k++) {
		gp_json_obj(j, NULL);
		gp_json_int(j, "bar", r.rebar.e[k].bar);
		json_u64_or_null(j, "current", r.rebar.e[k].cur_size);
		if (!r.rebar.e[k].cur_size) /* a reserved encoding: say which */
			gp_json_int(j, "current_code", r.rebar.e[k].cur_log);
		gp_json_arr_flat(j, "supported");
		for (int s = 0; s <= GP_REBAR_LOG_MAX; s++)
			if (r.rebar.e[k].sizes & (1ULL << s))
				gp_json_u64(j, NULL, gp_bar_rebar_size(s));
		gp_json_end(j, ']');
		gp_json_end(j, '}');
	}
	gp_json_end(j, ']');
	gp_json_end(j, '}');
	if (d->iommu_group >= 0)
		gp_json_int(j, "iommu_group", d->iommu_group);
	else
		gp_json_null(j, "iommu_group");
	gp_json_str(j, "iommu_type", iommu_type(b, d));
	gp_json_str(j, "advice", r.advice[0] ? r.advice : NULL);
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

static void print_json(struct bar_ctx *b, int lines)
{
	struct gp_json j;

	if (!lines) {
		cli_json_begin(b->c, &j, "bar", b->c->argc, b->c->argv);
		json_iommu(b, &j);
		gp_json_arr(&j, "devices");
	}
	for (int i = 0; i < b->c->pci.n; i++) {
		if (!selected(b, i))
			continue;
		if (lines)
			cli_jsonl_record(&j, "bar");
		else
			gp_json_obj(&j, NULL);
		json_device(b, &j, i);
		gp_json_end(&j, '}');
	}
	if (!lines) {
		gp_json_end(&j, ']');
		cli_json_end(b->c, &j, 0);
	}
}

static void print_csv(struct bar_ctx *b)
{
	char num[32];

	if (!b->c->no_header)
		printf("name,bdf,aperture_bar,aperture_size,vram,verdict,rebar,rebar_current,rebar_max,iommu_group,iommu_type,iommu_mode\n");
	for (int i = 0; i < b->c->pci.n; i++) {
		const struct gp_pci_dev *d = &b->c->pci.devs[i];
		const char *name = gpu_name(&b->t, i), *it = iommu_type(b, d);
		struct gp_bar_report r;
		const struct gp_rebar_entry *re = NULL;

		if (!selected(b, i))
			continue;
		gp_bar_report(d, b->c->facts, &r);
		for (int k = 0; k < r.rebar.n; k++)
			if (r.rebar.e[k].bar == r.aperture_bar)
				re = &r.rebar.e[k];
		gp_csv_field(stdout, name, ',');
		gp_csv_field(stdout, d->bdf, ',');
		snprintf(num, sizeof(num), "%d", r.aperture_bar);
		gp_csv_field(stdout, r.aperture_bar >= 0 ? num : "", ',');
		snprintf(num, sizeof(num), "%" PRIu64, r.aperture);
		gp_csv_field(stdout, r.aperture ? num : "", ',');
		snprintf(num, sizeof(num), "%" PRIu64, r.vram);
		gp_csv_field(stdout, r.vram ? num : "", ',');
		gp_csv_field(stdout, gp_bar_verdict_name(r.verdict), ',');
		gp_csv_field(stdout, r.rebar.known == GP_UNKNOWN ? "unknown" : r.rebar.known == GP_ABSENT ? "absent" : "present", ',');
		snprintf(num, sizeof(num), "%" PRIu64, re ? re->cur_size : 0);
		gp_csv_field(stdout, re && re->cur_size ? num : "", ','); /* empty: no entry, or a reserved size code */
		snprintf(num, sizeof(num), "%" PRIu64, r.rebar_max);
		gp_csv_field(stdout, r.rebar_max ? num : "", ',');
		snprintf(num, sizeof(num), "%d", d->iommu_group);
		gp_csv_field(stdout, d->iommu_group >= 0 ? num : "", ',');
		gp_csv_field(stdout, it, ',');
		gp_csv_field(stdout, gp_iommu_mode_name(b->io.mode), '\n');
	}
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
	switch (c->fmt) {
	case GP_OUT_JSON: print_json(&b, 0); break;
	case GP_OUT_JSONL: print_json(&b, 1); break;
	case GP_OUT_CSV: print_csv(&b); break;
	case GP_OUT_TABLE: print_table(&b); break;
	}
	gp_topo_free(&b.t);
	return 0;
}
