/*
 * agtest-net: network test gear for the study-egress engine tests
 * (tests/cli/lib-study-net.sh, t088x). Test code, never installed. Built static
 * with musl (`make tests` puts it in $(BUILD)/tests/agtest-net) so it runs
 * in the busybox test image, bind-mounted read-only.
 *
 *   agtest-net serve --log-dir DIR --lifetime SECS SPEC...
 *       one process, several owned listeners; every connection, request,
 *       datagram and query is logged, one line each, to DIR/KIND-PORT.log
 *       (so an empty log proves nothing arrived). DIR/ready appears once
 *       every listener is bound. Exits after SECS (bounded, always).
 *     --http IP:PORT[=REDIRECT_URL]  HTTP canary: "GET /redirect..." gets a
 *                                    302 to REDIRECT_URL, anything else 200
 *                                    with body "CANARY-OK PORT"
 *     --echo IP:PORT                 TCP echo (one read, echoed, closed)
 *     --sink IP:PORT                 TCP sink: accepts, never reads, keeps at
 *                                    most 1024 connections open until the end
 *     --udp IP:PORT                  UDP sink (logs datagrams)
 *     --dns IP:PORT                  DNS responder: never forwards; answers A
 *                                    from --zone/--rebind, AAAA with no data
 *                                    for known names, REFUSED otherwise
 *     --zone NAME=IP[,IP...]         every A answer lists all IPs
 *     --rebind NAME=IP1,IP2          the Nth A query for NAME gets IP(N mod 2)
 *
 *   agtest-net probe MODE ARGS...    one attempt, bounded (alarm); prints
 *       "probe MODE TARGET: reached|blocked DETAIL"; exit 0 reached (the
 *       route is open), 1 blocked, 2 usage
 *     tcp HOST PORT                  connect (HOST may be a name: libc lookup)
 *     udp HOST PORT MSG              one datagram (only a sink log can tell)
 *     dns SERVER NAME                one A query to SERVER:53; reached = any answer
 *     packet                         socket(AF_PACKET) (blocked = EPERM)
 *     ipv6                           disable_ipv6 everywhere, no inet6 address,
 *                                    and disable_ipv6 cannot be written
 *     unix                           /proc/net/unix entries, or a socket file
 *                                    at a Docker/containerd path (connect tried)
 *     connect PROXY HOST:PORT        CONNECT through PROXY (host:port), then a
 *                                    GET inside the tunnel; reached = 200 + body
 *     get PROXY URL [follow]         absolute-form GET through PROXY; with
 *                                    "follow" a 3xx Location is requested
 *                                    through PROXY too (a new request)
 *     send PROXY REQUEST             REQUEST's bytes as they are (\r \n \t
 *                                    \\ decoded) to PROXY; prints the
 *                                    status and X-AgentGuard-Reason;
 *                                    reached = 200 + body
 *     flood PROXY N KEYS URL         N absolute-form GETs of URL through PROXY,
 *                                    one connection each, one after another;
 *                                    "{k}" in URL becomes i mod KEYS (KEYS 0:
 *                                    left as is); prints the count of each
 *                                    status; reached = every one got 200.
 *                                    Bounded: N <= 100000, 300 s in all
 *     hold PROXY HOST:PORT SECS      CONNECT through PROXY, then keeps the
 *                                    tunnel open and silent for SECS (<= 120);
 *                                    reached = 200 Connection established
 *     stuff PROXY HOST:PORT N SECS   N CONNECT tunnels at once (<= 1000); into
 *                                    each it writes (at most 256 KiB) until the
 *                                    tunnel takes no more, never reading; all
 *                                    stay open SECS (<= 120); prints how many
 *                                    were established and refused (503);
 *                                    reached = at least one established
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define MAX_LISTENERS 16
#define MAX_ZONE 32
#define MAX_IPS 4
#define MAX_LOG_LINES 4096 /* per listener: a flood cannot fill the disk */
#define IO_TIMEOUT_MS 3000
#define PROBE_ALARM 15

enum kind { K_HTTP, K_ECHO, K_UDP, K_DNS, K_SINK };
static const char *const kind_name[] = {"http", "echo", "udp", "dns", "sink"};
#define MAX_SINK 1024
static int sink_fds[MAX_SINK];
static int n_sink;

struct listener {
	enum kind kind;
	int fd, logfd, port, lines;
	char redirect[256];
};

struct zone {
	char name[128];
	struct in_addr ip[MAX_IPS];
	int n;
	int rebind;
	unsigned queries;
};

static struct listener ls[MAX_LISTENERS];
static int nls;
static struct zone zones[MAX_ZONE];
static int nzones;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("agtest-net: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

/* Printable, bounded copy for logs (no newlines, no control bytes). */
static void clean(char *dst, size_t cap, const char *src, size_t n)
{
	size_t j = 0;
	for (size_t i = 0; i < n && j + 1 < cap; i++) {
		unsigned char c = (unsigned char)src[i];
		dst[j++] = (c >= 0x20 && c < 0x7f) ? (char)c : '.';
	}
	dst[j] = '\0';
}

static void logline(struct listener *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logline(struct listener *l, const char *fmt, ...)
{
	char buf[768];
	if (l->lines >= MAX_LOG_LINES)
		return;
	l->lines++;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof buf - 2)
		n = sizeof buf - 2;
	buf[n++] = '\n';
	if (write(l->logfd, buf, (size_t)n) < 0) {
		/* nothing to do: the test sees a short log */
	}
}

static void peer(const struct sockaddr_storage *ss, char *out, size_t cap)
{
	char ip[INET6_ADDRSTRLEN] = "?";
	int port = 0;
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s = (const void *)ss;
		inet_ntop(AF_INET, &s->sin_addr, ip, sizeof ip);
		port = ntohs(s->sin_port);
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const void *)ss;
		inet_ntop(AF_INET6, &s->sin6_addr, ip, sizeof ip);
		port = ntohs(s->sin6_port);
	}
	snprintf(out, cap, "%s:%d", ip, port);
}

static void parse_ipport(const char *s, struct sockaddr_in *sa)
{
	char host[64], spec[96];
	snprintf(spec, sizeof spec, "%.*s", (int)strcspn(s, "="), s);
	s = spec;
	const char *colon = strrchr(s, ':');
	if (!colon || (size_t)(colon - s) >= sizeof host)
		die("bad IP:PORT '%s'", s);
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = '\0';
	char *end;
	long p = strtol(colon + 1, &end, 10);
	if (*end || p < 1 || p > 65535)
		die("bad port in '%s'", s);
	memset(sa, 0, sizeof *sa);
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)p);
	if (inet_pton(AF_INET, host, &sa->sin_addr) != 1)
		die("bad IPv4 address in '%s'", s);
}

static void add_listener(enum kind k, const char *spec, const char *dir)
{
	if (nls >= MAX_LISTENERS)
		die("too many listeners");
	struct listener *l = &ls[nls++];
	struct sockaddr_in sa;
	parse_ipport(spec, &sa);
	l->kind = k;
	l->port = ntohs(sa.sin_port);
	const char *eq = strchr(spec, '=');
	if (eq) {
		if (k != K_HTTP || strlen(eq + 1) >= sizeof l->redirect)
			die("bad redirect in '%s'", spec);
		strcpy(l->redirect, eq + 1);
	}
	l->fd = socket(AF_INET,
		       (k == K_UDP || k == K_DNS ? SOCK_DGRAM : SOCK_STREAM) | SOCK_CLOEXEC, 0);
	if (l->fd < 0)
		die("socket: %s", strerror(errno));
	int one = 1;
	setsockopt(l->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(l->fd, (struct sockaddr *)&sa, sizeof sa) < 0)
		die("bind %s: %s", spec, strerror(errno));
	if ((k == K_HTTP || k == K_ECHO || k == K_SINK) && listen(l->fd, 64) < 0)
		die("listen %s: %s", spec, strerror(errno));
	char path[512];
	snprintf(path, sizeof path, "%s/%s-%d.log", dir, kind_name[k], l->port);
	l->logfd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (l->logfd < 0)
		die("open log %s: %s", path, strerror(errno));
}

static void add_zone(const char *spec, int rebind)
{
	if (nzones >= MAX_ZONE)
		die("too many names");
	struct zone *z = &zones[nzones++];
	const char *eq = strchr(spec, '=');
	if (!eq || (size_t)(eq - spec) >= sizeof z->name || eq == spec)
		die("bad NAME=IP '%s'", spec);
	memcpy(z->name, spec, (size_t)(eq - spec));
	z->name[eq - spec] = '\0';
	for (char *c = z->name; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	z->rebind = rebind;
	char ips[256];
	snprintf(ips, sizeof ips, "%s", eq + 1);
	for (char *save = NULL, *t = strtok_r(ips, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (z->n >= MAX_IPS || inet_pton(AF_INET, t, &z->ip[z->n]) != 1)
			die("bad address list in '%s'", spec);
		z->n++;
	}
	if (z->n == 0 || (rebind && z->n != 2))
		die("bad address list in '%s'", spec);
}

static void set_timeouts(int fd)
{
	struct timeval tv = {.tv_sec = IO_TIMEOUT_MS / 1000};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

/* Reads until EOF, the buffer is full or (with head) a blank line ends a
 * request head; always NUL-terminated. */
static size_t read_some(int fd, char *buf, size_t cap, int head)
{
	size_t n = 0;
	while (n + 1 < cap) {
		ssize_t r = read(fd, buf + n, cap - 1 - n);
		if (r <= 0)
			break;
		n += (size_t)r;
		buf[n] = '\0';
		if (head && (strstr(buf, "\r\n\r\n") || strstr(buf, "\n\n")))
			break;
	}
	buf[n] = '\0';
	return n;
}

static void write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

/* One connection from a stream listener, with bounded I/O; the peer as
 * IP:PORT in from. */
static int accept_one(struct listener *l, char *from, size_t cap)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	int c = accept4(l->fd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC);
	if (c < 0)
		return -1;
	set_timeouts(c);
	peer(&ss, from, cap);
	return c;
}

static void serve_http(struct listener *l)
{
	char from[80], to[80], buf[4096], line[256] = "-", host[128] = "-";
	int c = accept_one(l, from, sizeof from);
	if (c < 0)
		return;
	struct sockaddr_storage me;
	socklen_t ml = sizeof me;
	if (getsockname(c, (struct sockaddr *)&me, &ml) == 0)
		peer(&me, to, sizeof to);
	else
		snprintf(to, sizeof to, "?");
	size_t n = read_some(c, buf, sizeof buf, 1);
	if (n > 0) {
		size_t e = strcspn(buf, "\r\n");
		clean(line, sizeof line, buf, e);
		const char *h = strcasestr(buf, "\nhost:");
		if (h) {
			h += 6;
			while (*h == ' ')
				h++;
			clean(host, sizeof host, h, strcspn(h, "\r\n"));
		}
	}
	logline(l, "http from=%s line=%s host=%s to=%s", from, line, host, to);
	if (n > 0) {
		char resp[512];
		int m;
		if (strstr(line, "/redirect") && l->redirect[0])
			m = snprintf(resp, sizeof resp,
				     "HTTP/1.1 302 Found\r\nLocation: %s\r\nContent-Length: 0\r\n"
				     "Connection: close\r\n\r\n",
				     l->redirect);
		else
			m = snprintf(
			    resp, sizeof resp,
			    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n"
			    "Connection: close\r\n\r\nCANARY-OK %05d\n",
			    16, l->port);
		write_all(c, resp, (size_t)m);
	}
	close(c);
}

static void serve_sink(struct listener *l)
{
	char from[80];
	int c = accept_one(l, from, sizeof from);
	if (c < 0)
		return;
	logline(l, "sink from=%s held=%d", from, n_sink < MAX_SINK);
	if (n_sink < MAX_SINK)
		sink_fds[n_sink++] = c; /* never read; closed at exit */
	else
		close(c);
}

static void serve_echo(struct listener *l)
{
	char from[80], buf[1024], txt[128];
	int c = accept_one(l, from, sizeof from);
	if (c < 0)
		return;
	ssize_t r = read(c, buf, sizeof buf);
	clean(txt, sizeof txt, buf, r > 0 ? (size_t)r : 0);
	logline(l, "echo from=%s bytes=%zd data=%s", from, r, txt);
	if (r > 0)
		write_all(c, buf, (size_t)r);
	close(c);
}

static void serve_udp(struct listener *l)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	char buf[2048], from[80], txt[128];
	ssize_t r = recvfrom(l->fd, buf, sizeof buf, 0, (struct sockaddr *)&ss, &sl);
	if (r < 0)
		return;
	peer(&ss, from, sizeof from);
	clean(txt, sizeof txt, buf, (size_t)r);
	logline(l, "udp from=%s bytes=%zd data=%s", from, r, txt);
}

/* Decodes the question name at q (uncompressed; queries never compress). */
static int qname(const unsigned char *p, size_t n, size_t off, char *out, size_t cap, size_t *end)
{
	size_t j = 0;
	while (off < n) {
		unsigned len = p[off++];
		if (len == 0) {
			out[j] = '\0';
			*end = off;
			return 0;
		}
		if (len > 63 || off + len > n || j + len + 2 > cap)
			return -1;
		if (j)
			out[j++] = '.';
		for (unsigned i = 0; i < len; i++) {
			unsigned char c = p[off + i];
			out[j++] = (char)(isalnum(c) || c == '-' || c == '_' ? tolower(c) : '?');
		}
		off += len;
	}
	return -1;
}

static void serve_dns(struct listener *l)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	unsigned char q[512], a[512];
	char from[80], name[256];
	ssize_t r = recvfrom(l->fd, q, sizeof q, 0, (struct sockaddr *)&ss, &sl);
	if (r < 0)
		return;
	peer(&ss, from, sizeof from);
	size_t qend;
	if (r < 17 || (q[2] & 0x80) || q[4] != 0 || q[5] != 1 ||
	    qname(q, (size_t)r, 12, name, sizeof name, &qend) < 0 || qend + 4 > (size_t)r) {
		logline(l, "query from=%s malformed bytes=%zd", from, r);
		return;
	}
	unsigned type = (unsigned)(q[qend] << 8 | q[qend + 1]);
	struct zone *z = NULL;
	for (int i = 0; i < nzones; i++)
		if (strcmp(zones[i].name, name) == 0)
			z = &zones[i];
	/* header: id, QR|RD copied, RA; one question; answers below */
	size_t len = qend + 4;
	memcpy(a, q, len);
	a[2] = (unsigned char)(0x84 | (q[2] & 0x01)); /* QR, AA, RD */
	a[3] = z ? 0 : 5;			      /* NOERROR or REFUSED */
	a[6] = a[7] = a[8] = a[9] = a[10] = a[11] = 0;
	char ans[96] = "";
	if (z && type == 1) {
		int first = 0, count = z->n;
		if (z->rebind) {
			first = (int)(z->queries++ % 2);
			count = 1;
		}
		a[7] = (unsigned char)count;
		for (int i = 0; i < count; i++) {
			const struct in_addr *ip = &z->ip[first + i];
			unsigned char rr[16] = {0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4};
			memcpy(rr + 12, &ip->s_addr, 4);
			memcpy(a + len, rr, 16);
			len += 16;
			char t[INET_ADDRSTRLEN];
			inet_ntop(AF_INET, ip, t, sizeof t);
			size_t al = strlen(ans);
			snprintf(ans + al, sizeof ans - al, "%s%s", al ? "," : "", t);
		}
	}
	logline(l, "query from=%s name=%s type=%u answer=%s", from, name, type,
		z ? (ans[0] ? ans : "nodata") : "refused");
	sendto(l->fd, a, len, 0, (struct sockaddr *)&ss, sl);
}

static int cmd_serve(int argc, char **argv)
{
	const char *dir = NULL;
	long lifetime = 0;
	/* first pass: the directory and lifetime, so listeners can open logs */
	for (int i = 0; i + 1 < argc; i++) {
		if (strcmp(argv[i], "--log-dir") == 0)
			dir = argv[i + 1];
		else if (strcmp(argv[i], "--lifetime") == 0)
			lifetime = strtol(argv[i + 1], NULL, 10);
	}
	if (!dir || lifetime < 1 || lifetime > 3600)
		die("serve needs --log-dir DIR and --lifetime 1..3600");
	for (int i = 0; i < argc; i++) {
		const char *o = argv[i];
		if (i + 1 >= argc)
			die("option %s needs a value", o);
		const char *v = argv[++i];
		if (strcmp(o, "--http") == 0)
			add_listener(K_HTTP, v, dir);
		else if (strcmp(o, "--sink") == 0)
			add_listener(K_SINK, v, dir);
		else if (strcmp(o, "--echo") == 0)
			add_listener(K_ECHO, v, dir);
		else if (strcmp(o, "--udp") == 0)
			add_listener(K_UDP, v, dir);
		else if (strcmp(o, "--dns") == 0)
			add_listener(K_DNS, v, dir);
		else if (strcmp(o, "--zone") == 0)
			add_zone(v, 0);
		else if (strcmp(o, "--rebind") == 0)
			add_zone(v, 1);
		else if (strcmp(o, "--log-dir") != 0 && strcmp(o, "--lifetime") != 0)
			die("unknown option %s", o);
	}
	if (nls == 0)
		die("no listener");
	char path[512];
	snprintf(path, sizeof path, "%s/ready", dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		die("open %s: %s", path, strerror(errno));
	write_all(fd, "ready\n", 6);
	close(fd);
	time_t end = time(NULL) + lifetime;
	struct pollfd pf[MAX_LISTENERS];
	for (int i = 0; i < nls; i++)
		pf[i] = (struct pollfd){.fd = ls[i].fd, .events = POLLIN};
	for (;;) {
		time_t now = time(NULL);
		if (now >= end)
			return 0;
		int r = poll(pf, (nfds_t)nls, (int)(end - now) * 1000);
		if (r < 0 && errno != EINTR)
			die("poll: %s", strerror(errno));
		for (int i = 0; r > 0 && i < nls; i++) {
			if (!(pf[i].revents & POLLIN))
				continue;
			switch (ls[i].kind) {
			case K_HTTP:
				serve_http(&ls[i]);
				break;
			case K_ECHO:
				serve_echo(&ls[i]);
				break;
			case K_UDP:
				serve_udp(&ls[i]);
				break;
			case K_DNS:
				serve_dns(&ls[i]);
				break;
			case K_SINK:
				serve_sink(&ls[i]);
				break;
			}
		}
	}
}

/* ---- probes ---- */

static int result(const char *mode, const char *target, int reached, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int result(const char *mode, const char *target, int reached, const char *fmt, ...)
{
	char d[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(d, sizeof d, fmt, ap);
	va_end(ap);
	char c[512];
	clean(c, sizeof c, d, strlen(d));
	printf("probe %s %s: %s %s\n", mode, target, reached ? "reached" : "blocked", c);
	fflush(stdout);
	return reached ? 0 : 1;
}

/* Resolves HOST (literal or name through libc) and connects, bounded. */
static int tcp_connect(const char *host, const char *port, char *err, size_t cap)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai;
	int g = getaddrinfo(host, port, &hints, &ai);
	if (g != 0) {
		snprintf(err, cap, "lookup: %s", gai_strerror(g));
		return -1;
	}
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		snprintf(err, cap, "socket: %s", strerror(errno));
		freeaddrinfo(ai);
		return -1;
	}
	int r = connect(fd, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	if (r < 0 && errno == EINPROGRESS) {
		struct pollfd p = {.fd = fd, .events = POLLOUT};
		r = poll(&p, 1, IO_TIMEOUT_MS);
		if (r == 0) {
			snprintf(err, cap, "connect: timed out");
			close(fd);
			return -1;
		}
		int so = 0;
		socklen_t sl = sizeof so;
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &so, &sl);
		r = so ? -1 : 0;
		errno = so;
	}
	if (r < 0) {
		snprintf(err, cap, "connect: %s", strerror(errno));
		close(fd);
		return -1;
	}
	int fl = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	set_timeouts(fd);
	return fd;
}

static void split_hostport(const char *s, char *host, size_t hcap, char *port, size_t pcap)
{
	const char *c = strrchr(s, ':');
	if (!c || (size_t)(c - s) >= hcap || strlen(c + 1) >= pcap)
		die("bad HOST:PORT '%s'", s);
	memcpy(host, s, (size_t)(c - s));
	host[c - s] = '\0';
	strcpy(port, c + 1);
}

static int probe_tcp(const char *host, const char *port)
{
	char err[256], tgt[300];
	snprintf(tgt, sizeof tgt, "%s:%s", host, port);
	int fd = tcp_connect(host, port, err, sizeof err);
	if (fd < 0)
		return result("tcp", tgt, 0, "%s", err);
	write_all(fd, "PROBE-TCP\r\n\r\n", 13);
	char buf[256];
	read_some(fd, buf, sizeof buf, 0);
	close(fd);
	return result("tcp", tgt, 1, "connected reply=%.60s", buf);
}

static int probe_udp(const char *host, const char *port, const char *msg)
{
	char tgt[300];
	snprintf(tgt, sizeof tgt, "%s:%s", host, port);
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_DGRAM}, *ai;
	int g = getaddrinfo(host, port, &hints, &ai);
	if (g != 0)
		return result("udp", tgt, 0, "lookup: %s", gai_strerror(g));
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ssize_t w = fd < 0 ? -1 : sendto(fd, msg, strlen(msg), 0, ai->ai_addr, ai->ai_addrlen);
	int e = errno;
	freeaddrinfo(ai);
	if (fd >= 0)
		close(fd);
	/* A sent datagram proves nothing: the sink's log decides. */
	return result("udp", tgt, w >= 0, "%s",
		      w >= 0 ? "sent (the sink log decides)" : strerror(e));
}

static int probe_dns(const char *server, const char *name)
{
	char tgt[300];
	snprintf(tgt, sizeof tgt, "%s/%s", server, name);
	unsigned char q[300] = {0x4a, 0x67, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0};
	size_t n = 12;
	char tmp[256];
	snprintf(tmp, sizeof tmp, "%s", name);
	for (char *save = NULL, *t = strtok_r(tmp, ".", &save); t; t = strtok_r(NULL, ".", &save)) {
		size_t l = strlen(t);
		if (l > 63 || n + l + 6 > sizeof q)
			die("bad name");
		q[n++] = (unsigned char)l;
		memcpy(q + n, t, l);
		n += l;
	}
	q[n++] = 0;
	q[n++] = 0;
	q[n++] = 1; /* A */
	q[n++] = 0;
	q[n++] = 1; /* IN */
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(53)};
	if (inet_pton(AF_INET, server, &sa.sin_addr) != 1)
		die("dns SERVER must be an IPv4 address");
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || sendto(fd, q, n, 0, (struct sockaddr *)&sa, sizeof sa) < 0)
		return result("dns", tgt, 0, "send: %s", strerror(errno));
	struct pollfd p = {.fd = fd, .events = POLLIN};
	if (poll(&p, 1, IO_TIMEOUT_MS) <= 0)
		return result("dns", tgt, 0, "no answer (timed out)");
	unsigned char a[512];
	ssize_t r = recv(fd, a, sizeof a, 0);
	if (r < 12)
		return result("dns", tgt, 0, "recv: %s", r < 0 ? strerror(errno) : "short");
	return result("dns", tgt, 1, "answer rcode=%d answers=%d", a[3] & 0x0f, a[6] << 8 | a[7]);
}

static int probe_packet(void)
{
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(0x0003));
	if (fd < 0)
		return result("packet", "AF_PACKET", 0, "%s errno=%d",
			      errno == EPERM ? "EPERM" : strerror(errno), errno);
	close(fd);
	return result("packet", "AF_PACKET", 1, "raw socket opened");
}

static int read_int_file(const char *path)
{
	char b[16] = "";
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t r = read(fd, b, sizeof b - 1);
	close(fd);
	return r > 0 ? atoi(b) : -1;
}

static int probe_ipv6(void)
{
	static const char *const k[] = {"all", "default", "eth0"};
	char d[256] = "", path[128];
	int open6 = 0;
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof path, "/proc/sys/net/ipv6/conf/%s/disable_ipv6", k[i]);
		int v = read_int_file(path);
		size_t l = strlen(d);
		snprintf(d + l, sizeof d - l, "%s=%d ", k[i], v);
		if (v == 0)
			open6 = 1;
	}
	/* inet6 addresses configured in this namespace */
	int lines = 0;
	FILE *f = fopen("/proc/net/if_inet6", "re");
	if (f) {
		char line[256];
		while (lines < 1000 && fgets(line, sizeof line, f))
			lines++;
		fclose(f);
	}
	if (lines)
		open6 = 1;
	/* The setting must not be writable. The value written is the one read,
	 * so the attempt changes nothing even where it succeeds. */
	int cur = read_int_file("/proc/sys/net/ipv6/conf/all/disable_ipv6");
	int fd =
	    cur < 0 ? -1 : open("/proc/sys/net/ipv6/conf/all/disable_ipv6", O_WRONLY | O_CLOEXEC);
	int wrote = fd >= 0 && write(fd, cur ? "1" : "0", 1) == 1;
	int werr = errno;
	if (fd >= 0)
		close(fd);
	if (wrote)
		open6 = 1;
	size_t l = strlen(d);
	snprintf(d + l, sizeof d - l, "inet6_addresses=%d enable_write=%s", lines,
		 wrote ? "succeeded" : strerror(werr));
	return result("ipv6", "namespace", open6, "%s", d);
}

static int probe_unix(void)
{
	static const char *const paths[] = {"/var/run/docker.sock", "/run/docker.sock",
					    "/run/containerd/containerd.sock", "/tmp/docker.sock"};
	int entries = 0;
	FILE *f = fopen("/proc/net/unix", "re");
	if (f) {
		char line[512];
		while (entries < 10000 && fgets(line, sizeof line, f))
			entries++;
		fclose(f);
		entries = entries > 0 ? entries - 1 : 0; /* header line */
	}
	char d[256];
	snprintf(d, sizeof d, "proc_net_unix=%d", entries);
	int found = entries > 0;
	for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
		struct stat st;
		if (lstat(paths[i], &st) == 0 && S_ISSOCK(st.st_mode)) {
			found = 1;
			struct sockaddr_un su = {.sun_family = AF_UNIX};
			snprintf(su.sun_path, sizeof su.sun_path, "%s", paths[i]);
			int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
			int ok = fd >= 0 && connect(fd, (struct sockaddr *)&su, sizeof su) == 0;
			if (fd >= 0)
				close(fd);
			size_t l = strlen(d);
			snprintf(d + l, sizeof d - l, " socket=%s connect=%s", paths[i],
				 ok ? "ok" : "failed");
		}
	}
	return result("unix", "sockets", found, "%s", d);
}

/* One request through the proxy; fills status (e.g. 200) and body. */
static int via_proxy(const char *proxy, const char *req, int *status, char *resp, size_t cap,
		     char *err, size_t ecap)
{
	char ph[128], pp[16];
	split_hostport(proxy, ph, sizeof ph, pp, sizeof pp);
	int fd = tcp_connect(ph, pp, err, ecap);
	if (fd < 0)
		return -1;
	write_all(fd, req, strlen(req));
	read_some(fd, resp, cap, 0);
	close(fd);
	*status = 0;
	if (strncmp(resp, "HTTP/1.", 7) == 0 && strlen(resp) > 12)
		*status = atoi(resp + 9);
	return 0;
}

static int probe_connect(const char *proxy, const char *hp)
{
	char req[512], resp[2048], err[256];
	char h[256], p[16];
	split_hostport(hp, h, sizeof h, p, sizeof p);
	snprintf(req, sizeof req,
		 "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n"
		 "GET /tunnel HTTP/1.0\r\nHost: %s\r\n\r\n",
		 hp, hp, hp);
	int st;
	if (via_proxy(proxy, req, &st, resp, sizeof resp, err, sizeof err) < 0)
		return result("connect", hp, 0, "proxy %s", err);
	int ok = st == 200 && strstr(resp, "CANARY-OK");
	char first[128];
	clean(first, sizeof first, resp, strcspn(resp, "\r\n"));
	return result("connect", hp, ok, "status=%d line=%s body=%s", st, first,
		      strstr(resp, "CANARY-OK") ? "CANARY-OK" : "-");
}

static int probe_get(const char *proxy, const char *url, int follow)
{
	char req[1024], resp[2048], err[256], cur[512];
	snprintf(cur, sizeof cur, "%s", url);
	char trail[512] = "";
	for (int hop = 0; hop < 3; hop++) {
		const char *hs = strstr(cur, "://");
		if (!hs)
			die("bad URL");
		hs += 3;
		char host[256];
		snprintf(host, sizeof host, "%.*s", (int)strcspn(hs, "/?#"), hs);
		snprintf(req, sizeof req,
			 "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", cur, host);
		int st;
		if (via_proxy(proxy, req, &st, resp, sizeof resp, err, sizeof err) < 0)
			return result("get", url, 0, "%sproxy %s", trail, err);
		size_t l = strlen(trail);
		snprintf(trail + l, sizeof trail - l, "status=%d ", st);
		const char *loc = strcasestr(resp, "\nlocation:");
		if (follow && st >= 300 && st < 400 && loc) {
			loc += 10;
			while (*loc == ' ')
				loc++;
			snprintf(cur, sizeof cur, "%.*s", (int)strcspn(loc, "\r\n"), loc);
			l = strlen(trail);
			snprintf(trail + l, sizeof trail - l, "location=%.200s ", cur);
			continue;
		}
		return result("get", url, st == 200 && strstr(resp, "CANARY-OK"), "%sbody=%s",
			      trail, strstr(resp, "CANARY-OK") ? "CANARY-OK" : "-");
	}
	return result("get", url, 0, "%stoo many redirects", trail);
}

/* Raw bytes through the proxy (request-smuggling forms, t1111). */
static int probe_send(const char *proxy, const char *spec)
{
	char req[2048], resp[2048], err[256];
	size_t n = 0;
	for (const char *s = spec; *s && n + 1 < sizeof req; s++) {
		if (s[0] == '\\' && s[1]) {
			s++;
			req[n++] = *s == 'r' ? '\r' : *s == 'n' ? '\n' : *s == 't' ? '\t' : *s;
		} else {
			req[n++] = *s;
		}
	}
	req[n] = 0;
	char first[128];
	clean(first, sizeof first, req, strcspn(req, "\r\n"));
	int st;
	if (via_proxy(proxy, req, &st, resp, sizeof resp, err, sizeof err) < 0)
		return result("send", first, 0, "proxy %s", err);
	const char *why = strcasestr(resp, "\nX-AgentGuard-Reason:");
	char reason[64] = "-";
	if (why) {
		why += strlen("\nX-AgentGuard-Reason:");
		while (*why == ' ')
			why++;
		clean(reason, sizeof reason, why, strcspn(why, "\r\n"));
	}
	return result("send", first, st == 200 && strstr(resp, "CANARY-OK"),
		      "status=%d reason=%s body=%s", st, reason,
		      strstr(resp, "CANARY-OK") ? "CANARY-OK" : "-");
}

static int probe_flood(const char *proxy, const char *ns, const char *ks, const char *url)
{
	long n = strtol(ns, NULL, 10), keys = strtol(ks, NULL, 10);
	if (n < 1 || n > 100000 || keys < 0 || keys > 100000 || strlen(url) > 1500)
		die("flood: N 1..100000, KEYS 0..100000, URL at most 1500 bytes");
	alarm(300);
	const char *at = strstr(url, "{k}");
	long ok = 0, denied = 0, other = 0;
	for (long i = 0; i < n; i++) {
		char u[1600], req[2048], resp[512], err[256];
		if (at && keys > 0)
			snprintf(u, sizeof u, "%.*s%ld%s", (int)(at - url), url, i % keys, at + 3);
		else
			snprintf(u, sizeof u, "%s", url);
		snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nConnection: close\r\n\r\n", u);
		int st = 0;
		if (via_proxy(proxy, req, &st, resp, sizeof resp, err, sizeof err) < 0)
			other++;
		else if (st == 200)
			ok++;
		else if (st == 403)
			denied++;
		else
			other++;
	}
	return result("flood", url, ok == n, "sent=%ld status200=%ld status403=%ld other=%ld", n,
		      ok, denied, other);
}

static int probe_hold(const char *proxy, const char *hp, const char *secs)
{
	long s = strtol(secs, NULL, 10);
	if (s < 1 || s > 120)
		die("hold: SECS 1..120");
	alarm((unsigned)s + 15);
	char ph[128], pp[16], req[512], resp[512] = "", err[256];
	split_hostport(proxy, ph, sizeof ph, pp, sizeof pp);
	int fd = tcp_connect(ph, pp, err, sizeof err);
	if (fd < 0)
		return result("hold", hp, 0, "proxy %s", err);
	snprintf(req, sizeof req, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", hp, hp);
	write_all(fd, req, strlen(req));
	ssize_t n = read(fd, resp, sizeof resp - 1);
	resp[n > 0 ? n : 0] = 0;
	int ok = strncmp(resp, "HTTP/1.1 200", 12) == 0;
	char first[128];
	clean(first, sizeof first, resp, strcspn(resp, "\r\n"));
	result("hold", hp, ok, "line=%s", first);
	if (ok)
		sleep((unsigned)s);
	close(fd);
	return ok ? 0 : 1;
}

static int probe_stuff(const char *proxy, const char *hp, const char *ns, const char *secs)
{
	long n = strtol(ns, NULL, 10), s = strtol(secs, NULL, 10);
	if (n < 1 || n > 1000 || s < 1 || s > 120)
		die("stuff: N 1..1000, SECS 1..120");
	alarm((unsigned)(s + 120));
	static int fds[1000];
	static char junk[65536];
	memset(junk, 'j', sizeof junk);
	char ph[128], pp[16], req[512], err[256];
	split_hostport(proxy, ph, sizeof ph, pp, sizeof pp);
	snprintf(req, sizeof req, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", hp, hp);
	long up = 0, refused = 0, other = 0, held = 0;
	long long pushed = 0;
	for (long i = 0; i < n; i++) {
		char resp[256] = "";
		int fd = tcp_connect(ph, pp, err, sizeof err);
		if (fd < 0) {
			other++;
			continue;
		}
		write_all(fd, req, strlen(req));
		ssize_t r = read(fd, resp, sizeof resp - 1);
		resp[r > 0 ? r : 0] = 0;
		if (strncmp(resp, "HTTP/1.1 200", 12) != 0) {
			if (strncmp(resp, "HTTP/1.1 503", 12) == 0)
				refused++;
			else
				other++;
			close(fd);
			continue;
		}
		up++;
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
		for (long long w = 0; w < 256LL * 1024;) {
			ssize_t k = write(fd, junk, sizeof junk);
			if (k <= 0)
				break;
			w += k;
			pushed += k;
		}
		fds[held++] = fd;
	}
	result("stuff", hp, up > 0, "established=%ld refused503=%ld other=%ld pushed=%lld", up,
	       refused, other, pushed);
	sleep((unsigned)s);
	for (long i = 0; i < held; i++)
		close(fds[i]);
	return up > 0 ? 0 : 1;
}

static int cmd_probe(int argc, char **argv)
{
	alarm(PROBE_ALARM); /* every probe is bounded, whatever happens */
	if (argc < 1)
		die("probe MODE ...");
	const char *m = argv[0];
	if (strcmp(m, "tcp") == 0 && argc == 3)
		return probe_tcp(argv[1], argv[2]);
	if (strcmp(m, "udp") == 0 && argc == 4)
		return probe_udp(argv[1], argv[2], argv[3]);
	if (strcmp(m, "dns") == 0 && argc == 3)
		return probe_dns(argv[1], argv[2]);
	if (strcmp(m, "packet") == 0 && argc == 1)
		return probe_packet();
	if (strcmp(m, "ipv6") == 0 && argc == 1)
		return probe_ipv6();
	if (strcmp(m, "unix") == 0 && argc == 1)
		return probe_unix();
	if (strcmp(m, "connect") == 0 && argc == 3)
		return probe_connect(argv[1], argv[2]);
	if (strcmp(m, "get") == 0 && (argc == 3 || (argc == 4 && strcmp(argv[3], "follow") == 0)))
		return probe_get(argv[1], argv[2], argc == 4);
	if (strcmp(m, "send") == 0 && argc == 3)
		return probe_send(argv[1], argv[2]);
	if (strcmp(m, "stuff") == 0 && argc == 5)
		return probe_stuff(argv[1], argv[2], argv[3], argv[4]);
	if (strcmp(m, "hold") == 0 && argc == 4)
		return probe_hold(argv[1], argv[2], argv[3]);
	if (strcmp(m, "flood") == 0 && argc == 5)
		return probe_flood(argv[1], argv[2], argv[3], argv[4]);
	die("unknown probe or wrong arguments: %s", m);
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	if (argc >= 2 && strcmp(argv[1], "serve") == 0)
		return cmd_serve(argc - 2, argv + 2);
	if (argc >= 2 && strcmp(argv[1], "probe") == 0)
		return cmd_probe(argc - 2, argv + 2);
	die("usage: agtest-net serve ... | probe MODE ... (see the source's header)");
}
