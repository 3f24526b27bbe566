/* Unit tests: ACS decode, which pairs' paths cross a bridge, the audit and the boot parameter,
 * on fixtures whose ACS registers the specs set (0x001d = what the kernel sets with an IOMMU). */
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

int main(void)
{
	static struct fx x;
	const struct gp_acs_bridge *b;
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
		CHECK(b && b->npairs == 1 && b->pairs[0][0] == 0 && b->pairs[0][1] == 1, "downstream port on GPU0-GPU1");
		CHECK(x.a.on_path_redirecting == 2 && x.a.on_path_unknown == 0, "2 on-path bridges redirect");
		CHECK_STR(gp_acs_boot_param(&x.t, &x.a, buf, sizeof(buf)), "pci=disable_acs_redir=0000:02:08.0;0000:02:10.0",
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
		CHECK(gp_acs_boot_param(&x.t, &x.a, buf, sizeof(buf))[0] == '\0', "no boot parameter needed");
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
	return unit_done();
}
