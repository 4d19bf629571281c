/*
 * engine.h: the one transport to Docker, the Engine API over the daemon's
 * unix socket (libcurl), pinned to API path /v1.41.
 *
 * The socket is verified before anything is sent: named by an absolute
 * path (--docker-socket, default /var/run/docker.sock), every directory on
 * its canonical path root-owned and not writable by group or others unless
 * sticky, the entry itself a socket owned by root and not writable by
 * others. Every connection AgentGuard opens is made by AgentGuard (libcurl's
 * open-socket hook) and checked with SO_PEERCRED before its first byte: the
 * peer must run as uid 0 (a rootful daemon). A listener of anybody else
 * gets no request at all.
 *
 * A request that makes an object (POST .../create, .../exec, .../connect)
 * is sent at most once: on a handle and a new connection of its own,
 * closed after it, so libcurl has no kept-alive connection to find dead
 * and resend it on. When its answer is lost the caller resolves it by the
 * object's unique label.
 *
 * Every request has a timeout and a response bound. Failures are typed
 * (reason tokens, AG_E_DOCKER unless said otherwise):
 *   docker.socket.not_absolute (AG_E_USAGE)  docker.socket.missing
 *   docker.socket.unsafe (AG_E_UNVERIFIED: owner, mode, type, directory chain)
 *   docker.engine.peer_not_root (AG_E_UNVERIFIED)
 *   docker.engine.unavailable  (refused, absent, not a socket at connect time)
 *   docker.engine.timeout      docker.engine.dropped (connection ended early)
 *   docker.response.too_large (AG_E_LIMIT)  docker.json.malformed
 *   docker.api.not_found (404) docker.api.conflict (409)
 *   docker.api.daemon_error (5xx) docker.api.status (any other non-2xx)
 *   docker.engine.api_version (ApiVersion below 1.41)
 * The daemon's own "message" appears only sanitized and bounded.
 */
#ifndef AG_ENGINE_H
#define AG_ENGINE_H

#include "lib/base/ag.h"
#include "lib/base/buf.h"

#include <jansson.h>
#include <sys/types.h>

struct ag_error;

#define AG_ENGINE_DEFAULT_SOCKET "/var/run/docker.sock"
#define AG_ENGINE_API_PATH "/v1.41"

struct ag_engine {
	char *socket;	      /* canonical verified path */
	bool explicit_socket; /* named by --docker-socket (may be a private path) */
	char *client;	      /* "agentguard (Engine API 1.41, libcurl X.Y.Z)" */
	void *curl;	      /* the reused easy handle (keep-alive) */
	int sock_fd;	      /* the reused handle's socket (peer checked per request) */
	bool peer_refused;    /* set by the connect hook */
	uid_t peer_uid;
};

#define AG_ENGINE_INIT                                                                             \
	{                                                                                          \
		0                                                                                  \
	}

/*
 * Verifies the socket (requested NULL: the default) and sends GET /_ping.
 * On success *e owns its resources (ag_engine_close).
 */
int ag_engine_open(const char *requested, struct ag_engine *e, struct ag_error **err);
void ag_engine_close(struct ag_engine *e);
#define _cleanup_engine_ _cleanup_(ag_engine_close)

/* One answer. body is bounded by the request's max; status 0 = none. */
struct ag_engine_reply {
	long status;
	struct ag_buf body;
};

void ag_engine_reply_init(struct ag_engine_reply *r);
void ag_engine_reply_release(struct ag_engine_reply *r);

/*
 * METHOD AG_ENGINE_API_PATH+path with an optional JSON body. Returns 0 when
 * the daemon answered (any status; r->status says which), -1 with a
 * transport error (socket, peer, timeout, dropped, too large).
 * timeout_ms 0 = AG_DOCKER_CONTROL_TIMEOUT_MS, max 0 = AG_PF_JSON_MAX_BYTES.
 */
int ag_engine_call(struct ag_engine *e, const char *method, const char *path, const json_t *body,
		   unsigned timeout_ms, size_t max, struct ag_engine_reply *r,
		   struct ag_error **err);

/*
 * GET AG_ENGINE_API_PATH+path whose 2xx body is streamed: each chunk goes
 * to sink as it arrives (nothing is kept), at most `max` bytes in all
 * (beyond: docker.response.too_large, AG_E_LIMIT). A sink returning -1
 * stops the transfer (docker.response.sink_stopped; the sink keeps its own
 * reason). Any other status: its body lands in r->body (bounded) for
 * ag_engine_status_error, and 0 is returned as for ag_engine_call.
 */
typedef int (*ag_engine_sink_fn)(const char *p, size_t n, void *data);
int ag_engine_get_stream(struct ag_engine *e, const char *path, unsigned timeout_ms, uint64_t max,
			 ag_engine_sink_fn sink, void *data, struct ag_engine_reply *r,
			 struct ag_error **err);

/*
 * Turns a non-2xx answer into its typed error ("what" names the request;
 * the daemon's message is sanitized and bounded). 0 for 2xx.
 */
int ag_engine_status_error(const struct ag_engine_reply *r, const char *what,
			   struct ag_error **err);

/*
 * A request whose 2xx answer is one JSON object (bounded and parsed with
 * ag_docker_json_parse). Non-2xx: ag_engine_status_error.
 */
int ag_engine_json(struct ag_engine *e, const char *method, const char *path, const json_t *body,
		   unsigned timeout_ms, const char *what, json_t **out, struct ag_error **err);

/* A request whose answer carries no body we need: 2xx (or `ok_status`) passes. */
int ag_engine_do(struct ag_engine *e, const char *method, const char *path, unsigned timeout_ms,
		 long ok_status, const char *what, struct ag_error **err);

/* Percent-encodes s for a query value (heap string). */
char *ag_engine_escape(const char *s);

/*
 * Attach to a created (not started) container, start it, and demultiplex
 * its stdout/stderr until the stream ends, the deadline passes or
 * should_cancel says so. Output beyond a cap is counted and dropped (the
 * truncated flags say so); reading goes on, so a flood cannot stall the
 * container.
 */
struct ag_engine_stream_opts {
	size_t stdout_max, stderr_max;
	unsigned timeout_ms;		   /* whole run, start included */
	bool (*should_cancel)(void *data); /* may be NULL */
	void *should_cancel_data;
	/*
	 * May be NULL. Called as output arrives with exactly the bytes the
	 * capture keeps (stream 1 stdout, 2 stderr), in order; once with
	 * p == NULL and n == 0 when a stream first passes its cap.
	 */
	void (*on_output)(void *data, int stream, const char *p, size_t n);
	void *on_output_data;
};

enum ag_stream_end {
	AG_STREAM_ENDED = 0, /* the daemon closed the stream: the process ended */
	AG_STREAM_TIMED_OUT,
	AG_STREAM_CANCELLED,
	AG_STREAM_DROPPED,     /* the connection ended mid-frame or with an error */
	AG_STREAM_NOT_STARTED, /* attach or start was refused (error set) */
};

struct ag_engine_stream {
	enum ag_stream_end end;
	struct ag_buf out, err;
	bool stdout_truncated, stderr_truncated;
	uint64_t stdout_total, stderr_total; /* bytes the process wrote, kept or not */
	uint64_t start_ms;		     /* when start was answered (monotonic ms) */
};

void ag_engine_stream_init(struct ag_engine_stream *s);
void ag_engine_stream_release(struct ag_engine_stream *s);

/* Returns 0 whenever the run was attempted (s->end says how it ended; for
 * AG_STREAM_NOT_STARTED *err is set too); -1 only on internal failure. */
int ag_engine_attach_run(struct ag_engine *e, const char *id, const struct ag_engine_stream_opts *o,
			 struct ag_engine_stream *s, struct ag_error **err);

/*
 * A host file AgentGuard hands to the daemon (the preflight probe): its
 * canonical path in *canon_out, when it is a regular file owned by root,
 * executable, writable by nobody else, in a root-owned directory chain.
 * Reasons: preflight.probe_binary.not_absolute (AG_E_USAGE), .missing
 * (AG_E_DOCKER), .unsafe (AG_E_UNVERIFIED).
 */
int ag_verify_root_file(const char *path, char **canon_out, struct ag_error **err);

/* libcurl's version string, for evidence ("8.x.y"). */
const char *ag_engine_libcurl_version(void);

#endif
