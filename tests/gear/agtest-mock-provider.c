/*
 * agtest-mock-provider: a scripted model provider for the real-agent tests
 * (tests/cli/t0940, t0945) and `scripts/demo --agent`. Test code, never
 * installed and never in a product image. Built static with musl (`make
 * tests` puts it in $(BUILD)/tests/agtest-mock-provider) so it runs in the
 * busybox test image, bind-mounted read-only, as a container on a study's
 * outbound network that the agent reaches only through the gateway.
 *
 *   agtest-mock-provider --listen IP:PORT --log-dir DIR --lifetime SECS
 *                        --workdir DIR
 *
 * It speaks just enough of two streaming APIs (server-sent events) to make
 * the real agent binaries perform one scripted task, the same for both:
 * read README.md, write NOTES.md, change README.md's "status: draft" line
 * to "status: reviewed", run `wc -l README.md NOTES.md`, and finish.
 *   POST /v1/responses    OpenAI Responses (Codex): exec_command calls,
 *                         the edits as one apply_patch (which Codex applies
 *                         itself), then an assistant message
 *   POST /v1/messages     Anthropic Messages (Claude Code): Read, Write,
 *                         Edit and Bash tool_use blocks, then text; a
 *                         request that offers no Bash tool (a side request
 *                         such as a title) gets text only
 *   HEAD or GET anything  200, empty (connectivity checks)
 * The step is the number of tool results already in the request body
 * ("type":"function_call_output" items, "tool_result" blocks): stateless,
 * so a retried request gets the same answer. --workdir is the agent's
 * working directory (Claude Code's file tools take absolute paths).
 *
 * Every request is logged, one line, to DIR/requests.log: method, path,
 * step, whether a credential header came (never its value), and whether
 * the body held the command's output ("2 total"). DIR/ready appears once
 * listening. One connection at a time, each answered and closed
 * (Connection: close); heads are bounded to 64 KiB, bodies to 8 MiB, each
 * read by a 20 s timeout; the process exits after SECS.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define HEAD_MAX (64 * 1024)
#define BODY_MAX (8 * 1024 * 1024)
#define OUT_MAX (64 * 1024)

static const char *workdir = "/agentguard-workspace";
static FILE *logf;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("agtest-mock-provider: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

static void write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

/* A growing output buffer, bounded (OUT_MAX: the scripted answers are small). */
struct out {
	char b[OUT_MAX];
	size_t n;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(o->b + o->n, sizeof(o->b) - o->n, fmt, ap);
	va_end(ap);
	if (m < 0 || (size_t)m >= sizeof(o->b) - o->n)
		die("answer larger than %d bytes", OUT_MAX);
	o->n += (size_t)m;
}

/* s as the inside of a JSON string (quotes, backslashes, control bytes). */
static void put_esc(struct out *o, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			put(o, "\\%c", c);
		else if (c == '\n')
			put(o, "\\n");
		else if (c < 0x20)
			put(o, "\\u%04x", c);
		else
			put(o, "%c", c);
	}
}

/* One server-sent event whose data is the JSON in d. */
static void event(struct out *o, const char *type, const struct out *d)
{
	put(o, "event: %s\ndata: %.*s\n\n", type, (int)d->n, d->b);
}

static size_t count(const char *hay, size_t n, const char *needle)
{
	size_t k = 0, l = strlen(needle);
	for (const char *p = hay; p && (size_t)(p - hay) + l <= n;) {
		p = memmem(p, n - (size_t)(p - hay), needle, l);
		if (!p)
			break;
		k++;
		p += l;
	}
	return k;
}

/* ---- the scripted task ---- */

static const char PATCH[] = "apply_patch <<'EOF'\n"
			    "*** Begin Patch\n"
			    "*** Add File: NOTES.md\n"
			    "+Written by the scripted agent.\n"
			    "*** Update File: README.md\n"
			    "@@\n"
			    "-status: draft\n"
			    "+status: reviewed\n"
			    "*** End Patch\n"
			    "EOF\n";
static const char WC[] = "wc -l README.md NOTES.md";
static const char DONE[] = "Done: NOTES.md written, README.md reviewed.";

/* OpenAI Responses: step k's output item as JSON in item. */
static void openai_item(struct out *item, size_t k)
{
	const char *cmds[] = {"cat README.md", PATCH, WC};
	if (k < 3) {
		struct out args = {.n = 0};
		put(&args, "{\"cmd\":\"");
		put_esc(&args, cmds[k]);
		put(&args, "\"}");
		args.b[args.n] = '\0';
		put(item,
		    "{\"type\":\"function_call\",\"id\":\"fc_%zu\",\"call_id\":\"call_%zu\","
		    "\"name\":\"exec_command\",\"status\":\"completed\",\"arguments\":\"",
		    k, k);
		put_esc(item, args.b);
		put(item, "\"}");
	} else {
		put(item,
		    "{\"type\":\"message\",\"id\":\"msg_%zu\",\"role\":\"assistant\","
		    "\"status\":\"completed\",\"content\":[{\"type\":\"output_text\",\"text\":\"%"
		    "s\","
		    "\"annotations\":[]}]}",
		    k, DONE);
	}
}

static void openai_answer(struct out *o, size_t k)
{
	struct out d = {.n = 0}, item = {.n = 0};
	put(&d, "{\"type\":\"response.created\",\"response\":{\"id\":\"resp_%zu\"}}", k);
	event(o, "response.created", &d);
	openai_item(&item, k);
	d.n = 0;
	put(&d, "{\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":%.*s}",
	    (int)item.n, item.b);
	event(o, "response.output_item.added", &d);
	d.n = 0;
	put(&d, "{\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":%.*s}",
	    (int)item.n, item.b);
	event(o, "response.output_item.done", &d);
	d.n = 0;
	put(&d,
	    "{\"type\":\"response.completed\",\"response\":{\"id\":\"resp_%zu\",\"usage\":"
	    "{\"input_tokens\":10,\"input_tokens_details\":{\"cached_tokens\":0},"
	    "\"output_tokens\":5,\"output_tokens_details\":{\"reasoning_tokens\":0},"
	    "\"total_tokens\":15}}}",
	    k);
	event(o, "response.completed", &d);
}

/* Anthropic Messages: step k's tool input as JSON (NULL: the final text). */
static const char *anthropic_tool(size_t k, struct out *input)
{
	switch (k) {
	case 0:
		put(input, "{\"file_path\":\"%s/README.md\"}", workdir);
		return "Read";
	case 1:
		put(input,
		    "{\"file_path\":\"%s/NOTES.md\",\"content\":\"Written by the scripted "
		    "agent.\\n\"}",
		    workdir);
		return "Write";
	case 2:
		put(input,
		    "{\"file_path\":\"%s/README.md\",\"old_string\":\"status: draft\","
		    "\"new_string\":\"status: reviewed\"}",
		    workdir);
		return "Edit";
	case 3:
		put(input, "{\"command\":\"%s\",\"description\":\"Count the lines\"}", WC);
		return "Bash";
	default:
		return NULL;
	}
}

static void anthropic_answer(struct out *o, size_t k, int tools, const char *model)
{
	struct out d = {.n = 0}, input = {.n = 0};
	put(&d,
	    "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_%zu\",\"type\":\"message\","
	    "\"role\":\"assistant\",\"model\":\"%s\",\"content\":[],\"stop_reason\":null,"
	    "\"stop_sequence\":null,\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}",
	    k, model);
	event(o, "message_start", &d);
	const char *tool = tools ? anthropic_tool(k, &input) : NULL;
	d.n = 0;
	if (tool) {
		input.b[input.n] = '\0';
		put(&d,
		    "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":"
		    "{\"type\":\"tool_use\",\"id\":\"toolu_%zu\",\"name\":\"%s\",\"input\":{}}}",
		    k, tool);
		event(o, "content_block_start", &d);
		d.n = 0;
		put(&d, "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":"
			"{\"type\":\"input_json_delta\",\"partial_json\":\"");
		put_esc(&d, input.b);
		put(&d, "\"}}");
		event(o, "content_block_delta", &d);
	} else {
		put(&d, "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":"
			"{\"type\":\"text\",\"text\":\"\"}}");
		event(o, "content_block_start", &d);
		d.n = 0;
		put(&d,
		    "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":"
		    "{\"type\":\"text_delta\",\"text\":\"%s\"}}",
		    DONE);
		event(o, "content_block_delta", &d);
	}
	d.n = 0;
	put(&d, "{\"type\":\"content_block_stop\",\"index\":0}");
	event(o, "content_block_stop", &d);
	d.n = 0;
	put(&d,
	    "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"%s\",\"stop_sequence\":null},"
	    "\"usage\":{\"output_tokens\":5}}",
	    tool ? "tool_use" : "end_turn");
	event(o, "message_delta", &d);
	d.n = 0;
	put(&d, "{\"type\":\"message_stop\"}");
	event(o, "message_stop", &d);
}

/* ---- HTTP ---- */

static void set_timeouts(int fd)
{
	struct timeval tv = {.tv_sec = 20};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

static void reply(int c, const char *status, const char *type, const char *body, size_t n)
{
	char head[256];
	int m = snprintf(head, sizeof(head),
			 "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			 "Connection: close\r\n\r\n",
			 status, type, n);
	write_all(c, head, (size_t)m);
	write_all(c, body, n);
}

/* The value of header NAME in head (NUL-terminated, CRLF lines), or NULL. */
static const char *header(const char *head, const char *name, size_t *len)
{
	size_t l = strlen(name);
	for (const char *p = strstr(head, "\r\n"); p && p[2]; p = strstr(p + 2, "\r\n")) {
		const char *h = p + 2;
		if (strncasecmp(h, name, l) == 0 && h[l] == ':') {
			h += l + 1;
			while (*h == ' ')
				h++;
			*len = strcspn(h, "\r\n");
			return h;
		}
	}
	return NULL;
}

static void serve(int c)
{
	static char buf[HEAD_MAX + 1];
	static char body[BODY_MAX + 1];
	size_t n = 0;
	char *end = NULL;
	while (!end && n < HEAD_MAX) {
		ssize_t r = read(c, buf + n, HEAD_MAX - n);
		if (r <= 0)
			return;
		n += (size_t)r;
		buf[n] = '\0';
		end = strstr(buf, "\r\n\r\n");
	}
	if (!end) {
		reply(c, "431 Request Header Fields Too Large", "text/plain", "", 0);
		return;
	}
	*end = '\0';
	size_t have = n - (size_t)(end + 4 - buf);
	char method[16] = "", path[256] = "";
	if (sscanf(buf, "%15s %255s", method, path) != 2) {
		reply(c, "400 Bad Request", "text/plain", "", 0);
		return;
	}
	size_t vl = 0;
	const char *v = header(buf, "content-length", &vl);
	long long clen = v ? strtoll(v, NULL, 10) : 0;
	int cred =
	    header(buf, "authorization", &vl) != NULL || header(buf, "x-api-key", &vl) != NULL;
	if (clen < 0 || clen > BODY_MAX) {
		reply(c, "413 Content Too Large", "text/plain", "", 0);
		return;
	}
	if ((long long)have > clen)
		have = (size_t)clen;
	memcpy(body, end + 4, have);
	while ((long long)have < clen) {
		ssize_t r = read(c, body + have, (size_t)clen - have);
		if (r <= 0)
			return;
		have += (size_t)r;
	}
	body[have] = '\0';

	static struct out o;
	o.n = 0;
	size_t k = 0;
	const char *api = "-";
	if (strcmp(method, "POST") == 0 && strncmp(path, "/v1/responses", 13) == 0) {
		api = "responses";
		k = count(body, have, "\"type\":\"function_call_output\"");
		openai_answer(&o, k);
	} else if (strcmp(method, "POST") == 0 && strncmp(path, "/v1/messages", 12) == 0) {
		api = "messages";
		char model[64] = "claude-mock";
		const char *m = strstr(body, "\"model\":\"");
		if (m)
			snprintf(model, sizeof(model), "%.*s", (int)strcspn(m + 9, "\"\\"), m + 9);
		k = count(body, have, "\"tool_result\"");
		anthropic_answer(&o, k, strstr(body, "\"name\":\"Bash\"") != NULL, model);
	}
	path[strcspn(path, "?")] = '\0';
	fprintf(logf, "request %s %s api=%s step=%zu credential=%s saw_wc=%s\n", method, path, api,
		k, cred ? "yes" : "no", strstr(body, " 2 total") ? "yes" : "no");
	fflush(logf);
	if (strcmp(api, "-") != 0) {
		char head[160];
		int hm = snprintf(head, sizeof(head),
				  "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
				  "Cache-Control: no-cache\r\nConnection: close\r\n\r\n");
		write_all(c, head, (size_t)hm);
		write_all(c, o.b, o.n);
	} else if (strcmp(method, "HEAD") == 0 || strcmp(method, "GET") == 0) {
		reply(c, "200 OK", "text/plain", "", 0);
	} else {
		reply(c, "404 Not Found", "text/plain", "", 0);
	}
}

int main(int argc, char **argv)
{
	const char *listen_on = NULL, *dir = NULL;
	long lifetime = 0;
	for (int i = 1; i < argc; i += 2) {
		if (i + 1 >= argc)
			die("option %s needs a value", argv[i]);
		if (strcmp(argv[i], "--listen") == 0)
			listen_on = argv[i + 1];
		else if (strcmp(argv[i], "--log-dir") == 0)
			dir = argv[i + 1];
		else if (strcmp(argv[i], "--lifetime") == 0)
			lifetime = strtol(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "--workdir") == 0)
			workdir = argv[i + 1];
		else
			die("unknown option %s", argv[i]);
	}
	if (!listen_on || !dir || lifetime < 1 || lifetime > 3600 || strlen(workdir) > 200 ||
	    workdir[0] != '/' || strpbrk(workdir, "\"\\"))
		die("usage: --listen IP:PORT --log-dir DIR --lifetime 1..3600 [--workdir /ABS]");
	char ip[64];
	const char *colon = strrchr(listen_on, ':');
	if (!colon || (size_t)(colon - listen_on) >= sizeof(ip))
		die("--listen IP:PORT");
	snprintf(ip, sizeof(ip), "%.*s", (int)(colon - listen_on), listen_on);
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_port = htons((uint16_t)atoi(colon + 1))};
	if (inet_pton(AF_INET, ip, &sa.sin_addr) != 1)
		die("--listen: not an IPv4 address");
	signal(SIGPIPE, SIG_IGN);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 64) < 0)
		die("listen %s: %s", listen_on, strerror(errno));
	char path[512];
	snprintf(path, sizeof(path), "%s/requests.log", dir);
	logf = fopen(path, "a");
	if (!logf)
		die("open %s: %s", path, strerror(errno));
	snprintf(path, sizeof(path), "%s/ready", dir);
	FILE *r = fopen(path, "w");
	if (!r)
		die("open %s: %s", path, strerror(errno));
	fputs("ready\n", r);
	fclose(r);
	time_t stop = time(NULL) + lifetime;
	for (;;) {
		time_t now = time(NULL);
		if (now >= stop)
			return 0;
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		int p = poll(&pf, 1, (int)(stop - now) * 1000);
		if (p < 0 && errno != EINTR)
			die("poll: %s", strerror(errno));
		if (p <= 0)
			continue;
		int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			continue;
		set_timeouts(c);
		serve(c);
		close(c);
	}
}
