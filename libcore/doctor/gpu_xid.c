/* gpup2p doctor — gpu.xid: the Xid events the NVIDIA driver wrote to the kernel log since boot,
 * grouped per GPU. Opt-in (--kmsg): the kernel log may hold private data, and reading it may need
 * root (kernel.dmesg_restrict). Live it reads /dev/kmsg without blocking, from the oldest record
 * still in the buffer; under --root it reads ROOT/dev/kmsg, a regular file with kmsg records or
 * `dmesg` lines (snapshots do not capture it). Each code is judged by NVIDIA's Xid catalogue
 * (xid_catalog.c): the worst code sets the finding's severity and its fix. Registered in gpu.c's table. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpup2p/buf.h"
#include "xid.h"

#define KMSG "/dev/kmsg"
#define XID_OFF_BUS 64       /* devices not on the PCI bus now tallied beyond the GPUs that are */
#define XID_CODES 24

int gp_doctor_xid_parse(const char *line, char bdf[GP_BDF_LEN], int *xid)
{
	static const char tag[] = "NVRM: Xid (";
	const char *p = strstr(line, tag), *end;
	char addr[GP_BDF_LEN];
	struct gp_pci_addr a;
	long code = 0;
	int digits = 0, colons = 0;
	size_t n;

	if (!p)
		return 0;
	p += sizeof(tag) - 1;
	if (!strncmp(p, "PCI:", 4)) /* "Xid (PCI:0000:3b:00): 79, ..."; older drivers: "Xid (0000:3b:00): ..." */
		p += 4;
	/* the device as the driver prints it ("%04x:%02x:%02x"), now and then with a function: the
	 * domain is there (two colons) with at least 4 digits */
	if (!(end = strchr(p, ')')) || (n = (size_t)(end - p)) + 2 >= sizeof(addr))
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		colons += p[i] == ':';
	if (colons != 2 || strcspn(p, ":") < 4)
		return -EINVAL;
	snprintf(addr, sizeof(addr), "%.*s%s", (int)n, p, memchr(p, '.', n) ? "" : ".0");
	if (gp_pci_addr_parse(addr, &a))
		return -EINVAL;
	if (strncmp(end, "): ", 3))
		return -EINVAL;
	for (p = end + 3; isdigit((unsigned char)*p) && digits < 5; p++, digits++)
		code = code * 10 + (*p - '0');
	if (!digits || digits > 4 || code == 0 || (*p && *p != ',' && !isspace((unsigned char)*p)))
		return -EINVAL;
	a.func = 0; /* Xid lines name the device */
	gp_pci_addr_format(&a, bdf);
	*xid = (int)code;
	return 1;
}

struct xid_gpu {
	char bdf[GP_BDF_LEN];      /* function 0: Xid lines name the device, not the function */
	int n;
	int action;                /* the last Xid 154's recovery action (gp_xid154_action), -1 none */
	struct {
		int code;
		long count;
	} c[XID_CODES];
	long other;                /* events of codes beyond XID_CODES */
};

/* One entry per GPU on the PCI bus (seeded first: never dropped), then up to XID_OFF_BUS devices the
 * log names that are not on it; events of devices past those are counted in dropped/dropped_devs. */
struct xid_tally {
	struct xid_gpu *g;
	int n, cap;
	long lines, events, malformed, lost, dropped;
	char first_dropped[GP_BDF_LEN];
};

/* The entry of device bdf (function 0), or NULL. */
static struct xid_gpu *find(struct xid_tally *t, const char *bdf)
{
	for (int k = 0; k < t->n; k++)
		if (!strcmp(t->g[k].bdf, bdf))
			return &t->g[k];
	return NULL;
}

/* An entry for every GPU on the bus (its device: function 0), before the log is read. 0 or -ENOMEM. */
static int seed(struct xid_tally *t, struct gp_doctor_ctx *c)
{
	t->cap = c->topo->ngpu + XID_OFF_BUS;
	if (!(t->g = calloc((size_t)t->cap, sizeof(*t->g))))
		return -ENOMEM;
	for (int i = 0; i < c->topo->ngpu; i++) {
		struct gp_pci_addr a;
		char bdf[GP_BDF_LEN];

		if (gp_pci_addr_parse(gp_doctor_dev(c, i)->bdf, &a))
			continue;
		a.func = 0;
		gp_pci_addr_format(&a, bdf);
		if (!find(t, bdf)) {
			t->g[t->n].action = -1;
			snprintf(t->g[t->n++].bdf, sizeof(t->g[0].bdf), "%s", bdf);
		}
	}
	return 0;
}

static void tally_line(void *arg, const char *line)
{
	struct xid_tally *t = arg;
	char bdf[GP_BDF_LEN];
	struct xid_gpu *g = NULL;
	int code, k, rc = gp_doctor_xid_parse(line, bdf, &code);

	t->lines++;
	if (rc < 0)
		t->malformed++;
	if (rc <= 0)
		return;
	t->events++;
	if (!(g = find(t, bdf))) {
		if (t->n == t->cap) { /* a device off the bus past the table: counted, and reported unknown */
			if (!t->dropped++)
				snprintf(t->first_dropped, sizeof(t->first_dropped), "%s", bdf);
			return;
		}
		g = &t->g[t->n++];
		snprintf(g->bdf, sizeof(g->bdf), "%s", bdf);
		g->action = -1;
	}
	if (code == 154 && gp_xid154_action(line) >= 0)
		g->action = gp_xid154_action(line);
	for (k = 0; k < g->n && g->c[k].code != code; k++)
		;
	if (k == g->n && g->n == XID_CODES) {
		g->other++;
		return;
	}
	if (k == g->n)
		g->c[g->n++].code = code;
	g->c[k].count++;
}

/* "79 x2 (GPU has fallen off the bus), 13 x1 (...)" into b. */
static void codes_str(const struct xid_gpu *g, struct gp_buf *b, int words)
{
	for (int k = 0; k < g->n; k++) {
		const struct gp_xid_entry *x = gp_xid_lookup(g->c[k].code);

		gp_buf_addf(b, "%s%d x%ld", k ? ", " : "", g->c[k].code, g->c[k].count);
		if (words)
			gp_buf_addf(b, " (%s)", !x ? "not in the Xid catalogue gpup2p knows" : x->what ? x->what :
					       "unused on Ampere and later");
	}
	if (g->other)
		gp_buf_addf(b, "%s%ld more of other codes", g->n ? ", " : "", g->other);
}

/* Xid 154's recovery actions, by value. */
static const char *const actions[] = { "none", "GPU reset required", "node reboot required", "drain P2P",
				       "drain and reset" };

/* The severity of code k on g: the catalogue's; Xid 154 by the action it names (anything but "none"
 * is an error: "drain P2P" says peer traffic through this GPU must stop); a code the catalogue does not
 * list is a warning. */
static enum gp_sev code_sev(const struct xid_gpu *g, int k)
{
	const struct gp_xid_entry *x = gp_xid_lookup(g->c[k].code);

	if (g->c[k].code == 154)
		return g->action > 0 ? GP_SEV_ERROR : GP_SEV_INFO;
	return x ? x->sev : GP_SEV_WARNING;
}

/* The fix of code k on g into buf. */
static void code_fix(const struct xid_gpu *g, int k, const char *bdf, char *buf, size_t n)
{
	const struct gp_xid_entry *x = gp_xid_lookup(g->c[k].code);

	if (g->c[k].code == 154 && g->action == 2)
		snprintf(buf, n, "the driver asks for a node reboot");
	else if (g->c[k].code == 154 && g->action == 3)
		snprintf(buf, n, "the driver asks to drain P2P: move P2P jobs off this GPU, then nvidia-smi -r -i %s", bdf);
	else if (g->c[k].code == 154 && g->action > 0)
		snprintf(buf, n, "the driver asks for a GPU reset: drain it, then nvidia-smi -r -i %s", bdf);
	else if (x)
		gp_xid_fix(x, bdf, buf, n);
	else
		snprintf(buf, n, "look the code up in NVIDIA's Xid catalogue for this driver release; collect "
			 "nvidia-bug-report.sh when it repeats");
}

static void report_gpu(struct gp_doctor_ctx *c, const struct xid_gpu *g, const char *bdf, const char *name)
{
	struct gp_buf words = GP_BUF_INIT, codes = GP_BUF_INIT, fixes = GP_BUF_INIT;
	enum gp_sev sev = GP_SEV_INFO;
	struct gp_finding *f;
	int nfix = 0;

	for (int k = 0; k < g->n; k++)
		if (code_sev(g, k) < sev)
			sev = code_sev(g, k);
	if (g->other && sev > GP_SEV_WARNING)
		sev = GP_SEV_WARNING;
	/* the fixes of the codes that set the severity, worst first, three at most */
	for (int k = 0; k < g->n && nfix < 3; k++) {
		char fix[512];

		if (code_sev(g, k) != sev)
			continue;
		code_fix(g, k, bdf, fix, sizeof(fix));
		gp_buf_addf(&fixes, "%sXid %d: %s", nfix++ ? "; " : "", g->c[k].code, fix);
	}
	codes_str(g, &words, 1);
	codes_str(g, &codes, 0);
	f = gp_doctor_add(c, sev, bdf, "%s: Xid %s since boot%s", name, gp_buf_str(&words),
			  sev == GP_SEV_ERROR ? ": the GPU needs a reset or a power cycle, and its P2P and GPUDirect "
			  "peers fail until then" : "");
	if (nfix)
		gp_finding_fix(f, "%s", gp_buf_str(&fixes));
	else
		gp_finding_fix(f, "journalctl -k | grep -i xid shows when and which process (pid=...)");
	gp_finding_bdf(f, bdf);
	gp_finding_ev(f, "xid", "%s", gp_buf_str(&codes));
	if (g->action >= 0)
		gp_finding_ev(f, "recovery action (Xid 154)", "%s", actions[g->action]);
	for (int k = 0; k < g->n; k++) {
		const struct gp_xid_entry *x = gp_xid_lookup(g->c[k].code);
		char key[32];

		snprintf(key, sizeof(key), "Xid %d", g->c[k].code);
		gp_finding_ev(f, key, "%s, NVIDIA's action %s", x ? x->name : "not in the catalogue",
			      x ? gp_xid_bucket_name(x->bucket) : "unknown");
	}
	gp_buf_free(&words);
	gp_buf_free(&codes);
	gp_buf_free(&fixes);
}

void gp_doctor_check_xid(struct gp_doctor_ctx *c)
{
	struct xid_tally *t;
	char where[GP_PATH_MAX];
	unsigned char *seen;
	int rc, first;

	if (!c->kmsg) {
		gp_doctor_add(c, GP_SEV_SKIPPED, "system", "not requested: reads the kernel log (%s), which may hold "
			      "private data and may need root: run gpup2p doctor --kmsg", KMSG);
		return;
	}
	if (gp_doctor_no_gpu(c))
		return;
	if (!(t = calloc(1, sizeof(*t))) || seed(t, c)) {
		if (t)
			free(t->g);
		free(t);
		c->out.nomem = 1;
		return;
	}
	if (gp_root_path(c->root, KMSG, where, sizeof(where)))
		snprintf(where, sizeof(where), "%s", KMSG);
	if ((rc = gp_doctor_kmsg_read(c, tally_line, t, &t->lost)) < 0) {
		struct gp_finding *f;

		if (c->root->live)
			f = gp_doctor_add(c, GP_SEV_UNKNOWN, "system", "cannot read %s: %s%s", KMSG, gp_root_strerror(-rc),
					  rc == -EPERM || rc == -EACCES ? " (kernel.dmesg_restrict=1: run as root)" : "");
		else
			f = gp_doctor_add(c, GP_SEV_SKIPPED, "system", "no kernel log under the root (%s: %s): gpup2p "
					  "snapshot does not capture it (it may hold private data); to check a saved one, "
					  "put dmesg's output there", where, gp_root_strerror(-rc));
		gp_finding_ev(f, where, "%s", gp_root_strerror(-rc));
		free(t->g);
		free(t);
		return;
	}
	if (!(seen = calloc((size_t)t->n + 1, 1))) {
		c->out.nomem = 1;
		free(t->g);
		free(t);
		return;
	}
	first = c->out.n;
	for (int i = 0; i < c->topo->ngpu; i++) {
		const struct gp_pci_dev *d = gp_doctor_dev(c, i);
		const struct xid_gpu *g = NULL;
		size_t l = strcspn(d->bdf, ".");
		struct gp_finding *f;

		for (int k = 0; k < t->n && !g; k++)
			if (!strncmp(t->g[k].bdf, d->bdf, l) && t->g[k].bdf[l] == '.') {
				g = &t->g[k];
				seen[k] = 1;
			}
		if (g && (g->n || g->other)) {
			report_gpu(c, g, d->bdf, c->topo->devs[i].name);
			continue;
		}
		f = gp_doctor_add(c, GP_SEV_OK, d->bdf, "%s: no Xid in the kernel log", c->topo->devs[i].name);
		gp_finding_bdf(f, d->bdf);
	}
	/* a device the log names that is not on the PCI bus now (fell off it, or removed) */
	for (int k = 0; k < t->n; k++)
		if (!seen[k] && (t->g[k].n || t->g[k].other))
			report_gpu(c, &t->g[k], t->g[k].bdf, "a GPU not on the PCI bus now");
	free(seen);
	/* the GPUs on the bus are all tallied: what was left out names only devices off it */
	if (t->dropped) {
		struct gp_finding *f = gp_doctor_add(c, GP_SEV_UNKNOWN, "system", "the kernel log names more than %d "
						     "devices not on the PCI bus: %ld Xid events of devices past them "
						     "(the first %s) were not counted", XID_OFF_BUS, t->dropped,
						     t->first_dropped);

		gp_finding_fix(f, "journalctl -k | grep 'NVRM: Xid' lists them all");
	}
	/* the totals, on the first finding of this check */
	if (c->out.n > first) {
		struct gp_finding *f = &c->out.v[first];

		gp_finding_ev(f, "log", "%s: %ld lines, %ld Xid events", where, t->lines, t->events);
		if (t->malformed)
			gp_finding_ev(f, "unparsed Xid lines", "%ld", t->malformed);
		if (t->lost)
			gp_finding_ev(f, "records overwritten while reading", "%ld", t->lost);
		if (t->dropped)
			gp_finding_ev(f, "events not counted (devices off the bus past 64)", "%ld", t->dropped);
	}
	free(t->g);
	free(t);
}
