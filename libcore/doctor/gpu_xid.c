/* gpup2p doctor — gpu.xid: the Xid events the NVIDIA driver wrote to the kernel log since boot,
 * grouped per GPU. Opt-in (--kmsg): the kernel log may hold private data, and reading it may need
 * root (kernel.dmesg_restrict). Live it reads /dev/kmsg without blocking, from the oldest record
 * still in the buffer; under --root it reads ROOT/dev/kmsg, a regular file with kmsg records or
 * `dmesg` lines (snapshots do not capture it). Registered in gpu.c's table. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpup2p/buf.h"
#include "check.h"

#define KMSG "/dev/kmsg"
#define LINE_MAX_ 16384          /* a kmsg record is at most 8 KiB with its dictionary */
#define LOG_MAX (256u << 20)     /* stop after this much (a runaway log) */
#define XID_OFF_BUS 64       /* devices not on the PCI bus now tallied beyond the GPUs that are */
#define XID_CODES 24

/* What the codes mean and which ones need a GPU reset (drain, reset or reboot; RMA when they recur):
 * NVIDIA's Xid catalog, "Resolution Bucket (Immediate Action)" RESET_GPU
 * (https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html), and the drain/reset_gpu
 * rules of NVIDIA Health Validation's Xid checks
 * (https://docs.nvidia.com/health-validation/reference/checks/xid.md). The others are warnings:
 * 13/31/43/45 usually follow an application, 63 and 94 are contained (row remap recorded, or one
 * application stopped). A code not listed here is a warning too. */
static const struct xid_kind {
	int code, reset;
	const char *what;
} kinds[] = {
	{ 13, 0, "graphics engine exception, usually the application" },
	{ 31, 0, "GPU memory page fault, usually the application" },
	{ 43, 0, "GPU stopped processing an application's work" },
	{ 45, 0, "preemptive cleanup after an earlier error" },
	{ 46, 1, "GPU stopped processing" },
	{ 48, 1, "double-bit ECC error" },
	{ 63, 0, "ECC page retirement or row remapping recorded: applies at the next GPU reset" },
	{ 64, 1, "ECC page retirement or row remapping failed" },
	{ 74, 1, "NVLink error" },
	{ 79, 1, "GPU has fallen off the bus" },
	{ 92, 0, "high single-bit ECC error rate" },
	{ 94, 0, "contained ECC error: one application stopped, the GPU goes on" },
	{ 95, 1, "uncontained ECC error" },
	{ 119, 1, "GSP RPC timeout" },
	{ 120, 1, "GSP error" },
	{ 140, 1, "unrecovered ECC error" },
};

static const struct xid_kind *kind_of(int code)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (kinds[i].code == code)
			return &kinds[i];
	return NULL;
}

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
	int n, reset;
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
		if (!find(t, bdf))
			snprintf(t->g[t->n++].bdf, sizeof(t->g[0].bdf), "%s", bdf);
	}
	return 0;
}

static void tally_line(struct xid_tally *t, const char *line)
{
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
	}
	g->reset |= kind_of(code) && kind_of(code)->reset;
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

/* Read the kernel log through the root into t. /dev/kmsg gives one record per read(), from the
 * oldest still in the buffer (lseek to 0 asks for it), and EAGAIN at its end (O_NONBLOCK); EPIPE
 * says records were overwritten while we read. A regular file gives bytes up to end of file: lines
 * are split the same way for both. 0 or -errno. */
static int read_log(const struct gp_doctor_ctx *c, struct xid_tally *t)
{
	char *buf = malloc(LINE_MAX_ + 1);
	size_t len = 0, total = 0;
	int fd, rc = 0, skip = 0;

	if (!buf)
		return -ENOMEM;
	if ((fd = gp_root_open(c->root, KMSG, O_RDONLY | O_NONBLOCK)) < 0) {
		free(buf);
		return fd;
	}
	(void)lseek(fd, 0, SEEK_SET);
	while (total < LOG_MAX) {
		ssize_t n = read(fd, buf + len, LINE_MAX_ - len);
		char *line, *nl;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EPIPE) {
			t->lost++;
			continue;
		}
		if (n < 0) {
			rc = errno == EAGAIN ? 0 : -errno;
			break;
		}
		if (n == 0)
			break;
		total += (size_t)n;
		len += (size_t)n;
		buf[len] = '\0';
		for (line = buf; (nl = memchr(line, '\n', len - (size_t)(line - buf))); line = nl + 1) {
			*nl = '\0';
			if (!skip)
				tally_line(t, line);
			skip = 0;
		}
		len -= (size_t)(line - buf);
		memmove(buf, line, len);
		if (len == LINE_MAX_) { /* a line longer than any record: not an Xid line, skip to its end */
			len = 0;
			skip = 1;
		}
	}
	if (!rc && len && !skip) {
		buf[len] = '\0';
		tally_line(t, buf);
	}
	close(fd);
	free(buf);
	return rc;
}

/* "79 x2 (GPU has fallen off the bus), 13 x1 (...)" into b. */
static void codes_str(const struct xid_gpu *g, struct gp_buf *b, int words)
{
	for (int k = 0; k < g->n; k++) {
		const struct xid_kind *x = kind_of(g->c[k].code);

		gp_buf_addf(b, "%s%d x%ld", k ? ", " : "", g->c[k].code, g->c[k].count);
		if (words)
			gp_buf_addf(b, " (%s)", x ? x->what : "see NVIDIA's Xid catalog");
	}
	if (g->other)
		gp_buf_addf(b, "%s%ld more of other codes", g->n ? ", " : "", g->other);
}

static void report_gpu(struct gp_doctor_ctx *c, const struct xid_gpu *g, const char *bdf, const char *name)
{
	struct gp_buf words = GP_BUF_INIT, codes = GP_BUF_INIT;
	struct gp_finding *f;

	codes_str(g, &words, 1);
	codes_str(g, &codes, 0);
	f = gp_doctor_add(c, g->reset ? GP_SEV_ERROR : GP_SEV_WARNING, bdf, "%s: Xid %s since boot%s", name,
			  gp_buf_str(&words), g->reset ? ": the GPU needs a reset" : "");
	if (g->reset)
		gp_finding_fix(f, "drain the GPU, then nvidia-smi -r -i %s (or reboot); when the same Xid comes back, "
			       "reseat or replace the GPU (RMA)", bdf);
	else
		gp_finding_fix(f, "journalctl -k | grep -i xid shows when and which process (pid=...); application "
			       "Xids (13, 31, 43) follow a job: check it before the hardware");
	gp_finding_bdf(f, bdf);
	gp_finding_ev(f, "xid", "%s", gp_buf_str(&codes));
	gp_buf_free(&words);
	gp_buf_free(&codes);
}

void gp_doctor_check_xid(struct gp_doctor_ctx *c)
{
	struct xid_tally *t;
	char where[GP_PATH_MAX];
	unsigned char *seen;
	int rc, first;

	if (!c->kmsg) {
		gp_doctor_add(c, GP_SEV_SKIPPED, "system", "not requested: reads the kernel log (%s), which may hold "
			      "private data and may need root: run doctor --kmsg", KMSG);
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
	if ((rc = read_log(c, t)) < 0) {
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
