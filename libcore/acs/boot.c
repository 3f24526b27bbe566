/* gpup2p — ACS at the next boot: what the kernel will leave in a bridge's ACS control register
 * (with an IOMMU it sets SrcValid, ReqRedir, CmpltRedir and UpstreamFwd where the capability has
 * them; pci=disable_acs_redir= and pci=config_acs= change that afterwards, with or without an
 * IOMMU), and what clears the redirection once the system is up (the gpup2p-acs unit enabled, or a
 * boot script that runs gpup2p acs --disable). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpup2p/acs.h"
#include "gpup2p/acs_write.h"
#include "gpup2p/buf.h"

/* 1 when a device spec of the two parameters names d: "[DDDD:]BB:DD.F" or "pci:VVVV:DDDD[:SV:SD]".
 * The path form (BB:DD.F/DD.F) names a device by the route to it: not matched. */
static int spec_matches(const char *s, size_t len, const struct gp_pci_dev *d)
{
	char buf[64];
	unsigned v, dv, sv, sd;
	struct gp_pci_addr a;
	int n = 0;

	if (len >= sizeof(buf))
		return 0;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (!strncmp(buf, "pci:", 4)) {
		int k = sscanf(buf + 4, "%x:%x:%x:%x%n", &v, &dv, &sv, &sd, &n);

		if (k == 4 && !buf[4 + n])
			return v == d->vendor && dv == d->device && sv == d->subvendor && sd == d->subdevice;
		return sscanf(buf + 4, "%x:%x%n", &v, &dv, &n) == 2 && !buf[4 + n] && v == d->vendor && dv == d->device;
	}
	if (strchr(buf, '/'))
		return 0;
	if (gp_pci_addr_parse(buf, &a))
		return 0;
	return a.domain == d->domain && a.bus == d->bus && a.dev == d->dev && a.func == d->func;
}

/* Apply one option's value (the list after "disable_acs_redir=" or "config_acs=") to *ctl. */
static void apply_list(const char *list, size_t len, int config, const struct gp_pci_dev *d, uint16_t *ctl, int *hit)
{
	const char *end = list + len;

	for (const char *e = list; e < end;) {
		const char *semi = memchr(e, ';', (size_t)(end - e)), *stop = semi ? semi : end;
		const char *at = memchr(e, '@', (size_t)(stop - e));

		if (!config) {
			if (spec_matches(e, (size_t)(stop - e), d)) {
				*ctl &= (uint16_t)~GP_ACS_REDIRECT;
				*hit = 1;
			}
		} else if (!at || spec_matches(at + 1, (size_t)(stop - at - 1), d)) {
			/* flags: the last character is bit 0 (SrcValid); '1' set, '0' clear, 'x' leave */
			const char *f = e, *fe = at ? at : stop;

			for (int bit = 0; fe - 1 - bit >= f && bit < 16; bit++) {
				char ch = fe[-1 - bit];

				if (ch == '1')
					*ctl |= (uint16_t)(1u << bit);
				else if (ch == '0')
					*ctl &= (uint16_t)~(1u << bit);
			}
			*hit = 1;
		}
		e = semi ? semi + 1 : end;
	}
}

uint16_t gp_acs_boot_ctl(const struct gp_pci_dev *d, uint16_t cap, uint16_t ctl, int iommu, const char *cmdline,
			 int *by_param)
{
	uint16_t v = ctl;

	*by_param = 0;
	if (iommu) /* pci_std_enable_acs(): the redirect bits the kernel sets (TB only on untrusted ports) */
		v |= cap & (GP_ACS_SV | GP_ACS_RR | GP_ACS_CR | GP_ACS_UF);
	/* the kernel applies disable_acs_redir first, then config_acs: do the same, token by token */
	for (int pass = 0; pass < 2; pass++) {
		const char *opt = pass ? "config_acs=" : "disable_acs_redir=";

		for (const char *t = cmdline; t && *t;) {
			size_t tl;

			t += strspn(t, " \t\n");
			tl = strcspn(t, " \t\n");
			if (tl > 4 && !strncmp(t, "pci=", 4)) {
				/* pci= takes a comma list of options */
				for (const char *o = t + 4, *te = t + tl; o < te;) {
					const char *comma = memchr(o, ',', (size_t)(te - o)), *oe = comma ? comma : te;
					size_t ol = strlen(opt);

					if ((size_t)(oe - o) > ol && !strncmp(o, opt, ol))
						apply_list(o + ol, (size_t)(oe - o) - ol, pass, d, &v, by_param);
					o = comma ? comma + 1 : te;
				}
			}
			t += tl;
		}
	}
	return v;
}

int gp_acs_boot_unit_name(const char *name)
{
	size_t l = strlen(name);

	return !strncmp(name, "gpup2p-acs", 10) && l >= 18 && !strcmp(name + l - 8, ".service");
}

int gp_acs_boot_script_line(const char *line, size_t len)
{
	char buf[512];
	const char *p, *hash;

	if (len >= sizeof(buf))
		return 0;
	memcpy(buf, line, len);
	buf[len] = '\0';
	p = strstr(buf, "gpup2p");
	hash = strchr(buf, '#');
	return p && (!hash || hash > p) && strstr(p, " acs") && strstr(p, "--disable");
}

int gp_acs_boot_clearer(const struct gp_root *r, char *which, size_t n)
{
	char **dirs = NULL, **units = NULL, p[GP_PATH_MAX], *rc = NULL;
	int nd = gp_root_list(r, GP_ACS_UNIT_DIR, &dirs), found = 0;
	ssize_t len;

	for (int i = 0; i < nd && !found; i++) {
		size_t l = strlen(dirs[i]);
		int nu;

		if (l < 6 || strcmp(dirs[i] + l - 6, ".wants"))
			continue;
		snprintf(p, sizeof(p), GP_ACS_UNIT_DIR "/%s", dirs[i]);
		nu = gp_root_list(r, p, &units);
		for (int k = 0; k < nu && !found; k++)
			if (gp_acs_boot_unit_name(units[k])) {
				snprintf(which, n, "%s/%s", p, units[k]);
				found = 1;
			}
		gp_root_free_list(units);
	}
	gp_root_free_list(dirs);
	if (nd < 0 && nd != -ENOENT)
		return nd;
	if (found)
		return 1;
	len = gp_root_read_alloc(r, GP_ACS_BOOT_SCRIPT, &rc, 1u << 20);
	for (const char *l = rc; len > 0 && l && *l && !found;) {
		size_t ll = strcspn(l, "\n");

		if (gp_acs_boot_script_line(l, ll)) {
			snprintf(which, n, "%s: %.*s", GP_ACS_BOOT_SCRIPT, (int)(ll < 200 ? ll : 200), l);
			found = 1;
		}
		l += ll + (l[ll] == '\n');
	}
	free(rc);
	return found;
}

int gp_acs_grub_line(const char *param, struct gp_buf *b)
{
	if (gp_buf_addf(b, "GRUB_CMDLINE_LINUX=\"$GRUB_CMDLINE_LINUX "))
		return -ENOMEM;
	for (const char *p = param; *p; p++)
		if (gp_buf_addf(b, "%s%c", strchr(";|&<>", *p) ? "\\" : "", *p))
			return -ENOMEM;
	return gp_buf_addf(b, "\"") ? -ENOMEM : 0;
}
