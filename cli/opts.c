/* gpup2p command line — the option tables' parser, help printer and rule checker. */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gpup2p/bench.h"
#include "gpup2p/buf.h"
#include "opts.h"

#define OPTS_MAX 64

/* what the last opts_parse saw: how often each option of last_cmd was given */
static const struct opts_cmd *last_cmd;
static int seen[OPTS_MAX];
static unsigned long words_given;      /* the positional words of cmd->words given, a bit each */

static const char *const color_words[] = { "auto", "always", "never", NULL };

static int set_color(const char *cmd, const struct opt *o, const char *val, void *field, void *ctx)
{
	struct cli *c = ctx;

	(void)cmd, (void)o, (void)field;
	if (gp_out_parse_color(val))
		return cli_usage(NULL, "--color takes auto, always or never, not '%s'", val);
	c->color_mode = val;
	return 0;
}

#define G(f) (long)offsetof(struct cli, f)
static const struct opt global_opts[] = {
	{ "--root", NULL, "DIR", OPT_STR, G(root_dir), .flags = OPT_DIR, .needs = "a directory",
	  .help = "read DIR/sys and DIR/proc instead of the live system\n(also $GPUP2P_ROOT)" },
	{ "--json", NULL, NULL, OPT_FLAG, G(fmt), GP_OUT_JSON, .help = "one JSON document (\"schema\": 1)" },
	{ "--csv", NULL, NULL, OPT_FLAG, G(fmt), GP_OUT_CSV,
	  .help = "CSV, one row per device (--no-header drops the header line)" },
	{ "--jsonl", NULL, NULL, OPT_FLAG, G(fmt), GP_OUT_JSONL, .help = "JSON lines, one record per device" },
	{ "--no-header", NULL, NULL, OPT_FLAG, G(no_header), 1, .flags = OPT_NOHELP, .help = "CSV without the header line" },
	{ "--color", NULL, "WHEN", OPT_CALL, -1, .values = color_words, .call = set_color, .flags = OPT_EQ,
	  .help = "auto (default: on a terminal, unless NO_COLOR is set),\nalways, never" },
	{ "--verbose", "-v", NULL, OPT_INC, G(verbose), 1, .flags = OPT_REPEAT,
	  .help = "more detail; -vv (or twice) also each path read, on stderr" },
	{ "-vv", NULL, NULL, OPT_INC, G(verbose), 2, .flags = OPT_NOHELP, .help = "also each path read, on stderr" },
	{ "--quiet", "-q", NULL, OPT_FLAG, G(quiet), 1, .help = "only the result: no legend, notes or warnings" },
	{ "--help", "-h", NULL, OPT_FLAG, G(help), 1, .flags = OPT_MAIN, .help = "this help" },
	{ "--version", NULL, NULL, OPT_FLAG, G(version), 1, .flags = OPT_MAIN, .help = "print the version" },
	{ 0 },
};
#undef G

const struct opts_cmd opts_global = { .name = NULL, .opts = global_opts, .col = 18 };

/* o's spelling in argv[*i]: 1 and *val the value (NULL for a flag; a separate value consumed), 0 not o */
static int match(const struct opt *o, int argc, char **argv, int *i, const char **val)
{
	const char *a = argv[*i];

	*val = NULL;
	if ((o->alias && !strcmp(a, o->alias)) || !strcmp(a, o->name)) {
		if (o->arg)
			*val = *i + 1 < argc ? argv[++*i] : "";
		return 1;
	}
	size_t l = strlen(o->name);
	if (o->arg && !strncmp(a, o->name, l) && a[l] == '=') {
		*val = a + l + 1;
		return 1;
	}
	return 0;
}

static int parse_num(const char *val, long lo, long hi, int *out)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(val, &end, 10);
	if (!*val || *end || errno || n < lo || n > hi)
		return -1;
	*out = (int)n;
	return 0;
}

int opts_size(const char *cmd, const char *name, const char *val, uint64_t *v)
{
	int rc = gp_size_parse(val, v);

	if (rc == -ERANGE)
		return cli_usage(cmd, "%s %s is too large (at most 1T)", name, val);
	if (rc)
		return cli_usage(cmd, "%s wants a size like 4096, 64K, 256M or 1G, not '%s'", name, val);
	return 0;
}

int opts_index(const char *cmd, const char *name, const char *val, int *v)
{
	if (parse_num(val, 0, INT_MAX, v))
		return cli_usage(cmd, "%s wants a GPU number (0, 1, ... in PCI bus order), not '%s'", name, val);
	return 0;
}

static int set_value(const char *cmd, const struct opt *o, const char *val, void *ctx)
{
	void *field = o->off >= 0 ? (char *)ctx + o->off : NULL;
	int k;

	switch (o->type) {
	case OPT_FLAG:
		*(int *)field = o->val;
		return 0;
	case OPT_INC:
		*(int *)field += o->val;
		return 0;
	case OPT_BITS:
		*(int *)field |= o->val;
		return 0;
	case OPT_STR:
		if (!*val)
			return cli_usage(cmd, "%s needs %s", o->name, o->needs ? o->needs : o->arg);
		*(const char **)field = val;
		return 0;
	case OPT_COUNT:
		if (parse_num(val, 1, o->hi, field))
			return cli_usage(cmd, "%s wants a whole number from 1 to %d, not '%s'", o->name, o->hi, val);
		return 0;
	case OPT_INDEX:
		return opts_index(cmd, o->name, val, field);
	case OPT_SIZE:
		return opts_size(cmd, o->name, val, field);
	case OPT_ENUM:
		for (k = 0; o->values[k]; k++)
			if (!strcmp(val, o->values[k])) {
				*(int *)field = o->ivals ? o->ivals[k] : k;
				return 0;
			}
		{
			char list[256];
			size_t used = 0;

			list[0] = '\0';
			for (k = 0; o->values[k]; k++)
				used += (size_t)snprintf(list + used, used < sizeof(list) ? sizeof(list) - used : 0, "%s%s",
							 !k ? "" : o->values[k + 1] ? ", " : " or ", o->values[k]);
			return cli_usage(cmd, "%s takes %s, not '%s'", o->name, list, val);
		}
	case OPT_CALL:
		return o->call(cmd, o, val, field, ctx);
	}
	return 0;
}

int opts_global_arg(struct cli *c, int argc, char **argv, int *i)
{
	const char *val;

	for (const struct opt *o = global_opts; o->name; o++)
		if (match(o, argc, argv, i, &val))
			return set_value(NULL, o, val, c) ? -1 : 1;
	return 0;
}

static const struct opt *find(const struct opts_cmd *cmd, const char *name, int *idx)
{
	for (int k = 0; cmd->opts[k].name; k++)
		if (!strcmp(cmd->opts[k].name, name)) {
			*idx = k;
			return &cmd->opts[k];
		}
	return NULL;
}

int opts_argv_has(const struct opts_cmd *cmd, int argc, char **argv, const char *name)
{
	const char *val;
	int k;
	const struct opt *o = find(cmd, name, &k);

	for (int i = 1; o && i < argc && strcmp(argv[i], "--"); i++) {
		int j = i;

		if (match(o, argc, argv, &j, &val))
			return 1;
	}
	return 0;
}

int opts_seen(const struct opts_cmd *cmd, const char *name)
{
	int k;

	return cmd == last_cmd && find(cmd, name, &k) ? seen[k] : 0;
}

/* the word is printed made safe (it may be anything: report reads what other hosts sent) */
static int unknown(const char *cmd, const char *a)
{
	struct gp_buf b = GP_BUF_INIT;
	int rc = cli_usage(cmd, "unknown option '%s'", gp_out_escape(&b, a) ? a : gp_buf_str(&b));

	gp_buf_free(&b);
	return rc;
}

int opts_parse(const struct opts_cmd *cmd, struct cli *c, int argc, char **argv, void *ctx)
{
	const char *val;
	int rc, k;

	last_cmd = cmd;
	memset(seen, 0, sizeof(seen));
	words_given = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if ((rc = opts_global_arg(c, argc, argv, &i))) {
			if (rc < 0)
				return EX_USAGE_;
			if (c->version)         /* the program's, not a command's */
				return unknown(cmd->name, a);
			if (c->help) {
				cmd->help(stdout);
				return 0;
			}
			continue;
		}
		for (k = 0; cmd->opts[k].name; k++)
			if (!(cmd->opts[k].flags & OPT_DOC) && match(&cmd->opts[k], argc, argv, &i, &val))
				break;
		if (cmd->opts[k].name) {
			if (k < OPTS_MAX)
				seen[k]++;
			if ((rc = set_value(cmd->name, &cmd->opts[k], val, ctx)))
				return rc;
			continue;
		}
		if ((a[0] == '-' && a[1]) || !cmd->positional)
			return unknown(cmd->name, a);
		if ((rc = cmd->positional(cmd->name, a, ctx)))
			return rc;
		opts_word_bits(cmd, a, &words_given);
	}
	rc = opts_check_rules(cmd, c, ctx, seen, words_given);
	return rc ? rc : -1;
}

/* one entry: the spelling from column 2, the description's lines from col (on the same line when the
 * spelling leaves room, with two spaces at least) */
static void help_entry(FILE *f, const struct opt *o, int col)
{
	char label[96];
	const char *h = o->help;
	int n;

	if (o->label)
		n = snprintf(label, sizeof(label), "%s", o->label);
	else if (o->alias)
		n = snprintf(label, sizeof(label), "%s, %s", o->alias, o->name);
	else
		n = snprintf(label, sizeof(label), "%s", o->name);
	if (o->arg && !o->label)
		snprintf(label + n, sizeof(label) - (size_t)n, "%s%s", o->flags & OPT_EQ ? "=" : " ", o->arg);
	n = fprintf(f, "  %s", label);
	while (*h) {
		size_t l = strcspn(h, "\n");

		fprintf(f, "%*s%.*s\n", n < col ? col - n : 2, "", (int)l, h);
		n = 0;
		h += l + (h[l] == '\n');
	}
}

void opts_help(FILE *f, const struct opts_cmd *cmd)
{
	for (const struct opt *o = cmd->opts; o->name; o++)
		if (o->help && !(o->flags & (OPT_HIDDEN | OPT_NOHELP)))
			help_entry(f, o, cmd->col);
	if (cmd->globals)
		fprintf(f, "  %s\n", cmd->globals);
}
