/* gpup2p doctor — nvlink.sxid: the NVSwitch driver's SXid events in the kernel log since boot, per
 * switch (opt-in: --kmsg, as gpu.xid). The line says whether the error was fatal: NVIDIA's Fabric
 * Manager guide calls non-fatal SXids informational (jobs go on, perhaps slower) and fatal ones fatal to
 * the jobs whose traffic crosses the port (their GPUs log Xid 74 and 45), cleared only by resetting the
 * GPUs of the partition, or every GPU and switch (a reboot) when the port joins two switches.
 * Fatal: error; non-fatal: warning (a link erring); a line that does not say (fourth-generation
 * switches print "Severity N"): warning, leaving the verdict to the fabric manager's log. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpup2p/buf.h"
#include "xid.h"

#define SW_MAX 32      /* switches tallied; more are counted in dropped */
#define SW_CODES 16

struct sw_tally {
	struct {
		char name[32], bdf[GP_BDF_LEN];
		long fatal, nonfatal, unstated;
		unsigned long long links;          /* bit l: link l named (links 0-63) */
		int codes[SW_CODES], ncodes;
	} s[SW_MAX];
	int n;
	long lines, events, malformed, lost, dropped;
};

static void tally(void *arg, const char *line)
{
	struct sw_tally *t = arg;
	struct gp_sxid x;
	int k, rc = gp_doctor_sxid_parse(line, &x);

	t->lines++;
	t->malformed += rc < 0;
	if (rc <= 0)
		return;
	t->events++;
	for (k = 0; k < t->n && strcmp(t->s[k].bdf, x.bdf); k++)
		;
	if (k == t->n) {
		if (t->n == SW_MAX) {
			t->dropped++;
			return;
		}
		snprintf(t->s[k].name, sizeof(t->s[k].name), "%s", x.sw);
		snprintf(t->s[k].bdf, sizeof(t->s[k].bdf), "%s", x.bdf);
		t->n++;
	}
	t->s[k].fatal += x.fatal == 1;
	t->s[k].nonfatal += x.fatal == 0;
	t->s[k].unstated += x.fatal < 0;
	if (x.link >= 0 && x.link < 64)
		t->s[k].links |= 1ULL << x.link;
	for (int i = 0; i < t->s[k].ncodes; i++)
		if (t->s[k].codes[i] == x.code)
			return;
	if (t->s[k].ncodes < SW_CODES)
		t->s[k].codes[t->s[k].ncodes++] = x.code;
}

/* 1 when NVML (live or recorded) says some GPU has NVLinks to an NVSwitch, or a fabric state (only
 * NVSwitch systems report one). */
static int has_switch(const struct gp_doctor_ctx *c)
{
	for (int i = 0; c->facts && i < c->facts->n; i++)
		if (c->facts->gpus[i].switch_links > 0 || c->facts->gpus[i].st.fabric > 0)
			return 1;
	return 0;
}

static void report(struct gp_doctor_ctx *c, int k, const struct sw_tally *t)
{
	struct gp_buf links = GP_BUF_INIT, codes = GP_BUF_INIT, what = GP_BUF_INIT;
	enum gp_sev sev = t->s[k].fatal ? GP_SEV_ERROR : GP_SEV_WARNING;
	struct gp_finding *f;

	for (int l = 0; l < 64; l++)
		if (t->s[k].links & (1ULL << l))
			gp_buf_addf(&links, "%s%d", links.len ? ", " : "", l);
	for (int i = 0; i < t->s[k].ncodes; i++)
		gp_buf_addf(&codes, "%s%d", i ? ", " : "", t->s[k].codes[i]);
	if (t->s[k].fatal)
		gp_buf_addf(&what, "%ld fatal", t->s[k].fatal);
	if (t->s[k].nonfatal)
		gp_buf_addf(&what, "%s%ld non-fatal", what.len ? ", " : "", t->s[k].nonfatal);
	if (t->s[k].unstated)
		gp_buf_addf(&what, "%s%ld of unstated severity", what.len ? ", " : "", t->s[k].unstated);
	f = gp_doctor_add(c, sev, t->s[k].bdf, "%s (%s): SXid events since boot: %s%s%s%s", t->s[k].name,
			  t->s[k].bdf, gp_buf_str(&what), links.len ? "; link " : "", gp_buf_str(&links),
			  t->s[k].fatal ? ": jobs whose NVLink traffic crosses it were aborted" : "");
	if (t->s[k].fatal)
		gp_finding_fix(f, "drain the node; the fabric manager's log (/var/log/fabricmanager.log) names the GPU "
			       "on each port: reset those GPUs (nvidia-smi -r), or reboot when the port links two "
			       "switches; when it recurs, have the baseboard serviced");
	else
		gp_finding_fix(f, "jobs go on, perhaps slower; the fabric manager's log (/var/log/fabricmanager.log) "
			       "says more; errors that keep coming on the same link need the baseboard serviced");
	gp_finding_bdf(f, t->s[k].bdf);
	gp_finding_ev(f, "sxid", "%s", gp_buf_str(&codes));
	if (links.len)
		gp_finding_ev(f, "links", "%s", gp_buf_str(&links));
	gp_buf_free(&links);
	gp_buf_free(&codes);
	gp_buf_free(&what);
}

void gp_doctor_check_sxid(struct gp_doctor_ctx *c)
{
	struct sw_tally *t;
	struct gp_finding *f;
	char where[GP_PATH_MAX];
	int rc, first = c->out.n;

	if (!c->kmsg) {
		gp_doctor_add(c, GP_SEV_SKIPPED, "system", "not requested: reads the kernel log (/dev/kmsg), which may "
			      "hold private data and may need root: run gpup2p doctor --kmsg");
		return;
	}
	if (!(t = calloc(1, sizeof(*t)))) {
		c->out.nomem = 1;
		return;
	}
	if (gp_root_path(c->root, "/dev/kmsg", where, sizeof(where)))
		snprintf(where, sizeof(where), "/dev/kmsg");
	if ((rc = gp_doctor_kmsg_read(c, tally, t, &t->lost)) < 0) {
		if (c->root->live)
			f = gp_doctor_add(c, GP_SEV_UNKNOWN, "system", "cannot read /dev/kmsg: %s%s", gp_root_strerror(-rc),
					  rc == -EPERM || rc == -EACCES ? " (kernel.dmesg_restrict=1: run as root)" : "");
		else
			f = gp_doctor_add(c, GP_SEV_SKIPPED, "system", "no kernel log under the root (%s: %s)", where,
					  gp_root_strerror(-rc));
		gp_finding_ev(f, where, "%s", gp_root_strerror(-rc));
		free(t);
		return;
	}
	for (int k = 0; k < t->n; k++)
		report(c, k, t);
	if (!t->n && has_switch(c))
		gp_doctor_add(c, GP_SEV_OK, "system", "no SXid in the kernel log");
	else if (!t->n)
		gp_doctor_add(c, GP_SEV_SKIPPED, "system", "no SXid in the kernel log, and no GPU has NVLinks to an "
			      "NVSwitch (NVML)");
	if (t->dropped) {
		f = gp_doctor_add(c, GP_SEV_UNKNOWN, "system", "the kernel log names more than %d NVSwitches: %ld SXid "
				  "events of the others were not counted", SW_MAX, t->dropped);
		gp_finding_fix(f, "journalctl -k | grep SXid lists them all");
	}
	if (c->out.n > first) {
		f = &c->out.v[first];
		gp_finding_ev(f, "log", "%s: %ld lines, %ld SXid events", where, t->lines, t->events);
		if (t->malformed)
			gp_finding_ev(f, "unparsed SXid lines", "%ld", t->malformed);
		if (t->lost)
			gp_finding_ev(f, "records overwritten while reading", "%ld", t->lost);
	}
	free(t);
}
