/* Unit tests: ACS decode, which pairs' paths cross a bridge, the audit, its impact ranking and the
 * boot parameter, on fixtures whose ACS registers the specs set (0x001d = what the kernel sets with
 * an IOMMU); the Intel PCH quirk (ACS control at capability+8) and multi-function ACS (acsguard). */
#include "gpup2p/acs.h"
#include "fx.h"

static int load(struct fx *x, const char *name)
{
	return fx_load(x, unit_fixture(name), NULL, 0, 1);
}

static const struct gp_acs_bridge *bridge(const struct fx *x, const char *bdf)
{
	for (int i = 0; i < x->a.n; i++)
		if (!strcmp(x->p.devs[x->a.b[i].pci].bdf, bdf))
			return &x->a.b[i];
	return NULL;
}

/* Matrix index of a GPU/NIC by name ("GPU2"), -1 when absent. */
static int dev_index(const struct fx *x, const char *name)
{
	for (int i = 0; i < x->t.n; i++)
		if (!strcmp(x->t.devs[i].name, name))
			return i;
	return -1;
}

/* Which Intel root ports the quirk covers: the kernel's id ranges, edges included, nothing else. */
/* The audit's boot parameter as text (valid until the next call). */
static const char *audit_bp(const struct gp_topo *t, const struct gp_acs_audit *a)
{
	static struct gp_buf b = GP_BUF_INIT;

	gp_buf_reset(&b);
	return gp_acs_boot_param(t, a, &b) ? "(out of memory)" : gp_buf_str(&b);
}

static void quirk_ids(void)
{
	static const struct {
		uint16_t vendor, device;
		enum gp_port_type port;
		int want;
	} cases[] = {
		{ 0x8086, 0xa110, GP_PORT_ROOT, 1 }, { 0x8086, 0xa11f, GP_PORT_ROOT, 1 },
		{ 0x8086, 0xa10f, GP_PORT_ROOT, 0 }, { 0x8086, 0xa120, GP_PORT_ROOT, 0 },
		{ 0x8086, 0xa167, GP_PORT_ROOT, 1 }, { 0x8086, 0xa16a, GP_PORT_ROOT, 1 },
		{ 0x8086, 0xa166, GP_PORT_ROOT, 0 }, { 0x8086, 0xa16b, GP_PORT_ROOT, 0 },
		{ 0x8086, 0xa290, GP_PORT_ROOT, 1 }, { 0x8086, 0xa29f, GP_PORT_ROOT, 1 },
		{ 0x8086, 0xa2e7, GP_PORT_ROOT, 1 }, { 0x8086, 0xa2ee, GP_PORT_ROOT, 1 },
		{ 0x8086, 0xa2ef, GP_PORT_ROOT, 0 }, { 0x8086, 0x9d10, GP_PORT_ROOT, 1 },
		{ 0x8086, 0x9d1b, GP_PORT_ROOT, 1 }, { 0x8086, 0x9d1c, GP_PORT_ROOT, 0 },
		{ 0x8086, 0xa110, GP_PORT_DOWNSTREAM, 0 }, { 0x10b5, 0xa110, GP_PORT_ROOT, 0 },
		{ 0x8086, 0x2030, GP_PORT_ROOT, 0 },
	};

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		static struct gp_pci_dev d;

		memset(&d, 0, sizeof(d));
		d.vendor = cases[k].vendor;
		d.device = cases[k].device;
		d.port_type = cases[k].port;
		d.acs_cap = 0x100;
		CHECK(gp_acs_intel_pch_quirk(&d) == cases[k].want && gp_acs_ctl_offset(&d) == (cases[k].want ? 0x108 : 0x106),
		      "PCH quirk %04x:%04x port type %d: %s", d.vendor, d.device, (int)d.port_type,
		      cases[k].want ? "control at +8" : "standard +6");
	}
}

/* Impact ranking: high where a pair would stay below the host bridge, low where it crosses it. */
static void impact_tests(void)
{
	static struct fx x;
	const struct gp_acs_bridge *b;

	/* seed4x2 (socket 1): 80:01.0 carries only cross-socket pairs (SYS); the switch ports below it
	 * carry GPU1-GPU2 and GPU1-GPU3 (PXB) and GPU2-GPU3 (PIX) */
	CHECK(load(&x, "seed4x2") == 0, "seed4x2 loaded");
	if (x.t.n) {
		int g0 = dev_index(&x, "GPU0"), g1 = dev_index(&x, "GPU1"), g2 = dev_index(&x, "GPU2"),
		    g3 = dev_index(&x, "GPU3"), n0 = dev_index(&x, "NIC0");

		CHECK(gp_acs_pair_local(&x.t, g2, g3) && gp_acs_pair_local(&x.t, g1, g2) && !gp_acs_pair_local(&x.t, g0, g1) &&
		      !gp_acs_pair_local(&x.t, g0, n0), "GPU2-GPU3 PIX and GPU1-GPU2 PXB local; GPU0-GPU1 SYS, GPU0-NIC0 PHB not");
		b = bridge(&x, "0000:80:01.0");
		CHECK(b && b->redirects == 1 && b->npairs == 9 && b->nlocal == 0 && b->impact == GP_ACS_IMPACT_LOW,
		      "socket-1 root port: redirects 9 SYS pairs only: impact low");
		b = bridge(&x, "0000:82:08.0");
		CHECK(b && b->nlocal == 2 && b->impact == GP_ACS_IMPACT_HIGH, "82:08.0: GPU1-GPU2, GPU1-GPU3 (PXB): impact high");
		b = bridge(&x, "0000:85:04.0");
		CHECK(b && b->nlocal == 2 && b->impact == GP_ACS_IMPACT_HIGH, "85:04.0: GPU2-GPU3 PIX, GPU1-GPU2 PXB: high");
		b = bridge(&x, "0000:00:02.0");
		CHECK(b && b->impact == GP_ACS_IMPACT_NONE, "NIC root port: ACS 0, impact none");
		CHECK(x.a.redirect_high == 4 && x.a.redirect_low == 1 && x.a.on_path_redirecting == 5,
		      "seed4x2: 4 high, 1 low, 5 on-path redirecting (%d/%d)", x.a.redirect_high, x.a.redirect_low);
		fx_unload(&x);
	}
	/* workstation: the root port redirects but is on no pair's path: none, not low */
	CHECK(load(&x, "workstation") == 0, "workstation loaded");
	if (x.t.n) {
		b = bridge(&x, "0000:00:01.0");
		CHECK(b && b->redirects == 1 && b->impact == GP_ACS_IMPACT_NONE, "root port on no path: impact none");
		CHECK(x.a.redirect_high == 2 && x.a.redirect_low == 0, "workstation: the two switch ports are high");
		fx_unload(&x);
	}
	/* dgx-h100: GPU0-GPU1 share a switch (PCIe PIX) but talk over NVLink: not local */
	CHECK(load(&x, "dgx-h100") == 0, "dgx-h100 loaded");
	if (x.t.n) {
		const struct gp_topo_link lv = gp_topo_link_at(&x.t, 0, 1), *l = &lv;

		CHECK(l->cls == GP_TC_NV && l->pcie == GP_TC_PIX && !gp_acs_pair_local(&x.t, 0, 1),
		      "NV18 pair over a PCIe switch: its traffic does not use the switch");
		fx_unload(&x);
	}
	/* nonroot: unreadable ACS on a path is unknown, never low or none */
	CHECK(load(&x, "nonroot") == 0, "nonroot loaded");
	if (x.t.n) {
		b = bridge(&x, "0000:02:08.0");
		CHECK(b && b->impact == GP_ACS_IMPACT_UNKNOWN && x.a.redirect_high == 0 && x.a.redirect_low == 0,
		      "unreadable on-path ACS: impact unknown");
		fx_unload(&x);
	}
	CHECK_STR(gp_acs_impact_name(GP_ACS_IMPACT_HIGH), "high", "impact name high");
	CHECK_STR(gp_acs_impact_name(GP_ACS_IMPACT_LOW), "low", "impact name low");
}

/* acsguard: the Intel PCH root port 00:1c.0 (8086:a110, ACS as dwords: 0x001d at capability+8, 0 at
 * +6) and a dual-port NIC 09:00.0/.1 whose functions carry ACS 0x000c (RR, CR). */
static void quirk_and_multifunction(void)
{
	static struct fx x;
	const struct gp_acs_bridge *b;
	int pi, pj;

	CHECK(load(&x, "acsguard") == 0, "acsguard loaded");
	if (!x.t.n)
		return;
	b = bridge(&x, "0000:00:1c.0");
	CHECK(b && b->state == GP_PRESENT && b->ctl == 0x001d && b->cap == 0x005f && b->redirects == 1 &&
	      b->ctl_off == x.p.devs[b->pci].acs_cap + 8, "PCH root port: control read at capability+8 (0x001d), not +6 (0)");
	CHECK(b && gp_pci_cfg_read(&x.p.devs[b->pci], x.p.devs[b->pci].acs_cap + 6, 2) == 0,
	      "the fixture really has 0 at the standard offset");
	CHECK(b && b->npairs == 8 && b->nlocal == 0 && b->impact == GP_ACS_IMPACT_LOW,
	      "PCH root port: the 8 GPU-NIC pairs (PHB) cross it: impact low");
	b = bridge(&x, "0000:00:01.0");
	CHECK(b && b->ctl_off == x.p.devs[b->pci].acs_cap + 6, "8086:2030 root port: standard offset");
	b = bridge(&x, "0000:09:00.0");
	pi = pj = -1;
	CHECK(b && b->ctl == 0x000c && b->npairs == 1 && b->nlocal == 1 && b->impact == GP_ACS_IMPACT_HIGH &&
	      gp_acs_pair_next(&x.a, b, 0, &pi, &pj) && !strcmp(x.t.devs[pi].name, "NIC0") &&
	      !strcmp(x.t.devs[pj].name, "NIC1") && !gp_acs_pair_next(&x.a, b, 0, &pi, &pj),
	      "multi-function NIC: each function's ACS is on NIC0-NIC1's path, impact high");
	CHECK(bridge(&x, "0000:09:00.1") && !bridge(&x, "0000:03:00.0"),
	      "both NIC functions audited; a single-function GPU is not");
	CHECK(!gp_acs_on_pair_path(&x.t, gp_pci_index(&x.p, "0000:09:00.0"), dev_index(&x, "GPU0"), dev_index(&x, "NIC1")),
	      "NIC0's own ACS is not on GPU0-NIC1's path");
	CHECK(!gp_acs_on_pair_path(&x.t, gp_pci_index(&x.p, "0000:00:1c.0"), dev_index(&x, "NIC0"), dev_index(&x, "NIC1")),
	      "the root port is not on the path between two functions of one device");
	fx_unload(&x);
}

/* The next boot (acs_boot.c): the kernel's own setting with an IOMMU, then pci=disable_acs_redir=
 * and pci=config_acs= (flags: the last character is bit 0), device specs by address or vendor:device;
 * the unit and boot script names. Values worked out from the kernel's documentation by hand:
 * cap 0x005f with an IOMMU gives SV|RR|CR|UF = 0x001d; clearing RR|CR|EC from it leaves 0x0011. */
static void boot_tests(void)
{
	struct gp_pci_dev d;
	int p;

	memset(&d, 0, sizeof(d));
	d.bus = 0x12;
	d.dev = 1;
	d.vendor = 0x1000;
	d.device = 0xc030;
	CHECK(gp_acs_boot_ctl(&d, 0x005f, 0, 1, "", &p) == 0x001d && !p, "IOMMU: the kernel sets SV RR CR UF");
	CHECK(gp_acs_boot_ctl(&d, 0x005f, 0, 0, "iommu=pt", &p) == 0 && !p, "no IOMMU: left as it is");
	CHECK(gp_acs_boot_ctl(&d, 0x0005, 0, 1, "", &p) == 0x0005, "only what the capability offers (SV, RR)");
	CHECK(gp_acs_boot_ctl(&d, 0x005f, 0, 1, "pci=disable_acs_redir=0000:12:01.0", &p) == 0x0011 && p,
	      "disable_acs_redir naming it: RR CR EC cleared after");
	CHECK(gp_acs_boot_ctl(&d, 0x005f, 0, 1, "ro pci=noaer,disable_acs_redir=0000:33:00.0;12:01.0 quiet", &p) == 0x0011 &&
	      p, "second entry, no domain, after another pci= option");
	CHECK(gp_acs_boot_ctl(&d, 0x005f, 0, 1, "pci=disable_acs_redir=0000:12:02.0", &p) == 0x001d && !p,
	      "another bridge: not cleared");
	CHECK(gp_acs_boot_ctl(&d, 0x005f, 0, 1, "pci=disable_acs_redir=pci:1000:c030", &p) == 0x0011 && p,
	      "vendor:device spec");
	CHECK(gp_acs_boot_ctl(&d, 0x005f, 0, 1, "pci=disable_acs_redir=pci:10de:c030", &p) == 0x001d && !p,
	      "vendor:device of another device");
	CHECK(gp_acs_boot_ctl(&d, 0x005f, 0, 1, "pci=disable_acs_redir=10:01.0/00.0", &p) == 0x001d && !p,
	      "path form: not matched");
	CHECK(gp_acs_boot_ctl(&d, 0x005f, 0, 1, "pci=config_acs=0000000@0000:12:01.0", &p) == 0 && p,
	      "config_acs 0000000 (NCCL's): all cleared");
	CHECK(gp_acs_boot_ctl(&d, 0x005f, 0x0003, 0, "pci=config_acs=10x", &p) == 0x0005 && p,
	      "config_acs=10x for every device: RR on, TB off, SV left (the kernel's example)");
	CHECK(gp_acs_boot_ctl(&d, 0x005f, 0, 0, "pci=config_acs=1xx@0000:12:02.0", &p) == 0 && !p,
	      "config_acs for another device");
	CHECK(gp_acs_boot_ctl(&d, 0x005f, 0, 1, "disable_acs_redir=0000:12:01.0", &p) == 0x001d && !p,
	      "without pci=: not the kernel's parameter");
	CHECK(gp_acs_boot_unit_name("gpup2p-acs.service") && gp_acs_boot_unit_name("gpup2p-acs@all.service") &&
	      !gp_acs_boot_unit_name("gpup2p.service") && !gp_acs_boot_unit_name("gpup2p-acs.socket"), "unit names");
	CHECK(gp_acs_boot_script_line("/usr/local/bin/gpup2p acs --disable --all", 41) &&
	      !gp_acs_boot_script_line("# gpup2p acs --disable", 22) && !gp_acs_boot_script_line("gpup2p acs --restore", 20) &&
	      !gp_acs_boot_script_line("gpup2p acs --disable", 10), "boot script lines: run, commented, restore, cut short");
}

/* The audit keeps two sides per bridge and counts: on every fixture its pairs, in order, are those
 * gp_acs_on_pair_path finds pair by pair, its local count theirs by gp_acs_pair_local, and the
 * grouped listing has each pair of groups once (a VF's pairs under its PF's group). */
static const char *const sides_fixtures[] = { "acsguard", "dgx-h100", "epyc6", "h200x2", "nicorder", "seed4x2",
					      "vmd", "workstation", "sriov" };

static void sides_match_pairs(const char *name)
{
	static struct fx x;
	int bad = 0, checked = 0;

	if (load(&x, name))
		return;
	for (int k = 0; k < x.a.n; k++) {
		const struct gp_acs_bridge *b = &x.a.b[k];
		int i = -1, j = -1, npairs = 0, nlocal = 0, gi = -1, gj = -1;

		for (int p = 0; p < x.t.n; p++)
			for (int q = p + 1; q < x.t.n; q++) {
				if (!gp_acs_on_pair_path(&x.t, b->pci, p, q))
					continue;
				npairs++;
				nlocal += gp_acs_pair_local(&x.t, p, q);
				bad += !gp_acs_pair_next(&x.a, b, 0, &i, &j) || i != p || j != q;
			}
		bad += gp_acs_pair_next(&x.a, b, 0, &i, &j) || npairs != b->npairs || nlocal != b->nlocal;
		/* grouped (a bridge): first entries only, one per pair of groups with a crossing pair; a
		 * function's listing is not grouped (its device's functions may share a group) */
		for (int p = 0; p < x.t.n; p++)
			for (int q = p + 1; q < x.t.n; q++) {
				int first = !b->other ? x.t.devs[p].group == p && x.t.devs[q].group == q : 1;

				if (!first || !gp_acs_on_pair_path(&x.t, b->pci, p, q))
					continue;
				bad += !gp_acs_pair_next(&x.a, b, 1, &gi, &gj) || gi != p || gj != q;
			}
		bad += gp_acs_pair_next(&x.a, b, 1, &gi, &gj);
		checked++;
	}
	CHECK(!bad && checked == x.a.n, "%s: %d bridges' sides give the pairs and local counts found pair by pair",
	      name, checked);
	fx_unload(&x);
}

/* sriov: a PF's VFs are one group with it, named "NIC0+6VFs"; grouped pairs of 02:01.0 */
static void sriov_groups(void)
{
	static struct fx x;
	const struct gp_acs_bridge *b;
	char buf[256], name[48];
	int i = -1, j = -1;

	if (load(&x, "sriov"))
		return;
	CHECK(x.t.n == 17 && x.t.devs[dev_index(&x, "NIC3")].group == dev_index(&x, "NIC0") &&
	      x.t.devs[dev_index(&x, "NIC0")].members == 7 && x.t.devs[dev_index(&x, "NIC9")].group == dev_index(&x, "NIC1") &&
	      x.t.devs[dev_index(&x, "GPU0")].members == 1,
	      "sriov: NIC0 and its 6 VFs (NIC3-NIC8) one group, NIC1 with NIC9-NIC10, GPUs alone");
	CHECK_STR(gp_topo_group_name(&x.t, dev_index(&x, "NIC0"), buf, sizeof(buf)), "NIC0+6VFs", "group name");
	b = bridge(&x, "0000:02:01.0");
	buf[0] = '\0';
	while (b && gp_acs_pair_next(&x.a, b, 1, &i, &j) && strlen(buf) < sizeof(buf) - 40) {
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s", buf[0] ? " " : "",
			 gp_acs_pair_name(&x.t, b, 1, i, name, sizeof(name)));
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "-%s", gp_acs_pair_name(&x.t, b, 1, j, name, sizeof(name)));
	}
	CHECK_STR(buf, "GPU0-NIC0+6VFs GPU0-NIC1+2VFs GPU1-NIC0+6VFs GPU1-NIC1+2VFs GPU2-NIC0+6VFs GPU2-NIC1+2VFs "
		  "NIC0+6VFs-NIC2+3VFs NIC1+2VFs-NIC2+3VFs", "02:01.0's grouped pairs, in order");
	CHECK(b && b->nside == 10 && b->nother == 7 && b->npairs == 70 && b->nlocal == 20,
	      "02:01.0: 10 functions below x 7 beside, 20 PIX (GPU0/GPU1 x 10)");
	b = bridge(&x, "0000:04:00.0");
	CHECK(b && b->npairs == 7 && b->nlocal == 7, "multi-function PF: itself and its device's 7 other functions");
	fx_unload(&x);
}

int main(void)
{
	static struct fx x;
	const struct gp_acs_bridge *b;
	int pi, pj;
	char buf[512];

	CHECK_STR(gp_acs_decode(0x001d, buf, sizeof(buf)),
		  "SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-", "decode 0x001d");
	CHECK_STR(gp_acs_decode(0x005f, buf, sizeof(buf)),
		  "SrcValid+ TransBlk+ ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans+", "decode 0x005f");
	CHECK_STR(gp_acs_decode(0x0020, buf, sizeof(buf)),
		  "SrcValid- TransBlk- ReqRedir- CmpltRedir- UpstreamFwd- EgressCtrl+ DirectTrans-", "decode EC only");
	{
		static const char *const names[] = { "SrcValid", "TransBlk", "ReqRedir", "CmpltRedir",
						     "UpstreamFwd", "EgressCtrl", "DirectTrans" };

		for (int k = 0; k < 7; k++) {
			char want[64];
			int plus = 0;

			gp_acs_decode((uint16_t)(1u << k), buf, sizeof(buf));
			snprintf(want, sizeof(want), "%s+", names[k]);
			for (const char *q = buf; (q = strchr(q, '+')); q++)
				plus++;
			CHECK(strstr(buf, want) && plus == 1, "decode bit %d alone: only %s set", k, want);
		}
		gp_acs_decode(0xff80, buf, sizeof(buf));
		CHECK(!strchr(buf, '+'), "decode: bits 7-15 (reserved) show nothing");
	}
	CHECK((0x0011 & GP_ACS_REDIRECT) == 0 && (0x0004 & GP_ACS_REDIRECT) && (0x0020 & GP_ACS_REDIRECT),
	      "RR, CR, EC redirect; SV, UF do not");

	/* workstation: root port 0x001d but on no pair's path (both GPUs below one switch);
	 * the two downstream ports redirect GPU0-GPU1 */
	if (load(&x, "workstation") == 0) {
		CHECK(x.a.n == 3, "3 ACS bridges (the upstream port has none)");
		b = bridge(&x, "0000:00:01.0");
		CHECK(b && b->ctl == 0x001d && b->redirects == 1 && b->npairs == 0, "root port redirects, on no path");
		b = bridge(&x, "0000:02:08.0");
		pi = pj = -1;
		CHECK(b && b->npairs == 1 && gp_acs_pair_next(&x.a, b, 0, &pi, &pj) && pi == 0 && pj == 1 &&
		      !gp_acs_pair_next(&x.a, b, 0, &pi, &pj), "downstream port on GPU0-GPU1");
		CHECK(x.a.on_path_redirecting == 2 && x.a.on_path_unknown == 0, "2 on-path bridges redirect");
		CHECK_STR(audit_bp(&x.t, &x.a), "pci=disable_acs_redir=0000:02:08.0;0000:02:10.0",
			  "boot parameter names only on-path redirecting bridges");
		fx_unload(&x);
	}
	/* seed4x2: socket 0 root ports at 0, socket 1 ports at 0x001d */
	if (load(&x, "seed4x2") == 0) {
		b = bridge(&x, "0000:00:02.0");
		CHECK(b && b->redirects == 0 && b->npairs == 8, "NIC root port: no redirect, 8 pairs (NICs x GPUs)");
		b = bridge(&x, "0000:80:01.0");
		CHECK(b && b->redirects == 1 && b->npairs == 9, "socket-1 root port: on the 9 cross-socket pairs");
		CHECK(gp_acs_on_pair_path(&x.t, gp_pci_index(&x.p, "0000:85:04.0"), 2, 3), "GPU2-GPU3 crosses 85:04.0");
		CHECK(!gp_acs_on_pair_path(&x.t, gp_pci_index(&x.p, "0000:82:10.0"), 2, 3),
		      "GPU2-GPU3 stays below 82:10.0 (their lowest common bridge is below it)");
		CHECK(gp_acs_on_pair_path(&x.t, gp_pci_index(&x.p, "0000:82:10.0"), 1, 2), "GPU1-GPU2 crosses 82:10.0");
		CHECK(!gp_acs_on_pair_path(&x.t, gp_pci_index(&x.p, "0000:80:01.0"), 1, 2), "GPU1-GPU2 not via root port");
		CHECK(x.a.on_path_redirecting == 5, "5 on-path redirecting bridges");
		fx_unload(&x);
	}
	/* DGX: every ACS control is 0 */
	if (load(&x, "dgx-h100") == 0) {
		CHECK(x.a.n == 20 && x.a.on_path_redirecting == 0 && x.a.on_path_unknown == 0, "DGX: 20 bridges, none redirect");
		CHECK(audit_bp(&x.t, &x.a)[0] == '\0', "no boot parameter needed");
		fx_unload(&x);
	}
	/* non-root: never "off" */
	if (load(&x, "nonroot") == 0) {
		b = bridge(&x, "0000:02:08.0");
		CHECK(b && b->state == GP_UNKNOWN && b->redirects == -1, "unreadable ACS is unknown, not off");
		CHECK(x.a.on_path_unknown == 2 && x.a.on_path_redirecting == 0, "2 on-path bridges unknown");
		fx_unload(&x);
	}
	/* the H200 VM: flat, no bridges */
	if (load(&x, "h200x2") == 0) {
		CHECK(x.a.n == 0, "H200 VM: no ACS bridge");
		fx_unload(&x);
	}
	quirk_ids();
	impact_tests();
	quirk_and_multifunction();
	boot_tests();
	for (size_t k = 0; k < sizeof(sides_fixtures) / sizeof(sides_fixtures[0]); k++)
		sides_match_pairs(sides_fixtures[k]);
	sriov_groups();
	return unit_done();
}
