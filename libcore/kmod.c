/* gpup2p — kernel modules through libkmod. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <libkmod.h>

#include "gpup2p/kmod.h"

/* A libkmod context that keeps quiet: errors are reported by gpup2p, once, with the fix. */
static struct kmod_ctx *ctx_new(void)
{
	struct kmod_ctx *ctx = kmod_new(NULL, NULL);

	if (ctx)
		kmod_set_log_priority(ctx, 0);
	return ctx;
}

enum gp_mod_state gp_kmod_state(const char *name)
{
	struct kmod_ctx *ctx = ctx_new();
	struct kmod_module *m = NULL;
	int st = -ENOENT;

	if (!ctx)
		return GP_MOD_ABSENT;
	if (kmod_module_new_from_name(ctx, name, &m) == 0) {
		st = kmod_module_get_initstate(m);
		kmod_module_unref(m);
	}
	kmod_unref(ctx);
	switch (st) {
	case KMOD_MODULE_LIVE: return GP_MOD_LIVE;
	case KMOD_MODULE_COMING: return GP_MOD_COMING;
	case KMOD_MODULE_GOING: return GP_MOD_GOING;
	case KMOD_MODULE_BUILTIN: return GP_MOD_BUILTIN;
	default: return GP_MOD_ABSENT;
	}
}

const char *gp_kmod_state_name(enum gp_mod_state s)
{
	static const char *const n[] = { "absent", "loaded", "loading", "unloading", "built in" };

	return s <= GP_MOD_BUILTIN ? n[s] : "?";
}

/* 1 when the running kernel has the symbol (/proc/kallsyms lists names to every reader). */
static int kernel_has(const char *sym)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512];
	size_t l = strlen(sym);
	int found = 0;

	while (f && !found && fgets(line, sizeof(line), f)) {
		char *p = strrchr(line, ' '), *q = strchr(line, '\t');

		/* "addr type name[\tmodule]" */
		if (q)
			*q = '\0';
		found = p && !strncmp(p + 1, sym, l) && (p[1 + l] == '\0' || p[1 + l] == '\n');
	}
	if (f)
		fclose(f);
	return found;
}

int gp_kmod_load(const char *name, const char *path, struct gp_err *e)
{
	struct kmod_ctx *ctx = ctx_new();
	struct kmod_module *m = NULL;
	int rc;

	if (!ctx)
		return gp_err_set(e, GP_E_FAIL, ENOMEM, "libkmod: cannot start");
	rc = path ? kmod_module_new_from_path(ctx, path, &m) : kmod_module_new_from_name(ctx, name, &m);
	if (rc) {
		kmod_unref(ctx);
		return gp_err_set(e, GP_E_UNAVAIL, -rc, "%s: %s", path ? path : name, strerror(-rc));
	}
	if (!path && !kmod_module_get_path(m) && gp_kmod_state(name) == GP_MOD_ABSENT) {
		kmod_module_unref(m);
		kmod_unref(ctx);
		return gp_err_set(e, GP_E_UNAVAIL, ENOENT, "%s is not installed for this kernel: 'make kmod' and 'make -C "
				  "kmod install', or dkms, or --module PATH", name);
	}
	if (gp_kmod_state(name) == GP_MOD_LIVE || gp_kmod_state(name) == GP_MOD_BUILTIN)
		rc = 0;
	else if (path)
		rc = kmod_module_insert_module(m, 0, NULL);
	else
		rc = kmod_module_probe_insert_module(m, KMOD_PROBE_FAIL_ON_LOADED, NULL, NULL, NULL, NULL);
	kmod_module_unref(m);
	kmod_unref(ctx);
	if (rc == -EEXIST || rc == 0)
		return 0;
	if (!strcmp(name, "gpup2p") && !kernel_has("nvidia_p2p_get_pages"))
		return gp_err_set(e, GP_E_FAIL, -rc, "loading %s: the NVIDIA driver is not loaded (the kernel has no "
				  "nvidia_p2p_get_pages): load it first (modprobe nvidia)", path ? path : name);
	switch (-rc) {
	case ENOENT: /* init_module: a symbol it needs is not there */
	case EPERM:
	case EACCES:
		return gp_err_set(e, GP_E_PERM, -rc, "loading %s: permission denied (root needed; or module loading is "
				  "locked down, e.g. Secure Boot with an unsigned module)", name);
	case EINVAL:
		return gp_err_set(e, GP_E_FAIL, -rc, "loading %s: unknown symbols (is the NVIDIA driver loaded? dmesg "
				  "names them)", path ? path : name);
	case ENOEXEC:
		return gp_err_set(e, GP_E_FAIL, ENOEXEC, "loading %s: not a module for this kernel (%s)", path ? path : name,
				  strerror(ENOEXEC));
	default:
		return gp_err_set(e, GP_E_FAIL, -rc, "loading %s: %s", path ? path : name, strerror(-rc));
	}
}

int gp_kmod_unload(const char *name, struct gp_err *e)
{
	struct kmod_ctx *ctx;
	struct kmod_module *m = NULL;
	int rc;

	if (gp_kmod_state(name) == GP_MOD_ABSENT)
		return 0;
	ctx = ctx_new();
	if (!ctx)
		return gp_err_set(e, GP_E_FAIL, ENOMEM, "libkmod: cannot start");
	rc = kmod_module_new_from_name(ctx, name, &m);
	if (!rc) {
		rc = kmod_module_remove_module(m, 0);
		kmod_module_unref(m);
	}
	kmod_unref(ctx);
	if (rc == -EAGAIN || rc == -EBUSY)
		return gp_err_set(e, GP_E_FAIL, EBUSY, "%s is in use: close the programs using it first", name);
	if (rc == -EPERM)
		return gp_err_set(e, GP_E_PERM, EPERM, "unloading %s: permission denied (root needed)", name);
	return rc ? gp_err_set(e, GP_E_FAIL, -rc, "unloading %s: %s", name, strerror(-rc)) : 0;
}

int gp_kmod_devnode(const char *name, const char *path, unsigned mode, struct gp_err *e)
{
	char sys[256];
	unsigned maj, min;
	struct stat st;
	FILE *f;
	int n;

	if (stat(path, &st) == 0) {
		if (S_ISCHR(st.st_mode))
			return 0;
		return gp_err_set(e, GP_E_FAIL, EEXIST, "%s exists but is not a character device: remove it", path);
	}
	snprintf(sys, sizeof(sys), "/sys/class/misc/%s/dev", name);
	f = fopen(sys, "r");
	if (!f)
		return gp_err_set(e, GP_E_FAIL, errno, "%s: %s (is the module loaded?)", sys, strerror(errno));
	n = fscanf(f, "%u:%u", &maj, &min);
	fclose(f);
	if (n != 2)
		return gp_err_set(e, GP_E_FAIL, EINVAL, "%s: not MAJOR:MINOR", sys);
	if (mknod(path, S_IFCHR | (mode & 07777), makedev(maj, min)) || chmod(path, mode & 07777))
		return gp_err_set(e, GP_E_FAIL, errno, "cannot create %s (%u:%u): %s", path, maj, min, strerror(errno));
	return 1;
}
