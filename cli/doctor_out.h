/* gpup2p doctor — the formats for machines: one-line JSON under a size bound, Prometheus text for
 * node_exporter's textfile collector, a Nagios status line. cmd_doctor.c parses and runs. */
#ifndef GPUP2P_DOCTOR_OUT_H
#define GPUP2P_DOCTOR_OUT_H

#include "cli.h"
#include "gpup2p/doctor.h"

#define DOC_JSON_MAX 65536      /* --json stays below this many bytes, its newline included */
#define DOC_PROM_FILE "gpup2p.prom"

/* A finished run as the formats see it. d is NULL when doctor could not run (rc and
 * cli_last_error() say why). */
struct doc_run {
	struct gp_doctor_ctx *d;
	const int *sum;         /* findings per severity (GP_SEV_N); NULL without d */
	int rc;                 /* doctor's exit status */
	double seconds;         /* wall time of the run, loading included */
	int argc;
	char **argv;
	int pretty;             /* --pretty */
	int strict;             /* --strict */
	int alarms_only;        /* --alarms-only: check_status for alarms only */
	const struct gp_expect *expect; /* --expect FILE, or NULL */
};

/* Print the --json document: one line, findings cut to stay under DOC_JSON_MAX ("truncated" counts
 * those left out); with pretty indented and whole. Returns 0, or an exit code when out of memory. */
int doc_json(const struct cli *c, const struct doc_run *r);

/* Print the Prometheus text to stdout, or with dir write dir/gpup2p.prom atomically. Returns 0 or
 * the exit code of a failed write (message printed). */
int doc_prom(const struct cli *c, const struct doc_run *r, const char *dir);

/* Print the Nagios status line with perfdata; returns the Nagios code: 0 OK, 1 WARNING,
 * 2 CRITICAL, 3 UNKNOWN (doctor's 3, 64, 69 and 77). */
int doc_nagios(const struct doc_run *r);

/* Print the text report (doctor_text.c): header, one heading per severity with each check under the
 * gravest of its findings, identical findings of several subjects folded, wrapped to
 * cli_term_width(); strict: unknown findings are alarms. 0, or EX_ERROR when out of memory. */
int doc_text(const struct cli *c, struct gp_doctor_ctx *d, int strict, const int sum[GP_SEV_N]);

#endif
