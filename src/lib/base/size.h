/*
 * size.h: the one parser of Docker size strings ("512m", "64k", "1g").
 */
#ifndef AG_SIZE_H
#define AG_SIZE_H

#include "lib/base/ag.h"

enum ag_size_syntax {
	/* What a config holds and the renderer emits: ^[1-9][0-9]*[kKmMgG]?$,
	 * at most AG_SIZE_STRING_MAX characters. */
	AG_SIZE_CONFIG = 0,
	/* What Docker reports back: [0-9]+, then an optional k/m/g (any case)
	 * and an optional b/B ("65536", "16m", "1gb", "100b"). */
	AG_SIZE_DOCKER,
};

/* k = 1024. 0 with *bytes set; -1 not this syntax; -2 larger than INT64_MAX. */
int ag_size_parse(const char *s, enum ag_size_syntax syn, int64_t *bytes);

#endif
