/* gpup2p — the expected baseline of a node: what GPUs and NICs it should have (count, GPU model,
 * NIC port rate, PCIe link generation and width, NVLinks up, NUMA node). One text format, read by
 * `doctor --expect FILE` and written by `report --baseline`; the same structure holds what a node
 * has (doctor's facts), so that both are compared by one rule (gp_expect_judge).
 *
 * The format, one statement a line; '#' starts a comment, blank lines are ignored:
 *   gpu.count = 8                 nic.count = 8
 *   gpu.model = NVIDIA H100 80GB HBM3
 *   gpu.link = gen5 x16           nic.link = gen5 x16     (either part may be left out)
 *   gpu.nvlinks = 18              nic.rate = 400 Gb/s
 *   gpu.numa = 0                  nic.numa = 0
 * and per device, overriding the line for every device of its kind (KEY[BDF]):
 *   gpu.numa[0000:18:00.0] = 0    nic.rate[0000:17:00.0] = 200 Gb/s */
#ifndef GPUP2P_EXPECT_H
#define GPUP2P_EXPECT_H

#include <stdio.h>

#include "gpup2p/err.h"

enum gp_expect_kind { GP_EXPECT_GPU = 0, GP_EXPECT_NIC = 1, GP_EXPECT_KINDS };

/* The facts of a device, in the order of the format's keys. */
enum gp_expect_field {
	GP_XF_MODEL = 0,     /* GPU: the name NVML gives */
	GP_XF_LINK,          /* PCIe link: generation and width */
	GP_XF_NVLINKS,       /* GPU: NVLinks up */
	GP_XF_NUMA,          /* NUMA node */
	GP_XF_RATE,          /* NIC: port rate */
	GP_XF_N
};

#define GP_EXPECT_BDF_LEN 24
#define GP_EXPECT_MODEL_LEN 96

/* One GPU or NIC: what it has (facts) or should have (a line of the file). Not known, or not stated:
 * -1 (numbers), "" (model). */
struct gp_expect_dev {
	int kind;                        /* enum gp_expect_kind */
	char bdf[GP_EXPECT_BDF_LEN];     /* "0000:18:00.0"; "" for the line of every device of the kind */
	char name[16];                   /* facts: "GPU0", "NIC3" (topo's names); "" in a file */
	char model[GP_EXPECT_MODEL_LEN];
	int gen, width;                  /* PCIe generation (1-6) and lanes */
	int nvlinks;
	int numa;
	double rate;                     /* Gb/s */
	int line[GP_XF_N];               /* a file: the line stating each field (0: not stated) */
};

struct gp_expect {
	char file[256];                  /* where it was read ("" for facts) */
	int count[GP_EXPECT_KINDS];      /* GPUs and NICs; -1 not stated */
	int count_line[GP_EXPECT_KINDS];
	struct gp_expect_dev all[GP_EXPECT_KINDS]; /* the lines of every device of a kind */
	struct gp_expect_dev *dev;       /* per device (facts: every device, GPUs first) */
	int ndev, cap;
};

/* An empty expectation (nothing stated). */
void gp_expect_init(struct gp_expect *x);

/* Release what x holds (it is empty after). */
void gp_expect_free(struct gp_expect *x);

/* Read the format from in (name: the file, in messages) into x (initialised by gp_expect_init; what it
 * held is released first). Strict: an unknown key, a key stated
 * twice, a value that does not parse, a key of the wrong kind (gpu.rate) is GP_E_USAGE with a
 * one-line message "NAME:LINE: what is wrong"; x is left empty then. 0, or -EINVAL / -ENOMEM. */
int gp_expect_parse(struct gp_expect *x, FILE *in, const char *name, struct gp_err *e);

/* A new device entry of kind (fields unknown) appended to x->dev; NULL when out of memory. */
struct gp_expect_dev *gp_expect_add(struct gp_expect *x, int kind, const char *bdf);

/* Every field of d unknown / not stated. */
void gp_expect_dev_init(struct gp_expect_dev *d, int kind);

/* The entry of x->dev with this kind and BDF, or NULL. */
const struct gp_expect_dev *gp_expect_find(const struct gp_expect *x, int kind, const char *bdf);

/* Whether field f applies to devices of kind (model and nvlinks: GPUs; rate: NICs). */
int gp_expect_field_of(int kind, enum gp_expect_field f);

/* The key's name without its kind: "model", "link", "nvlinks", "numa", "rate". */
const char *gp_expect_field_name(enum gp_expect_field f);

/* "gpu" or "nic". */
const char *gp_expect_kind_name(int kind);

/* The line that states field f for the device of kind at bdf: its own line, else the line of every
 * device of the kind; NULL when neither states it. */
const struct gp_expect_dev *gp_expect_want(const struct gp_expect *x, int kind, const char *bdf,
					   enum gp_expect_field f);

/* Field f of d as the format writes it ("gen5 x16", "400 Gb/s", "18") into buf; "" when not known.
 * Returns buf. */
const char *gp_expect_value(const struct gp_expect_dev *d, enum gp_expect_field f, char *buf, size_t n);

/* Whether field f is known (facts) or stated (a line) in d. */
int gp_expect_known(const struct gp_expect_dev *d, enum gp_expect_field f);

/* Verdicts of gp_expect_judge. */
enum gp_expect_verdict {
	GP_XV_MATCH = 0,     /* as expected */
	GP_XV_BELOW,         /* less than expected (fewer links, a lower rate, gen or width), or different
	                        (model, NUMA node): a fault */
	GP_XV_ABOVE,         /* more than expected: the expectation is out of date */
	GP_XV_UNKNOWN,       /* the fact is not known here */
};

/* have's field f against want's (both known or stated: else GP_XV_UNKNOWN when have's is not known,
 * GP_XV_MATCH when want states nothing). A link compares the parts want states. */
enum gp_expect_verdict gp_expect_judge(const struct gp_expect_dev *have, const struct gp_expect_dev *want,
				       enum gp_expect_field f);

/* Write x in the format (counts, then the lines of every device of a kind, then per device). */
void gp_expect_write(const struct gp_expect *x, FILE *out);

#endif
