/* gpup2p doctor — acs.*: ACS redirection and egress control on the bridges between GPUs and NICs,
 * redirection cleared now that the next boot sets again, and bridges whose ACS could not be read.
 * The registers and the pairs crossing each bridge are libcore/acs/acs.c's audit (c->acs), the next
 * boot's value libcore/acs/boot.c's. Redirection is an error only where the audit's impact is high:
 * a pair whose traffic would otherwise stay below the host bridge (PIX/PXB, two functions of one
 * device); a warning on a root port whose PCIe pairs the IOMMU translates; where every pair crosses
 * the root complex anyway without translation it is worth knowing, no more. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gpup2p/acs_write.h"
#include "gpup2p/buf.h"

#define FIX_BOOT "systemctl enable gpup2p-acs.service (runs gpup2p acs --disable at every boot)"

static const struct gp_pci_dev *bdev(const struct gp_doctor_ctx *c, const struct gp_acs_bridge *b)
{
	return &c->pci->devs[b->pci];
}

/* "switch downstream", "root port", "bridge" (type not readable), or "GPU0's function" for a function
 * of a multi-function card. */
static const char *role(const struct gp_doctor_ctx *c, const struct gp_acs_bridge *b, char *buf, size_t n)
{
	const struct gp_topo_dev *td = gp_topo_find(c->topo, b->pci);

	if (!bdev(c, b)->is_bridge && td)
		snprintf(buf, n, "%s's function", td->name);
	else if (bdev(c, b)->port_type == GP_PORT_UNKNOWN)
		snprintf(buf, n, "bridge");
	else
		snprintf(buf, n, "%s", gp_pci_port_name(bdev(c, b)->port_type));
	return buf;
}

/* Which of a bridge's pairs to name: all, those that would stay below the host bridge, or those
 * whose PCIe traffic the IOMMU translates once redirected (no NVLink between them, an end translated). */
enum pick { ALL, LOCAL, TRANSLATED };

static int picked(const struct gp_doctor_ctx *c, int i, int j, enum pick how)
{
	if (how == LOCAL)
		return gp_acs_pair_local(c->topo, i, j);
	if (how == TRANSLATED)
		return gp_topo_link_at(c->topo, i, j).cls != GP_TC_NV &&
		       (gp_doctor_translated(c, i) || gp_doctor_translated(c, j));
	return 1;
}

/* The pairs crossing b that how picks: as text into txt ("GPU0-GPU1 PXB, GPU0-NIC0+126VFs PIX": a NIC's
 * virtual functions with their physical function) and, into f, the bridge's BDF then theirs, each once.
 * Either may be NULL. Returns 1 when how picks any pair, else 0 (with txt and f NULL it stops at the
 * first). */
static int pairs(struct gp_doctor_ctx *c, const struct gp_acs_bridge *b, enum pick how, struct gp_buf *txt,
		 struct gp_finding *f)
{
	const struct gp_topo *t = c->topo;
	char code[16], x[48], y[48];
	unsigned char *seen;
	int i = -1, j = -1, any = 0;

	gp_finding_bdf(f, bdev(c, b)->bdf);
	while (txt && gp_acs_pair_next(&c->acs, b, 1, &i, &j))
		if (picked(c, i, j, how)) {
			any = 1;
			gp_buf_addf(txt, "%s%s-%s %s", txt->len ? ", " : "", gp_acs_pair_name(t, b, 1, i, x, sizeof(x)),
				    gp_acs_pair_name(t, b, 1, j, y, sizeof(y)), gp_topo_code_at(t, i, j, code, sizeof(code)));
		}
	if (!txt && !f) {
		for (i = -1, j = -1; gp_acs_pair_next(&c->acs, b, 0, &i, &j);)
			if (picked(c, i, j, how))
				return 1;
		return 0;
	}
	if (!f || !(seen = calloc((size_t)t->n + 1, 1)))
		return any;
	/* every function, in the order of the pairs; each looked up once */
	for (i = -1, j = -1; gp_acs_pair_next(&c->acs, b, 0, &i, &j);) {
		if ((seen[i] && seen[j]) || !picked(c, i, j, how))
			continue;
		any = 1;
		if (!seen[i])
			gp_finding_bdf(f, gp_doctor_dev(c, i)->bdf);
		if (!seen[j])
			gp_finding_bdf(f, gp_doctor_dev(c, j)->bdf);
		seen[i] = seen[j] = 1;
	}
	free(seen);
	return any;
}

static void registers(struct gp_finding *f, const struct gp_acs_bridge *b)
{
	char dec[160];

	gp_finding_ev(f, "ACS control", "0x%04x at config 0x%x: %s", b->ctl, b->ctl_off, gp_acs_decode(b->ctl, dec, sizeof(dec)));
	gp_finding_ev(f, "ACS capability", "0x%04x: %s", b->cap, gp_acs_decode(b->cap, dec, sizeof(dec)));
}

/* Set names of the bits of v among ReqRedir, CmpltRedir, EgressCtrl ("ReqRedir+CmpltRedir"). */
static const char *bits(uint16_t v, char *buf, size_t n)
{
	snprintf(buf, n, "%s%s%s%s%s", v & GP_ACS_RR ? "ReqRedir" : "", (v & GP_ACS_RR) && (v & (GP_ACS_CR | GP_ACS_EC)) ? "+" : "",
		 v & GP_ACS_CR ? "CmpltRedir" : "", (v & GP_ACS_CR) && (v & GP_ACS_EC) ? "+" : "", v & GP_ACS_EC ? "EgressCtrl" : "");
	return buf;
}

/* Nothing to look at: no GPU or NIC, or no pair (one GPU, no NIC). Says so and returns 1. */
static int no_pairs(struct gp_doctor_ctx *c)
{
	if (gp_doctor_no_device(c))
		return 1;
	if (gp_doctor_does_p2p(c))
		return 0;
	gp_doctor_add(c, GP_SEV_SKIPPED, "system", "one GPU and no NIC: no peer-to-peer traffic to redirect");
	return 1;
}

/* 1 when b is on a GPU/NIC pair's path and its registers were read. */
static int readable(const struct gp_acs_bridge *b)
{
	return b->npairs && b->state == GP_PRESENT;
}

/* Bridges on a pair's path whose ACS was not read: one finding on "system" saying so (unknown live,
 * skipped under a root: acs.unreadable tells why). Returns their number. */
static int unread_note(struct gp_doctor_ctx *c)
{
	int n = 0;
	struct gp_finding *f;

	for (int i = 0; i < c->acs.n; i++)
		n += c->acs.b[i].npairs && c->acs.b[i].state != GP_PRESENT;
	if (!n)
		return 0;
	if (c->root->live)
		f = gp_doctor_add(c, GP_SEV_UNKNOWN, "system", "the ACS registers of %d bridge(s) on GPU/NIC paths could not "
				  "be read (see acs.unreadable)", n);
	else
		f = gp_doctor_add(c, GP_SEV_SKIPPED, "system", "the ACS registers of %d bridge(s) on GPU/NIC paths are not in "
				  "the root %s (see acs.unreadable)", n, c->root->dir);
	gp_finding_fix(f, "run as root (sudo gpup2p doctor), or take the snapshot as root");
	return n;
}

/* The end of a check: "ok" on the system when it raised nothing and nothing was unreadable. */
static void all_clear(struct gp_doctor_ctx *c, int alarms, int unread, int checked, const char *what)
{
	struct gp_finding *f;

	if (alarms || unread)
		return;
	if (checked)
		f = gp_doctor_add(c, GP_SEV_OK, "system", "%s on none of the %d bridge(s) on GPU/NIC paths", what, checked);
	else
		f = gp_doctor_add(c, GP_SEV_OK, "system", "no bridge on a GPU/NIC path has an ACS capability");
	gp_finding_ev(f, "bridges", "%d with ACS on GPU/NIC paths", checked);
}

/* Call one() for each bridge on a GPU/NIC path whose registers were read and whose control register
 * has a bit of mask set; "ok" (what: those bits) when none has, or the note on unread bridges. */
static void each_set(struct gp_doctor_ctx *c, uint16_t mask, const char *what,
		     void (*one)(struct gp_doctor_ctx *c, const struct gp_acs_bridge *b))
{
	int alarms = 0, checked = 0, unread;

	if (no_pairs(c))
		return;
	unread = unread_note(c);
	for (int i = 0; i < c->acs.n; i++) {
		const struct gp_acs_bridge *b = &c->acs.b[i];

		if (!readable(b))
			continue;
		checked++;
		if (b->ctl & mask) {
			alarms++;
			one(c, b);
		}
	}
	all_clear(c, alarms, unread, checked, what);
}

/* The fix for redirection or egress control on bridge b, chosen from what doctor knows: where the
 * IOMMU translates for a device below it, gpup2p acs --disable refuses, so iommu=pt first, then the
 * unit; where VFIO owns one, clearing ACS would open a guest's isolation: leave it; else clear it now
 * and at every boot (the unit, or the boot parameter for every redirecting bridge on a GPU/NIC path,
 * as the /etc/default/grub line GRUB keeps whole). what: " (clears EgressCtrl too)" or "". */
static void acs_fix(struct gp_doctor_ctx *c, struct gp_finding *f, const struct gp_acs_bridge *b, const char *what)
{
	struct gp_buf bp = GP_BUF_INIT, line = GP_BUF_INIT;
	char why[384];
	int kind = gp_acs_bridge_unsafe(c->pci, b->pci, why, sizeof(why));

	switch (kind) {
	case GP_ACS_UNSAFE_VFIO:
		gp_finding_fix(f, "none while VFIO owns a device below it: %s (gpup2p acs --disable refuses; unbind "
			       "it from VFIO first)", why);
		break;
	case GP_ACS_UNSAFE_IOMMU:
		gp_acs_grub_line("iommu=pt", &line);
		gp_finding_fix(f, "first boot with iommu=pt (the IOMMU translates here, so gpup2p acs --disable "
			       "refuses): add to /etc/default/grub %s, run update-grub, reboot; then "
			       "systemctl enable --now gpup2p-acs.service (gpup2p acs --disable%s, now and at every boot)",
			       gp_buf_str(&line), what);
		break;
	default:
		if (gp_acs_boot_param(c->topo, &c->acs, &bp) || !bp.len)
			gp_buf_addf(&bp, "pci=disable_acs_redir=%s", bdev(c, b)->bdf);
		gp_acs_grub_line(gp_buf_str(&bp), &line);
		gp_finding_fix(f, "gpup2p acs --disable (as root, now%s); at boot: " FIX_BOOT ", or the kernel "
			       "parameter, added to /etc/default/grub (then update-grub): %s", what, gp_buf_str(&line));
	}
	gp_buf_free(&bp);
	gp_buf_free(&line);
}

static void redirect_one(struct gp_doctor_ctx *c, const struct gp_acs_bridge *b)
{
	struct gp_buf txt = GP_BUF_INIT;
	struct gp_finding *f;
	enum pick how = b->impact == GP_ACS_IMPACT_HIGH ? LOCAL : ALL;
	char r[48], dec[64];

	/* a root port redirecting into a translating IOMMU: every peer request of its PCIe pairs is
	 * translated (or refused) on the way, as in NCCL hangs between GPUs on two root ports (NODE) */
	if (how == ALL && bdev(c, b)->port_type == GP_PORT_ROOT && pairs(c, b, TRANSLATED, NULL, NULL))
		how = TRANSLATED;
	pairs(c, b, how, &txt, NULL);
	bits(b->ctl & (GP_ACS_RR | GP_ACS_CR), dec, sizeof(dec));
	if (how == LOCAL)
		f = gp_doctor_add(c, GP_SEV_ERROR, bdev(c, b)->bdf, "%s with %s: peer traffic goes up to the root complex, "
				  "though %s would otherwise stay below the host bridge (slow P2P, or a hang)",
				  role(c, b, r, sizeof(r)), dec, gp_buf_str(&txt));
	else if (how == TRANSLATED)
		f = gp_doctor_add(c, GP_SEV_WARNING, bdev(c, b)->bdf, "%s with %s and the IOMMU translating: peer traffic "
				  "of %s goes through the IOMMU (slow P2P, or a hang)", role(c, b, r, sizeof(r)), dec,
				  gp_buf_str(&txt));
	else
		f = gp_doctor_add(c, GP_SEV_INFO, bdev(c, b)->bdf, "%s with %s: redirects peer traffic, but its pairs cross "
				  "the root complex anyway or use NVLink (%s)", role(c, b, r, sizeof(r)), dec,
				  gp_buf_str(&txt));
	pairs(c, b, how, NULL, f);
	acs_fix(c, f, b, "");
	registers(f, b);
	gp_finding_ev(f, "impact", "%s", gp_acs_impact_name(b->impact));
	if (how == TRANSLATED)
		gp_finding_ev(f, "iommu", "translating (DMA/DMA-FQ) for %s", gp_buf_str(&txt));
	gp_buf_free(&txt);
}

static void check_redirect(struct gp_doctor_ctx *c)
{
	each_set(c, GP_ACS_RR | GP_ACS_CR, "ReqRedir/CmpltRedir set", redirect_one);
}

static void egress_one(struct gp_doctor_ctx *c, const struct gp_acs_bridge *b)
{
	struct gp_buf txt = GP_BUF_INIT;
	struct gp_finding *f;
	int local = b->nlocal > 0;
	char r[48];

	pairs(c, b, local ? LOCAL : ALL, &txt, NULL);
	if (local)
		f = gp_doctor_add(c, GP_SEV_WARNING, bdev(c, b)->bdf, "%s with EgressCtrl: peer requests to the ports its "
				  "egress control vector names are blocked or redirected to the root complex, though %s would "
				  "otherwise stay below the host bridge", role(c, b, r, sizeof(r)), gp_buf_str(&txt));
	else
		f = gp_doctor_add(c, GP_SEV_INFO, bdev(c, b)->bdf, "%s with EgressCtrl, but its pairs cross the root complex "
				  "anyway or use NVLink (%s)", role(c, b, r, sizeof(r)), gp_buf_str(&txt));
	pairs(c, b, local ? LOCAL : ALL, NULL, f);
	acs_fix(c, f, b, "; clears EgressCtrl too");
	registers(f, b);
	gp_buf_free(&txt);
}

static void check_egress(struct gp_doctor_ctx *c)
{
	each_set(c, GP_ACS_EC, "EgressCtrl set", egress_one);
}

/* What clears ACS at boot: 1 something (which names it, a finding added when ok is set), 0 nothing,
 * -1 not known (a finding added saying why). */
static int boot_clearer(struct gp_doctor_ctx *c, char *which, size_t n)
{
	int rc;

	if (!gp_doctor_captured(c, "boot-acs")) {
		gp_doctor_add(c, GP_SEV_SKIPPED, "system", "the snapshot does not record what runs at boot (taken by an older "
			      "gpup2p): whether ACS is cleared again at boot cannot be told");
		return -1;
	}
	rc = gp_acs_boot_clearer(c->root, which, n);
	if (rc < 0)
		gp_doctor_missing(c, "system", GP_ACS_UNIT_DIR, rc);
	return rc < 0 ? -1 : rc;
}

static void check_boot(struct gp_doctor_ctx *c)
{
	int iommu = c->iommu.units > 0 || c->iommu.groups > 0, unread, cand = 0, checked = 0, clearer = 0, param = 0;
	const char *cmdline = c->iommu.cmdline;
	struct gp_buf list = GP_BUF_INIT, bdfs = GP_BUF_INIT, grub = GP_BUF_INIT;
	char which[GP_PATH_MAX] = "", dec[64];
	uint16_t all = 0;
	struct gp_finding *f;

	if (no_pairs(c))
		return;
	if (!gp_doctor_captured(c, "iommu")) {
		gp_doctor_add(c, GP_SEV_SKIPPED, "system", "the IOMMU state is not in the root %s (not captured)", c->root->dir);
		return;
	}
	/* without an IOMMU only the command line could set ACS at boot: no command line, no change */
	if (iommu && !gp_root_exists(c->root, "/proc/cmdline")) {
		gp_doctor_missing(c, "system", "/proc/cmdline", -ENOENT);
		return;
	}
	unread = unread_note(c);
	/* the bridges that matter (a PIX/PXB pair crosses them) whose redirect bits are clear now and
	 * set after the next boot */
	for (int i = 0; i < c->acs.n; i++) {
		const struct gp_acs_bridge *b = &c->acs.b[i];
		int by_param;
		uint16_t next, back;

		if (!readable(b) || !b->nlocal)
			continue;
		checked++;
		next = gp_acs_boot_ctl(bdev(c, b), b->cap, b->ctl, iommu, cmdline, &by_param);
		if (!(back = next & (uint16_t)~b->ctl & GP_ACS_REDIRECT))
			continue;
		all |= back;
		param |= by_param;
		gp_buf_addf(&bdfs, "%s%s", cand ? ";" : "", bdev(c, b)->bdf);
		gp_buf_addf(&list, "%s%s", cand++ ? ", " : "", bdev(c, b)->bdf);
	}
	if (cand && (clearer = boot_clearer(c, which, sizeof(which))) == 0) {
		f = gp_doctor_add(c, GP_SEV_WARNING, "gpup2p-acs.service", "ACS redirection is off now on %d bridge(s) that "
				  "PIX/PXB pairs cross (%s), but the next boot sets %s again (%s) and nothing clears it at "
				  "boot: their peer traffic would then go up to the root complex", cand, gp_buf_str(&list),
				  bits(all, dec, sizeof(dec)), param ? "pci=config_acs= on the command line"
				  : "the kernel does so when an IOMMU is on");
		gp_buf_reset(&list);
		gp_buf_addf(&list, "pci=disable_acs_redir=%s", gp_buf_str(&bdfs));
		gp_acs_grub_line(gp_buf_str(&list), &grub);
		gp_finding_fix(f, FIX_BOOT ", or the kernel parameter, added to /etc/default/grub (then update-grub): %s",
			       gp_buf_str(&grub));
		for (int i = 0; i < c->acs.n; i++) {
			const struct gp_acs_bridge *b = &c->acs.b[i];
			int by_param;
			uint16_t next;

			if (!readable(b) || !b->nlocal)
				continue;
			next = gp_acs_boot_ctl(bdev(c, b), b->cap, b->ctl, iommu, cmdline, &by_param);
			if (!(next & (uint16_t)~b->ctl & GP_ACS_REDIRECT))
				continue;
			pairs(c, b, LOCAL, NULL, f);
			gp_finding_ev(f, bdev(c, b)->bdf, "ACS control 0x%04x now, 0x%04x after the next boot (config 0x%x)",
				      b->ctl, next, b->ctl_off);
		}
		gp_finding_ev(f, "at boot", "no enabled gpup2p-acs unit in " GP_ACS_UNIT_DIR "/*.wants, no gpup2p acs "
			      "--disable in " GP_ACS_BOOT_SCRIPT);
	} else if (clearer < 0 || unread) {
		f = NULL;
	} else if (cand) {
		f = gp_doctor_add(c, GP_SEV_OK, "system", "the next boot sets ACS redirection again on %d bridge(s) (%s), and %s "
				  "clears it", cand, gp_buf_str(&list), which);
	} else if (!iommu) {
		f = gp_doctor_add(c, GP_SEV_OK, "system", "no IOMMU: the kernel leaves ACS as firmware set it at boot");
	} else if (!checked) {
		f = gp_doctor_add(c, GP_SEV_OK, "system", "no bridge with ACS carries a PIX/PXB pair");
	} else {
		f = gp_doctor_add(c, GP_SEV_OK, "system", "the next boot leaves ACS redirection as it is now on the %d bridge(s) "
				  "PIX/PXB pairs cross", checked);
	}
	gp_finding_ev(f, "iommu", "%s", iommu ? c->iommu.unit_names : "none registered");
	gp_finding_ev(f, "/proc/cmdline", "%s", cmdline[0] ? cmdline : "no IOMMU or ACS options");
	gp_buf_free(&list);
	gp_buf_free(&bdfs);
	gp_buf_free(&grub);
}

static void check_unreadable(struct gp_doctor_ctx *c)
{
	int n = 0, on_path = 0;
	char r[48];
	struct gp_finding *f;

	if (no_pairs(c))
		return;
	for (int i = 0; i < c->acs.n; i++) {
		const struct gp_acs_bridge *b = &c->acs.b[i];
		const struct gp_pci_dev *d = bdev(c, b);
		struct gp_buf txt = GP_BUF_INIT;

		if (!b->npairs)
			continue;
		on_path++;
		if (b->state == GP_PRESENT)
			continue;
		n++;
		pairs(c, b, ALL, &txt, NULL);
		if (c->root->live)
			f = gp_doctor_add(c, GP_SEV_UNKNOWN, d->bdf, "%s: ACS registers not readable (extended config space "
					  "is readable by root only): whether it redirects %s is unknown", role(c, b, r, sizeof(r)),
					  gp_buf_str(&txt));
		else
			f = gp_doctor_add(c, GP_SEV_UNKNOWN, d->bdf, "%s: ACS registers not in the root (%d bytes of config "
					  "space: captured by a non-root user): whether it redirects %s is unknown",
					  role(c, b, r, sizeof(r)), d->config_len, gp_buf_str(&txt));
		pairs(c, b, ALL, NULL, f);
		gp_finding_fix(f, c->root->live ? "run as root: sudo gpup2p doctor" : "take the snapshot as root: sudo gpup2p snapshot");
		gp_finding_ev(f, "config space", "%d bytes readable", d->config_len);
		gp_buf_free(&txt);
	}
	if (n)
		return;
	if (on_path)
		f = gp_doctor_add(c, GP_SEV_OK, "system", "the ACS registers of all %d bridge(s) on GPU/NIC paths were read",
				  on_path);
	else
		f = gp_doctor_add(c, GP_SEV_OK, "system", "no bridge on a GPU/NIC path has an ACS capability");
	gp_finding_ev(f, "bridges", "%d with ACS on GPU/NIC paths", on_path);
}

static const struct gp_doctor_check checks[] = {
	{ "acs.redirect", "ACS redirects peer traffic on a bridge between GPUs or NICs", GP_SRC_CFG, 0, check_redirect,
	  "Reads the ACS control register of every bridge (and multi-function GPU/NIC function) on a GPU-GPU or "
	  "GPU-NIC path, as gpup2p acs does. Error when ReqRedir or CmpltRedir is set on a bridge that a PIX/PXB "
	  "pair crosses (a switch port: traffic that would stay below the host bridge goes up to the root complex "
	  "and back: slow, or a hang). Warning on a root port whose PCIe pairs (no NVLink between them) the "
	  "IOMMU translates (DMA, DMA-FQ): redirected peer traffic goes through the IOMMU (NCCL hangs between GPUs "
	  "on two root ports). Info when every pair it carries crosses the root complex anyway or uses NVLink, "
	  "with pass-through or no IOMMU. Fix: gpup2p acs --disable, and at boot the gpup2p-acs unit or pci=disable_acs_redir=BDF." },
	{ "acs.egress", "ACS Egress Control on a bridge between GPUs or NICs", GP_SRC_CFG, 0, check_egress,
	  "Reads the ACS control register as acs.redirect does. Warning when EgressCtrl is set on a bridge a "
	  "PIX/PXB pair crosses (peer requests to the ports its egress control vector names are blocked or "
	  "redirected); info when its pairs cross the root complex anyway. Fix: gpup2p acs --disable "
	  "(clears it with the redirect bits), pci=disable_acs_redir=BDF at boot." },
	{ "acs.boot", "ACS redirection cleared now comes back at the next boot", GP_SRC_CFG | GP_SRC_SYSFS | GP_SRC_PROC,
	  0, check_boot,
	  "Predicts the ACS control register of each bridge a PIX/PXB pair crosses after the next boot: with an "
	  "IOMMU registered (/sys/class/iommu) the kernel sets ReqRedir and CmpltRedir where the capability has "
	  "them; pci=disable_acs_redir= clears them, pci=config_acs= sets or clears what it names. Warning when "
	  "redirection is off now and would be on after the boot, and nothing clears it at boot: no enabled "
	  "gpup2p-acs unit (a link in /etc/systemd/system/*.wants) and no gpup2p acs --disable in /etc/rc.local. "
	  "With no IOMMU the kernel leaves ACS as firmware set it: no alarm. Fix: systemctl enable "
	  "gpup2p-acs.service, or pci=disable_acs_redir=BDF;BDF." },
	{ "acs.unreadable", "the ACS registers of a bridge between GPUs or NICs could not be read", GP_SRC_CFG, 0,
	  check_unreadable,
	  "Unknown for each bridge on a GPU/NIC path whose ACS capability lies in extended config space that could "
	  "not be read: it is readable by root only (a snapshot taken by another user holds 64 bytes of it). The "
	  "other acs checks cannot see those bridges. Fix: run as root, or take the snapshot as root." },
};

GP_DOCTOR_FAMILY(gp_doctor_fam_acs, "acs", "PCIe Access Control Services", checks);
