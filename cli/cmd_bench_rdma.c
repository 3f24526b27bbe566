/* gpup2p bench rdma — GPUDirect RDMA bandwidth and latency: RDMA write, read and send between two RC
 * queue pairs on this host (loopback) or with a server on another host (librdmacm). */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "bench_rdma.h"
#include "gpup2p/bench.h"
#include "gpup2p/topo.h"
#include "xfer_cli.h"

void help_bench_rdma(FILE *f)
{
	fprintf(f,
		"usage: gpup2p bench rdma [--op write|read|send|all] [--lat]\n"
		"              [--mem host|gpu[:N]|auto] [--peer-mem host|gpu[:N]|auto]\n"
		"              [--device IBDEV] [--ib-port N] [--gid-index N]\n"
		"              [--peer-device IBDEV] [--peer-ib-port N] [--peer-gid-index N]\n"
		"              [--server [--bind ADDR] | --connect HOST] [--rdma-port P]\n"
		"              [--timeout SEC] [--size S | --min S --max S [--factor F]]\n"
		"              [--iters K] [--reps R] [--min-bw [OP=]GBPS]... [--no-verify]\n"
		"              [--json|--csv|--jsonl]\n\n"
		"Measure RDMA between a NIC and host or GPU memory (GPUDirect RDMA) with RC\n"
		"queue pairs: RDMA write, RDMA read and send/receive, bandwidth (a window of\n"
		"operations in flight; peak = the fastest repetition) or, with --lat, ping-pong\n"
		"latency (one way: half a round trip; read: one read). Without --server or\n"
		"--connect both queue pairs are on this host (loopback), on one device or, with\n"
		"--peer-device, the second on another (two NICs joined by a cable or a switch).\n"
		"With them, the server waits for one client (librdmacm) and answers its\n"
		"measurements; the client prints. GPU memory is registered through dma-buf\n"
		"(cuMemGetHandleForAddressRange + ibv_reg_dmabuf_mr) or through nvidia-peermem\n"
		"(ibv_reg_mr on device memory), dma-buf first; the result says which. Each\n"
		"result also as a fraction of what the port carries after IB or RoCE v2 headers\n"
		"at its MTU, and the PCIe distance between the NIC and the memory (PIX, PXB,\n"
		"PHB, NODE, SYS; host memory: host), each side's to its own NIC. The data is\n"
		"checked after timing.\n\n");
	opts_help(f, &opts_bench_rdma);
	fprintf(f,
		"\nUnits: Gb/s = 1e9 bits/s, GB/s = 1e9 bytes/s; sizes K/M/G = powers of 1024.\n"
		"Exit: 0 ok, 1 below --min-bw, 2 wrong data, a port not ACTIVE, a failed verbs\n"
		"call or a peer that stopped answering, 64 usage, 69 no rdma-core, no RDMA\n"
		"device or no CUDA for GPU memory, 77 permission denied.\n");
}

struct ropts {
	struct gp_rdma_plan p;
	struct gp_threshold t[GP_THRESH_MAX];     /* --min-bw */
	int nt;
};

static const char *const rdma_threshold_ops[] = { "write", "read", "send", NULL };

/* a whole number from opt->val to opt->hi */
static int num_opt(const char *cmd, const struct opt *opt, const char *val, void *field, void *ctx)
{
	char *end;
	long n = strtol(val, &end, 10);

	(void)ctx;
	if (!*val || *end || n < opt->val || n > opt->hi)
		return cli_usage(cmd, "%s wants a whole number from %d to %d, not '%s'", opt->name, opt->val, opt->hi, val);
	*(int *)field = (int)n;
	return 0;
}

static int mem_opt(const char *cmd, const struct opt *opt, const char *val, void *field, void *ctx)
{
	(void)ctx;
	if (gp_rdma_mem_parse(val, field))
		return cli_usage(cmd, "%s takes host, gpu, gpu:N or auto, not '%s'", opt->name, val);
	return 0;
}

static const char *const op_words[] = { "write", "read", "send", "all", NULL };

static int op_opt(const char *cmd, const struct opt *opt, const char *val, void *field, void *ctx)
{
	int k = 0;

	(void)opt, (void)ctx;
	while (op_words[k] && strcmp(val, op_words[k]))
		k++;
	if (!op_words[k])
		return cli_usage(cmd, "--op takes write, read, send or all, not '%s'", val);
	*(int *)field |= k == 3 ? GP_RDMA_WRITE | GP_RDMA_READ | GP_RDMA_SEND : 1 << k;
	return 0;
}

static int factor_opt(const char *cmd, const struct opt *opt, const char *val, void *field, void *ctx)
{
	(void)opt, (void)ctx;
	return xfer_factor_arg(cmd, val, field) ? EX_USAGE_ : 0;
}

static int min_bw_opt(const char *cmd, const struct opt *opt, const char *val, void *field, void *ctx)
{
	struct ropts *r = ctx;

	(void)opt, (void)field;
	if (r->nt == GP_THRESH_MAX)
		return cli_usage(cmd, "at most %d --min-bw", GP_THRESH_MAX);
	if (gp_threshold_parse(val, rdma_threshold_ops, &r->t[r->nt]))
		return cli_usage(cmd, "--min-bw wants GB/s above 0, for every operation or one (write=, read=, send=), like "
				 "10 or write=2.5, not '%s'", val);
	r->nt++;
	return 0;
}

static int no_argument(const char *cmd, const char *arg, void *ctx)
{
	(void)ctx;
	return cli_usage(cmd, "unexpected argument '%s'", arg);
}

static void ib_devices(const char *cur)
{
	(void)cur;
	opts_suggest_dir("/sys/class/infiniband");
}

static const char *const size_words[] = { "4K", "64K", "1M", "64M", "256M", "1G", NULL };
static const char *const mem_words[] = { "host", "gpu", "gpu:0", "auto", NULL };
static const char *const bw_words[] = { "write=", "read=", "send=", NULL };

#define O(f) (long)offsetof(struct ropts, f)
static const struct opt rdma_opts[] = {
	{ "--op", NULL, "OP", OPT_CALL, O(p.ops), .call = op_opt, .values = op_words,
	  .help = "write, read, send or all (default all)" },
	{ "--lat", NULL, NULL, OPT_FLAG, O(p.lat), 1, .help = "latency ping-pong instead of bandwidth" },
	{ "--mem", NULL, "M", OPT_CALL, O(p.o.mem), .call = mem_opt, .values = mem_words,
	  .help = "this side's buffer: host (default; on the NIC's NUMA\nnode), gpu[:N] (GPU N, default 0) or auto (GPU 0 "
		  "when CUDA\nsees one, else host)" },
	{ "--peer-mem", NULL, "M", OPT_CALL, O(p.o.peer_mem), .call = mem_opt, .values = mem_words,
	  .help = "loopback: the other queue pair's buffer (default: as\n--mem)" },
	{ "--device", NULL, "IBDEV", OPT_STR, O(p.o.device), .suggest = ib_devices,
	  .needs = "an RDMA device name, like mlx5_0 or rxe0",
	  .help = "RDMA device (default: the closest to the GPU with GPU\nmemory, else the first with an ACTIVE port; "
		  "between hosts:\nthe one the address is on)" },
	{ "--ib-port", NULL, "N", OPT_CALL, O(p.o.ib_port), 1, 255, .call = num_opt, .help = "port (default 1)" },
	{ "--gid-index", NULL, "N", OPT_CALL, O(p.o.gid_index), 0, 255, .call = num_opt,
	  .help = "GID index (default: the port's RoCE v2 GID on RoCE, none\non InfiniBand)" },
	{ "--peer-device", NULL, "IBDEV", OPT_STR, O(p.o.peer_device), .suggest = ib_devices,
	  .needs = "an RDMA device name, like mlx5_1 or rxe1",
	  .help = "loopback: the other queue pair's device (default:\n--device's); both of one link layer" },
	{ "--peer-ib-port", NULL, "N", OPT_CALL, O(p.o.peer_ib_port), 1, 255, .call = num_opt,
	  .help = "its port (default: --ib-port's)" },
	{ "--peer-gid-index", NULL, "N", OPT_CALL, O(p.o.peer_gid_index), 0, 255, .call = num_opt,
	  .help = "its GID index (default: its port's RoCE v2 GID on RoCE,\n--gid-index's on IB)" },
	{ "--server", NULL, NULL, OPT_FLAG, O(p.o.role), GP_RDMA_SERVER,
	  .help = "wait for a client, answer it, exit when it is done\n(buffer: --size or --max, else 64M)" },
	{ "--bind", "--listen", "ADDR", OPT_STR, O(p.o.listen), .needs = "an address of this host", .label = "--bind ADDR",
	  .help = "the server's address (default 127.0.0.1: this host only;\n0.0.0.0 or :: every address). No "
		  "authentication: any\nclient that reaches it may write and read its buffer.\n--listen is the same" },
	{ "--connect", NULL, "HOST", OPT_STR, O(p.o.host), .needs = "the server's host name or address",
	  .help = "run against the server on HOST" },
	{ "--rdma-port", NULL, "P", OPT_CALL, O(p.o.cm_port), 1, 65535, .call = num_opt,
	  .help = "rdma_cm port (default 18515)" },
	{ "--timeout", NULL, "SEC", OPT_CALL, O(p.o.timeout_s), 1, 86400, .call = num_opt,
	  .help = "a peer silent this long is an error (default 10; the\nserver waits for its client without a limit)" },
	{ "--size", NULL, "S", OPT_SIZE, O(p.size), .values = size_words, .help = "message size (default 64K; --lat: 8)" },
	{ "--min", NULL, "S", OPT_SIZE, O(p.min), .values = size_words, .label = "--min S, --max S",
	  .help = "sweep sizes from S to S, multiplying by --factor (default\n2)" },
	{ "--max", NULL, "S", OPT_SIZE, O(p.max), .values = size_words, .flags = OPT_NOHELP, .help = "sweep sizes up to S" },
	{ "--factor", NULL, "F", OPT_CALL, O(p.factor), .call = factor_opt, .flags = OPT_NOHELP, .help = "sweep step, > 1" },
	{ "--iters", NULL, "K", OPT_COUNT, O(p.iters), .hi = 10000000, .help = "operations per repetition (default 1000)" },
	{ "--reps", NULL, "R", OPT_COUNT, O(p.reps), .hi = 10000, .help = "repetitions (default 5)" },
	{ "--min-bw", NULL, "[OP=]GBPS", OPT_CALL, -1, .call = min_bw_opt, .values = bw_words, .flags = OPT_REPEAT,
	  .help = "a bandwidth (GB/s) below it exits 1; OP=: that operation\nonly (write, read, send); repeatable" },
	{ "--no-verify", NULL, NULL, OPT_FLAG, O(p.no_verify), 1, .help = "do not check the data" },
	{ "--verify", NULL, NULL, OPT_FLAG, O(p.no_verify), 0, .flags = OPT_NOHELP, .help = "check the data (default)" },
	{ 0 },
};
#undef O

static const struct opt_rule rdma_rules[] = {
	{ OPT_EXCLUDES, "--server", "--connect", NULL, NULL },
	{ OPT_NEEDS, "--bind", "--server", NULL, NULL },
	/* the second queue pair's options are loopback's: between hosts each side gives its own */
	{ OPT_EXCLUDES, "--peer-mem", "--server --connect", NULL, NULL },
	{ OPT_EXCLUDES, "--peer-device", "--server --connect", NULL, NULL },
	{ OPT_EXCLUDES, "--peer-ib-port", "--server --connect", NULL, NULL },
	{ OPT_EXCLUDES, "--peer-gid-index", "--server --connect", NULL, NULL },
	{ OPT_NEEDS, "--peer-gid-index", "--peer-device --peer-ib-port", NULL, NULL },
	{ OPT_EXCLUDES, "--size", "--min --max", NULL, NULL },
	{ OPT_NEEDS, "--min", "--max", NULL, NULL },
	{ OPT_NEEDS, "--max", "--min", NULL, NULL },
	{ OPT_NEEDS, "--factor", "--min", NULL, NULL },
	{ OPT_NOT_ABOVE, "--min", "--max", NULL, NULL },
	{ 0 },
};

/* What the table cannot say: a GID index of the second queue pair on the first one's own device and
 * port, which has one GID for both. 0 or 64 (printed). */
static int check_values(const struct gp_rdma_plan *p)
{
	const struct gp_rdma_opts *o = &p->o;

	if (o->peer_gid_index >= 0 && o->peer_gid_index != o->gid_index &&
	    (!o->peer_device || (o->device && !strcmp(o->peer_device, o->device))) &&
	    (o->peer_ib_port ? o->peer_ib_port : o->ib_port ? o->ib_port : 1) == (o->ib_port ? o->ib_port : 1))
		return cli_usage("bench rdma", "--peer-gid-index on the first queue pair's own device and port: both "
				 "queue pairs of a port use its one GID here; give another --peer-ib-port or "
				 "--peer-device, or drop it");
	return 0;
}

const struct opts_cmd opts_bench_rdma = {
	.name = "bench rdma", .opts = rdma_opts, .rules = rdma_rules, .col = 21, .help = help_bench_rdma,
	.globals = "--json, --csv, --jsonl, --no-header, -q, -v: see gpup2p --help", .positional = no_argument,
};

static int run_all(struct cli *c, struct ropts *r, struct gp_rdma *s, struct rdma_report *rp, int argc, char **argv)
{
	const struct gp_rdma_plan *p = &r->p;
	struct gp_err e = { 0 };
	int rc = 0, below = 0, n = 0;

	for (int op = GP_RDMA_WRITE; op <= GP_RDMA_SEND; op <<= 1)
		n += (p->ops & op) ? p->nsizes : 0;
	if (!(rp->rows = calloc((size_t)n, sizeof(*rp->rows)))) {
		fprintf(stderr, "gpup2p: bench rdma: out of memory\n");
		return EX_ERROR;
	}
	for (int op = GP_RDMA_WRITE; op <= GP_RDMA_SEND && !rc; op <<= 1)
		for (int k = 0; (p->ops & op) && k < p->nsizes && !rc; k++) {
			struct rdma_row *w = &rp->rows[rp->n];

			if (c->verbose)
				fprintf(stderr, "gpup2p: bench rdma: %s %s %llu bytes\n", gp_rdma_op_name(op), p->lat ? "lat" : "bw",
					(unsigned long long)p->sizes[k]);
			rc = gp_rdma_run(s, op, p->lat, p->sizes[k], p->iters, p->reps, p->no_verify, &w->r, &e);
			w->floor = gp_threshold_for(r->t, r->nt, gp_rdma_op_name(op));
			if (!rc) {
				rp->n++;
				below += rdma_below(w);
			}
		}
	rc = rc ? gp_err_exit_code(&e) : below ? EX_WARN : 0;
	if (rp->n || c->fmt != GP_OUT_TABLE)
		rdma_print(c, rp, argc, argv, rc);
	fflush(stdout);
	if (e.cls)
		fprintf(stderr, "gpup2p: bench rdma: %s\n", e.msg);
	for (int i = 0; i < rp->n && !c->quiet; i++)
		if (rdma_below(&rp->rows[i]))
			fprintf(stderr, "gpup2p: bench rdma %s %llu bytes: %.2f GB/s is below --min-bw %.2f\n",
				gp_rdma_op_name(rp->rows[i].r.op), (unsigned long long)rp->rows[i].r.bytes, rp->rows[i].r.gbps,
				rp->rows[i].floor);
	return rc;
}

int cmd_bench_rdma(struct cli *c, int argc, char **argv)
{
	struct ropts *r = calloc(1, sizeof(*r));   /* the plan's sweep is large */
	struct rdma_report rp = { 0 };
	struct gp_topo t = { 0 };
	struct gp_rdma *s = NULL;
	struct gp_err e = { 0 };
	int rc, have_topo = 0;

	if (!r) {
		fprintf(stderr, "gpup2p: bench rdma: out of memory\n");
		return EX_ERROR;
	}
	gp_rdma_plan_init(&r->p);
	if ((rc = opts_parse(&opts_bench_rdma, c, argc, argv, r)) >= 0)
		goto out;
	r->p.peer_mem_set = !!opts_seen(&opts_bench_rdma, "--peer-mem");
	if ((rc = check_values(&r->p)))
		goto out;
	if ((rc = gp_rdma_plan(&r->p, &e))) {
		rc = cli_usage("bench rdma", rc == -E2BIG ? "%s: use a larger --factor" : "%s", e.msg);
		goto out;
	}
	if (!c->loaded && (rc = cli_load(c)))     /* the NICs' NUMA nodes; with GPU memory, the topology */
		goto out;
	r->p.o.root = &c->root;
	r->p.o.pci = &c->pci;
	if ((r->p.o.mem.kind != GP_RMEM_HOST || r->p.o.peer_mem.kind != GP_RMEM_HOST) &&
	    !gp_topo_build(&t, &c->pci, c->facts, NULL, 0, &e))
		have_topo = 1;                     /* else the engine picks the NIC and the distance is unknown */
	gp_rdma_plan_nic(&r->p, have_topo ? &t : NULL);
	if (r->p.o.role == GP_RDMA_SERVER && !c->quiet)
		fprintf(stderr, "gpup2p: bench rdma: waiting for a client on %s port %d%s\n",
			r->p.o.listen ? r->p.o.listen : GP_RDMA_BIND_DEFAULT, r->p.o.cm_port ? r->p.o.cm_port : GP_RDMA_CM_PORT,
			r->p.o.listen ? "" : " (this host only: --bind ADDR for others)");
	if (gp_rdma_open(&s, &r->p.o, &e)) {
		rc = cli_fail(&e);
		goto out;
	}
	if (r->p.o.role == GP_RDMA_SERVER) {
		rc = gp_rdma_serve(s, &e) ? cli_fail(&e) : 0;
		goto out;
	}
	gp_rdma_get_info(s, &rp.info);
	rp.loopback = r->p.o.role == GP_RDMA_LOOPBACK;
	rp.mem = rp.info.gpu >= 0 ? "gpu" : "host";
	rp.peer_mem = rp.info.peer_gpu >= 0 ? "gpu" : "host";
	rp.distance = gp_rdma_mem_distance(have_topo ? &t : NULL, rp.info.gpu, rp.info.nic.device);
	rp.peer_distance = gp_rdma_mem_distance(have_topo ? &t : NULL, rp.info.peer_gpu, rp.info.peer_nic.device);
	rc = run_all(c, r, s, &rp, argc, argv);
out:
	gp_rdma_close(s);
	free(rp.rows);
	free(r);
	if (have_topo)
		gp_topo_free(&t);
	return rc;
}
