/* gpup2p doctor — rdma.errors and rdma.flaps: the error counters of each RDMA port
 * (/sys/class/infiniband/DEV/ports/N/counters, the InfiniBand PortCounters, and hw_counters, the
 * driver's transport counters that RoCE relies on), read twice as pcie.replay reads the GPUs' replay
 * counter: a count that rises between the reads is a link failing now, a large count since the
 * counters were last cleared is its history. Offline (a snapshot, a fixture) there is one read only:
 * the lifetime values. Listed in rdma.c's table. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpup2p/clock.h"
#include "gpup2p/gpu.h"
#include "rdma.h"

#define PHY_WARN 10     /* link-level errors since the counters were cleared that make a warning */
#define FLAP_WARN 5     /* link downs or retrainings since then that make a warning */

enum kind { K_PHY, K_FLAP, K_XPORT };

/* The counters read, in report order. bits: the PortCounters field's width (the count stops at its
 * largest value: saturated), 0 a 64-bit driver counter. */
static const struct ctr {
	const char *file;
	int hw;                 /* in hw_counters/, not counters/ */
	int bits;
	enum kind kind;
} ctrs[] = {
	{ "symbol_error", 0, 16, K_PHY },
	{ "port_rcv_errors", 0, 16, K_PHY },
	{ "port_rcv_remote_physical_errors", 0, 16, K_PHY },
	{ "local_link_integrity_errors", 0, 4, K_PHY },
	{ "excessive_buffer_overrun_errors", 0, 4, K_PHY },
	{ "link_downed", 0, 8, K_FLAP },
	{ "link_error_recovery", 0, 8, K_FLAP },
	{ "out_of_sequence", 1, 0, K_XPORT },
	{ "packet_seq_err", 1, 0, K_XPORT },
	{ "local_ack_timeout_err", 1, 0, K_XPORT },
	{ "rx_icrc_encapsulated", 1, 0, K_XPORT },
};
#define NCTR (int)(sizeof(ctrs) / sizeof(ctrs[0]))

/* One port's counters: v[k][0] the first read, v[k][1] the second (the first again offline); -1 not
 * there (this driver or port has no such counter). */
struct ibc_port {
	char subject[96];
	long long v[NCTR][2];
};

/* Every port's counters, read once for both checks (c->ib_counters). */
struct gp_doctor_ibc {
	int n;
	struct ibc_port *p;
	int reads;              /* 2 live, 1 offline */
	double apart;           /* seconds between the reads */
};

void gp_doctor_rdma_counters_free(struct gp_doctor_ctx *c)
{
	if (c->ib_counters)
		free(c->ib_counters->p);
	free(c->ib_counters);
	c->ib_counters = NULL;
}

/* Read every counter of the port at base into v[..][r]: its counters/ and hw_counters/ folders opened
 * and listed once each, only the counters they show read. */
static void read_port(struct gp_doctor_ctx *c, const char *base, long long v[NCTR][2], int r)
{
	struct gp_root_dir dir[2];
	char path[GP_PATH_MAX];

	for (int h = 0; h < 2; h++) {
		snprintf(path, sizeof(path), "%s/%s", base, h ? "hw_counters" : "counters");
		gp_root_dir_open(c->root, &dir[h], -1, path, NULL);
	}
	for (int k = 0; k < NCTR; k++) {
		char buf[64], *end;
		long long x;

		v[k][r] = -1;
		if (gp_root_dir_read_text(c->root, &dir[ctrs[k].hw], ctrs[k].file, buf, sizeof(buf)) > 0 &&
		    (x = strtoll(buf, &end, 10)) >= 0 && end != buf)
			v[k][r] = x;
	}
	gp_root_dir_close(&dir[0]);
	gp_root_dir_close(&dir[1]);
}

/* Call fn(c, p, arg) for each port of each RDMA device, in gp_doctor_rdma_each_port's order. */
static void walk(struct gp_doctor_ctx *c, void (*fn)(struct gp_doctor_ctx *, const struct ibport *, void *), void *arg)
{
	int n = gp_doctor_ib_count(c);

	for (int i = 0; i < n; i++) {
		char **ports;
		int np = gp_doctor_ib_ports(c, i, &ports);

		for (int k = 0; k < np; k++) {
			struct ibport p;

			gp_doctor_ib_port(c, i, k, &p);
			fn(c, &p, arg);
		}
	}
}

static void first_read(struct gp_doctor_ctx *c, const struct ibport *q, void *arg)
{
	struct gp_doctor_ibc *b = arg;
	struct ibc_port *p = realloc(b->p, (size_t)(b->n + 1) * sizeof(*p));

	if (!p) {
		c->out.nomem = 1;
		return;
	}
	b->p = p;
	p = &b->p[b->n++];
	snprintf(p->subject, sizeof(p->subject), "%s", q->subject);
	read_port(c, q->at, p->v, 0);
	for (int k = 0; k < NCTR; k++)
		p->v[k][1] = p->v[k][0];
}

/* The counters of port q in b, or NULL: at its place in the walk (the ports are read in that order),
 * else looked up by name. */
static struct ibc_port *counters_of(const struct gp_doctor_ibc *b, const struct ibport *q)
{
	if (q->idx >= 0 && q->idx < b->n && !strcmp(b->p[q->idx].subject, q->subject))
		return &b->p[q->idx];
	for (int i = 0; i < b->n; i++)
		if (!strcmp(b->p[i].subject, q->subject))
			return &b->p[i];
	return NULL;
}

static void second_read(struct gp_doctor_ctx *c, const struct ibport *q, void *arg)
{
	struct ibc_port *p = counters_of(arg, q);
	long long v[NCTR][2];

	if (!p)
		return;
	read_port(c, q->at, v, 1);
	for (int k = 0; k < NCTR; k++)
		p->v[k][1] = v[k][1];
}

static void sleep_s(struct gp_doctor_ctx *c, double s)
{
	(void)c;
	if (s > 0)
		usleep((useconds_t)(s * 1e6));
}

/* The counters, read on first use: live twice (under --active GP_DOCTOR_COUNTER_WINDOW_S apart, else
 * back to back, as pcie.replay's static reads), offline once. NULL without memory. */
static const struct gp_doctor_ibc *counters(struct gp_doctor_ctx *c)
{
	struct gp_doctor_ibc *b = c->ib_counters;
	double t0;

	if (b || !(b = c->ib_counters = calloc(1, sizeof(*b))))
		return b;
	t0 = gp_clock_s();
	walk(c, first_read, b);
	b->reads = c->root->live || c->counter_pause ? 2 : 1; /* a fixture with a test's double: read twice too */
	if (b->reads == 2) {
		(c->counter_pause ? c->counter_pause : sleep_s)(c, c->active ? gp_gpu_nvml_pause_s(t0,
							 GP_DOCTOR_COUNTER_WINDOW_S, gp_clock_s()) : 0);
		b->apart = gp_clock_s() - t0;
		walk(c, second_read, b);
	}
	return b;
}

/* What one check found on one port. */
struct verdict {
	int have, rise, high, some;  /* counters read; rising; at or above the threshold; above zero */
	char rose[384], counts[384];
	int sat;                     /* a count at its field's largest value */
};

/* Append ", NAME +RISE (now N)" (rise >= 0) or ", NAME N" to buf. */
static void add(char *buf, size_t n, const char *name, long long rise, long long now)
{
	size_t l = strlen(buf);

	if (l < n && rise >= 0)
		snprintf(buf + l, n - l, "%s%s +%lld (now %lld)", l ? ", " : "", name, rise, now);
	else if (l < n)
		snprintf(buf + l, n - l, "%s%s %lld", l ? ", " : "", name, now);
}

static void judge(const struct ibc_port *p, enum kind kind, struct verdict *v)
{
	memset(v, 0, sizeof(*v));
	for (int k = 0; k < NCTR; k++) {
		long long a = p->v[k][0], b = p->v[k][1];

		if (ctrs[k].kind != kind || a < 0)
			continue;
		v->have++;
		if (b > a) {
			v->rise++;
			add(v->rose, sizeof(v->rose), ctrs[k].file, b - a, b);
		}
		if (b > 0) {
			v->some++;
			v->high += kind != K_XPORT && b >= (kind == K_PHY ? PHY_WARN : FLAP_WARN);
			v->sat |= ctrs[k].bits && b >= (1LL << ctrs[k].bits) - 1;
			add(v->counts, sizeof(v->counts), ctrs[k].file, -1, b);
		}
	}
}

/* The evidence both checks give: every counter read, and how. */
static void evidence(struct gp_finding *f, const struct gp_doctor_ibc *b, const struct ibc_port *p, enum kind k1,
		     enum kind k2)
{
	for (int k = 0; k < NCTR; k++)
		if ((ctrs[k].kind == k1 || ctrs[k].kind == k2) && p->v[k][0] >= 0)
			gp_finding_ev(f, ctrs[k].file, p->v[k][1] > p->v[k][0] ? "%lld (+%lld)" : "%lld", p->v[k][1],
				      p->v[k][1] - p->v[k][0]);
	if (b->reads == 2)
		gp_finding_ev(f, "reads", "2, %.3f s apart", b->apart);
	else
		gp_finding_ev(f, "reads", "1 (offline: lifetime values only)");
}

/* The port's counters, or NULL after the finding saying why there are none. */
static const struct ibc_port *port_counters(struct gp_doctor_ctx *c, const struct ibport *p, enum kind k1,
					    enum kind k2, const struct gp_doctor_ibc **bp)
{
	const struct gp_doctor_ibc *b = counters(c);
	const struct ibc_port *q = b ? counters_of(b, p) : NULL;
	struct gp_finding *f;

	*bp = b;
	for (int k = 0; q && k < NCTR; k++)
		if ((ctrs[k].kind == k1 || ctrs[k].kind == k2) && q->v[k][0] >= 0)
			return q;
	if (!b)
		return NULL;
	if (c->root->live)
		f = gp_doctor_add(c, GP_SEV_UNKNOWN, p->subject, "%s port %s: no error counter readable under %s/counters "
				  "or hw_counters", p->d.name, p->port, p->base);
	else
		f = gp_doctor_add(c, GP_SEV_SKIPPED, p->subject, "%s port %s: no error counters under the root (a snapshot "
				  "that predates them, or a port without them)", p->d.name, p->port);
	gp_doctor_rdma_bdf(c, p, f);
	return NULL;
}

/* Old snapshots recorded the ports without their counters: say so once and judge nothing. */
static int not_captured(struct gp_doctor_ctx *c)
{
	char **names = NULL;
	int n = gp_root_list(c->root, "/sys/class/infiniband", &names);

	gp_root_free_list(names);
	if (n <= 0 || gp_doctor_captured(c, "rdma-counters"))
		return 0;
	gp_doctor_add(c, GP_SEV_SKIPPED, "system", "the snapshot does not record the RDMA ports' counters (taken by an "
		      "older gpup2p)");
	return 1;
}

/* "ibstat mlx5_0; perfquery -x -C mlx5_0 -P 1": how to look at the port and its counters. */
static void look(const struct ibport *p, char *buf, size_t n)
{
	snprintf(buf, n, "ibstat %s shows the port; perfquery -x -C %s -P %s the counters (after a repair, clear "
		 "them with perfquery -x -R -C %s -P %s and check again)", p->d.name, p->d.name, p->port, p->d.name, p->port);
}

static int is_roce(struct gp_doctor_ctx *c, const struct ibport *p)
{
	char layer[32];

	return gp_doctor_ib_file(c, p, IBF_LINK_LAYER, layer, sizeof(layer)) > 0 && !strcmp(layer, "Ethernet");
}

static const char *iface(const struct gp_doctor_ctx *c, const struct ibport *p)
{
	const char *nd = p->d.nic >= 0 ? gp_doctor_dev(c, p->d.nic)->netdev : "";

	return p->d.soft && p->d.over[0] ? p->d.over : nd[0] ? nd : "IFACE";
}

static void errors_one(struct gp_doctor_ctx *c, const struct ibport *p)
{
	const struct gp_doctor_ibc *b;
	const struct ibc_port *q = port_counters(c, p, K_PHY, K_XPORT, &b);
	struct verdict phy, xp;
	struct gp_finding *f;
	char how[320];
	int roce;

	if (!q)
		return;
	judge(q, K_PHY, &phy);
	judge(q, K_XPORT, &xp);
	roce = is_roce(c, p);
	look(p, how, sizeof(how));
	if (phy.rise || xp.rise) {
		f = gp_doctor_add(c, GP_SEV_WARNING, p->subject, "%s port %s: error counters rising between two reads "
				  "%.1f s apart: %s%s%s", p->d.name, p->port, b->apart, phy.rose, phy.rise && xp.rise ? ", " : "",
				  xp.rose);
	} else if (phy.high) {
		f = gp_doctor_add(c, GP_SEV_WARNING, p->subject, "%s port %s: %slink errors since the counters were "
				  "cleared (%s)%s; %s", p->d.name, p->port, phy.sat ? "at least this many " : "", phy.counts,
				  phy.sat ? ", a counter saturated" : "", b->reads == 2 ? "not rising between two reads: a "
				  "link that failed before, or fails now and then" : "one read offline: whether they still "
				  "rise is unknown");
	} else if (phy.some || xp.some) {
		f = gp_doctor_add(c, GP_SEV_INFO, p->subject, "%s port %s: %s%s%s since the counters were cleared, %s",
				  p->d.name, p->port, phy.counts, phy.some && xp.some ? ", " : "", xp.counts,
				  b->reads == 2 ? "not rising" : "one read offline (lifetime values only)");
	} else {
		f = gp_doctor_add(c, GP_SEV_OK, p->subject, "%s port %s: no link or transport error counted (%d counters%s)",
				  p->d.name, p->port, phy.have + xp.have, b->reads == 2 ? ", read twice" : "");
	}
	if (f && f->sev != GP_SEV_OK && (phy.rise || phy.high || phy.some))
		gp_finding_fix(f, "a marginal cable or transceiver: %s; reseat the cable at both ends%s, then replace the "
			       "cable or transceiver if the count keeps rising", how, roce ? " (ethtool -m IFACE reads the "
			       "transceiver, ethtool -S IFACE its error counters)" : "");
	else if (f && f->sev != GP_SEV_OK)
		gp_finding_fix(f, "RoCE packets lost on the fabric: check the lossless setup on the NIC (mlnx_qos -i %s: PFC "
			       "on the RoCE priority, ECN) and on the switch port, and the switch's drop counters; rdma "
			       "statistic show link %s/%s", iface(c, p), p->d.name, p->port);
	gp_doctor_rdma_bdf(c, p, f);
	evidence(f, b, q, K_PHY, K_XPORT);
}

void gp_doctor_check_rdma_errors(struct gp_doctor_ctx *c)
{
	if (!not_captured(c))
		gp_doctor_rdma_each_port(c, errors_one);
}

static void flaps_one(struct gp_doctor_ctx *c, const struct ibport *p)
{
	const struct gp_doctor_ibc *b;
	const struct ibc_port *q = port_counters(c, p, K_FLAP, K_FLAP, &b);
	char state[64] = "", phys[64] = "", how[320];
	struct verdict v;
	struct gp_finding *f;
	int recovering;

	if (!q)
		return;
	judge(q, K_FLAP, &v);
	if (gp_doctor_ib_file(c, p, IBF_STATE, state, sizeof(state)) < 0)
		state[0] = '\0';
	if (gp_doctor_ib_file(c, p, IBF_PHYS_STATE, phys, sizeof(phys)) < 0)
		phys[0] = '\0';
	recovering = atoi(state) == IB_ACTIVE && phys[0] && atoi(phys) != IB_LINKUP;
	look(p, how, sizeof(how));
	if (v.rise) {
		f = gp_doctor_add(c, GP_SEV_WARNING, p->subject, "%s port %s: the link went down or retrained between two "
				  "reads %.1f s apart (%s): it flaps now", p->d.name, p->port, b->apart, v.rose);
	} else if (recovering) {
		f = gp_doctor_add(c, GP_SEV_WARNING, p->subject, "%s port %s is ACTIVE but its physical link is %s: it is "
				  "retraining now (%s)", p->d.name, p->port, strchr(phys, ':') ? strchr(phys, ':') + 2 : phys,
				  v.some ? v.counts : "no flap counted yet");
	} else if (v.high) {
		f = gp_doctor_add(c, GP_SEV_WARNING, p->subject, "%s port %s: %s%s since the counters were cleared: a link "
				  "that flapped%s", p->d.name, p->port, v.sat ? "at least " : "", v.counts,
				  b->reads == 2 ? " (not between two reads now)" : " (one read offline: whether it still does "
				  "is unknown)");
	} else if (v.some) {
		f = gp_doctor_add(c, GP_SEV_INFO, p->subject, "%s port %s: %s since the counters were cleared (a switch or "
				  "cable change does that), %s", p->d.name, p->port, v.counts, b->reads == 2 ? "not rising" :
				  "one read offline");
	} else {
		f = gp_doctor_add(c, GP_SEV_OK, p->subject, "%s port %s: no link down or retraining counted", p->d.name,
				  p->port);
	}
	if (f && f->sev != GP_SEV_OK)
		gp_finding_fix(f, "check the cable and transceiver and the switch port's log for the other end: %s; reseat "
			       "the cable, then replace the cable or transceiver if it keeps flapping", how);
	gp_doctor_rdma_bdf(c, p, f);
	evidence(f, b, q, K_FLAP, K_FLAP);
	if (state[0])
		gp_finding_ev(f, "state", "%s", state);
	if (phys[0])
		gp_finding_ev(f, "phys_state", "%s", phys);
}

void gp_doctor_check_rdma_flaps(struct gp_doctor_ctx *c)
{
	if (!not_captured(c))
		gp_doctor_rdma_each_port(c, flaps_one);
}
