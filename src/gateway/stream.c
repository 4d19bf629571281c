/*
 * stream.c: the gateway's evidence stream (gateway.h). Each record is one
 * canonical JSON line written with write(2) as soon as it exists, so a
 * crash loses at most the record being written, and a missing end line
 * tells the reader the stream is incomplete.
 */
#include "lib/base/ag.h"
#include "lib/base/error.h"
#include "gateway/gateway.h"

#include <sys/stat.h>
#include <time.h>

void gw_now(char out[32])
{
	struct timespec ts;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int gw_open_empty(const char *path, int flags)
{
	/* No link followed; a file AgentGuard made empty for us (bound into
	 * the container on its own) or a new one; never old evidence. */
	int fd = open(path, flags | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0640);
	struct stat st;
	if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size != 0)) {
		close(fd);
		errno = EEXIST;
		return -1;
	}
	return fd;
}

int gw_stream_open(struct gw_stream *s, const char *path, struct ag_error **err)
{
	*s = (struct gw_stream){.fd = -1};
	s->fd = gw_open_empty(path, O_WRONLY | O_APPEND);
	if (s->fd < 0)
		return ag_err(err, AG_E_IO, errno, "gateway.events.open",
			      "cannot open the evidence stream (a new or empty regular file)");
	return 0;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int gw_stream_write(struct gw_stream *s, json_t *rec)
{
	char *txt = rec ? json_dumps(rec, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII) : NULL;
	json_decref(rec);
	size_t n = txt ? strlen(txt) : 0;
	int r = -1;
	/* A broken stream stays broken: a later record must not make a gap
	 * look like a complete sequence. */
	if (txt && !s->broken && s->fd >= 0 && n < AG_GW_RECORD_MAX &&
	    s->bytes + (int64_t)n + 1 <= AG_GW_EVENTS_MAX_BYTES) {
		txt[n] = '\n'; /* replaces the NUL; write n + 1 bytes */
		if (write_all(s->fd, txt, n + 1) == 0) {
			s->bytes += (int64_t)n + 1;
			r = 0;
		}
	}
	free(txt);
	if (r < 0) {
		s->broken = true;
		s->lost++;
	}
	return r;
}

static void decision_write(struct gw_stream *s, json_t *rec)
{
	if (gw_stream_write(s, rec) == 0)
		s->records++;
}

void gw_stream_decision(struct gw_stream *s, json_t *rec, bool keep)
{
	if (keep) {
		decision_write(s, rec);
		return;
	}
	size_t slot = (s->last_head + s->n_last) % AG_GW_SAMPLE_LAST;
	if (s->n_last == AG_GW_SAMPLE_LAST) {
		json_decref(s->last[s->last_head]); /* the oldest held: sampled out */
		s->sampled_out++;
		s->last_head = (s->last_head + 1) % AG_GW_SAMPLE_LAST;
		slot = (s->last_head + s->n_last - 1) % AG_GW_SAMPLE_LAST;
	} else {
		s->n_last++;
	}
	s->last[slot] = rec;
}

bool gw_stream_finish(struct gw_stream *s, const char *reason)
{
	char ts[32];
	gw_now(ts);
	for (; s->n_last > 0; s->n_last--) {
		decision_write(s, s->last[s->last_head]);
		s->last[s->last_head] = NULL;
		s->last_head = (s->last_head + 1) % AG_GW_SAMPLE_LAST;
	}
	bool complete = !s->broken;
	json_t *end =
	    json_pack("{s:s, s:b, s:s, s:I, s:I, s:I, s:I, s:s}", "record", "end", "complete",
		      complete, "reason", reason, "records", (json_int_t)s->records, "lost",
		      (json_int_t)s->lost, "empty_connections", (json_int_t)s->empty, "sampled_out",
		      (json_int_t)s->sampled_out, "ended", ts);
	/* The end line may still fit when a decision record did not; it says
	 * complete=false then. Room for it is not reserved: if it does not fit,
	 * the missing end line says the same. */
	bool broken_before = s->broken;
	s->broken = false;
	if (gw_stream_write(s, end) < 0)
		complete = false;
	s->broken = broken_before || !complete;
	if (s->fd >= 0) {
		if (fsync(s->fd) < 0)
			complete = false;
		if (close(s->fd) < 0)
			complete = false;
		s->fd = -1;
	}
	return complete;
}
