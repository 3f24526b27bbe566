/* gpup2p — PCI addresses: parsing, ordering and lookup by BDF. The bottom of the pci module: it calls
 * nothing else of it, so pci.c and pci_sysfs.c can both use it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpup2p/pci.h"

/* One hex field of 1..max digits followed by `end` ('\0': the string's end). Where it ends, or NULL. */
static const char *hex_field(const char *s, int max, char end, unsigned *v)
{
	int k = 0;

	*v = 0;
	for (; k < max && s[k]; k++) {
		char c = s[k];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
			c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;

		if (d < 0)
			break;
		*v = *v << 4 | (unsigned)d;
	}
	if (k == 0 || s[k] != end)
		return NULL;
	return s + k;
}

int gp_pci_addr_parse(const char *s, struct gp_pci_addr *a)
{
	unsigned dom = 0, bus = 0, dev = 0, fn = 0;
	const char *q = s;
	int colons = 0;

	if (!s)
		return -EINVAL;
	for (const char *c = s; *c; c++)
		colons += *c == ':';
	/* "bb:dd.f" or "dddd:bb:dd.f": the domain takes up to 8 digits (NVML's "%08x", Intel VMD's
	 * 10000 and up; libpci takes domains up to 0x7fffffff) */
	if (colons == 2 && (q = hex_field(s, 8, ':', &dom)))
		q++;
	if (colons < 1 || colons > 2 || !q)
		return -EINVAL;
	q = hex_field(q, 2, ':', &bus);
	q = q ? hex_field(q + 1, 2, '.', &dev) : NULL;
	q = q ? hex_field(q + 1, 1, '\0', &fn) : NULL;
	if (!q || dom > 0x7fffffff || dev > 0x1f || fn > 7)
		return -EINVAL;
	a->domain = (int)dom;
	a->bus = (int)bus;
	a->dev = (int)dev;
	a->func = (int)fn;
	return 0;
}

void gp_pci_addr_format(const struct gp_pci_addr *a, char out[GP_BDF_LEN])
{
	snprintf(out, GP_BDF_LEN, "%04x:%02x:%02x.%x", (unsigned)a->domain & 0x7fffffffu, (unsigned)a->bus & 0xffu,
		 (unsigned)a->dev & 0x1fu, (unsigned)a->func & 7u);
}

int gp_pci_parse_bdf(const char *s, char out[GP_BDF_LEN])
{
	struct gp_pci_addr a;

	if (gp_pci_addr_parse(s, &a))
		return -EINVAL;
	gp_pci_addr_format(&a, out);
	return 0;
}

int gp_pci_addr_cmp(const struct gp_pci_addr *x, const struct gp_pci_addr *y)
{
	if (x->domain != y->domain)
		return x->domain < y->domain ? -1 : 1;
	if (x->bus != y->bus)
		return x->bus < y->bus ? -1 : 1;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->func < y->func ? -1 : x->func > y->func;
}

int gp_pci_index(const struct gp_pci *p, const char *bdf)
{
	struct gp_pci_addr want;
	int lo = 0, hi = p->n - 1;

	if (gp_pci_addr_parse(bdf, &want))
		return -1;
	/* p->devs is sorted by address (gp_pci_scan) */
	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;
		const struct gp_pci_dev *d = &p->devs[mid];
		struct gp_pci_addr at = { d->domain, d->bus, d->dev, d->func };
		int c = gp_pci_addr_cmp(&at, &want);

		if (c == 0)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

const struct gp_pci_dev *gp_pci_find(const struct gp_pci *p, const char *bdf)
{
	int i = gp_pci_index(p, bdf);

	return i < 0 ? NULL : &p->devs[i];
}
