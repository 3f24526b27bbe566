/* gpup2p — error reporting shared by every libcore module.
 *
 * Library functions return 0 (or a count) on success and a negative errno on
 * failure, and fill a struct gp_err with a one-line message the caller prints.
 * The class tells the command line which documented exit code applies. */
#ifndef GPUP2P_ERR_H
#define GPUP2P_ERR_H

enum gp_err_class {
	GP_E_NONE = 0,
	GP_E_FAIL,     /* an operation failed (exit 2) */
	GP_E_DATA,     /* input could not be read or understood (exit 3) */
	GP_E_USAGE,    /* the caller asked for something invalid (exit 64) */
	GP_E_UNAVAIL,  /* a needed facility is missing (exit 69) */
	GP_E_PERM,     /* permission denied (exit 77) */
};

struct gp_err {
	enum gp_err_class cls;
	int errnum;        /* positive errno, 0 if none */
	char msg[768];
};

/* Record an error; returns -errnum (or -EIO when errnum is 0) for `return gp_err_set(...)`. */
int gp_err_set(struct gp_err *e, enum gp_err_class cls, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Reset an error record to "no error". */
void gp_err_clear(struct gp_err *e);

/* The exit code documented for an error class (0, 2, 3, 64, 69, 77). */
int gp_err_exit_code(const struct gp_err *e);

#endif
