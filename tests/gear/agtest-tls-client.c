/*
 * agtest-tls-client: the test agent's HTTPS client for credential injection
 * (issue 21; tests/cli/t0883). Test code, never installed and never in a
 * product image. Built static against glibc and OpenSSL (`make tests`:
 * $(BUILD)/tests/agtest-tls-client), so it runs in the busybox test image,
 * bind-mounted read-only.
 *
 *   agtest-tls-client --connect HOST:PORT --proxy-ip IP [--path P]
 *                     [--host-header H] [--header 'Name: value']... [--extra-ca PEM]
 *
 * Like any client an agent runs: the proxy's port comes from HTTPS_PROXY
 * (http://NAME:PORT; --proxy-ip stands in for NAME, the test image has no
 * resolver library), the CAs it trusts from OpenSSL's default paths, which
 * SSL_CERT_FILE names (and --extra-ca, a CA the test trusts besides). It sends CONNECT HOST:PORT,
 * then over TLS (SNI and name check HOST, ALPN http/1.1) one GET with the given headers and
 * "Connection: close", and prints the answer. Exit 0 with an answer; 3 the
 * destination's certificate was not trusted ("TLS_VERIFY_FAILED" and the
 * reason); 4 the proxy refused the CONNECT (its status line); 2 anything
 * else. Every read has a 20 s timeout; answers are cut at 64 KiB.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

static int die(int code, const char *what)
{
	printf("%s\n", what);
	return code;
}

int main(int argc, char **argv)
{
	const char *connect_to = NULL, *proxy_ip = NULL, *path = "/", *host_header = NULL,
		   *extra_ca = NULL;
	const char *headers[16];
	int n_headers = 0;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--connect"))
			connect_to = argv[i + 1];
		else if (!strcmp(argv[i], "--proxy-ip"))
			proxy_ip = argv[i + 1];
		else if (!strcmp(argv[i], "--path"))
			path = argv[i + 1];
		else if (!strcmp(argv[i], "--extra-ca"))
			extra_ca = argv[i + 1];
		else if (!strcmp(argv[i], "--host-header"))
			host_header = argv[i + 1];
		else if (!strcmp(argv[i], "--header") && n_headers < 16)
			headers[n_headers++] = argv[i + 1];
		else
			return die(2, "usage: --connect HOST:PORT --proxy-ip IP [--path P] "
				      "[--host-header H] [--header 'N: V']...");
	}
	const char *proxy = getenv("HTTPS_PROXY");
	const char *pport = proxy ? strrchr(proxy, ':') : NULL;
	if (!connect_to || !proxy_ip || !pport)
		return die(2, "needs --connect, --proxy-ip and HTTPS_PROXY=http://NAME:PORT");
	char host[256];
	const char *colon = strrchr(connect_to, ':');
	if (!colon || (size_t)(colon - connect_to) >= sizeof(host))
		return die(2, "bad --connect");
	memcpy(host, connect_to, (size_t)(colon - connect_to));
	host[colon - connect_to] = 0;

	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_port = htons((uint16_t)atoi(pport + 1))};
	if (inet_pton(AF_INET, proxy_ip, &sa.sin_addr) != 1)
		return die(2, "bad --proxy-ip");
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct timeval tv = {20, 0};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return die(2, "cannot reach the proxy");
	char req[1024];
	int rl = snprintf(req, sizeof(req), "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", connect_to,
			  connect_to);
	if (write(fd, req, (size_t)rl) != rl)
		return die(2, "cannot write CONNECT");
	/* the proxy's answer, byte by byte up to the empty line (no TLS byte is read) */
	char head[4096];
	size_t hn = 0;
	while (hn < sizeof(head) - 1 && (hn < 4 || memcmp(head + hn - 4, "\r\n\r\n", 4) != 0)) {
		if (read(fd, head + hn, 1) != 1)
			break;
		hn++;
	}
	head[hn] = 0;
	if (strncmp(head, "HTTP/1.1 200", 12) != 0 && strncmp(head, "HTTP/1.0 200", 12) != 0) {
		char *eol = strstr(head, "\r\n");
		if (eol)
			*eol = 0;
		printf("PROXY_REFUSED %s\n", head);
		return 4;
	}
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	static const unsigned char alpn[] = "\x08http/1.1";
	if (!ctx || SSL_CTX_set_default_verify_paths(ctx) != 1 ||
	    SSL_CTX_set_alpn_protos(ctx, alpn, sizeof(alpn) - 1) != 0)
		return die(2, "cannot set up TLS");
	if (extra_ca && SSL_CTX_load_verify_locations(ctx, extra_ca, NULL) != 1)
		return die(2, "cannot read --extra-ca");
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	SSL *ssl = SSL_new(ctx);
	SSL_set_fd(ssl, fd);
	SSL_set_tlsext_host_name(ssl, host);
	SSL_set1_host(ssl, host);
	if (SSL_connect(ssl) != 1) {
		long v = SSL_get_verify_result(ssl);
		if (v != X509_V_OK) {
			printf("TLS_VERIFY_FAILED %s\n", X509_verify_cert_error_string(v));
			return 3;
		}
		return die(2, "TLS_FAILED");
	}
	int n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: %s\r\n", path,
			 host_header ? host_header : host);
	for (int i = 0; i < n_headers && n < (int)sizeof(req); i++)
		n += snprintf(req + n, sizeof(req) - (size_t)n, "%s\r\n", headers[i]);
	if (n < (int)sizeof(req))
		n += snprintf(req + n, sizeof(req) - (size_t)n, "Connection: close\r\n\r\n");
	if (n >= (int)sizeof(req) || SSL_write(ssl, req, n) != n)
		return die(2, "cannot send the request");
	static char out[64 * 1024];
	size_t got = 0;
	int r;
	while (got < sizeof(out) && (r = SSL_read(ssl, out + got, (int)(sizeof(out) - got))) > 0)
		got += (size_t)r;
	fwrite(out, 1, got, stdout);
	return got ? 0 : 2;
}
