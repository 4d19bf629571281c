/*
 * proxy.c: one client connection of agentguard-gateway (gateway.h).
 *
 *   HEAD       read the request head (bounded bytes, lines and time)
 *   RESOLVING  the policy allowed the name: A and AAAA through evdns
 *   CONNECTING to the one address the decision checked
 *   RELAY      bytes both ways, counted; CONNECT is a tunnel (the client
 *              owns TLS), plain HTTP is one request in origin-form with
 *              Connection: close, its body bounded by Content-Length
 * Whatever happens, exactly one decision record is written when the
 * connection ends (conn_finish).
 */
#include "lib/base/ag.h"
#include "lib/egress/authority.h"
#include "lib/egress/inject.h"
#include "lib/egress/manifest.h"
#include "lib/egress/policy.h"
#include "lib/egress/request.h"
#include "gateway/gateway.h"

#include <arpa/inet.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/dns.h>
#include <strings.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

enum state { S_HEAD, S_RESOLVING, S_CONNECTING, S_RELAY, S_DONE };

struct gw_conn {
	struct gw *gw;
	struct gw_conn *prev, *next;
	enum state state;
	struct bufferevent *cli, *up;
	struct gw_tunnel *tunnel; /* an established CONNECT tunnel (tunnel.c) */
	/* an inject rule's destination: terminated (terminate.c), not spliced */
	const struct gw_inject_host *inject;
	bool inject_counted; /* holds one of AG_GW_TERMINATED_MAX */
	struct gw_term *term;
	struct gw_term_stats ts;
	bool relayed; /* the 200 went out (a tunnel, spliced or terminated) */
	struct event *total_timer;
	char started[32];
	/* The request, as judged. `url` is the URL's canonical form (no query). */
	const char *protocol;
	char *authority, *url;
	char *upstream_head; /* plain HTTP: the head forwarded (origin-form) */
	int64_t body_left;   /* plain HTTP: request body bytes still to forward */
	char target_host[AG_EGRESS_HOST_MAX + 3]; /* plain HTTP: Host header value */
	/* Resolution. */
	struct evdns_request *dns_req[2];
	int dns_pending;
	bool dns_uncertain;
	bool resolved; /* answers (or the approved literal) are in addrs */
	char addrs[AG_EGRESS_RESOLVED_MAX + 1][AG_EGRESS_ADDR_TEXT_MAX];
	size_t n_addrs;
	bool addrs_overflow;
	struct ag_egress_decision d;
	bool decided;
	const char *gw_reason;	  /* why the gateway refused before/after judging */
	const char *close_reason; /* how a relayed connection ended */
	char connected[AG_EGRESS_ADDR_TEXT_MAX];
	int linger_reads;
	bool head_seen;		     /* at least one byte of a request arrived */
	bool gw_reason_forced;	     /* refused before reading (limits): always recorded */
	int64_t bytes_in, bytes_out; /* from the destination / to the destination */
	/* aggregates: counted once, when judged for good (account) */
	bool accounted, agg_first;
	int agg_key;
};

static void conn_finish(struct gw_conn *c);
static void relay_read(struct bufferevent *bev, void *arg);
static void relay_event(struct bufferevent *bev, short what, void *arg);

/* ---- records ---- */

/* The event as the library sees it; `addrs` is the caller's storage. */
static struct ag_egress_event event_of(const struct gw_conn *c,
				       const char *addrs[AG_EGRESS_RESOLVED_MAX + 1])
{
	for (size_t i = 0; i < c->n_addrs; i++)
		addrs[i] = c->addrs[i];
	return (struct ag_egress_event){
	    .protocol = c->protocol ? c->protocol : "other",
	    .authority = c->authority,
	    .url = c->url,
	    .resolved = addrs,
	    .n_resolved = c->n_addrs,
	    .resolution_status = c->resolved ? (c->dns_uncertain ? "uncertain" : "stable") : NULL,
	};
}

/* Judges the event as it stands. Also for requests refused before any
 * judgement (malformed, oversized, limits), so their record has the
 * library's shape and a deny. */
/*
 * The decision table cannot know which addresses are the host's own: an
 * approved test_only rule may name (or resolve to) a documentation-range
 * address that is in fact a bridge's host side. AgentGuard reads the
 * host's addresses at trial start and passes them as --host-address; an
 * allow whose checked address is one of them becomes a deny, with the
 * library's own reason for an unsafe literal or answer.
 */
/* True when TEXT is one of the host's own addresses (--host-address). */
static bool is_host_address(const struct gw *gw, const char *text)
{
	struct ag_egress_addr a;
	if (!text[0] || ag_egress_addr_parse(text, &a) < 0)
		return false;
	a = ag_egress_addr_unmap(&a);
	for (size_t i = 0; i < gw->n_host_addrs; i++) {
		const struct ag_egress_addr *h = &gw->host_addrs[i];
		if (h->family == a.family && memcmp(h->b, a.b, a.family == 4 ? 4 : 16) == 0)
			return true;
	}
	return false;
}

static void host_address_veto(struct gw_conn *c)
{
	if (!c->d.allow || !c->d.address[0])
		return;
	struct ag_egress_addr lit;
	bool literal = ag_egress_addr_parse(c->d.host, &lit) == 0;
	if (is_host_address(c->gw, c->d.address)) {
		c->d.allow = false;
		c->d.reason = literal ? "unsafe_ip_literal" : "resolution_unsafe";
	}
}

static void judge(struct gw_conn *c)
{
	const char *addrs[AG_EGRESS_RESOLVED_MAX + 1];
	struct ag_egress_event ev = event_of(c, addrs);
	ag_egress_decide(c->gw->policy, &ev, &c->d);
	host_address_veto(c);
	c->decided = true;
}

/*
 * The decision as the evidence records it. A deny the gateway made itself
 * (a refused request head, a slow or oversized one, a limit) is sealed with
 * the gateway's word (request.h), not with whatever the destination check
 * said about a request it never finished judging. A refused request never
 * reached its destination, so it is a deny even where the check had
 * approved the destination (an approved IP literal is judged at once).
 */
static struct ag_egress_decision final_decision(struct gw_conn *c)
{
	if (!c->decided)
		judge(c);
	struct ag_egress_decision d = c->d;
	const char *refusal = ag_egress_refusal_reason(c->gw_reason);
	if (refusal) {
		d.allow = false;
		d.reason = refusal;
	}
	return d;
}

/* Counts the request in the aggregates once, when its decision is final:
 * before an approved connection leaves, when a refusal is sent, else when
 * the connection ends. */
static void account(struct gw_conn *c)
{
	if (c->accounted)
		return;
	struct ag_egress_decision d = final_decision(c);
	c->agg_key = gw_aggs_count(&c->gw->aggs, d.allow, d.host, d.port, d.reason, &c->agg_first);
	c->accounted = true;
}

static json_t *record_of(struct gw_conn *c)
{
	const char *addrs[AG_EGRESS_RESOLVED_MAX + 1];
	struct ag_egress_event ev = event_of(c, addrs);
	/*
	 * The host's own addresses never reach the evidence: a resolved
	 * answer or a checked address that is one of them is left out of the
	 * record (only a deny can hold one: the veto above). What the agent
	 * typed itself (an IP literal) is its own request and stays.
	 */
	struct ag_egress_decision d = final_decision(c);
	size_t kept = 0;
	for (size_t i = 0; i < ev.n_resolved; i++)
		if (!is_host_address(c->gw, addrs[i]))
			addrs[kept++] = addrs[i];
	ev.n_resolved = kept;
	struct ag_egress_addr lit;
	if (is_host_address(c->gw, d.address) && ag_egress_addr_parse(d.host, &lit) < 0)
		d.address[0] = '\0';
	char ended[32];
	gw_now(ended);
	char hdr[AG_EGRESS_INJECT_HEADER_MAX + 1] = "";
	if (c->inject)
		ag_egress_header_lower(c->inject->rule->inject->header, hdr);
	/* with injection configured, every allowed CONNECT says whether its
	 * TLS was terminated here (an inject rule's) or spliced */
	bool tunnel = c->gw->inject && d.allow && c->connected[0] && c->protocol &&
		      strcmp(c->protocol, "connect") == 0;
	struct ag_egress_event_meta meta = {
	    .tls_mode = !tunnel	    ? NULL
			: c->inject ? "terminated"
				    : "spliced",
	    .injected_header = tunnel && c->inject && c->ts.requests > 0 ? hdr : NULL,
	    .event_type = "request",
	    .bytes_in = c->bytes_in,
	    .bytes_out = c->bytes_out,
	    .started = c->started,
	    .ended = ended,
	    .evidence_complete = true,
	    .evidence_truncated = c->addrs_overflow,
	};
	json_t *rec = json_object();
	json_object_set_new(rec, "record", json_string("decision"));
	json_object_set_new(rec, "seq", json_integer(++c->gw->seq));
	json_object_set_new(rec, "event", ag_egress_event_record(&ev, &d, &meta));
	json_object_set_new(rec, "decision", ag_egress_decision_json(&d));
	json_object_set_new(rec, "connected_address",
			    c->connected[0] ? json_string(c->connected) : json_null());
	json_object_set_new(rec, "gateway_reason",
			    c->gw_reason ? json_string(c->gw_reason) : json_null());
	json_object_set_new(rec, "close_reason",
			    c->close_reason ? json_string(c->close_reason) : json_null());
	json_object_set_new(rec, "tls",
			    json_string(c->ts.terminated ? "terminated"
					: c->protocol && strcmp(c->protocol, "connect") == 0
					    ? "client-owned-not-intercepted"
					    : "none"));
	if (c->inject) {
		/* names and counts only: never a header value or a body */
		json_object_set_new(rec, "injected_header",
				    c->ts.requests > 0 ? json_string(hdr) : json_null());
		json_object_set_new(rec, "tunnel_requests", json_integer(c->ts.requests));
		json_object_set_new(rec, "tunnel_refused", json_integer(c->ts.refused));
		json_object_set_new(rec, "tunnel_refusal",
				    c->ts.refusal ? json_string(c->ts.refusal) : json_null());
		json_object_set_new(rec, "tls_error",
				    c->ts.tls_error ? json_string(c->ts.tls_error) : json_null());
	}
	return rec;
}

/* ---- lifetime ---- */

static void conn_free(struct gw_conn *c)
{
	free(c->authority);
	free(c->url);
	free(c->upstream_head);
	free(c);
}

static void conn_finish(struct gw_conn *c)
{
	if (c->state == S_DONE)
		return;
	struct gw *gw = c->gw;
	if (c->state == S_HEAD && !c->head_seen && !c->gw_reason_forced) {
		/* Opened and closed (or timed out) without sending one byte: not
		 * a request, nothing was judged or connected. Counted, not recorded. */
		gw->stream.empty++;
	} else {
		account(c);
		gw_aggs_bytes(&gw->aggs, c->agg_key, c->bytes_in, c->bytes_out);
		/* the first ones and the first of each key now; else among the last */
		bool keep = gw->seq < AG_GW_SAMPLE_FIRST || c->agg_first;
		gw_stream_decision(&gw->stream, record_of(c), keep);
	}
	c->state = S_DONE;
	gw_tunnel_free(c->tunnel);
	c->tunnel = NULL;
	gw_term_free(c->term);
	c->term = NULL;
	if (c->inject_counted) {
		gw->inject->n_open--;
		c->inject_counted = false;
	}
	if (c->cli)
		bufferevent_free(c->cli);
	if (c->up)
		bufferevent_free(c->up);
	c->cli = c->up = NULL;
	if (c->total_timer)
		event_free(c->total_timer);
	c->total_timer = NULL;
	if (c->prev)
		c->prev->next = c->next;
	else
		gw->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	gw->n_conns--;
	if (c->dns_pending > 0) {
		/* The callbacks still come (with DNS_ERR_CANCEL); free then. */
		gw->n_zombies++;
		for (int i = 0; i < 2; i++)
			if (c->dns_req[i])
				evdns_cancel_request(gw->dns, c->dns_req[i]);
	} else {
		conn_free(c);
	}
	gw_conn_gone(gw);
}

void gw_close_all(struct gw *gw, const char *why)
{
	while (gw->conns) {
		struct gw_conn *c = gw->conns;
		if (!c->close_reason)
			c->close_reason = why;
		conn_finish(c);
	}
}

static void refuse_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	(void)what;
	conn_finish(arg);
}

/* After a refusal: read and drop what the client still sends (bounded in
 * bytes and time), so closing does not reset the connection before the
 * client has read the answer. */
static void linger_read(struct bufferevent *bev, void *arg)
{
	struct evbuffer *in = bufferevent_get_input(bev);
	evbuffer_drain(in, evbuffer_get_length(in));
	if (++((struct gw_conn *)arg)->linger_reads > 64)
		conn_finish(arg);
}

/* Sends a short refusal, then finishes once it is written. */
static void refuse_written(struct bufferevent *bev, void *arg)
{
	struct gw_conn *c = arg;
	if (shutdown(bufferevent_getfd(bev), SHUT_WR) < 0) {
		conn_finish(c);
		return;
	}
	struct timeval tv = {.tv_sec = 2};
	bufferevent_set_timeouts(bev, &tv, &tv);
	bufferevent_setcb(bev, linger_read, NULL, refuse_event, c);
	bufferevent_enable(bev, EV_READ);
}

static void refuse(struct gw_conn *c, int status, const char *text)
{
	if (!c->cli) {
		conn_finish(c);
		return;
	}
	account(c);
	/* The gateway's own reason when it has one, else the decision's. */
	const char *reason = c->gw_reason ? c->gw_reason : c->d.reason ? c->d.reason : "refused";
	if (c->up) {
		bufferevent_free(c->up);
		c->up = NULL;
	}
	evbuffer_add_printf(bufferevent_get_output(c->cli),
			    "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nConnection: close\r\n"
			    "X-AgentGuard-Reason: %s\r\nContent-Length: %zu\r\n\r\n"
			    "agentguard-gateway: %s\n",
			    status, text, reason, strlen("agentguard-gateway: \n") + strlen(reason),
			    reason);
	bufferevent_disable(c->cli, EV_READ);
	bufferevent_setcb(c->cli, NULL, refuse_written, refuse_event, c);
	bufferevent_enable(c->cli, EV_WRITE);
}

static void refuse_gw(struct gw_conn *c, int status, const char *text, const char *why)
{
	c->gw_reason = why;
	if (!c->decided)
		judge(c);
	refuse(c, status, text);
}

/* No complete head in time: 408 and a record, unless not one byte came
 * (then it was no request; conn_finish counts it). */
static void head_timed_out(struct gw_conn *c)
{
	if (!c->head_seen)
		conn_finish(c);
	else
		refuse_gw(c, 408, "Request Timeout", "header_timeout");
}

static void total_timeout(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct gw_conn *c = arg;
	if (c->state == S_HEAD) {
		/* The head deadline (AG_GW_HEADER_SECS from accept), however
		 * slowly the bytes trickle in. */
		head_timed_out(c);
		return;
	}
	c->close_reason = "total_timeout";
	conn_finish(c);
}

/* ---- relay ---- */

static struct bufferevent *other_side(struct gw_conn *c, struct bufferevent *bev)
{
	return bev == c->cli ? c->up : c->cli;
}

static void drained(struct bufferevent *bev, void *arg)
{
	/* The other side's output fell below the mark: read again. */
	struct gw_conn *c = arg;
	bufferevent_setcb(bev, relay_read, NULL, relay_event, c);
	bufferevent_setwatermark(bev, EV_WRITE, 0, 0);
	struct bufferevent *o = other_side(c, bev);
	if (o && !(bev == c->up && c->body_left == 0 && c->upstream_head))
		bufferevent_enable(o, EV_READ);
}

static void relay_read(struct bufferevent *bev, void *arg)
{
	struct gw_conn *c = arg;
	struct bufferevent *dst = other_side(c, bev);
	struct evbuffer *in = bufferevent_get_input(bev);
	size_t n = evbuffer_get_length(in);
	if (!dst) {
		evbuffer_drain(in, n);
		return;
	}
	if (bev == c->cli && c->upstream_head) {
		/* Plain HTTP: only the declared body goes on; the connection then
		 * carries nothing more from the client (no second request). */
		if ((int64_t)n > c->body_left)
			n = (size_t)c->body_left;
		c->body_left -= (int64_t)n;
		evbuffer_remove_buffer(in, bufferevent_get_output(dst), n);
		evbuffer_drain(in, evbuffer_get_length(in));
		if (c->body_left == 0)
			bufferevent_disable(bev, EV_READ);
	} else {
		evbuffer_add_buffer(bufferevent_get_output(dst), in);
	}
	if (bev == c->cli)
		c->bytes_out += (int64_t)n;
	else
		c->bytes_in += (int64_t)n;
	if (evbuffer_get_length(bufferevent_get_output(dst)) >= AG_GW_RELAY_HIGHWATER) {
		bufferevent_setcb(dst, relay_read, drained, relay_event, c);
		bufferevent_setwatermark(dst, EV_WRITE, AG_GW_RELAY_HIGHWATER / 2,
					 AG_GW_RELAY_HIGHWATER);
		bufferevent_disable(bev, EV_READ);
	}
}

static void close_when_flushed(struct bufferevent *bev, void *arg)
{
	struct gw_conn *c = arg;
	if (evbuffer_get_length(bufferevent_get_output(bev)) == 0)
		conn_finish(c);
}

static void relay_event(struct bufferevent *bev, short what, void *arg)
{
	struct gw_conn *c = arg;
	if (what & BEV_EVENT_TIMEOUT)
		c->close_reason = "idle_timeout";
	else if (what & BEV_EVENT_ERROR)
		c->close_reason = bev == c->cli ? "client_error" : "destination_error";
	else
		c->close_reason = bev == c->cli ? "client_closed" : "destination_closed";
	if (what & BEV_EVENT_EOF) {
		/* Whatever is still buffered from this side goes on first. */
		relay_read(bev, c);
		struct bufferevent *o = other_side(c, bev);
		if (o && evbuffer_get_length(bufferevent_get_output(o)) > 0) {
			bufferevent_free(bev);
			if (bev == c->cli)
				c->cli = NULL;
			else
				c->up = NULL;
			bufferevent_setcb(o, NULL, close_when_flushed, relay_event, c);
			bufferevent_disable(o, EV_READ);
			return;
		}
	}
	conn_finish(c);
}

static void set_idle(struct gw_conn *c, struct bufferevent *bev)
{
	struct timeval tv = {.tv_sec = c->gw->opts.idle_secs};
	bufferevent_set_timeouts(bev, &tv, &tv);
	/* each read takes in a bounded amount (bounds.h, "Memory") */
	bufferevent_setwatermark(bev, EV_READ, 0, AG_GW_RELAY_READ_MAX);
}

/* Fixed, small kernel buffers: the kernel cannot autotune a tunnel's
 * sockets past its bound (bounds.h, "Memory"). */
static void bound_socket(int fd)
{
	int v = AG_GW_SOCKBUF;
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v));
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v));
	/* A relay sends what it has at once: Nagle's wait for an ACK (held
	 * back up to 40 ms by the peer's delayed ACK) only adds latency, and
	 * with TLS records cut to these small buffers it throttled terminated
	 * tunnels to a few MiB/s (bench/gateway/inject.sh). */
	v = 1;
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, sizeof(v));
}

static void tunnel_done(void *arg, const char *reason)
{
	struct gw_conn *c = arg;
	if (!c->close_reason)
		c->close_reason = reason;
	conn_finish(c);
}

/*
 * A CONNECT tunnel off the buffered relay: both sockets go to tunnel.c,
 * the 200 and any bytes the client pipelined after its head as the first
 * thing each side gets, and their bufferevents stay disabled (they still
 * own and close the sockets). False when the state does not allow it
 * (something already queued): the buffered relay takes the tunnel.
 */
static bool start_tunnel(struct gw_conn *c)
{
	static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	struct evbuffer *cin = bufferevent_get_input(c->cli);
	size_t pending = evbuffer_get_length(cin);
	int cfd = bufferevent_getfd(c->cli), ufd = bufferevent_getfd(c->up);
	if (cfd < 0 || ufd < 0 || evbuffer_get_length(bufferevent_get_output(c->cli)) > 0 ||
	    evbuffer_get_length(bufferevent_get_output(c->up)) > 0 || pending > AG_GW_TUNNEL_BUF)
		return false;
	const unsigned char *p = pending ? evbuffer_pullup(cin, (ssize_t)pending) : NULL;
	if (pending && !p)
		return false;
	const struct gw_tunnel_first first = {ok, p, sizeof(ok) - 1, pending};
	c->tunnel = gw_tunnel_start(c->gw->base, cfd, ufd, c->gw->opts.idle_secs, &first,
				    &c->bytes_out, &c->bytes_in, tunnel_done, c);
	/* the pipelined bytes were read from the client: counted as relayed */
	c->bytes_out += (int64_t)pending;
	evbuffer_drain(cin, pending);
	bufferevent_disable(c->cli, EV_READ | EV_WRITE);
	bufferevent_disable(c->up, EV_READ | EV_WRITE);
	bufferevent_setcb(c->cli, NULL, NULL, NULL, NULL);
	bufferevent_setcb(c->up, NULL, NULL, NULL, NULL);
	return true;
}

/* The 200 is out: both sockets go to terminate.c. Bytes the agent sent
 * before reading the 200 cannot be fed to a TLS session: such a tunnel
 * ends. */
static void tls_after_200(struct bufferevent *bev, void *arg)
{
	struct gw_conn *c = arg;
	if (evbuffer_get_length(bufferevent_get_output(bev)) > 0)
		return;
	bufferevent_disable(c->cli, EV_READ | EV_WRITE);
	bufferevent_disable(c->up, EV_READ | EV_WRITE);
	bufferevent_setcb(c->cli, NULL, NULL, NULL, NULL);
	bufferevent_setcb(c->up, NULL, NULL, NULL, NULL);
	if (evbuffer_get_length(bufferevent_get_input(c->cli)) > 0) {
		c->ts.tls_error = "client_sent_before_200";
		c->close_reason = "client_error";
		conn_finish(c);
		return;
	}
	c->term = gw_term_start(c->gw, bufferevent_getfd(c->cli), bufferevent_getfd(c->up),
				c->inject, &c->bytes_out, &c->bytes_in, &c->ts, tunnel_done, c);
	if (!c->term) {
		c->ts.tls_error = "gateway_tls_failed";
		c->close_reason = "client_error";
		conn_finish(c);
	}
}

static void start_terminated(struct gw_conn *c)
{
	evbuffer_add_printf(bufferevent_get_output(c->cli),
			    "HTTP/1.1 200 Connection established\r\n\r\n");
	bufferevent_setcb(c->cli, NULL, tls_after_200, relay_event, c);
	bufferevent_setcb(c->up, NULL, NULL, relay_event, c);
	bufferevent_disable(c->cli, EV_READ);
	bufferevent_enable(c->cli, EV_WRITE);
}

static void start_relay(struct gw_conn *c)
{
	c->state = S_RELAY;
	c->relayed = true;
	if (c->inject && !c->upstream_head) {
		start_terminated(c);
		return;
	}
	if (!c->upstream_head && start_tunnel(c))
		return;
	struct evbuffer *cin = bufferevent_get_input(c->cli);
	struct evbuffer *uout = bufferevent_get_output(c->up);
	if (c->upstream_head) {
		/* The rewritten head counts as bytes sent to the destination. */
		evbuffer_add(uout, c->upstream_head, strlen(c->upstream_head));
		c->bytes_out += (int64_t)strlen(c->upstream_head);
	} else {
		evbuffer_add_printf(bufferevent_get_output(c->cli),
				    "HTTP/1.1 200 Connection established\r\n\r\n");
	}
	set_idle(c, c->cli);
	set_idle(c, c->up);
	bufferevent_setcb(c->cli, relay_read, NULL, relay_event, c);
	bufferevent_setcb(c->up, relay_read, NULL, relay_event, c);
	bufferevent_enable(c->up, EV_READ | EV_WRITE);
	bufferevent_enable(c->cli, EV_READ | EV_WRITE);
	/* Bytes the client sent after its head (a pipelined TLS hello, a body). */
	if (evbuffer_get_length(cin) > 0)
		relay_read(c->cli, c);
	if (c->upstream_head && c->body_left == 0 && c->cli)
		bufferevent_disable(c->cli, EV_READ);
}

/* ---- connect ---- */

static void up_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	struct gw_conn *c = arg;
	if (what & BEV_EVENT_CONNECTED) {
		start_relay(c);
		return;
	}
	c->close_reason = (what & BEV_EVENT_TIMEOUT) ? "connect_timeout" : "connect_failed";
	refuse(c, 502, "Bad Gateway");
}

static socklen_t to_sockaddr(const struct ag_egress_addr *a, int port, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (a->family == 4) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		memcpy(&s4->sin_addr, a->b, 4);
		return sizeof(*s4);
	}
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	s6->sin6_family = AF_INET6;
	s6->sin6_port = htons((uint16_t)port);
	memcpy(&s6->sin6_addr, a->b, 16);
	return sizeof(*s6);
}

static void connect_checked(struct gw_conn *c)
{
	if (c->gw->stream.broken || c->gw->aggs.broken) {
		/* Nothing may pass that cannot be recorded (accepted before the loss). */
		refuse_gw(c, 503, "Service Unavailable", "evidence_lost");
		return;
	}
	if (c->protocol && strcmp(c->protocol, "connect") == 0)
		c->inject = gw_inject_find(c->gw->inject, c->d.host, c->d.port);
	if (c->inject) {
		/* counted from here, before the connect: no burst of CONNECTs
		 * can pass the bound while their connects are under way */
		if (c->gw->inject->n_open >= AG_GW_TERMINATED_MAX) {
			refuse_gw(c, 503, "Service Unavailable", "terminated_limit");
			return;
		}
		c->gw->inject->n_open++;
		c->inject_counted = true;
	}
	struct ag_egress_addr a;
	if (ag_egress_addr_parse(c->d.address, &a) < 0) {
		refuse_gw(c, 500, "Internal Server Error", "checked_address_invalid");
		return;
	}
	struct sockaddr_storage ss;
	socklen_t len = to_sockaddr(&a, c->d.port, &ss);
	/* The one place a connection leaves: to the address just checked. */
	snprintf(c->connected, sizeof(c->connected), "%s", c->d.address);
	c->state = S_CONNECTING;
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd >= 0)
		bound_socket(fd);
	c->up = fd >= 0 ? bufferevent_socket_new(c->gw->base, fd, BEV_OPT_CLOSE_ON_FREE) : NULL;
	if (!c->up) {
		if (fd >= 0)
			close(fd);
		refuse_gw(c, 500, "Internal Server Error", "socket_failed");
		return;
	}
	struct timeval tv = {.tv_sec = AG_GW_CONNECT_SECS};
	bufferevent_set_timeouts(c->up, &tv, &tv);
	bufferevent_setcb(c->up, NULL, NULL, up_event, c);
	bufferevent_disable(c->cli, EV_READ);
	bufferevent_setcb(c->cli, NULL, NULL, relay_event, c);
	account(c); /* counted before anything leaves */
	if (c->gw->aggs.broken) {
		/* the count could not be written: the connection does not leave */
		c->close_reason = "evidence_lost";
		refuse(c, 503, "Service Unavailable");
		return;
	}
	if (bufferevent_socket_connect(c->up, (struct sockaddr *)&ss, (int)len) < 0) {
		c->close_reason = "connect_failed";
		refuse(c, 502, "Bad Gateway");
	}
}

/* ---- judging ---- */

/*
 * --test-allow-loopback: with a policy whose every rule is test_only
 * (checked at start-up), exactly 127.0.0.1 and ::1 count as safe answers
 * for those rules, so tests can keep canaries on loopback. Every other
 * loopback address (127.0.0.2, ...) stays unsafe, and so does everything
 * the library refuses for any other reason.
 */
static void test_loopback_escape(struct gw_conn *c)
{
	if (!c->gw->opts.test_allow_loopback || c->d.allow || !c->d.reason ||
	    strcmp(c->d.reason, "resolution_unsafe") != 0 || c->d.rule < 0 ||
	    !c->gw->policy->rules[c->d.rule].test_only)
		return;
	if (strcmp(c->d.address, "127.0.0.1") == 0 || strcmp(c->d.address, "::1") == 0) {
		c->d.allow = true;
		c->d.reason = "approved_destination";
		host_address_veto(c);
	}
}

/*
 * libevent marks a nameserver that timed out or refused as failed and then
 * probes it with an A query for a name of its own choosing ("google.com"),
 * until it answers. The gateway asks the resolver nothing the policy did
 * not approve, so after any failed answer it forgets the nameserver (which
 * cancels the probe) and adds it again, fresh.
 */
static void dns_reset(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct gw *gw = arg;
	gw->dns_reset_pending = false;
	evdns_base_clear_nameservers_and_suspend(gw->dns);
	/* If re-adding fails, every later lookup fails: requests are denied. */
	(void)gw_dns_set_nameserver(gw);
	evdns_base_resume(gw->dns);
}

static void dns_done(struct gw_conn *c, int result, char type, int count, void *addresses)
{
	if (result != DNS_ERR_NONE && result != DNS_ERR_NOTEXIST && result != DNS_ERR_NODATA &&
	    result != DNS_ERR_CANCEL && result != DNS_ERR_SHUTDOWN && !c->gw->dns_reset_pending &&
	    !c->gw->stopping) {
		struct timeval now = {0};
		if (event_base_once(c->gw->base, -1, EV_TIMEOUT, dns_reset, c->gw, &now) == 0)
			c->gw->dns_reset_pending = true;
	}
	c->dns_pending--;
	if (c->state == S_DONE) {
		if (c->dns_pending == 0) {
			struct gw *gw = c->gw;
			gw->n_zombies--;
			conn_free(c);
			gw_conn_gone(gw);
		}
		return;
	}
	if (result == DNS_ERR_NONE) {
		for (int i = 0; i < count; i++) {
			char text[AG_EGRESS_ADDR_TEXT_MAX];
			if (type == DNS_IPv4_A)
				inet_ntop(AF_INET, (const uint32_t *)addresses + i, text,
					  sizeof(text));
			else if (type == DNS_IPv6_AAAA)
				inet_ntop(AF_INET6, (const struct in6_addr *)addresses + i, text,
					  sizeof(text));
			else
				continue;
			if (c->n_addrs < AG_EGRESS_RESOLVED_MAX + 1)
				snprintf(c->addrs[c->n_addrs++], AG_EGRESS_ADDR_TEXT_MAX, "%s",
					 text);
			else
				c->addrs_overflow = true;
		}
	} else if (result != DNS_ERR_NOTEXIST && result != DNS_ERR_NODATA) {
		/* Timeout, SERVFAIL, truncation...: what the name is, is unknown. */
		c->dns_uncertain = true;
	}
	if (c->dns_pending > 0)
		return;
	c->resolved = true;
	judge(c);
	test_loopback_escape(c);
	if (!c->d.allow) {
		refuse(c, 403, "Forbidden");
		return;
	}
	connect_checked(c);
}

static void dns_done4(int result, char type, int count, int ttl, void *addresses, void *arg)
{
	(void)ttl;
	struct gw_conn *c = arg;
	c->dns_req[0] = NULL;
	dns_done(c, result, type, count, addresses);
}

static void dns_done6(int result, char type, int count, int ttl, void *addresses, void *arg)
{
	(void)ttl;
	struct gw_conn *c = arg;
	c->dns_req[1] = NULL;
	dns_done(c, result, type, count, addresses);
}

static void resolve(struct gw_conn *c)
{
	c->state = S_RESOLVING;
	bufferevent_disable(c->cli, EV_READ);
	c->dns_pending = 2;
	/* Never the search list, never /etc/hosts: the one resolver only. */
	bufferevent_setcb(c->cli, NULL, NULL, relay_event, c);
	c->dns_req[0] =
	    evdns_base_resolve_ipv4(c->gw->dns, c->d.host, DNS_QUERY_NO_SEARCH, dns_done4, c);
	if (!c->dns_req[0])
		c->dns_pending--;
	c->dns_req[1] =
	    evdns_base_resolve_ipv6(c->gw->dns, c->d.host, DNS_QUERY_NO_SEARCH, dns_done6, c);
	if (!c->dns_req[1])
		c->dns_pending--;
	if (c->dns_pending == 0) {
		c->dns_uncertain = true;
		c->resolved = true;
		judge(c);
		refuse(c, 403, "Forbidden");
	}
}

/* ---- request head ---- */

static bool header_is(const char *line, size_t len, const char *name)
{
	size_t n = strlen(name);
	return len > n && line[n] == ':' && strncasecmp(line, name, n) == 0;
}

/* Plain HTTP: the head sent upstream, from a head the parser accepted
 * (request.h: every header line is NAME ":" VALUE, the framing is one
 * Content-Length or none). */
static char *build_upstream_head(struct gw_conn *c, const struct ag_egress_request *r)
{
	/* origin-form: everything from the first '/' after "http://host". */
	const char *p = r->target + strlen("http://");
	const char *slash = strpbrk(p, "/?#");
	const char *path = slash && *slash == '/' ? slash : NULL;
	size_t plen = path ? strcspn(path, "#") : 0;
	struct evbuffer *b = evbuffer_new();
	if (path)
		evbuffer_add_printf(b, "%s %.*s HTTP/1.1\r\n", r->method, (int)plen, path);
	else if (slash && *slash == '?')
		evbuffer_add_printf(b, "%s /%.*s HTTP/1.1\r\n", r->method, (int)strcspn(slash, "#"),
				    slash);
	else
		evbuffer_add_printf(b, "%s / HTTP/1.1\r\n", r->method);
	if (c->d.port == 80)
		evbuffer_add_printf(b, "Host: %s\r\n", c->target_host);
	else
		evbuffer_add_printf(b, "Host: %s:%d\r\n", c->target_host, c->d.port);
	c->body_left = r->content_length > 0 ? r->content_length : 0;
	const char *line = r->headers;
	const char *end = r->headers + r->headers_len;
	while (line < end) {
		const char *eol = memmem(line, (size_t)(end - line), "\r\n", 2);
		size_t len = eol ? (size_t)(eol - line) : (size_t)(end - line);
		/* The gateway states the destination and the connection itself. */
		if (!header_is(line, len, "host") && !header_is(line, len, "connection") &&
		    !header_is(line, len, "proxy-connection") &&
		    !header_is(line, len, "proxy-authorization") &&
		    !header_is(line, len, "keep-alive") && !header_is(line, len, "upgrade") &&
		    !header_is(line, len, "te"))
			evbuffer_add_printf(b, "%.*s\r\n", (int)len, line);
		line += len + 2;
	}
	evbuffer_add_printf(b, "Connection: close\r\n\r\n");
	size_t n = evbuffer_get_length(b);
	char *s = ag_xmalloc(n + 1);
	evbuffer_remove(b, s, n);
	s[n] = 0;
	evbuffer_free(b);
	return s;
}

static void handle_head(struct gw_conn *c, char *head, size_t n)
{
	struct timeval total = {.tv_sec = c->gw->opts.total_secs};
	evtimer_add(c->total_timer, &total);
	/* head holds the request line and headers, ending with CRLF CRLF. */
	struct ag_egress_request r;
	bool parsed = ag_egress_request_parse(head, n, &r) == 0;
	if (!r.method) {
		refuse_gw(c, r.status, r.status_text, r.detail);
		return;
	}
	const char *target = r.target;
	if (strcmp(r.method, "CONNECT") == 0) {
		c->protocol = "connect";
		c->authority = ag_xstrdup(target);
	} else if (strncasecmp(target, "http://", 7) == 0) {
		struct ag_egress_target t;
		bool https = false;
		const char *why = NULL;
		char *clean = NULL;
		c->protocol = "http";
		if (ag_egress_url_parse(target, strlen(target), &t, &https, &clean, &why) < 0) {
			/* The raw target may hold a query: it is never kept. */
			c->url = ag_xstrdup("http://invalid/");
			c->protocol = "other";
			refuse_gw(c, 400, "Bad Request", "invalid_url");
			return;
		}
		c->url = clean;
		snprintf(c->target_host, sizeof(c->target_host), "%s%s%s",
			 strchr(t.host, ':') ? "[" : "", t.host, strchr(t.host, ':') ? "]" : "");
	} else {
		/* origin-form, https:// absolute-form (no TLS origination), OPTIONS *... */
		c->protocol = "other";
		refuse_gw(c, 400, "Bad Request", "unsupported_request");
		return;
	}
	/* A head the parser refused (smuggling, malformed headers, framing it
	 * cannot relay) is never forwarded, whatever its destination; the
	 * record still names the destination it asked for. */
	if (!parsed) {
		refuse_gw(c, r.status, r.status_text, r.detail);
		return;
	}
	/* Judgement before any lookup: an unapproved name is never resolved. */
	judge(c);
	bool needs_lookup =
	    !c->d.allow && c->d.reason && strcmp(c->d.reason, "resolution_uncertain") == 0;
	if (!c->d.allow && !needs_lookup) {
		refuse(c, 403, "Forbidden");
		return;
	}
	if (c->url)
		c->upstream_head = build_upstream_head(c, &r);
	if (needs_lookup) {
		resolve(c);
		return;
	}
	/* An approved IP literal (test_only): the literal is the checked address. */
	snprintf(c->addrs[0], AG_EGRESS_ADDR_TEXT_MAX, "%s", c->d.address);
	c->n_addrs = 1;
	c->resolved = true;
	connect_checked(c);
}

static void head_read(struct bufferevent *bev, void *arg)
{
	struct gw_conn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	if (evbuffer_get_length(in) > 0)
		c->head_seen = true;
	struct evbuffer_ptr p = evbuffer_search(in, "\r\n\r\n", 4, NULL);
	if (p.pos < 0) {
		if (evbuffer_get_length(in) >= AG_GW_HEADER_MAX)
			refuse_gw(c, 431, "Request Header Fields Too Large", "header_too_large");
		return;
	}
	size_t n = (size_t)p.pos + 4;
	if (n > AG_GW_HEADER_MAX) {
		refuse_gw(c, 431, "Request Header Fields Too Large", "header_too_large");
		return;
	}
	char *head = ag_xmalloc(n + 1);
	evbuffer_remove(in, head, n);
	head[n] = 0;
	handle_head(c, head, n);
	/* Securely forget the head: it may hold a query string. */
	explicit_bzero(head, n);
	free(head);
}

static void head_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	struct gw_conn *c = arg;
	if (what & BEV_EVENT_TIMEOUT) {
		head_timed_out(c);
		return;
	}
	c->gw_reason = "client_closed_before_request";
	c->close_reason = "client_closed";
	conn_finish(c);
}

void gw_accept(struct gw *gw, int fd, const struct sockaddr *sa, int salen)
{
	(void)sa;
	(void)salen;
	struct gw_conn *c = ag_xcalloc(1, sizeof(*c));
	c->gw = gw;
	c->d.rule = -1;
	gw_now(c->started);
	c->next = gw->conns;
	if (gw->conns)
		gw->conns->prev = c;
	gw->conns = c;
	gw->n_conns++;
	bound_socket(fd);
	c->cli = bufferevent_socket_new(gw->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (!c->cli) {
		close(fd);
		c->gw_reason = "socket_failed";
		conn_finish(c);
		return;
	}
	/* First the head deadline; handle_head re-arms it as the lifetime. */
	c->total_timer = evtimer_new(gw->base, total_timeout, c);
	struct timeval head_deadline = {.tv_sec = AG_GW_HEADER_SECS};
	evtimer_add(c->total_timer, &head_deadline);
	if (gw->n_conns > (size_t)gw->opts.max_connections) {
		c->gw_reason_forced = true;
		refuse_gw(c, 503, "Service Unavailable", "connection_limit");
		return;
	}
	if (gw->stream.broken || gw->aggs.broken) {
		/* Nothing may pass that cannot be recorded. */
		c->gw_reason_forced = true;
		refuse_gw(c, 503, "Service Unavailable", "evidence_lost");
		return;
	}
	struct timeval head = {.tv_sec = AG_GW_HEADER_SECS};
	bufferevent_set_timeouts(c->cli, &head, &head);
	bufferevent_setwatermark(c->cli, EV_READ, 0, AG_GW_HEADER_MAX + 1);
	bufferevent_setcb(c->cli, head_read, NULL, head_event, c);
	bufferevent_enable(c->cli, EV_READ | EV_WRITE);
}

int gw_parse_hostport(const char *s, int defport, struct sockaddr_storage *ss, socklen_t *len)
{
	char host[AG_EGRESS_ADDR_TEXT_MAX];
	const char *port = NULL;
	if (s[0] == '[') {
		const char *rb = strchr(s, ']');
		if (!rb || (size_t)(rb - s - 1) >= sizeof(host))
			return -1;
		memcpy(host, s + 1, (size_t)(rb - s - 1));
		host[rb - s - 1] = 0;
		if (rb[1] == ':')
			port = rb + 2;
		else if (rb[1])
			return -1;
	} else {
		const char *colon = strchr(s, ':');
		if (colon && strchr(colon + 1, ':'))
			colon = NULL; /* bare IPv6 */
		size_t hl = colon ? (size_t)(colon - s) : strlen(s);
		if (hl >= sizeof(host))
			return -1;
		memcpy(host, s, hl);
		host[hl] = 0;
		if (colon)
			port = colon + 1;
	}
	int64_t p = defport;
	if (port && (ag_parse_i64(port, &p) < 0 || p < 1 || p > 65535))
		return -1;
	struct ag_egress_addr a;
	if (ag_egress_addr_parse(host, &a) < 0)
		return -1;
	*len = to_sockaddr(&a, (int)p, ss);
	return 0;
}
