/* gpup2p — the one monotonic clock every timing in the tree reads. */
#ifndef GPUP2P_CLOCK_H
#define GPUP2P_CLOCK_H

/* Seconds on CLOCK_MONOTONIC (an arbitrary origin: only differences mean anything). */
double gp_clock_s(void);

#endif
