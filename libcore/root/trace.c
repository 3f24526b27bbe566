/* gpup2p — the read trace: every path asked beneath the root, to a hook (gpup2p/root.h). */
#include <stddef.h>

#include "gpup2p/root.h"
#include "internal.h"

static gp_root_trace_fn trace_fn;
static void *trace_arg;

void gp_root_set_trace(gp_root_trace_fn fn, void *arg)
{
	trace_fn = fn;
	trace_arg = arg;
}

void gp_root_traced(const char *path, int err)
{
	gp_root_trace_fn fn = trace_fn;

	if (fn)
		fn(path, err, trace_arg);
}

void gp_root_trace(const char *path, int err)
{
	gp_root_traced(path, err);
}

int gp_root_trace_on(void)
{
	return trace_fn != NULL;
}
