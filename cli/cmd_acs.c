/* gpup2p acs — audit ACS on the bridges between GPUs and NICs; option parsing for --disable/--restore
 * (carried out in acs_change.c). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "acs_change.h"
#include "cli.h"
#include "gpup2p/acs.h"

struct acs_cli {
	struct acs_opts o;
	struct cli_matches match;
};

static int device_opt(const char *cmd, const struct opt *opt, const char *val, void *field, void *ctx)
{
	struct acs_opts *o = &((struct acs_cli *)ctx)->o;

	(void)opt, (void)field;
	if (!*val)
		return cli_usage(cmd, "--device needs a BDF like 0000:00:01.0");
	if (o->ndevices >= ACS_DEVICES_MAX)
		return cli_usage(cmd, "at most %d --device options", ACS_DEVICES_MAX);
	o->devices[o->ndevices++] = val;
	return 0;
}

static void pci_functions(const char *cur)
{
	(void)cur;
	opts_suggest_dir("/sys/bus/pci/devices");
}

static const char *const mode_words[] = { "redirect", "zero", NULL };

static int mode_opt(const char *cmd, const struct opt *opt, const char *val, void *field, void *ctx)
{
	(void)opt, (void)field;
	if (strcmp(val, "redirect") && strcmp(val, "zero"))
		return cli_usage(cmd, "--mode takes redirect or zero, not '%s'", val);
	((struct acs_cli *)ctx)->o.mode = strcmp(val, "zero") ? GP_ACS_CLEAR_REDIRECT : GP_ACS_ZERO;
	return 0;
}

#define O(f) (long)offsetof(struct acs_cli, f)
static const struct opt acs_opts_table[] = {
	CLI_OPT_MATCH(struct acs_cli, match, "also treat these endpoints as GPUs (repeatable)"),
	{ "--disable", NULL, NULL, OPT_FLAG, O(o.disable), 1, .help = "clear ACS redirection on the bridges in scope" },
	{ "--restore", NULL, NULL, OPT_FLAG, O(o.restore), 1,
	  .help = "put back the values the state file recorded, then\nremove it" },
	{ "--all", NULL, NULL, OPT_FLAG, O(o.scope), GP_ACS_SCOPE_ALL,
	  .help = "scope: every bridge with an ACS capability (default:\nthe bridges on paths between GPUs and NICs)" },
	{ "--device", NULL, "BDF", OPT_CALL, -1, .call = device_opt, .flags = OPT_REPEAT, .suggest = pci_functions,
	  .help = "scope: exactly this bridge (repeatable)" },
	{ "--mode", NULL, "redirect|zero", OPT_CALL, -1, .call = mode_opt, .values = mode_words,
	  .help = "redirect (default): clear ReqRedir, CmpltRedir,\nEgressCtrl, keep the rest; zero: write 0 (NCCL's\n"
		  "recipe)" },
	{ "--state", NULL, "FILE", OPT_STR, O(o.state), .flags = OPT_FILE, .needs = "a file name",
	  .help = "state file (default /run/gpup2p/acs.state)" },
	{ "--force", NULL, NULL, OPT_FLAG, O(o.force), 1,
	  .help = "clear ACS even where the IOMMU translates (or may) or\nVFIO owns a device below" },
	{ "--dry-run", NULL, NULL, OPT_FLAG, O(o.dry_run), 1, .help = "print the plan and the boot parameter; write nothing" },
	{ 0 },
};
#undef O

/* the combinations that make no sense */
static const struct opt_rule acs_rules[] = {
	{ OPT_EXCLUDES, "--disable", "--restore", NULL, NULL },
	{ OPT_NEEDS, "--dry-run", "--disable --restore", NULL, NULL },
	{ OPT_NEEDS, "--all", "--disable --restore", NULL, NULL },
	{ OPT_NEEDS, "--device", "--disable --restore", NULL, NULL },
	{ OPT_NEEDS, "--mode", "--disable --restore", NULL, NULL },
	{ OPT_NEEDS, "--state", "--disable --restore", NULL, NULL },
	{ OPT_EXCLUDES, "--restore", "--all --device --mode", NULL, NULL },
	{ OPT_NEEDS, "--force", "--disable", NULL, NULL },
	{ OPT_EXCLUDES, "--all", "--device", NULL, NULL },
	{ 0 },
};

const struct opts_cmd opts_acs = {
	.name = "acs", .opts = acs_opts_table, .rules = acs_rules, .col = 25, .help = help_acs,
	.globals = "--json, --csv, --jsonl, --no-header, --root DIR, -q: see gpup2p --help",
};

void help_acs(FILE *f)
{
	fprintf(f,
		"usage: gpup2p acs [--match VENDOR:DEVICE]... [--json|--csv|--jsonl]\n"
		"       gpup2p acs --disable [--all | --device BDF...] [--mode redirect|zero]\n"
		"              [--state FILE] [--force] [--dry-run]\n"
		"       gpup2p acs --restore [--state FILE] [--dry-run]\n\n"
		"Audit PCIe Access Control Services: every bridge or port with an ACS capability\n"
		"(and each function of a multi-function GPU/NIC with one), its role, the\n"
		"capability and control registers decoded like lspci, whether it redirects\n"
		"peer-to-peer traffic to the root complex (ReqRedir, CmpltRedir or EgressCtrl\n"
		"set), and which GPU/NIC pairs' paths cross it, with their class. The impact is\n"
		"high where a pair's traffic would otherwise stay below the host bridge\n"
		"(PIX/PXB), low where it crosses the root complex anyway (PHB/NODE/SYS, or\n"
		"NVLink). Prints the kernel boot parameter that clears the redirection on the\n"
		"bridges on GPU/NIC paths. The audit only reads; it needs root to read the\n"
		"extended config space.\n\n"
		"--disable clears the redirection (root): each write read back; the previous\n"
		"values saved first in a state file for --restore; any failure puts back what\n"
		"was changed and exits 2. It refuses (exit 64) where the IOMMU translates (DMA,\n"
		"DMA-FQ) for a device below a bridge it would change, or may (its group's type\n"
		"unknown), or VFIO owns a device there, unless --force.\n\n");
	opts_help(f, &opts_acs);
	fprintf(f,
		"\nExit: audit: 0 no redirect of high impact, 1 a bridge redirects PIX/PXB\n"
		"traffic, 3 ACS unreadable (run as root); --disable/--restore: 0 done or nothing\n"
		"to do, 2 a write failed (changes put back), 3 ACS unreadable or state file\n"
		"unusable, 64 refused (IOMMU translating or VFIO: --force) or usage, 77 not\n"
		"root; 69 no PCI/root.\n");
}

/* The lists below are built in a gp_buf (reset first; returned as text): a bridge on the path of
 * every pair of a large machine names them all. Out of memory shows in buf->oom, checked by cmd_acs. */

/* Every pair whose path crosses the bridge: "GPU0-GPU1 GPU0-NIC0" (CSV: one by one). */
static const char *pair_list(const struct gp_topo *t, const struct gp_acs_audit *a, const struct gp_acs_bridge *b,
			     struct gp_buf *buf)
{
	int i = -1, j = -1;

	gp_buf_reset(buf);
	while (gp_acs_pair_next(a, b, 0, &i, &j))
		gp_buf_add(buf, buf->len ? " " : "", t->devs[i].name, "-", t->devs[j].name, (char *)NULL);
	return gp_buf_str(buf);
}

/* The pair classes in the order of the pairs ("SYS PXB ..."), for CSV. */
static const char *class_list(const struct gp_topo *t, const struct gp_acs_audit *a, const struct gp_acs_bridge *b,
			      struct gp_buf *buf)
{
	char code[16];
	int i = -1, j = -1;

	gp_buf_reset(buf);
	while (gp_acs_pair_next(a, b, 0, &i, &j))
		gp_buf_add(buf, buf->len ? " " : "", gp_topo_code_at(t, i, j, code, sizeof(code)), (char *)NULL);
	return gp_buf_str(buf);
}

/* One row of a listing for people: "GPU1-GPU2", or for groups "GPU0-NIC0+126VFs". */
static void add_row(const struct gp_topo *t, const struct gp_acs_bridge *b, int i, int j, const char *sep,
		    struct gp_buf *buf)
{
	char x[48], y[48];

	gp_buf_addf(buf, "%s%s-%s", sep, gp_acs_pair_name(t, b, 1, i, x, sizeof(x)),
		    gp_acs_pair_name(t, b, 1, j, y, sizeof(y)));
}

/* The pairs grouped by class, closest first: "PXB GPU1-GPU2 GPU1-GPU3; SYS GPU0-GPU1"; a NIC's virtual
 * functions with their physical function ("NIC0+126VFs"), a pair of groups once. One pass per class
 * (and per NVLink count, in the order they first come). */
static const char *pairs_by_class(const struct gp_topo *t, const struct gp_acs_audit *a, const struct gp_acs_bridge *b,
				  struct gp_buf *buf)
{
	int nv[64], nnv = 0, i, j;

	gp_buf_reset(buf);
	for (i = -1, j = -1; gp_acs_pair_next(a, b, 1, &i, &j);) {
		struct gp_topo_link l = gp_topo_link_at(t, i, j);
		int seen = 0;

		for (int k = 0; k < nnv && !seen; k++)
			seen = nv[k] == l.nvlinks;
		if (l.cls == GP_TC_NV && !seen && nnv < (int)(sizeof(nv) / sizeof(nv[0])))
			nv[nnv++] = l.nvlinks;
	}
	for (int c = GP_TC_NV; c <= GP_TC_SYS; c++)
		for (int k = 0; k < (c == GP_TC_NV ? nnv : 1); k++) {
			int first = 1;

			for (i = -1, j = -1; gp_acs_pair_next(a, b, 1, &i, &j);) {
				struct gp_topo_link l = gp_topo_link_at(t, i, j);
				char code[16];

				if ((int)l.cls != c || (c == GP_TC_NV && l.nvlinks != nv[k]))
					continue;
				if (first)
					gp_buf_addf(buf, "%s%s", buf->len ? "; " : "", gp_topo_code(&l, code, sizeof(code)));
				first = 0;
				add_row(t, b, i, j, " ", buf);
			}
		}
	return gp_buf_str(buf);
}

/* The pairs whose traffic would stay below the host bridge: "GPU1-GPU2 GPU1-GPU3" (grouped too). */
static const char *local_pairs(const struct gp_topo *t, const struct gp_acs_audit *a, const struct gp_acs_bridge *b,
			       struct gp_buf *buf)
{
	int i = -1, j = -1;

	gp_buf_reset(buf);
	while (gp_acs_pair_next(a, b, 1, &i, &j))
		if (gp_acs_pair_local(t, i, j))
			add_row(t, b, i, j, buf->len ? " " : "", buf);
	return gp_buf_str(buf);
}

static const char *redirect_word(const struct gp_acs_bridge *b)
{
	return b->redirects < 0 ? "unknown" : b->redirects ? "yes" : "no";
}

/* One bridge's record: what every format prints of it. */
struct acs_rec {
	const struct gp_topo *t;
	const struct gp_acs_audit *a;
	const struct gp_acs_bridge *b;
	int color;                     /* the text's redirect word coloured */
};

#define REC(x) ((const struct acs_rec *)(x))
#define PRESENT(x) (REC(x)->b->state == GP_PRESENT)

static const struct gp_pci_dev *rec_dev(const void *x)
{
	return &REC(x)->t->pci->devs[REC(x)->b->pci];
}

static void f_bdf(const void *x, struct gp_value *v) { v->s = rec_dev(x)->bdf; }
static void f_role(const void *x, struct gp_value *v) { v->s = gp_pci_port_name(rec_dev(x)->port_type); }
static void f_state(const void *x, struct gp_value *v) { v->s = PRESENT(x) ? "present" : "unknown"; }
static void f_cap(const void *x, struct gp_value *v) { v->i = REC(x)->b->cap; v->null = !PRESENT(x); }
static void f_ctl(const void *x, struct gp_value *v) { v->i = REC(x)->b->ctl; v->null = !PRESENT(x); }
static void f_ctl_off(const void *x, struct gp_value *v) { v->i = REC(x)->b->ctl_off; v->null = !PRESENT(x); }

static void decoded(const void *x, struct gp_value *v, unsigned reg)
{
	char buf[256];

	v->null = !PRESENT(x);
	if (!v->null)
		gp_buf_addf(v->buf, "%s", gp_acs_decode(reg, buf, sizeof(buf)));
	v->s = v->null ? NULL : gp_buf_str(v->buf);
}

static void f_cap_dec(const void *x, struct gp_value *v) { decoded(x, v, REC(x)->b->cap); }
static void f_ctl_dec(const void *x, struct gp_value *v) { decoded(x, v, REC(x)->b->ctl); }

static void f_redirects(const void *x, struct gp_value *v) /* CSV: yes, no or unknown */
{
	v->i = REC(x)->b->redirects;
	v->null = !PRESENT(x);
	v->s = redirect_word(REC(x)->b);
}

static void f_impact(const void *x, struct gp_value *v) { v->s = gp_acs_impact_name(REC(x)->b->impact); }
static void f_pairs(const void *x, struct gp_value *v) { v->s = pair_list(REC(x)->t, REC(x)->a, REC(x)->b, v->buf); }
static void f_classes(const void *x, struct gp_value *v) { v->s = class_list(REC(x)->t, REC(x)->a, REC(x)->b, v->buf); }

/* The text's forms: the block's first line, the registers as lspci decodes them, the pairs by class. */
static void t_title(const void *x, struct gp_value *v)
{
	const struct gp_pci_dev *d = rec_dev(x);
	const struct gp_acs_bridge *b = REC(x)->b;
	const char *sgr = !REC(x)->color ? "" : b->impact == GP_ACS_IMPACT_HIGH ? "\033[31m" :
			  b->impact == GP_ACS_IMPACT_LOW ? "\033[33m" : b->redirects == 0 ? "\033[32m" : "";

	gp_buf_addf(v->buf, "%s %s [%04x:%04x]  redirects peer traffic: %s%s%s", d->bdf, gp_pci_port_name(d->port_type),
		    d->vendor, d->device, sgr, redirect_word(b), *sgr ? "\033[0m" : "");
	v->s = gp_buf_str(v->buf);
}

static void t_state(const void *x, struct gp_value *v)
{
	v->s = "unknown (extended config space not readable: run as root)";
	v->omit = PRESENT(x);
}

static void t_ctl_dec(const void *x, struct gp_value *v)
{
	char buf[256];

	v->omit = !PRESENT(x);
	gp_buf_addf(v->buf, "%s  (0x%04x%s)", gp_acs_decode(REC(x)->b->ctl, buf, sizeof(buf)), REC(x)->b->ctl,
		    gp_acs_intel_pch_quirk(rec_dev(x)) ? "; Intel PCH quirk: at capability+8, where lspci does not look" : "");
	v->s = gp_buf_str(v->buf);
}

static void t_pairs(const void *x, struct gp_value *v)
{
	v->s = REC(x)->b->npairs ? pairs_by_class(REC(x)->t, REC(x)->a, REC(x)->b, v->buf) : "no GPU/NIC pair";
}

static void t_impact(const void *x, struct gp_value *v)
{
	const struct gp_acs_bridge *b = REC(x)->b;
	struct gp_buf local = GP_BUF_INIT;

	if (b->impact == GP_ACS_IMPACT_HIGH) {
		gp_buf_addf(v->buf, "high: %s would stay below the host bridge without the redirect",
			    local_pairs(REC(x)->t, REC(x)->a, b, &local));
		v->buf->oom |= local.oom;
	}
	gp_buf_free(&local);
	v->s = b->impact == GP_ACS_IMPACT_HIGH ? gp_buf_str(v->buf) : b->impact == GP_ACS_IMPACT_LOW ?
	       "low: these pairs cross the root complex anyway (PHB/NODE/SYS) or use NVLink" : NULL;
}

/* A bridge's fields, in JSON order; col: the CSV column (a new field takes the next number); header: the
 * text block's line (label), at pos, text: its form there. */
static const struct gp_field acs_fields[] = {
	{ "bdf", "bdf", 1, "", GP_FIELD_STR, 0, f_bdf, NULL, 1, t_title },
	{ "role", "role", 2, NULL, GP_FIELD_STR, 0, f_role, NULL, 0, NULL },
	{ "state", "state", 3, "ACS", GP_FIELD_STR, 0, f_state, NULL, 2, t_state },
	{ "cap", "cap", 4, NULL, GP_FIELD_HEX, 0, f_cap, NULL, 0, NULL },
	{ "ctl", "ctl", 5, NULL, GP_FIELD_HEX, 0, f_ctl, NULL, 0, NULL },
	{ "ctl_offset", "ctl_offset", 10, NULL, GP_FIELD_INT, 0, f_ctl_off, NULL, 0, NULL },
	{ "cap_decoded", "cap_decoded", 11, "ACSCap", GP_FIELD_STR, GP_FIELD_HANG, f_cap_dec, NULL, 3, NULL },
	{ "ctl_decoded", "ctl_decoded", 12, "ACSCtl", GP_FIELD_STR, GP_FIELD_HANG, f_ctl_dec, NULL, 4, t_ctl_dec },
	{ "redirects", "redirects", 6, NULL, GP_FIELD_BOOL, 0, f_redirects, NULL, 0, NULL },
	{ "impact", "impact", 9, "impact", GP_FIELD_STR, 0, f_impact, NULL, 6, t_impact },
	{ "pairs", "pairs", 7, "on the path of", GP_FIELD_WORDS, 0, f_pairs, NULL, 5, t_pairs },
	{ "pair_classes", "pair_classes", 8, NULL, GP_FIELD_WORDS, 0, f_classes, NULL, 0, NULL },
};

#define NFIELDS ((int)(sizeof(acs_fields) / sizeof(acs_fields[0])))

/* The text: each bridge's block from acs_fields, then what the audit means. */
static void print_table(const struct cli *c, const struct gp_topo *t, const struct gp_acs_audit *a,
			struct gp_buf *buf)
{
	for (int i = 0; i < a->n; i++) {
		struct acs_rec x = { t, a, &a->b[i], c->color };

		cli_record_block(acs_fields, NFIELDS, 0, &x, buf);
	}
	if (!a->n)
		printf("No bridge with an ACS capability.\n");
	if (c->quiet)
		return;
	printf("\n");
	if (a->redirect_high)
		cli_wrapf(stdout, 0, 0, "%d bridge(s) send traffic of PIX/PXB pairs, which would otherwise stay below "
			  "the host bridge, up to the root complex: slow P2P, or a hang.", a->redirect_high);
	if (a->redirect_low)
		cli_wrapf(stdout, 0, 0, "%d bridge(s) redirect only pairs whose traffic crosses the root complex anyway "
			  "(PHB/NODE/SYS) or uses NVLink: lower impact.", a->redirect_low);
	if (a->on_path_redirecting) {
		struct gp_buf line = GP_BUF_INIT;

		gp_buf_reset(buf);
		gp_acs_boot_param(t, a, buf);
		cli_wrapf(stdout, 0, 0, "Boot parameter that clears the redirection: %s", gp_buf_str(buf));
		if (!gp_acs_grub_line(gp_buf_str(buf), &line)) /* ';' escaped: grub.cfg would end the line there */
			printf("In /etc/default/grub (then update-grub):\n  %s\n", gp_buf_str(&line));
		gp_buf_free(&line);
	} else if (a->on_path_unknown)
		printf("ACS of %d bridge(s) on GPU/NIC paths could not be read: run as root.\n", a->on_path_unknown);
	else
		printf("No bridge on a GPU/NIC path redirects peer traffic.\n");
}

/* --json, --jsonl and --csv: the bridges' records from acs_fields */
static void print_records(const struct cli *c, const struct gp_topo *t, const struct gp_acs_audit *a,
			  struct gp_buf *bp, int rc)
{
	int doc = c->fmt == GP_OUT_JSON;
	struct gp_json j;

	if (doc) {
		cli_json_begin(c, &j, "acs", c->argc, c->argv);
		gp_json_int(&j, "on_path_redirecting", a->on_path_redirecting);
		gp_json_int(&j, "on_path_unknown", a->on_path_unknown);
		gp_json_int(&j, "redirect_high", a->redirect_high);
		gp_json_int(&j, "redirect_low", a->redirect_low);
		gp_buf_reset(bp);
		gp_acs_boot_param(t, a, bp);
		gp_json_str(&j, "boot_parameter", bp->len ? gp_buf_str(bp) : NULL);
		gp_json_arr(&j, "bridges");
	} else if (c->fmt == GP_OUT_CSV && !c->no_header) {
		gp_fields_csv_header(stdout, acs_fields, NFIELDS);
	}
	for (int i = 0; i < a->n; i++) {
		struct acs_rec x = { t, a, &a->b[i], 0 };

		cli_record(c, &j, "acs", acs_fields, NFIELDS, &x, bp);
	}
	if (doc) {
		gp_json_end(&j, ']');
		cli_json_end(c, &j, rc);
	}
}

int cmd_acs(struct cli *c, int argc, char **argv)
{
	struct acs_cli a_ = { 0 };
	struct acs_opts *o = &a_.o;
	struct gp_buf buf = GP_BUF_INIT;
	struct gp_topo t;
	struct gp_acs_audit a;
	int rc;

	if ((rc = opts_parse(&opts_acs, c, argc, argv, &a_)) >= 0)
		return rc;
	if (o->ndevices)
		o->scope = GP_ACS_SCOPE_LISTED;
	if ((o->disable || o->restore) && !o->dry_run && (rc = acs_root_check(c)))
		return rc;
	rc = cli_load_topo(c, &t, a_.match.m, a_.match.n);
	if (rc)
		return rc;
	if (o->disable || o->restore) {
		rc = acs_change(c, o, &t);
		gp_topo_free(&t);
		return rc;
	}
	if (gp_acs_audit(&t, &a)) {
		gp_topo_free(&t);
		fprintf(stderr, "gpup2p: out of memory\n");
		return EX_ERROR;
	}
	/* a redirect that keeps PIX/PXB traffic from staying below the host bridge is the warning; one on
	 * pairs that cross the root complex anyway is reported, ranked lower, and does not fail the audit */
	rc = a.redirect_high ? EX_WARN : a.on_path_unknown ? EX_UNKNOWN : 0;
	if (c->fmt == GP_OUT_TABLE)
		print_table(c, &t, &a, &buf);
	else
		print_records(c, &t, &a, &buf, rc);
	if (buf.oom) {
		fprintf(stderr, "gpup2p: acs: out of memory: a list above is incomplete\n");
		rc = EX_ERROR;
	}
	gp_buf_free(&buf);
	gp_acs_audit_free(&a);
	gp_topo_free(&t);
	return rc;
}
