/*
 * size.c: Docker size strings (size.h).
 */
#include "lib/base/ag.h"
#include "lib/base/size.h"
#include "lib/base/bounds.h"

int ag_size_parse(const char *s, enum ag_size_syntax syn, int64_t *bytes)
{
	if (!s || s[0] < '0' || s[0] > '9')
		return -1;
	if (syn == AG_SIZE_CONFIG && (s[0] == '0' || strlen(s) > AG_SIZE_STRING_MAX))
		return -1;
	int64_t v = 0;
	bool overflow = false;
	const char *p = s;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (INT64_MAX - 9) / 10)
			overflow = true;
		else
			v = v * 10 + (*p - '0');
	}
	int64_t mul = 1;
	switch (*p) {
	case 'k':
	case 'K':
		mul = 1024, p++;
		break;
	case 'm':
	case 'M':
		mul = 1024 * 1024, p++;
		break;
	case 'g':
	case 'G':
		mul = 1024LL * 1024 * 1024, p++;
		break;
	default:
		break;
	}
	if (syn == AG_SIZE_DOCKER && (*p == 'b' || *p == 'B'))
		p++;
	if (*p != '\0')
		return -1;
	if (overflow || v > INT64_MAX / mul)
		return -2;
	*bytes = v * mul;
	return 0;
}
