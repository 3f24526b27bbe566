/* gpup2p doctor — nvlink.*: NVLinks wired but down (each GPU judged by its own links), and NVLink
 * error counters rising (NVML facts, live or recorded). */
#include <stdio.h>
#include <string.h>

#include "xid.h"

/* "4, 5" : the link numbers of a mask. */
static void link_list(long long mask, char *buf, size_t n)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int l = 0; l < GP_GPU_LINKS_PER_GPU && len < n; l++)
		if (mask & (1LL << l))
			len += (size_t)snprintf(buf + len, n - len, "%s%d", len ? ", " : "", l);
}

/* Each GPU by its own links: a link NVML reports present (capability, remote PCI address, or a peer
 * whose end is up) but not active is down. Links NVML reports without any of these are not wired
 * (no bridge, a PCIe board): never compared with the other GPUs. */
static void down_one(struct gp_doctor_ctx *c, int i, const struct gp_gpu_info *g)
{
	const char *name = c->topo->devs[i].name;
	struct gp_finding *f;
	int up, down, own, peer, bad;
	char links[64];

	if (gp_doctor_state_missing(c, i, g->st.nvl_active, "NVLink state"))
		return;
	up = g->st.nvl_active;
	down = g->st.nvl_inactive > 0 ? g->st.nvl_inactive : 0;
	own = g->nvl_down_mask > 0 ? __builtin_popcountll((unsigned long long)g->nvl_down_mask) : 0;
	peer = g->nvl_peer_down > 0 ? g->nvl_peer_down : 0;
	bad = own > peer ? own : peer;
	link_list(g->nvl_down_mask > 0 ? g->nvl_down_mask : 0, links, sizeof(links));
	if (bad) {
		f = gp_doctor_add(c, GP_SEV_ERROR, g->bdf, "%s: %d NVLink%s down though wired (%d up): P2P over NVLink "
				  "runs slower or falls back to PCIe", name, bad, bad > 1 ? "s" : "", up);
		gp_finding_fix(f, "nvidia-smi nvlink -s -i %s shows which; check nvidia-fabricmanager (NVSwitch "
			       "systems), reset the GPU (nvidia-smi -r), then reseat the board or bridge", g->bdf);
		if (own)
			gp_finding_ev(f, "present but inactive", "link %s (P2P capability or remote PCI address)", links);
		if (peer)
			gp_finding_ev(f, "peer end up", "%d link%s up on another GPU towards this one", peer,
				      peer > 1 ? "s" : "");
	} else if (down && (g->nvl_down_mask < 0 || g->nvl_peer_down < 0) && up) {
		/* an older snapshot: counts only, no per-link record to tell a wired link from an absent one */
		f = gp_doctor_add(c, GP_SEV_INFO, g->bdf, "%s: %d NVLinks up, %d inactive; the facts do not record "
				  "which are wired, so whether any is down is unknown", name, up, down);
		gp_finding_fix(f, "nvidia-smi nvlink -s -i %s lists the links; take a new snapshot", g->bdf);
	} else if (!up) {
		f = gp_doctor_add(c, GP_SEV_OK, g->bdf, "%s: no NVLink in use (no bridge or fabric): P2P runs over "
				  "PCIe", name);
	} else {
		f = gp_doctor_add(c, GP_SEV_OK, g->bdf, "%s: %d NVLinks up%s", name, up,
				  down ? ", none of the others wired" : "");
	}
	gp_finding_bdf(f, g->bdf);
	gp_finding_ev(f, "nvlink", "%d active, %d inactive", up, down);
}

static void check_down(struct gp_doctor_ctx *c)
{
	gp_doctor_each_nvml_gpu(c, down_one);
}

/* "replay +2, CRC flit +5": the counters that count on this GPU's generation and rose; "" none. */
static void risen(const struct gp_gpu_state *s, char *buf, size_t n)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int k = 0; k < GP_NVL_COUNTERS && used < n; k++)
		if (gp_gpu_nvl_counter_counts(s->arch, k) && s->nvl_err_rise[k] > 0)
			used += (size_t)snprintf(buf + used, n - used, "%s%s +%lld", used ? ", " : "",
						 gp_gpu_nvl_counter_name(k), s->nvl_err_rise[k]);
}

/* The first counter this generation counts that is missing (negative), else 0; *total their sum. */
static long long counted(const struct gp_gpu_state *s, long long *total)
{
	*total = 0;
	for (int k = 0; k < GP_NVL_COUNTERS; k++) {
		if (!gp_gpu_nvl_counter_counts(s->arch, k))
			continue;
		if (s->nvl_err[k] < 0)
			return s->nvl_err[k];
		*total += s->nvl_err[k];
	}
	return 0;
}

static void errors_one(struct gp_doctor_ctx *c, int i, const struct gp_gpu_info *g)
{
	const char *name = c->topo->devs[i].name;
	const struct gp_gpu_state *s;
	struct gp_finding *f;
	char rose[160];
	long long total, miss;

	s = gp_doctor_counters(c, g);
	miss = counted(s, &total);
	if (s->nvl_active == 0 || (s->nvl_active == GP_GPU_NA && miss < 0)) {
		f = gp_doctor_add(c, GP_SEV_SKIPPED, g->bdf, "%s: no active NVLink", name);
		gp_finding_bdf(f, g->bdf);
		return;
	}
	if (gp_doctor_state_missing(c, i, miss, "NVLink error counters"))
		return;
	risen(s, rose, sizeof(rose));
	if (rose[0]) {
		f = gp_doctor_add(c, GP_SEV_WARNING, g->bdf, "%s: NVLink errors rising between two reads (%s): a "
				  "marginal link", name, rose);
		gp_finding_fix(f, "nvidia-smi nvlink -e -i %s shows the link; reset the GPU, then reseat the board or "
			       "bridge; a link that keeps erring needs service", g->bdf);
	} else if (total > 0) {
		/* links retrain and replay now and then; only rising counters are a fault */
		f = gp_doctor_add(c, GP_SEV_OK, g->bdf, "%s: %lld NVLink errors since the counters were reset, not "
				  "rising (counts that grow between runs would mean a marginal link)", name, total);
	} else {
		f = gp_doctor_add(c, GP_SEV_OK, g->bdf, "%s: no NVLink error on %d active links", name, s->nvl_active);
	}
	gp_finding_bdf(f, g->bdf);
	for (int k = 0; k < GP_NVL_COUNTERS; k++) {
		char key[48];

		if (!gp_gpu_nvl_counter_counts(s->arch, k))
			continue;
		snprintf(key, sizeof(key), "nvlink %s errors", gp_gpu_nvl_counter_name(k));
		if (s->nvl_err_rise[k] >= 0 && s->nvl_err[k] > 0) /* none: read once (gp_gpu_nvml_recount) */
			gp_finding_ev(f, key, "%lld (+%lld between two reads)", s->nvl_err[k], s->nvl_err_rise[k]);
		else
			gp_finding_ev(f, key, "%lld", s->nvl_err[k]);
	}
}

static void check_errors(struct gp_doctor_ctx *c)
{
	gp_doctor_each_nvml_gpu(c, errors_one);
}

static const struct gp_doctor_check checks[] = {
	{ "nvlink.down", "NVLinks wired but not active", GP_SRC_NVML, 0, check_down,
	  "Judges each GPU by its own links (NVML), never by other GPUs. Error when a link NVML reports present "
	  "is not active: P2P over NVLink capability on it, the remote end's PCI address, or a peer GPU whose "
	  "end of it is up (a half-seated bridge takes the link down on both ends). A GPU without NVLink, or "
	  "whose inactive links are not wired (no bridge), is fine. A snapshot without per-link records gives "
	  "info when links are inactive beside active ones." },
	{ "nvlink.errors", "NVLink error counters rising", GP_SRC_NVML, 0, check_errors,
	  "Reads the NVLink error counters nvidia-smi nvlink -e shows, each summed over a GPU's active links: "
	  "replay, recovery and CRC flit; CRC data too before Hopper (from Hopper on it rises at idle, corrected "
	  "by replay; DCGM likewise ignores CRC below 100 a second). Read twice while gathering the GPU facts "
	  "(first, and again after the GPU's other facts; one thread per GPU); with gpup2p doctor --active on "
	  "a live system "
	  "once more, at least a second after the first read. Warning naming each counter that rose between "
	  "the reads; steady counts are ok. Snapshots of facts format 1 stored one sum: not evidence, skipped." },
	{ "nvlink.sxid", "NVSwitch SXid events in the kernel log (gpup2p doctor --kmsg)", GP_SRC_KMSG, 0,
	  gp_doctor_check_sxid,
	  "With gpup2p doctor --kmsg only, as gpu.xid: counts the NVSwitch driver's \"nvidia-nvswitchN: SXid "
	  "(PCI:...): N, Fatal|"
	  "Non-fatal, Link L ...\" lines per switch, naming the switch, its links and codes. Error for a fatal SXid "
	  "(the jobs whose NVLink traffic crosses the port were aborted: reset the GPUs on it, or reboot when the "
	  "port joins two switches, as NVIDIA's Fabric Manager guide says); warning for non-fatal ones (a link "
	  "erring; jobs go on) and for lines that do not state it. No SXid: ok where NVML shows NVSwitch links." },
};

GP_DOCTOR_FAMILY(gp_doctor_fam_nvlink, "nvlink", "NVLink", checks);
