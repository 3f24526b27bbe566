/* gpup2p command line — the rules between options, values and words (struct opt_rule): whether each
 * holds after parsing, and the one wording of every conflict message. */
#include <stdint.h>
#include <string.h>

#include "cli.h"
#include "gpup2p/buf.h"
#include "opts.h"

/* --- rules ------------------------------------------------------------------------------------- */

struct rule_ctx {
	const struct opts_cmd *cmd;
	const struct cli *c;
	const void *ctx;
	const int *seen;                /* how often each option of cmd was given */
	unsigned long words;            /* the positional words in force, a bit per cmd->words entry */
};

static int word_index(const struct opts_cmd *cmd, const char *w, size_t l)
{
	for (int k = 0; cmd->words && cmd->words[k]; k++)
		if (strlen(cmd->words[k]) == l && !strncmp(cmd->words[k], w, l))
			return k < (int)(8 * sizeof(unsigned long)) ? k : -1;
	return -1;
}

void opts_word_bits(const struct opts_cmd *cmd, const char *list, unsigned long *bits)
{
	while (*list) {
		size_t l = strcspn(list, " ");
		int k = word_index(cmd, list, l);

		if (k >= 0)
			*bits |= 1UL << k;
		list += l + (list[l] == ' ');
	}
}

/* the given words, else the default; then what each brings (one level, as "all: h2d d2h ...") */
static unsigned long words_in_force(const struct opts_cmd *cmd, unsigned long w)
{

	if (!w && cmd->word_default)
		opts_word_bits(cmd, cmd->word_default, &w);
	for (int k = 0; cmd->word_implies && cmd->word_implies[k]; k++) {
		const char *e = cmd->word_implies[k];
		size_t l = strcspn(e, ":");
		int i = word_index(cmd, e, l);

		if (i >= 0 && (w & (1UL << i)) && e[l])
			opts_word_bits(cmd, e + l + 1 + (e[l + 1] == ' '), &w);
	}
	return w;
}

/* the option spelled name (len l) in the command's table (not its OPT_DOC entries) or the global one */
static const struct opt *lookup(const struct opts_cmd *cmd, const char *name, size_t l, int *idx, int *global)
{
	for (int k = 0; cmd->opts[k].name; k++)
		if (!(cmd->opts[k].flags & OPT_DOC) && strlen(cmd->opts[k].name) == l &&
		    !strncmp(cmd->opts[k].name, name, l)) {
			*idx = k;
			*global = 0;
			return &cmd->opts[k];
		}
	for (int k = 0; opts_global.opts[k].name; k++)
		if (strlen(opts_global.opts[k].name) == l && !strncmp(opts_global.opts[k].name, name, l)) {
			*idx = k;
			*global = 1;
			return &opts_global.opts[k];
		}
	return NULL;
}

/* one term (t, l characters long): whether it holds */
static int holds(const struct rule_ctx *r, const char *t, size_t l)
{
	const char *bar = memchr(t, '|', l), *eq;
	const struct opt *o;
	int k, g;

	if (bar)
		return holds(r, t, (size_t)(bar - t)) || holds(r, bar + 1, l - (size_t)(bar - t) - 1);
	if (*t == '!')
		return !holds(r, t + 1, l - 1);
	if (*t != '-') {
		k = word_index(r->cmd, t, l);
		return k >= 0 && (r->words & (1UL << k));
	}
	eq = memchr(t, '=', l);
	if (!(o = lookup(r->cmd, t, eq ? (size_t)(eq - t) : l, &k, &g)))
		return 0;
	const char *base = g ? (const char *)r->c : r->ctx;
	const int *field = o->off >= 0 ? (const int *)(base + o->off) : NULL;

	if (eq) {                       /* an enum's value: its field, given or the default */
		for (int v = 0; field && o->type == OPT_ENUM && o->values[v]; v++)
			if (strlen(o->values[v]) == (size_t)(t + l - eq - 1) && !strncmp(o->values[v], eq + 1, strlen(o->values[v])))
				return *field == (o->ivals ? o->ivals[v] : v);
		return 0;
	}
	if (!g)
		return r->seen[k] > 0;
	if (field && o->type == OPT_FLAG)
		return *field == o->val;
	return field && o->type == OPT_STR && *(const char *const *)(const void *)field;
}

/* the first term of the space-separated list that holds, its length in *l; NULL none */
static const char *first_holding(const struct rule_ctx *r, const char *list, size_t *l)
{
	while (list && *list) {
		*l = strcspn(list, " ");
		if (holds(r, list, *l))
			return list;
		list += *l + (list[*l] == ' ');
	}
	return NULL;
}

/* a term as a user reads it: "--via map" for --via=map, "without --pinned", "h2d or d2h" */
static void term_text(struct gp_buf *b, const char *t, size_t l)
{
	const char *bar = memchr(t, '|', l), *eq;

	if (bar) {
		term_text(b, t, (size_t)(bar - t));
		gp_buf_addf(b, "%s", " or ");
		term_text(b, bar + 1, l - (size_t)(bar - t) - 1);
		return;
	}
	if (*t == '!') {
		gp_buf_addf(b, "%s", "without ");
		t++, l--;
	}
	eq = memchr(t, '=', l);
	if (eq)
		gp_buf_addf(b, "%.*s %.*s", (int)(eq - t), t, (int)(t + l - eq - 1), eq + 1);
	else
		gp_buf_addf(b, "%.*s", (int)l, t);
}

/* the list's terms, "A, B or C" (skip: leave out the negated ones) */
static void list_text(struct gp_buf *b, const char *list, const char *join, int skip)
{
	int n = 0, total = 0;

	for (const char *p = list; *p;) {
		size_t l = strcspn(p, " ");

		total += !(skip && *p == '!');
		p += l + (p[l] == ' ');
	}
	for (const char *p = list; *p;) {
		size_t l = strcspn(p, " ");

		if (!(skip && *p == '!')) {
			if (n++)
				gp_buf_addf(b, "%s", n == total ? join : ", ");
			term_text(b, p, l);
		}
		p += l + (p[l] == ' ');
	}
}

/* whether every term of the list holds */
static int all_hold(const struct rule_ctx *r, const char *list)
{
	while (list && *list) {
		size_t l = strcspn(list, " ");

		if (!holds(r, list, l))
			return 0;
		list += l + (list[l] == ' ');
	}
	return 1;
}

/* an option's value as a number (given: only when it was given, else the default counts too) */
static int number(const struct rule_ctx *r, const char *name, int given, unsigned long long *v)
{
	int k, g;
	const struct opt *o = lookup(r->cmd, name, strlen(name), &k, &g);

	if (!o || g || (given && !r->seen[k]) || o->off < 0)
		return -1;
	const char *f = (const char *)r->ctx + o->off;

	if (o->type == OPT_SIZE)
		*v = *(const uint64_t *)(const void *)f;
	else
		*v = (unsigned long long)*(const int *)(const void *)f;
	return 0;
}

/* one rule broken: its message into b; 0 kept */
static int broken(const struct rule_ctx *r, const struct opt_rule *u, struct gp_buf *b)
{
	const char *a, *o;
	size_t la, lo;
	unsigned long long x, y;

	if (!all_hold(r, u->when))
		return 0;
	switch (u->kind) {
	case OPT_EXCLUDES:
		for (a = u->a; (a = first_holding(r, a, &la)); a += la + (a[la] == ' '))
			if ((o = first_holding(r, u->b, &lo))) {
				term_text(b, a, la);
				gp_buf_addf(b, "%s", " and ");
				term_text(b, o, lo);
				gp_buf_addf(b, "%s", " exclude each other");
				return 1;
			}
		return 0;
	case OPT_NEEDS:
		if (!(a = first_holding(r, u->a, &la)) || first_holding(r, u->b, &lo))
			return 0;
		term_text(b, a, la);
		gp_buf_addf(b, "%s", " goes with ");
		list_text(b, u->b, " or ", 0);
		return 1;
	case OPT_ONE_OF:
		if (first_holding(r, u->a, &la))
			return 0;
		gp_buf_addf(b, "%s", "give ");
		list_text(b, u->a, " or ", 0);
		return 1;
	case OPT_REFUSES:
		if (!(a = first_holding(r, u->a, &la)))
			return 0;
		gp_buf_addf(b, "%s", "no ");
		term_text(b, a, la);
		return 1;
	case OPT_NOT_ABOVE:
		if (number(r, u->a, 1, &x) || number(r, u->b, 1, &y) || x <= y)
			return 0;
		gp_buf_addf(b, "%s must not be above %s", u->a, u->b);
		return 1;
	case OPT_NOT_EQUAL:
		if (number(r, u->a, 0, &x) || number(r, u->b, 0, &y) || x != y)
			return 0;
		gp_buf_addf(b, "%s must not equal %s", u->a, u->b);
		return 1;
	}
	return 0;
}

int opts_check_rules(const struct opts_cmd *cmd, const struct cli *c, const void *ctx, const int *seen,
		     unsigned long words)
{
	struct rule_ctx r = { cmd, c, ctx, seen, words_in_force(cmd, words) };
	struct gp_buf b = GP_BUF_INIT;
	int rc = 0;

	for (const struct opt_rule *u = cmd->rules; u && u->kind && !rc; u++) {
		if (!broken(&r, u, &b))
			continue;
		if (u->when) {
			struct gp_buf w = GP_BUF_INIT;

			list_text(&w, u->when, " and ", 1);
			if (w.len)
				gp_buf_addf(&b, " with %s", gp_buf_str(&w));
			gp_buf_free(&w);
		}
		if (u->why)
			gp_buf_addf(&b, ": %s", u->why);
		rc = cli_usage(cmd->name, "%s", gp_buf_str(&b));
	}
	gp_buf_free(&b);
	return rc;
}
