/* Unit tests: BAR and Resizable BAR decode, sizes, the large/small verdict. */
#include "gpup2p/bar.h"
#include "unit.h"

/* A register of the Resizable BAR capability at d->rebar_cap (its window, as the scan reads it). */
static void set32(struct gp_pci_dev *d, int off, uint32_t v)
{
	struct gp_cfg_win *w = &d->ext[GP_EXT_REBAR];

	w->off = (uint16_t)d->rebar_cap;
	w->len = GP_CFG_WIN;
	for (int i = 0; i < 4; i++)
		w->b[off - w->off + i] = (uint8_t)(v >> (8 * i));
}

int main(void)
{
	static struct gp_pci_dev d;
	static struct gp_gpu_facts f;
	struct gp_rebar rb;
	struct gp_bar_report r;
	char buf[256];

	CHECK_STR(gp_bar_size_str(256ULL << 20, buf, sizeof(buf)), "256M", "256 MiB");
	CHECK_STR(gp_bar_size_str(256ULL << 30, buf, sizeof(buf)), "256G", "256 GiB");
	CHECK_STR(gp_bar_size_str(16384, buf, sizeof(buf)), "16K", "16 KiB");
	CHECK_STR(gp_bar_size_str(128, buf, sizeof(buf)), "128", "128 bytes");
	CHECK_STR(gp_bar_size_str(150754820096ULL, buf, sizeof(buf)), "143771M", "H200 VRAM in MiB");
	CHECK_STR(gp_bar_size_str(1536ULL << 20 | 1, buf, sizeof(buf)), "1.5G", "non-round size");
	CHECK_STR(gp_bar_sizes_str(0x3, buf, sizeof(buf)), "1M,2M", "size mask 1M,2M");
	CHECK_STR(gp_bar_sizes_str(1ULL << 16, buf, sizeof(buf)), "64G", "size mask 64G");

	/* Resizable BAR at 0x200: two entries (BAR1 current 256M of 256M..64G, BAR3 current 32M of 32M) */
	memset(&d, 0, sizeof(d));
	snprintf(d.bdf, sizeof(d.bdf), "0000:03:00.0");
	d.config_len = 4096;
	d.rebar_cap = 0x200;
	set32(&d, 0x204, ((1u << 9) - 1) << 12);           /* cap bits 12..20: 256M .. 64G */
	set32(&d, 0x208, 1 | (2 << 5) | (8 << 8));          /* BAR1, 2 entries, current 2^8 MiB */
	set32(&d, 0x20c, 1u << 9);                          /* 32M */
	set32(&d, 0x210, 3 | (5 << 8));                     /* BAR3, current 32M */
	gp_bar_rebar_decode(&d, &rb);
	CHECK(rb.known == GP_PRESENT && rb.n == 2, "two ReBAR entries");
	CHECK(rb.e[0].bar == 1 && rb.e[0].cur_log == 8, "entry 0: BAR1 at 256M");
	CHECK_STR(gp_bar_sizes_str(rb.e[0].sizes, buf, sizeof(buf)), "256M,512M,1G,2G,4G,8G,16G,32G,64G", "entry 0 sizes");
	CHECK(rb.e[1].bar == 3 && rb.e[1].cur_log == 5, "entry 1: BAR3 at 32M");
	/* control bits 31:16 extend the list beyond 128 TiB */
	set32(&d, 0x208, 1 | (1 << 5) | (8 << 8) | (1u << 16));
	gp_bar_rebar_decode(&d, &rb);
	CHECK(rb.n == 1 && (rb.e[0].sizes & (1ULL << 28)), "control bit 16 = 256 TiB");

	/* size encodings: 0 = 1 MiB … 43 = 8 EiB (2^63 bytes); 44 … 63 are reserved: no size, no shift past 64 bits */
	CHECK(gp_bar_rebar_size(0) == 1ULL << 20 && gp_bar_rebar_size(8) == 256ULL << 20 &&
	      gp_bar_rebar_size(43) == 1ULL << 63, "size encodings 0, 8, 43: 1M, 256M, 8E");
	CHECK(gp_bar_rebar_size(44) == 0 && gp_bar_rebar_size(63) == 0 && gp_bar_rebar_size(-1) == 0,
	      "size encodings 44, 63, -1: reserved (0)");
	set32(&d, 0x208, 1 | (1 << 5) | (63u << 8));
	gp_bar_rebar_decode(&d, &rb);
	CHECK(rb.n == 1 && rb.e[0].cur_log == 63 && rb.e[0].cur_size == 0, "current size code 63: kept, size 0 (reserved)");
	set32(&d, 0x208, 1 | (1 << 5) | (43u << 8));
	gp_bar_rebar_decode(&d, &rb);
	CHECK(rb.n == 1 && rb.e[0].cur_size == 1ULL << 63, "current size code 43: 8 EiB");
	set32(&d, 0x208, 1 | (1 << 5) | (8u << 8));
	gp_bar_rebar_decode(&d, &rb);
	CHECK(rb.e[0].cur_size == 256ULL << 20, "current size code 8: 256 MiB");

	d.rebar_cap = -1;
	gp_bar_rebar_decode(&d, &rb);
	CHECK(rb.known == GP_UNKNOWN, "unreadable extended space: unknown, not absent");
	d.rebar_cap = 0;
	gp_bar_rebar_decode(&d, &rb);
	CHECK(rb.known == GP_ABSENT, "no capability: absent");

	/* verdicts */
	d.rebar_cap = 0x200;
	set32(&d, 0x208, 1 | (1 << 5) | (8 << 8));
	d.bars[0] = (struct gp_bar){ .index = 0, .start = 0xf0000000, .size = 16 << 20, .assigned = 1 };
	d.bars[1] = (struct gp_bar){ .index = 1, .start = 1ULL << 40, .size = 256 << 20, .is_64 = 1, .prefetch = 1, .assigned = 1 };
	d.bars[3] = (struct gp_bar){ .index = 3, .start = 2ULL << 40, .size = 32 << 20, .is_64 = 1, .prefetch = 1, .assigned = 1 };
	gp_bar_report(&d, NULL, &r);
	CHECK(r.aperture_bar == 1 && r.aperture == 256 << 20, "aperture is the largest 64-bit prefetchable BAR");
	CHECK(r.verdict == GP_BAR_UNKNOWN, "no VRAM known: verdict unknown");
	f.available = 1;
	f.n = 1;
	snprintf(f.gpus[0].bdf, sizeof(f.gpus[0].bdf), "0000:03:00.0");
	f.gpus[0].vram = 48ULL << 30;
	gp_bar_report(&d, &f, &r);
	CHECK(r.verdict == GP_BAR_SMALL, "256M aperture for 48G VRAM: small BAR");
	CHECK(r.rebar_max == 64ULL << 30, "ReBAR max 64G");
	CHECK(strstr(r.advice, "Resizable BAR") != NULL, "advice names Resizable BAR");
	d.bars[1].size = 64ULL << 30;
	gp_bar_report(&d, &f, &r);
	CHECK(r.verdict == GP_BAR_LARGE && !r.advice[0], "64G aperture for 48G VRAM: large BAR, no advice");
	d.bars[1].assigned = 0;
	gp_bar_report(&d, &f, &r);
	CHECK(r.unassigned == 1 && strstr(r.advice, "Above 4G") != NULL, "unassigned aperture: advice");
	d.bars[1].prefetch = 0;
	d.bars[3].prefetch = 0;
	gp_bar_report(&d, &f, &r);
	CHECK(r.verdict == GP_BAR_NO_APERTURE && r.aperture_bar == -1, "no 64-bit prefetchable BAR");
	return unit_done();
}
