/* gpup2p — a function's config space as the scan captured it: reads of the captured bytes, the
 * capabilities found in them, and the subsystem ids libpci would take from them. */
#include <string.h>
#include <unistd.h>

#include <pci/pci.h>

#include "gpup2p/pci.h"
#include "pci/internal.h"

/* One byte of the captured config space: the last window read that holds it, else the standard bytes
 * and the first extended header, else 0 (not read). */
static unsigned cfg_byte(const struct gp_pci_dev *d, int off)
{
	for (int k = GP_EXT_N - 1; k >= 0; k--)
		if (off >= d->ext[k].off && off < d->ext[k].off + d->ext[k].len)
			return d->ext[k].b[off - d->ext[k].off];
	return off < (int)sizeof(d->config) ? d->config[off] : 0;
}

int64_t gp_pci_cfg_read(const struct gp_pci_dev *d, int off, int width)
{
	uint64_t v = 0;

	if (off < 0 || width < 1 || width > 4 || off + width > d->config_len)
		return -1;
	for (int i = width - 1; i >= 0; i--)
		v = (v << 8) | cfg_byte(d, off + i);
	return (int64_t)v;
}

/* Read an extended capability's registers into window k (GP_CFG_WIN bytes at most, what the file
 * gives); cfg: the config file, open; whole: that file read whole (wlen bytes), or NULL. */
static void read_ext_cap(int cfg, const char *whole, ssize_t wlen, struct gp_pci_dev *g, int k, int off)
{
	struct gp_cfg_win *w = &g->ext[k];
	int n = off + GP_CFG_WIN <= GP_CFG_MAX ? GP_CFG_WIN : GP_CFG_MAX - off, got = 0, rc;

	if (whole) { /* the file read whole: its bytes there, as pread gives them */
		if (wlen > off)
			memcpy(w->b, whole + off, (size_t)(got = wlen - off < n ? (int)(wlen - off) : n));
	} else {
		for (; cfg >= 0 && got < n; got += rc)
			if ((rc = (int)pread(cfg, w->b + got, (size_t)(n - got), off + got)) <= 0)
				break;
	}
	w->off = (uint16_t)off;
	w->len = (uint16_t)got;
}

/* Capabilities from libpci's list, trusted only where the config space was readable. */
void gp_pci_fill_caps(struct gp_pci_dev *g, struct pci_dev *d, int cfg, const char *whole, ssize_t wlen)
{
	struct pci_cap *c;
	int conventional_ok = g->config_len >= 256;

	g->pcie_cap = conventional_ok ? 0 : -1;
	g->port_type = conventional_ok ? GP_PORT_NONE : GP_PORT_UNKNOWN;
	for (c = d->first_cap; c; c = c->next) {
		if (c->type == PCI_CAP_NORMAL && c->id == PCI_CAP_ID_EXP && (int)c->addr + 4 <= g->config_len) {
			int64_t flags = gp_pci_cfg_read(g, (int)c->addr + 2, 2);

			g->pcie_cap = (int)c->addr;
			g->port_type = flags < 0 ? GP_PORT_UNKNOWN : (enum gp_port_type)((flags >> 4) & 0xf);
		}
	}
	/* A PCIe function's extended space needs the full 4096 bytes; a conventional
	 * function (256 bytes, no PCIe capability) has none at all. */
	g->ext_known = g->config_len >= GP_CFG_MAX || (conventional_ok && g->pcie_cap == 0);
	g->acs_cap = g->rebar_cap = g->ats_cap = g->ext_known ? 0 : -1;
	if (g->config_len < GP_CFG_MAX)
		return;
	for (c = d->first_cap; c; c = c->next) {
		if (c->type != PCI_CAP_EXTENDED || (int)c->addr + 8 > g->config_len)
			continue;
		if (c->id == PCI_EXT_CAP_ID_ACS && !g->acs_cap)
			g->acs_cap = (int)c->addr;
		else if (c->id == PCI_EXT_CAP_ID_REBAR && !g->rebar_cap)
			g->rebar_cap = (int)c->addr;
		else if (c->id == PCI_EXT_CAP_ID_ATS && !g->ats_cap)
			g->ats_cap = (int)c->addr;
	}
	if (g->acs_cap > 0)
		read_ext_cap(cfg, whole, wlen, g, GP_EXT_ACS, g->acs_cap);
	if (g->rebar_cap > 0)
		read_ext_cap(cfg, whole, wlen, g, GP_EXT_REBAR, g->rebar_cap);
	if (g->ats_cap > 0)
		read_ext_cap(cfg, whole, wlen, g, GP_EXT_ATS, g->ats_cap);
}

/* A config word as libpci reads it from the bytes read (past them, the file is shorter: all ones). */
static int lp_word(const struct gp_pci_dev *g, int off)
{
	return off + 2 <= g->config_len ? (int)gp_pci_cfg_read(g, off, 2) : 0xffff;
}

/* The subsystem ids where sysfs gives none, as libpci's generic fill takes them from config space by
 * header type (a bridge's from its SSVID capability); 0 where it finds none. */
void gp_pci_subsys_from_config(struct gp_pci_dev *g, struct pci_dev *d)
{
	int ht = (g->config_len > 0x0e ? g->config[0x0e] : 0xff) & 0x7f, at = -1;

	if (ht == PCI_HEADER_TYPE_NORMAL)
		at = PCI_SUBSYSTEM_VENDOR_ID;
	else if (ht == PCI_HEADER_TYPE_CARDBUS)
		at = PCI_CB_SUBSYSTEM_VENDOR_ID;
	for (struct pci_cap *c = d->first_cap; ht == PCI_HEADER_TYPE_BRIDGE && c && at < 0; c = c->next)
		if (c->type == PCI_CAP_NORMAL && c->id == PCI_CAP_ID_SSVID)
			at = (int)c->addr + PCI_SSVID_VENDOR;
	g->subvendor = at < 0 ? 0 : (uint16_t)lp_word(g, at);
	g->subdevice = at < 0 ? 0 : (uint16_t)lp_word(g, at + 2);
}
