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
 *
 * Fields: uid, gid, workspace_write, tmp_write, root_read_only (statvfs
 * ST_RDONLY on /), cap_inh/prm/eff/bnd/amb (hex masks from
 * /proc/self/status), no_new_privs, seccomp (mode), net_ifaces (names in
 * /sys/class/net), docker_socket (a socket at a well-known path), pids_max
 * and memory_max (the limits the container's own cgroup shows, v1 or v2;
 * "max" when unlimited, null when not visible).
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
#include <sys/statvfs.h>
#include <unistd.h>

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

int main(int argc, char **argv)
{
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
	put("}\n");
	return write(1, out, used) == (ssize_t)used ? 0 : 11;
}
