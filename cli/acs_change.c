/* gpup2p acs --disable / --restore — print the plan and what happened; the work is in libcore/acs/write.c. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acs_change.h"
#include "gpup2p/iommu.h"

int acs_root_check(const struct cli *c)
{
	const char *dir = c->root_dir ? c->root_dir : getenv("GPUP2P_ROOT");
	int live = !dir || !*dir || !strcmp(dir, "/");
	const char *lift = getenv("GPUP2P_TEST_NONROOT_WRITES");

	if (geteuid() == 0 || (!live && lift && !strcmp(lift, "1")))
		return 0;
	fprintf(stderr, "gpup2p acs: changing ACS writes PCI config space and needs root: run it with sudo "
		"(--dry-run shows the plan without writing)\n");
	return EX_PERM;
}

static const char *result_word(const struct acs_opts *o, const struct gp_acs_change *ch)
{
	if (o->dry_run)
		return ch->before == ch->after ? "already so" : "would change";
	switch (ch->result) {
	case 1: return o->restore ? "restored" : "changed";
	case 2: return "already so";
	case -1: return "failed";
	case -2: return "rolled back";
	default: return "not attempted";
	}
}

static void print_table(const struct cli *c, const struct acs_opts *o, const struct gp_topo *t,
			const struct gp_acs_plan *pl)
{
	char buf[256];

	for (int i = 0; i < pl->n; i++) {
		const struct gp_acs_change *ch = &pl->c[i];
		const struct gp_pci_dev *d = &t->pci->devs[ch->pci];

		printf("%s %s [%04x:%04x]  ACSCtl 0x%04x -> 0x%04x  %s\n", d->bdf, gp_pci_port_name(d->port_type),
		       d->vendor, d->device, ch->before, ch->after, result_word(o, ch));
		if (c->verbose)
			printf("  now:  %s\n  want: %s\n", gp_acs_decode(ch->before, buf, sizeof(buf)),
			       gp_acs_decode(ch->after, buf + 128, 128));
	}
}

/* One bridge of the plan, and what was asked. */
struct change_rec {
	const struct acs_opts *o;
	const struct gp_topo *t;
	const struct gp_acs_change *ch;
};

#define CH(x) (((const struct change_rec *)(x))->ch)

static void f_action(const void *x, struct gp_value *v)
{
	v->s = ((const struct change_rec *)x)->o->restore ? "restore" : "disable";
}

static void f_bdf(const void *x, struct gp_value *v) { v->s = CH(x)->bdf; }

static void f_role(const void *x, struct gp_value *v)
{
	v->s = gp_pci_port_name(((const struct change_rec *)x)->t->pci->devs[CH(x)->pci].port_type);
}

static void f_offset(const void *x, struct gp_value *v) { v->i = CH(x)->off; }
static void f_before(const void *x, struct gp_value *v) { v->i = CH(x)->before; }
static void f_after(const void *x, struct gp_value *v) { v->i = CH(x)->after; }

static void f_result(const void *x, struct gp_value *v)
{
	v->s = result_word(((const struct change_rec *)x)->o, CH(x));
}

/* A bridge's change, in JSON order; col: the CSV column (a new field takes the next number). The action is
 * the run's: once in a JSON document, in each CSV and JSON lines record (GP_FIELD_HOST). */
static const struct gp_field change_fields[] = {
	{ "action", "action", 7, NULL, GP_FIELD_STR, GP_FIELD_HOST, f_action, NULL, 0, NULL },
	{ "bdf", "bdf", 1, NULL, GP_FIELD_STR, 0, f_bdf, NULL, 0, NULL },
	{ "role", "role", 2, NULL, GP_FIELD_STR, 0, f_role, NULL, 0, NULL },
	{ "offset", "offset", 6, NULL, GP_FIELD_INT, 0, f_offset, NULL, 0, NULL },
	{ "before", "before", 3, NULL, GP_FIELD_HEX, 0, f_before, NULL, 0, NULL },
	{ "after", "after", 4, NULL, GP_FIELD_HEX, 0, f_after, NULL, 0, NULL },
	{ "result", "result", 5, NULL, GP_FIELD_STR, 0, f_result, NULL, 0, NULL },
};

#define NFIELDS ((int)(sizeof(change_fields) / sizeof(change_fields[0])))

/* --json, --jsonl and --csv: the plan's records from change_fields */
static void print_records(const struct cli *c, const struct acs_opts *o, const struct gp_topo *t,
			  const struct gp_acs_plan *pl, const char *state, const char *bp, const char *refused, int rc)
{
	struct gp_json j;

	if (c->fmt == GP_OUT_JSON) {
		cli_json_begin(c, &j, "acs", c->argc, c->argv);
		gp_json_str(&j, "action", o->restore ? "restore" : "disable");
		gp_json_bool(&j, "dry_run", o->dry_run);
		gp_json_str(&j, "mode", o->restore ? NULL : o->mode == GP_ACS_ZERO ? "zero" : "redirect");
		gp_json_str(&j, "state_file", state);
		gp_json_str(&j, "boot_parameter", bp[0] ? bp : NULL);
		gp_json_int(&j, "to_write", pl->nwrite);
		gp_json_str(&j, "refused", refused);
		gp_json_arr(&j, "bridges");
	} else if (c->fmt == GP_OUT_CSV && !c->no_header) {
		gp_fields_csv_header(stdout, change_fields, NFIELDS);
	}
	for (int i = 0; i < pl->n; i++) {
		struct change_rec x = { o, t, &pl->c[i] };

		cli_record(c, &j, "acs", change_fields, NFIELDS, &x, NULL);
	}
	if (c->fmt == GP_OUT_JSON) {
		gp_json_end(&j, ']');
		cli_json_end(c, &j, rc);
	}
}

/* The plan in the format asked for; rc: the exit status the run ends with (JSON's "exit_status"). */
static void print_plan(const struct cli *c, const struct acs_opts *o, const struct gp_topo *t,
		       const struct gp_acs_plan *pl, const char *state, const char *bp, const char *refused, int rc)
{
	if (c->fmt == GP_OUT_TABLE)
		print_table(c, o, t, pl);
	else
		print_records(c, o, t, pl, state, bp, refused, rc);
}

/* What a table reader needs after the list: outcome, where the state is, and what stays true. */
static void print_notes(const struct cli *c, const struct acs_opts *o, const struct gp_acs_plan *pl,
			const char *state, const char *bp, int failed)
{
	struct gp_iommu io;

	if (c->fmt != GP_OUT_TABLE || c->quiet)
		return;
	if (!pl->n)
		printf(o->restore ? "The state file names no bridge.\n"
				  : "No bridge with an ACS capability in scope (default: bridges on GPU/NIC paths; --all "
				    "for every one).\n");
	else if (failed)
		return;
	else if (o->dry_run)
		printf("\nDry run: %d bridge(s) would change; nothing was written.\n", pl->nwrite);
	else if (!pl->nwrite)
		printf("\nNothing to change: every bridge in scope already has the value asked for.\n");
	else if (o->restore)
		printf("\nRestored %d bridge(s); removed %s.\n", pl->nwrite, state);
	else
		printf("\nChanged %d bridge(s); the previous values are in %s ('gpup2p acs --restore' puts them back).\n",
		       pl->nwrite, state);
	if (o->restore || !pl->nwrite)
		return;
	gp_iommu_read(&c->root, &io);
	if (io.groups > 0)
		printf("Note: the %d IOMMU groups formed at boot stay as they are: clearing ACS now does not merge "
		       "them.\n", io.groups);
	printf("Note: the kernel sets ACS again after a reset, resume or hotplug of these ports: run this again "
	       "then, or make it permanent with the boot parameter\n  %s\n", bp);
}

/* libcore says what stands in the way (kind: GP_ACS_UNSAFE_*); the option that overrides it is ours */
static void force_hint(struct gp_err *refusal, int kind)
{
	size_t n = strlen(refusal->msg);

	snprintf(refusal->msg + n, sizeof(refusal->msg) - n, "%s",
		 kind == GP_ACS_UNSAFE_VFIO ? "; use --force to clear it anyway" : ", or use --force");
}

int acs_change(struct cli *c, const struct acs_opts *o, struct gp_topo *t)
{
	struct gp_acs_io io = gp_acs_io_libpci(t->pci);
	struct gp_err e = { 0 }, refusal = { 0 };
	struct gp_acs_audit a;
	struct gp_acs_plan pl;
	struct gp_buf bp = GP_BUF_INIT; /* the boot parameter: every bridge, however many */
	char state[GP_PATH_MAX];
	int rc, kind;

	if (o->state)
		snprintf(state, sizeof(state), "%s", o->state);
	else if ((rc = gp_root_host_path(&c->root, "/run/gpup2p/acs.state", state, sizeof(state)))) {
		/* under --root the state file stays beneath the root */
		fprintf(stderr, "gpup2p: %s/run/gpup2p/acs.state: %s (nothing was changed)\n", c->root.dir,
			gp_root_strerror(-rc));
		return EX_UNKNOWN;
	}
	if (o->restore) {
		rc = gp_acs_plan_restore(t->pci, &io, state, &pl, &e);
		if (rc && e.cls == GP_E_UNAVAIL) {
			if (c->fmt != GP_OUT_TABLE) /* an empty plan, in the format asked for */
				print_plan(c, o, t, &pl, state, "", NULL, 0);
			else if (!c->quiet)
				printf("Nothing to restore: no state file %s (no 'gpup2p acs --disable' since boot, or it "
				       "used --state).\n", state);
			return 0;
		}
		if (rc)
			return cli_fail(&e);
		for (int i = 0; i < pl.n && !c->quiet; i++)
			if (pl.c[i].before != pl.c[i].recorded && pl.c[i].before != pl.c[i].after)
				fprintf(stderr, "gpup2p: warning: %s holds 0x%04x, not the 0x%04x gpup2p wrote: something "
					"else changed it; putting back 0x%04x anyway\n", pl.c[i].bdf, pl.c[i].before,
					pl.c[i].recorded, pl.c[i].after);
	} else {
		if (gp_acs_audit(t, &a)) {
			fprintf(stderr, "gpup2p: out of memory\n");
			return EX_ERROR;
		}
		rc = gp_acs_plan_disable(t, &a, o->scope, o->devices, o->ndevices, o->mode, &pl, &e);
		gp_acs_audit_free(&a);
		if (rc)
			return cli_fail(&e);
		/* the IOMMU translating or VFIO below a bridge: refused unless --force; a dry run shows it too */
		if (!o->force && (kind = gp_acs_plan_check(t->pci, &pl, &refusal)) > 0) {
			force_hint(&refusal, kind);
			if (o->dry_run) {
				gp_acs_plan_boot_param(&pl, o->mode, &bp);
				print_plan(c, o, t, &pl, state, gp_buf_str(&bp), refusal.msg,
					   gp_err_exit_code(&refusal));
			}
			gp_buf_free(&bp);
			gp_acs_plan_free(&pl);
			return cli_fail(&refusal);
		}
	}
	rc = 0;
	if (!o->dry_run) /* disable re-reads every bridge; restore also drops a file with nothing left to do */
		rc = o->restore ? gp_acs_restore(t->pci, &pl, &io, state, &e)
				: gp_acs_disable(t->pci, &pl, o->mode, &io, state, &e);
	if (o->disable && gp_acs_plan_boot_param(&pl, o->mode, &bp)) /* after the run: the values the bridges had */
		fprintf(stderr, "gpup2p: warning: out of memory: the boot parameter below is incomplete\n");
	print_plan(c, o, t, &pl, state, gp_buf_str(&bp), NULL, rc ? gp_err_exit_code(&e) : 0);
	print_notes(c, o, &pl, state, gp_buf_str(&bp), rc != 0);
	gp_buf_free(&bp);
	gp_acs_plan_free(&pl);
	return rc ? cli_fail(&e) : 0;
}
