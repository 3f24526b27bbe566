/* gpup2p — BAR and Resizable BAR decode. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "gpup2p/bar.h"

#define MIB (1ULL << 20)

uint64_t gp_bar_rebar_size(int log)
{
	return log >= 0 && log <= GP_REBAR_LOG_MAX ? MIB << log : 0;
}

void gp_bar_rebar_decode(const struct gp_pci_dev *d, struct gp_rebar *rb)
{
	int64_t ctl0;
	int n;

	memset(rb, 0, sizeof(*rb));
	if (d->rebar_cap < 0) {
		rb->known = GP_UNKNOWN;
		return;
	}
	if (d->rebar_cap == 0) {
		rb->known = GP_ABSENT;
		return;
	}
	ctl0 = gp_pci_cfg_read(d, d->rebar_cap + 8, 4);
	if (ctl0 < 0) {
		rb->known = GP_UNKNOWN;
		return;
	}
	rb->known = GP_PRESENT;
	n = (int)((ctl0 >> 5) & 7);
	if (n < 1 || n > GP_REBAR_MAX)
		n = 1;
	for (int i = 0; i < n; i++) {
		int64_t cap = gp_pci_cfg_read(d, d->rebar_cap + 4 + 8 * i, 4);
		int64_t ctl = gp_pci_cfg_read(d, d->rebar_cap + 8 + 8 * i, 4);
		struct gp_rebar_entry *en = &rb->e[rb->n];

		if (cap < 0 || ctl < 0)
			break;
		en->bar = (int)(ctl & 7);
		/* capability bits 31:4 = 1 MiB … 128 TiB; control bits 31:16 = 256 TiB and up */
		en->sizes = ((uint64_t)cap >> 4) & 0x0fffffffULL;
		en->sizes |= (((uint64_t)ctl >> 16) & 0xffffULL) << 28;
		en->cur_log = (int)((ctl >> 8) & 0x3f);
		en->cur_size = gp_bar_rebar_size(en->cur_log);
		rb->n++;
	}
}

const char *gp_bar_verdict_name(enum gp_bar_verdict v)
{
	switch (v) {
	case GP_BAR_NO_APERTURE: return "no aperture";
	case GP_BAR_LARGE: return "large BAR";
	case GP_BAR_SMALL: return "small BAR";
	case GP_BAR_UNKNOWN: return "unknown";
	}
	return "unknown";
}

const char *gp_bar_size_str(uint64_t bytes, char *buf, size_t n)
{
	static const char units[] = "KMGTPE";
	int u = -1;
	uint64_t v = bytes;

	while (v >= 1024 && v % 1024 == 0 && u < 5) {
		v /= 1024;
		u++;
	}
	if (u < 0 && bytes >= 1024) {
		double x = (double)bytes;

		u = -1;
		while (x >= 1024 && u < 5) {
			x /= 1024;
			u++;
		}
		snprintf(buf, n, "%.1f%c", x, units[u]);
	} else if (u < 0) {
		snprintf(buf, n, "%" PRIu64, bytes);
	} else {
		snprintf(buf, n, "%" PRIu64 "%c", v, units[u]);
	}
	return buf;
}

const char *gp_bar_sizes_str(uint64_t sizes, char *buf, size_t n)
{
	size_t used = 0;
	char one[32];

	buf[0] = '\0';
	for (int k = 0; k <= GP_REBAR_LOG_MAX; k++) {
		if (!(sizes & (1ULL << k)))
			continue;
		gp_bar_size_str(MIB << k, one, sizeof(one));
		used += (size_t)snprintf(buf + used, used < n ? n - used : 0, "%s%s", used ? "," : "", one);
		if (used >= n)
			break;
	}
	return buf;
}

void gp_bar_report(const struct gp_pci_dev *d, const struct gp_gpu_facts *facts, struct gp_bar_report *r)
{
	const struct gp_gpu_info *g = facts && facts->available ? gp_gpu_find(facts, d->bdf) : NULL;
	char a[32], b[32];

	memset(r, 0, sizeof(*r));
	r->aperture_bar = -1;
	for (int i = 0; i < 6; i++) {
		const struct gp_bar *bar = &d->bars[i];

		if (bar->size && !bar->assigned)
			r->unassigned++;
		if (bar->is_io || !bar->is_64 || !bar->prefetch)
			continue;
		if (bar->size > r->aperture) {
			r->aperture = bar->size;
			r->aperture_bar = i;
			r->aperture_assigned = bar->assigned;
		}
	}
	gp_bar_rebar_decode(d, &r->rebar);
	for (int i = 0; i < r->rebar.n; i++) {
		if (r->rebar.e[i].bar != r->aperture_bar)
			continue;
		for (int k = GP_REBAR_LOG_MAX; k >= 0; k--) {
			if (r->rebar.e[i].sizes & (1ULL << k)) {
				r->rebar_max = MIB << k;
				break;
			}
		}
	}
	if (g) {
		r->vram = g->vram;
		r->driver_bar1 = g->bar1;
	}
	if (r->aperture_bar < 0)
		r->verdict = GP_BAR_NO_APERTURE;
	else if (!r->vram)
		r->verdict = GP_BAR_UNKNOWN;
	else
		r->verdict = r->aperture >= r->vram ? GP_BAR_LARGE : GP_BAR_SMALL;

	if (r->aperture_bar >= 0 && !r->aperture_assigned) {
		snprintf(r->advice, sizeof(r->advice),
			 "BAR %d has no address: enable \"Above 4G Decoding\" in firmware or boot with pci=realloc",
			 r->aperture_bar);
	} else if (r->verdict == GP_BAR_SMALL && r->rebar_max >= r->vram) {
		snprintf(r->advice, sizeof(r->advice),
			 "P2P and pinning limited to a %s window of %s VRAM; Resizable BAR allows %s: enable "
			 "\"Above 4G Decoding\" and \"Resizable BAR\" in firmware",
			 gp_bar_size_str(r->aperture, a, sizeof(a)), gp_bar_size_str(r->vram, b, sizeof(b)),
			 gp_bar_size_str(r->rebar_max, (char[32]){ 0 }, 32));
	} else if (r->verdict == GP_BAR_SMALL) {
		snprintf(r->advice, sizeof(r->advice),
			 "P2P and pinning limited to a %s window of %s VRAM (BAR1 P2P needs the whole VRAM mapped)",
			 gp_bar_size_str(r->aperture, a, sizeof(a)), gp_bar_size_str(r->vram, b, sizeof(b)));
	}
}
