// SPDX-License-Identifier: MIT
/*
 * tests/fuzz/lf_replay.c - a libFuzzer harness's inputs replayed in 'make check', built
 * with the project's compiler (no clang, no fuzzing): the binary NAME-replay-test links
 * the harness tests/fuzz/lf/NAME and runs every file of tests/fuzz/regress/NAME/ (what
 * it once caught) and of tests/fuzz/corpus/NAME/ (its seeds) through
 * LLVMFuzzerTestOneInput(), whose contract checks abort on a broken rule.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/dvx_test.h"

#ifndef DVX_SRCTREE
#error "DVX_SRCTREE: the source tree, for the inputs"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char name[64];

/* every input of tests/fuzz/@sub/NAME/, once; the number run */
static int replay(const char *sub)
{
	char dir[4096], path[4352];
	struct dirent *de;
	DIR *d;
	int n = 0;

	snprintf(dir, sizeof(dir), "%s/tests/fuzz/%s/%s", DVX_SRCTREE, sub, name);
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -1;
	while ((de = readdir(d))) {
		uint8_t *buf;
		long len;
		FILE *f;

		if (de->d_name[0] == '.' || !strncmp(de->d_name, "README", 6))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		f = fopen(path, "rb");
		if (!f || fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
			fprintf(stderr, "replay: cannot read %s\n", path);
			if (f)
				fclose(f);
			closedir(d);
			return -1;
		}
		buf = malloc((size_t)len + 1);
		if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
			fprintf(stderr, "replay: cannot read %s\n", path);
			free(buf);
			fclose(f);
			closedir(d);
			return -1;
		}
		fclose(f);
		LLVMFuzzerTestOneInput(buf, (size_t)len);
		free(buf);
		n++;
	}
	closedir(d);
	return n;
}

static void test_regress(void **state)
{
	(void)state;
	assert_true(replay("regress") >= 0);
}

static void test_seeds(void **state)
{
	(void)state;
	assert_true(replay("corpus") > 0);	/* every harness has seeds */
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_regress),
		cmocka_unit_test(test_seeds),
	};
	const char *b = strrchr(argv[0], '/'), *e;

	b = b ? b + 1 : argv[0];
	e = strstr(b, "-replay-test");
	snprintf(name, sizeof(name), "%.*s", e ? (int)(e - b) : (int)strlen(b), b);
	LLVMFuzzerInitialize(&argc, &argv);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
