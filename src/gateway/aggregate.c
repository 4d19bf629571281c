/*
 * aggregate.c: the gateway's aggregates (gateway.h): per (decision, host,
 * port, reason) key, counters of requests and bytes that are always
 * complete and always fit, whatever the agent sends. Each key is one fixed
 * slot of the --aggregates file, rewritten in place (pwrite) the moment its
 * counters change: a request is counted when it is judged, its bytes when
 * it closes, so a gateway killed mid-trial has lost no decision it made.
 *
 * Slot 0 is the header: {"record":"aggregates","keys":N,"overflow":{...}}
 * (the overflow counts every request whose key came after the first
 * AG_GW_AGG_KEYS_MAX, or whose slot would not fit). Slot K is key K:
 * {"record":"aggregate","decision":...,"host":...,"port":...,"reason":...,
 * "requests":N,"bytes_in":N,"bytes_out":N}. Every slot is AG_GW_AGG_SLOT
 * bytes: the JSON, blanks, and a newline.
 */
#include "lib/base/ag.h"
#include "lib/base/error.h"
#include "gateway/gateway.h"

int gw_aggs_open(struct gw_aggs *a, const char *path, struct ag_error **err)
{
	a->fd = -1;
	if (!path)
		return 0;
	a->fd = gw_open_empty(path, O_RDWR);
	if (a->fd < 0)
		return ag_err(err, AG_E_IO, errno, "gateway.aggregates.open",
			      "cannot open the aggregates file (a new or empty regular file)");
	return gw_aggs_write_header(a) < 0 ? ag_err(err, AG_E_IO, errno, "gateway.aggregates.write",
						    "cannot write the aggregates file")
					   : 0;
}

/* One slot: REC (taken) as compact JSON, padded; -1 when it cannot be
 * written or does not fit. */
static int write_slot(struct gw_aggs *a, size_t slot, json_t *rec)
{
	char *txt = rec ? json_dumps(rec, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII) : NULL;
	json_decref(rec);
	size_t n = txt ? strlen(txt) : 0;
	int r = -1;
	if (txt && n < AG_GW_AGG_SLOT) {
		char line[AG_GW_AGG_SLOT];
		memset(line, ' ', sizeof(line));
		memcpy(line, txt, n);
		line[AG_GW_AGG_SLOT - 1] = '\n';
		if (a->fd < 0 || pwrite(a->fd, line, sizeof(line),
					(off_t)(slot * AG_GW_AGG_SLOT)) == (ssize_t)sizeof(line))
			r = 0;
	}
	free(txt);
	if (r < 0 && a->fd >= 0)
		a->broken = true;
	return r;
}

static json_t *key_json(const struct gw_agg *k)
{
	return json_pack("{s:s, s:s, s:s, s:i, s:s, s:I, s:I, s:I}", "record", "aggregate",
			 "decision", k->allow ? "allow" : "deny", "host", k->host, "port", k->port,
			 "reason", k->reason, "requests", (json_int_t)k->requests, "bytes_in",
			 (json_int_t)k->bytes_in, "bytes_out", (json_int_t)k->bytes_out);
}

int gw_aggs_write_header(struct gw_aggs *a)
{
	return write_slot(a, 0,
			  json_pack("{s:s, s:I, s:b, s:{s:I, s:I, s:I, s:I}}", "record",
				    "aggregates", "keys", (json_int_t)a->n, "complete", !a->broken,
				    "overflow", "requests_allowed", (json_int_t)a->ov_allowed,
				    "requests_denied", (json_int_t)a->ov_denied, "bytes_in",
				    (json_int_t)a->ov_bytes_in, "bytes_out",
				    (json_int_t)a->ov_bytes_out));
}

int gw_aggs_count(struct gw_aggs *a, bool allow, const char *host, int port, const char *reason,
		  bool *first)
{
	*first = false;
	host = host ? host : "";
	reason = reason ? reason : "unknown";
	for (size_t i = 0; i < a->n; i++) {
		struct gw_agg *k = &a->keys[i];
		if (k->allow == allow && k->port == port && strcmp(k->reason, reason) == 0 &&
		    strcmp(k->host, host) == 0) {
			k->requests++;
			(void)write_slot(a, i + 1, key_json(k));
			return (int)i;
		}
	}
	if (a->n < AG_GW_AGG_KEYS_MAX && strlen(host) <= AG_EGRESS_HOST_MAX) {
		struct gw_agg *k = &a->keys[a->n];
		*k = (struct gw_agg){.allow = allow, .port = port, .reason = reason, .requests = 1};
		snprintf(k->host, sizeof(k->host), "%s", host);
		if (write_slot(a, a->n + 1, key_json(k)) == 0 || a->fd < 0) {
			a->n++;
			*first = true;
			(void)gw_aggs_write_header(a);
			return (int)a->n - 1;
		}
		/* a key that does not fit its slot is counted in the overflow */
	}
	*first = a->ov_allowed + a->ov_denied == 0;
	if (allow)
		a->ov_allowed++;
	else
		a->ov_denied++;
	(void)gw_aggs_write_header(a);
	return GW_AGG_OVERFLOW;
}

void gw_aggs_bytes(struct gw_aggs *a, int key, int64_t in, int64_t out)
{
	if (in == 0 && out == 0)
		return;
	if (key >= 0 && (size_t)key < a->n) {
		struct gw_agg *k = &a->keys[key];
		k->bytes_in += in;
		k->bytes_out += out;
		(void)write_slot(a, (size_t)key + 1, key_json(k));
		return;
	}
	a->ov_bytes_in += in;
	a->ov_bytes_out += out;
	(void)gw_aggs_write_header(a);
}

bool gw_aggs_close(struct gw_aggs *a)
{
	bool ok = a->fd < 0 || (gw_aggs_write_header(a) == 0 && !a->broken);
	if (a->fd >= 0) {
		if (fsync(a->fd) < 0 || close(a->fd) < 0)
			ok = false;
		a->fd = -1;
	}
	return ok;
}
