/*
 * terminate.c: the terminated tunnels of credential injection (issue 21,
 * gateway.h, docs/study-egress.md "Credential injection").
 *
 * A CONNECT to a destination whose rule has an inject comes here once its
 * connection to the checked address is made and the 200 is sent: the
 * agent's TLS is accepted with a leaf for exactly that name, signed by the
 * trial's CA (ALPN offers http/1.1 only; an SNI naming anything else ends
 * the tunnel), and the gateway's own TLS to the destination verifies the
 * destination's certificate against --upstream-ca and the name. Then each
 * request head from the agent is rewritten (lib/egress/inject.h: its
 * credential headers out, the real one in, Host must be the name) and its
 * Content-Length body passed on unchanged; the destination's bytes go back
 * unchanged. A refused head gets its status over the agent's TLS and ends
 * the tunnel. Header values and bodies are never logged or recorded.
 *
 * Memory: both directions pause reading while the other side holds
 * AG_GW_RELAY_HIGHWATER bytes; OpenSSL's buffers are released while idle.
 */
#include "lib/base/ag.h"
#include "lib/base/error.h"
#include "lib/base/fsx.h"
#include "lib/base/json.h"
#include "lib/egress/ca.h"
#include "lib/egress/inject.h"
#include "lib/egress/policy.h"
#include "gateway/gateway.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

/* ---- the inject file and the TLS contexts ---- */

static const unsigned char alpn_h1[] = "\x08http/1.1";

/* Offers the agent http/1.1 or nothing: a client that offers only h2
 * (or anything else) gets a fatal alert. */
static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
		       const unsigned char *in, unsigned int inlen, void *arg)
{
	(void)ssl, (void)arg;
	for (unsigned i = 0; i < inlen;) {
		unsigned l = in[i];
		if (i + 1 + l > inlen)
			break;
		if (l == 8 && memcmp(in + i + 1, "http/1.1", 8) == 0) {
			*out = in + i + 1;
			*outlen = 8;
			return SSL_TLSEXT_ERR_OK;
		}
		i += 1 + l;
	}
	return SSL_TLSEXT_ERR_ALERT_FATAL;
}

static SSL_CTX *server_ctx(X509 *leaf, EVP_PKEY *key, X509 *ca)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
	if (!ctx || !SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) ||
	    SSL_CTX_use_certificate(ctx, leaf) != 1 || SSL_CTX_use_PrivateKey(ctx, key) != 1 ||
	    SSL_CTX_add1_chain_cert(ctx, ca) != 1 || SSL_CTX_check_private_key(ctx) != 1) {
		SSL_CTX_free(ctx);
		return NULL;
	}
	SSL_CTX_set_alpn_select_cb(ctx, alpn_select, NULL);
	SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_TICKET);
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	return ctx;
}

static SSL_CTX *client_ctx(const char *bundle)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	if (!ctx || !SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) ||
	    SSL_CTX_load_verify_locations(ctx, bundle, NULL) != 1 ||
	    SSL_CTX_set_alpn_protos(ctx, alpn_h1, sizeof(alpn_h1) - 1) != 0) {
		SSL_CTX_free(ctx);
		return NULL;
	}
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
	return ctx;
}

static void secret_free(char *s)
{
	if (s) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

void gw_inject_free(struct gw_inject *in)
{
	if (!in)
		return;
	for (size_t i = 0; i < in->n; i++) {
		secret_free(in->hosts[i].value);
		SSL_CTX_free(in->hosts[i].server);
	}
	SSL_CTX_free(in->client);
	free(in);
}

static int inject_fail(const char *why)
{
	fprintf(stderr, "agentguard-gateway: the inject file is not usable: %s [gateway.inject]\n",
		why);
	return -1;
}

/* PEM text of one certificate or key from a JSON string member. */
static BIO *pem_bio(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	return json_is_string(v) ? BIO_new_mem_buf(json_string_value(v), (int)json_string_length(v))
				 : NULL;
}

int gw_inject_load(struct gw *gw, const char *path, const char *bundle)
{
	static const struct ag_read_reasons why = {"gateway.inject", "gateway.inject",
						   "gateway.inject", "gateway.inject"};
	char *data = NULL;
	size_t len = 0;
	struct ag_error *e = NULL;
	if (ag_read_file_at(AT_FDCWD, path, "inject file", AG_GW_INJECT_FILE_MAX, &why, &data, &len,
			    &e) < 0) {
		ag_error_free(e);
		return inject_fail("it cannot be read (or is too large)");
	}
	json_error_t je;
	json_t *root = json_loadb(data, len, JSON_REJECT_DUPLICATES, &je);
	explicit_bzero(data, len);
	free(data);
	struct gw_inject *in = ag_xcalloc(1, sizeof(*in));
	X509 *ca = NULL;
	EVP_PKEY *ca_key = NULL, *leaf_key = NULL;
	int rc = -1;
	const char *fail = "it is not a JSON object with ca_cert, ca_key and credentials";
	BIO *b = root ? pem_bio(root, "ca_cert") : NULL;
	ca = b ? PEM_read_bio_X509(b, NULL, NULL, NULL) : NULL;
	BIO_free(b);
	b = root ? pem_bio(root, "ca_key") : NULL;
	ca_key = b ? PEM_read_bio_PrivateKey(b, NULL, NULL, NULL) : NULL;
	BIO_free(b);
	const json_t *creds = root ? json_object_get(root, "credentials") : NULL;
	if (!ca || !ca_key || !json_is_array(creds))
		goto out;
	fail = "the CA key is not the CA certificate's";
	if (X509_check_private_key(ca, ca_key) != 1)
		goto out;
	fail = "cannot make a leaf key";
	if (!(leaf_key = ag_egress_key_new()))
		goto out;
	fail = "cannot read the upstream CA bundle";
	if (!(in->client = client_ctx(bundle)))
		goto out;
	size_t i;
	const json_t *c;
	json_array_foreach(creds, i, c)
	{
		fail = "a credential is not {host, port, value} for an inject rule of the policy";
		const char *host = json_string_value(json_object_get(c, "host"));
		const char *value = json_string_value(json_object_get(c, "value"));
		json_int_t port = json_integer_value(json_object_get(c, "port"));
		const struct ag_egress_rule *r =
		    host ? ag_egress_policy_find(gw->policy, host, (int)port) : NULL;
		if (!r || !r->inject || !value || in->n >= AG_EGRESS_INJECT_MAX ||
		    gw_inject_find(in, host, (int)port) ||
		    strlen(value) > AG_EGRESS_CREDENTIAL_MAX + AG_EGRESS_INJECT_PREFIX_MAX ||
		    strpbrk(value, "\r\n"))
			goto out;
		struct gw_inject_host *h = &in->hosts[in->n];
		h->rule = r;
		h->value = ag_xstrdup(value);
		in->n++;
		fail = "cannot make the leaf certificate";
		X509 *leaf = ag_egress_leaf_new(ca, ca_key, leaf_key, r->dest.host);
		h->server = leaf ? server_ctx(leaf, leaf_key, ca) : NULL;
		X509_free(leaf);
		if (!h->server)
			goto out;
	}
	fail = "the policy's inject rules and the credentials differ";
	if (in->n != gw->policy->n_inject)
		goto out;
	fail = "cannot hash the CA certificate";
	if (ag_egress_cert_sha256(ca, in->ca_sha256) < 0)
		goto out;
	rc = 0;
out:
	/* the key's and the credentials' text, gone from the parsed tree */
	ag_json_wipe_strings(root);
	json_decref(root);
	X509_free(ca);
	EVP_PKEY_free(ca_key);
	EVP_PKEY_free(leaf_key);
	if (rc < 0) {
		gw_inject_free(in);
		return inject_fail(fail);
	}
	gw->inject = in;
	return 0;
}

const struct gw_inject_host *gw_inject_find(const struct gw_inject *in, const char *host, int port)
{
	for (size_t i = 0; in && i < in->n; i++)
		if (in->hosts[i].rule->dest.port == port &&
		    strcmp(in->hosts[i].rule->dest.host, host) == 0)
			return &in->hosts[i];
	return NULL;
}

/* ---- one terminated tunnel ---- */

enum side { CLI = 0, UP = 1 };

struct gw_term {
	struct gw *gw;
	const struct gw_inject_host *h;
	struct bufferevent *b[2];
	bool handshaken[2];
	int64_t *bytes_out, *bytes_in;
	struct gw_term_stats *st;
	gw_tunnel_done_fn done;
	void *arg;
	int64_t body_left;	/* bytes of the current request body still to pass */
	const char *end_reason; /* set: flushing the last bytes to one side, then the end */
	/* requests and bytes queued before the destination's TLS was up:
	 * counted (and the header recorded as injected) only once it is, so a
	 * destination that fails verification never shows a request sent */
	int64_t queued_requests, queued_bytes;
	bool finished;
};

/* N bytes handed to the destination's side (counted once it is up). */
static void sent_up(struct gw_term *t, int64_t n, bool request)
{
	if (t->handshaken[UP]) {
		*t->bytes_out += n;
		t->st->requests += request;
	} else {
		t->queued_bytes += n;
		t->queued_requests += request;
	}
}

static void cli_read(struct bufferevent *bev, void *arg);

static void finish(struct gw_term *t, const char *reason)
{
	if (t->finished)
		return;
	t->finished = true;
	for (int i = 0; i < 2; i++)
		if (t->b[i])
			bufferevent_disable(t->b[i], EV_READ | EV_WRITE);
	t->done(t->arg, reason); /* frees t (gw_term_free) */
}

static void flushed(struct bufferevent *bev, void *arg)
{
	struct gw_term *t = arg;
	if (evbuffer_get_length(bufferevent_get_output(bev)) == 0)
		finish(t, t->end_reason);
}

static const char *tls_word(struct bufferevent *bev, enum side s);
static void handshaken(struct gw_term *t, enum side s);

static void end_event(struct bufferevent *bev, short what, void *arg)
{
	struct gw_term *t = arg;
	enum side s = bev == t->b[CLI] ? CLI : UP;
	if (what & BEV_EVENT_CONNECTED) {
		/* the handshake finished: what is queued goes out now */
		handshaken(t, s);
		if (evbuffer_get_length(bufferevent_get_output(bev)) == 0)
			finish(t, t->end_reason);
		return;
	}
	if (!t->handshaken[s] && (what & (BEV_EVENT_ERROR | BEV_EVENT_EOF)) && !t->st->tls_error)
		t->st->tls_error = tls_word(bev, s);
	finish(t, t->end_reason);
}

static void discard(struct bufferevent *bev, void *arg)
{
	(void)arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	evbuffer_drain(in, evbuffer_get_length(in));
}

/* Nothing more is relayed; what SIDE still has to send goes out (bounded
 * by the idle time), then the tunnel ends with REASON. SIDE keeps reading,
 * and drops what it reads: its TLS handshake may still need to finish. */
static void end_after_flush(struct gw_term *t, enum side side, const char *reason)
{
	t->end_reason = reason;
	if (t->b[1 - side])
		bufferevent_disable(t->b[1 - side], EV_READ);
	struct bufferevent *b = t->b[side];
	if (!b || (t->handshaken[side] && evbuffer_get_length(bufferevent_get_output(b)) == 0)) {
		finish(t, reason);
		return;
	}
	bufferevent_setwatermark(b, EV_WRITE, 0, 0);
	bufferevent_setwatermark(b, EV_READ, 0, AG_GW_RELAY_READ_MAX);
	bufferevent_setcb(b, discard, flushed, end_event, t);
	bufferevent_enable(b, EV_READ | EV_WRITE);
}

/* A status of the gateway's own to the agent, over its TLS, then the end;
 * the destination's side is closed at once. */
static void answer_and_end(struct gw_term *t, int status, const char *text, const char *word)
{
	if (t->b[UP]) {
		bufferevent_free(t->b[UP]);
		t->b[UP] = NULL;
	}
	evbuffer_add_printf(bufferevent_get_output(t->b[CLI]),
			    "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nConnection: close\r\n"
			    "X-AgentGuard-Reason: %s\r\nContent-Length: %zu\r\n\r\n"
			    "agentguard-gateway: %s\n",
			    status, text, word, strlen("agentguard-gateway: \n") + strlen(word),
			    word);
	end_after_flush(t, CLI, "refused_in_tunnel");
}

static void refuse_inner(struct gw_term *t, const struct ag_egress_inject_result *res)
{
	if (!t->st->refusal)
		t->st->refusal = res->detail;
	t->st->refused++;
	answer_and_end(t, res->status, res->status_text, res->detail);
}

static void pause_if_full(struct gw_term *t, enum side from)
{
	struct bufferevent *to = t->b[1 - from];
	if (to && evbuffer_get_length(bufferevent_get_output(to)) >= AG_GW_RELAY_HIGHWATER) {
		bufferevent_setwatermark(to, EV_WRITE, AG_GW_RELAY_HIGHWATER / 2, 0);
		bufferevent_disable(t->b[from], EV_READ);
	}
}

static const struct ag_egress_inject_result too_large = {-1, "header_too_large", 431,
							 "Request Header Fields Too Large"};

/* One request head from IN, rewritten into the destination's output.
 * 1: done, more may follow; 0: the head is not complete yet; -1: refused
 * (the tunnel is ending). */
static int one_head(struct gw_term *t, struct evbuffer *in)
{
	struct evbuffer_ptr p = evbuffer_search(in, "\r\n\r\n", 4, NULL);
	if (p.pos < 0 && evbuffer_get_length(in) < AG_GW_HEADER_MAX)
		return 0;
	if (p.pos < 0 || (size_t)p.pos + 4 > AG_GW_HEADER_MAX) {
		refuse_inner(t, &too_large);
		return -1;
	}
	size_t n = (size_t)p.pos + 4;
	char *head = ag_xmalloc(n + 1);
	evbuffer_remove(in, head, n);
	head[n] = 0;
	struct ag_buf nb =
	    AG_BUF_INIT(AG_GW_HEADER_MAX + AG_EGRESS_INJECT_HEADER_MAX +
			    AG_EGRESS_INJECT_PREFIX_MAX + AG_EGRESS_CREDENTIAL_MAX + 8,
			"gateway.inject.head");
	struct ag_egress_inject_result res;
	const struct ag_egress_rule *r = t->h->rule;
	int rc = ag_egress_inject_rewrite(head, n, r->dest.host, r->dest.port, r->inject->header,
					  t->h->value, &nb, &res);
	explicit_bzero(head, n);
	free(head);
	if (rc == 0) {
		evbuffer_add(bufferevent_get_output(t->b[UP]), nb.buf, nb.len);
		sent_up(t, (int64_t)nb.len, true);
		t->body_left = res.content_length > 0 ? res.content_length : 0;
	}
	if (nb.buf)
		explicit_bzero(nb.buf, nb.len);
	ag_buf_release(&nb);
	if (rc < 0) {
		refuse_inner(t, &res);
		return -1;
	}
	return 1;
}

/* The agent's bytes: heads rewritten, bodies passed on unchanged. */
static void cli_read(struct bufferevent *bev, void *arg)
{
	struct gw_term *t = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	while (!t->end_reason && evbuffer_get_length(in) > 0) {
		/* the destination's side holds its bound: the rest waits (each
		 * rewritten head adds the credential line, so pipelined heads
		 * must not all be rewritten at once) */
		if (evbuffer_get_length(bufferevent_get_output(t->b[UP])) >= AG_GW_RELAY_HIGHWATER)
			break;
		if (t->body_left > 0) {
			size_t n = evbuffer_get_length(in);
			if ((int64_t)n > t->body_left)
				n = (size_t)t->body_left;
			evbuffer_remove_buffer(in, bufferevent_get_output(t->b[UP]), n);
			t->body_left -= (int64_t)n;
			sent_up(t, (int64_t)n, false);
			continue;
		}
		int r = one_head(t, in);
		if (r < 0)
			return;
		if (r == 0)
			break;
	}
	if (!t->end_reason)
		pause_if_full(t, CLI);
}

/* The destination's bytes go back unchanged. */
static void up_read(struct bufferevent *bev, void *arg)
{
	struct gw_term *t = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	size_t n = evbuffer_get_length(in);
	if (t->end_reason)
		return;
	evbuffer_add_buffer(bufferevent_get_output(t->b[CLI]), in);
	*t->bytes_in += (int64_t)n;
	pause_if_full(t, UP);
}

/* Output fell below the mark: the other side reads again. */
static void drained(struct bufferevent *bev, void *arg)
{
	struct gw_term *t = arg;
	enum side s = bev == t->b[CLI] ? CLI : UP;
	if (!t->end_reason && t->b[1 - s]) {
		bufferevent_setwatermark(bev, EV_WRITE, 0, 0);
		bufferevent_enable(t->b[1 - s], EV_READ);
		/* heads the agent sent while paused are already read in */
		if (s == UP && evbuffer_get_length(bufferevent_get_input(t->b[CLI])) > 0)
			cli_read(t->b[CLI], t);
	}
}

/* SIDE's TLS session is up. The agent's: its TLS is terminated here. The
 * destination's: what was queued for it now counts as sent. */
static void handshaken(struct gw_term *t, enum side s)
{
	t->handshaken[s] = true;
	if (s == CLI) {
		t->st->terminated = true;
	} else {
		*t->bytes_out += t->queued_bytes;
		t->st->requests += t->queued_requests;
		t->queued_bytes = t->queued_requests = 0;
	}
}

/* Why a TLS session failed, as one word (never the peer's text). */
static const char *tls_word(struct bufferevent *bev, enum side s)
{
	SSL *ssl = bufferevent_openssl_get_ssl(bev);
	if (s == UP && ssl && SSL_get_verify_result(ssl) != X509_V_OK)
		return "destination_certificate_unverified";
	unsigned long e;
	bool alpn = false;
	while ((e = bufferevent_get_openssl_error(bev)) != 0)
		alpn = alpn || ERR_GET_REASON(e) == SSL_R_NO_APPLICATION_PROTOCOL;
	if (s == CLI && alpn)
		return "client_alpn_refused";
	return s == CLI ? "client_tls_failed" : "destination_tls_failed";
}

static void on_event(struct bufferevent *bev, short what, void *arg)
{
	struct gw_term *t = arg;
	enum side s = bev == t->b[CLI] ? CLI : UP;
	if (what & BEV_EVENT_CONNECTED) {
		handshaken(t, s);
		const char *sni = s == CLI ? SSL_get_servername(bufferevent_openssl_get_ssl(bev),
								TLSEXT_NAMETYPE_host_name)
					   : NULL;
		if (sni && strcasecmp(sni, t->h->rule->dest.host) != 0) {
			/* the agent asked for another name than its CONNECT's */
			t->st->tls_error = "client_sni_mismatch";
			finish(t, "client_error");
		}
		return;
	}
	if (!t->handshaken[s] && (what & (BEV_EVENT_ERROR | BEV_EVENT_EOF))) {
		t->st->tls_error = tls_word(bev, s);
		if (s == UP)
			answer_and_end(t, 502, "Bad Gateway", t->st->tls_error);
		else
			finish(t, "client_error");
		return;
	}
	if (what & BEV_EVENT_TIMEOUT) {
		finish(t, "idle_timeout");
		return;
	}
	if (what & BEV_EVENT_ERROR) {
		finish(t, s == CLI ? "client_error" : "destination_error");
		return;
	}
	/* end of file: what is buffered for the other side goes first */
	if (s == UP)
		up_read(bev, t);
	end_after_flush(t, (enum side)(1 - s), s == CLI ? "client_closed" : "destination_closed");
}

/* A bufferevent over its own TLS session and its own descriptor (a dup of
 * the connection's socket: freeing it frees the session and closes the dup
 * only). */
static struct bufferevent *tls_side(struct event_base *base, int fd, SSL *ssl,
				    enum bufferevent_ssl_state state)
{
	int d = ssl ? fcntl(fd, F_DUPFD_CLOEXEC, 3) : -1;
	struct bufferevent *b =
	    d >= 0 ? bufferevent_openssl_socket_new(base, d, ssl, state, BEV_OPT_CLOSE_ON_FREE)
		   : NULL;
	if (!b) {
		if (d >= 0)
			close(d);
		SSL_free(ssl);
	}
	return b;
}

struct gw_term *gw_term_start(struct gw *gw, int cfd, int ufd, const struct gw_inject_host *h,
			      int64_t *bytes_out, int64_t *bytes_in, struct gw_term_stats *st,
			      gw_tunnel_done_fn done, void *arg)
{
	struct gw_term *t = ag_xcalloc(1, sizeof(*t));
	t->gw = gw;
	t->h = h;
	t->bytes_out = bytes_out;
	t->bytes_in = bytes_in;
	t->st = st;
	t->done = done;
	t->arg = arg;
	SSL *us = SSL_new(gw->inject->client);
	if (us && (SSL_set_tlsext_host_name(us, h->rule->dest.host) != 1 ||
		   SSL_set1_host(us, h->rule->dest.host) != 1)) {
		SSL_free(us);
		us = NULL;
	}
	if (us)
		X509_VERIFY_PARAM_set_hostflags(SSL_get0_param(us),
						X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
	t->b[CLI] = tls_side(gw->base, cfd, SSL_new(h->server), BUFFEREVENT_SSL_ACCEPTING);
	t->b[UP] = tls_side(gw->base, ufd, us, BUFFEREVENT_SSL_CONNECTING);
	if (!t->b[CLI] || !t->b[UP]) {
		gw_term_free(t);
		return NULL;
	}
	struct timeval idle = {.tv_sec = gw->opts.idle_secs};
	bufferevent_setcb(t->b[CLI], cli_read, drained, on_event, t);
	bufferevent_setcb(t->b[UP], up_read, drained, on_event, t);
	for (int i = 0; i < 2; i++) {
		bufferevent_set_timeouts(t->b[i], &idle, &idle);
		bufferevent_setwatermark(t->b[i], EV_READ, 0, AG_GW_RELAY_READ_MAX);
		bufferevent_enable(t->b[i], EV_READ | EV_WRITE);
	}
	return t;
}

void gw_term_free(struct gw_term *t)
{
	if (!t)
		return;
	for (int i = 0; i < 2; i++)
		if (t->b[i])
			bufferevent_free(t->b[i]);
	free(t);
}
