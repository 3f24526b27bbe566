/* gpup2p command line — the option tables of bench and bench rdma, for completion:
 * their parsers are still their own (cmd_bench.c, cmd_bench_rdma.c) until
 * they move onto these tables. */
#include <string.h>

#include "cli.h"

static const char *const size_words[] = { "4K", "64K", "1M", "64M", "256M", "1G", NULL };
static const char *const on_off[] = { "on", "off", "both", NULL };
static const char *const engines[] = { "ce", "sm", "both", NULL };
static const char *const dirs[] = { "write", "read", "both", NULL };
static const char *const strides[] = { "8", "64", "128", "4K", NULL };
static const char *const bw_words[] = { "h2d=", "d2h=", "d2d=", "p2p=", "bidir=", NULL };
static const char *const bench_modes[] = { "h2d", "d2h", "d2d", "p2p", "bidir", "latency", "all", "one2all", "all2one",
					    "all2host", "host2all", "rdma", NULL };

static const struct opt bench_opts[] = {
	{ "--gpu", NULL, "N", .help = "measure GPU N (repeatable)", .flags = OPT_REPEAT },
	{ "--size", NULL, "S", .values = size_words, .help = "copy size" },
	{ "--min", NULL, "S", .values = size_words, .help = "sweep sizes from S" },
	{ "--max", NULL, "S", .values = size_words, .help = "sweep sizes to S" },
	{ "--factor", NULL, "F", .help = "sweep step, > 1" },
	{ "--iters", NULL, "K", .help = "copies per timed batch" },
	{ "--reps", NULL, "R", .help = "timed batches" },
	{ "--pinned", .help = "pinned host memory for h2d/d2h" },
	{ "--pageable", .help = "pageable host memory for h2d/d2h" },
	{ "--numa", NULL, "N", .help = "put host memory on NUMA node N" },
	{ "--p2p", NULL, "on|off|both", .values = on_off, .help = "p2p/bidir: with peer access, without" },
	{ "--engine", NULL, "ce|sm|both", .values = engines, .help = "copy engines, SMs, or both" },
	{ "--sm", .help = "the GPU's own cores move the data" },
	{ "--op", NULL, "write|read|both", .values = dirs, .help = "peer copies pushed, pulled or both" },
	{ "--duplex", .help = "host copies with the opposite direction at the same time" },
	{ "--stride", NULL, "S", .values = strides, .help = "latency --sm: bytes between chain slots" },
	{ "--random", .help = "latency --sm: slots in a random order" },
	{ "--seed", NULL, "N", .help = "latency --sm: the random order's seed" },
	{ "--min-bw", NULL, "[MODE=]GBPS", .values = bw_words, .flags = OPT_REPEAT, .help = "bandwidth floor" },
	{ "--verify", .help = "check the data once after the timed batches" },
	{ "--no-verify", .help = "do not check the data" },
	{ 0 },
};

const struct opts_cmd opts_bench = { .name = "bench", .opts = bench_opts, .words = bench_modes, .help = help_bench };

static const char *const ops[] = { "write", "read", "send", "all", NULL };
static const char *const mems[] = { "host", "gpu", "gpu:0", "auto", NULL };
static const char *const op_bw[] = { "write=", "read=", "send=", NULL };

static void ib_devices(const char *cur)
{
	(void)cur;
	opts_suggest_dir("/sys/class/infiniband");
}

static const struct opt bench_rdma_opts[] = {
	{ "--op", NULL, "OP", .values = ops, .help = "write, read, send or all" },
	{ "--lat", .help = "latency ping-pong instead of bandwidth" },
	{ "--mem", NULL, "M", .values = mems, .help = "this side's buffer" },
	{ "--peer-mem", NULL, "M", .values = mems, .help = "loopback: the other queue pair's buffer" },
	{ "--device", NULL, "IBDEV", .suggest = ib_devices, .help = "RDMA device" },
	{ "--ib-port", NULL, "N", .help = "port" },
	{ "--gid-index", NULL, "N", .help = "GID index" },
	{ "--peer-device", NULL, "IBDEV", .suggest = ib_devices, .help = "loopback: the other queue pair's device" },
	{ "--peer-ib-port", NULL, "N", .help = "its port" },
	{ "--peer-gid-index", NULL, "N", .help = "its GID index" },
	{ "--server", .help = "wait for a client, answer it, exit when it is done" },
	{ "--bind", NULL, "ADDR", .help = "the server's address" },
	{ "--listen", NULL, "ADDR", .flags = OPT_HIDDEN, .help = "the server's address" },
	{ "--connect", NULL, "HOST", .help = "run against the server on HOST" },
	{ "--rdma-port", NULL, "P", .help = "rdma_cm port" },
	{ "--timeout", NULL, "SEC", .help = "a peer silent this long is an error" },
	{ "--size", NULL, "S", .values = size_words, .help = "message size" },
	{ "--min", NULL, "S", .values = size_words, .help = "sweep sizes from S" },
	{ "--max", NULL, "S", .values = size_words, .help = "sweep sizes to S" },
	{ "--factor", NULL, "F", .help = "sweep step" },
	{ "--iters", NULL, "K", .help = "operations per repetition" },
	{ "--reps", NULL, "R", .help = "repetitions" },
	{ "--min-bw", NULL, "[OP=]GBPS", .values = op_bw, .flags = OPT_REPEAT, .help = "bandwidth floor" },
	{ "--no-verify", .help = "do not check the data" },
	{ 0 },
};

const struct opts_cmd opts_bench_rdma = { .name = "bench rdma", .opts = bench_rdma_opts, .help = help_bench_rdma };
