/* gpup2p command line — the option table of bench rdma, for completion:
 * its parser is still its own (cmd_bench_rdma.c) until
 * it moves onto this table. */
#include <string.h>

#include "cli.h"

static const char *const size_words[] = { "4K", "64K", "1M", "64M", "256M", "1G", NULL };

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
