/*
 * bench/gateway/tcpbench.c: raw TCP throughput on loopback, direct or
 * through a CONNECT tunnel, so neither end is the bottleneck (the Python
 * echo of tunnel.py is). Bench gear, not part of AgentGuard.
 *
 *   tcpbench sink PORTFILE
 *       listens on 127.0.0.1 (port written to PORTFILE); each connection
 *       sends a length (8 bytes) then that many bytes, and gets back the
 *       count the sink read (8 bytes); no half-close, which a tunnel of the
 *       gateway does not relay (either side's end closes it)
 *   tcpbench send PORT MIB CONNS [GATEWAY_PORT NAME]
 *       MIB MiB in all, split over CONNS connections at once, each sent
 *       then checked against the sink's count; prints the wall seconds.
 *       With GATEWAY_PORT, each connection is "CONNECT NAME:PORT" through
 *       the gateway on 127.0.0.1:GATEWAY_PORT.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (256 * 1024)

static void die(const char *m)
{
	perror(m);
	exit(1);
}

static int dial(int port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		die("connect");
	return fd;
}

static void *serve(void *arg)
{
	int fd = (int)(intptr_t)arg;
	static __thread char buf[CHUNK];
	uint64_t want = 0, n = 0;
	size_t k = 0;
	while (k < sizeof(want)) {
		ssize_t r = read(fd, (char *)&want + k, sizeof(want) - k);
		if (r <= 0)
			break;
		k += (size_t)r;
	}
	while (k == sizeof(want) && n < want) {
		size_t ask = want - n < sizeof(buf) ? (size_t)(want - n) : sizeof(buf);
		ssize_t r = read(fd, buf, ask);
		if (r <= 0)
			break;
		n += (uint64_t)r;
	}
	if (write(fd, &n, sizeof(n)) != sizeof(n))
		perror("write count");
	close(fd);
	return NULL;
}

static _Noreturn void sink(const char *portfile)
{
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t al = sizeof(a);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, 512) < 0 ||
	    getsockname(l, (struct sockaddr *)&a, &al) < 0)
		die("listen");
	FILE *f = fopen(portfile, "w");
	if (!f)
		die(portfile);
	fprintf(f, "%d\n", ntohs(a.sin_port));
	fclose(f);
	for (;;) {
		int fd = accept4(l, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		pthread_t t;
		if (pthread_create(&t, NULL, serve, (void *)(intptr_t)fd) != 0)
			die("thread");
		pthread_detach(t);
	}
}

struct job {
	int port, gw;
	const char *name;
	uint64_t bytes;
};

static void *send_one(void *arg)
{
	const struct job *j = arg;
	int fd = dial(j->gw ? j->gw : j->port);
	if (j->gw) {
		char head[256];
		int n = snprintf(head, sizeof(head), "CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n",
				 j->name, j->port, j->name, j->port);
		if (write(fd, head, (size_t)n) != n)
			die("write head");
		char got[512];
		size_t k = 0;
		while (k < sizeof(got) - 1 && !(k >= 4 && !memcmp(got + k - 4, "\r\n\r\n", 4)))
			if (read(fd, got + k, 1) != 1)
				die("read head");
			else
				k++;
		got[k] = '\0';
		if (strncmp(got, "HTTP/1.1 200", 12) != 0) {
			fprintf(stderr, "gateway refused: %s\n", got);
			exit(1);
		}
	}
	if (write(fd, &j->bytes, sizeof(j->bytes)) != sizeof(j->bytes))
		die("write length");
	static __thread char buf[CHUNK];
	memset(buf, 'x', sizeof(buf));
	for (uint64_t left = j->bytes; left > 0;) {
		size_t w = left < CHUNK ? (size_t)left : CHUNK;
		ssize_t r = write(fd, buf, w);
		if (r <= 0)
			die("write");
		left -= (uint64_t)r;
	}
	uint64_t count = 0;
	if (read(fd, &count, sizeof(count)) != sizeof(count) || count != j->bytes) {
		fprintf(stderr, "sink counted %llu of %llu\n", (unsigned long long)count,
			(unsigned long long)j->bytes);
		exit(1);
	}
	close(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "sink"))
		sink(argv[2]);
	if ((argc != 5 && argc != 7) || strcmp(argv[1], "send") != 0) {
		fprintf(stderr, "usage: tcpbench sink PORTFILE | send PORT MIB CONNS [GW_PORT NAME]\n");
		return 2;
	}
	int conns = atoi(argv[4]);
	if (conns < 1 || conns > 256)
		return 2;
	uint64_t total = (uint64_t)atoll(argv[3]) << 20;
	struct job *jobs = calloc((size_t)conns, sizeof(*jobs));
	pthread_t *th = calloc((size_t)conns, sizeof(*th));
	if (!jobs || !th)
		die("calloc");
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < conns; i++) {
		jobs[i] = (struct job){atoi(argv[2]), argc == 7 ? atoi(argv[5]) : 0,
				       argc == 7 ? argv[6] : NULL, total / (uint64_t)conns};
		if (pthread_create(&th[i], NULL, send_one, &jobs[i]) != 0)
			die("thread");
	}
	for (int i = 0; i < conns; i++)
		pthread_join(th[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%.4f\n", (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	free(jobs);
	free(th);
	return 0;
}
