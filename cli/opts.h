/* gpup2p command line — one option table per command: the parser, --help's option block, the
 * candidates of `gpup2p __complete` and the conflict messages all come from it (git's parse-options,
 * systemd's options.h; exclusions and requirements as data, as util-linux's exclusive groups). */
#ifndef GPUP2P_CLI_OPTS_H
#define GPUP2P_CLI_OPTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct cli;

enum opt_type {
	OPT_FLAG,   /* no value: stores val in an int */
	OPT_BITS,   /* no value: ors val into an int */
	OPT_INC,    /* no value: adds val to an int (-v, -vv) */
	OPT_STR,    /* a non-empty string: stores the pointer (const char *) */
	OPT_COUNT,  /* a whole number from 1 to hi: int */
	OPT_INDEX,  /* a GPU number, 0 and up: int */
	OPT_SIZE,   /* a size like 4096, 64K, 1G: uint64_t */
	OPT_ENUM,   /* one of values[]: stores its index in an int (or ivals[index]) */
	OPT_CALL,   /* call(): the command's own parser of the value (or of the flag when arg is NULL) */
};

enum {
	OPT_REPEAT = 1,    /* may be given more than once and adds up (help and zsh say so) */
	OPT_HIDDEN = 2,    /* parsed, never shown in help nor completed */
	OPT_FILE = 4,      /* the value is a file (completion) */
	OPT_DIR = 8,       /* the value is a directory (completion) */
	OPT_EQ = 16,       /* help writes --name=ARG, completion offers --name= (--name ARG is taken too) */
	OPT_NOHELP = 32,   /* parsed and completed, not in the help block (said elsewhere in the help) */
	OPT_MAIN = 64,     /* in help and completion; sets a field main() acts on (-h, --version) */
	OPT_DOC = 128,     /* a global option this command's help describes in its own words */
};

struct opt;
/* An OPT_CALL parser: val is the value (NULL for a flag), field the option's field in the context (NULL
 * when off < 0). Returns 0, or an exit code after printing the message. */
typedef int (*opt_call_fn)(const char *cmd, const struct opt *o, const char *val, void *field, void *ctx);

struct opt {
	const char *name;            /* "--gpu"; NULL ends a table */
	const char *alias;           /* another spelling ("-v"), or NULL */
	const char *arg;             /* the value's name in help ("N"); NULL: takes no value */
	enum opt_type type;
	long off;                    /* offsetof the field in the command's context; -1: none */
	int val;                     /* OPT_FLAG/OPT_INC: the value stored or added */
	int hi;                      /* OPT_COUNT: the largest count */
	const char *const *values;   /* OPT_ENUM: the words accepted; else words completion offers */
	const int *ivals;            /* OPT_ENUM: the value each word stores, NULL: its index */
	opt_call_fn call;            /* OPT_CALL */
	const char *help;            /* help lines, '\n' between them */
	unsigned flags;              /* OPT_REPEAT ... */
	const char *needs;           /* OPT_STR: what an empty value lacks ("a file name") */
	const char *label;           /* help: the spelling shown, when not name and arg ("--a, --b") */
	void (*suggest)(const char *cur);  /* completion: print the candidates for the value cur */
};

/* A rule between options, checked after parsing, worded by one checker (git's parse-options and
 * util-linux's exclusive groups, with values and words): the message names the options as written here.
 * A term is "--opt" (given; a flag: its value is the one it sets), "--opt=VALUE" (an enum option's value,
 * the default included; printed "--opt VALUE"), a positional WORD of cmd->words (given, or implied through
 * word_default and word_implies), "A|B" (either) or "!A" (not: printed "without A"). */
enum opt_rule_kind {
	OPT_EXCLUDES = 1,  /* any term of a, and any of b: "A and B exclude each other[ with WHEN]" */
	OPT_NEEDS,         /* any term of a, and none of b: "A goes with B1, B2 or B3" */
	OPT_ONE_OF,        /* none of a: "give A1, A2 or A3" */
	OPT_REFUSES,       /* any term of a: "no A" (a global option the command has no use for) */
	OPT_NOT_ABOVE,     /* options a and b both given, a's value above b's: "A must not be above B" */
	OPT_NOT_EQUAL,     /* options a and b hold the same value (given or the default): "A must not equal B" */
};

struct opt_rule {
	enum opt_rule_kind kind;
	const char *a;               /* terms separated by spaces */
	const char *b;               /* terms separated by spaces */
	const char *when;            /* NULL, or terms that must all hold for the rule to apply (printed
	                                after "with", the negated ones left out) */
	const char *why;             /* NULL, or the reason and what to do, after ": " */
};

struct opts_cmd {
	const char *name;                   /* "topo", "bench rdma" (messages) */
	const struct opt *opts;             /* ends with a { NULL } entry */
	const struct opt_rule *rules;       /* ends with a { 0 } entry, or NULL */
	int col;                            /* help: the column the descriptions start at */
	const char *globals;                /* help: the line about the global options, or NULL */
	/* a word that is no option: 0 or an exit code (printed); NULL: every such word is refused */
	int (*positional)(const char *cmd, const char *arg, void *ctx);
	const char *const *words;           /* completion and rules: the positional words */
	const char *word_default;           /* rules: the word in force when none is given, or NULL */
	const char *const *word_implies;    /* rules: "WORD: W1 W2" (WORD brings W1, W2), NULL-ended */
	unsigned word_flags;                /* completion: OPT_FILE or OPT_DIR for positional words */
	const char *word_ext;               /* completion: with OPT_FILE, the suffix of the files */
	void (*help)(FILE *f);              /* the whole --help */
};

/* The global options, accepted before COMMAND and after it. */
extern const struct opts_cmd opts_global;

/* Parse argv[1..argc-1] of cmd into ctx (the global options into c, -h/--help prints cmd->help).
 * Returns -1 to go on, or the exit code to leave with (0 after --help, 64 after a usage message). */
int opts_parse(const struct opts_cmd *cmd, struct cli *c, int argc, char **argv, void *ctx);

/* Parse the global option at argv[*i] into c (-h/--help and --version set c->help, c->version). 1 consumed (advancing *i past a separate value), 0 not a
 * global option, -1 usage error (printed). */
int opts_global_arg(struct cli *c, int argc, char **argv, int *i);

/* Whether argv[1..] (up to a "--") spells cmd's option name, before or without parsing: a command that
 * must know it even when parsing fails (doctor --nagios answers a usage error in its own format). */
int opts_argv_has(const struct opts_cmd *cmd, int argc, char **argv, const char *name);

/* Whether the option named name was given in the last opts_parse of cmd (1 or the times given). */
int opts_seen(const struct opts_cmd *cmd, const char *name);

/* Print cmd's option block: one entry per option, the description from column cmd->col, then
 * cmd->globals. */
void opts_help(FILE *f, const struct opts_cmd *cmd);

/* `gpup2p __complete WORD...`: print the candidates for the last WORD, one a line ("word\tdescription"),
 * or a directive line ":file", ":file:EXT", ":dir". cmds: the commands' tables, n of them. */
int opts_complete(const struct opts_cmd *const *cmds, int n, int argc, char **argv);

/* The words of the space-separated list that are positional words of cmd (cmd->words), as bits into
 * *bits (bit k: cmd->words[k]). */
void opts_word_bits(const struct opts_cmd *cmd, const char *list, unsigned long *bits);

/* Check cmd->rules after parsing: ctx the command's context, c the global options, seen how often each
 * option of cmd->opts was given, words the positional words given (opts_word_bits). 0, or 64 after the
 * message of the first rule broken. */
int opts_check_rules(const struct opts_cmd *cmd, const struct cli *c, const void *ctx, const int *seen,
		     unsigned long words);

/* A size option's value ("64K") into *v; 0, or 64 after the usage message. */
int opts_size(const char *cmd, const char *name, const char *val, uint64_t *v);

/* A GPU number option's value (0, 1, ...) into *v; 0, or 64 after the usage message. */
int opts_index(const char *cmd, const char *name, const char *val, int *v);

/* Completion: print each entry of the directory dir (PCI functions, RDMA devices), one a line. */
void opts_suggest_dir(const char *dir);

#endif
