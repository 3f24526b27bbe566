/* Unit tests: doctor --expect's set-ups on the healthy 8-GPU 8-NIC tree (tests/fixtures/doctor/healthy.spec):
 * an expectation it meets, and one it falls short of in every field. */
#ifndef GPUP2P_TEST_EXPECT_FX_H
#define GPUP2P_TEST_EXPECT_FX_H

#include <stdio.h>
#include <string.h>

#include "doctor_fx.h"

/* doctor --expect on the healthy 8-GPU 8-NIC tree: what it has (quiet), or one more of everything (fire). */
static inline void expect_text(struct gp_doctor_ctx *c, const char *text)
{
	static struct gp_expect e;
	struct gp_err err = { 0 };
	FILE *f = fmemopen((void *)text, strlen(text), "r");

	CHECK(f && !gp_expect_parse(&e, f, "unit.expect", &err), "the unit's expect file parses: %s", err.msg);
	if (f)
		fclose(f);
	c->expect = &e;
}
static inline void expect_same(struct fx *x, struct gp_doctor_ctx *c)
{
	(void)x;
	expect_text(c, "gpu.count = 8\ngpu.model = NVIDIA H100 80GB HBM3\ngpu.link = gen5 x16\ngpu.nvlinks = 18\n"
		    "gpu.numa = 0\ngpu.numa[0000:93:00.0] = 1\ngpu.numa[0000:94:00.0] = 1\ngpu.numa[0000:b3:00.0] = 1\n"
		    "gpu.numa[0000:b4:00.0] = 1\nnic.count = 8\nnic.rate = 400\nnic.link = x16\nnic.numa = 0\n"
		    "nic.numa[0000:95:00.0] = 1\nnic.numa[0000:96:00.0] = 1\nnic.numa[0000:b5:00.0] = 1\n"
		    "nic.numa[0000:b6:00.0] = 1\n");
}
static inline void expect_more(struct fx *x, struct gp_doctor_ctx *c)
{
	(void)x;
	expect_text(c, "gpu.count = 9\ngpu.model = NVIDIA H200\ngpu.link = gen6\ngpu.nvlinks = 18\n"
		    "gpu.nvlinks[0000:13:00.0] = 19\ngpu.numa = 1\nnic.count = 8\nnic.numa[0000:ff:00.0] = 0\n"
		    "nic.rate = 800 Gb/s\nnic.link = gen5 x32\nnic.numa = 1\n");
}

#endif
