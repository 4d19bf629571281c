/*
 * live_out.c: how `contained-run` shows a run while it runs (docs/contained-run.md,
 * "Live output"): the agent's output line by line, each line prefixed so
 * nothing the agent prints can pass for AgentGuard's own words, and the
 * progress of the long workspace stages, on a terminal only.
 *
 * The text of every agent line was redacted and escaped by the library
 * (lib/run/live.h); this file only frames and prints it. No colour is used
 * (so NO_COLOR has nothing to turn off); the progress line is redrawn in
 * place with '\r' and padded with spaces, no terminal escape sequence.
 */
#include "lib/base/ag.h"
#include "cli/live_out.h"
#include "lib/base/bounds.h"
#include "lib/run/live.h"

#include <inttypes.h>
#include <time.h>

/* A stage shorter than this shows no progress at all (git delays its own too). */
#define PROGRESS_DELAY_MS 100

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* "12.3 MiB" and the like (binary units, one decimal). */
static void human(char *out, size_t n, uint64_t b)
{
	static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	double v = (double)b;
	size_t u = 0;
	while (v >= 1024 && u + 1 < AG_ARRAY_SIZE(unit)) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(out, n, "%" PRIu64 " B", b);
	else
		snprintf(out, n, "%.1f %s", v, unit[u]);
}

static void progress(struct ag_cli_live *c, const struct ag_run_event *ev)
{
	uint64_t now = mono_ms();
	if (!c->stage || strcmp(c->stage, ev->stage) != 0) {
		c->stage = ev->stage;
		c->stage_ms = now;
		c->drawn = false;
		c->width = 0;
	}
	if (ev->done ? !c->drawn
		     : now - c->stage_ms < PROGRESS_DELAY_MS ||
			   (c->drawn && now - c->draw_ms < AG_PROGRESS_INTERVAL_MS))
		return;
	char line[256], b1[32], b2[32];
	human(b1, sizeof(b1), ev->bytes);
	human(b2, sizeof(b2), ev->bytes_total);
	int n;
	if (ev->done)
		n = snprintf(line, sizeof(line), "agentguard: %s: %" PRIu64 " files, %s, done.",
			     ev->stage, ev->entries, b1);
	else if (ev->reading)
		n = snprintf(line, sizeof(line),
			     "agentguard: %s: %" PRIu64 "/%" PRIu64 " files, %s/%s (%u%%)",
			     ev->stage, ev->entries, ev->entries_total, b1, b2,
			     ev->bytes_total	 ? (unsigned)(ev->bytes * 100 / ev->bytes_total)
			     : ev->entries_total ? (unsigned)(ev->entries * 100 / ev->entries_total)
						 : 100u);
	else
		n = snprintf(line, sizeof(line), "agentguard: %s: listing, %" PRIu64 " entries, %s",
			     ev->stage, ev->entries, b1);
	if (n < 0)
		return;
	size_t len = strlen(line);
	/* spaces over what is left of a longer previous line */
	fprintf(stderr, "\r%s%*s%s", line, c->width > len ? (int)(c->width - len) : 0, "",
		ev->done ? "\n" : "");
	fflush(stderr);
	c->width = ev->done ? 0 : len;
	c->drawn = !ev->done;
	c->draw_ms = now;
	if (ev->done)
		c->stage = NULL;
}

void ag_cli_live_end(struct ag_cli_live *c)
{
	if (c->drawn) {
		/* a stage that failed half-way: keep its last state, end the line */
		fputc('\n', stderr);
		fflush(stderr);
	}
	c->drawn = false;
	c->stage = NULL;
}

void ag_cli_live_event(void *ctx, const struct ag_run_event *ev)
{
	struct ag_cli_live *c = ctx;
	if (ev->kind != AG_RUN_EV_PROGRESS)
		ag_cli_live_end(c);
	switch (ev->kind) {
	case AG_RUN_EV_PROGRESS:
		if (c->progress)
			progress(c, ev);
		return;
	case AG_RUN_EV_AGENT_START:
		if (c->quiet)
			return;
		fputs("agentguard: the agent is starting; its output follows, redacted, each line "
		      "prefixed 'agent:' (stdout) or 'agent stderr:'\n",
		      stderr);
		fflush(stderr);
		return;
	case AG_RUN_EV_AGENT_END:
		if (c->quiet)
			return;
		fprintf(stderr, "agentguard: the agent's output ended (%" PRIu64 " line%s shown)\n",
			c->lines, c->lines == 1 ? "" : "s");
		fflush(stderr);
		return;
	case AG_RUN_EV_AGENT_LINE:
		break;
	default:
		return;
	}
	if (c->quiet)
		return;
	const char *name = ev->stream == 1 ? "stdout" : "stderr";
	if (ev->line == AG_LINE_CAPPED) {
		fprintf(stderr,
			"agentguard: the agent's %s reached max_output_bytes (%" PRIu64
			" bytes): the rest of it is neither shown nor kept\n",
			name, ev->cap);
		fflush(stderr);
		return;
	}
	/* the agent's stdout to our stdout, unless stdout carries the JSON document */
	FILE *f = ev->stream == 1 && !c->json ? stdout : stderr;
	fputs(ev->stream == 1 ? "agent: " : "agent stderr: ", f);
	fwrite(ev->text, 1, ev->len, f);
	if (ev->line == AG_LINE_CUT)
		fprintf(f, " [agentguard: line longer than %d bytes, the rest of it is not shown]",
			AG_LIVE_LINE_MAX);
	fputc('\n', f);
	fflush(f);
	c->lines++;
}
