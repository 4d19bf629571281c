/*
 * termsafe.h: the one terminal-escaping function for every human-facing
 * output (the run summary, `report --format text|md|html`, `report --list`,
 * `cleanup`, `evidence verify`, error messages).
 *
 * Untrusted text (file names, reasons, messages, paths, agent output) could
 * otherwise move the cursor, rewrite earlier lines, open an OSC hyperlink or
 * make a name read differently from what it is. Escaped, visibly:
 *   - C0 controls U+0000-U+001F and DEL           -> \xNN
 *   - C1 controls encoded as UTF-8 (U+0080-U+009F) -> \u0080 ... \u009f
 *   - bidirectional controls U+061C, U+200E, U+200F, U+202A-U+202E,
 *     U+2066-U+2069, and the separators U+2028, U+2029 -> \uNNNN
 *   - every byte that is not part of valid UTF-8 (including raw 0x80-0x9f,
 *     overlong forms, surrogates, > U+10FFFF)   -> \xNN
 * Everything else (printable ASCII, valid UTF-8) passes unchanged. The
 * escape introducer '\' itself is not doubled: the output is for reading.
 */
#ifndef AG_TERMSAFE_H
#define AG_TERMSAFE_H

#include "lib/base/ag.h"

struct ag_buf;
struct ag_error;

/*
 * Decodes one strict UTF-8 sequence at p (n bytes available). Returns its
 * length (1-4) and the code point, or 0 when p does not start a valid
 * sequence.
 */
size_t ag_utf8_decode(const unsigned char *p, size_t n, uint32_t *cp);

/*
 * One step of the escaper. At s (n > 0 bytes): when the next character is
 * safe, returns 0 and sets *adv to its length; otherwise writes the NUL
 * terminated escape into esc and returns its length, *adv being the bytes
 * it stands for. Callers that escape more (HTML, Markdown) apply their own
 * rules to the safe characters.
 */
size_t ag_termsafe_step(const char *s, size_t n, char esc[16], size_t *adv);

/* Appends the escaped form of s[0..n) to b (fails only at b's bound). */
int ag_termsafe_add(struct ag_buf *b, const char *s, size_t n, struct ag_error **err);
/* A new string: the escaped form of s (NUL-terminated). */
char *ag_termsafe(const char *s);
/* Writes the escaped form of s to f (the CLI's printing path). */
void ag_termsafe_fput(FILE *f, const char *s);

#endif
