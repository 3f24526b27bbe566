/* gpup2p bench rdma — GPUDirect RDMA bandwidth and latency: RDMA write, read and send between two RC
 * queue pairs on this host (loopback) or with a server on another host (librdmacm). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bench_rdma.h"
#include "gpup2p/bench.h"
#include "gpup2p/topo.h"
#include "xfer_cli.h"

void help_bench_rdma(FILE *f)
{
	fprintf(f,
		"usage: gpup2p bench rdma [--op write|read|send|all] [--lat] [--mem host|gpu[:N]|auto]\n"
		"                         [--peer-mem host|gpu[:N]|auto] [--device IBDEV] [--ib-port N] [--gid-index N]\n"
		"                         [--server [--listen ADDR] | --connect HOST] [--rdma-port P] [--timeout SEC]\n"
		"                         [--size S | --min S --max S [--factor F]] [--iters K] [--reps R]\n"
		"                         [--min-bw GBPS] [--no-verify] [--json|--csv|--jsonl]\n\n"
		"Measure RDMA between a NIC and host or GPU memory (GPUDirect RDMA) with RC queue pairs: RDMA write,\n"
		"RDMA read and send/receive, bandwidth (a window of operations in flight; peak = the fastest\n"
		"repetition) or, with --lat, ping-pong latency (one way: half a round trip; read: one read).\n"
		"Without --server or --connect both queue pairs are on this host (loopback). With them, the\n"
		"server waits for one client (librdmacm) and answers its measurements; the client prints.\n"
		"GPU memory is registered through dma-buf (cuMemGetHandleForAddressRange + ibv_reg_dmabuf_mr)\n"
		"or through nvidia-peermem (ibv_reg_mr on device memory), dma-buf first; the result says which.\n"
		"Each result also as a fraction of what the port carries after IB or RoCE v2 headers at its MTU,\n"
		"and the PCIe distance between the NIC and the memory (PIX, PXB, PHB, NODE, SYS; host memory:\n"
		"host). The data is checked after timing.\n\n"
		"  --op OP            write, read, send or all (default all)\n"
		"  --lat              latency ping-pong instead of bandwidth\n"
		"  --mem M            this side's buffer: host (default; on the NIC's NUMA node), gpu[:N] (GPU N,\n"
		"                     default 0) or auto (GPU 0 when CUDA sees one, else host)\n"
		"  --peer-mem M       loopback: the other queue pair's buffer (default: as --mem)\n"
		"  --device IBDEV     RDMA device (default: the closest to the GPU with GPU memory, else the\n"
		"                     first with an ACTIVE port; between hosts: the one the address is on)\n"
		"  --ib-port N        port (default 1)\n"
		"  --gid-index N      GID index (default: the port's RoCE v2 GID on RoCE, none on InfiniBand)\n"
		"  --server           wait for a client, answer it, exit when it is done (buffer: --size or\n"
		"                     --max, else 64M)\n"
		"  --listen ADDR      the server's address (default every address)\n"
		"  --connect HOST     run against the server on HOST\n"
		"  --rdma-port P      rdma_cm port (default 18515)\n"
		"  --timeout SEC      a peer silent this long is an error (default 10; the server waits for its\n"
		"                     client without a limit)\n"
		"  --size S           message size (default 64K; --lat: 8)\n"
		"  --min S, --max S   sweep sizes from S to S, multiplying by --factor (default 2)\n"
		"  --iters K          operations per repetition (default 1000)\n"
		"  --reps R           repetitions (default 5)\n"
		"  --min-bw GBPS      a bandwidth (GB/s) below it exits 1\n"
		"  --no-verify        do not check the data\n"
		"  --json, --csv, --jsonl, --no-header, -q, -v: see gpup2p --help\n\n"
		"Units: Gb/s = 1e9 bits/s, GB/s = 1e9 bytes/s; sizes K/M/G = powers of 1024.\n"
		"Exit: 0 ok, 1 below --min-bw, 2 wrong data, a port not ACTIVE, a failed verbs call or a peer\n"
		"that stopped answering, 64 usage, 69 no rdma-core, no RDMA device or no CUDA for GPU memory,\n"
		"77 permission denied.\n");
}

struct ropts {
	struct gp_rdma_opts o;
	int ops, lat, iters, reps, no_verify, mem_set, peer_set, size_set;
	uint64_t size, min, max, sizes[GP_SWEEP_MAX];
	int nsizes;
	double factor, min_bw;
};

static int num_arg(const char *opt, const char *v, long lo, long hi, int *out)
{
	char *end;
	long n = strtol(v, &end, 10);

	if (!*v || *end || n < lo || n > hi)
		return cli_usage("bench rdma", "%s wants a whole number from %ld to %ld, not '%s'", opt, lo, hi, v);
	*out = (int)n;
	return 0;
}

static int mem_arg(const char *opt, const char *v, struct gp_rdma_mem *m)
{
	if (gp_rdma_mem_parse(v, m))
		return cli_usage("bench rdma", "%s takes host, gpu, gpu:N or auto, not '%s'", opt, v);
	return 0;
}

/* One option at argv[*i]: 1 consumed, 0 unknown, -1 usage error (printed). */
static int rdma_opt(struct ropts *r, int argc, char **argv, int *i)
{
	const char *v;

	if ((v = cli_opt_value(argc, argv, i, "--op"))) {
		static const char *const n[] = { "write", "read", "send", "all" };
		int k = 0;

		while (k < 4 && strcmp(v, n[k]))
			k++;
		if (k == 4)
			return cli_usage("bench rdma", "--op takes write, read, send or all, not '%s'", v), -1;
		r->ops |= k == 3 ? GP_RDMA_WRITE | GP_RDMA_READ | GP_RDMA_SEND : 1 << k;
	} else if (!strcmp(argv[*i], "--lat")) {
		r->lat = 1;
	} else if ((v = cli_opt_value(argc, argv, i, "--mem"))) {
		r->mem_set = 1;
		return mem_arg("--mem", v, &r->o.mem) ? -1 : 1;
	} else if ((v = cli_opt_value(argc, argv, i, "--peer-mem"))) {
		r->peer_set = 1;
		return mem_arg("--peer-mem", v, &r->o.peer_mem) ? -1 : 1;
	} else if ((v = cli_opt_value(argc, argv, i, "--device"))) {
		if (!*v)
			return cli_usage("bench rdma", "--device wants an RDMA device name, like mlx5_0 or rxe0"), -1;
		r->o.device = v;
	} else if ((v = cli_opt_value(argc, argv, i, "--ib-port"))) {
		return num_arg("--ib-port", v, 1, 255, &r->o.ib_port) ? -1 : 1;
	} else if ((v = cli_opt_value(argc, argv, i, "--gid-index"))) {
		return num_arg("--gid-index", v, 0, 255, &r->o.gid_index) ? -1 : 1;
	} else if (!strcmp(argv[*i], "--server")) {
		r->o.role = GP_RDMA_SERVER;
	} else if ((v = cli_opt_value(argc, argv, i, "--listen"))) {
		if (!*v)
			return cli_usage("bench rdma", "--listen wants an address of this host"), -1;
		r->o.listen = v;
	} else if ((v = cli_opt_value(argc, argv, i, "--connect"))) {
		if (!*v)
			return cli_usage("bench rdma", "--connect wants the server's host name or address"), -1;
		r->o.host = v;
	} else if ((v = cli_opt_value(argc, argv, i, "--rdma-port"))) {
		return num_arg("--rdma-port", v, 1, 65535, &r->o.cm_port) ? -1 : 1;
	} else if ((v = cli_opt_value(argc, argv, i, "--timeout"))) {
		return num_arg("--timeout", v, 1, 86400, &r->o.timeout_s) ? -1 : 1;
	} else if ((v = cli_opt_value(argc, argv, i, "--size"))) {
		r->size_set = 1;
		return xfer_size_arg("bench rdma", "--size", v, &r->size) ? -1 : 1;
	} else if ((v = cli_opt_value(argc, argv, i, "--min"))) {
		return xfer_size_arg("bench rdma", "--min", v, &r->min) ? -1 : 1;
	} else if ((v = cli_opt_value(argc, argv, i, "--max"))) {
		return xfer_size_arg("bench rdma", "--max", v, &r->max) ? -1 : 1;
	} else if ((v = cli_opt_value(argc, argv, i, "--factor"))) {
		char *end;

		r->factor = strtod(v, &end);
		if (!*v || *end || !(r->factor > 1) || r->factor > 1024)
			return cli_usage("bench rdma", "--factor wants a number above 1, like 2 or 1.5, not '%s'", v), -1;
	} else if ((v = cli_opt_value(argc, argv, i, "--iters"))) {
		return xfer_count_arg("bench rdma", "--iters", v, 10000000, &r->iters) ? -1 : 1;
	} else if ((v = cli_opt_value(argc, argv, i, "--reps"))) {
		return xfer_count_arg("bench rdma", "--reps", v, 10000, &r->reps) ? -1 : 1;
	} else if ((v = cli_opt_value(argc, argv, i, "--min-bw"))) {
		char *end;

		r->min_bw = strtod(v, &end);
		if (!*v || *end || !(r->min_bw > 0))
			return cli_usage("bench rdma", "--min-bw wants GB/s above 0, like 10 or 2.5, not '%s'", v), -1;
	} else if (!strcmp(argv[*i], "--no-verify")) {
		r->no_verify = 1;
	} else if (!strcmp(argv[*i], "--verify")) {
		r->no_verify = 0;
	} else {
		return 0;
	}
	return 1;
}

/* Defaults and conflicts once everything is parsed. 0 or 64 (printed). */
static int finish(struct ropts *r)
{
	if (r->o.role == GP_RDMA_SERVER && r->o.host)
		return cli_usage("bench rdma", "--server and --connect exclude each other (one host runs each)");
	if (r->o.listen && r->o.role != GP_RDMA_SERVER)
		return cli_usage("bench rdma", "--listen goes with --server");
	if (r->o.host)
		r->o.role = GP_RDMA_CLIENT;
	if (r->peer_set && r->o.role != GP_RDMA_LOOPBACK)
		return cli_usage("bench rdma", "--peer-mem is the other queue pair's buffer in loopback; between hosts "
				 "each side gives its own --mem");
	if (!r->peer_set)
		r->o.peer_mem = r->o.mem;
	if (r->size_set && (r->min || r->max))
		return cli_usage("bench rdma", "--size and --min/--max exclude each other");
	if (!r->min != !r->max)
		return cli_usage("bench rdma", "a sweep needs both --min and --max");
	if (r->factor && !r->min)
		return cli_usage("bench rdma", "--factor goes with --min and --max");
	if (r->min) {
		int n = gp_size_sweep(r->min, r->max, r->factor ? r->factor : 2, r->sizes, GP_SWEEP_MAX);

		if (n == -E2BIG)
			return cli_usage("bench rdma", "this sweep has more than %d sizes: use a larger --factor", GP_SWEEP_MAX);
		if (n < 0)
			return cli_usage("bench rdma", "--min must not be above --max");
		r->nsizes = n;
	} else {
		r->sizes[0] = r->size_set ? r->size : r->lat ? 8 : 64 << 10;
		r->nsizes = 1;
	}
	for (int i = 0; i < r->nsizes; i++)
		if (r->sizes[i] > (1ULL << 31))
			return cli_usage("bench rdma", "an RDMA message is at most 2G, not %llu bytes",
					 (unsigned long long)r->sizes[i]);
	r->o.max_size = r->sizes[r->nsizes - 1];
	if (r->o.role == GP_RDMA_SERVER && r->o.max_size < (64ULL << 20) && !r->size_set && !r->min)
		r->o.max_size = 64ULL << 20;      /* a server's buffer holds what a client may ask */
	if (!r->ops)
		r->ops = GP_RDMA_WRITE | GP_RDMA_READ | GP_RDMA_SEND;
	if (!r->iters)
		r->iters = 1000;
	if (!r->reps)
		r->reps = 5;
	return 0;
}

/* GPU memory without --device, loopback: the NIC closest to the GPU. Quiet: a topology that cannot be read only
 * leaves the choice to the engine and the distance "unknown". */
static void pair(struct cli *c, struct ropts *r, struct gp_topo *t, int *have_topo)
{
	int gpu = r->o.mem.kind == GP_RMEM_HOST ? -1 : r->o.mem.gpu < 0 ? 0 : r->o.mem.gpu;
	struct gp_err e = { 0 };

	if (gpu < 0 || *have_topo)
		return;
	if (!c->loaded) {
		if (gp_pci_scan(&c->pci, &c->root, &e))
			return;
		if ((c->facts = calloc(1, sizeof(*c->facts))) && gp_gpu_facts_load(&c->root, c->facts, &e)) {
			free(c->facts);
			c->facts = NULL;
		}
		c->loaded = 1;
	}
	if (gp_topo_build(t, &c->pci, c->facts, NULL, 0, &e))
		return;
	*have_topo = 1;
	if (!r->o.device && r->o.role == GP_RDMA_LOOPBACK)    /* between hosts the address picks the NIC */
		r->o.device = gp_rdma_closest_nic(t, gpu);
}

static int run_all(struct cli *c, struct ropts *r, struct gp_rdma *s, struct rdma_report *rp, int argc, char **argv)
{
	struct gp_err e = { 0 };
	int rc = 0, below = 0, n = 0;

	for (int op = GP_RDMA_WRITE; op <= GP_RDMA_SEND; op <<= 1)
		n += (r->ops & op) ? r->nsizes : 0;
	if (!(rp->rows = calloc((size_t)n, sizeof(*rp->rows)))) {
		fprintf(stderr, "gpup2p: bench rdma: out of memory\n");
		return EX_ERROR;
	}
	for (int op = GP_RDMA_WRITE; op <= GP_RDMA_SEND && !rc; op <<= 1)
		for (int k = 0; (r->ops & op) && k < r->nsizes && !rc; k++) {
			struct rdma_row *w = &rp->rows[rp->n];

			if (c->verbose)
				fprintf(stderr, "gpup2p: bench rdma: %s %s %llu bytes\n", gp_rdma_op_name(op), r->lat ? "lat" : "bw",
					(unsigned long long)r->sizes[k]);
			rc = gp_rdma_run(s, op, r->lat, r->sizes[k], r->iters, r->reps, r->no_verify, &w->r, &e);
			w->floor = r->min_bw > 0 ? r->min_bw : -1;
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
	struct ropts r = { .o = { .gid_index = -1, .mem = { GP_RMEM_HOST, -1 }, .peer_mem = { GP_RMEM_HOST, -1 } } };
	struct rdma_report rp = { 0 };
	struct gp_topo t = { 0 };
	struct gp_rdma *s = NULL;
	struct gp_err e = { 0 };
	int rc, done, have_topo = 0;

	for (int i = 1; i < argc; i++) {
		if (cli_common_arg(c, help_bench_rdma, argc, argv, &i, &done)) {
			if (done >= 0)
				return done;
			continue;
		}
		rc = rdma_opt(&r, argc, argv, &i);
		if (rc < 0)
			return EX_USAGE_;
		if (!rc)
			return cli_usage("bench rdma", argv[i][0] == '-' ? "unknown option '%s'" : "unexpected argument '%s'",
					 argv[i]);
	}
	if ((rc = finish(&r)))
		return rc;
	if (!c->loaded && (rc = cli_root(c)))
		return rc;
	r.o.root = &c->root;
	pair(c, &r, &t, &have_topo);
	if (r.o.role == GP_RDMA_SERVER && !c->quiet)
		fprintf(stderr, "gpup2p: bench rdma: waiting for a client on %s port %d\n", r.o.listen ? r.o.listen : "every address",
			r.o.cm_port ? r.o.cm_port : 18515);
	if (gp_rdma_open(&s, &r.o, &e)) {
		rc = cli_fail(&e);
		goto out;
	}
	if (r.o.role == GP_RDMA_SERVER) {
		rc = gp_rdma_serve(s, &e) ? cli_fail(&e) : 0;
		goto out;
	}
	gp_rdma_get_info(s, &rp.info);
	rp.loopback = r.o.role == GP_RDMA_LOOPBACK;
	rp.mem = rp.info.gpu >= 0 ? "gpu" : "host";
	rp.peer_mem = rp.info.peer_gpu >= 0 ? "gpu" : "host";
	if (rp.info.gpu < 0)
		rp.distance = "host";
	else if (!have_topo)
		pair(c, &r, &t, &have_topo);
	if (rp.info.gpu >= 0)
		rp.distance = have_topo ? gp_rdma_distance(&t, rp.info.gpu, rp.info.device) : NULL;
	if (!rp.distance)
		rp.distance = "unknown";
	rc = run_all(c, &r, s, &rp, argc, argv);
out:
	gp_rdma_close(s);
	free(rp.rows);
	if (have_topo)
		gp_topo_free(&t);
	return rc;
}
