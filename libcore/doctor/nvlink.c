/* gpup2p doctor — nvlink.*: NVLinks down while the GPU's others (or its siblings') are up, and NVLink
 * error counters rising (NVML facts, live or recorded). */
#include <stdio.h>
#include <string.h>

#include "check.h"

/* The most active NVLinks any GPU of the same model has, and how many such GPUs there are. */
static int model_best(const struct gp_doctor_ctx *c, const struct gp_gpu_info *g, int *same)
{
	int best = 0;

	*same = 0;
	for (int k = 0; k < c->facts->n; k++) {
		const struct gp_gpu_info *o = &c->facts->gpus[k];

		if (strcmp(o->name, g->name) || o->st.nvl_active < 0)
			continue;
		(*same)++;
		best = o->st.nvl_active > best ? o->st.nvl_active : best;
	}
	return best;
}

static void down_one(struct gp_doctor_ctx *c, int i, const struct gp_gpu_info *g)
{
	const char *name = c->topo->devs[i].name;
	struct gp_finding *f;
	int up, down, best, same;

	if (gp_doctor_state_missing(c, i, g->st.nvl_active, "NVLink state"))
		return;
	up = g->st.nvl_active;
	down = g->st.nvl_inactive > 0 ? g->st.nvl_inactive : 0;
	best = model_best(c, g, &same);
	if (down && up < best) {
		/* another GPU of this model has more links up: these are down, not absent */
		f = gp_doctor_add(c, GP_SEV_ERROR, g->bdf, "%s: %d of its NVLinks %s down (%d up; another %s here has "
				  "%d up): P2P over NVLink runs slower or falls back to PCIe", name, down,
				  down > 1 ? "are" : "is", up, g->name, best);
		gp_finding_fix(f, "nvidia-smi nvlink -s -i %s shows which; check nvidia-fabricmanager (NVSwitch "
			       "systems), reset the GPU (nvidia-smi -r), then reseat the board or bridge", g->bdf);
	} else if (!up && down) {
		f = gp_doctor_add(c, GP_SEV_OK, g->bdf, "%s: %d NVLinks, none active (no bridge or fabric): P2P runs "
				  "over PCIe", name, down);
	} else if (down && same < 2) {
		f = gp_doctor_add(c, GP_SEV_INFO, g->bdf, "%s: %d NVLinks up, %d down (no other %s here to compare "
				  "with): fine if the bridge or board wires only %d", name, up, down, g->name, up);
		gp_finding_fix(f, "nvidia-smi nvlink -s -i %s lists the links; compare with the board's "
			       "specification", g->bdf);
	} else {
		f = gp_doctor_add(c, GP_SEV_OK, g->bdf, "%s: %d NVLinks up%s", name, up,
				  down ? ", the same as the other GPUs of this model" : "");
	}
	gp_finding_bdf(f, g->bdf);
	gp_finding_ev(f, "nvlink", "%d active, %d inactive", up, down);
}

static void check_down(struct gp_doctor_ctx *c)
{
	gp_doctor_each_nvml_gpu(c, down_one);
}

static void errors_one(struct gp_doctor_ctx *c, int i, const struct gp_gpu_info *g)
{
	const char *name = c->topo->devs[i].name;
	const struct gp_gpu_state *s;
	struct gp_finding *f;

	s = gp_doctor_counters(c, g);
	if (s->nvl_active == 0 || (s->nvl_active == GP_GPU_NA && s->nvl_errors < 0)) {
		f = gp_doctor_add(c, GP_SEV_SKIPPED, g->bdf, "%s: no active NVLink", name);
		gp_finding_bdf(f, g->bdf);
		return;
	}
	if (gp_doctor_state_missing(c, i, s->nvl_errors, "NVLink error count"))
		return;
	if (s->nvl_errors_rise > 0) {
		f = gp_doctor_add(c, GP_SEV_WARNING, g->bdf, "%s: NVLink errors rising (+%lld between two reads, %lld "
				  "in all: replays, recoveries, CRC errors): a marginal link", name, s->nvl_errors_rise,
				  s->nvl_errors);
		gp_finding_fix(f, "nvidia-smi nvlink -e -i %s shows the link; reset the GPU, then reseat the board or "
			       "bridge; a link that keeps erring needs service", g->bdf);
	} else if (s->nvl_errors > 0) {
		/* links retrain and replay now and then; only rising counters are a fault */
		f = gp_doctor_add(c, GP_SEV_OK, g->bdf, "%s: %lld NVLink errors (replays, recoveries, CRC) since the "
				  "counters were reset, not rising (counts that grow between runs would mean a "
				  "marginal link)", name, s->nvl_errors);
	} else {
		f = gp_doctor_add(c, GP_SEV_OK, g->bdf, "%s: no NVLink error on %d active links", name, s->nvl_active);
	}
	gp_finding_bdf(f, g->bdf);
	gp_finding_ev(f, "nvlink errors", "%lld", s->nvl_errors);
	if (s->nvl_errors_rise >= 0)
		gp_finding_ev(f, "rise between two reads", "%lld", s->nvl_errors_rise);
}

static void check_errors(struct gp_doctor_ctx *c)
{
	gp_doctor_each_nvml_gpu(c, errors_one);
}

static const struct gp_doctor_check checks[] = {
	{ "nvlink.down", "NVLinks down while the GPU's siblings have them up", GP_SRC_NVML, 0, check_down,
	  "Counts each GPU's NVLinks up and down (NVML). Error when a GPU has links down and fewer up than another "
	  "GPU of the same model here: those links failed (P2P over NVLink slows or falls back to PCIe). A GPU "
	  "with no link up (no bridge) is fine; one with links down and no sibling to compare with is info." },
	{ "nvlink.errors", "NVLink error counters rising", GP_SRC_NVML, 0, check_errors,
	  "Sums the replay, recovery and CRC error counters of each GPU's active NVLinks, read twice while "
	  "gathering the GPU facts (first, and again after every GPU's other facts); with --active on a live "
	  "system once more, at least a second after the first read. Warning when they rose between the reads; "
	  "steady counts are ok." },
};

GP_DOCTOR_FAMILY(gp_doctor_fam_nvlink, "nvlink", "NVLink", checks);
