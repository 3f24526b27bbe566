/* Unit tests: the kernel log's NVIDIA events by NVIDIA's catalogues (issue 26, class 5): every Xid
 * code of the catalogue once, with its immediate action as transcribed apart in
 * tests/fixtures/doctor/xid-catalog.txt; a code it does not list gets a generic warning; gpu.xid's
 * severity and fix per code (79: power, riser and link before reseating; 154: the action it names);
 * NVSwitch SXid lines parsed and judged fatal or not (nvlink.sxid). Planted faults and healthy twins:
 * gpu-xid-cat / gpu-xid-info, gpu-sxid / gpu-sxid-clean. */
#include <errno.h>
#include <libgen.h>

#include "doctor_fx.h"
#include "doctor/xid.h"

/* Each line of the transcribed list is a code of the table, once, with the same bucket; the table has
 * no code the list lacks, in increasing order. */
static void catalogue(void)
{
	const char *ids = getenv("GPUP2P_PCI_IDS");
	char path[1024], dir[1024], line[256], bucket[64];
	int seen[1000] = { 0 }, listed = 0, wrong = 0, order = 1;
	FILE *f;

	snprintf(dir, sizeof(dir), "%s", ids ? ids : "tests/fixtures/pci.ids");
	snprintf(path, sizeof(path), "%s/doctor/xid-catalog.txt", dirname(dir));
	if (!(f = fopen(path, "r"))) {
		CHECK(0, "%s opens: %s", path, strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		const struct gp_xid_entry *x;
		int code;

		if (line[0] == '#' || sscanf(line, "%d %63s", &code, bucket) != 2)
			continue;
		listed++;
		if (code <= 0 || code >= 1000 || seen[code]++) {
			CHECK(0, "Xid %d listed once", code);
			continue;
		}
		x = gp_xid_lookup(code);
		if (!x || strcmp(gp_xid_bucket_name(x->bucket), bucket)) {
			wrong++;
			CHECK(0, "Xid %d: %s in the table (got %s)", code, bucket, x ? gp_xid_bucket_name(x->bucket) : "none");
		}
	}
	fclose(f);
	for (int i = 0; i < gp_xid_ncatalog; i++) {
		int c = gp_xid_catalog[i].code;

		order &= i == 0 || c > gp_xid_catalog[i - 1].code;
		CHECK(c > 0 && c < 1000 && seen[c] == 1, "Xid %d of the table is in the transcribed list", c);
	}
	CHECK(listed == 172 && gp_xid_ncatalog == listed && !wrong, "172 codes listed, %d in the table, %d wrong",
	      gp_xid_ncatalog, wrong);
	CHECK(order, "the table is in increasing order (lookup is a binary search)");
	CHECK(!gp_xid_lookup(0) && !gp_xid_lookup(173) && !gp_xid_lookup(999), "codes beyond the catalogue: none");
	/* the bucket's consequences: a reset or power cycle is an error, an application's fault a warning */
	for (int i = 0; i < gp_xid_ncatalog; i++) {
		const struct gp_xid_entry *x = &gp_xid_catalog[i];
		int reset = x->bucket == GP_XB_RESET_GPU || x->bucket == GP_XB_RESTART_BM ||
			    x->bucket == GP_XB_WORKFLOW_XID_48 || x->bucket == GP_XB_WORKFLOW_NVLINK_ERR;
		char fix[512];

		if (reset)
			CHECK(x->sev == GP_SEV_ERROR, "Xid %d (%s) is an error", x->code, gp_xid_bucket_name(x->bucket));
		if (x->bucket == GP_XB_RESTART_APP)
			CHECK(x->sev == GP_SEV_WARNING, "Xid %d (RESTART_APP) is a warning", x->code);
		gp_xid_fix(x, "0000:3b:00.0", fix, sizeof(fix));
		CHECK(fix[0] && !strstr(fix, "%s") && !strstr(fix, " BDF"), "Xid %d has a fix naming the GPU: %s", x->code,
		      fix);
	}
}

static void xid154(void)
{
	CHECK(gp_xid154_action("NVRM: Xid (PCI:0000:33:00): 154, GPU recovery action changed from 0x0 (None) to "
			       "0x2 (Node Reboot Required)") == 2, "Xid 154: node reboot");
	CHECK(gp_xid154_action("NVRM: Xid (PCI:0000:33:00): 154, ... to 0x3 (Drain P2P)") == 3, "Xid 154: drain P2P");
	CHECK(gp_xid154_action("NVRM: Xid (PCI:0000:33:00): 154, changed") == -1, "Xid 154 without an action");
	CHECK(gp_xid154_action("... to 0x9 (?)") == -1, "Xid 154 with an action beyond 4");
}

static void sxid_parse(void)
{
	static const struct {
		const char *line;
		int rc, code, link, fatal;
		const char *sw, *bdf;
	} t[] = {
		{ "3,3,99,-;nvidia-nvswitch0: SXid (PCI:0000:c2:00.0): 20034, Fatal, Link 28 LTSSM Fault Up", 1, 20034, 28,
		  1, "nvidia-nvswitch0", "0000:c2:00.0" },
		{ "[ 9.1] nvidia-nvswitch3: SXid (PCI:0000:c5:00.0): 19084, Non-fatal, Link 10 AN1 Heartbeat Timeout "
		  "Error (First)", 1, 19084, 10, 0, "nvidia-nvswitch3", "0000:c5:00.0" },
		{ "nvidia-nvswitch2: SXid (PCI:0000:c4:00.0): 10002, Severity 5 Engine instance 00", 1, 10002, -1, -1,
		  "nvidia-nvswitch2", "0000:c4:00.0" },
		{ "nvidia-nvswitch11: SXid (0000:8a:00): 12028, Non-fatal, Link 32 egress non-posted PRIV error", 1, 12028,
		  32, 0, "nvidia-nvswitch11", "0000:8a:00.0" },
		{ "NVRM: Xid (PCI:0000:13:00): 74, NVLink", 0, 0, 0, 0, NULL, NULL },
		{ "audit: name=\"SXid (PCI:0000:c2:00.0): 20034\"", 0, 0, 0, 0, NULL, NULL },
		{ "nvidia-nvswitch1: SXid (PCI:zzzz:c3:00.0): 20034, Fatal", -EINVAL, 0, 0, 0, NULL, NULL },
		{ "nvidia-nvswitch1: SXid (PCI:0000:c3:00.0): 1234567, Fatal", -EINVAL, 0, 0, 0, NULL, NULL },
		{ "nvidia-nvswitch1: SXid (PCI:0000:c3:00.0) 20034, Fatal", -EINVAL, 0, 0, 0, NULL, NULL },
		{ "nvidia-nvswitch1: SXid (PCI:0000:c3:00.0): x, Fatal", -EINVAL, 0, 0, 0, NULL, NULL },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct gp_sxid s;
		int rc = gp_doctor_sxid_parse(t[i].line, &s);

		CHECK(rc == t[i].rc && (rc != 1 || (s.code == t[i].code && s.link == t[i].link && s.fatal == t[i].fatal &&
						    !strcmp(s.sw, t[i].sw) && !strcmp(s.bdf, t[i].bdf))),
		      "SXid line '%s': rc %d (got %d)", t[i].line, t[i].rc, rc);
	}
}

struct want {
	const char *fixture, *id;
	enum gp_sev sev;
	const char *subject, *text; /* text: in the message or the fix */
};

static const struct want wants[] = {
	{ D("gpu-xid-cat"), "gpu.xid", GP_SEV_ERROR, "0000:13:00.0", "riser or retimer" },
	{ D("gpu-xid-cat"), "gpu.xid", GP_SEV_ERROR, "0000:13:00.0", "power-cycle the machine" },
	{ D("gpu-xid-cat"), "gpu.xid", GP_SEV_ERROR, "0000:14:00.0", "nvidia-smi -r -i 0000:14:00.0" },
	{ D("gpu-xid-cat"), "gpu.xid", GP_SEV_ERROR, "0000:33:00.0", "drain P2P" },
	{ D("gpu-xid-cat"), "gpu.xid", GP_SEV_WARNING, "0000:34:00.0", "auxiliary power" },
	{ D("gpu-xid-cat"), "gpu.xid", GP_SEV_ERROR, "0000:93:00.0", "PCIe" },
	{ D("gpu-xid-cat"), "gpu.xid", GP_SEV_WARNING, "0000:94:00.0", "not in the Xid catalogue" },
	{ D("gpu-xid-cat"), "gpu.xid", GP_SEV_WARNING, "0000:b3:00.0", "pcie.aer" },
	{ D("gpu-xid-cat"), "gpu.xid", GP_SEV_OK, "0000:b4:00.0", NULL },
	{ D("gpu-xid-info"), "gpu.xid", GP_SEV_INFO, "0000:13:00.0", "Xid 43" },
	{ D("gpu-xid-info"), "gpu.xid", GP_SEV_INFO, "0000:14:00.0", "gpu.ecc" },
	{ D("gpu-xid-info"), "gpu.xid", GP_SEV_INFO, "0000:34:00.0", "154" },
	{ D("gpu-sxid"), "nvlink.sxid", GP_SEV_ERROR, "0000:c2:00.0", "nvidia-nvswitch0" },
	{ D("gpu-sxid"), "nvlink.sxid", GP_SEV_ERROR, "0000:c2:00.0", "link 28, 29" },
	{ D("gpu-sxid"), "nvlink.sxid", GP_SEV_WARNING, "0000:c5:00.0", "1 non-fatal; link 10" },
	{ D("gpu-sxid"), "nvlink.sxid", GP_SEV_WARNING, "0000:c4:00.0", "unstated severity" },
	{ D("gpu-sxid-clean"), "nvlink.sxid", GP_SEV_OK, "system", "no SXid" },
	{ D("gpu-sxid"), "gpu.xid", GP_SEV_ERROR, "0000:13:00.0", "nvidia-smi nvlink" },   /* the Xid 74 beside */
};

static void judged(const struct want *w)
{
	static struct fx x;
	struct gp_doctor_ctx c;
	int match = 0;

	if (run_sel(w->fixture, kmsg_on, w->id, NULL, &x, &c))
		return;
	for (int i = 0; i < c.out.n; i++) {
		const struct gp_finding *f = &c.out.v[i];

		match += !strcmp(f->check->id, w->id) && f->sev == w->sev && !strcmp(f->subject, w->subject) &&
			 (!w->text || strstr(f->message, w->text) || (f->fix && strstr(f->fix, w->text)));
	}
	CHECK(match == 1, "%s says %s on %s about %s%s%s", w->id, gp_sev_name(w->sev), w->fixture, w->subject,
	      w->text ? ": " : "", w->text ? w->text : "");
	done(&x, &c);
}

/* A healthy twin: no error and no warning from the kernel log's checks. */
static void quiet(const char *fixture)
{
	static struct fx x;
	struct gp_doctor_ctx c;
	int bad = 0;

	if (run_sel(fixture, kmsg_on, "gpu.xid,nvlink.sxid", NULL, &x, &c))
		return;
	for (int i = 0; i < c.out.n; i++)
		if (c.out.v[i].sev <= GP_SEV_WARNING || c.out.v[i].sev == GP_SEV_UNKNOWN) {
			printf("# %s: %s %s: %s\n", fixture, c.out.v[i].check->id, c.out.v[i].subject, c.out.v[i].message);
			bad++;
		}
	CHECK(!bad && c.out.n > 0, "%s: gpu.xid and nvlink.sxid quiet (%d alarms)", fixture, bad);
	done(&x, &c);
}

int main(void)
{
	catalogue();
	xid154();
	sxid_parse();
	for (size_t i = 0; i < sizeof(wants) / sizeof(wants[0]); i++)
		judged(&wants[i]);
	quiet(D("gpu-xid-info"));
	quiet(D("gpu-sxid-clean"));
	quiet(D("healthy"));
	return unit_done();
}
