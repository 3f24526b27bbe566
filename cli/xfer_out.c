/* gpup2p copy / bench — measurement rows as a table, JSON, CSV or JSON lines. Units: GB/s = 1e9 B/s,
 * microseconds, bytes. Numbers are numbers; what was not measured is null. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xfer_cli.h"

/* "GPU<g>", or "all" for g < 0 (a pattern's aggregate). */
static void gpu_name(int g, char *buf, size_t n)
{
	if (g < 0)
		snprintf(buf, n, "all");
	else
		snprintf(buf, n, "GPU%d", g);
}

/* Source and destination labels of a row. */
static void ends(const struct gp_bench_row *r, char *src, char *dst, size_t n)
{
	const struct gp_xfer_spec *s = &r->spec;

	if (s->chase) {                  /* the GPU that loads, and where the chain is */
		gpu_name(s->gpu, src, n);
		if (s->kind == GP_XFER_PEER)
			gpu_name(s->peer_gpu, dst, n);
		else
			snprintf(dst, n, "host");
		return;
	}
	switch (s->kind) {
	case GP_XFER_H2D: snprintf(src, n, "host"); gpu_name(s->gpu, dst, n); break;
	case GP_XFER_D2H: gpu_name(s->gpu, src, n); snprintf(dst, n, "host"); break;
	case GP_XFER_D2D: gpu_name(s->gpu, src, n); gpu_name(s->gpu, dst, n); break;
	case GP_XFER_PEER: gpu_name(s->gpu, src, n); gpu_name(s->peer_gpu, dst, n); break;
	}
}

static const char *memory(const struct gp_bench_row *r)
{
	if (r->spec.kind != GP_XFER_H2D && r->spec.kind != GP_XFER_D2H)
		return NULL;
	if (r->spec.via_map)
		return "mapped";
	return r->spec.pinned ? "pinned" : "pageable";
}

static const char *p2p(const struct gp_bench_row *r)
{
	return r->spec.kind == GP_XFER_PEER ? (r->spec.p2p ? "on" : "off") : NULL;
}

static const char *op(const struct gp_bench_row *r)
{
	if (r->spec.chase)
		return NULL;
	if (r->spec.kind != GP_XFER_PEER)
		return r->spec.bidir && r->spec.kind != GP_XFER_D2D ? "duplex" : NULL;
	return r->spec.read ? "read" : "write";
}

static const char *engine(const struct gp_bench_row *r)
{
	return r->spec.sm || r->spec.chase ? "sm" : "ce";
}

static int is_latency(const struct gp_bench_row *r)
{
	return !strcmp(r->mode, "latency");
}

/* The path column: latency and pattern rows name it (h2d, p2p, aggregate...), others are their mode. */
static const char *path(const struct gp_bench_row *r)
{
	return is_latency(r) || r->group ? r->what : r->mode;
}

/* A measured figure that its links can carry (else it is not printed: a measurement error). */
static int shown(const struct gp_bench_row *r)
{
	return r->done && !r->skip && !gp_bench_impossible(r, GP_LINKCAP_MARGIN);
}

static const char *check_word(const struct gp_bench_row *r)
{
	if (r->skip)
		return "skipped";
	if (!r->done)
		return "not run";
	return r->res.verified > 0 ? "ok" : r->res.verified == 0 ? "WRONG DATA" : "unchecked";
}

/* This machine's name, for report to tell whose rows these are (srun --label's task numbers name none). */
static const char *host_name(void)
{
	static char h[256];

	if (!h[0] && gethostname(h, sizeof(h) - 1))
		h[0] = '\0';
	return h[0] ? h : NULL;
}

#define ROW(x) ((const struct gp_bench_row *)(x))

static void f_host(const void *x, struct gp_value *v) { (void)x; v->s = host_name(); v->null = !v->s; }

static void f_mode(const void *x, struct gp_value *v) { v->s = ROW(x)->mode; }
static void f_path(const void *x, struct gp_value *v) { v->s = path(ROW(x)); }
static void f_src(const void *x, struct gp_value *v) { ends(ROW(x), v->num, v->num + 24, 24); v->s = v->num; }
static void f_dst(const void *x, struct gp_value *v) { ends(ROW(x), v->num + 24, v->num, 24); v->s = v->num; }
static void f_memory(const void *x, struct gp_value *v) { v->s = memory(ROW(x)); v->null = !v->s; }
static void f_p2p(const void *x, struct gp_value *v) { v->s = p2p(ROW(x)); v->null = !v->s; }
static void f_op(const void *x, struct gp_value *v) { v->s = op(ROW(x)); v->null = !v->s; }
static void f_engine(const void *x, struct gp_value *v) { v->s = engine(ROW(x)); }
static void f_size(const void *x, struct gp_value *v) { v->u = ROW(x)->spec.size; }
static void f_iters(const void *x, struct gp_value *v) { v->i = ROW(x)->spec.iters; }

static void f_reps(const void *x, struct gp_value *v)
{
	v->i = ROW(x)->spec.each ? ROW(x)->spec.iters : ROW(x)->spec.reps;
}

/* a number that is there when have, with prec decimals */
static void num(struct gp_value *v, int have, double d, int prec)
{
	v->null = !have;
	v->d = d;
	v->prec = prec;
}

#define BW(x) (shown(ROW(x)) && !is_latency(ROW(x)))
static void f_gbps(const void *x, struct gp_value *v) { num(v, BW(x), ROW(x)->res.gbps.median, 2); }
static void f_gbps_min(const void *x, struct gp_value *v) { num(v, BW(x), ROW(x)->res.gbps.min, 2); }
static void f_gbps_max(const void *x, struct gp_value *v) { num(v, BW(x), ROW(x)->res.gbps.max, 2); }
static void f_us(const void *x, struct gp_value *v) { num(v, shown(ROW(x)), ROW(x)->res.us.median, 3); }
static void f_us_min(const void *x, struct gp_value *v) { num(v, shown(ROW(x)), ROW(x)->res.us.min, 3); }

static void f_host_us(const void *x, struct gp_value *v)
{
	num(v, shown(ROW(x)) && ROW(x)->spec.host_timing, ROW(x)->res.host_us, 3);
}

#define CHECKED(x) (ROW(x)->done && !ROW(x)->skip) /* its data checked even where the figure is not shown */

static void f_verified(const void *x, struct gp_value *v)
{
	v->i = ROW(x)->res.verified;
	v->null = !CHECKED(x) || v->i < 0;
}

static void f_bad_offset(const void *x, struct gp_value *v)
{
	v->i = ROW(x)->res.bad_offset;
	v->omit = !CHECKED(x) || ROW(x)->res.verified;
}

static void f_stride(const void *x, struct gp_value *v) { v->u = ROW(x)->spec.stride; v->omit = !ROW(x)->spec.chase; }

static void f_chain(const void *x, struct gp_value *v)
{
	v->s = ROW(x)->spec.random ? "random" : "stride";
	v->omit = !ROW(x)->spec.chase;
}

static void f_host_numa(const void *x, struct gp_value *v)
{
	num(v, shown(ROW(x)) && ROW(x)->res.host_node >= 0 && memory(ROW(x)), ROW(x)->res.host_node, 0);
}

static void f_min_gbps(const void *x, struct gp_value *v) { num(v, ROW(x)->floor > 0, ROW(x)->floor, 2); }
static void f_below(const void *x, struct gp_value *v) { v->i = gp_bench_below(ROW(x)); }
static void f_max_gbps(const void *x, struct gp_value *v) { num(v, ROW(x)->ceiling > 0, ROW(x)->ceiling, 2); }
static void f_impossible(const void *x, struct gp_value *v) { v->i = gp_bench_impossible(ROW(x), GP_LINKCAP_MARGIN); }
static void f_gated(const void *x, struct gp_value *v) { v->i = shown(ROW(x)) && ROW(x)->res.gated; }
static void f_gate_forced(const void *x, struct gp_value *v) { v->i = shown(ROW(x)) && ROW(x)->res.gate_forced; }
static void f_skipped(const void *x, struct gp_value *v) { v->s = ROW(x)->skip; v->null = !v->s; }

/* The table's forms of the fields (their text()): what a person reads beside the numbers of CSV and JSON. */
static void t_mode(const void *x, struct gp_value *v)
{
	const struct gp_bench_row *r = ROW(x);
	int lat = is_latency(r);

	gp_buf_addf(v->buf, "%s%s%s%s", r->mode, lat ? " " : "", lat ? r->what : "",
		    r->spec.sm || r->spec.chase ? " sm" : "");
	v->s = gp_buf_str(v->buf);
}

static void t_size(const void *x, struct gp_value *v) { v->s = gp_size_str(ROW(x)->spec.size, v->num, sizeof(v->num)); }

static void t_gbps(const void *x, struct gp_value *v) /* '<' below --min-bw; error: more than its links carry */
{
	const struct gp_bench_row *r = ROW(x);

	if (BW(x))
		snprintf(v->num, sizeof(v->num), "%.1f%s", r->res.gbps.median, gp_bench_below(r) ? " <" : "");
	else
		snprintf(v->num, sizeof(v->num), shown(r) || !r->done || r->skip ? "-" : "error");
	v->s = v->num;
}

static void t_bw(const void *x, struct gp_value *v, double gbps)
{
	snprintf(v->num, sizeof(v->num), BW(x) ? "%.1f" : "-", gbps);
	v->s = v->num;
}

static void t_min(const void *x, struct gp_value *v) { t_bw(x, v, ROW(x)->res.gbps.min); }
static void t_max(const void *x, struct gp_value *v) { t_bw(x, v, ROW(x)->res.gbps.max); }

static void t_lat(const void *x, struct gp_value *v)
{
	const struct gp_bench_row *r = ROW(x);

	if (shown(r) && r->spec.chase)
		snprintf(v->num, sizeof(v->num), "%.3f (min %.3f)", r->res.us.median, r->res.us.min);
	else if (shown(r) && is_latency(r))
		snprintf(v->num, sizeof(v->num), "%.2f (host %.2f)", r->res.us.median, r->res.host_us);
	else
		snprintf(v->num, sizeof(v->num), "-");
	v->s = v->num;
}

static void t_data(const void *x, struct gp_value *v) { v->s = check_word(ROW(x)); }

/* A measurement row's fields, in JSON order; col: the CSV column (a new field takes the next number);
 * header: the table's column, in this order, text: its form there (what a person reads beside the numbers
 * of CSV and JSON). Units: GB/s = 1e9 B/s, microseconds, bytes. The host is the run's (GP_FIELD_HOST): in
 * each CSV and JSON lines record, once in the document. */
static const struct gp_field row_fields[] = {
	{ "host", "host", 22, NULL, GP_FIELD_STR, GP_FIELD_HOST, f_host, NULL, 0, NULL },
	{ "mode", "mode", 1, "MODE", GP_FIELD_STR, 0, f_mode, NULL, 0, t_mode },
	{ "path", "path", 2, NULL, GP_FIELD_STR, 0, f_path, NULL, 0, NULL },
	{ "src", "src", 3, "SRC", GP_FIELD_STR, 0, f_src, NULL, 0, NULL },
	{ "dst", "dst", 4, "DST", GP_FIELD_STR, 0, f_dst, NULL, 0, NULL },
	{ "memory", "memory", 5, "MEMORY", GP_FIELD_STR, 0, f_memory, NULL, 0, NULL },
	{ "p2p", "p2p", 6, "P2P", GP_FIELD_STR, 0, f_p2p, NULL, 0, NULL },
	{ "op", "op", 7, "OP", GP_FIELD_STR, 0, f_op, NULL, 0, NULL },
	{ "engine", "engine", 21, NULL, GP_FIELD_STR, 0, f_engine, NULL, 0, NULL },
	{ "size", "size", 8, "SIZE", GP_FIELD_U64, GP_FIELD_LEFT, f_size, NULL, 0, t_size },
	{ "iters", "iters", 9, NULL, GP_FIELD_INT, 0, f_iters, NULL, 0, NULL },
	{ "reps", "reps", 10, NULL, GP_FIELD_INT, 0, f_reps, NULL, 0, NULL },
	{ "gbps", "gbps", 11, "GB/s", GP_FIELD_NUM, GP_FIELD_LEFT, f_gbps, NULL, 0, t_gbps },
	{ "gbps_min", "gbps_min", 12, "MIN", GP_FIELD_NUM, GP_FIELD_LEFT, f_gbps_min, NULL, 0, t_min },
	{ "gbps_max", "gbps_max", 13, "MAX", GP_FIELD_NUM, GP_FIELD_LEFT, f_gbps_max, NULL, 0, t_max },
	{ "us", "us", 14, "LAT us", GP_FIELD_NUM, GP_FIELD_LEFT, f_us, NULL, 0, t_lat },
	{ "us_min", "us_min", 15, NULL, GP_FIELD_NUM, 0, f_us_min, NULL, 0, NULL },
	{ "host_us", "host_us", 16, NULL, GP_FIELD_NUM, 0, f_host_us, NULL, 0, NULL },
	{ "verified", "verified", 17, "DATA", GP_FIELD_BOOL, 0, f_verified, NULL, 0, t_data },
	{ "bad_offset", "bad_offset", 28, NULL, GP_FIELD_INT, 0, f_bad_offset, NULL, 0, NULL },
	{ "stride", "stride", 29, NULL, GP_FIELD_U64, 0, f_stride, NULL, 0, NULL },
	{ "chain", "chain", 30, NULL, GP_FIELD_STR, 0, f_chain, NULL, 0, NULL },
	{ "host_numa", "host_numa", 18, NULL, GP_FIELD_NUM, 0, f_host_numa, NULL, 0, NULL },
	{ "min_gbps", "min_gbps", 19, NULL, GP_FIELD_NUM, 0, f_min_gbps, NULL, 0, NULL },
	{ "below_min", "below_min", 20, NULL, GP_FIELD_BOOL, 0, f_below, NULL, 0, NULL },
	{ "max_gbps", "max_gbps", 23, NULL, GP_FIELD_NUM, 0, f_max_gbps, NULL, 0, NULL },
	{ "impossible", "impossible", 24, NULL, GP_FIELD_BOOL, 0, f_impossible, NULL, 0, NULL },
	{ "gated", "gated", 25, NULL, GP_FIELD_BOOL, 0, f_gated, NULL, 0, NULL },
	{ "gate_forced", "gate_forced", 26, NULL, GP_FIELD_BOOL, 0, f_gate_forced, NULL, 0, NULL },
	{ "skipped", "skipped", 27, NULL, GP_FIELD_STR, 0, f_skipped, NULL, 0, NULL },
};

#define NFIELDS ((int)(sizeof(row_fields) / sizeof(row_fields[0])))

/* --csv and --jsonl: each row a record */
static void print_records(const struct cli *c, const char *command, const struct gp_bench_row *rows, int n)
{
	struct gp_buf scratch = GP_BUF_INIT;
	struct gp_json j;

	if (c->fmt == GP_OUT_CSV && !c->no_header)
		gp_fields_csv_header(stdout, row_fields, NFIELDS);
	for (int i = 0; i < n; i++)
		cli_record(c, &j, command, row_fields, NFIELDS, &rows[i], &scratch);
	gp_buf_free(&scratch);
}

static void num_or_null(struct gp_json *j, const char *key, int have, double v, int prec)
{
	if (have)
		gp_json_num(j, key, v, prec);
	else
		gp_json_null(j, key);
}

/* The p2p rows again as GPU x GPU matrices (rows: source, columns: destination), one per peer
 * setting, direction and size, as p2pBandwidthLatencyTest prints them. */
static void print_matrices(const struct gp_bench_row *rows, int n)
{
	int ng = 0;

	for (int i = 0; i < n; i++)
		if (!strcmp(rows[i].mode, "p2p")) {
			ng = rows[i].spec.gpu + 1 > ng ? rows[i].spec.gpu + 1 : ng;
			ng = rows[i].spec.peer_gpu + 1 > ng ? rows[i].spec.peer_gpu + 1 : ng;
		}
	for (int i = 0; i < n; i++) {
		const struct gp_bench_row *r = &rows[i];
		int first = 1;
		struct gp_table t;
		char size[32], title[16];

		if (strcmp(r->mode, "p2p"))
			continue;
		/* print each (setting, direction, size) once, at its first row */
		for (int k = 0; k < i && first; k++)
			first = !(!strcmp(rows[k].mode, "p2p") && rows[k].spec.p2p == r->spec.p2p && rows[k].spec.sm == r->spec.sm &&
				  rows[k].spec.read == r->spec.read && rows[k].spec.size == r->spec.size);
		if (!first || gp_table_init(&t, ng + 1))
			continue;
		for (int g = 1; g <= ng; g++)
			t.right[g] = 1;
		printf("\n%sP2P %s, peer access %s, %s per copy (GB/s, median; row: source, column: destination)\n",
		       r->spec.sm ? "SM " : "", r->spec.read ? "read" : "write", r->spec.p2p ? "on" : "off", gp_size_str(r->spec.size, size, sizeof(size)));
		{
			char (*hdr)[16] = calloc((size_t)ng + 1, sizeof(*hdr));
			const char **cells = calloc((size_t)ng + 1, sizeof(*cells));

			if (!hdr || !cells) {
				free(hdr);
				free(cells);
				gp_table_free(&t);
				return;
			}
			snprintf(hdr[0], 16, "%s", "");
			cells[0] = hdr[0];
			for (int g = 0; g < ng; g++) {
				snprintf(hdr[g + 1], 16, "GPU%d", g);
				cells[g + 1] = hdr[g + 1];
			}
			gp_table_row(&t, cells);
			for (int a = 0; a < ng; a++) {
				snprintf(title, sizeof(title), "GPU%d", a);
				cells[0] = title;
				for (int b = 0; b < ng; b++) {
					snprintf(hdr[b + 1], 16, "-");
					for (int k = 0; k < n; k++) {
						const struct gp_bench_row *x = &rows[k];

						if (!strcmp(x->mode, "p2p") && x->spec.p2p == r->spec.p2p && x->spec.read == r->spec.read &&
						    x->spec.sm == r->spec.sm &&
						    x->spec.size == r->spec.size && x->spec.gpu == a && x->spec.peer_gpu == b)
							snprintf(hdr[b + 1], 16, x->skip ? "n/a" : x->done ? "%.1f" : "-", x->res.gbps.median);
					}
					cells[b + 1] = hdr[b + 1];
				}
				gp_table_row(&t, cells);
			}
			free(hdr);
			free(cells);
		}
		gp_table_print(&t, stdout, 2, 2, NULL);
		gp_table_free(&t);
	}
}

static void print_table(const struct cli *c, const struct gp_bench_row *rows, int n)
{
	struct gp_buf scratch = GP_BUF_INIT;
	struct gp_table t;
	int any_lat = 0, any_bw = 0, any_chase = 0, any_sm = 0, any_group = 0;

	for (int i = 0; i < n; i++) {
		rows[i].spec.chase ? any_chase++ : is_latency(&rows[i]) ? any_lat++ : any_bw++;
		any_sm |= rows[i].spec.sm && !rows[i].spec.chase;
		any_group |= rows[i].group;
	}
	if (gp_fields_table_init(&t, row_fields, NFIELDS, 0))
		return;
	for (int i = 0; i < n; i++)
		gp_fields_table_row(&t, row_fields, NFIELDS, 0, &rows[i], &scratch);
	gp_buf_free(&scratch);
	gp_table_print(&t, stdout, 0, 2, NULL);
	gp_table_free(&t);
	if (c->quiet)
		return;
	print_matrices(rows, n);
	if (any_bw)
		printf("\nGB/s = 1e9 bytes/s, median of the repetitions (min, max beside it); '<' below --min-bw.\n");
	if (any_lat)
		printf("LAT us: one copy, timed on the GPU within a gated batch; host: copy + wait timed by the CPU.\n");
	if (any_chase)
		printf("latency sm: one load of a pointer chase by SRC's cores in DST's memory, us (GPU\n"
		       "timer; the mean over SRC's SMs, each chasing in turn).\n");
	if (any_group)
		printf("one2all/all2one/all2host/host2all: copies run together from one gate, each\n"
		       "timed on its GPU from the gate to its end; 'all': the aggregate, every byte\n"
		       "over the longest copy's time.\n");
	if (any_sm)
		printf("sm: copied by the GPU's cores (a kernel on the source GPU, or the destination's for reads).\n");
	for (int i = 0; i < n; i++)
		if (rows[i].skip) {
			printf("Skipped rows: %s.\n", rows[i].skip);
			break;
		}
	for (int i = 0; i < n; i++)
		if (gp_bench_impossible(&rows[i], GP_LINKCAP_MARGIN)) {
			printf("error: above its links' %.1f GB/s (%s): measurement error\n",
			       rows[i].ceiling, rows[i].ceiling_why);
			break;
		}
}

/* The exit status the rows give (xfer_verdict's): 2 a copy whose data came back wrong (an aggregate
 * row's pair says so itself) or a figure its links cannot carry, 1 a rate below --min-bw, 0 none. */
static int rows_status(const struct gp_bench_row *rows, int n)
{
	int wrong = 0, below = 0;

	for (int i = 0; i < n; i++) {
		const struct gp_bench_row *r = &rows[i];

		if (!r->done || r->skip)
			continue;
		wrong += gp_bench_impossible(r, GP_LINKCAP_MARGIN);
		if (r->res.verified == 0)
			wrong += !r->aggregate;
		else
			below += gp_bench_below(r);
	}
	return wrong ? EX_ERROR : below ? EX_WARN : 0;
}

static void json_doc(const struct cli *c, const struct xfer_session *s, const char *command,
		     const struct gp_bench_row *rows, int n, int rc)
{
	struct gp_buf scratch = GP_BUF_INIT;
	struct gp_json j;
	char ver[32];

	cli_json_begin(c, &j, command, c->argc, c->argv);
	gp_json_str(&j, "host", host_name());
	gp_json_obj(&j, "units");
	gp_json_str(&j, "bandwidth", "GB/s (1e9 bytes/s)");
	gp_json_str(&j, "latency", "us");
	gp_json_str(&j, "size", "bytes");
	gp_json_end(&j, '}');
	snprintf(ver, sizeof(ver), "%d.%d", s->cuda.driver_version / 1000, s->cuda.driver_version % 1000 / 10);
	gp_json_str(&j, "cuda_driver_api", ver);
	gp_json_str(&j, "driver", s->driver[0] ? s->driver : NULL);
	gp_json_arr(&j, "gpus");
	for (int i = 0; i < s->cuda.n; i++) {
		gp_json_obj(&j, NULL);
		gp_json_int(&j, "index", i);
		gp_json_str(&j, "name", s->cuda.gpu[i].name);
		gp_json_str(&j, "bdf", s->cuda.gpu[i].bdf);
		num_or_null(&j, "numa_node", s->numa[i] >= 0, s->numa[i], 0);
		num_or_null(&j, "link_gen", s->gen[i] > 0, s->gen[i], 0);
		num_or_null(&j, "link_width", s->width[i] > 0, s->width[i], 0);
		gp_json_end(&j, '}');
	}
	gp_json_end(&j, ']');
	gp_json_arr(&j, "results");
	for (int i = 0; i < n; i++)
		cli_record(c, &j, command, row_fields, NFIELDS, &rows[i], &scratch);
	gp_json_end(&j, ']');
	cli_json_end(c, &j, rc);
	gp_buf_free(&scratch);
}

void xfer_print(const struct cli *c, const struct xfer_session *s, const char *command,
		const struct gp_bench_row *rows, int n, int rc)
{
	switch (c->fmt) {
	case GP_OUT_JSON: json_doc(c, s, command, rows, n, rc < 0 ? rows_status(rows, n) : rc); break;
	case GP_OUT_JSONL:
	case GP_OUT_CSV: print_records(c, command, rows, n); break;
	case GP_OUT_TABLE: print_table(c, rows, n); break;
	}
}

int xfer_verdict(const struct cli *c, const struct gp_bench_row *rows, int n)
{
	for (int i = 0; i < n; i++) {
		const struct gp_bench_row *r = &rows[i];
		char src[16], dst[16];

		if (!r->done || r->skip)
			continue;
		ends(r, src, dst, sizeof(src));
		if (gp_bench_impossible(r, GP_LINKCAP_MARGIN))
			fprintf(stderr, "gpup2p: %s %s->%s: %.1f GB/s, its links carry %.1f: measurement error\n", r->mode,
				src, dst, r->res.gbps.median, r->ceiling);
		if (r->res.verified == 0 && r->aggregate) {
			continue;               /* the pair that went wrong says so */
		} else if (r->res.verified == 0 && r->spec.chase) {
			char which[32] = "the warm-up";

			if (r->res.bad_copy >= 0)
				snprintf(which, sizeof(which), "batch %d", r->res.bad_copy + 1);
			fprintf(stderr, "gpup2p: latency %s->%s: the pointer chase of %s ended at byte %lld of the chain, "
				"expected byte %lld\n", src, dst, which, (long long)r->res.bad_offset,
				(long long)r->res.want_offset);
		} else if (r->res.verified == 0) {
			char where[32];

			if (r->spec.each)
				snprintf(where, sizeof(where), "of copy %d", r->res.bad_copy + 1);
			else
				snprintf(where, sizeof(where), "after the timed copies");
			fprintf(stderr, "gpup2p: %s %s->%s: data wrong at byte %lld %s: expected 0x%02x, got 0x%02x\n",
				r->mode, r->res.bad_lane ? dst : src, r->res.bad_lane ? src : dst, (long long)r->res.bad_offset,
				where, r->res.want, r->res.got);
		} else if (gp_bench_below(r) && !c->quiet) {
			fprintf(stderr, "gpup2p: %s %s->%s %s: %.1f GB/s is below --min-bw %.1f\n", r->mode, src, dst,
				memory(r) ? memory(r) : p2p(r) ? (r->spec.p2p ? "p2p on" : "p2p off") : "", r->res.gbps.median,
				r->floor);
		}
	}
	return rows_status(rows, n);
}
