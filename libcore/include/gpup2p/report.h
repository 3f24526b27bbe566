/* gpup2p — report: merge many nodes' doctor and bench JSON (files, clush --outdir directories,
 * `host: line` streams from pdsh/clush/srun --label), fold identical results into host ranges,
 * list the nodes that sent nothing and the bench figures below a fraction of the fleet median.
 * Malformed input is recorded (source, line, host, why), never fatal. */
#ifndef GPUP2P_REPORT_H
#define GPUP2P_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "gpup2p/buf.h"
#include "gpup2p/err.h"
#include "gpup2p/expect.h"
#include "gpup2p/hostlist.h"
#include "gpup2p/strmap.h"

struct gp_report_host {
	char *name;
	int doctor;                    /* doctor documents read */
	int bench;                     /* bench rows read */
	int bad;                       /* malformed entries */
	int exit_status;               /* doctor's own exit status, -1 when not given */
	char *error;                   /* why doctor could not run (its "error"), or NULL */
	int errors, warnings, unknown; /* findings of these severities */
	struct gp_expect *facts;       /* --baseline: the "facts" of its last doctor document, or NULL */
};

/* One folded doctor finding: the same (id, severity, subject, message) on every host in `hosts`. */
struct gp_report_group {
	char *id, *severity, *subject, *message, *fix;
	int sev;                       /* 0 error, 1 warning, 2 unknown, 3 info: the print order */
	int *host, nhost, cap;         /* host indices (repeats dropped by gp_report_fold) */
	char *range;                   /* after gp_report_fold */
};

/* Hosts whose doctor exited with a status that is no finding (3, 64, 69, 77): one per status and
 * error message. */
struct gp_report_status {
	int exit_status;
	const char *error;             /* the hosts' doctor "error" (owned by a host), or NULL */
	int nhost;
	char *range;
};

struct gp_report_sample {
	int host;
	double gbps;
};

/* One bench figure (same mode, path, src, dst, memory, p2p, op, engine and size) across the fleet. */
struct gp_report_bench {
	char *mode, *path, *src, *dst, *memory, *p2p, *op, *engine;  /* NULL where the record had null */
	uint64_t size;
	struct gp_report_sample *v;    /* one per host (a host's last record) after gp_report_fold */
	int nv, cap;
	double median;                 /* of the hosts' figures, GB/s */
	struct gp_report_sample *low;  /* hosts below below*median, in host order */
	int nlow;
};

struct gp_report_bad {
	char *source;                  /* file name, or "stdin" */
	int line;                      /* 0: the whole file */
	char *host;                    /* NULL when no host could be told */
	char *why;
};

struct gp_report {
	struct gp_report_host *host;
	int nhost, hcap;
	struct gp_strmap hmap;
	struct gp_report_group *group;
	int ngroup, gcap;
	struct gp_strmap gmap;
	struct gp_report_bench *bench;
	int nbench, bcap;
	struct gp_strmap bmap;
	struct gp_report_bad *bad;
	int nbad, badcap;
	struct gp_hostlist expect;     /* --expect, expanded */
	int have_expect;
	int info;                      /* fold info findings too */
	int baseline;                  /* keep each host's doctor "facts" (gp_report_baseline) */

	/* filled by gp_report_fold */
	double below;
	char *clean_range, *missing_range, *unexpected_range;
	int nclean, nmissing, nunexpected, ndoctor;
	struct gp_report_status *status;
	int nstatus;
	int exit_code;                 /* 0 clean, 1 warnings/missing/below/malformed/no result, 2 an error */
};

/* Start an empty report. */
void gp_report_init(struct gp_report *r);

/* Free everything the report holds. */
void gp_report_free(struct gp_report *r);

/* Read a file, or every file of a directory (host = file name, as clush --outdir writes them).
 * An unreadable path is recorded as malformed input. 0, or -ENOMEM. */
int gp_report_read_path(struct gp_report *r, const char *path, struct gp_err *e);

/* Read a stream of lines: "host: text" (pdsh, clush, srun --label) or plain JSON, one document per
 * line or indented over several. source names it in messages; host (or NULL) is its default host.
 * 0, or -ENOMEM. */
int gp_report_read_stream(struct gp_report *r, FILE *f, const char *source, const char *host, struct gp_err *e);

/* Expect these hosts (a host list, node[01-64]): those that sent nothing are listed as missing.
 * 0, or -EINVAL with e saying what is wrong (GP_E_USAGE). */
int gp_report_expect(struct gp_report *r, const char *hostlist, struct gp_err *e);

/* Fold what was read: host ranges of each finding, clean hosts, missing hosts, bench medians and the
 * hosts below `below` times the median; sets exit_code. 0, or -ENOMEM. */
int gp_report_fold(struct gp_report *r, double below, struct gp_err *e);

/* What a folded report counts, all groups and figures together. */
struct gp_report_totals {
	int groups[4];                 /* folded findings per severity (0 error, 1 warning, 2 unknown, 3 info) */
	int hosts[4];                  /* findings on hosts per severity: a group on n hosts counts n */
	int nlow;                      /* bench figures below below*median */
};

/* Count what gp_report_fold folded into t. */
void gp_report_totals(const struct gp_report *r, struct gp_report_totals *t);

/* The range string of the hosts in idx[0..n) (indices into r->host); malloc'd, NULL when out of memory. */
char *gp_report_range(const struct gp_report *r, const int *idx, int n);

/* The expectation most hosts agree on, from the facts of their doctor documents (r->baseline set
 * before reading): the GPU and NIC counts most hosts have; the devices (by PCI address) on more than
 * half of them; per field the value most of those devices have as the line of every device of the
 * kind, a device's own line where it differs, and each device's NUMA node. Nothing stated when no
 * host sent facts. Free out with gp_expect_free. 0, or -ENOMEM. */
int gp_report_baseline(const struct gp_report *r, struct gp_expect *out, struct gp_err *e);

/* How host h deviates from want, appended to out as "; "-separated phrases ("GPU2 0000:3b:00.0 link
 * gen5 x8, expected gen5 x16"): how many, 0 when it does not (or sent no facts), -ENOMEM. */
int gp_report_deviations(const struct gp_report *r, const struct gp_expect *want, int h, struct gp_buf *out);

#endif
