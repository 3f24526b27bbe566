/* gpup2p bench rdma — the result rows as a table (perftest's columns), JSON, CSV and JSON lines. Every
 * format is written from one field list, so that they carry the same fields. */
#include <stdio.h>
#include <string.h>

#include "bench_rdma.h"

int rdma_below(const struct rdma_row *w)
{
	return !w->r.lat && w->floor > 0 && w->r.gbps < w->floor;
}

/* One result row and the run it belongs to. */
struct rdma_rec {
	const struct rdma_report *rp;
	const struct rdma_row *w;
};

#define RP(x) (((const struct rdma_rec *)(x))->rp)
#define IN(x) (&RP(x)->info)
#define R(x) (&((const struct rdma_rec *)(x))->w->r)
#define BW(x) (!R(x)->lat)
#define LOOP(x) (RP(x)->loopback)

static void str(struct gp_value *v, const char *s) { v->s = s; v->null = !s; }
static void num(struct gp_value *v, double d, int prec, int null) { v->d = d, v->prec = prec, v->null = null; }

static void f_mode(const void *x, struct gp_value *v) { (void)x; v->s = "rdma"; }
static void f_op(const void *x, struct gp_value *v) { v->s = gp_rdma_op_name(R(x)->op); }
static void f_test(const void *x, struct gp_value *v) { v->s = R(x)->lat ? "lat" : "bw"; }
static void f_device(const void *x, struct gp_value *v) { str(v, IN(x)->nic.device); }
static void f_port(const void *x, struct gp_value *v) { v->i = IN(x)->nic.port; }
static void f_mem(const void *x, struct gp_value *v) { str(v, RP(x)->mem); }
static void f_mem_path(const void *x, struct gp_value *v) { str(v, IN(x)->mem_path); }
static void f_gpu(const void *x, struct gp_value *v) { v->i = IN(x)->gpu; v->null = v->i < 0; }
static void f_peer_mem(const void *x, struct gp_value *v) { str(v, LOOP(x) ? RP(x)->peer_mem : NULL); }
static void f_peer_mem_path(const void *x, struct gp_value *v) { str(v, LOOP(x) ? IN(x)->peer_mem_path : NULL); }
static void f_peer_gpu(const void *x, struct gp_value *v) { v->i = IN(x)->peer_gpu; v->null = !LOOP(x) || v->i < 0; }
static void f_distance(const void *x, struct gp_value *v) { str(v, RP(x)->distance); }
static void f_bytes(const void *x, struct gp_value *v) { v->u = R(x)->bytes; }
static void f_iters(const void *x, struct gp_value *v) { v->i = R(x)->iters; }
static void f_reps(const void *x, struct gp_value *v) { v->i = R(x)->reps; }
static void f_gbps(const void *x, struct gp_value *v) { num(v, R(x)->gbps, 3, !BW(x)); }
static void f_gbits_avg(const void *x, struct gp_value *v) { num(v, R(x)->gbits_avg, 3, !BW(x)); }
static void f_gbits_peak(const void *x, struct gp_value *v) { num(v, R(x)->gbits_peak, 3, !BW(x)); }
static void f_mpps(const void *x, struct gp_value *v) { num(v, R(x)->mpps, 4, !BW(x)); }
static void f_port_gbits(const void *x, struct gp_value *v) { num(v, IN(x)->port_gbits, 3, !(IN(x)->port_gbits > 0)); }

static void f_port_fraction(const void *x, struct gp_value *v)
{
	num(v, R(x)->port_fraction, 4, !BW(x) || !(IN(x)->port_gbits > 0));
}

static void f_us_min(const void *x, struct gp_value *v) { num(v, R(x)->us_min, 3, BW(x)); }
static void f_us_median(const void *x, struct gp_value *v) { num(v, R(x)->us_median, 3, BW(x)); }
static void f_us_p99(const void *x, struct gp_value *v) { num(v, R(x)->us_p99, 3, BW(x)); }
static void f_verified(const void *x, struct gp_value *v) { v->i = R(x)->verified; }

static void f_min_gbps(const void *x, struct gp_value *v)
{
	const struct rdma_row *w = ((const struct rdma_rec *)x)->w;

	num(v, w->floor, 2, !(w->floor > 0) || !BW(x));
}

static void f_below(const void *x, struct gp_value *v) { v->i = rdma_below(((const struct rdma_rec *)x)->w); }
static void f_peer_device(const void *x, struct gp_value *v) { str(v, LOOP(x) ? IN(x)->peer_nic.device : NULL); }
static void f_peer_port(const void *x, struct gp_value *v) { v->i = IN(x)->peer_nic.port; v->null = !LOOP(x); }
static void f_peer_distance(const void *x, struct gp_value *v) { str(v, LOOP(x) ? RP(x)->peer_distance : NULL); }

/* The table's forms (perftest's): two decimals, the port's share in per cent, yes or no. */
static void t2(struct gp_value *v, double d)
{
	snprintf(v->num, sizeof(v->num), "%.2f", d);
	v->s = v->num;
}

static void t_iterations(const void *x, struct gp_value *v)
{
	snprintf(v->num, sizeof(v->num), "%d", R(x)->iters * R(x)->reps);
	v->s = v->num;
}

static void t_gbps(const void *x, struct gp_value *v) { t2(v, R(x)->gbps); }
static void t_gbits_avg(const void *x, struct gp_value *v) { t2(v, R(x)->gbits_avg); }
static void t_gbits_peak(const void *x, struct gp_value *v) { t2(v, R(x)->gbits_peak); }
static void t_us_min(const void *x, struct gp_value *v) { t2(v, R(x)->us_min); }
static void t_us_median(const void *x, struct gp_value *v) { t2(v, R(x)->us_median); }
static void t_us_p99(const void *x, struct gp_value *v) { t2(v, R(x)->us_p99); }

static void t_port_fraction(const void *x, struct gp_value *v)
{
	snprintf(v->num, sizeof(v->num), IN(x)->port_gbits > 0 ? "%.0f%%" : "-", R(x)->port_fraction * 100);
	v->s = v->num;
}

static void t_verified(const void *x, struct gp_value *v) { v->s = R(x)->verified ? "yes" : "no"; }

#define BWV (GP_FIELD_VIEW(0) | GP_FIELD_RIGHT) /* the bandwidth table's columns */
#define LATV (GP_FIELD_VIEW(1) | GP_FIELD_RIGHT) /* the latency table's */

/* A result row's fields, in JSON order; col: the CSV column (a new field takes the next number); header:
 * perftest's column in the table, at pos, in the bandwidth view (BWV), the latency view (LATV) or both,
 * text: its form there. */
static const struct gp_field rdma_fields[] = {
	{ "mode", "mode", 1, NULL, GP_FIELD_STR, 0, f_mode, NULL, 0, NULL },
	{ "op", "op", 2, "op", GP_FIELD_STR, 0, f_op, NULL, 1, NULL },
	{ "test", "test", 3, "test", GP_FIELD_STR, 0, f_test, NULL, 2, NULL },
	{ "device", "device", 4, NULL, GP_FIELD_STR, 0, f_device, NULL, 0, NULL },
	{ "port", "port", 5, NULL, GP_FIELD_INT, 0, f_port, NULL, 0, NULL },
	{ "mem", "mem", 6, NULL, GP_FIELD_STR, 0, f_mem, NULL, 0, NULL },
	{ "mem_path", "mem_path", 7, NULL, GP_FIELD_STR, 0, f_mem_path, NULL, 0, NULL },
	{ "gpu", "gpu", 8, NULL, GP_FIELD_INT, 0, f_gpu, NULL, 0, NULL },
	{ "peer_mem", "peer_mem", 9, NULL, GP_FIELD_STR, 0, f_peer_mem, NULL, 0, NULL },
	{ "peer_mem_path", "peer_mem_path", 10, NULL, GP_FIELD_STR, 0, f_peer_mem_path, NULL, 0, NULL },
	{ "peer_gpu", "peer_gpu", 11, NULL, GP_FIELD_INT, 0, f_peer_gpu, NULL, 0, NULL },
	{ "distance", "distance", 12, NULL, GP_FIELD_STR, 0, f_distance, NULL, 0, NULL },
	{ "bytes", "bytes", 13, "#bytes", GP_FIELD_U64, 0, f_bytes, NULL, 3, NULL },
	{ "iters", "iters", 14, "#iterations", GP_FIELD_INT, 0, f_iters, NULL, 4, t_iterations },
	{ "reps", "reps", 15, NULL, GP_FIELD_INT, 0, f_reps, NULL, 0, NULL },
	{ "gbps", "gbps", 16, "[GB/s]", GP_FIELD_NUM, BWV, f_gbps, NULL, 7, t_gbps },
	{ "gbits_avg", "gbits_avg", 17, "BW average[Gb/s]", GP_FIELD_NUM, BWV, f_gbits_avg, NULL, 6, t_gbits_avg },
	{ "gbits_peak", "gbits_peak", 18, "BW peak[Gb/s]", GP_FIELD_NUM, BWV, f_gbits_peak, NULL, 5, t_gbits_peak },
	{ "mpps", "mpps", 19, "MsgRate[Mpps]", GP_FIELD_NUM, BWV, f_mpps, NULL, 8, NULL },
	{ "port_gbits", "port_gbits", 20, NULL, GP_FIELD_NUM, 0, f_port_gbits, NULL, 0, NULL },
	{ "port_fraction", "port_fraction", 21, "of port", GP_FIELD_NUM, BWV, f_port_fraction, NULL, 9, t_port_fraction },
	{ "us_min", "us_min", 22, "t_min[us]", GP_FIELD_NUM, LATV, f_us_min, NULL, 5, t_us_min },
	{ "us_median", "us_median", 23, "t_median[us]", GP_FIELD_NUM, LATV, f_us_median, NULL, 6, t_us_median },
	{ "us_p99", "us_p99", 24, "t_p99[us]", GP_FIELD_NUM, LATV, f_us_p99, NULL, 7, t_us_p99 },
	{ "verified", "verified", 25, "verified", GP_FIELD_BOOL, GP_FIELD_RIGHT, f_verified, NULL, 10, t_verified },
	{ "min_gbps", "min_gbps", 26, NULL, GP_FIELD_NUM, 0, f_min_gbps, NULL, 0, NULL },
	{ "below_min", "below_min", 27, NULL, GP_FIELD_BOOL, 0, f_below, NULL, 0, NULL },
	{ "peer_device", "peer_device", 28, NULL, GP_FIELD_STR, 0, f_peer_device, NULL, 0, NULL },
	{ "peer_port", "peer_port", 29, NULL, GP_FIELD_INT, 0, f_peer_port, NULL, 0, NULL },
	{ "peer_distance", "peer_distance", 30, NULL, GP_FIELD_STR, 0, f_peer_distance, NULL, 0, NULL },
};

#define NFIELDS ((int)(sizeof(rdma_fields) / sizeof(rdma_fields[0])))

/* "rxe0 port 1 (RoCE v2, MTU 4096, 98.0 Gb/s after headers)" */
static void port_words(char *buf, size_t n, const struct gp_rdma_nic *p)
{
	char rate[48];

	if (p->port_gbits > 0)
		snprintf(rate, sizeof(rate), "%.1f Gb/s after headers", p->port_gbits);
	else
		snprintf(rate, sizeof(rate), "rate unknown");
	snprintf(buf, n, "%s port %d (%s, MTU %d, %s)", p->device, p->port,
		 p->link_layer == GP_RDMA_LINK_ETH ? "RoCE v2" : "InfiniBand", p->active_mtu, rate);
}

/* The line above the table: the port(s), the memory on each side and its distance to its NIC. */
static void head_line(const struct rdma_report *rp)
{
	const struct gp_rdma_info *in = &rp->info;
	char mem[48], peer[48], port[160], pport[160];

	snprintf(mem, sizeof(mem), in->gpu >= 0 ? "GPU%d (%s)" : "host", in->gpu, in->mem_path);
	snprintf(peer, sizeof(peer), in->peer_gpu >= 0 ? "GPU%d (%s)" : "host", in->peer_gpu, in->peer_mem_path);
	port_words(port, sizeof(port), &in->nic);
	port_words(pport, sizeof(pport), &in->peer_nic);
	if (rp->loopback && in->two_nics)
		printf("RDMA loopback: %s to %s, memory %s (NIC-memory distance %s), peer %s (distance %s)\n", port, pport,
		       mem, rp->distance, peer, rp->peer_distance);
	else
		printf("RDMA %s: %s, memory %s%s%s, NIC-memory distance %s\n", rp->loopback ? "loopback" : "client", port,
		       mem, rp->loopback ? ", peer " : "", rp->loopback ? peer : "", rp->distance);
}

/* perftest's table, from rdma_fields: the bandwidth or the latency view */
static void table(const struct cli *c, const struct rdma_report *rp)
{
	unsigned view = rp->n && rp->rows[0].r.lat ? GP_FIELD_VIEW(1) : GP_FIELD_VIEW(0);
	struct gp_table tb;

	if (!c->quiet)
		head_line(rp);
	if (gp_fields_table_init(&tb, rdma_fields, NFIELDS, view))
		return;
	for (int i = 0; i < rp->n; i++) {
		struct rdma_rec x = { rp, &rp->rows[i] };

		gp_fields_table_row(&tb, rdma_fields, NFIELDS, view, &x, NULL);
	}
	gp_table_print(&tb, stdout, 0, 2, NULL);
	gp_table_free(&tb);
}

void rdma_print(const struct cli *c, const struct rdma_report *rp, int argc, char **argv, int exit_status)
{
	struct gp_json j;

	if (c->fmt == GP_OUT_TABLE) {
		table(c, rp);
		return;
	}
	if (c->fmt == GP_OUT_JSON) {
		cli_json_begin(c, &j, "bench rdma", argc, argv);
		gp_json_arr(&j, "results");
	} else if (c->fmt == GP_OUT_CSV && !c->no_header) {
		gp_fields_csv_header(stdout, rdma_fields, NFIELDS);
	}
	for (int i = 0; i < rp->n; i++) {
		struct rdma_rec x = { rp, &rp->rows[i] };

		cli_record(c, &j, "bench rdma", rdma_fields, NFIELDS, &x, NULL);
	}
	if (c->fmt == GP_OUT_JSON) {
		gp_json_end(&j, ']');
		cli_json_end(c, &j, exit_status);
	}
}
