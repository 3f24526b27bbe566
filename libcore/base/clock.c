/* gpup2p — the monotonic clock (gpup2p/clock.h). */
#include <time.h>

#include "gpup2p/clock.h"

double gp_clock_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
