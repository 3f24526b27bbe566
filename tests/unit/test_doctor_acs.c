/* Unit tests: what the acs family's alarms carry (the bridge, the pairs' BDFs, the fix, the registers),
 * beyond the severities tests/unit/test_doctor.c's registry cases check. */
#include "doctor_fx.h"

/* The evidence value, "" when there is none (doctor_fx.h's ev_of gives NULL). */
static const char *ev_or(const struct gp_doctor_ctx *c, const char *id, const char *subject, const char *key)
{
	const char *v = ev_of(c, id, subject, key);

	return v ? v : "";
}

static const struct gp_finding *finding(const struct gp_doctor_ctx *c, const char *id, const char *subject)
{
	for (int i = 0; i < c->out.n; i++)
		if (!strcmp(c->out.v[i].check->id, id) && !strcmp(c->out.v[i].subject, subject))
			return &c->out.v[i];
	return NULL;
}

/* What an acs alarm names: the bridge, the pairs' BDFs, the fix, the register (from the spec lines:
 * acs-redirect sets 0000:12:01.0 to 0x001d, GPU0 0000:13:00.0 and GPU1 0000:14:00.0 lose their
 * NVLink; acs-boot has all 16 switch downstream ports at 0 with an IOMMU, the 4 root ports carry no
 * PIX/PXB pair). */
static void acs_details(void)
{
	static struct fx x;
	struct gp_doctor_ctx c;
	const struct gp_finding *f;
	const char *v;

	if (run_sel(D("acs-redirect"), NULL, "acs", NULL, &x, &c) == 0) {
		f = finding(&c, "acs.redirect", "0000:12:01.0");
		CHECK(f && f->nbdf >= 3 && !strcmp(f->bdf[0], "0000:12:01.0") && fx_has_bdf(f, "0000:13:00.0") &&
		      fx_has_bdf(f, "0000:14:00.0") && strstr(f->message, "GPU0-GPU1"), "acs.redirect names the bridge, then GPU0 "
		      "and GPU1 (%s)", f ? f->message : "no finding");
		CHECK(f && f->fix && strstr(f->fix, "gpup2p acs --disable") && strstr(f->fix, "gpup2p-acs.service") &&
		      strstr(f->fix, "pci=disable_acs_redir=0000:12:01.0"), "fix: acs --disable, the unit, the parameter (%s)",
		      f && f->fix ? f->fix : "none");
		v = ev_or(&c, "acs.redirect", "0000:12:01.0", "ACS control");
		CHECK(!strncmp(v, "0x001d ", 7) && strstr(v, "ReqRedir+ CmpltRedir+"), "evidence: the control register and "
		      "its bits (%s)", v);
		CHECK(!finding(&c, "acs.redirect", "0000:12:00.0"), "GPU0's own port (0x0000) is not named");
		done(&x, &c);
	}
	if (run_sel(D("acs-boot"), NULL, "acs", NULL, &x, &c) == 0) {
		f = finding(&c, "acs.boot", "gpup2p-acs.service");
		CHECK(f && fx_has_bdf(f, "0000:12:00.0") && fx_has_bdf(f, "0000:b2:03.0") && !fx_has_bdf(f, "0000:10:01.0") &&
		      strstr(f->message, "16 bridge(s)"), "acs.boot names the 16 switch ports, not the root ports");
		CHECK(f && f->fix && strstr(f->fix, "systemctl enable gpup2p-acs.service") &&
		      strstr(f->fix, "GRUB_CMDLINE_LINUX=\"$GRUB_CMDLINE_LINUX pci=disable_acs_redir=0000:12:00.0\\;0000:12:01.0"
			 "\\;0000:12:02.0\\;0000:12:03.0\\;0000:32:00.0\\;"),
		      "fix: the unit, or one parameter listing them all (the /etc/default/grub line, ; escaped)");
		v = ev_or(&c, "acs.boot", "gpup2p-acs.service", "0000:12:00.0");
		CHECK(strstr(v, "0x0000 now, 0x001d after the next boot") != NULL, "evidence: now and after the boot (%s)", v);
		done(&x, &c);
	}
}

int main(void)
{
	acs_details();
	return unit_done();
}
