/* gpup2p — the ACS state file (not installed): what gpup2p acs --disable replaced, so that --restore
 * can put it back. Text, one bridge per line, written atomically (temporary file + rename):
 *
 *   gpup2p-acs-state 1
 *   # bdf vendor:device ctl-offset before after
 *   0000:00:01.0 8086:7e4d 0x14e 0x001d 0x0001
 *
 * A lock file beside it (PATH.lock, flock) keeps two gpup2p acs runs from interleaving. */
#ifndef GPUP2P_ACS_STATE_H
#define GPUP2P_ACS_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "gpup2p/err.h"
#include "gpup2p/pci.h"

/* One line of the state file: an ACS control register gpup2p changed. */
struct gp_acs_state_entry {
	char bdf[GP_BDF_LEN];
	uint16_t vendor, device;
	int off;               /* config offset of the control register */
	uint16_t before;       /* what it held before gpup2p changed it */
	uint16_t after;        /* what gpup2p wrote */
};

struct gp_acs_state_file {
	int lockfd;            /* -1 when not locked */
	char *content;         /* the file as it was when locked; NULL when there was none */
	size_t len;
};

/* Create the state file's folder, take the lock (fails at once when another run holds it) and keep
 * the current content in old. 0 or a GP_E_FAIL error. */
int gp_acs_state_lock(const char *path, struct gp_acs_state_file *old, struct gp_err *e);

/* Release the lock and what gp_acs_state_lock kept. */
void gp_acs_state_unlock(struct gp_acs_state_file *old);

/* Write old's entries merged with w[0..nw), the registers about to be written: a bridge already
 * recorded keeps its first "before" and gets w's "after". 0 or a GP_E_FAIL error (the file is then
 * unchanged); GP_E_DATA when old is not a state file. */
int gp_acs_state_save(const char *path, const struct gp_acs_state_file *old, const struct gp_acs_state_entry *w,
		      int nw, struct gp_err *e);

/* Put the file back as it was in old (remove it when there was none). Best effort. */
void gp_acs_state_put_back(const char *path, const struct gp_acs_state_file *old);

/* Read the state file's entries (*v malloc'ed, *n of them; checking them against the machine is the
 * caller's job). Missing ⇒ GP_E_UNAVAIL; malformed ⇒ GP_E_DATA. */
int gp_acs_state_load(const char *path, struct gp_acs_state_entry **v, int *n, struct gp_err *e);

/* Remove the state file (absent is fine). 0 or a GP_E_FAIL error. */
int gp_acs_state_remove(const char *path, struct gp_err *e);

#endif
