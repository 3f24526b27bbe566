/* doctor — what the formats for machines decide: which findings a size-bound document keeps
 * (--json), and the Nagios status line with its first alarm (--nagios). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* Bytes of each finding (r->finding), into a new array; NULL when out of memory. */
static size_t *finding_sizes(const struct gp_findings *f, const struct gp_doctor_render *r)
{
	size_t *size = calloc((size_t)f->n, sizeof(*size));

	for (int i = 0; size && i < f->n; i++)
		if (!(size[i] = r->finding(r->arg, i))) {
			free(size);
			return NULL;
		}
	return size;
}

char *gp_doctor_fit_doc(const struct gp_findings *f, size_t max, const struct gp_doctor_render *r, size_t *len,
			int *left)
{
	size_t base, budget, *size = NULL, sum = 0;
	unsigned char *keep;
	char *doc;

	*left = 0;
	/* the findings alone as long as the bound: the whole document cannot fit and is never made (tens
	 * of thousands of findings on a large host: megabytes held for nothing) */
	if (f->n && (size = finding_sizes(f, r)))
		for (int i = 0; i < f->n && sum < max; i++)
			sum += size[i];
	if (!size || sum < max) {
		doc = r->doc(r->arg, NULL, 0, len);
		if (!doc || *len < max || !f->n) {
			free(size);
			return doc;
		}
		free(doc);
	}
	/* too long: the most urgent findings that fit. The budget starts from each finding's size and the
	 * document without any; should the document still be too long, the budget shrinks by the excess. */
	doc = NULL;
	if (!size)
		size = finding_sizes(f, r);
	keep = calloc((size_t)f->n, 1);
	if (!size || !keep)
		goto out;
	doc = r->doc(r->arg, keep, *left = f->n, &base);
	budget = doc && base < max ? max - base : 0;
	while (doc && budget) {
		*left = gp_doctor_fit(f, size, budget, keep);
		free(doc);
		if (!(doc = r->doc(r->arg, keep, *left, len)) || *len < max)
			goto out;
		budget = *len - max + 1 < budget ? budget - (*len - max + 1) : 0;
	}
	if (doc) { /* not even the first finding fits: none */
		free(doc);
		memset(keep, 0, (size_t)f->n);
		doc = r->doc(r->arg, keep, *left = f->n, len);
	}
out:
	free(size);
	free(keep);
	return doc;
}

int gp_doctor_first_alarm(const struct gp_findings *f)
{
	static const enum gp_sev order[] = { GP_SEV_ERROR, GP_SEV_WARNING, GP_SEV_UNKNOWN };

	for (size_t o = 0; o < sizeof(order) / sizeof(order[0]); o++)
		for (int i = 0; i < f->n; i++)
			if (f->v[i].sev == order[o])
				return i;
	return -1;
}

int gp_doctor_nagios_code(int rc)
{
	return rc >= 0 && rc <= 2 ? rc : 3;
}

/* Text on the status line: '|' (it starts the perfdata) as '/', ';' as ',' (Nagios rewrites "; "
 * in check output), control characters as spaces; at most max bytes, never cut inside a UTF-8
 * sequence. Host names and subjects go through it too: a '|' there would cut the line. */
static void nagios_text(FILE *f, const char *s, size_t max)
{
	size_t n = strlen(s);

	if (n > max) {
		n = max;
		while (n && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		fputc(c == '|' ? '/' : c == ';' ? ',' : c < 0x20 || c == 0x7f ? ' ' : c, f);
	}
	if (n < strlen(s))
		fputs("...", f);
}

int gp_doctor_nagios(FILE *f, const struct gp_doctor_nagios_run *r)
{
	static const char *const state[] = { "OK", "WARNING", "CRITICAL", "UNKNOWN" };
	int code = gp_doctor_nagios_code(r->rc);
	const int *s = r->sum;

	fprintf(f, "GPUP2P %s - ", state[code]);
	if (r->host) {
		nagios_text(f, r->host, 64);
		fputs(": ", f);
	}
	if (code == 3 || !r->out || !s) { /* no run to summarise (it failed): say why */
		if (r->why && *r->why)
			nagios_text(f, r->why, 300);
		else
			fprintf(f, "doctor exited %d", r->rc);
	} else {
		int i = code ? gp_doctor_first_alarm(r->out) : -1;

		fprintf(f, "%d error%s, %d warning%s, %d unknown, %d info, %d ok, %d skipped", s[GP_SEV_ERROR],
			s[GP_SEV_ERROR] == 1 ? "" : "s", s[GP_SEV_WARNING], s[GP_SEV_WARNING] == 1 ? "" : "s",
			s[GP_SEV_UNKNOWN], s[GP_SEV_INFO], s[GP_SEV_OK], s[GP_SEV_SKIPPED]);
		if (i >= 0) { /* the alarm that set the state: " - ID SUBJECT: message" */
			fprintf(f, " - %s ", r->out->v[i].check->id);
			nagios_text(f, r->out->v[i].subject, 100);
			fputs(": ", f);
			nagios_text(f, r->out->v[i].message, 200);
		}
	}
	fputs(" |", f);
	if (r->out && s) {
		/* label=value;warn;crit;min as check_disk and check_load write it: a warning alarms above 0
		 * warnings, a critical above 0 errors, unknown findings warn with --strict */
		static const enum gp_sev order[] = { GP_SEV_ERROR, GP_SEV_WARNING, GP_SEV_UNKNOWN, GP_SEV_INFO, GP_SEV_OK,
						     GP_SEV_SKIPPED };
		static const char *const label[] = { "errors", "warnings", "unknown", "info", "ok", "skipped" };
		static const char *const warn[] = { "", "0", "", "", "", "" }, *const crit[] = { "0", "", "", "", "", "" };

		for (int k = 0; k < 6; k++)
			fprintf(f, " %s=%d;%s;%s;0", label[k], s[order[k]], k == 2 && r->strict ? "0" : warn[k],
				crit[k]);
	}
	fprintf(f, " duration=%.3fs;;;0\n", r->seconds);
	return code;
}
