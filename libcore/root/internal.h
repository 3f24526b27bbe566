/* gpup2p — what the files of libcore/root/ share (not installed). */
#ifndef GPUP2P_ROOT_INTERNAL_H
#define GPUP2P_ROOT_INTERNAL_H

/* Tell the trace hook (gp_root_set_trace), if one is set, that path was asked: err 0 or an errno. */
void gp_root_traced(const char *path, int err);

#endif
