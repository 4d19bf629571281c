/*
 * tunnel.c: an established CONNECT tunnel's bytes (gateway.h).
 *
 * Once a tunnel is established its two sockets are handed here, off
 * libevent's buffered relay: each direction is one fixed buffer of
 * AG_GW_TUNNEL_BUF bytes, filled by one recv from its source and emptied
 * by sends to its destination before the source is read again. That is
 * the whole of a direction's memory (the sockets keep their fixed small
 * kernel buffers, bound_socket in proxy.c), and a read moves up to a
 * whole buffer where the buffered relay moved at most a 4 KiB chain at a
 * time (bench/gateway, "Line rate"). Every byte read is counted; a side
 * that reads nothing (or a send that makes no progress) for the idle time
 * ends the tunnel; a side's end of file first sends what its buffer still
 * holds to the other side, then ends the tunnel, as the buffered relay
 * does. (splice(2) through a pipe was measured too: with these socket
 * buffers the kernel's accounting of the spliced pages stalls a tunnel
 * for seconds, and only buffers beyond the memory bound make it faster.)
 */
#include "lib/base/ag.h"
#include "gateway/gateway.h"

#include <errno.h>
#include <string.h>
#include <event2/event.h>
#include <sys/socket.h>
#include <time.h>

struct gw_dir {
	struct gw_tunnel *t;
	int src, dst;
	char *buf;
	size_t off, held; /* bytes buffered: buf[off .. off + held) */
	bool eof;	  /* the source ended */
	int64_t *count;	  /* bytes read from the source */
	uint64_t last_ms; /* last read from the source, or send to the destination */
	struct event *rd, *wr;
	const char *closed, *error_src, *error_dst; /* close reasons */
};

struct gw_tunnel {
	struct gw_dir d[2]; /* 0: client to destination; 1: destination to client */
	struct event *idle;
	int idle_secs;
	gw_tunnel_done_fn done;
	void *arg;
	bool finished;
};

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void finish(struct gw_tunnel *t, const char *reason)
{
	if (t->finished)
		return;
	t->finished = true;
	for (int i = 0; i < 2; i++) {
		event_del(t->d[i].rd);
		event_del(t->d[i].wr);
	}
	event_del(t->idle);
	t->done(t->arg, reason); /* frees t (gw_tunnel_free) */
}

/* Sends what the buffer holds; reads again once it is empty. -1 when the
 * tunnel ended (t is gone). */
static int flush(struct gw_dir *d)
{
	while (d->held > 0) {
		ssize_t m = send(d->dst, d->buf + d->off, d->held, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (m > 0) {
			d->off += (size_t)m;
			d->held -= (size_t)m;
			d->last_ms = now_ms();
			continue;
		}
		if (m < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
			event_del(d->rd);
			event_add(d->wr, NULL);
			return 0;
		}
		finish(d->t, d->error_dst);
		return -1;
	}
	d->off = 0;
	event_del(d->wr);
	if (d->eof) {
		finish(d->t, d->closed);
		return -1;
	}
	event_add(d->rd, NULL);
	return 0;
}

static void on_read(evutil_socket_t fd, short what, void *arg)
{
	struct gw_dir *d = arg;
	(void)fd, (void)what;
	ssize_t n = recv(d->src, d->buf, AG_GW_TUNNEL_BUF, MSG_DONTWAIT);
	if (n > 0) {
		d->held = (size_t)n;
		*d->count += n;
		d->last_ms = now_ms();
	} else if (n == 0) {
		d->eof = true;
	} else if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
		return;
	} else {
		finish(d->t, d->error_src);
		return;
	}
	flush(d);
}

static void on_write(evutil_socket_t fd, short what, void *arg)
{
	(void)fd, (void)what;
	flush(arg);
}

/* Each direction's quiet time against the idle bound; the timer is set
 * again for the first moment one could reach it. */
static void on_idle(evutil_socket_t fd, short what, void *arg)
{
	struct gw_tunnel *t = arg;
	(void)fd, (void)what;
	uint64_t now = now_ms(), limit = (uint64_t)t->idle_secs * 1000, next = limit;
	for (int i = 0; i < 2; i++) {
		uint64_t quiet = now - t->d[i].last_ms;
		if (quiet >= limit) {
			finish(t, "idle_timeout");
			return;
		}
		if (limit - quiet < next)
			next = limit - quiet;
	}
	struct timeval tv = {.tv_sec = (time_t)(next / 1000),
			     .tv_usec = (suseconds_t)(next % 1000) * 1000};
	event_add(t->idle, &tv);
}

struct gw_tunnel *gw_tunnel_start(struct event_base *base, int cli, int up, int idle_secs,
				  const struct gw_tunnel_first *first, int64_t *bytes_out,
				  int64_t *bytes_in, gw_tunnel_done_fn done, void *arg)
{
	struct gw_tunnel *t = ag_xcalloc(1, sizeof(*t));
	t->idle_secs = idle_secs > 0 ? idle_secs : 1;
	t->done = done;
	t->arg = arg;
	static const char *const closed[2] = {"client_closed", "destination_closed"};
	static const char *const err[2] = {"client_error", "destination_error"};
	uint64_t now = now_ms();
	for (int i = 0; i < 2; i++) {
		struct gw_dir *d = &t->d[i];
		d->t = t;
		d->src = i ? up : cli;
		d->dst = i ? cli : up;
		d->count = i ? bytes_in : bytes_out;
		d->closed = closed[i];
		d->error_src = err[i];
		d->error_dst = err[1 - i];
		d->last_ms = now;
		d->buf = ag_xmalloc(AG_GW_TUNNEL_BUF);
		d->rd = event_new(base, d->src, EV_READ | EV_PERSIST, on_read, d);
		d->wr = event_new(base, d->dst, EV_WRITE | EV_PERSIST, on_write, d);
		if (!d->rd || !d->wr)
			abort();
	}
	t->idle = evtimer_new(base, on_idle, t);
	if (!t->idle)
		abort();
	struct timeval tv = {.tv_sec = t->idle_secs};
	event_add(t->idle, &tv);
	/* What each side must get first (the 200; bytes the client pipelined
	 * after its head) starts in its direction's buffer: sent when the
	 * socket is writable, before that direction reads anything. */
	const void *pre[2] = {first->to_up, first->to_cli};
	size_t pre_len[2] = {first->to_up_len, first->to_cli_len};
	for (int i = 0; i < 2; i++) {
		struct gw_dir *d = &t->d[i];
		if (pre_len[i] > 0 && pre_len[i] <= AG_GW_TUNNEL_BUF) {
			memcpy(d->buf, pre[i], pre_len[i]);
			d->held = pre_len[i];
			event_add(d->wr, NULL);
		} else {
			event_add(d->rd, NULL);
		}
	}
	return t;
}

void gw_tunnel_free(struct gw_tunnel *t)
{
	if (!t)
		return;
	for (int i = 0; i < 2; i++) {
		event_free(t->d[i].rd);
		event_free(t->d[i].wr);
		free(t->d[i].buf);
	}
	event_free(t->idle);
	free(t);
}
