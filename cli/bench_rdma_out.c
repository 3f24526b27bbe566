/* gpup2p bench rdma — the result rows as a table (perftest's columns), JSON, CSV and JSON lines. Every
 * machine format is written from one field list, so that they carry the same keys. */
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

/* A result row's fields, in JSON and CSV order (a new field takes the next column). perftest's table
 * above is for people, in two layouts (bandwidth, latency). */
static const struct gp_field rdma_fields[] = {
	{ "mode", "mode", 1, NULL, GP_FIELD_STR, 0, f_mode, NULL },
	{ "op", "op", 2, NULL, GP_FIELD_STR, 0, f_op, NULL },
	{ "test", "test", 3, NULL, GP_FIELD_STR, 0, f_test, NULL },
	{ "device", "device", 4, NULL, GP_FIELD_STR, 0, f_device, NULL },
	{ "port", "port", 5, NULL, GP_FIELD_INT, 0, f_port, NULL },
	{ "mem", "mem", 6, NULL, GP_FIELD_STR, 0, f_mem, NULL },
	{ "mem_path", "mem_path", 7, NULL, GP_FIELD_STR, 0, f_mem_path, NULL },
	{ "gpu", "gpu", 8, NULL, GP_FIELD_INT, 0, f_gpu, NULL },
	{ "peer_mem", "peer_mem", 9, NULL, GP_FIELD_STR, 0, f_peer_mem, NULL },
	{ "peer_mem_path", "peer_mem_path", 10, NULL, GP_FIELD_STR, 0, f_peer_mem_path, NULL },
	{ "peer_gpu", "peer_gpu", 11, NULL, GP_FIELD_INT, 0, f_peer_gpu, NULL },
	{ "distance", "distance", 12, NULL, GP_FIELD_STR, 0, f_distance, NULL },
	{ "bytes", "bytes", 13, NULL, GP_FIELD_U64, 0, f_bytes, NULL },
	{ "iters", "iters", 14, NULL, GP_FIELD_INT, 0, f_iters, NULL },
	{ "reps", "reps", 15, NULL, GP_FIELD_INT, 0, f_reps, NULL },
	{ "gbps", "gbps", 16, NULL, GP_FIELD_NUM, 0, f_gbps, NULL },
	{ "gbits_avg", "gbits_avg", 17, NULL, GP_FIELD_NUM, 0, f_gbits_avg, NULL },
	{ "gbits_peak", "gbits_peak", 18, NULL, GP_FIELD_NUM, 0, f_gbits_peak, NULL },
	{ "mpps", "mpps", 19, NULL, GP_FIELD_NUM, 0, f_mpps, NULL },
	{ "port_gbits", "port_gbits", 20, NULL, GP_FIELD_NUM, 0, f_port_gbits, NULL },
	{ "port_fraction", "port_fraction", 21, NULL, GP_FIELD_NUM, 0, f_port_fraction, NULL },
	{ "us_min", "us_min", 22, NULL, GP_FIELD_NUM, 0, f_us_min, NULL },
	{ "us_median", "us_median", 23, NULL, GP_FIELD_NUM, 0, f_us_median, NULL },
	{ "us_p99", "us_p99", 24, NULL, GP_FIELD_NUM, 0, f_us_p99, NULL },
	{ "verified", "verified", 25, NULL, GP_FIELD_BOOL, 0, f_verified, NULL },
	{ "min_gbps", "min_gbps", 26, NULL, GP_FIELD_NUM, 0, f_min_gbps, NULL },
	{ "below_min", "below_min", 27, NULL, GP_FIELD_BOOL, 0, f_below, NULL },
	{ "peer_device", "peer_device", 28, NULL, GP_FIELD_STR, 0, f_peer_device, NULL },
	{ "peer_port", "peer_port", 29, NULL, GP_FIELD_INT, 0, f_peer_port, NULL },
	{ "peer_distance", "peer_distance", 30, NULL, GP_FIELD_STR, 0, f_peer_distance, NULL },
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

static void table(const struct cli *c, const struct rdma_report *rp)
{
	const struct gp_rdma_info *in = &rp->info;
	struct gp_table tb;
	int lat = rp->n && rp->rows[0].r.lat;

	if (!c->quiet)
		head_line(rp);
	if (gp_table_init(&tb, lat ? 8 : 10))
		return;
	tb.right[0] = tb.right[1] = 0;
	for (int i = 2; i < tb.ncol; i++)
		tb.right[i] = 1;
	if (lat) {
		const char *h[] = { "op", "test", "#bytes", "#iterations", "t_min[us]", "t_median[us]", "t_p99[us]", "verified" };

		gp_table_row(&tb, h);
	} else {
		const char *h[] = { "op", "test", "#bytes", "#iterations", "BW peak[Gb/s]", "BW average[Gb/s]", "[GB/s]",
			"MsgRate[Mpps]", "of port", "verified" };

		gp_table_row(&tb, h);
	}
	for (int i = 0; i < rp->n; i++) {
		const struct gp_rdma_result *r = &rp->rows[i].r;
		char b[8][32];

		snprintf(b[0], 32, "%llu", (unsigned long long)r->bytes);
		snprintf(b[1], 32, "%d", r->iters * r->reps);
		if (lat) {
			snprintf(b[2], 32, "%.2f", r->us_min);
			snprintf(b[3], 32, "%.2f", r->us_median);
			snprintf(b[4], 32, "%.2f", r->us_p99);
			const char *row[] = { gp_rdma_op_name(r->op), "lat", b[0], b[1], b[2], b[3], b[4], r->verified ? "yes" : "no" };

			gp_table_row(&tb, row);
			continue;
		}
		snprintf(b[2], 32, "%.2f", r->gbits_peak);
		snprintf(b[3], 32, "%.2f", r->gbits_avg);
		snprintf(b[4], 32, "%.2f", r->gbps);
		snprintf(b[5], 32, "%.4f", r->mpps);
		if (in->port_gbits > 0)
			snprintf(b[6], 32, "%.0f%%", r->port_fraction * 100);
		else
			snprintf(b[6], 32, "-");
		const char *row[] = { gp_rdma_op_name(r->op), "bw", b[0], b[1], b[2], b[3], b[4], b[5], b[6],
			r->verified ? "yes" : "no" };

		gp_table_row(&tb, row);
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
