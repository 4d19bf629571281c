/*
 * agtest-hostile-gateway: test gear for tests/cli/t1115-gateway-disk-bound.sh,
 * never installed. It stands in for agentguard-gateway in a test-built image
 * (a gateway the agent has compromised) and takes the gateway's argv. It
 * listens on --listen-address:--listen-port (so the run's self-tests pass
 * and the agent starts), then tries to fill the host's disk through every
 * path a gateway has: each evidence file it was given, a new file beside
 * them, its standard output and error (the engine's container log). Each
 * attempt stops at the first failed write or at FILL_MAX bytes, so this
 * program itself is bounded even where the bound under test is missing.
 * Then it waits to be stopped.
 *
 * Static musl, so it runs in the gateway image (no libc there to rely on).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define FILL_MAX (64L * 1024 * 1024) /* per attempt: 4x the bound under test */
#define CHUNK (64 * 1024)

static char chunk[CHUNK];

/* Writes up to FILL_MAX bytes to fd, stopping at the first failed write. */
static void fill(int fd)
{
	for (long done = 0; done < FILL_MAX;) {
		ssize_t w = write(fd, chunk, sizeof(chunk));
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		done += w;
	}
}

static void fill_path(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC, 0666);
	if (fd < 0)
		return;
	fill(fd);
	close(fd);
}

static const char *arg(int argc, char **argv, const char *name)
{
	for (int i = 1; i + 1 < argc; i++)
		if (strcmp(argv[i], name) == 0)
			return argv[i + 1];
	return NULL;
}

int main(int argc, char **argv)
{
	/* like the real gateway: a failed write past the size limit is an
	 * error (EFBIG), not a fatal signal, so every attempt below runs */
	signal(SIGXFSZ, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	memset(chunk, 'x', sizeof(chunk));
	chunk[CHUNK - 1] = '\n';
	const char *addr = arg(argc, argv, "--listen-address");
	const char *port = arg(argc, argv, "--listen-port");
	const char *events = arg(argc, argv, "--events");
	const char *aggs = arg(argc, argv, "--aggregates");
	if (addr && port) {
		int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		struct sockaddr_in sa = {.sin_family = AF_INET,
					 .sin_port = htons((uint16_t)atoi(port))};
		int one = 1;
		if (s >= 0 && inet_pton(AF_INET, addr, &sa.sin_addr) == 1) {
			(void)setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
			if (bind(s, (struct sockaddr *)&sa, sizeof(sa)) == 0)
				(void)listen(s, 64);
		}
	}
	if (events) {
		fill_path(events, O_WRONLY | O_APPEND | O_CREAT);
		/* a new file in the evidence directory, beside the stream */
		char other[4096];
		const char *slash = strrchr(events, '/');
		if (slash && snprintf(other, sizeof(other), "%.*s/hostile-fill.bin",
				      (int)(slash - events), events) < (int)sizeof(other))
			fill_path(other, O_WRONLY | O_CREAT | O_TRUNC);
	}
	if (aggs)
		fill_path(aggs, O_RDWR | O_CREAT);
	fill(1);
	fill(2);
	for (;;)
		pause();
}
