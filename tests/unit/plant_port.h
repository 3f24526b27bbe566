/* gpup2p unit tests — a copy of the healthy doctor fixture whose first RDMA port (mlx5_0/1) is planted
 * with what a path read reports: a file missing, a folder where a file was, a NUL in a text, a text
 * longer than a check's buffer, a symlink, counters/ a file (test_doctor_dir, test_root_dir). */
#ifndef GPUP2P_PLANT_PORT_H
#define GPUP2P_PLANT_PORT_H

#include <limits.h>

#include "unit.h"

static char port0[PATH_MAX];   /* the copy's mlx5_0/1, resolved (the folder gp_doctor_ib_port's at names) */

/* Write len bytes of s into the copy's first port as file (relative to the port). */
static inline void put(const char *file, const char *s, size_t len)
{
	char path[1200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", port0, file);
	if (!(f = fopen(path, "w")) || fwrite(s, 1, len, f) != len) {
		CHECK(0, "%s can be written", path);
		if (f)
			fclose(f);
		return;
	}
	fclose(f);
}

/* The planted port: phys_state gone, link_layer a folder, state with a NUL in it, rate 100 bytes (past
 * rdma.rate's 64, within expect's 128), a symlink "sym" to state, counters/ a file. */
static inline int plant(const char *root)
{
	char cmd[2400], cls[1024], rate[101];

	snprintf(cls, sizeof(cls), "%s/sys/class/infiniband/mlx5_0/ports/1", root);
	if (!realpath(cls, port0))
		return -1;
	snprintf(cmd, sizeof(cmd), "cd '%s' && rm -f phys_state link_layer && mkdir link_layer && rm -rf counters && "
		 "echo 7 >counters && ln -s state sym", port0);
	if (system(cmd))
		return -1;
	put("state", "4: ACT\0IVE\n", 11);
	memset(rate, 'x', sizeof(rate));
	memcpy(rate, "400 Gb/sec (4X NDR) ", 20);
	rate[99] = '\n';
	put("rate", rate, 100);
	return 0;
}

#endif
