/*
 * gateway.h: agentguard-gateway, the live-study egress proxy (issue 12,
 * docs/study-egress.md "The gateway"). Its own main; it links the base and
 * egress libraries and libevent (bufferevent for the two directions of each
 * connection, evdns for the one resolver it is given).
 *
 * Every request is judged by ag_egress_decide() twice at most: once before
 * any lookup (an unapproved name is never resolved), once with every A and
 * AAAA answer. The connection goes to the address the decision checked.
 *
 * Evidence is one canonical JSON line per record in the --events file
 * (schema "agentguard.egress-gateway-stream" v1):
 *   {"record":"start", ...}                       first line
 *   {"record":"decision","seq":N,"event":{...},   one per decision; "event"
 *    "decision":{...},"connected_address":...}    is the manifest's event item
 *   {"record":"end","complete":B,"records":N,     last line, on SIGTERM
 *    "sampled_out":N,...}
 * The decision records are a bounded sample (bounds.h AG_GW_SAMPLE_*): the
 * first ones, the first of each aggregate key, and the last ones (written
 * at the end); "sampled_out" counts the rest. The complete counts are the
 * aggregates (aggregate.c, --aggregates FILE), which no flood can evict.
 * A deny the gateway made itself names its detail in "gateway_reason" and
 * the mapped word of the closed vocabulary in the event's "reason"
 * (lib/egress/request.h, ag_egress_refusal_reason).
 * A connection that closes or times out before sending one byte is not a
 * request: it is counted in the end line ("empty_connections"), not recorded.
 * A stream without an end line, or with "complete":false, is incomplete.
 */
#ifndef AG_GATEWAY_H
#define AG_GATEWAY_H

#include "lib/base/ag.h"
#include "lib/base/bounds.h"
#include "lib/egress/decision.h"

#include <event2/event.h>
#include <jansson.h>
#include <openssl/ssl.h>
#include <netinet/in.h>
#include <sys/socket.h>

struct ag_egress_policy;
struct evdns_base;
struct evconnlistener;
struct gw_conn;

#define GW_STREAM_SCHEMA "agentguard.egress-gateway-stream"
/* The gateway image's CA bundle (the base's, pinned with ca-certificates). */
#define GW_UPSTREAM_CA_DEFAULT "/etc/ssl/certs/ca-certificates.crt"

struct gw_opts {
	const char *listen_address;
	int listen_port;
	const char *resolver; /* IP, IP:PORT or [v6]:PORT */
	const char *policy_path;
	const char *policy_digest; /* NULL or 64 hex; must match */
	const char *events_path;
	const char *aggregates_path; /* NULL: counted in memory only */
	const char *trial_id;
	int idle_secs, total_secs, max_connections;
	bool test_allow_loopback;
	const char *host_addr_args[AG_GW_HOST_ADDRS_MAX]; /* --host-address, as given */
	size_t n_host_addr_args;
	const char *inject_path; /* --inject: the trial CA and the credentials */
	const char *upstream_ca; /* --upstream-ca: the bundle destinations are checked against */
};

/* Credential injection (terminate.c): one inject rule's credential and
 * its leaf's TLS context. */
struct gw_inject_host {
	const struct ag_egress_rule *rule; /* the policy's (with its inject) */
	char *value;			   /* prefix + credential; zeroed when freed */
	SSL_CTX *server;		   /* the leaf for exactly rule's host */
};
struct gw_inject {
	struct gw_inject_host hosts[AG_EGRESS_INJECT_MAX];
	size_t n;
	SSL_CTX *client; /* to destinations: verify against the bundle and the name */
	size_t n_open;	 /* terminated tunnels open (AG_GW_TERMINATED_MAX) */
	char ca_sha256[65];
};
/* What one terminated tunnel did, for its decision record. */
struct gw_term_stats {
	bool terminated;
	int64_t requests, refused;
	const char *refusal;   /* the refusal word inside the tunnel, or NULL */
	const char *tls_error; /* why a TLS session failed, or NULL */
};

/* The evidence stream: one file, appended with write(2), bounded. */
struct gw_stream {
	int fd;
	int64_t bytes;
	int64_t records; /* decision records written */
	int64_t lost;	 /* records that could not be written */
	int64_t empty;	 /* connections that sent no byte (not requests) */
	bool broken;	 /* a write failed or the bound was hit: incomplete */
	/* the last decision records not written at once, written at the end */
	json_t *last[AG_GW_SAMPLE_LAST];
	size_t n_last, last_head;
	int64_t sampled_out; /* decision records counted, never written */
};

/* One aggregate key and its counters. */
struct gw_agg {
	bool allow;
	char host[AG_EGRESS_HOST_MAX + 1];
	int port;
	const char *reason; /* static (the closed vocabulary) */
	int64_t requests, bytes_in, bytes_out;
};
#define GW_AGG_OVERFLOW (-1)
struct gw_aggs {
	int fd; /* -1: no file */
	struct gw_agg keys[AG_GW_AGG_KEYS_MAX];
	size_t n;
	int64_t ov_allowed, ov_denied, ov_bytes_in, ov_bytes_out;
	bool broken; /* a slot could not be written: the file is incomplete */
};

struct gw {
	struct gw_opts opts;
	struct event_base *base;
	struct evdns_base *dns;
	struct sockaddr_storage resolver; /* the one nameserver */
	socklen_t resolver_len;
	bool dns_reset_pending;
	struct evconnlistener *listener;
	struct event *sig_term, *sig_int, *drain_timer;
	struct ag_egress_policy *policy;
	struct gw_inject *inject; /* NULL: no rule injects */
	struct gw_stream stream;
	struct gw_aggs aggs;
	/* --host-address: the host's own addresses, never connected to */
	struct ag_egress_addr host_addrs[AG_GW_HOST_ADDRS_MAX];
	size_t n_host_addrs;
	struct gw_conn *conns; /* open connections (doubly linked) */
	size_t n_conns;
	size_t n_zombies; /* finished, waiting for a DNS callback */
	int64_t seq;
	bool stopping;
	const char *stop_reason;
};

/* stream.c */
void gw_now(char out[32]);
/* An evidence file opened with FLAGS (O_CREAT, O_NOFOLLOW, O_CLOEXEC
 * added): new, or an existing empty regular file; else -1 (EEXIST). */
int gw_open_empty(const char *path, int flags);
int gw_stream_open(struct gw_stream *s, const char *path, struct ag_error **err);
/* Appends one canonical JSON line (takes ownership of rec). Failure marks
 * the stream broken and counts the record lost. Returns 0 or -1. */
int gw_stream_write(struct gw_stream *s, json_t *rec);
/* A decision record (taken): written now when KEEP (the first ones, the
 * first of a key), else held among the last ones (the oldest held is then
 * sampled out). */
void gw_stream_decision(struct gw_stream *s, json_t *rec, bool keep);
/* The held records, then the last line; returns whether the stream is complete. */
bool gw_stream_finish(struct gw_stream *s, const char *reason);

/* aggregate.c */
/* Creates PATH (new) with its header slot; PATH NULL: counts in memory. */
int gw_aggs_open(struct gw_aggs *a, const char *path, struct ag_error **err);
int gw_aggs_write_header(struct gw_aggs *a);
/* Counts one judged request; returns its key's index or GW_AGG_OVERFLOW;
 * *first: the key (or the overflow) counted its first request. */
int gw_aggs_count(struct gw_aggs *a, bool allow, const char *host, int port, const char *reason,
		  bool *first);
/* Adds a closed connection's bytes to KEY. */
void gw_aggs_bytes(struct gw_aggs *a, int key, int64_t in, int64_t out);
/* Final header, fsync, close; returns whether every slot was written. */
bool gw_aggs_close(struct gw_aggs *a);

/* proxy.c */
void gw_accept(struct gw *gw, int fd, const struct sockaddr *sa, int salen);
/* Cuts every open connection (their records are written). */
void gw_close_all(struct gw *gw, const char *why);
/* Called when a connection is gone; main.c ends the loop when stopping. */
void gw_conn_gone(struct gw *gw);

/* tunnel.c: an established CONNECT tunnel's two sockets, relayed through
 * one fixed buffer each way, counting each direction's bytes into
 * *BYTES_OUT (client to destination) and *BYTES_IN. DONE(ARG, reason) runs
 * once when the tunnel ends (a close or error of either side, or idle
 * time), with the close reason the buffered relay would record; it must
 * free the tunnel. The sockets stay the caller's. */
struct gw_tunnel;
typedef void (*gw_tunnel_done_fn)(void *arg, const char *reason);
/* What each side gets before anything is relayed (at most
 * AG_GW_TUNNEL_BUF each; the caller counts what it passes on). */
struct gw_tunnel_first {
	const void *to_cli, *to_up;
	size_t to_cli_len, to_up_len;
};
struct gw_tunnel *gw_tunnel_start(struct event_base *base, int cli, int up, int idle_secs,
				  const struct gw_tunnel_first *first, int64_t *bytes_out,
				  int64_t *bytes_in, gw_tunnel_done_fn done, void *arg);
void gw_tunnel_free(struct gw_tunnel *t);

/* terminate.c */
/* Reads --inject (bounded; zeroes its text after), checks it matches the
 * policy's inject rules one for one, makes each rule's leaf and the
 * destination context (BUNDLE). 0, or -1 with the reason printed. */
int gw_inject_load(struct gw *gw, const char *path, const char *bundle);
void gw_inject_free(struct gw_inject *in);
const struct gw_inject_host *gw_inject_find(const struct gw_inject *in, const char *host, int port);
/* Takes over an established CONNECT tunnel to an inject host (the 200
 * already sent): TLS both ways, requests rewritten. The sockets stay the
 * caller's (each side works on a dup). DONE as for tunnels. NULL when it
 * cannot start. */
struct gw_term;
struct gw_term *gw_term_start(struct gw *gw, int cfd, int ufd, const struct gw_inject_host *h,
			      int64_t *bytes_out, int64_t *bytes_in, struct gw_term_stats *st,
			      gw_tunnel_done_fn done, void *arg);
void gw_term_free(struct gw_term *t);

/* main.c: forgets and re-adds the one nameserver (see gw_dns_reset). */
int gw_dns_set_nameserver(struct gw *gw);

/* Parses "IP", "IP:PORT" or "[v6]:PORT" into a sockaddr (default port
 * `defport`). Returns 0 or -1. */
int gw_parse_hostport(const char *s, int defport, struct sockaddr_storage *ss, socklen_t *len);

#endif
