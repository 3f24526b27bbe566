/* gpup2p — what an RDMA port can carry: lane rate after line coding, lanes, MTU, per-packet headers. */
#include <stdlib.h>
#include <string.h>

#include "gpup2p/rdma.h"

double gp_rdma_lane_gbits(int active_speed)
{
	switch (active_speed) {
	case 1: return 2.0;                      /* SDR: 2.5 Gbaud, 8b/10b */
	case 2: return 4.0;                      /* DDR */
	case 4: return 8.0;                      /* QDR */
	case 8: return 10.0;                     /* FDR10: 10.3125 Gbaud, 64b/66b */
	case 16: return 14.0625 * 64 / 66;       /* FDR */
	case 32: return 25.0;                    /* EDR: 25.78125 Gbaud, 64b/66b */
	case 64: return 50.0;                    /* HDR */
	case 128: return 100.0;                  /* NDR */
	case 256: return 200.0;                  /* XDR */
	default: return 0;
	}
}

int gp_rdma_width_lanes(int active_width)
{
	switch (active_width) {
	case 1: return 1;
	case 2: return 4;
	case 4: return 8;
	case 8: return 12;
	case 16: return 2;
	default: return 0;
	}
}

int gp_rdma_mtu_bytes(int ibv_mtu)
{
	return ibv_mtu >= 1 && ibv_mtu <= 5 ? 128 << ibv_mtu : 0;
}

int gp_rdma_header_bytes(int link_layer)
{
	if (link_layer == GP_RDMA_LINK_IB)
		return 8 + 12 + 4 + 2;
	if (link_layer == GP_RDMA_LINK_ETH)
		return 14 + 20 + 8 + 12 + 4 + 4 + 8 + 12;
	return 0;
}

double gp_rdma_port_payload_gbits(int active_speed, int active_width, int ibv_mtu, int link_layer)
{
	double lane = gp_rdma_lane_gbits(active_speed);
	int lanes = gp_rdma_width_lanes(active_width), mtu = gp_rdma_mtu_bytes(ibv_mtu), hdr = gp_rdma_header_bytes(link_layer);

	if (!lane || !lanes || !mtu || !hdr)
		return 0;
	return lane * lanes * mtu / (mtu + hdr);
}

double gp_rdma_rate_parse(const char *s)
{
	char *end;
	double v;

	if (!s)
		return 0;
	v = strtod(s, &end);
	if (end == s || !(v > 0) || strncmp(end, " Gb/sec", 7))
		return 0;
	return v;
}
