/* gpup2p — error records. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gpup2p/err.h"

int gp_err_set(struct gp_err *e, enum gp_err_class cls, int errnum, const char *fmt, ...)
{
	va_list ap;

	if (e) {
		e->cls = cls;
		e->errnum = errnum;
		va_start(ap, fmt);
		vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
		va_end(ap);
	}
	return errnum ? -errnum : -EIO;
}

void gp_err_clear(struct gp_err *e)
{
	if (e) {
		e->cls = GP_E_NONE;
		e->errnum = 0;
		e->msg[0] = '\0';
	}
}

int gp_err_exit_code(const struct gp_err *e)
{
	switch (e ? e->cls : GP_E_NONE) {
	case GP_E_NONE: return 0;
	case GP_E_FAIL: return 2;
	case GP_E_DATA: return 3;
	case GP_E_USAGE: return 64;
	case GP_E_UNAVAIL: return 69;
	case GP_E_PERM: return 77;
	}
	return 2;
}
