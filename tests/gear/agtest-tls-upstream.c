/*
 * agtest-tls-upstream: a test HTTPS destination for credential injection
 * (issue 21; tests/cli/t0882, t0883). Test code, never installed and never
 * in a product image. Built against the system's glibc and OpenSSL
 * (`make tests`: $(BUILD)/tests/agtest-tls-upstream), so it runs on the
 * host or, bind-mounted read-only, in a container of the gateway image
 * (which holds exactly those libraries).
 *
 *   agtest-tls-upstream --listen IP:PORT --cert PEM --key PEM --log-dir DIR
 *                       --lifetime SECS [--name NAME] [--forward IP:PORT]
 *
 * Serves TLS (ALPN http/1.1) with the given certificate, one connection at
 * a time, keep-alive: every request head is logged to DIR/headers.log as
 * "REQUEST <request line>" then one "H <header line>" per header, values
 * included (the test needs to see which credential arrived), and answered
 * 200 with the body "upstream-ok NAME\n" (GET /bytes/N: N bytes of 'x',
 * N at most 4 GiB, not logged: bench/gateway's throughput). Bodies are read by
 * Content-Length (at most 1 MiB) and dropped. With --forward (an HTTPS front
 * for the plain-HTTP mock provider), each connection's first request is
 * logged the same way, then sent as it came to IP:PORT, whose answer goes
 * back until it closes, and so does the connection (the mock answers
 * Connection: close). Heads at most 16 KiB; every
 * read has a 10 s timeout; the process exits after SECS. DIR/ready appears
 * once listening.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

static const char *log_dir, *name = "upstream";
static struct sockaddr_in forward_to;
static bool forwarding;
static void log_line(const char *prefix, const char *s, size_t n);

/* The request (head, and BODY bytes of which HAVE - HEAD are in BUF) to
 * the backend, its answer back until it closes. */
static void forward(SSL *ssl, const char *buf, size_t head, size_t have, long long body)
{
	int b = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct timeval tv = {20, 0};
	setsockopt(b, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(b, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (b < 0 || connect(b, (struct sockaddr *)&forward_to, sizeof(forward_to)) < 0) {
		log_line("FORWARD_FAILED", "", 0);
		if (b >= 0)
			close(b);
		return;
	}
	size_t first = have - head < (size_t)body ? have - head : (size_t)body;
	bool ok = write(b, buf, head + first) == (ssize_t)(head + first);
	body -= (long long)first;
	static char tmp[64 * 1024];
	while (ok && body > 0) {
		int n = SSL_read(ssl, tmp,
				 body < (long long)sizeof(tmp) ? (int)body : (int)sizeof(tmp));
		ok = n > 0 && write(b, tmp, (size_t)n) == n;
		body -= n;
	}
	ssize_t n;
	while (ok && (n = read(b, tmp, sizeof(tmp))) > 0)
		ok = SSL_write(ssl, tmp, (int)n) == (int)n;
	close(b);
}

static void die(const char *what)
{
	fprintf(stderr, "agtest-tls-upstream: %s\n", what);
	exit(2);
}

static void log_line(const char *prefix, const char *s, size_t n)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/headers.log", log_dir);
	FILE *f = fopen(path, "a");
	if (!f)
		return;
	fprintf(f, "%s %.*s\n", prefix, (int)n, s);
	fclose(f);
}

static int alpn_cb(SSL *ssl, const unsigned char **out, unsigned char *outlen,
		   const unsigned char *in, unsigned int inlen, void *arg)
{
	(void)ssl, (void)arg;
	for (unsigned i = 0; i + 1 <= inlen;) {
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
	return SSL_TLSEXT_ERR_NOACK;
}

/* One connection: requests until EOF, an error or a timeout. */
static void serve(SSL_CTX *ctx, int fd)
{
	struct timeval tv = {10, 0};
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	SSL *ssl = SSL_new(ctx);
	SSL_set_fd(ssl, fd);
	if (SSL_accept(ssl) != 1) {
		log_line("TLS_FAILED", "", 0);
		goto out;
	}
	static char buf[16 * 1024 + 1];
	size_t have = 0;
	long long bytes_n = -1;
	for (int requests = 0; requests < 1000; requests++) {
		char *end;
		while (!(end = memmem(buf, have, "\r\n\r\n", 4))) {
			if (have >= sizeof(buf) - 1)
				goto out;
			int n = SSL_read(ssl, buf + have, (int)(sizeof(buf) - 1 - have));
			if (n <= 0)
				goto out;
			have += (size_t)n;
		}
		size_t head = (size_t)(end - buf) + 4;
		long long body = 0;
		const char *line = buf;
		bool first = true;
		bool bench = strncmp(buf, "GET /bytes/", 11) == 0;
		if (bench) {
			bytes_n = atoll(buf + 11);
			if (bytes_n < 0 || bytes_n > (1LL << 32))
				goto out;
		}
		while (line < end) {
			const char *eol = memmem(line, (size_t)(end + 2 - line), "\r\n", 2);
			size_t len = (size_t)(eol - line);
			if (!bench)
				log_line(first ? "REQUEST" : "H", line, len);
			if (!first && len > 15 && strncasecmp(line, "content-length:", 15) == 0)
				body = atoll(line + 15);
			first = false;
			line = eol + 2;
		}
		if (body < 0 || body > (1 << 20))
			goto out;
		if (forwarding) {
			forward(ssl, buf, head, have, body);
			goto out;
		}
		memmove(buf, buf + head, have - head);
		have -= head;
		if ((long long)have >= body) {
			memmove(buf, buf + body, have - (size_t)body);
			have -= (size_t)body;
		} else {
			body -= (long long)have;
			have = 0;
			while (body > 0) {
				int want = body < (long long)sizeof(buf) - 1 ? (int)body
									     : (int)sizeof(buf) - 1;
				int n = SSL_read(ssl, buf, want);
				if (n <= 0)
					goto out;
				body -= n;
			}
		}
		long long want = -1;
		if (bytes_n >= 0)
			want = bytes_n;
		bytes_n = -1;
		if (want >= 0) {
			char h[128];
			int hl = snprintf(h, sizeof(h),
					  "HTTP/1.1 200 OK\r\nContent-Length: %lld\r\n\r\n", want);
			if (SSL_write(ssl, h, hl) != hl)
				goto out;
			static char xs[64 * 1024];
			memset(xs, 'x', sizeof(xs));
			while (want > 0) {
				int c = want < (long long)sizeof(xs) ? (int)want : (int)sizeof(xs);
				if (SSL_write(ssl, xs, c) != c)
					goto out;
				want -= c;
			}
			continue;
		}
		char resp[512], text[128];
		int tl = snprintf(text, sizeof(text), "upstream-ok %s\n", name);
		int rl = snprintf(resp, sizeof(resp),
				  "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
				  "Content-Length: %d\r\n\r\n%s",
				  tl, text);
		if (SSL_write(ssl, resp, rl) != rl)
			goto out;
	}
out:
	SSL_shutdown(ssl);
	SSL_free(ssl);
	close(fd);
}

int main(int argc, char **argv)
{
	const char *listen_at = NULL, *cert = NULL, *key = NULL;
	long lifetime = 0;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--listen"))
			listen_at = argv[i + 1];
		else if (!strcmp(argv[i], "--cert"))
			cert = argv[i + 1];
		else if (!strcmp(argv[i], "--key"))
			key = argv[i + 1];
		else if (!strcmp(argv[i], "--log-dir"))
			log_dir = argv[i + 1];
		else if (!strcmp(argv[i], "--lifetime"))
			lifetime = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--name"))
			name = argv[i + 1];
		else if (!strcmp(argv[i], "--forward")) {
			char fip[64];
			const char *fc = strrchr(argv[i + 1], ':');
			if (!fc || (size_t)(fc - argv[i + 1]) >= sizeof(fip))
				die("bad --forward");
			memcpy(fip, argv[i + 1], (size_t)(fc - argv[i + 1]));
			fip[fc - argv[i + 1]] = 0;
			forward_to.sin_family = AF_INET;
			forward_to.sin_port = htons((uint16_t)atoi(fc + 1));
			if (inet_pton(AF_INET, fip, &forward_to.sin_addr) != 1)
				die("bad --forward address");
			forwarding = true;
		} else
			die("unknown option");
	}
	if (!listen_at || !cert || !key || !log_dir || lifetime <= 0 || lifetime > 3600)
		die("usage: --listen IP:PORT --cert PEM --key PEM --log-dir DIR --lifetime SECS");
	signal(SIGPIPE, SIG_IGN);
	char ip[64];
	const char *colon = strrchr(listen_at, ':');
	if (!colon || (size_t)(colon - listen_at) >= sizeof(ip))
		die("bad --listen");
	memcpy(ip, listen_at, (size_t)(colon - listen_at));
	ip[colon - listen_at] = 0;
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_port = htons((uint16_t)atoi(colon + 1))};
	if (inet_pton(AF_INET, ip, &sa.sin_addr) != 1)
		die("bad --listen address");
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
	if (!ctx || SSL_CTX_use_certificate_chain_file(ctx, cert) != 1 ||
	    SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1)
		die("cannot load the certificate or key");
	SSL_CTX_set_alpn_select_cb(ctx, alpn_cb, NULL);
	int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(ls, 16) < 0)
		die("cannot listen");
	char ready[4096];
	snprintf(ready, sizeof(ready), "%s/ready", log_dir);
	int rf = open(ready, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (rf >= 0)
		close(rf);
	time_t until = time(NULL) + lifetime;
	while (time(NULL) < until) {
		struct pollfd p = {ls, POLLIN, 0};
		if (poll(&p, 1, 1000) <= 0)
			continue;
		int fd = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0)
			serve(ctx, fd);
	}
	return 0;
}
