#include "lib/base/ag.h"
#include "lib/base/termsafe.h"
#include "lib/base/buf.h"
#include "lib/base/error.h"

size_t ag_utf8_decode(const unsigned char *p, size_t n, uint32_t *cp)
{
	unsigned char c = p[0];
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	size_t need;
	unsigned char lo = 0x80, hi = 0xBF;
	if (c >= 0xC2 && c <= 0xDF)
		need = 1;
	else if (c == 0xE0)
		need = 2, lo = 0xA0;
	else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF)
		need = 2;
	else if (c == 0xED)
		need = 2, hi = 0x9F; /* no UTF-16 surrogates */
	else if (c == 0xF0)
		need = 3, lo = 0x90; /* no overlong forms */
	else if (c >= 0xF1 && c <= 0xF3)
		need = 3;
	else if (c == 0xF4)
		need = 3, hi = 0x8F; /* nothing above U+10FFFF */
	else
		return 0;
	if (n < need + 1 || p[1] < lo || p[1] > hi)
		return 0;
	uint32_t v = c & (need == 1 ? 0x1Fu : need == 2 ? 0x0Fu : 0x07u);
	v = (v << 6) | (p[1] & 0x3Fu);
	for (size_t k = 2; k <= need; k++) {
		if ((p[k] & 0xC0) != 0x80)
			return 0;
		v = (v << 6) | (p[k] & 0x3Fu);
	}
	*cp = v;
	return need + 1;
}

static bool cp_unsafe(uint32_t cp)
{
	return (cp >= 0x80 && cp <= 0x9F) || cp == 0x061C || cp == 0x200E || cp == 0x200F ||
	       (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 ||
	       cp == 0x2029;
}

size_t ag_termsafe_step(const char *s, size_t n, char esc[16], size_t *adv)
{
	const unsigned char *u = (const unsigned char *)s;
	if (u[0] >= 0x20 && u[0] < 0x7f) {
		*adv = 1;
		return 0;
	}
	uint32_t cp = 0;
	size_t k = u[0] < 0x80 ? 1 : ag_utf8_decode(u, n, &cp);
	if (u[0] < 0x80 || k == 0) {
		/* C0, DEL, or a byte that is not valid UTF-8 */
		*adv = 1;
		return (size_t)snprintf(esc, 16, "\\x%02x", u[0]);
	}
	*adv = k;
	if (cp_unsafe(cp))
		return (size_t)snprintf(esc, 16, "\\u%04x", (unsigned)cp);
	return 0;
}

int ag_termsafe_add(struct ag_buf *b, const char *s, size_t n, struct ag_error **err)
{
	size_t i = 0, plain = 0;
	while (i < n) {
		char esc[16];
		size_t adv = 0, el = ag_termsafe_step(s + i, n - i, esc, &adv);
		if (el) {
			if (ag_buf_add(b, s + plain, i - plain, err) < 0 ||
			    ag_buf_add(b, esc, el, err) < 0)
				return -1;
			plain = i + adv;
		}
		i += adv;
	}
	return ag_buf_add(b, s + plain, n - plain, err);
}

char *ag_termsafe(const char *s)
{
	struct ag_buf b = AG_BUF_INIT(SIZE_MAX / 2, NULL);
	struct ag_error *e = NULL;
	if (ag_termsafe_add(&b, s, strlen(s), &e) < 0)
		ag_error_free(e); /* unreachable: the bound is the address space */
	return ag_buf_detach(&b, NULL);
}

void ag_termsafe_fput(FILE *f, const char *s)
{
	char *t = ag_termsafe(s);
	fputs(t, f);
	free(t);
}
