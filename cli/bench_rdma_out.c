/* gpup2p bench rdma — the result rows as a table (perftest's columns), JSON, CSV and JSON lines. Every
 * machine format is written from one field list, so that they carry the same keys. */
#include <stdio.h>
#include <string.h>

#include "bench_rdma.h"

enum ftype { F_STR, F_INT, F_NUM, F_BOOL };

struct fval {
	enum ftype t;
	int null;
	const char *s;
	double v;
	int prec;
};

static const char *const keys[] = {
	"mode", "op", "test", "device", "port", "mem", "mem_path", "gpu", "peer_mem", "peer_mem_path", "peer_gpu",
	"distance", "bytes", "iters", "reps", "gbps", "gbits_avg", "gbits_peak", "mpps", "port_gbits",
	"port_fraction", "us_min", "us_median", "us_p99", "verified", "min_gbps", "below_min", "peer_device", "peer_port",
	"peer_distance",
};
#define NKEYS (int)(sizeof(keys) / sizeof(keys[0]))

int rdma_below(const struct rdma_row *w)
{
	return !w->r.lat && w->floor > 0 && w->r.gbps < w->floor;
}

static struct fval S(const char *s) { return (struct fval){ .t = F_STR, .null = !s, .s = s }; }
static struct fval I(double v, int null) { return (struct fval){ .t = F_INT, .null = null, .v = v }; }
static struct fval N(double v, int prec, int null) { return (struct fval){ .t = F_NUM, .null = null, .v = v, .prec = prec }; }
static struct fval B(int v) { return (struct fval){ .t = F_BOOL, .v = v }; }

static struct fval field(const struct rdma_report *rp, const struct rdma_row *w, int k)
{
	const struct gp_rdma_info *in = &rp->info;
	const struct gp_rdma_result *r = &w->r;
	int bw = !r->lat;

	switch (k) {
	case 0: return S("rdma");
	case 1: return S(gp_rdma_op_name(r->op));
	case 2: return S(r->lat ? "lat" : "bw");
	case 3: return S(in->nic.device);
	case 4: return I(in->nic.port, 0);
	case 5: return S(rp->mem);
	case 6: return S(in->mem_path);
	case 7: return I(in->gpu, in->gpu < 0);
	case 8: return S(rp->loopback ? rp->peer_mem : NULL);
	case 9: return S(rp->loopback ? in->peer_mem_path : NULL);
	case 10: return I(in->peer_gpu, !rp->loopback || in->peer_gpu < 0);
	case 11: return S(rp->distance);
	case 12: return I((double)r->bytes, 0);
	case 13: return I(r->iters, 0);
	case 14: return I(r->reps, 0);
	case 15: return N(r->gbps, 3, !bw);
	case 16: return N(r->gbits_avg, 3, !bw);
	case 17: return N(r->gbits_peak, 3, !bw);
	case 18: return N(r->mpps, 4, !bw);
	case 19: return N(in->port_gbits, 3, !(in->port_gbits > 0));
	case 20: return N(r->port_fraction, 4, !bw || !(in->port_gbits > 0));
	case 21: return N(r->us_min, 3, bw);
	case 22: return N(r->us_median, 3, bw);
	case 23: return N(r->us_p99, 3, bw);
	case 24: return B(r->verified);
	case 25: return N(w->floor, 2, !(w->floor > 0) || !bw);
	case 26: return B(rdma_below(w));
	case 27: return S(rp->loopback ? in->peer_nic.device : NULL);
	case 28: return I(in->peer_nic.port, !rp->loopback);
	default: return S(rp->loopback ? rp->peer_distance : NULL);
	}
}

static void json_row(struct gp_json *j, const struct rdma_report *rp, const struct rdma_row *w)
{
	gp_json_obj(j, NULL);
	for (int k = 0; k < NKEYS; k++) {
		struct fval f = field(rp, w, k);

		if (f.null)
			gp_json_null(j, keys[k]);
		else if (f.t == F_STR)
			gp_json_str(j, keys[k], f.s);
		else if (f.t == F_INT)
			gp_json_int(j, keys[k], (long long)f.v);
		else if (f.t == F_NUM)
			gp_json_num(j, keys[k], f.v, f.prec);
		else
			gp_json_bool(j, keys[k], (int)f.v);
	}
	gp_json_end(j, '}');
}

static void csv_row(const struct rdma_report *rp, const struct rdma_row *w)
{
	for (int k = 0; k < NKEYS; k++) {
		struct fval f = field(rp, w, k);
		char buf[64] = "";

		if (f.null)
			;
		else if (f.t == F_STR)
			snprintf(buf, sizeof(buf), "%s", f.s);
		else if (f.t == F_INT)
			snprintf(buf, sizeof(buf), "%.0f", f.v);
		else if (f.t == F_NUM)
			snprintf(buf, sizeof(buf), "%.*f", f.prec, f.v);
		else
			snprintf(buf, sizeof(buf), "%s", f.v ? "true" : "false");
		gp_csv_field(stdout, buf, k + 1 < NKEYS ? ',' : '\n');
	}
}

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

	switch (c->fmt) {
	case GP_OUT_JSON:
		cli_json_begin(c, &j, "bench rdma", argc, argv);
		gp_json_arr(&j, "results");
		for (int i = 0; i < rp->n; i++)
			json_row(&j, rp, &rp->rows[i]);
		gp_json_end(&j, ']');
		cli_json_end(c, &j, exit_status);
		break;
	case GP_OUT_JSONL:
		for (int i = 0; i < rp->n; i++) {
			gp_json_init(&j, stdout, 0);
			json_row(&j, rp, &rp->rows[i]);
		}
		break;
	case GP_OUT_CSV:
		if (!c->no_header)
			for (int k = 0; k < NKEYS; k++)
				gp_csv_field(stdout, keys[k], k + 1 < NKEYS ? ',' : '\n');
		for (int i = 0; i < rp->n; i++)
			csv_row(rp, &rp->rows[i]);
		break;
	case GP_OUT_TABLE:
		table(c, rp);
		break;
	}
}
