/*
 * live.h: what a contained run tells its caller while it runs: progress of
 * the long workspace stages, and the agent's output, live, through the
 * same redaction as the evidence (docs/contained-run.md, "Live output").
 *
 * The library never prints: the caller (src/cli) gets events through an
 * observer and decides what to show where.
 */
#ifndef AG_RUN_LIVE_H
#define AG_RUN_LIVE_H

#include "lib/base/ag.h"

struct ag_redactor;

enum ag_run_event_kind {
	AG_RUN_EV_PROGRESS,    /* a workspace stage advanced (progress fields) */
	AG_RUN_EV_AGENT_START, /* the container is about to be started */
	AG_RUN_EV_AGENT_LINE,  /* one line of the agent's output (line fields) */
	AG_RUN_EV_AGENT_END,   /* the agent's output ended (the stream closed) */
};

enum ag_run_line_kind {
	AG_LINE_WHOLE = 0, /* a line (the last one may have had no newline) */
	AG_LINE_CUT,	   /* a line longer than AG_LIVE_LINE_MAX: the rest of it is withheld */
	AG_LINE_CAPPED,	   /* no text: the stream reached the capture cap (cap bytes);
			    * nothing more of it is shown or kept */
};

struct ag_run_event {
	enum ag_run_event_kind kind;
	/* AG_RUN_EV_PROGRESS */
	const char *stage;	/* static: "workspace copy", "change capture", "source check" */
	bool reading;		/* false: listing entries; true: reading (hashing, copying) files */
	bool done;		/* the stage finished (sent once, last) */
	uint64_t entries;	/* listed so far, or files read so far */
	uint64_t entries_total; /* reading: files to read; else 0 */
	uint64_t bytes;		/* file bytes listed, or read so far */
	uint64_t bytes_total;	/* reading: bytes to read; else 0 */
	/* AG_RUN_EV_AGENT_LINE */
	int stream; /* 1 stdout, 2 stderr */
	enum ag_run_line_kind line;
	const char *text; /* redacted and terminal-safe, without its newline */
	size_t len;
	uint64_t cap; /* AG_LINE_CAPPED: the cap in bytes */
};

struct ag_run_observer {
	void (*event)(void *ctx, const struct ag_run_event *ev);
	void *ctx;
};

/*
 * The live view of one run's output: each stream goes through its own
 * streaming redactor (ag_redact_stream, a copy of r's set as it is now),
 * then is split into lines (a "\r\n", a lone '\r' or a '\n' ends a line)
 * and escaped for a terminal like every human-facing output
 * (lib/base/termsafe.h; tabs kept).
 */
struct ag_live;
struct ag_live *ag_live_new(const struct ag_redactor *r, uint64_t cap,
			    const struct ag_run_observer *obs);
/* The engine's on_output callback (engine.h): bytes, or p == NULL for the cap. */
void ag_live_output(void *live, int stream, const char *p, size_t n);
/* The streams ended: what is held is redacted and shown. */
void ag_live_finish(struct ag_live *l);
void ag_live_free(struct ag_live *l);

/*
 * Snapshot progress (workspace/snapshot.h) as AG_RUN_EV_PROGRESS events of
 * a stage; ctx is the const struct ag_run_observer *.
 */
struct ag_ws_progress;
void ag_live_progress_copy(void *ctx, const struct ag_ws_progress *p);	  /* "workspace copy" */
void ag_live_progress_capture(void *ctx, const struct ag_ws_progress *p); /* "change capture" */
void ag_live_progress_source(void *ctx, const struct ag_ws_progress *p);  /* "source check" */

#endif
