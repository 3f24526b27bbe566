/* gpup2p — the driver of a fuzz harness without libFuzzer (gcc, `make check-asan`): each argument, a
 * file or a folder of files, is one input given to LLVMFuzzerTestOneInput. A finding aborts (or the
 * sanitizer reports it), an input that runs over FZ_TIMEOUT seconds (default 60) is killed by SIGALRM;
 * "ok N inputs" when all passed. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

static FILE *log_f;
static unsigned limit = 60;

static int one(const char *path)
{
	FILE *f = fopen(path, "rb");
	unsigned char *b = NULL;
	size_t n = 0, cap = 0, k;

	if (!f) {
		fprintf(log_f, "replay: cannot read %s\n", path);
		return 1;
	}
	do {
		if (n == cap && !(b = realloc(b, cap = cap ? cap * 2 : 65536)))
			abort();
		k = fread(b + n, 1, cap - n, f);
		n += k;
	} while (k);
	fclose(f);
	fprintf(log_f, "replay: %s (%zu bytes)\n", path, n);
	fflush(log_f);
	alarm(limit);
	LLVMFuzzerTestOneInput(b, n);
	alarm(0);
	free(b);
	return 0;
}

int main(int argc, char **argv)
{
	int bad = 0, count = 0;

	log_f = fdopen(dup(2), "w");
	if (!log_f)
		return 1;
	if (getenv("FZ_TIMEOUT"))
		limit = (unsigned)atoi(getenv("FZ_TIMEOUT"));
	LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		struct stat st;
		struct dirent **de;
		int n;

		if (stat(argv[i], &st) || !S_ISDIR(st.st_mode)) {
			bad += one(argv[i]);
			count++;
			continue;
		}
		n = scandir(argv[i], &de, NULL, alphasort);
		if (n < 0)
			continue;
		for (int j = 0; j < n; j++) {
			char p[4200];

			if (de[j]->d_name[0] != '.') {
				snprintf(p, sizeof(p), "%s/%s", argv[i], de[j]->d_name);
				bad += one(p);
				count++;
			}
			free(de[j]);
		}
		free(de);
	}
	fprintf(log_f, "replay: %s %d inputs\n", bad ? "FAILED" : "ok", count);
	return bad ? 1 : 0;
}
