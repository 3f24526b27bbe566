/* gpup2p __complete — the completion candidates, from the option tables (bash and zsh ask it). */
#include <dirent.h>
#include <string.h>

#include "cli.h"
#include "opts.h"

/* o's spelling among the table's (name, alias, or --name=...) */
static const struct opt *lookup(const struct opts_cmd *cmd, const char *w, size_t l)
{
	for (const struct opt *o = cmd ? cmd->opts : NULL; o && o->name; o++)
		if ((strlen(o->name) == l && !strncmp(o->name, w, l)) ||
		    (o->alias && strlen(o->alias) == l && !strncmp(o->alias, w, l)))
			return o;
	return NULL;
}

static const struct opt *lookup2(const struct opts_cmd *cmd, const char *w, size_t l)
{
	const struct opt *o = lookup(cmd, w, l);

	return o ? o : lookup(&opts_global, w, l);
}

static void cand(const char *prefix, const char *word, const char *help)
{
	printf("%s%s", prefix, word);
	if (help)
		printf("\t%.*s", (int)strcspn(help, "\n"), help);
	putchar('\n');
}

/* the values of o, whole words with prefix ("--color=" when the value is in the same word) */
static void values(const struct opt *o, const char *prefix)
{
	if (o->flags & OPT_DIR)
		puts(":dir");
	else if (o->flags & OPT_FILE)
		puts(":file");
	for (int k = 0; o->values && o->values[k]; k++)
		cand(prefix, o->values[k], NULL);
}

/* the value being completed: the last word, after "--opt=" */
static const char *value_of(const char *cur)
{
	const char *eq = cur[0] == '-' ? strchr(cur, '=') : NULL;

	return eq ? eq + 1 : cur;
}

static void options(const struct opts_cmd *cmd, int top)
{
	const struct opts_cmd *t[2] = { cmd, &opts_global };

	for (int n = 0; n < 2; n++)
		for (const struct opt *o = t[n] ? t[n]->opts : NULL; o && o->name; o++) {
			if (o->flags & (OPT_HIDDEN | OPT_DOC) || (!top && !strcmp(o->name, "--version")))
				continue;
			cand(o->name, o->flags & OPT_EQ ? "=" : "", o->help);
			if (o->alias && o->alias[1] != '-')   /* a short spelling; a long one is an old name */
				cand(o->alias, "", o->help);
		}
}

static const struct opts_cmd *find_cmd(const struct opts_cmd *const *cmds, int n, const char *name)
{
	for (int k = 0; k < n; k++)
		if (!strcmp(cmds[k]->name, name))
			return cmds[k];
	return NULL;
}

int opts_complete(const struct opts_cmd *const *cmds, int n, int argc, char **argv)
{
	const struct opts_cmd *cmd = NULL;
	const char *cur = argc ? argv[argc - 1] : "", *eq;
	const struct opt *o;
	int i, help = 0;

	for (i = 0; i < argc - 1; i++) {
		const char *w = argv[i];

		o = lookup2(cmd, w, strlen(w));
		if (o && o->arg) {
			if (i + 1 == argc - 1) { /* the value of this option */
				values(o, "");
				if (o->suggest)
					o->suggest(cur);
				return 0;
			}
			i++;
			continue;
		}
		if (w[0] == '-')
			continue;
		if (help)
			return 0;
		if (!cmd && !strcmp(w, "help")) {
			help = 1;
		} else if (!cmd) {
			if (!(cmd = find_cmd(cmds, n, w)))
				return 0;
		} else if (!strcmp(cmd->name, "bench") && !strcmp(w, "rdma")) {
			cmd = find_cmd(cmds, n, "bench rdma");
		}
	}
	if (cur[0] == '-' && (eq = strchr(cur, '='))) {
		char prefix[64];

		if ((o = lookup2(cmd, cur, (size_t)(eq - cur))) && o->arg) {
			snprintf(prefix, sizeof(prefix), "%.*s", (int)(eq - cur + 1), cur);
			values(o, prefix);
			if (o->suggest)
				o->suggest(value_of(cur));
		}
		return 0;
	}
	if (cur[0] == '-') {
		options(help ? NULL : cmd, !cmd && !help);
		return 0;
	}
	if (help || !cmd) {
		for (int k = 0; k < n; k++)
			if (!strchr(cmds[k]->name, ' '))
				cand("", cmds[k]->name, NULL);
		if (!help)
			cand("", "help", NULL);
		return 0;
	}
	if (cmd->word_flags & OPT_FILE)
		printf(":file%s%s\n", cmd->word_ext ? ":" : "", cmd->word_ext ? cmd->word_ext : "");
	for (int k = 0; cmd->words && cmd->words[k]; k++)
		cand("", cmd->words[k], NULL);
	return 0;
}

void opts_suggest_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			puts(de->d_name);
	closedir(d);
}
