/* gpup2p doctor — gpu.throttle: clocks held down for a reason that also slows copies (NVML's clock
 * event reasons, live or as a snapshot recorded them). Decided here: hardware slowdown, hardware
 * thermal slowdown, power brake and software thermal slowdown are faults whenever they are active (a
 * healthy GPU never shows them, at rest or busy): warning, naming the reason and its fix. Idle,
 * application clocks, the software power cap, sync boost and the display clock are not: a GPU at rest
 * clocks down and one at full load sits at its power limit, so without a load to compare against they
 * say nothing about copies; they are listed as evidence only.
 * With --active on a live machine each GPU is also put under load (host->GPU copies on its copy engines,
 * as p2p.bandwidth makes them) while a second thread samples NVML's reasons and the GPU's PCIe link
 * (sysfs current_link_speed and _width): under that load the power cap and an application clock setting
 * are worth an info, and a link below the speed or width both its ends support is a warning (at rest a
 * GPU trains its link down, which pcie.link_speed leaves as info). Registered in gpu.c's table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpup2p/xfer.h"
#include "p2p.h"

#define LOAD_SIZE (64ULL << 20)    /* bytes per copy under load */
#define LOAD_ITERS 8               /* copies per batch: 1 GiB in all, about 20-80 ms at PCIe Gen5-Gen3 rates */
#define LOAD_REPS 2

static const struct {
	unsigned long long bit;
	const char *name;
	int fault;
	const char *fix;
} reasons[] = {
	{ GP_CLK_HW_THERMAL, "HW thermal slowdown", 1, "the GPU is too hot: check its fans or the chassis airflow, "
	  "the inlet temperature and blanking panels (nvidia-smi -q -d TEMPERATURE shows the slowdown limit)" },
	{ GP_CLK_HW_POWER_BRAKE, "HW power brake slowdown", 1, "the board's power brake is asserted by the system: "
	  "check the power supplies (a failed or unplugged PSU, lost redundancy) and the BMC's power policy" },
	{ GP_CLK_SW_THERMAL, "SW thermal slowdown", 1, "the driver slows the GPU above its maximum operating "
	  "temperature: improve cooling (fans, airflow, inlet temperature)" },
	{ GP_CLK_HW_SLOWDOWN, "HW slowdown", 1, "clocks halved or worse by the board: with neither thermal nor "
	  "power brake beside it, check the GPU's power cables, the PSUs and the BMC's event log" },
	{ GP_CLK_SW_POWER_CAP, "SW power cap", 0, NULL },
	{ GP_CLK_APP_SETTING, "applications clocks setting", 0, NULL },
	{ GP_CLK_SYNC_BOOST, "sync boost", 0, NULL },
	{ GP_CLK_DISPLAY, "display clock setting", 0, NULL },
	{ GP_CLK_IDLE, "idle", 0, NULL },
};
#define NREASONS (int)(sizeof(reasons) / sizeof(reasons[0]))

/* "0x48 (HW thermal slowdown, HW slowdown)" of the bits in v that are faults (fault 1) or not (0). */
static void names(unsigned long long v, int fault, char *buf, size_t n)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int k = 0; k < NREASONS && len < n; k++)
		if ((v & reasons[k].bit) && reasons[k].fault == fault)
			len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? ", " : "", reasons[k].name);
}

/* One GPU under load: the copy (on the caller's thread) and what the sampler saw of its link. */
struct load {
	struct gp_doctor_ctx *c;
	struct gp_doctor_p2p *s;
	struct gp_xfer_spec x;
	struct gp_xfer_result r;
	struct gp_err e;
	char speed[96], width[96];      /* the link's sysfs files */
	double gts;                     /* the best the sampler saw under load (0 none read) */
	int lanes;
};

static int load_job(void *p)
{
	struct load *l = p;

	return gp_xfer_run(&l->s->cuda, &l->x, &l->r, &l->e);
}

/* The sampler's tick: the link's current speed and width, the best seen kept (it trains up under load). */
static void load_tick(void *p)
{
	struct load *l = p;
	char buf[64];
	double v;

	if (gp_root_read_text(l->c->root, l->speed, buf, sizeof(buf)) > 0 && (v = strtod(buf, NULL)) > l->gts)
		l->gts = v;
	if (gp_root_read_text(l->c->root, l->width, buf, sizeof(buf)) > 0 && atoi(buf) > l->lanes)
		l->lanes = atoi(buf);
}

/* What a GPU under load showed. */
struct loaded {
	int measured;                   /* 1 the copies ran */
	char why[256];                  /* why not */
	long long reasons;              /* NVML's, ORed over the samples (< 0: not known) */
	int samples;
	double gbps;                    /* the copies' median rate */
	double gts, best;               /* the link under load, and the best both ends support (0 unknown) */
	int lanes, width;
};

/* Put topology GPU i under load, sampling meanwhile. */
static void under_load(struct gp_doctor_ctx *c, int i, const struct gp_gpu_info *g, struct gp_doctor_p2p *s,
		       struct loaded *o)
{
	const struct gp_pci_dev *d = gp_doctor_dev(c, i);
	struct load *l;

	memset(o, 0, sizeof(*o));
	o->reasons = GP_GPU_UNKNOWN;
	if (!s) {
		snprintf(o->why, sizeof(o->why), "no copy possible: %s", c->p2p ? c->p2p->why : "out of memory");
		return;
	}
	if (s->cu[i] < 0) {
		snprintf(o->why, sizeof(o->why), "the GPU is not visible to CUDA");
		return;
	}
	if (!(l = calloc(1, sizeof(*l)))) {
		c->out.nomem = 1;
		snprintf(o->why, sizeof(o->why), "out of memory");
		return;
	}
	l->c = c;
	l->s = s;
	l->x = (struct gp_xfer_spec){ .kind = GP_XFER_H2D, .gpu = s->cu[i], .pinned = 1, .size = LOAD_SIZE,
				      .iters = LOAD_ITERS, .reps = LOAD_REPS, .no_verify = 1, .numa = -1 };
	snprintf(l->speed, sizeof(l->speed), "/sys/bus/pci/devices/%s/current_link_speed", d->bdf);
	snprintf(l->width, sizeof(l->width), "/sys/bus/pci/devices/%s/current_link_width", d->bdf);
	if (gp_gpu_nvml_during(g->bdf, load_job, load_tick, l, &o->reasons, &o->samples)) {
		snprintf(o->why, sizeof(o->why), "the copy failed: %s", l->e.msg);
	} else {
		o->measured = 1;
		o->gbps = l->r.gbps.median;
		o->gts = l->gts;
		o->lanes = l->lanes;
		gp_doctor_link_best(c, c->topo->devs[i].pci, &o->best, &o->width);
	}
	free(l);
}

/* 1 when the link under load ran below what both its ends support. */
static int link_low(const struct loaded *o)
{
	return o->measured && o->gts > 0 && o->lanes > 0 &&
	       ((o->best > 0 && o->gts + 0.05 < o->best) || (o->width > 0 && o->lanes < o->width));
}

static void add_fix(char *fix, size_t n, const char *text)
{
	size_t len = strlen(fix);

	if (len + 3 < n)
		snprintf(fix + len, n - len, "%s%s", len ? "; " : "", text);
}

static void throttle_one(struct gp_doctor_ctx *c, int i, const struct gp_gpu_info *g)
{
	const char *name = c->topo->devs[i].name;
	unsigned long long v = 0;
	long long rest = g->st.clk_reasons;
	char bad[160], other[160], fix[1024] = "";
	struct loaded o = { 0 };
	struct gp_finding *f;
	int load = c->active && c->probe_libs; /* live, or the test doubles on a fixture */

	if (!load && gp_doctor_state_missing(c, i, rest, "clock event reasons"))
		return;
	if (load)
		under_load(c, i, g, gp_doctor_p2p_retained(c), &o);
	if (rest >= 0)
		v |= (unsigned long long)rest;
	if (load && o.measured && o.reasons >= 0)
		v |= (unsigned long long)o.reasons;
	names(v, 1, bad, sizeof(bad));
	names(v, 0, other, sizeof(other));
	for (int k = 0; k < NREASONS; k++)
		/* HW slowdown comes with its cause's bit: that bit's fix says what to do */
		if ((v & reasons[k].bit) && reasons[k].fault &&
		    !(reasons[k].bit == GP_CLK_HW_SLOWDOWN && (v & (GP_CLK_HW_THERMAL | GP_CLK_HW_POWER_BRAKE))))
			add_fix(fix, sizeof(fix), reasons[k].fix);
	if (load && link_low(&o))
		add_fix(fix, sizeof(fix), "reseat the GPU; check its riser or retimer and the slot's link speed in "
			"firmware (pcie.link_speed names a Link Control 2 target below the maximum)");
	if (bad[0] || (load && link_low(&o))) {
		char linkmsg[160] = "";

		if (load && link_low(&o))
			snprintf(linkmsg, sizeof(linkmsg), "%sunder load its PCIe link ran at %.1f GT/s x%d, below the "
				 "%.1f GT/s x%d both ends support", bad[0] ? "; " : "", o.gts, o.lanes, o.best, o.width);
		f = gp_doctor_add(c, GP_SEV_WARNING, g->bdf, "%s: %s%s%s: kernels and copies through this GPU (its P2P "
				  "and GPUDirect peers' too) run slower", name, bad[0] ? "clocks held down by " : "", bad,
				  linkmsg);
		gp_finding_fix(f, "%s; nvidia-smi -q -d PERFORMANCE,PCIE -i %s shows the state now", fix, g->bdf);
	} else if (load && o.measured && o.reasons >= 0 && (o.reasons & (long long)(GP_CLK_SW_POWER_CAP | GP_CLK_APP_SETTING))) {
		int app = (o.reasons & (long long)GP_CLK_APP_SETTING) != 0;

		f = gp_doctor_add(c, GP_SEV_INFO, g->bdf, "%s: under load, clocks held by %s", name,
				  app ? "an applications clocks setting below the maximum" :
				  "the power cap (normal at full load; a lowered power limit slows the GPU)");
		if (app)
			gp_finding_fix(f, "nvidia-smi -rac -i %s resets the applications clocks", g->bdf);
		else
			gp_finding_fix(f, "nvidia-smi -q -d POWER -i %s shows the limit; nvidia-smi -pl sets it", g->bdf);
	} else {
		if (load && o.measured && o.reasons >= 0) /* what held the clocks under load, not before it */
			names((unsigned long long)o.reasons, 0, other, sizeof(other));
		f = gp_doctor_add(c, GP_SEV_OK, g->bdf, "%s: no thermal, power-brake or hardware slowdown%s%s%s", name,
				  load && o.measured ? " under load" : "", other[0] ? "; active: " : "", other);
	}
	gp_finding_bdf(f, g->bdf);
	if (rest >= 0) {
		names((unsigned long long)rest, 1, bad, sizeof(bad));
		names((unsigned long long)rest, 0, other, sizeof(other));
		gp_finding_ev(f, "clock event reasons", "0x%llx%s%s%s%s%s", (unsigned long long)rest,
			      bad[0] || other[0] ? " (" : "", bad, bad[0] && other[0] ? ", " : "", other,
			      bad[0] || other[0] ? ")" : "");
	} else
		gp_finding_ev(f, "clock event reasons", "%s", rest == GP_GPU_NA ? "not supported" : "unknown");
	if (!load)
		return;
	if (!o.measured) {
		gp_finding_ev(f, "under load", "not measured: %s", o.why);
		return;
	}
	gp_finding_ev(f, "under load", "%d samples during %d host->GPU copies of %llu MiB (median %.2f GB/s)", o.samples,
		      LOAD_ITERS * LOAD_REPS, LOAD_SIZE >> 20, o.gbps);
	if (o.reasons >= 0)
		gp_finding_ev(f, "clock event reasons under load", "0x%llx", (unsigned long long)o.reasons);
	if (o.gts > 0 && o.lanes > 0)
		gp_finding_ev(f, "PCIe link under load", "%.1f GT/s x%d (both ends support %.1f GT/s x%d)", o.gts, o.lanes,
			      o.best, o.width);
}

void gp_doctor_check_throttle(struct gp_doctor_ctx *c)
{
	gp_doctor_each_nvml_gpu(c, throttle_one);
}
