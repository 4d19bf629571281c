#include "lib/base/ag.h"
#include "lib/run/live.h"
#include "lib/base/bounds.h"
#include "lib/base/redact.h"
#include "lib/base/termsafe.h"
#include "lib/workspace/snapshot.h"

struct live_stream {
	struct ag_live *l;
	int id; /* 1 stdout, 2 stderr */
	struct ag_redact_stream *rs;
	bool after_cr; /* the last byte shown ended a line with '\r' */
	bool capped;
	char *esc; /* escaped line, reused */
	size_t esc_cap;
};

struct ag_live {
	const struct ag_run_observer *obs;
	uint64_t cap;
	struct live_stream s[2];
};

static void send_line(struct live_stream *ls, const char *t, size_t n, enum ag_run_line_kind k)
{
	/* at most 6 bytes ("\u2028") for each byte of text */
	if (n * 6 + 1 > ls->esc_cap) {
		ls->esc_cap = n * 6 + 1;
		ls->esc = ag_xrealloc(ls->esc, ls->esc_cap);
	}
	size_t o = 0, i = 0;
	while (i < n) {
		char e[16];
		size_t adv = 1, el = 0;
		if (t[i] != '\t')
			el = ag_termsafe_step(t + i, n - i, e, &adv);
		if (el) {
			memcpy(ls->esc + o, e, el);
			o += el;
		} else {
			memcpy(ls->esc + o, t + i, adv);
			o += adv;
		}
		i += adv;
	}
	ls->esc[o] = '\0';
	struct ag_run_event ev = {
	    .kind = AG_RUN_EV_AGENT_LINE, .stream = ls->id, .line = k, .text = ls->esc, .len = o};
	ls->l->obs->event(ls->l->obs->ctx, &ev);
}

/* A redacted piece: whole lines, and at a cut or the end a last part. */
static void on_piece(void *ctx, const char *t, size_t n, bool cut)
{
	struct live_stream *ls = ctx;
	size_t i = 0;
	if (n && ls->after_cr && t[0] == '\n')
		i = 1; /* the '\n' of a "\r\n" split between two pieces */
	ls->after_cr = false;
	size_t start = i;
	for (; i < n; i++) {
		if (t[i] != '\n' && t[i] != '\r')
			continue;
		send_line(ls, t + start, i - start, AG_LINE_WHOLE);
		if (t[i] == '\r') {
			if (i + 1 < n && t[i + 1] == '\n')
				i++;
			else if (i + 1 == n)
				ls->after_cr = true;
		}
		start = i + 1;
	}
	if (start < n || cut)
		send_line(ls, t + start, n - start, cut ? AG_LINE_CUT : AG_LINE_WHOLE);
}

struct ag_live *ag_live_new(const struct ag_redactor *r, uint64_t cap,
			    const struct ag_run_observer *obs)
{
	struct ag_live *l = ag_xcalloc(1, sizeof(*l));
	l->obs = obs;
	l->cap = cap;
	for (int i = 0; i < 2; i++) {
		l->s[i].l = l;
		l->s[i].id = i + 1;
		l->s[i].rs = ag_redact_stream_new(r, AG_LIVE_LINE_MAX, on_piece, &l->s[i]);
	}
	return l;
}

void ag_live_output(void *live, int stream, const char *p, size_t n)
{
	struct ag_live *l = live;
	if (stream != 1 && stream != 2)
		return;
	struct live_stream *ls = &l->s[stream - 1];
	if (ls->capped)
		return;
	if (p) {
		ag_redact_stream_feed(ls->rs, p, n);
		return;
	}
	/* what is shown live is what the capture keeps: past its cap, nothing */
	ls->capped = true;
	ag_redact_stream_abandon(ls->rs);
	struct ag_run_event ev = {.kind = AG_RUN_EV_AGENT_LINE,
				  .stream = stream,
				  .line = AG_LINE_CAPPED,
				  .text = "",
				  .cap = l->cap};
	l->obs->event(l->obs->ctx, &ev);
}

void ag_live_finish(struct ag_live *l)
{
	for (int i = 0; i < 2; i++)
		ag_redact_stream_finish(l->s[i].rs);
}

void ag_live_free(struct ag_live *l)
{
	if (!l)
		return;
	for (int i = 0; i < 2; i++) {
		ag_redact_stream_free(l->s[i].rs);
		free(l->s[i].esc);
	}
	free(l);
}

static void progress(void *ctx, const char *stage, const struct ag_ws_progress *p)
{
	const struct ag_run_observer *obs = ctx;
	struct ag_run_event ev = {
	    .kind = AG_RUN_EV_PROGRESS,
	    .stage = stage,
	    .reading = p->reading,
	    .done = p->done,
	    .entries = p->entries,
	    .entries_total = p->entries_total,
	    .bytes = p->bytes,
	    .bytes_total = p->bytes_total,
	};
	obs->event(obs->ctx, &ev);
}

void ag_live_progress_copy(void *ctx, const struct ag_ws_progress *p)
{
	progress(ctx, "workspace copy", p);
}

void ag_live_progress_capture(void *ctx, const struct ag_ws_progress *p)
{
	progress(ctx, "change capture", p);
}

void ag_live_progress_source(void *ctx, const struct ag_ws_progress *p)
{
	progress(ctx, "source check", p);
}
