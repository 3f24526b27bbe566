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
	struct gp_table t;
	char cell[12][48];
	const char *hdr[12] = { "MODE", "SRC", "DST", "MEMORY", "P2P", "OP", "SIZE", "GB/s", "MIN", "MAX",
				"LAT us", "DATA" };
	const char *cells[12];
	int any_lat = 0, any_bw = 0, any_chase = 0, any_sm = 0, any_group = 0;

	for (int i = 0; i < n; i++) {
		rows[i].spec.chase ? any_chase++ : is_latency(&rows[i]) ? any_lat++ : any_bw++;
		any_sm |= rows[i].spec.sm && !rows[i].spec.chase;
		any_group |= rows[i].group;
	}
	if (gp_table_init(&t, 12))
		return;
	gp_table_row(&t, hdr);
	for (int i = 0; i < n; i++) {
		const struct gp_bench_row *r = &rows[i];
		int m = shown(r), lat = is_latency(r);

		for (int k = 0; k < 12; k++)
			cells[k] = cell[k];
		snprintf(cell[0], 48, "%s%s%s%s", r->mode, lat ? " " : "", lat ? r->what : "",
			 r->spec.sm || r->spec.chase ? " sm" : "");
		ends(r, cell[1], cell[2], 48);
		snprintf(cell[3], 48, "%s", memory(r) ? memory(r) : "-");
		snprintf(cell[4], 48, "%s", p2p(r) ? p2p(r) : "-");
		snprintf(cell[5], 48, "%s", op(r) ? op(r) : "-");
		gp_size_str(r->spec.size, cell[6], 48);
		snprintf(cell[7], 48, m && !lat ? "%.1f%s" : m || !r->done || r->skip ? "-" : "error", r->res.gbps.median,
			 gp_bench_below(r) ? " <" : "");
		snprintf(cell[8], 48, m && !lat ? "%.1f" : "-", r->res.gbps.min);
		snprintf(cell[9], 48, m && !lat ? "%.1f" : "-", r->res.gbps.max);
		if (m && r->spec.chase)
			snprintf(cell[10], 48, "%.3f (min %.3f)", r->res.us.median, r->res.us.min);
		else if (m && lat)
			snprintf(cell[10], 48, "%.2f (host %.2f)", r->res.us.median, r->res.host_us);
		else
			snprintf(cell[10], 48, "-");
		snprintf(cell[11], 48, "%s", check_word(r));
		gp_table_row(&t, cells);
	}
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
		printf("latency sm: one load of a pointer chase by SRC's cores in DST's memory, us (GPU timer).\n");
	if (any_group)
		printf("one2all/all2one/all2host/host2all: copies run together on one clock, each from\n"
		       "the shared start to its end; 'all': the aggregate, every byte over the time\n"
		       "until the last copy ended.\n");
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

static void num_or_null(struct gp_json *j, const char *key, int have, double v, int prec)
{
	if (have)
		gp_json_num(j, key, v, prec);
	else
		gp_json_null(j, key);
}

/* This machine's name, for report to tell whose rows these are (srun --label's task numbers name none). */
static const char *host_name(void)
{
	static char h[256];

	if (!h[0] && gethostname(h, sizeof(h) - 1))
		h[0] = '\0';
	return h[0] ? h : NULL;
}

/* One row: an element of "results", or with command a JSON lines record of that command. */
static void json_row(struct gp_json *j, const struct gp_bench_row *r, const char *command)
{
	char src[16], dst[16];
	int m = shown(r), lat = is_latency(r);

	ends(r, src, dst, sizeof(src));
	if (command) {
		cli_jsonl_record(j, command);
		gp_json_str(j, "host", host_name());
	} else {
		gp_json_obj(j, NULL);
	}
	gp_json_str(j, "mode", r->mode);
	gp_json_str(j, "path", path(r));
	gp_json_str(j, "src", src);
	gp_json_str(j, "dst", dst);
	gp_json_str(j, "memory", memory(r));
	gp_json_str(j, "p2p", p2p(r));
	gp_json_str(j, "op", op(r));
	gp_json_str(j, "engine", engine(r));
	gp_json_u64(j, "size", r->spec.size);
	gp_json_int(j, "iters", r->spec.iters);
	gp_json_int(j, "reps", r->spec.each ? r->spec.iters : r->spec.reps);
	num_or_null(j, "gbps", m && !lat, r->res.gbps.median, 2);
	num_or_null(j, "gbps_min", m && !lat, r->res.gbps.min, 2);
	num_or_null(j, "gbps_max", m && !lat, r->res.gbps.max, 2);
	num_or_null(j, "us", m, r->res.us.median, 3);
	num_or_null(j, "us_min", m, r->res.us.min, 3);
	num_or_null(j, "host_us", m && r->spec.host_timing, r->res.host_us, 3);
	if (r->done && !r->skip && r->res.verified >= 0)   /* checked even where the figure is not shown */
		gp_json_bool(j, "verified", r->res.verified);
	else
		gp_json_null(j, "verified");
	if (r->done && !r->skip && r->res.verified == 0)
		gp_json_int(j, "bad_offset", r->res.bad_offset);
	if (r->spec.chase) {
		gp_json_u64(j, "stride", r->spec.stride);
		gp_json_str(j, "chain", r->spec.random ? "random" : "stride");
	}
	num_or_null(j, "host_numa", m && r->res.host_node >= 0 && memory(r), r->res.host_node, 0);
	num_or_null(j, "min_gbps", r->floor > 0, r->floor, 2);
	gp_json_bool(j, "below_min", gp_bench_below(r));
	num_or_null(j, "max_gbps", r->ceiling > 0, r->ceiling, 2);
	gp_json_bool(j, "impossible", gp_bench_impossible(r, GP_LINKCAP_MARGIN));
	gp_json_bool(j, "gated", m && r->res.gated);
	gp_json_bool(j, "gate_forced", m && r->res.gate_forced);
	gp_json_str(j, "skipped", r->skip);
	gp_json_end(j, '}');
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
		json_row(&j, &rows[i], NULL);
	gp_json_end(&j, ']');
	cli_json_end(c, &j, rc);
}

static void csv_num(int have, double v, int prec, char sep)
{
	char buf[48];

	if (have)
		snprintf(buf, sizeof(buf), "%.*f", prec, v);
	else
		buf[0] = '\0';
	gp_csv_field(stdout, buf, sep);
}

static void print_csv(const struct cli *c, const struct gp_bench_row *rows, int n)
{
	if (!c->no_header)
		printf("mode,path,src,dst,memory,p2p,op,size,iters,reps,gbps,gbps_min,gbps_max,us,us_min,host_us,"
		       "verified,host_numa,min_gbps,below_min,engine\n");
	for (int i = 0; i < n; i++) {
		const struct gp_bench_row *r = &rows[i];
		char src[16], dst[16], num[32];
		int m = shown(r), lat = is_latency(r);

		ends(r, src, dst, sizeof(src));
		gp_csv_field(stdout, r->mode, ',');
		gp_csv_field(stdout, path(r), ',');
		gp_csv_field(stdout, src, ',');
		gp_csv_field(stdout, dst, ',');
		gp_csv_field(stdout, memory(r) ? memory(r) : "", ',');
		gp_csv_field(stdout, p2p(r) ? p2p(r) : "", ',');
		gp_csv_field(stdout, op(r) ? op(r) : "", ',');
		snprintf(num, sizeof(num), "%llu", (unsigned long long)r->spec.size);
		gp_csv_field(stdout, num, ',');
		snprintf(num, sizeof(num), "%d", r->spec.iters);
		gp_csv_field(stdout, num, ',');
		snprintf(num, sizeof(num), "%d", r->spec.each ? r->spec.iters : r->spec.reps);
		gp_csv_field(stdout, num, ',');
		csv_num(m && !lat, r->res.gbps.median, 2, ',');
		csv_num(m && !lat, r->res.gbps.min, 2, ',');
		csv_num(m && !lat, r->res.gbps.max, 2, ',');
		csv_num(m, r->res.us.median, 3, ',');
		csv_num(m, r->res.us.min, 3, ',');
		csv_num(m && r->spec.host_timing, r->res.host_us, 3, ',');
		gp_csv_field(stdout, !r->done || r->skip || r->res.verified < 0 ? "" : r->res.verified ? "true" : "false", ',');
		csv_num(m && r->res.host_node >= 0 && memory(r), r->res.host_node, 0, ',');
		csv_num(r->floor > 0, r->floor, 2, ',');
		gp_csv_field(stdout, gp_bench_below(r) ? "true" : "false", ',');
		gp_csv_field(stdout, engine(r), '\n');
	}
}

void xfer_print(const struct cli *c, const struct xfer_session *s, const char *command,
		const struct gp_bench_row *rows, int n, int rc)
{
	switch (c->fmt) {
	case GP_OUT_JSON: json_doc(c, s, command, rows, n, rc < 0 ? rows_status(rows, n) : rc); break;
	case GP_OUT_JSONL:
		for (int i = 0; i < n; i++) {
			struct gp_json j;

			json_row(&j, &rows[i], command);
		}
		break;
	case GP_OUT_CSV: print_csv(c, rows, n); break;
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
			fprintf(stderr, "gpup2p: latency %s->%s: the pointer chase of %s ended at byte %lld of the chain, "
				"expected byte %lld\n", src, dst, r->res.bad_copy < 0 ? "the warm-up" : "a repetition",
				(long long)r->res.bad_offset, (long long)r->res.want_offset);
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
