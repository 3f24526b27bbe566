/* gpup2p — work counters (see gpup2p/stats.h). */
#include "gpup2p/stats.h"

struct gp_work gp_work;

void gp_work_print(FILE *f)
{
	fprintf(f, "stats: pair_visits %lu path_steps %lu files_opened %lu compares %lu\n",
		__atomic_load_n(&gp_work.pair_visits, __ATOMIC_RELAXED),
		__atomic_load_n(&gp_work.path_steps, __ATOMIC_RELAXED),
		__atomic_load_n(&gp_work.files_opened, __ATOMIC_RELAXED),
		__atomic_load_n(&gp_work.compares, __ATOMIC_RELAXED));
}
