/* gpup2p — in-process fuzz harnesses (tests/fuzz/harness, tests/fuzz/README.md): what the targets share.
 * Each target defines LLVMFuzzerTestOneInput (and LLVMFuzzerInitialize); built with clang's libFuzzer it
 * is a fuzzer, linked with replay.c (gcc or clang, no libFuzzer) it replays corpus files. A finding is an
 * abort (fz_fail), or a sanitizer report. */
#ifndef GPUP2P_FUZZ_HARNESS_H
#define GPUP2P_FUZZ_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "cli.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The work folder of this process (tmpfs when it has room): made once, removed at exit. */
const char *fz_work(void);

/* Set up once: the work folder, the environment the commands see (NO_COLOR, pci.ids of tests/fixtures,
 * no GPUP2P_ROOT), stdout and stderr of the commands redirected into files of the work folder (the fuzzer's
 * and the sanitizers' own reports still go to fd 2). */
void fz_setup(void);

/* Run a command of cli/ in-process as main() would (argv[0] is the command name), its stdout and stderr
 * captured: the exit code. Exit codes the man page does not list are a finding. FZ_SHOW=1 in the
 * environment prints each command's exit code and output. */
int fz_cli(int (*cmd)(struct cli *, int, char **), const char *root, int fmt, int verbose, int argc, char **argv);

/* What the last fz_cli printed, NUL-terminated (valid until the next fz_cli). */
const char *fz_out(size_t *len);
const char *fz_err(size_t *len);

/* Why bytes s[0..n) are unsafe on a terminal (a control byte other than tab and newline, bytes that are no
 * UTF-8, a C1 control, a bidi control), or NULL: report_fuzz.py's "inject" rule. */
const char *fz_unsafe(const char *s, size_t n);

/* NULL when s[0..n) is one strict JSON document (UTF-8, libcore's reader), else why not. */
const char *fz_bad_json(const char *s, size_t n);

/* A finding: print it with the tail of the captured output, and abort. */
void fz_fail(const char *what, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));

/* Fixture trees (fx.c): a tree is copied once into the work folder (pristine) and once more to mutate;
 * after each input the mutated paths are put back from the pristine copy. */
struct fz_tree {
	char name[64];
	char pristine[4096], root[4096];
	char **path;                   /* every entry beneath the root (files, links, folders), relative */
	int npath;
	int nextra;                    /* path[0..nextra): the target's extra paths */
	char **touched;                /* paths changed by the current input */
	int ntouched, tcap;
};

/* Copy build/fixtures/NAME (or $GPUP2P_FUZZ_FIXTURES/NAME) into the work folder; exits when missing.
 * extra: the paths the readers open (NULL-terminated; the fixture may lack them), first in the path list. */
void fz_tree_open(struct fz_tree *t, const char *name, const char *const *extra);

/* fz_tree_open of each of names[0..n) into t[0..n). */
void fz_trees_open(struct fz_tree *t, const char *const *names, int n, const char *const *extra);

/* Apply the mutation records of data[0..n) to the tree (format in fx.c): returns the bytes used. */
size_t fz_tree_mutate(struct fz_tree *t, const uint8_t *data, size_t n);

/* Undo what fz_tree_mutate did; fails (a finding) when the decoy outside the root was changed. */
void fz_tree_restore(struct fz_tree *t);

/* Remove p, a folder with everything beneath it (links not followed). */
void fz_rm_rf(const char *p);

/* The decoy file outside every root (symlinks may point at it): nothing may write it. */
const char *fz_decoy(void);

/* 1 when b[0..n) begins with the decoy's (random) bytes. */
int fz_is_decoy(const void *b, size_t n);

#endif
