/* The wire facts the RDMA unit tests check gpup2p's rate arithmetic against (test_rdma.c, test_rdma_rate.c). */
#ifndef GPUP2P_TEST_RDMA_RATES_H
#define GPUP2P_TEST_RDMA_RATES_H

/* Per-packet header bytes from the specs, field by field (not the code's totals): InfiniBand (IBTA vol. 1):
 * LRH 8, BTH 12, ICRC 4, VCRC 2. RoCE v2 (IBTA annex A17) over IPv4 on Ethernet: MAC header 14 + FCS 4, and,
 * as the code counts the whole wire time, preamble + SFD 8 and the inter-frame gap 12; IPv4 20, UDP 8, BTH
 * 12, ICRC 4. */
enum { LRH = 8, BTH = 12, ICRC = 4, VCRC = 2, ETH_HDR = 14, ETH_FCS = 4, ETH_PREAMBLE_SFD = 8, ETH_IFG = 12,
       IPV4 = 20, UDP = 8 };
#define IB_HDR (LRH + BTH + ICRC + VCRC)
#define ROCE_HDR (ETH_HDR + IPV4 + UDP + BTH + ICRC + ETH_FCS + ETH_PREAMBLE_SFD + ETH_IFG)
/* lane data rates from signalling rate x line code: SDR 2.5 Gbaud 8b/10b, FDR 14.0625 and EDR 25.78125 Gbaud
 * 64b/66b; HDR and NDR by their data rate a lane, 50 and 100 Gb/s (4x: 200 and 400 Gb/s) */
#define SDR_LANE (2.5 * 8 / 10)
#define FDR_LANE (14.0625 * 64 / 66)
#define EDR_LANE (25.78125 * 64 / 66)

#endif
