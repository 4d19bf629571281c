/*
 * engine.c: the Engine API transport (engine.h): socket verification,
 * SO_PEERCRED on every connection, bounded and timed requests, typed
 * status errors, and attach+start with stream demultiplexing.
 */
#include "lib/base/ag.h"
#include "lib/docker/engine.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"
#include "lib/base/sanitize.h"
#include "lib/docker/docker_json.h"

#include <curl/curl.h>
#include "lib/base/lazylib.h"
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void curl_init_once(void)
{
	if (curl_global_init(CURL_GLOBAL_NOTHING) != CURLE_OK)
		abort();
}

const char *ag_engine_libcurl_version(void)
{
	struct ag_error *e = NULL;
	if (ag_lazy_curl_load(&e) < 0) {
		ag_error_free(e);
		return "not loadable";
	}
	pthread_once(&curl_once, curl_init_once);
	const curl_version_info_data *v = curl_version_info(CURLVERSION_NOW);
	return v && v->version ? v->version : "unknown";
}

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- socket verification ---- */

/* Root-owned and nobody else may write (a sticky directory is accepted). */
static bool dir_safe(const struct stat *st)
{
	if (!S_ISDIR(st->st_mode) || st->st_uid != 0)
		return false;
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) && !(st->st_mode & S_ISVTX))
		return false;
	return true;
}

static int check_dirs(const char *canon, struct ag_error **err)
{
	_cleanup_free_ char *p = ag_xstrdup(canon);
	size_t len = strlen(p);
	for (size_t i = 0; i < len; i++) {
		if (p[i] != '/')
			continue;
		char saved = p[i + 1];
		p[i + 1] = '\0';
		if (i > 0)
			p[i] = '\0';
		struct stat st;
		int r = lstat(p, &st);
		bool ok = r == 0 && dir_safe(&st);
		p[i] = '/';
		p[i + 1] = saved;
		if (!ok)
			return ag_err(err, AG_E_UNVERIFIED, r < 0 ? errno : 0,
				      "docker.socket.unsafe",
				      "the Docker socket: a directory on its path is not "
				      "root-owned or is writable by others");
	}
	return 0;
}

static int verify_socket(const char *path, char **canon_out, struct ag_error **err)
{
	if (!path || path[0] != '/')
		return ag_err(err, AG_E_USAGE, 0, "docker.socket.not_absolute",
			      "the Docker socket must be named by an absolute path");
	_cleanup_free_ char *canon = realpath(path, NULL);
	if (!canon) {
		int e = errno;
		if (e == ENOENT || e == ENOTDIR)
			return ag_err(err, AG_E_DOCKER, e, "docker.socket.missing",
				      "no Docker socket at the configured path");
		return ag_err(err, AG_E_UNVERIFIED, e, "docker.socket.unsafe",
			      "the Docker socket cannot be resolved: %s", strerror(e));
	}
	if (strlen(canon) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return ag_err(err, AG_E_UNVERIFIED, 0, "docker.socket.unsafe",
			      "the Docker socket path is too long");
	if (check_dirs(canon, err) < 0)
		return -1;
	struct stat st;
	if (lstat(canon, &st) < 0)
		return ag_err(err, AG_E_DOCKER, errno, "docker.socket.missing",
			      "no Docker socket at the configured path");
	if (!S_ISSOCK(st.st_mode))
		return ag_err(err, AG_E_UNVERIFIED, 0, "docker.socket.unsafe",
			      "the Docker socket path is not a socket");
	if (st.st_uid != 0)
		return ag_err(err, AG_E_UNVERIFIED, 0, "docker.socket.unsafe",
			      "the Docker socket is not owned by root");
	if (st.st_mode & S_IWOTH)
		return ag_err(err, AG_E_UNVERIFIED, 0, "docker.socket.unsafe",
			      "the Docker socket is writable by others");
	*canon_out = ag_steal_ptr(&canon);
	return 0;
}

int ag_verify_root_file(const char *path, char **canon_out, struct ag_error **err)
{
	if (!path || path[0] != '/')
		return ag_err(err, AG_E_USAGE, 0, "preflight.probe_binary.not_absolute",
			      "the probe binary must be named by an absolute path");
	_cleanup_free_ char *canon = realpath(path, NULL);
	if (!canon)
		return ag_err(err, AG_E_DOCKER, errno, "preflight.probe_binary.missing",
			      "the preflight probe binary is not installed beside agentguard");
	struct ag_error *e = NULL;
	if (check_dirs(canon, &e) < 0) {
		ag_error_free(e);
		return ag_err(err, AG_E_UNVERIFIED, 0, "preflight.probe_binary.unsafe",
			      "the probe binary: a directory on its path is not root-owned or is "
			      "writable by others");
	}
	struct stat st;
	if (lstat(canon, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & (S_IWGRP | S_IWOTH)) || !(st.st_mode & S_IXOTH))
		return ag_err(err, AG_E_UNVERIFIED, 0, "preflight.probe_binary.unsafe",
			      "the probe binary is not a root-owned executable file that only "
			      "root can write");
	*canon_out = ag_steal_ptr(&canon);
	return 0;
}

/* ---- connections: made here, peer checked before the first byte ---- */

/* Called by libcurl once connected, before the request's first byte. */
struct prereq {
	struct ag_engine *e;
	int *fd; /* the handle's socket, recorded when libcurl creates it */
};

static int record_socket(void *data, curl_socket_t fd, curlsocktype purpose)
{
	(void)purpose;
	struct prereq *q = data;
	*q->fd = (int)fd;
	return CURL_SOCKOPT_OK;
}

static int peer_check(void *data, char *conn_primary_ip, char *conn_local_ip, int primary,
		      int local)
{
	(void)conn_primary_ip;
	(void)conn_local_ip;
	(void)primary;
	(void)local;
	struct prereq *q = data;
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	if (*q->fd < 0 || getsockopt(*q->fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0 ||
	    cl != sizeof(cred) || cred.uid != 0) {
		q->e->peer_refused = true;
		return CURL_PREREQFUNC_ABORT;
	}
	return CURL_PREREQFUNC_OK;
}

struct sink {
	struct ag_buf *b;
	bool over;
};

static size_t write_bounded(char *p, size_t size, size_t n, void *data)
{
	struct sink *s = data;
	size_t len = size * n;
	struct ag_error *e = NULL;
	if (ag_buf_add(s->b, p, len, &e) < 0) {
		ag_error_free(e);
		s->over = true;
		return 0; /* stop: CURLE_WRITE_ERROR */
	}
	return len;
}

static void setup_handle(struct ag_engine *e, CURL *h, struct prereq *q, int *fd,
			 const char *method, const char *url, unsigned timeout_ms)
{
	q->e = e;
	q->fd = fd;
	curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, e->socket);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(h, CURLOPT_SOCKOPTFUNCTION, record_socket);
	curl_easy_setopt(h, CURLOPT_SOCKOPTDATA, q);
	curl_easy_setopt(h, CURLOPT_PREREQFUNCTION, peer_check);
	curl_easy_setopt(h, CURLOPT_PREREQDATA, q);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http");
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(h, CURLOPT_PROXY, "");
	curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
	if (timeout_ms)
		curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)AG_DOCKER_CONTROL_TIMEOUT_MS);
}

/* What a request was, for a message: its path with any id or name in it
 * through the one sanitizer (a new string). */
static char *safe_what(const char *what)
{
	return ag_sanitize(NULL, AG_SANITIZE_ENGINE, what, strlen(what), AG_DOCKER_WHAT_MAX_BYTES);
}

static int transport_error(struct ag_engine *e, CURLcode c, bool over, size_t max,
			   const char *raw_what, struct ag_error **err)
{
	_cleanup_free_ char *what = safe_what(raw_what);
	if (over)
		return ag_err(err, AG_E_LIMIT, 0, "docker.response.too_large",
			      "%s: the daemon's answer is larger than %zu bytes", what, max);
	if (e->peer_refused)
		return ag_err(err, AG_E_UNVERIFIED, 0, "docker.engine.peer_not_root",
			      "%s: the process behind the Docker socket does not run as root",
			      what);
	switch (c) {
	case CURLE_OPERATION_TIMEDOUT:
		return ag_err(err, AG_E_DOCKER, 0, "docker.engine.timeout",
			      "%s: the daemon did not answer in time", what);
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
		return ag_err(err, AG_E_DOCKER, 0, "docker.engine.unavailable",
			      "%s: the Docker daemon cannot be reached", what);
	default:
		return ag_err(err, AG_E_DOCKER, 0, "docker.engine.dropped",
			      "%s: the connection to the daemon ended early (%s)", what,
			      curl_easy_strerror(c));
	}
}

void ag_engine_reply_init(struct ag_engine_reply *r)
{
	r->status = 0;
	ag_buf_init(&r->body, AG_PF_JSON_MAX_BYTES, "docker.response.too_large");
}

void ag_engine_reply_release(struct ag_engine_reply *r)
{
	ag_buf_release(&r->body);
	r->status = 0;
}

/*
 * A request that makes an object: a create (container, network, exec) or a
 * network connect. Sent once, never again by the transport: libcurl resends
 * a request whose kept-alive connection ends before one byte of answer
 * ("Connection died, retrying a fresh connect"), which for these would make
 * a second object or a conflict naming the first. So it goes on an easy
 * handle of its own, made for it and cleaned up after it: a new connection
 * (peer-checked like every other), which libcurl never retries on, and never
 * kept. A lost answer is the caller's to resolve, by the object's unique
 * label (ledger.h).
 */
static bool makes_object(const char *method, const char *path)
{
	if (strcmp(method, "POST") != 0)
		return false;
	size_t n = strcspn(path, "?");
	static const char *const tails[] = {"/create", "/exec", "/connect"};
	for (size_t i = 0; i < AG_ARRAY_SIZE(tails); i++) {
		size_t k = strlen(tails[i]);
		if (n >= k && memcmp(path + n - k, tails[i], k) == 0)
			return true;
	}
	return false;
}

/* One request's handle: the reused one, reset, or for a request that makes
 * an object a handle of its own (makes_object; its socket is recorded in
 * *once_fd, the caller cleans it up). Set up for the request; r emptied
 * (its body bounded by max, 0 = AG_PF_JSON_MAX_BYTES). NULL when closed. */
static CURL *begin_request(struct ag_engine *e, const char *method, const char *path,
			   unsigned timeout_ms, size_t max, struct ag_engine_reply *r,
			   struct prereq *q, int *once_fd, char **url, struct ag_error **err)
{
	if (!e || !e->curl) {
		ag_err(err, AG_E_INTERNAL, 0, "docker.engine.closed",
		       "the Docker engine connection is not open");
		return NULL;
	}
	bool once = makes_object(method, path);
	CURL *h = once ? curl_easy_init() : e->curl;
	if (!h)
		abort();
	if (!once)
		curl_easy_reset(h);
	ag_buf_release(&r->body);
	ag_buf_init(&r->body, max ? max : AG_PF_JSON_MAX_BYTES, "docker.response.too_large");
	r->status = 0;
	*url = ag_xasprintf("http://docker" AG_ENGINE_API_PATH "%s", path);
	*once_fd = -1;
	setup_handle(e, h, q, once ? once_fd : &e->sock_fd, method, *url,
		     timeout_ms ? timeout_ms : AG_DOCKER_CONTROL_TIMEOUT_MS);
	return h;
}

/* Ends a request's handle: the reused one stays, a handle of its own goes. */
static void end_request(struct ag_engine *e, CURL *h)
{
	if (h && h != e->curl)
		curl_easy_cleanup(h);
}

int ag_engine_call(struct ag_engine *e, const char *method, const char *path, const json_t *body,
		   unsigned timeout_ms, size_t max, struct ag_engine_reply *r,
		   struct ag_error **err)
{
	struct prereq q;
	int once_fd;
	_cleanup_free_ char *url = NULL;
	CURL *h = begin_request(e, method, path, timeout_ms, max, r, &q, &once_fd, &url, err);
	if (!h)
		return -1;
	struct sink s = {&r->body, false};
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, write_bounded);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
	struct curl_slist *hdr = NULL;
	_cleanup_free_ char *payload = NULL;
	if (body) {
		payload = json_dumps(body, JSON_COMPACT);
		if (!payload) {
			end_request(e, h);
			return ag_err(err, AG_E_INTERNAL, 0, "docker.engine.body",
				      "the request body cannot be serialized");
		}
		hdr = curl_slist_append(hdr, "Content-Type: application/json");
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, payload);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(payload));
	} else if (strcmp(method, "POST") == 0) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, "");
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, 0L);
	}
	hdr = curl_slist_append(hdr, "Expect:");
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	e->peer_refused = false;
	CURLcode c = curl_easy_perform(h);
	curl_slist_free_all(hdr);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
	if (c == CURLE_OK)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
	end_request(e, h);
	if (c != CURLE_OK)
		return transport_error(e, c, s.over, r->body.max, path, err);
	return 0;
}

/* ---- a streamed answer: a 2xx body goes to the caller's sink ---- */

struct stream_sink {
	CURL *h;
	int mode; /* 0 undecided, 1 sink (2xx), 2 buffer (any other status) */
	ag_engine_sink_fn fn;
	void *data;
	struct ag_buf *errbody;
	uint64_t total, max;
	bool over, stopped;
};

static size_t write_stream(char *p, size_t size, size_t n, void *data)
{
	struct stream_sink *s = data;
	size_t len = size * n;
	if (s->mode == 0) {
		long st = 0;
		curl_easy_getinfo(s->h, CURLINFO_RESPONSE_CODE, &st);
		s->mode = st >= 200 && st < 300 ? 1 : 2;
	}
	if (s->mode == 2) {
		struct ag_error *e = NULL;
		if (ag_buf_add(s->errbody, p, len, &e) < 0) {
			ag_error_free(e);
			s->over = true;
			return 0;
		}
		return len;
	}
	if (len > s->max - s->total) {
		s->over = true;
		return 0; /* stop: CURLE_WRITE_ERROR */
	}
	s->total += len;
	if (s->fn(p, len, s->data) < 0) {
		s->stopped = true;
		return 0;
	}
	return len;
}

int ag_engine_get_stream(struct ag_engine *e, const char *path, unsigned timeout_ms, uint64_t max,
			 ag_engine_sink_fn sink, void *data, struct ag_engine_reply *r,
			 struct ag_error **err)
{
	struct prereq q;
	int once_fd;
	_cleanup_free_ char *url = NULL;
	CURL *h = begin_request(e, "GET", path, timeout_ms, 0, r, &q, &once_fd, &url, err);
	if (!h)
		return -1;
	struct stream_sink s = {.h = h, .fn = sink, .data = data, .errbody = &r->body, .max = max};
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, write_stream);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
	e->peer_refused = false;
	CURLcode c = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
	if (s.stopped || (s.over && s.mode == 1)) {
		_cleanup_free_ char *what = safe_what(path);
		if (s.stopped)
			return ag_err(err, AG_E_DOCKER, 0, "docker.response.sink_stopped",
				      "%s: the reader of the answer stopped", what);
		return ag_err(err, AG_E_LIMIT, 0, "docker.response.too_large",
			      "%s: the daemon's answer is larger than %llu bytes", what,
			      (unsigned long long)max);
	}
	if (c != CURLE_OK)
		return transport_error(e, c, s.over, r->body.max, path, err);
	return 0;
}

int ag_engine_status_error(const struct ag_engine_reply *r, const char *what, struct ag_error **err)
{
	if (r->status >= 200 && r->status < 300)
		return 0;
	/* The daemon's {"message": ...}, through the one sanitizer: no id, no
	 * other object's name, no host path or secret shape, one bounded line. */
	char *msg = NULL;
	json_t *v = NULL;
	struct ag_error *pe = NULL;
	if (r->body.len && ag_docker_json_parse(r->body.buf, r->body.len, false, NULL,
						AG_DOCKER_JSON_OBJECT, &v, &pe) == 0) {
		const char *m = json_string_value(json_object_get(v, "message"));
		if (m)
			msg = ag_sanitize(NULL, AG_SANITIZE_ENGINE, m, strlen(m),
					  AG_PF_DIAGNOSTIC_MAX_BYTES);
	}
	ag_error_free(pe);
	json_decref(v);
	const char *reason = r->status == 404	? "docker.api.not_found"
			     : r->status == 409 ? "docker.api.conflict"
			     : r->status >= 500 ? "docker.api.daemon_error"
						: "docker.api.status";
	char *w = safe_what(what);
	ag_err(err, AG_E_DOCKER, 0, reason, "%s: the daemon answered %ld%s%s", w, r->status,
	       msg ? ": " : "", msg ? msg : "");
	free(w);
	free(msg);
	return -1;
}

int ag_engine_json(struct ag_engine *e, const char *method, const char *path, const json_t *body,
		   unsigned timeout_ms, const char *what, json_t **out, struct ag_error **err)
{
	struct ag_engine_reply r;
	ag_engine_reply_init(&r);
	int ret = -1;
	if (ag_engine_call(e, method, path, body, timeout_ms, AG_PF_JSON_MAX_BYTES, &r, err) < 0 ||
	    ag_engine_status_error(&r, what, err) < 0)
		goto out;
	ret = ag_docker_json_parse(r.body.buf, r.body.len, false, NULL, AG_DOCKER_JSON_OBJECT, out,
				   err);
out:
	ag_engine_reply_release(&r);
	return ret;
}

int ag_engine_do(struct ag_engine *e, const char *method, const char *path, unsigned timeout_ms,
		 long ok_status, const char *what, struct ag_error **err)
{
	struct ag_engine_reply r;
	ag_engine_reply_init(&r);
	int ret = -1;
	if (ag_engine_call(e, method, path, NULL, timeout_ms, AG_DOCKER_CONTROL_OUTPUT_MAX, &r,
			   err) < 0)
		goto out;
	if (ok_status && r.status == ok_status) {
		ret = 0;
		goto out;
	}
	ret = ag_engine_status_error(&r, what, err);
out:
	ag_engine_reply_release(&r);
	return ret;
}

char *ag_engine_escape(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(s);
	char *o = ag_xmalloc(3 * n + 1), *q = o;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '_' || c == '.' || c == '~') {
			*q++ = (char)c;
		} else {
			*q++ = '%';
			*q++ = hex[c >> 4];
			*q++ = hex[c & 15];
		}
	}
	*q = '\0';
	return o;
}

/* ---- open / close ---- */

int ag_engine_open(const char *requested, struct ag_engine *e, struct ag_error **err)
{
	*e = (struct ag_engine)AG_ENGINE_INIT;
	if (ag_lazy_curl_load(err) < 0)
		return -1;
	pthread_once(&curl_once, curl_init_once);
	char *canon = NULL;
	if (verify_socket(requested ? requested : AG_ENGINE_DEFAULT_SOCKET, &canon, err) < 0)
		return -1;
	e->socket = canon;
	e->sock_fd = -1;
	e->explicit_socket = requested != NULL;
	e->curl = curl_easy_init();
	if (!e->curl)
		abort();
	e->client =
	    ag_xasprintf("agentguard (Engine API 1.41, libcurl %s)", ag_engine_libcurl_version());
	struct ag_engine_reply r;
	ag_engine_reply_init(&r);
	int ret = ag_engine_call(e, "GET", "/_ping", NULL, 0, 64, &r, err);
	if (ret == 0 && (r.status != 200 || r.body.len != 2 || memcmp(r.body.buf, "OK", 2) != 0))
		ret = ag_err(err, AG_E_DOCKER, 0, "docker.engine.unavailable",
			     "the Docker daemon did not answer its ping");
	ag_engine_reply_release(&r);
	if (ret < 0)
		ag_engine_close(e);
	return ret;
}

void ag_engine_close(struct ag_engine *e)
{
	if (!e)
		return;
	if (e->curl)
		curl_easy_cleanup(e->curl);
	free(e->socket);
	free(e->client);
	*e = (struct ag_engine)AG_ENGINE_INIT;
}

/* ---- attach + start ---- */

void ag_engine_stream_init(struct ag_engine_stream *s)
{
	memset(s, 0, sizeof(*s));
	ag_buf_init(&s->out, SIZE_MAX, "run.output");
	ag_buf_init(&s->err, SIZE_MAX, "run.output");
}

void ag_engine_stream_release(struct ag_engine_stream *s)
{
	ag_buf_release(&s->out);
	ag_buf_release(&s->err);
}

struct demux {
	struct ag_engine_stream *s;
	const struct ag_engine_stream_opts *o;
	size_t out_max, err_max;
	unsigned char hdr[8];
	size_t hdr_got;
	uint64_t left; /* payload bytes left in the current frame */
	int stream;    /* 1 stdout, 2 stderr, other: dropped */
	bool headers_done;
	bool bad; /* not the raw-stream framing */
};

static void keep(struct demux *d, const char *p, size_t n)
{
	struct ag_buf *b = d->stream == 1 ? &d->s->out : d->stream == 2 ? &d->s->err : NULL;
	if (!b)
		return;
	size_t max = d->stream == 1 ? d->out_max : d->err_max;
	*(d->stream == 1 ? &d->s->stdout_total : &d->s->stderr_total) += n;
	bool *tr = d->stream == 1 ? &d->s->stdout_truncated : &d->s->stderr_truncated;
	size_t room = b->len < max ? max - b->len : 0;
	size_t take = n < room ? n : room;
	struct ag_error *e = NULL;
	if (take && ag_buf_add(b, p, take, &e) < 0)
		ag_error_free(e);
	if (take && d->o->on_output)
		d->o->on_output(d->o->on_output_data, d->stream, p, take);
	if (take < n && !*tr && d->o->on_output)
		d->o->on_output(d->o->on_output_data, d->stream, NULL, 0);
	if (take < n)
		*tr = true;
}

static size_t demux_write(char *p, size_t size, size_t nmemb, void *data)
{
	struct demux *d = data;
	size_t n = size * nmemb, i = 0;
	while (i < n) {
		if (d->left == 0) {
			d->hdr[d->hdr_got++] = (unsigned char)p[i++];
			if (d->hdr_got == 8) {
				d->hdr_got = 0;
				if (d->hdr[1] || d->hdr[2] || d->hdr[3] || d->hdr[0] > 2) {
					d->bad = true;
					return 0;
				}
				d->stream = d->hdr[0];
				d->left = ((uint64_t)d->hdr[4] << 24) |
					  ((uint64_t)d->hdr[5] << 16) | ((uint64_t)d->hdr[6] << 8) |
					  d->hdr[7];
			}
			continue;
		}
		size_t take = n - i < d->left ? n - i : (size_t)d->left;
		keep(d, p + i, take);
		i += take;
		d->left -= take;
	}
	return n;
}

static size_t header_seen(char *p, size_t size, size_t nmemb, void *data)
{
	struct demux *d = data;
	size_t n = size * nmemb;
	if (n == 2 && p[0] == '\r' && p[1] == '\n')
		d->headers_done = true;
	return n;
}

int ag_engine_attach_run(struct ag_engine *e, const char *id, const struct ag_engine_stream_opts *o,
			 struct ag_engine_stream *s, struct ag_error **err)
{
	uint64_t deadline = mono_ms() + (o->timeout_ms ? o->timeout_ms : 1);
	CURL *a = curl_easy_init();
	CURLM *m = curl_multi_init();
	if (!a || !m)
		abort();
	_cleanup_free_ char *url = ag_xasprintf("http://docker" AG_ENGINE_API_PATH
						"/containers/%s/attach?stream=1&stdout=1&stderr=1",
						id);
	struct prereq q;
	int afd = -1;
	setup_handle(e, a, &q, &afd, "POST", url, 0);
	struct demux d = {.s = s, .o = o, .out_max = o->stdout_max, .err_max = o->stderr_max};
	curl_easy_setopt(a, CURLOPT_POSTFIELDS, "");
	curl_easy_setopt(a, CURLOPT_POSTFIELDSIZE, 0L);
	curl_easy_setopt(a, CURLOPT_WRITEFUNCTION, demux_write);
	curl_easy_setopt(a, CURLOPT_WRITEDATA, &d);
	curl_easy_setopt(a, CURLOPT_HEADERFUNCTION, header_seen);
	curl_easy_setopt(a, CURLOPT_HEADERDATA, &d);
	e->peer_refused = false;
	curl_multi_add_handle(m, a);
	bool started = false, finished = false;
	CURLcode done_code = CURLE_OK;
	int ret = 0;
	s->end = AG_STREAM_ENDED;
	for (;;) {
		int running = 0;
		curl_multi_perform(m, &running);
		CURLMsg *msg;
		int left;
		while ((msg = curl_multi_info_read(m, &left)))
			if (msg->msg == CURLMSG_DONE) {
				finished = true;
				done_code = msg->data.result;
			}
		if (finished || !running)
			break;
		if (!started && d.headers_done) {
			long st = 0;
			curl_easy_getinfo(a, CURLINFO_RESPONSE_CODE, &st);
			if (st != 200) {
				finished = true;
				break;
			}
			_cleanup_free_ char *path = ag_xasprintf("/containers/%s/start", id);
			if (ag_engine_do(e, "POST", path, 0, 304, "start the container", err) < 0) {
				s->end = AG_STREAM_NOT_STARTED;
				goto out;
			}
			started = true;
			s->start_ms = mono_ms();
		}
		if (o->should_cancel && o->should_cancel(o->should_cancel_data)) {
			s->end = AG_STREAM_CANCELLED;
			goto out;
		}
		uint64_t now = mono_ms();
		if (now >= deadline) {
			s->end = started ? AG_STREAM_TIMED_OUT : AG_STREAM_NOT_STARTED;
			if (!started)
				ag_err(err, AG_E_DOCKER, 0, "docker.engine.timeout",
				       "attach: the daemon did not answer in time");
			goto out;
		}
		uint64_t wait = deadline - now;
		curl_multi_poll(m, NULL, 0, wait < 100 ? (int)wait : 100, NULL);
	}
	if (!started) {
		long st = 0;
		curl_easy_getinfo(a, CURLINFO_RESPONSE_CODE, &st);
		s->end = AG_STREAM_NOT_STARTED;
		if (done_code != CURLE_OK || st == 0)
			transport_error(e, done_code, false, 0, "attach", err);
		else if (st == 200)
			ag_err(err, AG_E_DOCKER, 0, "docker.engine.dropped",
			       "attach: the stream ended before the container was started");
		else
			ag_err(err, AG_E_DOCKER, 0,
			       st == 404 ? "docker.api.not_found" : "docker.api.status",
			       "attach: the daemon answered %ld", st);
		goto out;
	}
	if (done_code != CURLE_OK || d.bad || d.left || d.hdr_got)
		s->end = AG_STREAM_DROPPED;
out:
	curl_multi_remove_handle(m, a);
	curl_easy_cleanup(a);
	curl_multi_cleanup(m);
	return ret;
}
