/* gpup2p — BARs and Resizable BAR: every BAR of a function, the VRAM aperture
 * (largest 64-bit prefetchable BAR) against VRAM size, and the verdict
 * "large BAR" (aperture >= VRAM: BAR1 P2P and unrestricted pinning work). */
#ifndef GPUP2P_BAR_H
#define GPUP2P_BAR_H

#include <stddef.h>
#include <stdint.h>

#include "gpup2p/gpu.h"
#include "gpup2p/pci.h"

#define GP_REBAR_MAX 6
#define GP_REBAR_LOG_MAX 43      /* largest defined size encoding: 1 MiB << 43 = 8 EiB; above: reserved */

struct gp_rebar_entry {
	int bar;                 /* BAR index the entry controls */
	uint64_t sizes;          /* bit k set: 1 MiB << k supported (k = 0 … 43) */
	int cur_log;             /* size encoding of the control register (6 bits, 0 … 63) */
	uint64_t cur_size;       /* current size in bytes (1 MiB << cur_log); 0 when cur_log is reserved */
};

struct gp_rebar {
	enum gp_known known;     /* UNKNOWN when extended config space was not readable */
	int n;
	struct gp_rebar_entry e[GP_REBAR_MAX];
};

enum gp_bar_verdict {
	GP_BAR_NO_APERTURE = 0,  /* no 64-bit prefetchable BAR at all */
	GP_BAR_LARGE,            /* aperture >= VRAM */
	GP_BAR_SMALL,            /* aperture < VRAM */
	GP_BAR_UNKNOWN,          /* VRAM size not known */
};

struct gp_bar_report {
	int aperture_bar;        /* index of the VRAM aperture, -1 none */
	uint64_t aperture;       /* its size in bytes */
	int aperture_assigned;   /* an address was assigned to it */
	uint64_t vram;           /* bytes, 0 unknown */
	uint64_t driver_bar1;    /* BAR1 size the driver reports, 0 unknown */
	enum gp_bar_verdict verdict;
	int unassigned;          /* BARs with a size but no address */
	struct gp_rebar rebar;
	uint64_t rebar_max;      /* largest size the aperture's ReBAR entry supports, 0 none/unknown */
	char advice[256];        /* what a small or unassigned BAR limits and how to fix it, "" none */
};

/* Bytes of a ReBAR size encoding (0 = 1 MiB … 43 = 8 EiB), or 0 for a reserved encoding (< 0, > 43). */
uint64_t gp_bar_rebar_size(int log);

/* Decode the Resizable BAR capability of a function. */
void gp_bar_rebar_decode(const struct gp_pci_dev *d, struct gp_rebar *rb);

/* Build the BAR report of a function; facts (may be NULL) give VRAM. */
void gp_bar_report(const struct gp_pci_dev *d, const struct gp_gpu_facts *facts, struct gp_bar_report *r);

/* "large BAR", "small BAR", "unknown", "no aperture". */
const char *gp_bar_verdict_name(enum gp_bar_verdict v);

/* Human size with binary units: "256M", "128G", "1.5G", "16K", "128" (bytes). Returns buf. */
const char *gp_bar_size_str(uint64_t bytes, char *buf, size_t n);

/* Comma-separated list of the sizes in a ReBAR size mask ("256M,512M,1G"). Returns buf. */
const char *gp_bar_sizes_str(uint64_t sizes, char *buf, size_t n);

#endif
