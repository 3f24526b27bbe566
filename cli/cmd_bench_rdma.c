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
		"checked after timing.\n\n"
		"  --op OP            write, read, send or all (default all)\n"
		"  --lat              latency ping-pong instead of bandwidth\n"
		"  --mem M            this side's buffer: host (default; on the NIC's NUMA\n"
		"                     node), gpu[:N] (GPU N, default 0) or auto (GPU 0 when CUDA\n"
		"                     sees one, else host)\n"
		"  --peer-mem M       loopback: the other queue pair's buffer (default: as\n"
		"                     --mem)\n"
		"  --device IBDEV     RDMA device (default: the closest to the GPU with GPU\n"
		"                     memory, else the first with an ACTIVE port; between hosts:\n"
		"                     the one the address is on)\n"
		"  --ib-port N        port (default 1)\n"
		"  --gid-index N      GID index (default: the port's RoCE v2 GID on RoCE, none\n"
		"                     on InfiniBand)\n"
		"  --peer-device IBDEV  loopback: the other queue pair's device (default:\n"
		"                     --device's); both of one link layer\n"
		"  --peer-ib-port N   its port (default: --ib-port's)\n"
		"  --peer-gid-index N its GID index (default: its port's RoCE v2 GID on RoCE,\n"
		"                     --gid-index's on IB)\n"
		"  --server           wait for a client, answer it, exit when it is done\n"
		"                     (buffer: --size or --max, else 64M)\n"
		"  --bind ADDR        the server's address (default 127.0.0.1: this host only;\n"
		"                     0.0.0.0 or :: every address). No authentication: any\n"
		"                     client that reaches it may write and read its buffer.\n"
		"                     --listen is the same\n"
		"  --connect HOST     run against the server on HOST\n"
		"  --rdma-port P      rdma_cm port (default 18515)\n"
		"  --timeout SEC      a peer silent this long is an error (default 10; the\n"
		"                     server waits for its client without a limit)\n"
		"  --size S           message size (default 64K; --lat: 8)\n"
		"  --min S, --max S   sweep sizes from S to S, multiplying by --factor (default\n"
		"                     2)\n"
		"  --iters K          operations per repetition (default 1000)\n"
		"  --reps R           repetitions (default 5)\n"
		"  --min-bw [OP=]GBPS a bandwidth (GB/s) below it exits 1; OP=: that operation\n"
		"                     only (write, read, send); repeatable\n"
		"  --no-verify        do not check the data\n"
		"  --json, --csv, --jsonl, --no-header, -q, -v: see gpup2p --help\n\n"
		"Units: Gb/s = 1e9 bits/s, GB/s = 1e9 bytes/s; sizes K/M/G = powers of 1024.\n"
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
	struct gp_rdma_plan *p = &r->p;
	const char *v;

	if ((v = cli_opt_value(argc, argv, i, "--op"))) {
		static const char *const n[] = { "write", "read", "send", "all" };
		int k = 0;

		while (k < 4 && strcmp(v, n[k]))
			k++;
		if (k == 4)
			return cli_usage("bench rdma", "--op takes write, read, send or all, not '%s'", v), -1;
		p->ops |= k == 3 ? GP_RDMA_WRITE | GP_RDMA_READ | GP_RDMA_SEND : 1 << k;
	} else if (!strcmp(argv[*i], "--lat")) {
		p->lat = 1;
	} else if ((v = cli_opt_value(argc, argv, i, "--mem"))) {
		return mem_arg("--mem", v, &p->o.mem) ? -1 : 1;
	} else if ((v = cli_opt_value(argc, argv, i, "--peer-mem"))) {
		p->peer_mem_set = 1;
		return mem_arg("--peer-mem", v, &p->o.peer_mem) ? -1 : 1;
	} else if ((v = cli_opt_value(argc, argv, i, "--device"))) {
		if (!*v)
			return cli_usage("bench rdma", "--device wants an RDMA device name, like mlx5_0 or rxe0"), -1;
		p->o.device = v;
	} else if ((v = cli_opt_value(argc, argv, i, "--peer-device"))) {
		if (!*v)
			return cli_usage("bench rdma", "--peer-device wants an RDMA device name, like mlx5_1 or rxe1"), -1;
		p->o.peer_device = v;
	} else if ((v = cli_opt_value(argc, argv, i, "--ib-port"))) {
		return num_arg("--ib-port", v, 1, 255, &p->o.ib_port) ? -1 : 1;
	} else if ((v = cli_opt_value(argc, argv, i, "--peer-ib-port"))) {
		return num_arg("--peer-ib-port", v, 1, 255, &p->o.peer_ib_port) ? -1 : 1;
	} else if ((v = cli_opt_value(argc, argv, i, "--gid-index"))) {
		return num_arg("--gid-index", v, 0, 255, &p->o.gid_index) ? -1 : 1;
	} else if ((v = cli_opt_value(argc, argv, i, "--peer-gid-index"))) {
		return num_arg("--peer-gid-index", v, 0, 255, &p->o.peer_gid_index) ? -1 : 1;
	} else if (!strcmp(argv[*i], "--server")) {
		p->o.role = GP_RDMA_SERVER;
	} else if ((v = cli_opt_value(argc, argv, i, "--bind")) || (v = cli_opt_value(argc, argv, i, "--listen"))) {
		if (!*v)
			return cli_usage("bench rdma", "--bind wants an address of this host"), -1;
		p->o.listen = v;
	} else if ((v = cli_opt_value(argc, argv, i, "--connect"))) {
		if (!*v)
			return cli_usage("bench rdma", "--connect wants the server's host name or address"), -1;
		p->o.host = v;
	} else if ((v = cli_opt_value(argc, argv, i, "--rdma-port"))) {
		return num_arg("--rdma-port", v, 1, 65535, &p->o.cm_port) ? -1 : 1;
	} else if ((v = cli_opt_value(argc, argv, i, "--timeout"))) {
		return num_arg("--timeout", v, 1, 86400, &p->o.timeout_s) ? -1 : 1;
	} else if ((v = cli_opt_value(argc, argv, i, "--size"))) {
		return xfer_size_arg("bench rdma", "--size", v, &p->size) ? -1 : 1;
	} else if ((v = cli_opt_value(argc, argv, i, "--min"))) {
		return xfer_size_arg("bench rdma", "--min", v, &p->min) ? -1 : 1;
	} else if ((v = cli_opt_value(argc, argv, i, "--max"))) {
		return xfer_size_arg("bench rdma", "--max", v, &p->max) ? -1 : 1;
	} else if ((v = cli_opt_value(argc, argv, i, "--factor"))) {
		return xfer_factor_arg("bench rdma", v, &p->factor) ? -1 : 1;
	} else if ((v = cli_opt_value(argc, argv, i, "--iters"))) {
		return xfer_count_arg("bench rdma", "--iters", v, 10000000, &p->iters) ? -1 : 1;
	} else if ((v = cli_opt_value(argc, argv, i, "--reps"))) {
		return xfer_count_arg("bench rdma", "--reps", v, 10000, &p->reps) ? -1 : 1;
	} else if ((v = cli_opt_value(argc, argv, i, "--min-bw"))) {
		if (r->nt == GP_THRESH_MAX)
			return cli_usage("bench rdma", "at most %d --min-bw", GP_THRESH_MAX), -1;
		if (gp_threshold_parse(v, rdma_threshold_ops, &r->t[r->nt]))
			return cli_usage("bench rdma", "--min-bw wants GB/s above 0, for every operation or one (write=, "
					 "read=, send=), like 10 or write=2.5, not '%s'", v), -1;
		r->nt++;
	} else if (!strcmp(argv[*i], "--no-verify")) {
		p->no_verify = 1;
	} else if (!strcmp(argv[*i], "--verify")) {
		p->no_verify = 0;
	} else {
		return 0;
	}
	return 1;
}

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
	int rc, done, have_topo = 0;

	if (!r) {
		fprintf(stderr, "gpup2p: bench rdma: out of memory\n");
		return EX_ERROR;
	}
	gp_rdma_plan_init(&r->p);
	for (int i = 1; i < argc; i++) {
		if (cli_common_arg(c, help_bench_rdma, argc, argv, &i, &done)) {
			if (done >= 0) {
				rc = done;
				goto out;
			}
			continue;
		}
		rc = rdma_opt(r, argc, argv, &i);
		if (rc <= 0) {
			rc = rc < 0 ? EX_USAGE_ : cli_usage("bench rdma", argv[i][0] == '-' ? "unknown option '%s'" :
							    "unexpected argument '%s'", argv[i]);
			goto out;
		}
	}
	if (gp_rdma_plan(&r->p, &e)) {
		rc = cli_usage("bench rdma", "%s", e.msg);
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
