/* gpup2p command line — options and loading shared by the subcommands. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gpup2p/topo.h"

#ifndef GPUP2P_VERSION
#define GPUP2P_VERSION "0.0.0"
#endif

static char last_error[800];

const char *cli_last_error(void)
{
	return last_error;
}

int cli_fail(const struct gp_err *e)
{
	snprintf(last_error, sizeof(last_error), "%s", e->msg[0] ? e->msg : "unknown error");
	cli_wrapf(stderr, 0, 4, "gpup2p: %s", last_error);
	return gp_err_exit_code(e);
}

int cli_error(int code, const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	cli_wrapf(stderr, 0, 4, "gpup2p%s%s: %s", cmd ? " " : "", cmd ? cmd : "", last_error);
	return code;
}

int cli_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	cli_wrapf(stderr, 0, 4, "gpup2p%s%s: %s (see 'gpup2p help%s%s')", cmd ? " " : "", cmd ? cmd : "",
		  last_error, cmd ? " " : "", cmd ? cmd : "");
	return EX_USAGE_;
}

void cli_json_begin(const struct cli *c, struct gp_json *j, const char *command, int argc, char **argv)
{
	cli_json_open(c, j, stdout, 1, command, argc, argv);
}

void cli_json_open(const struct cli *c, struct gp_json *j, FILE *f, int pretty, const char *command, int argc,
		   char **argv)
{
	gp_json_init(j, f, pretty);
	gp_json_obj(j, NULL);
	gp_json_int(j, "schema", CLI_JSON_SCHEMA);
	gp_json_str(j, "command", command);
	gp_json_obj(j, "gpup2p");
	gp_json_str(j, "version", GPUP2P_VERSION);
	gp_json_arr_flat(j, "argv");
	for (int i = 0; i < argc; i++)
		gp_json_str(j, NULL, argv[i]);
	gp_json_end(j, ']');
	gp_json_str(j, "root", c->root.live || !c->root.dir[0] ? NULL : c->root.dir); /* "": not opened */
	gp_json_bool(j, "live", c->root.live);
	gp_json_end(j, '}');
}

void cli_json_end(const struct cli *c, struct gp_json *j, int exit_status)
{
	gp_json_arr(j, "messages");
	for (int i = 0; i < c->pci.nwarn; i++) {
		gp_json_obj(j, NULL);
		gp_json_str(j, "severity", "warning");
		gp_json_str(j, "text", c->pci.warnings[i]);
		gp_json_end(j, '}');
	}
	gp_json_end(j, ']');
	gp_json_int(j, "exit_status", exit_status);
	gp_json_end(j, '}');
}

void cli_jsonl_record(struct gp_json *j, const char *command)
{
	gp_json_init(j, stdout, 0);
	gp_json_obj(j, NULL);
	gp_json_int(j, "schema", CLI_JSON_SCHEMA);
	gp_json_str(j, "command", command);
}

void cli_record(const struct cli *c, struct gp_json *j, const char *command, const struct gp_field *f, int n,
		const void *rec, struct gp_buf *buf)
{
	if (c->fmt == GP_OUT_CSV) {
		gp_fields_csv_row(stdout, f, n, rec, buf);
		return;
	}
	if (c->fmt == GP_OUT_JSON)
		gp_json_obj(j, NULL);
	else
		cli_jsonl_record(j, command);
	gp_fields_json(j, f, n, rec, c->fmt != GP_OUT_JSON, buf);
	gp_json_end(j, '}');
}

void cli_record_block(const struct gp_field *f, int n, unsigned view, const void *rec, struct gp_buf *buf)
{
	int line[64], nl = gp_fields_view(f, n, view, line, 64);

	for (int k = 0; k < nl; k++) {
		const struct gp_field *x = &f[line[k]];
		struct gp_value v = { .buf = buf };
		const char *s = gp_field_table_text(x, rec, &v);

		if (v.omit || !*s || (v.null && !x->text))
			continue;
		if (!x->header[0])
			printf("%s\n", s);
		else
			cli_wrapf(stdout, 2, x->flags & GP_FIELD_HANG ? 4 + (int)strlen(x->header) : 4, "%s%s%s", x->header,
				  x->flags & GP_FIELD_NOSEP ? "" : ": ", s);
	}
}

void cli_print_warnings(const struct cli *c)
{
	if (c->quiet)
		return;
	for (int i = 0; i < c->pci.nwarn; i++)
		cli_wrapf(stderr, 0, 4, "gpup2p: warning: %s", c->pci.warnings[i]);
}

/* -vv: each path read beneath the root, and what it met, on stderr */
static void trace_read(const char *path, int err, void *arg)
{
	(void)arg;
	fprintf(stderr, "gpup2p: read %s: %s\n", path, err ? strerror(err) : "ok");
}

int cli_root(struct cli *c)
{
	struct gp_err e = { 0 };

	if (c->root_ready)
		return 0;
	if (gp_root_init(&c->root, c->root_dir, &e))
		return cli_fail(&e);
	c->root_ready = 1;
	if (c->verbose >= 2)
		gp_root_set_trace(trace_read, NULL);
	return 0;
}

int cli_load(struct cli *c)
{
	struct gp_err e = { 0 };
	int rc = cli_root(c);

	if (rc)
		return rc;
	if (gp_pci_scan(&c->pci, &c->root, &e))
		return cli_fail(&e);
	c->facts = calloc(1, sizeof(*c->facts));
	if (!c->facts) {
		gp_pci_free(&c->pci);
		fprintf(stderr, "gpup2p: out of memory\n");
		return EX_ERROR;
	}
	if (gp_gpu_facts_load(&c->root, c->facts, c->facts_flags, &e)) {
		gp_pci_free(&c->pci);
		free(c->facts);
		c->facts = NULL;
		return cli_fail(&e);
	}
	c->loaded = 1;
	cli_print_warnings(c);
	return 0;
}

int cli_load_topo(struct cli *c, struct gp_topo *t, const struct gp_topo_match *m, int nm)
{
	struct gp_err e = { 0 };
	int rc = cli_load(c);

	if (rc)
		return rc;
	c->color = c->fmt == GP_OUT_TABLE && gp_out_use_color(c->color_mode, stdout);
	return gp_topo_build(t, &c->pci, c->facts, m, nm, &e) ? cli_fail(&e) : 0;
}

void cli_unload(struct cli *c)
{
	if (!c->loaded)
		return;
	gp_pci_free(&c->pci);
	free(c->facts);
	c->facts = NULL;
	c->loaded = 0;
}

const char *const cli_match_words[] = { "10de:*", "15b3:*", "1af4:1110", NULL };

int cli_match_opt(const char *cmd, const struct opt *o, const char *val, void *field, void *ctx)
{
	struct cli_matches *m = field;

	(void)o, (void)ctx;
	if (m->n >= GP_TOPO_MATCH_MAX)
		return cli_usage(cmd, "at most %d --match options", GP_TOPO_MATCH_MAX);
	if (!*val || gp_topo_parse_match(val, &m->m[m->n]))
		return cli_usage(cmd, "--match wants VENDOR:DEVICE in hex, like 1af4:1110 or 15b3:*");
	m->n++;
	return 0;
}
