/* bench rdma's engine (libcore/rdma*.c) against the libibverbs test double (tests/fakeverbs: loopback QPs
 * in this process) and libcuda's (tests/fakecuda-dmabuf): the rate arithmetic, the three operations in
 * bandwidth and latency with their data checked, and every refusal with the fix it names. */
#include <errno.h>
#include <math.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gpup2p/pci.h"
#include "gpup2p/rdma.h"
#include "rdma_fx.h"

/* a hang guard, not a speed threshold: seconds since the monotonic t0 */
static double since(double t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9 - t0;
}

#define NEAR(a, b) (fabs((a) - (b)) < 1e-3)

#include "rdma_rates.h"

static void mem_parse(void)
{
	struct gp_rdma_mem m;

	CHECK(!gp_rdma_mem_parse("host", &m) && m.kind == GP_RMEM_HOST, "--mem host");
	CHECK(!gp_rdma_mem_parse("gpu", &m) && m.kind == GP_RMEM_GPU && m.gpu == -1, "--mem gpu");
	CHECK(!gp_rdma_mem_parse("gpu:3", &m) && m.kind == GP_RMEM_GPU && m.gpu == 3, "--mem gpu:3");
	CHECK(!gp_rdma_mem_parse("auto", &m) && m.kind == GP_RMEM_AUTO, "--mem auto");
	CHECK(gp_rdma_mem_parse("gpu:", &m) && gp_rdma_mem_parse("gpu:-1", &m) && gp_rdma_mem_parse("gpu:1x", &m) &&
	      gp_rdma_mem_parse("GPU", &m), "malformed --mem values are refused");
}

/* Open a loopback session (host memory unless mem says), run op, and return the run's (or open's) code. */
static int run(const char *mem, const struct gp_root *root, int op, int lat, struct gp_rdma_result *r, struct gp_err *e,
	       struct gp_rdma_info *info)
{
	struct gp_rdma_opts o = { .gid_index = -1, .max_size = 65536, .timeout_s = 1, .root = root ? root : &live };
	struct gp_rdma *s;
	int rc;

	gp_rdma_mem_parse(mem ? mem : "host", &o.mem);
	o.peer_mem = o.mem;
	gp_err_clear(e);
	if ((rc = gp_rdma_open(&s, &o, e)))
		return rc;
	if (info)
		gp_rdma_get_info(s, info);
	rc = gp_rdma_run(s, op, lat, 65536, 50, 3, 0, r, e);
	gp_rdma_close(s);
	return rc;
}

/* The checks every bandwidth or latency result must pass, by arithmetic independent of the code's: message
 * rate x message bits = bandwidth, bits = 8 x bytes, and the port fraction against the rate worked out by
 * hand (port_hand: 0 unknown). */
static void result_sane(const struct gp_rdma_result *r, int lat, uint64_t bytes, double port_hand, const char *what)
{
	if (lat) {
		CHECK(r->us_min > 0 && r->us_min <= r->us_median && r->us_median <= r->us_p99 && r->gbps == 0 &&
		      r->gbits_avg == 0, "%s: latency min <= median <= p99, no bandwidth", what);
		return;
	}
	CHECK(r->gbits_avg > 0 && r->gbits_peak >= r->gbits_avg, "%s: peak %.3f >= average %.3f Gb/s", what,
	      r->gbits_peak, r->gbits_avg);
	CHECK(fabs(r->mpps * 1e6 * (double)bytes * 8 / 1e9 - r->gbits_avg) < 1e-6 * r->gbits_avg,
	      "%s: %.4f Mmsg/s x %llu bytes x 8 = %.3f Gb/s", what, r->mpps, (unsigned long long)bytes, r->gbits_avg);
	CHECK(fabs(r->gbps * 8 - r->gbits_avg) < 1e-9 * r->gbits_avg, "%s: GB/s x 8 = Gb/s", what);
	if (port_hand > 0)
		CHECK(fabs(r->port_fraction * port_hand - r->gbits_avg) < 1e-6 * r->gbits_avg,
		      "%s: %.4f of %.3f Gb/s = the average", what, r->port_fraction, port_hand);
}

static void loopback(void)
{
	static const int ops[] = { GP_RDMA_WRITE, GP_RDMA_READ, GP_RDMA_SEND };
	double roce_edr4 = EDR_LANE * 4 * 4096 / (4096 + ROCE_HDR);
	struct gp_rdma_result r;
	struct gp_rdma_info in;
	struct gp_err e;
	char what[64];

	env_reset();
	{ /* counts out of bounds: refused before anything is sized by them (iters x reps latency samples) */
		struct gp_rdma_opts o = { .gid_index = -1, .max_size = 65536, .timeout_s = 1, .root = &live };
		struct gp_rdma *s;

		gp_rdma_mem_parse("host", &o.mem);
		o.peer_mem = o.mem;
		if (!gp_rdma_open(&s, &o, &e)) {
			int rc = gp_rdma_run(s, GP_RDMA_WRITE, 1, 64, GP_RDMA_MAX_ITERS, GP_RDMA_MAX_REPS, 0, &r, &e);

			CHECK(rc == -EINVAL && e.cls == GP_E_USAGE && strstr(e.msg, "at most"),
			      "loopback latency 1e7 x 1e4 round trips: refused, EINVAL (%s)", e.msg);
			rc = gp_rdma_run(s, 9, 0, 64, 10, 1, 0, &r, &e);
			CHECK(rc == -EINVAL, "loopback operation 9: refused, EINVAL (%s)", e.msg);
			gp_rdma_close(s);
		} else {
			CHECK(0, "loopback session for the bounds (%s)", e.msg);
		}
	}
	for (int i = 0; i < 3; i++)
		for (int lat = 0; lat < 2; lat++) {
			int rc = run(NULL, NULL, ops[i], lat, &r, &e, &in);

			snprintf(what, sizeof(what), "loopback %s %s", gp_rdma_op_name(ops[i]), lat ? "lat" : "bw");
			CHECK(!rc && r.verified == 1, "%s: ran and the data arrived (%s)", what, e.msg);
			result_sane(&r, lat, 65536, roce_edr4, what);
		}
	CHECK_STR(in.nic.device, "rxe0", "the device");
	CHECK(in.nic.port == 1 && in.nic.link_layer == GP_RDMA_LINK_ETH && in.nic.gid_index == 1 &&
	      in.nic.active_mtu == 4096 && !in.two_nics && !strcmp(in.peer_nic.device, "rxe0"),
	      "RoCE port 1, the RoCE v2 GID (index 1 of types 1,2), MTU 4096; both QPs on it");
	CHECK_STR(in.mem_path, "host", "host memory");
	CHECK(in.nic.numa_node == -1, "no PCI model: the NIC's NUMA node unknown");

	setenv("FAKEVERBS_LINK", "ib", 1);
	CHECK(!run(NULL, NULL, GP_RDMA_WRITE, 0, &r, &e, &in) && in.nic.link_layer == GP_RDMA_LINK_IB &&
	      in.nic.gid_index == -1 && NEAR(in.port_gbits, EDR_LANE * 4 * 4096 / (4096 + IB_HDR)),
	      "InfiniBand: no GID, LID routing, IB headers (%s)", e.msg);
	env_reset();
	setenv("FAKEVERBS_MTU", "3", 1);
	CHECK(!run(NULL, NULL, GP_RDMA_WRITE, 0, &r, &e, &in) && NEAR(in.port_gbits, EDR_LANE * 4 * 1024 / (1024 + ROCE_HDR)),
	      "the rate follows the active MTU (1024)");
}

static int has_line(const char *file, const char *line)
{
	char buf[128];
	FILE *f = fopen(file, "r");
	int found = 0;

	while (f && fgets(buf, sizeof(buf), f))
		found |= !strncmp(buf, line, strlen(line));
	if (f)
		fclose(f);
	return found;
}

static int peer_port;                   /* run2's peer_ib_port */
static int gid0 = -1, gid1 = -1;        /* run2's gid_index and peer_gid_index */

/* Open a loopback with QP 1 on peer (its memory peer_mem), run op; info filled on success. */
static int run2(const char *dev, const char *peer, const char *peer_mem, int op, int lat, struct gp_rdma_result *r,
		struct gp_err *e, struct gp_rdma_info *info)
{
	struct gp_rdma_opts o = { .gid_index = gid0, .peer_gid_index = gid1, .max_size = 65536, .timeout_s = 1,
				  .root = &live, .device = dev, .peer_device = peer, .peer_ib_port = peer_port };
	struct gp_rdma *s;
	int rc;

	gp_rdma_mem_parse("host", &o.mem);
	gp_rdma_mem_parse(peer_mem ? peer_mem : "host", &o.peer_mem);
	gp_err_clear(e);
	if ((rc = gp_rdma_open(&s, &o, e)))
		return rc;
	gp_rdma_get_info(s, info);
	rc = gp_rdma_run(s, op, lat, lat ? 64 : 65536, 50, 3, 0, r, e);
	gp_rdma_close(s);
	return rc;
}

/* --peer-device: each QP on its own device; the test double refuses a QP addressed to the wrong device and
 * an MR used through another device's QP */
static void two_devices(void)
{
	static const int ops[] = { GP_RDMA_WRITE, GP_RDMA_READ, GP_RDMA_SEND };
	struct gp_rdma_result r;
	struct gp_rdma_info in;
	struct gp_err e;
	char what[64], log[96];
	int rc;

	env_reset();
	setenv("FAKEVERBS_DEVICES", "rxe0,rxe1", 1);
	for (int i = 0; i < 3; i++)
		for (int lat = 0; lat < 2; lat++) {
			rc = run2("rxe0", "rxe1", NULL, ops[i], lat, &r, &e, &in);
			snprintf(what, sizeof(what), "rxe0 to rxe1 %s %s", gp_rdma_op_name(ops[i]), lat ? "lat" : "bw");
			CHECK(!rc && r.verified == 1, "%s: ran across two devices, the data checked (%s)", what, e.msg);
			result_sane(&r, lat, lat ? 64 : 65536, EDR_LANE * 4 * 4096 / (4096 + ROCE_HDR), what);
		}
	CHECK(in.two_nics && !strcmp(in.nic.device, "rxe0") && !strcmp(in.peer_nic.device, "rxe1") &&
	      in.peer_nic.port == 1 && in.peer_nic.gid_index == 1 && in.peer_nic.link_layer == GP_RDMA_LINK_ETH,
	      "info: QP 0 on rxe0, QP 1 on rxe1 port 1, RoCE v2 GID 1 on each");
	rc = run2(NULL, "rxe1", NULL, GP_RDMA_WRITE, 0, &r, &e, &in);
	CHECK(!rc && !strcmp(in.nic.device, "rxe0") && !strcmp(in.peer_nic.device, "rxe1"),
	      "--peer-device alone: QP 0 on the first ACTIVE device (%s)", e.msg);
	snprintf(log, sizeof(log), "%s/reg2.log", tmproot);
	setenv("FAKEVERBS_LOG", log, 1);
	rc = run2("rxe1", "rxe0", "gpu", GP_RDMA_SEND, 0, &r, &e, &in);
	unsetenv("FAKEVERBS_LOG");
	CHECK(!rc && r.verified == 1 && !strcmp(in.peer_mem_path, "dmabuf") && in.peer_gpu == 0 && in.gpu == -1,
	      "the peer's GPU memory registered on the peer's device, send checked (%s)", e.msg);
	CHECK(has_line(log, "reg_mr 65536 rxe1") && has_line(log, "reg_dmabuf_mr 65536 rxe0") &&
	      !has_line(log, "reg_mr 65536 rxe0"), "  QP 0's host buffer registered with rxe1, QP 1's GPU buffer with rxe0");
	unlink(log);
	rc = run2("rxe0", "rxe0", NULL, GP_RDMA_WRITE, 0, &r, &e, &in);
	CHECK(!rc && !in.two_nics && !strcmp(in.peer_nic.device, "rxe0"), "the same device twice: one device, as "
	      "without --peer-device (%s)", e.msg);
	setenv("FAKEVERBS_PORTS", "2", 1);
	peer_port = 2;
	rc = run2("rxe0", NULL, "gpu", GP_RDMA_READ, 0, &r, &e, &in);
	CHECK(!rc && r.verified == 1 && in.two_nics && !strcmp(in.peer_nic.device, "rxe0") && in.nic.port == 1 &&
	      in.peer_nic.port == 2, "--peer-ib-port 2: one device, its two ports (one context and PD) (%s)", e.msg);
	peer_port = 3;
	rc = run2("rxe0", NULL, NULL, GP_RDMA_READ, 0, &r, &e, &in);
	CHECK(rc && strstr(e.msg, "rxe0: no port 3"), "--peer-ib-port 3 of 2: the port named (%s)", e.msg);
	peer_port = 0;
	unsetenv("FAKEVERBS_PORTS");
	setenv("FAKEVERBS_LINK", "ib", 1);
	for (int lat = 0; lat < 2; lat++) {
		rc = run2("rxe0", "rxe1", NULL, GP_RDMA_READ, lat, &r, &e, &in);
		CHECK(!rc && r.verified == 1 && in.two_nics && in.nic.gid_index == -1,
		      "InfiniBand, read %s: each QP addressed to the other device's LID (%s)", lat ? "lat" : "bw", e.msg);
	}
	/* --gid-index on InfiniBand without --peer-gid-index: both sides send a GRH, the peer's GID index is
	 * the first's (with no GID on the second side, QP 0's GRH would carry a zero destination GID) */
	gid0 = 0;
	rc = run2("rxe0", "rxe1", NULL, GP_RDMA_WRITE, 0, &r, &e, &in);
	CHECK(!rc && r.verified == 1 && in.nic.gid_index == 0 && in.peer_nic.gid_index == 0,
	      "InfiniBand, --gid-index 0 alone: the peer uses GID index 0 too, GRH addressed to its GID (%s)", e.msg);
	gid0 = -1;
	unsetenv("FAKEVERBS_LINK");
	setenv("FAKEVERBS_LINK_rxe1", "ib", 1);
	rc = run2("rxe0", "rxe1", NULL, GP_RDMA_WRITE, 0, &r, &e, &in);
	CHECK(rc == -EINVAL && e.cls == GP_E_USAGE && strstr(e.msg, "rxe0 port 1 is RoCE and rxe1 port 1 is InfiniBand") &&
	      !strchr(e.msg, '\n'), "RoCE to InfiniBand: one line naming both (%s)", e.msg);
	unsetenv("FAKEVERBS_LINK_rxe1");
	rc = run2("rxe0", "mlx5_9", NULL, GP_RDMA_WRITE, 0, &r, &e, &in);
	CHECK(rc == -ENODEV && e.cls == GP_E_USAGE && strstr(e.msg, "no RDMA device mlx5_9 (there are: rxe0, rxe1)"),
	      "an unknown --peer-device: usage, the devices listed (%s)", e.msg);
	setenv("FAKEVERBS_DEVICES", "", 1);
	rc = run2("rxe0", "rxe1", NULL, GP_RDMA_WRITE, 0, &r, &e, &in);
	CHECK(rc && e.cls == GP_E_UNAVAIL, "no device at all: unavailable (%s)", e.msg);
	env_reset();
}

/* The NIC's NUMA node comes from the PCI model (dgx-h100 fixture: mlx5_0 at 0000:15:00.0 on node 0, mlx5_6 at
 * 0000:b5:00.0 on node 1, read from the fixture's numa_node files by hand). */
static void numa_from_pci(void)
{
	const char *fx = getenv("GPUP2P_FIXTURES");
	struct gp_rdma_opts o = { .gid_index = -1, .peer_gid_index = -1, .max_size = 4096, .timeout_s = 1 };
	struct gp_rdma_result r;
	struct gp_rdma_info in;
	struct gp_root root;
	struct gp_pci pci;
	struct gp_rdma *s;
	struct gp_err e = { 0 };
	char dir[1024];

	snprintf(dir, sizeof(dir), "%s/dgx-h100", fx ? fx : "build/fixtures");
	if (gp_root_init(&root, dir, &e) || gp_pci_scan(&pci, &root, &e)) {
		CHECK(0, "dgx-h100 fixture: %s", e.msg);
		return;
	}
	CHECK(gp_rdma_numa_node(&pci, "mlx5_0") == 0 && gp_rdma_numa_node(&pci, "mlx5_6") == 1 &&
	      gp_rdma_numa_node(&pci, "rxe0") == -1 && gp_rdma_numa_node(NULL, "mlx5_0") == -1,
	      "NUMA node of mlx5_0 0, mlx5_6 1; rxe0 (no PCI function) and no model: unknown");
	env_reset();
	setenv("FAKEVERBS_DEVICES", "mlx5_6,mlx5_0", 1);
	o.root = &root;
	o.pci = &pci;
	o.device = "mlx5_6";
	o.peer_device = "mlx5_0";
	gp_rdma_mem_parse("host", &o.mem);
	o.peer_mem = o.mem;
	if (!gp_rdma_open(&s, &o, &e)) {
		gp_rdma_get_info(s, &in);
		CHECK(in.nic.numa_node == 1 && in.peer_nic.numa_node == 0, "a session's NICs: mlx5_6 on node 1, mlx5_0 on "
		      "node 0 (%d, %d)", in.nic.numa_node, in.peer_nic.numa_node);
		CHECK(!gp_rdma_run(s, GP_RDMA_WRITE, 0, 4096, 10, 1, 0, &r, &e) && r.verified, "  and it runs (%s)", e.msg);
		gp_rdma_close(s);
	} else {
		CHECK(0, "open on mlx5_6 and mlx5_0: %s", e.msg);
	}
	gp_pci_free(&pci);
	env_reset();
}

static void refusals(void)
{
	struct gp_rdma_result r;
	struct gp_err e;
	int rc;
	double t0;

	env_reset();
	setenv("FAKEVERBS_PORT_STATE", "1", 1);
	rc = run(NULL, NULL, GP_RDMA_WRITE, 0, &r, &e, NULL);
	CHECK(rc == -ENETDOWN && e.cls == GP_E_FAIL && strstr(e.msg, "is DOWN, not ACTIVE") && strstr(e.msg, "ip link set"),
	      "a port DOWN names its state and the fix (%s)", e.msg);
	setenv("FAKEVERBS_PORT_STATE", "2", 1);
	rc = run(NULL, NULL, GP_RDMA_WRITE, 0, &r, &e, NULL);
	CHECK(rc == -ENETDOWN && strstr(e.msg, "is INIT"), "a port in INIT says INIT (%s)", e.msg);
	setenv("FAKEVERBS_DEVICES", "rxe0,rxe1", 1); /* none ACTIVE, no --device: the first is used, and named */
	setenv("FAKEVERBS_PORT_STATE", "1", 1);
	rc = run(NULL, NULL, GP_RDMA_WRITE, 0, &r, &e, NULL);
	CHECK(rc == -ENETDOWN && strstr(e.msg, "rxe0 port 1 is DOWN"), "two devices, none ACTIVE: the first one's "
	      "state (%s)", e.msg);

	env_reset();
	setenv("FAKEVERBS_GID_TYPES", "1,1,0", 1);
	rc = run(NULL, NULL, GP_RDMA_WRITE, 0, &r, &e, NULL);
	CHECK(rc == -EADDRNOTAVAIL && strstr(e.msg, "no RoCE v2 GID") && strstr(e.msg, "3 GID(s)"),
	      "a RoCE port without a RoCE v2 GID says so (%s)", e.msg);

	env_reset();
	setenv("FAKEVERBS_REG_FAIL", "ENOMEM", 1);
	setenv("FAKEVERBS_REG_FAIL_OVER", "4096", 1);
	rc = run(NULL, NULL, GP_RDMA_WRITE, 0, &r, &e, NULL);
	CHECK(rc == -ENOMEM && strstr(e.msg, "RLIMIT_MEMLOCK") && strstr(e.msg, "ulimit -l"),
	      "ENOMEM registering host memory names RLIMIT_MEMLOCK and ulimit -l (%s)", e.msg);

	env_reset();
	setenv("FAKEVERBS_STALL", "20", 1);
	t0 = since(0);
	rc = run(NULL, NULL, GP_RDMA_WRITE, 0, &r, &e, NULL);
	CHECK(rc == -ETIMEDOUT && strstr(e.msg, "stopped answering") && since(t0) < 120,
	      "a peer that stops answering: a clean error after the 1 s timeout, no hang (%s)", e.msg);
	rc = run(NULL, NULL, GP_RDMA_SEND, 1, &r, &e, NULL);
	CHECK(rc == -ETIMEDOUT, "... in a ping-pong too");

	/* a slow wire (0.5 MB/s: 0.13 s a 64 KiB write, 20 s in all on the double's clock): completions that
	 * come one by one within the 1 s timeout are no silence, however long the window of them takes */
	env_reset();
	setenv("FAKEVERBS_GBPS", "0.0005", 1);
	rc = run(NULL, NULL, GP_RDMA_WRITE, 0, &r, &e, NULL);
	unsetenv("FAKEVERBS_GBPS");
	CHECK(!rc && r.gbps > 0.0004 && r.gbps < 0.0006, "a slow wire, every completion within --timeout: "
	      "measured (%.4f GB/s), no timeout (%s)", r.gbps, e.msg);

	env_reset();
	setenv("FAKEVERBS_CORRUPT", "1", 1);
	for (int op = GP_RDMA_WRITE; op <= GP_RDMA_SEND; op <<= 1) {
		rc = run(NULL, NULL, op, 0, &r, &e, NULL);
		CHECK(rc == -EBADMSG && strstr(e.msg, "wrong data at byte 0"), "wrong data after %s is found (%s)",
		      gp_rdma_op_name(op), e.msg);
	}
	env_reset();
	setenv("FAKEVERBS_DEVICES", "", 1);
	rc = run(NULL, NULL, GP_RDMA_WRITE, 0, &r, &e, NULL);
	CHECK(rc && e.cls == GP_E_UNAVAIL && strstr(e.msg, "no RDMA device"), "no device: unavailable (%s)", e.msg);
}

static void gpu_memory(void)
{
	struct gp_rdma_result r;
	struct gp_rdma_info in;
	struct gp_root pm;
	struct gp_err e;
	char dir[128], log[96];
	int rc;

	env_reset();
	rc = run("gpu", NULL, GP_RDMA_WRITE, 0, &r, &e, &in);
	CHECK(!rc && !strcmp(in.mem_path, "dmabuf") && in.gpu == 0 && r.verified == 1,
	      "GPU memory through dma-buf, data checked through a staging copy (%s)", e.msg);
	rc = run("auto", NULL, GP_RDMA_READ, 1, &r, &e, &in);
	CHECK(!rc && !strcmp(in.mem_path, "dmabuf") && in.gpu == 0, "auto: GPU 0 through dma-buf (%s)", e.msg);

	/* dma-buf refused, nvidia_peermem not loaded: refused before any ibv_reg_mr of GPU memory */
	snprintf(log, sizeof(log), "%s/reg.log", tmproot);
	setenv("FAKEVERBS_LOG", log, 1);
	setenv("FAKEVERBS_DMABUF_FAIL", "EOPNOTSUPP", 1);
	rc = run("gpu:0", NULL, GP_RDMA_WRITE, 0, &r, &e, NULL);
	CHECK(rc && strstr(e.msg, "dma-buf: rxe0 cannot register a dma-buf") && strstr(e.msg, "Operation not supported") &&
	      strstr(e.msg, "nvidia_peermem module is not loaded: modprobe nvidia-peermem"),
	      "dma-buf EOPNOTSUPP and no nvidia_peermem: the error names both, with their fixes (%s)", e.msg);
	CHECK(has_line(log, "reg_dmabuf_mr 65536") && !has_line(log, "reg_mr 65536"),
	      "  peermem refused up front: no ibv_reg_mr of GPU memory was tried");

	/* nvidia_peermem loaded (in this root): ibv_reg_mr on device memory */
	snprintf(dir, sizeof(dir), "%s/sys/module/nvidia_peermem", tmproot);
	mkdir(tmproot, 0755);
	snprintf(log, sizeof(log), "%s/sys", tmproot);
	mkdir(log, 0755);
	snprintf(log, sizeof(log), "%s/sys/module", tmproot);
	mkdir(log, 0755);
	mkdir(dir, 0755);
	snprintf(log, sizeof(log), "%s/version", dir);
	fclose(fopen(log, "w"));
	gp_root_init(&pm, tmproot, &e);
	unsetenv("FAKEVERBS_LOG");
	rc = run("gpu", &pm, GP_RDMA_SEND, 0, &r, &e, &in);
	CHECK(!rc && !strcmp(in.mem_path, "peermem") && r.verified == 1, "dma-buf refused, peermem loaded: peermem (%s)",
	      e.msg);
	setenv("FAKEVERBS_REG_FAIL", "EFAULT", 1);
	setenv("FAKEVERBS_REG_FAIL_OVER", "4096", 1);
	rc = run("gpu", &pm, GP_RDMA_WRITE, 0, &r, &e, NULL);
	CHECK(rc && strstr(e.msg, "peermem: ibv_reg_mr of GPU0 memory") && strstr(e.msg, "Bad address") &&
	      strstr(e.msg, "nvidia-peermem did not claim the range"), "EFAULT registering GPU memory names nvidia-peermem (%s)",
	      e.msg);
	setenv("FAKEVERBS_REG_FAIL", "EINVAL", 1);
	rc = run("gpu", &pm, GP_RDMA_WRITE, 0, &r, &e, NULL);
	CHECK(rc && strstr(e.msg, "nvidia-peermem did not claim"), "EINVAL too (%s)", e.msg);
	unlink(log);
	rmdir(dir);

	env_reset();
	setenv("GPUP2P_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
	rc = run("gpu", NULL, GP_RDMA_WRITE, 0, &r, &e, NULL);
	CHECK(rc && e.cls == GP_E_UNAVAIL && strstr(e.msg, "CUDA not available"), "GPU memory without CUDA: unavailable");
}

int main(void)
{
	char path[1024];

	mem_parse();
	rdma_fx_init();
	loopback();
	two_devices();
	numa_from_pci();
	refusals();
	gpu_memory();
	snprintf(path, sizeof(path), "%s/reg.log", tmproot);
	unlink(path);
	snprintf(path, sizeof(path), "%s/sys/module", tmproot);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/sys", tmproot);
	rmdir(path);
	rmdir(tmproot);
	return unit_done();
}
