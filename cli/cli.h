/* gpup2p command line — shared state of the subcommands (parsing and printing only). */
#ifndef GPUP2P_CLI_H
#define GPUP2P_CLI_H

#include <stdio.h>

#include "gpup2p/err.h"
#include "gpup2p/gpu.h"
#include "gpup2p/out.h"
#include "gpup2p/pci.h"
#include "gpup2p/root.h"
#include "gpup2p/topo.h"
#include "opts.h"

/* Exit codes (README and man page: one table). */
enum {
	EX_OK_ = 0, EX_WARN = 1, EX_ERROR = 2, EX_UNKNOWN = 3,
	EX_USAGE_ = 64, EX_UNAVAIL = 69, EX_PERM = 77,
};

struct cli {
	const char *root_dir;          /* --root, NULL: $GPUP2P_ROOT or live */
	enum gp_out_format fmt;
	const char *color_mode;        /* auto|always|never */
	int color;                     /* decided for stdout */
	int verbose, quiet;
	int no_header;                 /* --no-header (CSV) */
	int help, version;             /* -h/--help, --version given (the global table's OPT_MAIN entries) */

	struct gp_root root;
	struct gp_pci pci;
	struct gp_gpu_facts *facts;    /* heap: large */
	unsigned facts_flags;          /* what cli_load reads beyond the facts every command prints
	                                  (GP_GPU_HEALTH: doctor) */
	int loaded;
	int root_ready;               /* c->root opened (cli_root) */
	int argc;                      /* the command's own arguments (argv[0] its name), for the envelope */
	char **argv;
};

struct cli_cmd {
	const char *name;
	int (*run)(struct cli *c, int argc, char **argv);
	const char *summary;
	void (*help)(FILE *f);
	const struct opts_cmd *opts;   /* its option table (completion) */
};

/* The --match options given (topo, bar, acs). */
struct cli_matches {
	struct gp_topo_match m[GP_TOPO_MATCH_MAX];
	int n;
};

/* --match's parser (an OPT_CALL): VENDOR:DEVICE appended to the struct cli_matches at field. */
int cli_match_opt(const char *cmd, const struct opt *o, const char *val, void *field, void *ctx);

/* What completion offers for --match. */
extern const char *const cli_match_words[];

/* The --match entry of an option table whose context type has a struct cli_matches field. */
#define CLI_OPT_MATCH(type, field, text)                                                                          \
	{ "--match", NULL, "VENDOR:DEVICE", OPT_CALL, (long)offsetof(type, field), .call = cli_match_opt,      \
	  .values = cli_match_words, .flags = OPT_REPEAT, .help = text }

struct gp_topo;

/* Open the root (--root, GPUP2P_ROOT or live) once; prints the error and returns the exit code. */
int cli_root(struct cli *c);

/* Open the root, scan PCI and load the GPU facts; prints the error and returns the exit code. */
int cli_load(struct cli *c);

/* cli_load, decide colour for stdout, and build the GPU/NIC topology into t (gp_topo_free it).
 * Returns 0 or the exit code (error printed). */
int cli_load_topo(struct cli *c, struct gp_topo *t, const struct gp_topo_match *m, int nm);

/* Release what cli_load loaded. */
void cli_unload(struct cli *c);

/* Print "gpup2p: msg" to stderr and return the exit code of e. */
int cli_fail(const struct gp_err *e);

/* The message of the last cli_fail or cli_usage ("" before any), for a one-line status. */
const char *cli_last_error(void);

/* Print "gpup2p CMD: msg" to stderr (kept for cli_last_error) and return code. */
int cli_error(int code, const char *cmd, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The width to wrap text output at: 0 (no wrapping) when stdout is not a terminal, else its width
 * (TIOCGWINSZ), else $COLUMNS, else 80. */
int cli_term_width(void);

/* The same for any descriptor (stderr's messages): 0 when fd is not a terminal. */
int cli_term_width_fd(int fd);

/* Print s from column col on, wrapped at width (0: not wrapped), each further line indented by ind;
 * a word wider than the line gets a line of its own, whole; '\x1f' is a space that never breaks.
 * Ends with a newline. */
void cli_wrap(FILE *f, const char *s, int col, int ind, int width);

/* Print lead spaces, then the formatted text wrapped to the width of f's terminal (none when f is not
 * one: then the text as it is), each further line indented by ind. Ends with a newline. */
void cli_wrapf(FILE *f, int lead, int ind, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Print a usage error ("gpup2p CMD: msg; see gpup2p help CMD") and return 64. */
int cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The number every JSON document and JSON lines record carries as "schema": raised only by a change
 * gpup2p(1) says breaks a reader (a key renamed or removed, a type or unit changed). */
#define CLI_JSON_SCHEMA 1

/* Start a JSON document with the envelope every command shares: "schema", "command" and
 * "gpup2p": {version, argv, root, live}. */
void cli_json_begin(const struct cli *c, struct gp_json *j, const char *command, int argc, char **argv);

/* cli_json_begin writing to f, indented when pretty (else one line). */
void cli_json_open(const struct cli *c, struct gp_json *j, FILE *f, int pretty, const char *command, int argc,
		   char **argv);

/* End it: "messages" (the scan warnings) and "exit_status", then the closing brace. */
void cli_json_end(const struct cli *c, struct gp_json *j, int exit_status);

/* Start one JSON lines record on stdout: a one-line object whose first keys are "schema" and "command"
 * (the envelope's version, argv, root, messages and exit status belong to the run: --json has them).
 * Close it with gp_json_end(j, '}'). */
void cli_jsonl_record(struct gp_json *j, const char *command);

/* One record as a text block from its field list: each field of view with a header, by pos, one line
 * "LABEL: TEXT" (its gp_field_table_text; "LABELTEXT" with GP_FIELD_NOSEP) indented by 2 and wrapped to the
 * terminal 4 columns in (under the text: GP_FIELD_HANG); a label "" prints TEXT as it is (the record's first
 * line, a table of its own); a line whose text is empty,
 * omitted or (without a text()) unknown is left out. buf: the getters' scratch. */
void cli_record_block(const struct gp_field *f, int n, unsigned view, const void *rec, struct gp_buf *buf);
/* One record printed from its field list in c's format: a CSV line, an object in the open array of a
 * JSON document (the host's fields left to the document), or a JSON lines record of command (j is
 * started there). buf: scratch for the getters. */
void cli_record(const struct cli *c, struct gp_json *j, const char *command, const struct gp_field *f, int n,
		const void *rec, struct gp_buf *buf);

/* Print the non-fatal scan warnings to stderr unless quiet. */
void cli_print_warnings(const struct cli *c);

extern const struct opts_cmd opts_topo, opts_bar, opts_acs, opts_snapshot, opts_enable, opts_pin, opts_map, opts_copy,
	opts_bench, opts_bench_rdma, opts_doctor, opts_report;

int cmd_topo(struct cli *c, int argc, char **argv);
void help_topo(FILE *f);
int cmd_bar(struct cli *c, int argc, char **argv);
void help_bar(FILE *f);
int cmd_acs(struct cli *c, int argc, char **argv);
void help_acs(FILE *f);
int cmd_snapshot(struct cli *c, int argc, char **argv);
void help_snapshot(FILE *f);
int cmd_enable(struct cli *c, int argc, char **argv);
void help_enable(FILE *f);
int cmd_pin(struct cli *c, int argc, char **argv);
void help_pin(FILE *f);
int cmd_map(struct cli *c, int argc, char **argv);
void help_map(FILE *f);
int cmd_copy(struct cli *c, int argc, char **argv);
void help_copy(FILE *f);
int cmd_bench(struct cli *c, int argc, char **argv);
void help_bench(FILE *f);
int cmd_bench_rdma(struct cli *c, int argc, char **argv);
void help_bench_rdma(FILE *f);
int cmd_doctor(struct cli *c, int argc, char **argv);
void help_doctor(FILE *f);
int cmd_report(struct cli *c, int argc, char **argv);
void help_report(FILE *f);

#endif
