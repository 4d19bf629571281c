/*
 * live_out.h: the CLI's observer of a contained run (progress on a
 * terminal, the agent's output live); see live_out.c.
 */
#ifndef AG_CLI_LIVE_OUT_H
#define AG_CLI_LIVE_OUT_H

#include "lib/base/ag.h"

struct ag_run_event;

struct ag_cli_live {
	bool quiet;    /* --quiet: no agent output, no progress */
	bool json;     /* --json: stdout holds the JSON document only */
	bool progress; /* stderr is a terminal (and not --quiet) */
	uint64_t lines;
	/* the progress line */
	const char *stage;
	uint64_t stage_ms, draw_ms;
	bool drawn;
	size_t width;
};

/* The ag_run_observer event function; ctx is a struct ag_cli_live. */
void ag_cli_live_event(void *ctx, const struct ag_run_event *ev);
/* Ends a progress line left open (a stage that failed); before any other output. */
void ag_cli_live_end(struct ag_cli_live *c);

#endif
