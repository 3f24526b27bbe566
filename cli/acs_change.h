/* gpup2p acs --disable / --restore: the options cmd_acs.c parses and the runner in acs_change.c. */
#ifndef GPUP2P_CLI_ACS_CHANGE_H
#define GPUP2P_CLI_ACS_CHANGE_H

#include "cli.h"
#include "gpup2p/acs_write.h"

#define ACS_DEVICES_MAX 64

struct acs_opts {
	int disable, restore, dry_run, force;
	enum gp_acs_scope scope;
	enum gp_acs_mode mode;
	const char *devices[ACS_DEVICES_MAX];
	int ndevices;
	const char *state;             /* --state, NULL: ROOT/run/gpup2p/acs.state */
};

/* Refuse a write when not root: 0 to go on, else 77 (printed). GPUP2P_TEST_NONROOT_WRITES=1 lifts the
 * check for a --root/GPUP2P_ROOT fixture tree only, never for the live system. */
int acs_root_check(const struct cli *c);

/* Run --disable or --restore on the loaded topology t. Returns the exit code (errors printed). */
int acs_change(struct cli *c, const struct acs_opts *o, struct gp_topo *t);

#endif
