/* gpup2p doctor — the /proc and /sys files no other module owns (the module list, the NVIDIA
 * driver's version and parameters, kallsyms, NUMA nodes, device nodes), read through the root once,
 * on first use, so a check that is not selected costs nothing. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

#define NODE_DIRS 4

struct gp_doctor_sys {
	int mods_rc;             /* 0 not read yet, 1 read, -errno */
	char **mods;
	int nmods;
	int ver_rc;
	char version[256];
	char release[32];        /* "580.159.04" from the version line */
	int params_rc;
	char *params;
	int numa_rc;             /* 0 not read yet, else nodes + 1, or -errno */
	int host_rc;
	char host[256];
	int boot_rc;
	char boot_id[64];
	int dev_rc;              /* /dev under the root: 0 not asked yet, 1 there, -1 not */
	struct gp_root_dir *nodes[NODE_DIRS]; /* the folders of the device nodes asked (/dev, /dev/infiniband) */
};

static struct gp_doctor_sys *sys_of(struct gp_doctor_ctx *c)
{
	if (!c->sys)
		c->sys = calloc(1, sizeof(*c->sys));
	return c->sys;
}

/* Open a file for line reading through the root layer: beneath the root, never through a symlink
 * that leaves it, and under a root a regular file only (a pipe there is not opened, a folder not read). */
static FILE *root_fopen(const struct gp_root *r, const char *path, int *err)
{
	struct stat st;
	FILE *f;
	int fd = gp_root_open(r, path, O_RDONLY);

	if (fd >= 0 && !r->live && (fstat(fd, &st) || !S_ISREG(st.st_mode))) {
		close(fd);
		fd = -EMEDIUMTYPE;
	}
	if (fd < 0) {
		*err = fd;
		return NULL;
	}
	if (!(f = fdopen(fd, "r"))) {
		*err = -errno;
		close(fd);
		return NULL;
	}
	*err = 0;
	return f;
}

static void norm(char *s)
{
	for (; *s; s++)
		if (*s == '-')
			*s = '_';
}

static int load_modules(struct gp_doctor_ctx *c, struct gp_doctor_sys *s)
{
	char line[512];
	int err, cap = 0;
	FILE *f = root_fopen(c->root, "/proc/modules", &err);

	if (!f)
		return err;
	for (int cont = 0; fgets(line, sizeof(line), f);) {
		char **v, *sp = strchr(line, ' ');
		int was_cont = cont;

		cont = !strchr(line, '\n'); /* the next read is the rest of this line, not a module */
		if (sp)
			*sp = '\0';
		line[strcspn(line, "\n")] = '\0';
		if (!line[0] || was_cont)
			continue;
		if (s->nmods == cap) { /* doubling: a list of a million lines is read in linear time */
			cap = cap ? cap * 2 : 256;
			if (!(v = realloc(s->mods, sizeof(*v) * (size_t)cap))) {
				fclose(f);
				return -ENOMEM;
			}
			s->mods = v;
		}
		if (!(s->mods[s->nmods] = strdup(line))) {
			fclose(f);
			return -ENOMEM;
		}
		norm(s->mods[s->nmods++]);
	}
	fclose(f);
	return 1;
}

int gp_doctor_module(struct gp_doctor_ctx *c, const char *name)
{
	struct gp_doctor_sys *s = sys_of(c);
	char want[64];

	if (!s)
		return -ENOMEM;
	if (!s->mods_rc)
		s->mods_rc = load_modules(c, s);
	if (s->mods_rc < 0)
		return s->mods_rc;
	snprintf(want, sizeof(want), "%s", name);
	norm(want);
	for (int i = 0; i < s->nmods; i++)
		if (!strcmp(s->mods[i], want))
			return 1;
	return 0;
}

const char *gp_doctor_nv_version(struct gp_doctor_ctx *c, int *err)
{
	struct gp_doctor_sys *s = sys_of(c);

	if (!s) {
		*err = -ENOMEM;
		return NULL;
	}
	if (!s->ver_rc) {
		char *text = NULL;
		ssize_t n = gp_root_read_alloc(c->root, "/proc/driver/nvidia/version", &text, GP_DOCTOR_TEXT_MAX);

		/* the NVRM line (the GCC line after it may be long) */
		if (n >= 0)
			snprintf(s->version, sizeof(s->version), "%.*s", (int)strcspn(text, "\n"), text);
		free(text);
		for (size_t l = strlen(s->version); l && (s->version[l - 1] == ' ' || s->version[l - 1] == '\t'); l--)
			s->version[l - 1] = '\0';
		s->ver_rc = n < 0 ? (int)n : !s->version[0] ? -ENODATA : 1;
	}
	*err = s->ver_rc < 0 ? s->ver_rc : 0;
	return s->ver_rc > 0 ? s->version : NULL;
}

int gp_doctor_nv_open(const char *v)
{
	if (!v || strncmp(v, "NVRM version:", 13))
		return -1;
	return strstr(v, "Open Kernel Module") ? 1 : 0;
}

const char *gp_doctor_nv_release(struct gp_doctor_ctx *c)
{
	int err;
	const char *v = gp_doctor_nv_version(c, &err);
	char *rel = c->sys ? c->sys->release : NULL;

	/* "NVRM version: NVIDIA UNIX ... Kernel Module[ for x86_64]  580.159.04  Release Build ..." */
	for (const char *p = v ? strstr(v, "Module") : NULL; p && *p; p++) {
		if (isdigit((unsigned char)p[0]) && (p[-1] == ' ') && strchr(p, '.')) {
			size_t l = strspn(p, "0123456789.");

			if (rel && l < sizeof(c->sys->release) && memchr(p, '.', l)) {
				memcpy(rel, p, l);
				rel[l] = '\0';
				return rel;
			}
		}
	}
	return c->facts->available ? c->facts->driver : "";
}

int gp_doctor_nv_param(struct gp_doctor_ctx *c, const char *key, char *buf, size_t n, int *file_missing)
{
	struct gp_doctor_sys *s = sys_of(c);
	size_t kl = strlen(key);

	*file_missing = 0;
	if (!s)
		return -ENOMEM;
	if (!s->params_rc) { /* read whole: a key past any fixed size would read as absent */
		ssize_t len = gp_root_read_alloc(c->root, "/proc/driver/nvidia/params", &s->params, GP_DOCTOR_TEXT_MAX);

		s->params_rc = len < 0 ? (int)len : 1;
	}
	if (s->params_rc < 0) {
		*file_missing = 1;
		return s->params_rc;
	}
	for (const char *p = s->params; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		const char *v;
		size_t l;

		if (strncmp(p, key, kl) || p[kl] != ':')
			continue;
		v = p + kl + 1;
		v += strspn(v, " \t");
		l = strcspn(v, "\n");
		if (l >= 2 && v[0] == '"' && v[l - 1] == '"') {
			v++;
			l -= 2;
		}
		snprintf(buf, n, "%.*s", (int)l, v);
		return 0;
	}
	return -ENOENT;
}

int gp_doctor_numa_nodes(struct gp_doctor_ctx *c)
{
	struct gp_doctor_sys *s = sys_of(c);

	if (!s)
		return -ENOMEM;
	if (!s->numa_rc) {
		char **names = NULL;
		int n, nodes = 0;

		if (!gp_root_exists(c->root, "/sys/devices/system/node")) {
			s->numa_rc = -ENOENT;
		} else {
			n = gp_root_list(c->root, "/sys/devices/system/node", &names);
			for (int i = 0; i < n; i++)
				if (!strncmp(names[i], "node", 4) && isdigit((unsigned char)names[i][4]))
					nodes++;
			gp_root_free_list(names);
			s->numa_rc = n < 0 ? n : nodes + 1;
		}
	}
	return s->numa_rc < 0 ? s->numa_rc : s->numa_rc - 1;
}

long gp_doctor_read(struct gp_doctor_ctx *c, const char *path, char *buf, size_t n)
{
	return (long)gp_root_read_text(c->root, path, buf, n);
}

int gp_doctor_kallsyms_has(struct gp_doctor_ctx *c, const char *sym)
{
	int has;

	return gp_doctor_pre_kallsyms(c->pre, sym, &has) ? has : gp_doctor_kallsyms_scan(c->root, sym);
}

int gp_doctor_kallsyms_scan(const struct gp_root *r, const char *sym)
{
	char line[512];
	size_t l = strlen(sym);
	int err, found = 0;
	FILE *f = root_fopen(r, "/proc/kallsyms", &err);

	if (!f)
		return err;
	/* "address type name[\t[module]]" */
	while (!found && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, ' ');

		p = p ? strchr(p + 1, ' ') : NULL;
		found = p && !strncmp(p + 1, sym, l) && (p[1 + l] == '\t' || p[1 + l] == '\n' || p[1 + l] == '\0');
	}
	fclose(f);
	return found;
}

/* The folder of device node path (under a root), opened and listed on first use and kept for the run,
 * its entry's name into *name; NULL when it cannot be kept (the node is then asked by its path). */
static const struct gp_root_dir *node_dir(struct gp_doctor_ctx *c, const char *path, const char **name)
{
	struct gp_doctor_sys *s = sys_of(c);
	const char *slash = strrchr(path, '/');
	char dir[GP_PATH_MAX];
	int i;

	if (!s || !slash || slash == path || (size_t)(slash - path) >= sizeof(dir))
		return NULL;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	*name = slash + 1;
	for (i = 0; i < NODE_DIRS && s->nodes[i]; i++)
		if (!strcmp(s->nodes[i]->path, dir))
			return s->nodes[i];
	if (i == NODE_DIRS || !(s->nodes[i] = malloc(sizeof(*s->nodes[i]))))
		return NULL;
	gp_root_dir_open_in(c->root, s->nodes[i], NULL, dir, GP_ROOT_DIR_COMPACT);
	return s->nodes[i];
}

int gp_doctor_devnode(struct gp_doctor_ctx *c, const char *path, int *usable)
{
	struct gp_doctor_sys *s = sys_of(c);
	const struct gp_root_dir *d;
	const char *name;
	struct stat st;
	char note[64];
	int fd, t;

	*usable = 0;
	if (s && !s->dev_rc)
		s->dev_rc = gp_root_exists(c->root, "/dev") ? 1 : -1;
	if (s ? s->dev_rc < 0 : !gp_root_exists(c->root, "/dev"))
		return -ENOENT;
	if (c->root->live) {
		if (stat(path, &st) || !S_ISCHR(st.st_mode))
			return 0;
		*usable = access(path, R_OK | W_OK) == 0;
		return 1;
	}
	/* its folder's listing: a node not there is missing, a recorded one (a regular file) read through it */
	if ((d = node_dir(c, path, &name)) && d->fd >= 0 && d->n >= 0 &&
	    ((t = gp_root_dir_type(d, name)) == -1 || t == DT_REG)) {
		*usable = t == DT_REG && (gp_root_dir_read_text(c->root, d, name, note, sizeof(note)) <= 0 ||
					  strncmp(note, "not usable", 10));
		return t == DT_REG;
	}
	if (d && gp_root_dir_gone(d))
		return 0;
	/* under a root, through the root layer: a link out of it is -EXDEV, a pipe is never opened */
	fd = gp_root_open(c->root, path, O_PATH);
	if (fd == -ENOENT || fd == -ENOTDIR)
		return 0;
	if (fd < 0)
		return fd;
	close(fd);
	/* a snapshot records that the node existed, and whether its taker could open it */
	*usable = gp_root_read_text(c->root, path, note, sizeof(note)) <= 0 || strncmp(note, "not usable", 10);
	return 1;
}

const char *gp_doctor_host(struct gp_doctor_ctx *c)
{
	struct gp_doctor_sys *s = sys_of(c);

	if (!s)
		return NULL;
	if (!s->host_rc)
		s->host_rc = gp_doctor_read(c, "/proc/sys/kernel/hostname", s->host, sizeof(s->host)) > 0 ? 1 : -1;
	return s->host_rc > 0 ? s->host : NULL;
}

/* "8-4-4-4-12" hex digits, as the kernel writes a random UUID. */
static int is_uuid(const char *s)
{
	for (int i = 0; i < 36; i++) {
		int dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? s[i] != '-' : !isxdigit((unsigned char)s[i]))
			return 0;
	}
	return s[36] == '\0';
}

const char *gp_doctor_boot_id(struct gp_doctor_ctx *c)
{
	struct gp_doctor_sys *s = sys_of(c);

	if (!s)
		return NULL;
	if (!s->boot_rc)
		s->boot_rc = gp_doctor_read(c, "/proc/sys/kernel/random/boot_id", s->boot_id, sizeof(s->boot_id)) > 0 &&
			     is_uuid(s->boot_id) ? 1 : -1;
	return s->boot_rc > 0 ? s->boot_id : NULL;
}

const char *gp_doctor_gpu_uuid(struct gp_doctor_ctx *c, int i, char *buf, size_t n)
{
	char path[128], info[2048];
	const char *u;
	size_t l;

	if (i < 0 || i >= c->topo->ngpu)
		return NULL;
	snprintf(path, sizeof(path), "/proc/driver/nvidia/gpus/%s/information", gp_doctor_dev(c, i)->bdf);
	if (gp_doctor_read(c, path, info, sizeof(info)) <= 0 || !(u = strstr(info, "GPU UUID:")))
		return NULL;
	u += 9;
	u += strspn(u, " \t");
	l = strcspn(u, " \t\n");
	if (!l || l >= n)
		return NULL;
	memcpy(buf, u, l);
	buf[l] = '\0';
	return buf;
}

int gp_doctor_captured(const struct gp_doctor_ctx *c, const char *group)
{
	return c->root->live || !c->src.snapshot || gp_snapshot_info_has(&c->src.snap, group);
}

void gp_doctor_sys_free(struct gp_doctor_ctx *c)
{
	struct gp_doctor_sys *s = c->sys;

	if (!s)
		return;
	for (int i = 0; i < s->nmods; i++)
		free(s->mods[i]);
	free(s->mods);
	free(s->params);
	for (int i = 0; i < NODE_DIRS && s->nodes[i]; i++) {
		gp_root_dir_close(s->nodes[i]);
		free(s->nodes[i]);
	}
	free(s);
	c->sys = NULL;
}
