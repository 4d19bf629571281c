/*
 * snapshot.h: bounded, sorted, fd-relative walk of a tree, with the entry
 * rules shared by workspace preparation and mutation capture.
 *
 * A snapshot is taken in three phases:
 *   1. walk:  fstatat(AT_SYMLINK_NOFOLLOW) every entry from directory fds
 *             (O_DIRECTORY|O_NOFOLLOW), apply the reserved-name, type,
 *             hardlink and bound rules, read symlink targets (bounded);
 *   2. links: every symlink must resolve, component by component, to an
 *             existing entry of the walked set (a chain of links must stay
 *             inside); absolute, escaping, dangling and .git links fail;
 *   3. hash:  every regular file is opened beneath the root without
 *             following any link (openat2 RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS,
 *             or a per-component O_NOFOLLOW fallback) with O_NONBLOCK, its
 *             identity is compared with the walk (dev, ino, mode, size,
 *             mtime, ctime, nlink) and it is read once: hashed, classified,
 *             line-counted and, when preparing, copied to the staging tree
 *             in the same loop. Two worker threads by default.
 * Any rule violation fails closed with a reason token; nothing is guessed.
 *
 * Paths are raw bytes, relative, '/'-separated, sorted by strcmp. In
 * artifacts and error messages they are written with ag_ws_path_encode().
 */
#ifndef AG_WS_SNAPSHOT_H
#define AG_WS_SNAPSHOT_H

#include "lib/base/ag.h"
#include "lib/base/sha256.h"

#include <sys/types.h>

struct ag_error;
struct ag_buf;

/* Every bound of the lifecycle; defaults from bounds.h. Tests shrink them. */
struct ag_ws_limits {
	uint64_t max_entries;
	uint64_t max_file_bytes;
	uint64_t max_total_bytes;
	uint64_t max_symlink_target_bytes;
	uint64_t max_path_bytes;
	uint64_t max_depth;
	uint64_t max_text_bytes; /* baseline text retained for line diffs */
};
void ag_ws_limits_default(struct ag_ws_limits *l);

enum ag_ws_kind {
	AG_WS_DIR = 'd',
	AG_WS_FILE = 'f',
	AG_WS_SYMLINK = 'l',
};

enum ag_ws_content {
	AG_WS_CONTENT_NA = 0, /* directories */
	AG_WS_CONTENT_TEXT,   /* UTF-8 without NUL */
	AG_WS_CONTENT_BINARY, /* contains NUL */
	AG_WS_CONTENT_NON_UTF8,
	AG_WS_CONTENT_SYMLINK,
};
const char *ag_ws_content_name(enum ag_ws_content c);

/* Walk-time identity of an entry, compared when it is opened. */
struct ag_ws_ident {
	dev_t dev;
	ino_t ino;
	mode_t mode;
	nlink_t nlink;
	struct timespec mtim, ctim;
};

struct ag_ws_entry {
	char *path;	     /* raw relative path, owned */
	char *target;	     /* symlink target (raw), owned; NULL otherwise */
	uint64_t size;	     /* file bytes, or symlink target bytes */
	uint64_t line_count; /* text and non-UTF-8 files; 0 otherwise */
	uint64_t text_off;   /* offset in the baseline text store when retained */
	uint32_t mode;	     /* permission bits as they are (capture) or will be (prepare) */
	uint32_t ident;	     /* index into ag_ws_snapshot.idv (walked snapshots only) */
	uint8_t kind;	     /* enum ag_ws_kind */
	uint8_t content;     /* enum ag_ws_content */
	bool retained;	     /* whole text kept in the text store at text_off */
	uint8_t sha[32];     /* files: content; links: target string */
};

/* Lowercase hex of an entry's SHA-256 (65 bytes with the NUL). */
void ag_ws_sha_hex(const uint8_t sha[32], char hex[AG_SHA256_HEX_LEN + 1]);
/* Parses 64 lowercase hex digits; false when malformed. */
bool ag_ws_sha_from_hex(const char *hex, uint8_t sha[32]);
/* SHA-256 of a buffer, raw. */
void ag_ws_sha_of(const void *p, size_t n, uint8_t sha[32]);

struct ag_ws_snapshot {
	struct ag_ws_entry *v;
	size_t n, alloc;
	uint64_t total_bytes;
	struct ag_ws_ident *idv; /* walk identities; NULL for a parsed baseline */
	size_t nid, idalloc;
};
#define AG_WS_SNAPSHOT_INIT                                                                        \
	{                                                                                          \
		NULL, 0, 0, 0, NULL, 0, 0                                                          \
	}
void ag_ws_snapshot_release(struct ag_ws_snapshot *s);
void ag_ws_snapshot_releasep(struct ag_ws_snapshot *s);
#define _cleanup_snapshot_ _cleanup_(ag_ws_snapshot_releasep)
/* Binary search by path; NULL when absent. The snapshot must be sorted. */
const struct ag_ws_entry *ag_ws_snapshot_find(const struct ag_ws_snapshot *s, const char *path);

enum ag_ws_mode {
	AG_WS_PREPARE, /* `.git` skipped silently; files may be copied */
	AG_WS_CAPTURE, /* `.git` anywhere fails closed (workspace.git_spoofing) */
};

/* Called once between the walk and the open/copy phase (tests race here). */
typedef void (*ag_ws_hook_fn)(void *ctx);

/*
 * Progress of a snapshot: first the walk lists entries (entries and the
 * file bytes listed grow, the totals are 0), then the files are read
 * (entries = files read of entries_total, bytes read of bytes_total).
 */
struct ag_ws_progress {
	bool reading;
	bool done; /* the snapshot succeeded: sent once, last */
	uint64_t entries, entries_total, bytes, bytes_total;
};
/*
 * Called from the thread that took the snapshot only, at most every
 * AG_PROGRESS_INTERVAL_MS (and once when reading starts and when done);
 * never on failure paths after the error.
 */
typedef void (*ag_ws_progress_fn)(void *ctx, const struct ag_ws_progress *p);

struct ag_ws_snapshot_opts {
	enum ag_ws_mode mode;
	const struct ag_ws_limits *limits; /* NULL: defaults from bounds.h */
	int dest_rootfd;		   /* prepare: staging workspace dir to copy into, or -1 */
	int text_fd;			   /* prepare: text store file to fill, or -1 */
	unsigned threads;		   /* hashing/copy workers; 0 means 2 */
	ag_ws_hook_fn after_walk;
	void *hook_ctx;
	/*
	 * The caller's runs root lives inside the source as `.agentguard/`: a
	 * real directory of exactly that name at the tree root is skipped
	 * instead of failing as a reserved path (anywhere else, or as a link or
	 * file, it still fails). Full prior-artifact validation (upstream 6.4)
	 * is not implemented.
	 */
	bool exclude_agentguard_root;
	/*
	 * Capture only: the top-level `.git` of the workspace (whatever it now
	 * is: directory, file or link) is the agent's repository that
	 * AgentGuard wrote (gitbase.h), skipped without being entered; a `.git`
	 * anywhere else still fails closed.
	 */
	bool skip_root_git;
	/*
	 * Prepare only: leaves entries out of the walk, and so out of every
	 * bound, the copy and the baseline. Asked once per name below the root
	 * (not for `.git` or the excluded runs root) with its relative path and
	 * whether it is a directory; returns -1 to keep it, a rule index
	 * (< nfilter_counts) to leave it out (a directory with all below it,
	 * never entered), counted in filter_counts[index], or -2 when it
	 * cannot decide (fails closed: workspace.exclude.undecided).
	 */
	int (*filter)(void *ctx, const char *path, bool is_dir);
	void *filter_ctx;
	uint64_t *filter_counts;
	size_t nfilter_counts;
	ag_ws_progress_fn progress; /* may be NULL */
	void *progress_ctx;
};

/*
 * Takes a snapshot of the tree below rootfd (an open directory). On
 * success *out holds the entries sorted by path. With dest_rootfd >= 0 the
 * tree is copied there (directories, files with masked modes and mtimes,
 * validated symlinks); the destination must be empty and lifecycle-owned.
 */
int ag_ws_snapshot_take(int rootfd, const struct ag_ws_snapshot_opts *opts,
			struct ag_ws_snapshot *out, struct ag_error **err);

/*
 * Reserved-name classification of one path component (ASCII casefold):
 * 0 none, 1 ".git", 2 another reserved name, 3 a prefix collision (a
 * reserved name followed by '.', '-' or '_', e.g. ".git-credentials").
 */
int ag_ws_reserved_component(const char *name, size_t len);
extern const char *const ag_ws_reserved_names[3];

/*
 * Lossless ASCII-safe path encoding used in every artifact and message:
 * valid UTF-8 is kept, except that bytes < 0x20, 0x7f, '%' and every byte
 * that is not part of a valid UTF-8 sequence become %XX (uppercase hex).
 * Decoding is the exact inverse. ag_ws_path_display() additionally bounds
 * the result to AG_WS_DISPLAY_PATH_BYTES for error messages.
 */
int ag_ws_path_encode(struct ag_buf *b, const char *p, size_t n, struct ag_error **err);
char *ag_ws_path_display(const char *p);
/* Returns a heap string, or NULL when `s` is not a valid encoding. */
char *ag_ws_path_decode(const char *s, size_t n, size_t *outlen);

/* Is [p, p+n) valid UTF-8 (no overlongs, surrogates or > U+10FFFF)? */
bool ag_ws_utf8_valid(const unsigned char *p, size_t n);

/*
 * Opens relpath beneath rootfd without following any symlink, with
 * openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS) or,
 * where that is unavailable (or ag_ws_force_no_openat2 is set, for tests),
 * one O_NOFOLLOW component at a time. Returns an fd or -1 with errno.
 */
int ag_ws_open_beneath(int rootfd, const char *relpath, int flags, mode_t mode);
extern bool ag_ws_force_no_openat2;

/*
 * Opens a regular-file entry of a walked snapshot (s must come from
 * ag_ws_snapshot_take) for reading, without opening anything that is not
 * that very file: O_PATH beneath rootfd, identity compared with the walk
 * (dev, ino, mode, size, nlink, mtime, ctime), then a reopen of that inode.
 * Returns the fd, or -1 with workspace.source_changed / .unreadable.
 */
int ag_ws_open_entry(int rootfd, const struct ag_ws_snapshot *s, const struct ag_ws_entry *e,
		     struct ag_error **err);

/*
 * Appends the canonical entry lines of a snapshot ("e\t..." lines, the
 * same format as the baseline file) to b. Used for the baseline and for
 * the current digest of a capture.
 */
int ag_ws_snapshot_serialize(const struct ag_ws_snapshot *s, struct ag_buf *b,
			     struct ag_error **err);
/* One entry line of the above. */
int ag_ws_entry_serialize(const struct ag_ws_entry *e, struct ag_buf *b, struct ag_error **err);
/* SHA-256 of the serialized entry lines, streamed (no whole-tree buffer). */
void ag_ws_snapshot_digest(const struct ag_ws_snapshot *s, char hex[AG_SHA256_HEX_LEN + 1]);

#endif
