/*
 * agentguard-probe: the preflight's controlled run. A static binary (musl),
 * bind-mounted read-only into the probe container as its entrypoint, so it
 * needs nothing from the image: no shell, no libc, no coreutils.
 *
 * It checks from inside what an inspection can only claim, and prints ONE
 * JSON line on stdout (at most 2 KiB); AgentGuard judges it
 * (ag_inspect_probe_output). Exit 0 when the line was printed; any other
 * exit or output is "unsafe" on the host side.
 *
 *   agentguard-probe WORKSPACE
 *   agentguard-probe study GATEWAY_IP PORT BRIDGE_IP GATEWAY_OUTBOUND_IP UNIQUE
 *     (the live-study self-tests: gateway_port, bridge, gateway_outbound as
 *     open|refused|unreachable|timeout|error for a TCP connect, and dns for
 *     UNIQUE.agentguard-selftest.invalid asked of 127.0.0.11)
 *
 *   Positive controls are measured first, in the same probe: the connect
 *   to the gateway's port (TCP) and a reverse lookup of the gateway's
 *   address, which the engine's embedded resolver answers itself (DNS). A
 *   TCP "no answer" is waited for 20 times the TCP control, at least 200 ms
 *   and at most 4 s (the targets sit on the same bridge path as the
 *   control): a loaded machine waits longer, an idle one does not wait
 *   seconds for nothing. Fields control_tcp_us, control_dns_us and
 *   no_answer_wait_ms ("TCP/DNS") record them (as strings); dns_control is
 *   "answered" only when the reverse lookup came back, and study.c refuses
 *   the proof otherwise (a probe whose resolver does not answer its control
 *   proves nothing).
 *
 *   The DNS check does not wait for nothing either. Every study container
 *   has DNS 127.0.0.1, so the embedded resolver's only forward target is
 *   the container's own loopback: the probe listens there (UDP
 *   127.0.0.1:53; the engine lets a container bind low ports) and answers
 *   the unique name with a random marker address. dns is "loopback" when
 *   the marker came back through 127.0.0.11 and dns_forward is "caught"
 *   when the listener received the unique name from 127.0.0.1: the query
 *   went into this namespace and nowhere before it. When the listener
 *   cannot bind (dns_forward "unbound") or catches nothing ("none"), the
 *   check is the old one: at most 3 s for an answer, and only none (or
 *   SERVFAIL/REFUSED) passes, since an address or NXDOMAIN from elsewhere
 *   would mean something upstream resolved the name.
 *
 * Fields: uid, gid, workspace_write, tmp_write, root_read_only (statvfs
 * ST_RDONLY on /), cap_inh/prm/eff/bnd/amb (hex masks from
 * /proc/self/status), no_new_privs, seccomp (mode), net_ifaces (names in
 * /sys/class/net), docker_socket (a socket at a well-known path), pids_max
 * and memory_max (the limits the container's own cgroup shows, v1 or v2;
 * "max" when unlimited, null when not visible); and, for gVisor
 * (contained_execution.runtime gvisor, where some of these read
 * differently): kernel_release and kernel_version (uname), root_fs (the
 * type of "/" in /proc/self/mounts), root_fs_trans_fd (its options hold
 * trans=fd: a 9p root served over a file descriptor, as gVisor's gofer
 * does), root_ro_mount (its options hold ro), nnp_prctl
 * (PR_GET_NO_NEW_PRIVS) and cap_amb_prctl (the ambient set from
 * PR_CAP_AMBIENT_IS_SET).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdarg.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>

#define OUT_MAX 2048
static char out[OUT_MAX];
static size_t used;

static void put(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void put(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(out + used, OUT_MAX - used, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= OUT_MAX - used)
		_exit(20); /* would not fit: no partial line */
	used += (size_t)n;
}

/* Copies a short file's first line (<= 63 bytes of [0-9a-z]) or "" */
static void first_token(const char *path, char *buf, size_t cap)
{
	buf[0] = '\0';
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return;
	ssize_t n = read(fd, buf, cap - 1);
	close(fd);
	if (n <= 0) {
		buf[0] = '\0';
		return;
	}
	buf[n] = '\0';
	for (ssize_t i = 0; i < n; i++)
		if (!((buf[i] >= '0' && buf[i] <= '9') || (buf[i] >= 'a' && buf[i] <= 'z'))) {
			buf[i] = '\0';
			break;
		}
}

static void put_limit(const char *key, const char *v2, const char *v1)
{
	char b[64];
	first_token(v2, b, sizeof(b));
	if (!b[0])
		first_token(v1, b, sizeof(b));
	if (b[0])
		put(",\"%s\":\"%s\"", key, b);
	else
		put(",\"%s\":null", key);
}

static int write_check(const char *dir)
{
	char p[512];
	if (snprintf(p, sizeof(p), "%s/.agentguard-probe", dir) >= (int)sizeof(p))
		return 0;
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return 0;
	static const char want[] = "agentguard-probe\n";
	int ok = write(fd, want, sizeof(want) - 1) == (ssize_t)(sizeof(want) - 1);
	close(fd);
	char got[sizeof(want)];
	fd = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		ok = 0;
	else {
		ok = ok && read(fd, got, sizeof(got)) == (ssize_t)(sizeof(want) - 1) &&
		     memcmp(got, want, sizeof(want) - 1) == 0;
		close(fd);
	}
	unlink(p);
	return ok;
}

/* ---- study mode: the live-study self-tests (study.c judges the line) ---- */

/* TCP connects to n addresses at once, each "open", "refused",
 * "unreachable", "timeout" or "error" after at most timeout_ms. */
static void tcp_try_all(const char *const *ip, int port, int timeout_ms, const char **res, int n)
{
	struct pollfd p[4];
	for (int i = 0; i < n; i++) {
		struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
		res[i] = "error";
		p[i].fd = -1;
		p[i].events = POLLOUT;
		if (inet_pton(AF_INET, ip[i], &sa.sin_addr) != 1)
			continue;
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			res[i] = "open";
			close(fd);
		} else if (errno == EINPROGRESS) {
			p[i].fd = fd;
			res[i] = "timeout";
		} else {
			res[i] = errno == ECONNREFUSED				   ? "refused"
				 : (errno == EHOSTUNREACH || errno == ENETUNREACH) ? "unreachable"
										   : "error";
			close(fd);
		}
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int pending = 0;
		for (int i = 0; i < n; i++)
			pending += p[i].fd >= 0;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		long left = timeout_ms -
			    ((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000);
		int pr = pending && left > 0 ? poll(p, (nfds_t)n, (int)left) : 0;
		if (pr < 0) {
			/* no verdict: never a "timeout" (a pass for study.c) */
			for (int i = 0; i < n; i++)
				if (p[i].fd >= 0)
					res[i] = "error";
			break;
		}
		if (pr == 0)
			break;
		for (int i = 0; i < n; i++) {
			if (p[i].fd < 0 || !p[i].revents)
				continue;
			int e = 0;
			socklen_t el = sizeof(e);
			if (getsockopt(p[i].fd, SOL_SOCKET, SO_ERROR, &e, &el) < 0)
				e = EIO;
			res[i] = e == 0					   ? "open"
				 : e == ECONNREFUSED			   ? "refused"
				 : (e == EHOSTUNREACH || e == ENETUNREACH) ? "unreachable"
				 : e == ETIMEDOUT			   ? "timeout"
									   : "error";
			close(p[i].fd);
			p[i].fd = -1;
		}
	}
	for (int i = 0; i < n; i++)
		if (p[i].fd >= 0)
			close(p[i].fd);
}

static const char *tcp_try(const char *ip, int port, int timeout_ms)
{
	const char *r;
	tcp_try_all(&ip, port, timeout_ms, &r, 1);
	return r;
}

#define DNS_HDR 12
#define DNS_Q_MAX 300

/* Builds one query of type TYPE (1 A, 12 PTR) for the name made of LABELS
 * into q[DNS_Q_MAX]: its length, or 0. */
static size_t dns_build(unsigned char *q, const char *const *labels, size_t nl, unsigned char type)
{
	static const unsigned char hdr[DNS_HDR] = {0x4a, 0x47, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0};
	memcpy(q, hdr, sizeof(hdr));
	size_t n = sizeof(hdr);
	for (size_t i = 0; i < nl; i++) {
		size_t l = strlen(labels[i]);
		if (l == 0 || l > 63 || n + l + 6 > DNS_Q_MAX)
			return 0;
		q[n++] = (unsigned char)l;
		memcpy(q + n, labels[i], l);
		n += l;
	}
	q[n++] = 0;
	q[n++] = 0, q[n++] = type;
	q[n++] = 0, q[n++] = 1; /* IN */
	return n;
}

/* Sends one query of type TYPE for the name made of LABELS to
 * 127.0.0.11:53; the socket, or -1. */
static int dns_query(const char *const *labels, size_t nl, unsigned char type)
{
	unsigned char q[DNS_Q_MAX];
	size_t n = dns_build(q, labels, nl, type);
	if (n == 0)
		return -1;
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(53)};
	inet_pton(AF_INET, "127.0.0.11", &sa.sin_addr);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && sendto(fd, q, n, 0, (struct sockaddr *)&sa, sizeof(sa)) != (ssize_t)n) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* A for NAME.agentguard-selftest.invalid: the name nobody may answer. */
static const char *selftest_labels[3] = {NULL, "agentguard-selftest", "invalid"};

/* PTR for IPV4 (D.C.B.A.in-addr.arpa): the embedded resolver answers it
 * for a container on the network itself, without forwarding. */
static int dns_send_ptr(const char *ipv4)
{
	struct in_addr a;
	if (inet_pton(AF_INET, ipv4, &a) != 1)
		return -1;
	const unsigned char *b = (const unsigned char *)&a.s_addr;
	char o[4][4];
	for (int i = 0; i < 4; i++)
		snprintf(o[i], sizeof(o[i]), "%u", b[3 - i]);
	const char *labels[] = {o[0], o[1], o[2], o[3], "in-addr", "arpa"};
	return dns_query(labels, 6, 12);
}

/* An answer of GOT bytes to one of our queries: "answered", "servfail",
 * "refused", "nxdomain", or "error" when it is none of ours. */
static const char *dns_rcode(const unsigned char *a, ssize_t got)
{
	if (got < DNS_HDR || a[0] != 0x4a || a[1] != 0x47 || !(a[2] & 0x80))
		return "error";
	int rcode = a[3] & 0x0f, ancount = (a[6] << 8) | a[7];
	return ancount	    ? "answered"
	       : rcode == 2 ? "servfail"
	       : rcode == 5 ? "refused"
	       : rcode == 3 ? "nxdomain"
			    : "answered";
}

/* Its answer within timeout_ms: "no_answer", "servfail", "refused",
 * "nxdomain", "answered" or "error". Closes fd. */
static const char *dns_result(int fd, int timeout_ms)
{
	unsigned char a[512];
	const char *r = "error";
	if (fd < 0)
		return r;
	struct pollfd p = {.fd = fd, .events = POLLIN};
	int pr = poll(&p, 1, timeout_ms > 0 ? timeout_ms : 0);
	if (pr < 0) {
		r = "error"; /* no verdict: never "no_answer" (a pass for study.c) */
	} else if (pr == 0) {
		r = "no_answer";
	} else {
		r = dns_rcode(a, recv(fd, a, sizeof(a), MSG_DONTWAIT));
	}
	close(fd);
	return r;
}

static long us_since(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1000000 + (t1.tv_nsec - t0->tv_nsec) / 1000;
}

static long ms_since(const struct timespec *t0)
{
	return us_since(t0) / 1000;
}

/* UDP 127.0.0.1:53, where the embedded resolver forwards for a container
 * with DNS 127.0.0.1; -1 when it cannot be bound. */
static int dns_listen(void)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(53)};
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static int lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

/* One datagram on the listener: 1 when it is the unique name's query from
 * 127.0.0.1 (answered with MARKER as its address), else 0. */
static int dns_catch(int lfd, const unsigned char *q, size_t qlen, const unsigned char *marker)
{
	unsigned char b[DNS_Q_MAX + 16 + 512];
	struct sockaddr_in from;
	socklen_t fl = sizeof(from);
	ssize_t got = recvfrom(lfd, b, 512, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
	if (got < (ssize_t)qlen || fl != sizeof(from) ||
	    from.sin_addr.s_addr != htonl(INADDR_LOOPBACK) || (b[2] & 0x80) || b[4] != 0 ||
	    b[5] != 1)
		return 0;
	for (size_t i = DNS_HDR; i < qlen; i++)
		if (lower(b[i]) != lower(q[i]))
			return 0;
	/* The answer: its id, QR RD RA, NOERROR, the question, one A record. */
	static const unsigned char flags[] = {0x81, 0x80, 0, 1, 0, 1, 0, 0, 0, 0};
	memcpy(b + 2, flags, sizeof(flags));
	static const unsigned char rr[] = {0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4};
	memcpy(b + qlen, rr, sizeof(rr));
	memcpy(b + qlen + sizeof(rr), marker, 4);
	sendto(lfd, b, qlen + sizeof(rr) + 4, 0, (struct sockaddr *)&from, fl);
	return 1;
}

/* The unique name's check (see the header). dns_unique_start binds the
 * listener and sends the query to 127.0.0.11; dns_unique_end watches both
 * until WAIT_MS after the start: *result as dns_result's, or "loopback"
 * when the answer carries the marker; *forward "caught", "none" or
 * "unbound". A forward that arrives while the TCP checks run waits in the
 * listener's buffer (the resolver waits seconds for its upstream). */
struct dns_unique {
	unsigned char q[DNS_Q_MAX], marker[4];
	size_t qlen;
	int fd, lfd;
	struct timespec t0;
};

static void dns_unique_start(struct dns_unique *u, const char *name)
{
	const char *labels[3] = {name, selftest_labels[1], selftest_labels[2]};
	u->qlen = dns_build(u->q, labels, 3, 1);
	u->marker[0] = 127;
	if (getrandom(u->marker + 1, 3, 0) != 3)
		u->marker[1] = 0x41, u->marker[2] = 0x47, u->marker[3] = 0x50;
	u->lfd = dns_listen();
	clock_gettime(CLOCK_MONOTONIC, &u->t0);
	u->fd = u->qlen ? dns_query(labels, 3, 1) : -1;
}

static void dns_unique_end(struct dns_unique *u, int wait_ms, const char **result,
			   const char **forward)
{
	int caught = 0;
	*result = "error";
	/* Bounded: each turn ends on a datagram or the deadline. */
	for (int turn = 0; u->fd >= 0 && turn < 64; turn++) {
		/* Past the deadline (the TCP checks may have taken longer than
		 * it) still one look at what is queued: an answer that arrived
		 * in time is never passed over as "no_answer". */
		long left = wait_ms - ms_since(&u->t0);
		struct pollfd p[2] = {{.fd = u->fd, .events = POLLIN},
				      {.fd = u->lfd, .events = POLLIN}};
		int pr = poll(p, u->lfd >= 0 ? 2 : 1, left > 0 ? (int)left : 0);
		if (pr < 0)
			break; /* no verdict: "error" */
		if (pr == 0) {
			*result = "no_answer";
			break;
		}
		if (u->lfd >= 0 && (p[1].revents & POLLIN) &&
		    dns_catch(u->lfd, u->q, u->qlen, u->marker))
			caught = 1;
		if (p[0].revents) {
			unsigned char a[512];
			ssize_t got = recv(u->fd, a, sizeof(a), MSG_DONTWAIT);
			*result = dns_rcode(a, got);
			for (ssize_t i = (ssize_t)u->qlen; caught && i + 6 <= got; i++)
				if (a[i] == 0 && a[i + 1] == 4 && !memcmp(a + i + 2, u->marker, 4))
					*result = "loopback";
			break;
		}
	}
	*forward = u->lfd < 0 ? "unbound" : caught ? "caught" : "none";
	if (u->fd >= 0)
		close(u->fd);
	if (u->lfd >= 0)
		close(u->lfd);
}

/* 20 times the control's round trip, within [lo, hi] ms; hi when the
 * control was not measured (study.c refuses that proof anyway). */
static long no_answer_wait_ms(long control_us, long lo, long hi)
{
	if (control_us < 0)
		return hi;
	long w = control_us * 20 / 1000;
	return w < lo ? lo : w > hi ? hi : w;
}

static int study_mode(int argc, char **argv)
{
	/* study GATEWAY_IP PORT BRIDGE_IP GATEWAY_OUTBOUND_IP UNIQUE */
	if (argc != 7)
		return 10;
	int port = atoi(argv[3]);
	if (port < 1 || port > 65535 || strlen(argv[6]) > 40)
		return 10;
	/* The gateway may still be starting (the probe may start beside it):
	 * a bounded wait for its port, at most 15 s (the whole probe stays
	 * well inside the 30 s AgentGuard gives it). */
	const char *gp = "error";
	struct timespec w0;
	clock_gettime(CLOCK_MONOTONIC, &w0);
	for (int i = 0; i < 300 && ms_since(&w0) < 15000; i++) {
		gp = tcp_try(argv[2], port, 250);
		if (!strcmp(gp, "open"))
			break;
		struct timespec ts = {0, 50 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	/* The TCP control: the slower of two connects made once it is open
	 * (the one that found it open may have waited for the gateway to come
	 * up, or on a neighbour entry its earlier tries left unresolved). A
	 * target that answers would take about two of these round trips (its
	 * address resolved, then its SYN answered), well inside 20. */
	long tcp_us = -1;
	for (int i = 0; i < 2 && !strcmp(gp, "open"); i++) {
		struct timespec c0;
		clock_gettime(CLOCK_MONOTONIC, &c0);
		gp = tcp_try(argv[2], port, 250);
		long us = us_since(&c0);
		if (us > tcp_us)
			tcp_us = us;
	}
	if (strcmp(gp, "open") != 0)
		tcp_us = -1;
	put("{\"probe\":\"agentguard-study\",\"gateway_port\":\"%s\"", gp);
	/* The DNS control: the embedded resolver's own answer (2 s at most). */
	struct timespec d0;
	clock_gettime(CLOCK_MONOTONIC, &d0);
	const char *dc = dns_result(dns_send_ptr(argv[2]), 2000);
	long dns_us = !strcmp(dc, "answered") ? us_since(&d0) : -1;
	long tcp_wait = no_answer_wait_ms(tcp_us, 200, 4000);
	/* Not calibrated: a forwarded query is answered upstream, on a path no
	 * control here measures (the reverse lookup only shows the resolver
	 * is there and answering). The engine's forwarding can take seconds.
	 * A forward the listener catches ends the wait at once. */
	long dns_wait = 3000;
	put(",\"dns_control\":\"%s\",\"control_tcp_us\":\"%ld\",\"control_dns_us\":\"%ld\"", dc,
	    tcp_us, dns_us);
	put(",\"no_answer_wait_ms\":\"%ld/%ld\"", tcp_wait, dns_wait);
	/* All three run together, each for its wait. */
	struct dns_unique u;
	dns_unique_start(&u, argv[6]);
	const char *const targets[] = {argv[4], argv[5]};
	const char *res[2], *dr, *df;
	tcp_try_all(targets, port, (int)tcp_wait, res, 2);
	put(",\"bridge\":\"%s\"", res[0]);
	put(",\"gateway_outbound\":\"%s\"", res[1]);
	dns_unique_end(&u, (int)dns_wait, &dr, &df);
	put(",\"dns\":\"%s\",\"dns_forward\":\"%s\"}\n", dr, df);
	return write(1, out, used) == (ssize_t)used ? 0 : 11;
}

/* The root's last entry in /proc/self/mounts: read-only, its type ([a-z0-9]
 * only), and whether it is a file-descriptor 9p mount ("trans=fd", how
 * gVisor's gofer serves the root; a runc container cannot mount one). */
struct rootfs {
	int ro, trans_fd;
	char type[32];
};

static void root_mount(struct rootfs *r)
{
	static char m[16384];
	memset(r, 0, sizeof(*r));
	int fd = open("/proc/self/mounts", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, m, sizeof(m) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return;
	m[n] = '\0';
	for (char *line = m, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		char dev[128], dir[256], type[64], opts[1024];
		if (sscanf(line, "%127s %255s %63s %1023s", dev, dir, type, opts) != 4 ||
		    strcmp(dir, "/") != 0)
			continue;
		char o[1040];
		snprintf(o, sizeof(o), ",%s,", opts);
		r->ro = strstr(o, ",ro,") != NULL;
		r->trans_fd = strstr(o, ",trans=fd,") != NULL;
		size_t i = 0;
		for (; type[i] && i < sizeof(r->type) - 1; i++)
			r->type[i] =
			    (type[i] >= 'a' && type[i] <= 'z') || (type[i] >= '0' && type[i] <= '9')
				? type[i]
				: '?';
		r->type[i] = '\0';
	}
}

/* uname field, for a JSON string: [A-Za-z0-9 .:#+_-] kept, others '?' */
static void clean(const char *in, char *out, size_t cap)
{
	size_t i = 0;
	for (; in[i] && i < cap - 1; i++) {
		char c = in[i];
		int ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
			 (c >= 'A' && c <= 'Z') || (c && strchr(" .:#+_-", c));
		out[i] = ok ? c : '?';
	}
	out[i] = '\0';
}

/* The ambient set, asked of prctl (gVisor has no CapAmb line); -1 when
 * prctl cannot answer for the first capability (then null: unproven). */
static int ambient_mask(unsigned long long *mask)
{
	*mask = 0;
	for (int c = 0; c < 64; c++) {
		int r = prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, c, 0, 0);
		if (r < 0)
			return c == 0 ? -1 : 0; /* past the last capability */
		if (r == 1)
			*mask |= 1ull << c;
	}
	return 0;
}

static void put_kernel(void)
{
	struct utsname u;
	char rel[40] = "", ver[80] = "";
	if (uname(&u) == 0) {
		clean(u.release, rel, sizeof(rel));
		clean(u.version, ver, sizeof(ver));
	}
	struct rootfs r;
	root_mount(&r);
	put(",\"kernel_release\":\"%s\",\"kernel_version\":\"%s\"", rel, ver);
	put(",\"root_fs\":\"%s\",\"root_fs_trans_fd\":%s,\"root_ro_mount\":%s", r.type,
	    r.trans_fd ? "true" : "false", r.ro ? "true" : "false");
	int nnp = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
	unsigned long long amb = 0;
	if (ambient_mask(&amb) < 0)
		put(",\"nnp_prctl\":%d,\"cap_amb_prctl\":null", nnp);
	else
		put(",\"nnp_prctl\":%d,\"cap_amb_prctl\":\"%016llx\"", nnp, amb);
}

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "study") == 0)
		return study_mode(argc, argv);
	if (argc != 2 || argv[1][0] != '/')
		return 10;
	put("{\"probe\":\"agentguard-preflight\",\"uid\":%u,\"gid\":%u", (unsigned)getuid(),
	    (unsigned)getgid());
	put(",\"workspace_write\":%s", write_check(argv[1]) ? "true" : "false");
	put(",\"tmp_write\":%s", write_check("/tmp") ? "true" : "false");
	struct statvfs sv;
	put(",\"root_read_only\":%s",
	    statvfs("/", &sv) == 0 && (sv.f_flag & ST_RDONLY) ? "true" : "false");

	/* /proc/self/status: Cap*, NoNewPrivs, Seccomp */
	static const char *const keys[] = {"CapInh", "CapPrm",	   "CapEff", "CapBnd",
					   "CapAmb", "NoNewPrivs", "Seccomp"};
	static const char *const names[] = {"cap_inh", "cap_prm",      "cap_eff", "cap_bnd",
					    "cap_amb", "no_new_privs", "seccomp"};
	char st[8192];
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, st, sizeof(st) - 1) : -1;
	if (fd >= 0)
		close(fd);
	st[n > 0 ? n : 0] = '\0';
	for (size_t k = 0; k < sizeof(keys) / sizeof(*keys); k++) {
		char pat[32];
		snprintf(pat, sizeof(pat), "\n%s:", keys[k]);
		const char *at = strstr(st, pat);
		char v[32] = "";
		if (at) {
			at += strlen(pat);
			while (*at == ' ' || *at == '\t')
				at++;
			size_t i = 0;
			while (i < sizeof(v) - 1 &&
			       ((at[i] >= '0' && at[i] <= '9') || (at[i] >= 'a' && at[i] <= 'f')))
				v[i] = at[i], i++;
			v[i] = '\0';
		}
		if (k < 5)
			put(",\"%s\":%s%s%s", names[k], v[0] ? "\"" : "", v[0] ? v : "null",
			    v[0] ? "\"" : "");
		else
			put(",\"%s\":%s", names[k], v[0] ? v : "null");
	}

	/* network interfaces (names are [A-Za-z0-9_.-], at most 16 listed) */
	put(",\"net_ifaces\":[");
	DIR *d = opendir("/sys/class/net");
	int count = 0;
	if (d) {
		struct dirent *de;
		while ((de = readdir(d)) && count < 16) {
			const char *nm = de->d_name;
			if (nm[0] == '.')
				continue;
			int ok = strlen(nm) <= 15;
			for (const char *c = nm; ok && *c; c++)
				ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
				     (*c >= '0' && *c <= '9') || *c == '_' || *c == '.' ||
				     *c == '-';
			put("%s\"%s\"", count ? "," : "", ok ? nm : "?");
			count++;
		}
		closedir(d);
	}
	put("]");

	static const char *const socks[] = {"/var/run/docker.sock", "/run/docker.sock",
					    "/var/run/docker/docker.sock",
					    "/run/containerd/containerd.sock"};
	int sock = 0;
	for (size_t i = 0; i < sizeof(socks) / sizeof(*socks); i++) {
		struct stat s;
		if (lstat(socks[i], &s) == 0 && S_ISSOCK(s.st_mode))
			sock = 1;
	}
	put(",\"docker_socket\":%s", sock ? "true" : "false");
	put_limit("pids_max", "/sys/fs/cgroup/pids.max", "/sys/fs/cgroup/pids/pids.max");
	put_limit("memory_max", "/sys/fs/cgroup/memory.max",
		  "/sys/fs/cgroup/memory/memory.limit_in_bytes");
	put_kernel();
	put("}\n");
	return write(1, out, used) == (ssize_t)used ? 0 : 11;
}
