/* gpup2p — report: what the reader (report_read.c) and the folding (report.c) share. */
#ifndef GPUP2P_REPORT_INTERNAL_H
#define GPUP2P_REPORT_INTERNAL_H

#include "gpup2p/jsonr.h"
#include "gpup2p/report.h"

/* The longest string field of a bench row (mode, path, src, dst, memory, p2p, op, engine) taken. */
#define REPORT_BENCH_FIELD_MAX 256

/* A printable excerpt of untrusted text into out[len]: its first 40 bytes, each byte outside printable
 * ASCII as '?', "..." when cut. */
void report_excerpt(const char *s, char *out, size_t len);

/* The index of host `name`, created when new; -ENOMEM. */
int report_host(struct gp_report *r, const char *name);

/* Record malformed input (host may be NULL); counts it on the host. 0 or -ENOMEM. */
int report_bad(struct gp_report *r, const char *source, int line, const char *host, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* Take one parsed document from host (NULL: the document's own "host" member). 0 or -ENOMEM. */
int report_doc(struct gp_report *r, const struct gp_jv *doc, const char *host, const char *source, int line);

/* Keep the "facts" member of host h's doctor document (report/baseline.c); null or absent: nothing.
 * 0, or -ENOMEM; malformed facts are recorded as malformed input. */
int report_facts(struct gp_report *r, int h, const struct gp_jv *facts, const char *source, int line);

#endif
