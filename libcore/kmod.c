/* gpup2p — kernel modules through libkmod. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
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

#define MAX_SYMS 64

struct syms {
	char name[MAX_SYMS][128];
	int found[MAX_SYMS];
	int n;
};

static void syms_add(struct syms *s, const char *name)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->name[i], name))
			return;
	if (s->n < MAX_SYMS && strlen(name) < sizeof(s->name[0]))
		snprintf(s->name[s->n++], sizeof(s->name[0]), "%s", name);
}

/* The symbols module m needs from elsewhere, as far as its file says: its __versions table and, for
 * gpup2p.ko, the "nvidia_p2p" modinfo field listing the NVIDIA driver's symbols it calls. */
static void syms_needed(struct kmod_module *m, struct syms *s)
{
	struct kmod_list *l = NULL, *it;

	if (kmod_module_get_info(m, &l) >= 0) {
		kmod_list_foreach(it, l) {
			const char *v = kmod_module_info_get_value(it);
			char buf[1024], *save = NULL;

			if (strcmp(kmod_module_info_get_key(it), "nvidia_p2p") || !v)
				continue;
			snprintf(buf, sizeof(buf), "%s", v);
			for (char *t = strtok_r(buf, " ,", &save); t; t = strtok_r(NULL, " ,", &save))
				syms_add(s, t);
		}
		kmod_module_info_free_list(l);
	}
	l = NULL;
	if (kmod_module_get_dependency_symbols(m, &l) >= 0) {
		kmod_list_foreach(it, l)
			syms_add(s, kmod_module_dependency_symbol_get_symbol(it));
		kmod_module_dependency_symbols_free_list(l);
	}
}

/* Mark the symbols the running kernel has (/proc/kallsyms lists names to every reader). */
static void syms_find(struct syms *s)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512];

	while (f && fgets(line, sizeof(line), f)) {
		char *p = strrchr(line, ' '), *q = strchr(line, '\t');

		/* "addr type name[\tmodule]" */
		if (q)
			*q = '\0';
		if (!p)
			continue;
		p[strcspn(p, "\n")] = '\0';
		for (int i = 0; i < s->n; i++)
			s->found[i] |= !strcmp(p + 1, s->name[i]);
	}
	if (f)
		fclose(f);
}

/* A module that could not load because the kernel lacks symbols it needs: GP_E_UNAVAIL naming them
 * and the module that provides them (the NVIDIA driver's nvidia_p2p_*); 0 when none is missing. */
static int missing_symbols(struct kmod_module *m, const char *what, struct gp_err *e)
{
	struct syms *s = calloc(1, sizeof(*s));
	char list[1024] = "";
	int nmiss = 0, nvidia = 1, core = 1, rc = 0;

	if (!s)
		return 0;
	syms_needed(m, s);
	syms_find(s);
	for (int i = 0; i < s->n; i++) {
		size_t used = strlen(list);

		if (s->found[i])
			continue;
		nmiss++;
		nvidia &= !strncmp(s->name[i], "nvidia_p2p_", 11);
		core &= strcmp(s->name[i], "nvidia_p2p_get_pages") != 0;
		if (used < sizeof(list) - 1)
			snprintf(list + used, sizeof(list) - used, "%s%s", used ? ", " : "", s->name[i]);
	}
	if (nmiss && nvidia && !core)
		rc = gp_err_set(e, GP_E_UNAVAIL, ENOENT, "loading %s: the NVIDIA driver (module nvidia) is not loaded "
				"(the kernel has no nvidia_p2p_get_pages): load it first (modprobe nvidia)", what);
	else if (nmiss && nvidia)
		rc = gp_err_set(e, GP_E_UNAVAIL, ENOENT, "loading %s: the loaded NVIDIA driver (module nvidia) lacks %s, "
				"which this gpup2p.ko was built for: rebuild it against the loaded driver (make kmod, "
				"or dkms)", what, list);
	else if (nmiss)
		rc = gp_err_set(e, GP_E_UNAVAIL, ENOENT, "loading %s: the kernel lacks %s: load the module%s providing "
				"them first", what, list, nmiss > 1 ? "s" : "");
	free(s);
	return rc;
}

int gp_kmod_load(const char *name, const char *path, struct gp_err *e)
{
	struct kmod_ctx *ctx = ctx_new();
	struct kmod_module *m = NULL;
	const char *what = path ? path : name;
	int rc, mrc = 0;

	if (!ctx)
		return gp_err_set(e, GP_E_FAIL, ENOMEM, "libkmod: cannot start");
	rc = path ? kmod_module_new_from_path(ctx, path, &m) : kmod_module_new_from_name(ctx, name, &m);
	if (rc) {
		kmod_unref(ctx);
		return gp_err_set(e, GP_E_UNAVAIL, -rc, "%s: %s", what, strerror(-rc));
	}
	if (!path && !kmod_module_get_path(m) && gp_kmod_state(name) == GP_MOD_ABSENT) {
		kmod_module_unref(m);
		kmod_unref(ctx);
		return gp_err_set(e, GP_E_UNAVAIL, ENOENT, "%s is not installed for this kernel: 'make kmod' and 'make -C "
				  "kmod install', or dkms, or gpup2p enable --module PATH", name);
	}
	if (gp_kmod_state(name) == GP_MOD_LIVE || gp_kmod_state(name) == GP_MOD_BUILTIN)
		rc = 0;
	else if (path)
		rc = kmod_module_insert_module(m, 0, NULL);
	else
		rc = kmod_module_probe_insert_module(m, KMOD_PROBE_FAIL_ON_LOADED, NULL, NULL, NULL, NULL);
	/* a module needing symbols the kernel lacks fails with ENOENT: name them */
	if (rc && rc != -EEXIST && rc != -EPERM && rc != -EACCES)
		mrc = missing_symbols(m, what, e);
	kmod_module_unref(m);
	kmod_unref(ctx);
	if (mrc)
		return mrc;
	if (rc == -EEXIST || rc == 0)
		return 0;
	switch (-rc) {
	case ENOENT: /* init_module: a symbol it needs is not there */
		return gp_err_set(e, GP_E_UNAVAIL, ENOENT, "loading %s: a symbol it needs is not in the kernel (dmesg "
				  "names it): load the module that provides it first", what);
	case EPERM:
	case EACCES:
		return gp_err_set(e, GP_E_PERM, -rc, "loading %s: permission denied (root needed; or module loading is "
				  "locked down, e.g. Secure Boot with an unsigned module)", name);
	case EINVAL:
		return gp_err_set(e, GP_E_FAIL, -rc, "loading %s: invalid (a symbol version that disagrees with the "
				  "loaded module providing it, or a bad parameter: dmesg says which)", what);
	case ENOEXEC:
		return gp_err_set(e, GP_E_FAIL, ENOEXEC, "loading %s: not a module for this kernel (%s)", what,
				  strerror(ENOEXEC));
	default:
		return gp_err_set(e, GP_E_FAIL, -rc, "loading %s: %s", what, strerror(-rc));
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
