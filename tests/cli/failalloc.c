/* LD_PRELOAD shim for the CLI tests: calloc(N, S) fails (ENOMEM) when GP_FAIL_CALLOC is "N,S", every
 * other allocation goes through glibc. Lets a test reach an out-of-memory path on purpose. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

void *__libc_calloc(size_t n, size_t size);

void *calloc(size_t n, size_t size)
{
	static int parsed;
	static size_t fail_n, fail_size;

	if (!parsed) {
		const char *s = getenv("GP_FAIL_CALLOC");

		parsed = 1;
		if (!s || sscanf(s, "%zu,%zu", &fail_n, &fail_size) != 2)
			fail_n = fail_size = 0;
	}
	if (fail_n && n == fail_n && size == fail_size) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_calloc(n, size);
}
