/* bench rdma's pure parts, no test double needed: what a port carries (libcore/rdma/rate.c) checked against
 * the per-field header sizes of the specs (rdma_rates.h), and the plan of a run (libcore/rdma/plan.c). */
#include <errno.h>
#include <math.h>

#include "gpup2p/rdma.h"
#include "rdma_rates.h"
#include "unit.h"

#define NEAR(a, b) (fabs((a) - (b)) < 1e-3)

static void rate_math(void)
{
	double roce_edr4 = EDR_LANE * 4 * 4096 / (4096 + ROCE_HDR);

	CHECK(gp_rdma_header_bytes(GP_RDMA_LINK_IB) == IB_HDR && gp_rdma_header_bytes(GP_RDMA_LINK_ETH) == ROCE_HDR,
	      "headers: IB LRH+BTH+ICRC+VCRC, RoCE v2 Ethernet+IPv4+UDP+BTH+ICRC+FCS+preamble+gap (%d, %d)",
	      gp_rdma_header_bytes(GP_RDMA_LINK_IB), gp_rdma_header_bytes(GP_RDMA_LINK_ETH));
	CHECK(NEAR(gp_rdma_port_payload_gbits(32, 2, 5, GP_RDMA_LINK_ETH), roce_edr4),
	      "RoCE EDR 4x at MTU 4096: %.4f Gb/s, by hand %.4f", gp_rdma_port_payload_gbits(32, 2, 5, GP_RDMA_LINK_ETH),
	      roce_edr4);
	CHECK(NEAR(gp_rdma_port_payload_gbits(32, 2, 3, GP_RDMA_LINK_ETH), EDR_LANE * 4 * 1024 / (1024 + ROCE_HDR)),
	      "RoCE EDR 4x at MTU 1024");
	CHECK(NEAR(gp_rdma_port_payload_gbits(64, 2, 5, GP_RDMA_LINK_IB), 50.0 * 4 * 4096 / (4096 + IB_HDR)),
	      "IB HDR 4x at MTU 4096");
	CHECK(NEAR(gp_rdma_port_payload_gbits(16, 2, 4, GP_RDMA_LINK_IB), FDR_LANE * 4 * 2048 / (2048 + IB_HDR)),
	      "IB FDR 4x at MTU 2048 (64b/66b)");
	CHECK(NEAR(gp_rdma_port_payload_gbits(128, 8, 5, GP_RDMA_LINK_IB), 100.0 * 12 * 4096 / (4096 + IB_HDR)),
	      "IB NDR 12x");
	CHECK(NEAR(gp_rdma_port_payload_gbits(1, 1, 1, GP_RDMA_LINK_IB), SDR_LANE * 1 * 256 / (256 + IB_HDR)),
	      "IB SDR 1x at MTU 256 (8b/10b)");
	CHECK(gp_rdma_port_payload_gbits(3, 2, 5, GP_RDMA_LINK_IB) == 0, "an unknown speed gives 0, not a guess");
	CHECK(gp_rdma_port_payload_gbits(32, 3, 5, GP_RDMA_LINK_IB) == 0, "an unknown width gives 0");
	CHECK(gp_rdma_port_payload_gbits(32, 2, 6, GP_RDMA_LINK_IB) == 0, "an unknown MTU gives 0");
	CHECK(gp_rdma_port_payload_gbits(32, 2, 5, 0) == 0, "an unknown link layer gives 0");
	/* enum ibv_mtu: IBV_MTU_256 = 1 ... IBV_MTU_4096 = 5; ibv_port_attr.active_width: 1 = 1x, 2 = 4x, 4 = 8x,
	 * 8 = 12x, 16 = 2x (verbs.h) */
	CHECK(gp_rdma_mtu_bytes(1) == 256 && gp_rdma_mtu_bytes(3) == 1024 && gp_rdma_mtu_bytes(5) == 4096 &&
	      gp_rdma_mtu_bytes(0) == 0, "MTU enum to bytes");
	CHECK(gp_rdma_width_lanes(16) == 2 && gp_rdma_width_lanes(8) == 12, "width 2x and 12x");
	CHECK(NEAR(gp_rdma_rate_parse("100 Gb/sec (4X EDR)"), 100) && NEAR(gp_rdma_rate_parse("2.5 Gb/sec (1X SDR)"), 2.5),
	      "sysfs rate lines");
	CHECK(gp_rdma_rate_parse("fast") == 0 && gp_rdma_rate_parse("100 GB") == 0 && gp_rdma_rate_parse(NULL) == 0,
	      "a malformed rate line is 0");
}

/* gp_rdma_plan: the defaults and rules bench rdma applies (sizes written out by hand) */
static void plan(void)
{
	static struct gp_rdma_plan p;
	struct gp_err e;

	gp_rdma_plan_init(&p);
	CHECK(!gp_rdma_plan(&p, &e) && p.ops == (GP_RDMA_WRITE | GP_RDMA_READ | GP_RDMA_SEND) && p.iters == 1000 &&
	      p.reps == 5 && p.nsizes == 1 && p.sizes[0] == 65536 && p.o.max_size == 65536 && p.o.role == GP_RDMA_LOOPBACK,
	      "nothing given: write, read and send, 1000 x 5 of 64 KiB, loopback");
	CHECK(p.o.gid_index == -1 && p.o.peer_gid_index == -1 && p.o.mem.kind == GP_RMEM_HOST &&
	      p.o.peer_mem.kind == GP_RMEM_HOST, "  GID indexes unset, host memory on both sides");
	gp_rdma_plan_init(&p);
	p.lat = 1;
	CHECK(!gp_rdma_plan(&p, &e) && p.sizes[0] == 8, "--lat: 8 bytes");
	gp_rdma_plan_init(&p);
	p.o.role = GP_RDMA_SERVER;
	CHECK(!gp_rdma_plan(&p, &e) && p.o.max_size == 64 * 1024 * 1024, "a server without sizes: a 64 MiB buffer");
	gp_rdma_plan_init(&p);
	p.o.role = GP_RDMA_SERVER;
	p.size = 4096;
	CHECK(!gp_rdma_plan(&p, &e) && p.o.max_size == 4096, "a server with --size 4K: that buffer");
	gp_rdma_plan_init(&p);
	p.min = 4096;
	p.max = 16384;
	CHECK(!gp_rdma_plan(&p, &e) && p.nsizes == 3 && p.sizes[0] == 4096 && p.sizes[1] == 8192 && p.sizes[2] == 16384 &&
	      p.o.max_size == 16384, "--min 4K --max 16K: 4K 8K 16K, buffers of 16K");
	gp_rdma_plan_init(&p);
	p.o.mem.kind = GP_RMEM_GPU;
	p.o.mem.gpu = 2;
	CHECK(!gp_rdma_plan(&p, &e) && p.o.peer_mem.kind == GP_RMEM_GPU && p.o.peer_mem.gpu == 2,
	      "no --peer-mem: the peer's buffer as --mem");
	gp_rdma_plan_init(&p);
	p.o.host = "h";
	CHECK(!gp_rdma_plan(&p, &e) && p.o.role == GP_RDMA_CLIENT, "--connect: a client");

	gp_rdma_plan_init(&p);
	p.size = (1ULL << 31) + 1;
	CHECK(gp_rdma_plan(&p, &e) == -EINVAL && e.cls == GP_E_USAGE && strstr(e.msg, "at most 2G"), "2G + 1: refused");
	gp_rdma_plan_init(&p);
	p.size = 1ULL << 31;
	CHECK(!gp_rdma_plan(&p, &e), "2G: the largest message");
	gp_rdma_plan_init(&p);
	p.min = 1;
	p.max = 1ULL << 31;
	p.factor = 1.0001;
	CHECK(gp_rdma_plan(&p, &e) == -E2BIG && e.cls == GP_E_USAGE, "a sweep too long: refused");
	gp_rdma_plan_init(&p);
	p.min = 8192;
	p.max = 4096;
	CHECK(gp_rdma_plan(&p, &e) == -EINVAL && e.cls == GP_E_USAGE, "a sweep with its ends reversed: refused");
}

int main(void)
{
	rate_math();
	plan();
	return unit_done();
}
