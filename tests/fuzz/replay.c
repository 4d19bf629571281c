/*
 * Corpus replayer for fuzz harnesses built without libFuzzer: runs every
 * file of the given directories (or files) through LLVMFuzzerTestOneInput
 * and prints TAP, one test point per input. A crash or sanitizer report
 * fails the run.
 */
#include "lib/base/ag.h"

#include <dirent.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int count;

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		printf("not ok %d - cannot open %s\n", ++count, path);
		return 1;
	}
	size_t cap = 1 << 16, len = 0;
	uint8_t *buf = ag_xmalloc(cap);
	size_t r;
	while ((r = fread(buf + len, 1, cap - len, f)) > 0) {
		len += r;
		if (len == cap) {
			if (cap >= (4u << 20))
				break;
			cap *= 2;
			buf = ag_xrealloc(buf, cap);
		}
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	printf("ok %d - %s\n", ++count, path);
	return 0;
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	int fails = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) < 0)
			continue;
		if (!S_ISDIR(st.st_mode)) {
			fails += run_file(argv[i]);
			continue;
		}
		DIR *d = opendir(argv[i]);
		if (!d)
			continue;
		char **names = NULL;
		size_t n = 0;
		struct dirent *e;
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			names = ag_xrealloc(names, (n + 1) * sizeof(*names));
			names[n++] = ag_xasprintf("%s/%s", argv[i], e->d_name);
		}
		closedir(d);
		qsort(names, n, sizeof(*names), cmp);
		for (size_t k = 0; k < n; k++) {
			fails += run_file(names[k]);
			free(names[k]);
		}
		free(names);
	}
	printf("1..%d\n", count);
	return fails ? 1 : 0;
}
