/*
 * bounds.h: every limit AgentGuard enforces, in one place, each with what it
 * protects. Hitting a bound always fails closed with a named reason token.
 */
#ifndef AG_BOUNDS_H
#define AG_BOUNDS_H

/* ---- config file (untrusted YAML written by a person or an agent) ---- */

/* Largest config file read; protects memory and parse time. */
#define AG_CONFIG_MAX_BYTES (1024 * 1024)
/* Deepest nesting of mappings/sequences; protects the recursive walkers. */
#define AG_CONFIG_MAX_DEPTH 64
/* Most YAML nodes in one document; protects memory from wide documents. */
#define AG_CONFIG_MAX_NODES 100000
/* Longest single scalar; a prompt is the longest legitimate value. */
#define AG_CONFIG_MAX_SCALAR_BYTES 65536
/* Longest mapping key; keys are identifiers, never data. */
#define AG_CONFIG_MAX_KEY_BYTES 256
/* Most items in any string list (paths, patterns, commands, tags). */
#define AG_CONFIG_MAX_LIST_ITEMS 1024
/* Most entries in free-form maps (agent_environment, agent_metadata). */
#define AG_CONFIG_MAX_MAP_ENTRIES 256
/* How much of a key is echoed back in an error message. */
#define AG_CONFIG_ECHO_KEY_BYTES 64

/* task_id: portable artifact identifier, 1..128 characters. */
#define AG_TASK_ID_MAX 128
/* task.prompt_file: largest prompt file read. */
#define AG_PROMPT_FILE_MAX_BYTES 65536
/* command_timeout_seconds / sandbox.timeout_seconds upper bound (24 h). */
#define AG_TIMEOUT_MAX_SECONDS 86400
/* max_output_bytes upper bound per stream (64 MiB held in memory). */
#define AG_OUTPUT_MAX_BYTES (64 * 1024 * 1024)
/* benchmark.version and other small positive integers. */
#define AG_SMALL_INT_MAX 2147483647

/* ---- contained_execution v1 (contract: Configuration Contract) ---- */
#define AG_CE_UID_MIN 1
#define AG_CE_UID_MAX 2147483647
#define AG_CE_CPU_MIN 0.1
#define AG_CE_CPU_MAX 8.0
#define AG_CE_MEMORY_MIN (64LL * 1024 * 1024)
#define AG_CE_MEMORY_MAX (16LL * 1024 * 1024 * 1024)
#define AG_CE_PIDS_MIN 16
#define AG_CE_PIDS_MAX 4096
/* runtime: gvisor: the sandbox's own host tasks (the Sentry, the gofer,
 * the ptrace stubs) share the container's pids limit: measured here, 38
 * idle, and 8 background guest processes failed at 128 and ran at 256. */
#define AG_CE_GVISOR_PIDS_MIN 256
#define AG_CE_TMPFS_MIN (64LL * 1024)
#define AG_CE_TMPFS_MAX (4LL * 1024 * 1024 * 1024)
/* Docker size strings are at most this long ("16g" .. "17179869184"). */
#define AG_SIZE_STRING_MAX 24

/* ---- contained environment allowlist (contract: environment rules) ---- */
#define AG_ENV_MAX_ENTRIES 32
#define AG_ENV_NAME_MAX 64
#define AG_ENV_VALUE_MAX 4096
#define AG_ENV_TOTAL_BYTES 16384
/* 32 configured entries plus the 4 fixed runtime defaults. */
#define AG_ENV_RENDER_MAX_ENTRIES 36

/* ---- secret content patterns (upstream section 2.1) ---- */
#define AG_SECRET_PATTERN_ID_MAX 64
#define AG_SECRET_PATTERN_MIN_CHARS 8
#define AG_SECRET_PATTERN_MAX_CHARS 1024
#define AG_SECRET_PATTERN_MAX_BYTES 2048
#define AG_SECRET_PATTERN_TOTAL_BYTES 16384
#define AG_SECRET_DETECTORS_MAX 32

/* ---- Docker image references ---- */
/* Longest reference accepted; Docker's own name limit is 255 per path. */
#define AG_IMAGE_REF_MAX 512
#define AG_IMAGE_TAG_MAX 128

/* ---- init ---- */
/* Largest existing .gitignore that init will read and extend. */
#define AG_GITIGNORE_MAX_BYTES (1024 * 1024)

/* ---- workspace lifecycle (issue 4; upstream-reference 6.2) ---- */
/* Most entries (files, directories, symlinks) walked in one tree; protects
 * memory and time of prepare and capture. */
#define AG_WS_MAX_ENTRIES 100000
/* Largest single regular file copied or hashed (64 MiB); protects disk and time. */
#define AG_WS_MAX_FILE_BYTES (64ULL * 1024 * 1024)
/* Sum of regular-file sizes in one tree (1 GiB); protects disk and time. */
#define AG_WS_MAX_TOTAL_BYTES (1024ULL * 1024 * 1024)
/* Longest symlink target read; protects the bounded readlinkat buffer. */
#define AG_WS_MAX_SYMLINK_TARGET_BYTES 4096
/* Longest relative path inside the tree, in bytes; protects path buffers. */
#define AG_WS_MAX_PATH_BYTES 4096
/* Deepest directory nesting; the walk holds one fd per level, so this
 * protects the fd table and the recursion stack. */
#define AG_WS_MAX_DEPTH 256
/* Baseline file text retained in evidence for exact line diffs (8 MiB);
 * files beyond the budget get line evidence "incomplete". */
#define AG_WS_MAX_TEXT_BYTES (8ULL * 1024 * 1024)
/* Largest current file that capture reads back for a line diff; larger
 * files get line evidence "incomplete". Protects capture memory. */
#define AG_WS_DIFF_MAX_FILE_BYTES (8ULL * 1024 * 1024)
/* Most lines on either side of one diff; protects the Myers V array. */
#define AG_WS_DIFF_MAX_LINES 1000000
/* Work budget (diagonal steps) of one Myers diff; past it the line
 * evidence is "incomplete" instead of a slow capture. */
#define AG_WS_DIFF_MAX_COST 200000000ULL
/* Largest serialized baseline (evidence/baseline.txt) read back; protects
 * capture memory. 100,000 entries at the longest paths fit. */
#define AG_WS_BASELINE_MAX_BYTES (256ULL * 1024 * 1024)
/* Largest evidence/workspace-metadata.json read back by capture/cleanup. */
#define AG_WS_METADATA_MAX_BYTES (1024 * 1024)
/* Longest workspace (run) id; it is one path component. */
#define AG_WS_ID_MAX 64
/* Most writable paths in the ownership metadata. */
#define AG_WS_MAX_WRITABLE_PATHS 64
/* Records (HEAD, status, paths) read back from the git reader child; protects memory. */
#define AG_WS_GIT_OUTPUT_MAX_BYTES (32 * 1024 * 1024)
/* Wall-clock limit of the git reader child; a hostile repo (a FIFO named
 * .gitignore, a huge history) cannot stall prepare. */
#define AG_WS_GIT_TIMEOUT_MS 30000
/* What the git reader may write on stderr (it writes nothing; a sanitizer
 * report is kept this far); beyond it the reader is killed. */
#define AG_WS_GIT_STDERR_MAX_BYTES 4096
/* SIGTERM-to-SIGKILL grace for a git reader past its deadline: it holds no
 * state worth a clean exit. */
#define AG_WS_GIT_KILL_GRACE_MS 100
/* Address space of the git reader (RLIMIT_AS): its image and libraries
 * plus what libgit2 allocates for a large repository; a hostile object that
 * inflates or diffs without bound stops here (limit.workspace.git_memory)
 * instead of taking gigabytes of the host. */
#define AG_WS_GIT_AS_MAX_BYTES (1024UL * 1024 * 1024)
/* CPU seconds of the git reader (RLIMIT_CPU; SIGXCPU, then SIGKILL a
 * second later): below the wall-clock limit, so a reader that computes
 * rather than waits is named (limit.workspace.git_cpu). */
#define AG_WS_GIT_CPU_MAX_S 20
/* Wall clock and CPU time for writing the workspace's baseline repository
 * (gitbase.h): every copied byte hashed (collision-detecting SHA-1) and
 * compressed once, up to AG_WS_MAX_TOTAL_BYTES; about 10 s of CPU per GiB
 * here, so both leave room for a slower machine. */
#define AG_WS_GIT_BASELINE_TIMEOUT_MS 180000
#define AG_WS_GIT_BASELINE_CPU_MAX_S 120
/* How deep the reader follows objects/info/alternates to check that each
 * lies in the source (libgit2 follows five levels). */
#define AG_WS_GIT_ALTERNATES_DEPTH 5
/* Largest alternates file the reader accepts (a list of paths). */
#define AG_WS_GIT_POINTER_MAX_BYTES 65536
/* Most git status entries recorded in the baseline. */
#define AG_WS_GIT_STATUS_MAX_ENTRIES 200000
/* Most symlinks followed while resolving one link inside the tree (as
 * Linux's own 40); protects against link loops. */
#define AG_WS_SYMLINK_MAX_HOPS 40
/* Longest path echoed in an error message (after escaping). */
#define AG_WS_DISPLAY_PATH_BYTES 160

/* ---- process runner / docker (src/lib/base/proc.c, src/lib/docker) ---- */
/* SIGTERM-to-SIGKILL grace after a timeout or cancel when the caller passes
 * kill_grace_ms 0; long enough for docker to stop cleanly, short enough that a
 * stuck child cannot stall AgentGuard. */
#define AG_PROC_KILL_GRACE_DEFAULT_MS 2000
/* After the direct child exits, how long processes it left in its group may
 * keep its stdout/stderr pipes open before the group is killed (capped by the
 * deadline). Protects against a background grandchild hanging the runner. */
#define AG_PROC_ORPHAN_DRAIN_MS 2000
/* After the final SIGKILL, how long the runner still reads what is buffered in
 * the pipes before closing them; a process that left the group (setsid) can
 * hold a pipe forever, so this bounds the very last wait. */
#define AG_PROC_FINAL_DRAIN_MS 500
/* Longest interval between two should_cancel polls and between two deadline
 * checks; the cancel latency. */
#define AG_PROC_POLL_MS 100
/* One read() from a child pipe; fixed stack buffer, the caps bound the total. */
#define AG_PROC_READ_CHUNK 16384

/* `docker --version` output read to find the client version; the line is
 * about 50 bytes, anything longer is not a docker client we understand. */
#define AG_DOCKER_VERSION_OUTPUT_MAX 256
/* Longest client version token kept ("27.5.1", "24.0.7+dfsg1"). */
#define AG_DOCKER_VERSION_TOKEN_MAX 64
/* Wall clock for one docker control call (version, inspect, create, start,
 * stop, rm, network calls). Upstream used 5 s; a loaded engine (image builds,
 * network churn: iptables under its lock) answers a create, a start or an
 * inspect of a starting container in more than 5 s, and the run then failed
 * as a Docker fault (docker.engine.timeout) on a healthy daemon. A hung
 * daemon still cannot stall AgentGuard longer than this per call. */
#define AG_DOCKER_CONTROL_TIMEOUT_MS 15000
/* stdout kept from a docker control call (container id, status lines). */
#define AG_DOCKER_CONTROL_OUTPUT_MAX 4096
/* stdout kept from one docker inspect call (one object of JSON). */
#define AG_DOCKER_INSPECT_OUTPUT_MAX 65536
/* stderr kept from any docker call, for a bounded, sanitized diagnostic. */
#define AG_DOCKER_STDERR_MAX 4096

/* ---- rendered docker argv (src/lib/docker/exec_spec.c) ---- */
/* Container name "agentguard-" + 1..63 chars; Docker's own limit is larger. */
#define AG_CONTAINER_NAME_MAX 74
/* Longest container path (workspace, tmpfs, entrypoint); these are short,
 * fixed-role paths, never data. */
#define AG_CONTAINER_PATH_MAX 256
/* Longest host path of the bind-mounted workspace (Linux PATH_MAX). */
#define AG_HOST_PATH_MAX 4096
/* Most AgentGuard-owned labels on one container (owner, run id, test...). */
#define AG_RENDER_MAX_LABELS 16
/* Most network endpoints an inspected container may show: the one it was
 * created on, plus one it was connected to after create (a study gateway's
 * outbound network). More fails closed (inspect.expect.networks). */
#define AG_INSPECT_NETWORKS_MAX 2
/* Most single-file bind mounts a spec renders and inspection judges (the
 * static probe; the agent's init and trial CA; the gateway's three evidence
 * files, its inject file and a test-only destination CA bundle). */
#define AG_INSPECT_FILE_BINDS_MAX 6
/* Host files a container may get bind-mounted one by one (the study
 * gateway's policy, stream and aggregates, with credential injection its
 * inject file and a test-only destination CA bundle), and the range of the size
 * limit on every file it writes (RLIMIT_FSIZE). */
#define AG_EXEC_FILE_BINDS_MAX 5
#define AG_EXEC_FSIZE_MIN 4096
#define AG_EXEC_FSIZE_MAX (1024LL * 1024 * 1024)
/* Longest label key ("agentguard.contained-run.id") and value. */
#define AG_LABEL_KEY_MAX 64
#define AG_LABEL_VALUE_MAX 128
/* Most elements of the contained child argv; Linux allows far more, but an
 * agent command line has a handful. Protects memory and the rendered output. */
#define AG_CHILD_ARGV_MAX_ITEMS 4096
/* Longest single child argv element: Linux MAX_ARG_STRLEN (32 pages) - 1,
 * so a rendered argv never fails at exec time for one huge element. */
#define AG_CHILD_ARG_MAX_BYTES (128 * 1024 - 1)
/* Sum of child argv element sizes (incl. NULs): a quarter of the usual 2 MiB
 * ARG_MAX, leaving room for the docker flags and the environment. */
#define AG_CHILD_ARGV_MAX_BYTES (512 * 1024)

/* ---- Docker capability preflight (upstream-reference 4; contract: Docker Capability Preflight)
 * ---- */
/* Largest docker JSON answer parsed (version, info, inspect); protects memory
 * and parse time from a hostile or confused client/daemon. */
#define AG_PF_JSON_MAX_BYTES (64 * 1024)
/* Deepest JSON nesting accepted in a docker answer; protects the recursive
 * bound walker (docker's own answers nest about 6 deep). */
#define AG_PF_JSON_MAX_DEPTH 32
/* Most items in any one JSON array or object of a docker answer. */
#define AG_PF_JSON_MAX_ITEMS 512
/* Longest JSON string in a docker answer (bytes). */
#define AG_PF_JSON_MAX_STRING 65536
/* Wall-clock limit of one docker control call (version, info, inspect, create,
 * rm); a hung daemon cannot stall the preflight. Same value as
 * AG_DOCKER_CONTROL_TIMEOUT_MS, kept separate so the preflight can be tuned. */
#define AG_PF_DOCKER_TIMEOUT_MS 15000
/* Wall-clock limit of the probe run (`docker start -a`): one container start
 * plus a few busybox commands; 0.3 s measured, 15 s budget for slow hosts. */
#define AG_PF_PROBE_TIMEOUT_MS 15000
/* Captured stdout of the probe script (one fixed JSON line). */
#define AG_PF_PROBE_OUTPUT_MAX_BYTES 4096
/* Longest diagnostic in evidence or on a terminal (contract: bounded). */
#define AG_PF_DIAGNOSTIC_MAX_BYTES 512
/* Longest description of an Engine API request in an error message (its
 * path, sanitized: the rest of the message stays within the diagnostic). */
#define AG_DOCKER_WHAT_MAX_BYTES 160
/* Largest serialized preflight evidence object; protects reports. */
#define AG_PF_EVIDENCE_MAX_BYTES (64 * 1024)
/* Oldest Docker API with --read-only plus --tmpfs options (Docker 1.13). */
#define AG_PF_MIN_API_MAJOR 1
#define AG_PF_MIN_API_MINOR 25

/* ---- contained-run ---- */

/* Most AgentGuard-labelled containers listed in one residue inventory; more
 * fails closed (an inventory we cannot read whole proves nothing). */
#define AG_RUN_RESIDUE_MAX 256
/* Objects one run's ledger remembers (agent, probes, gateway, networks, export). */
#define AG_LEDGER_MAX_ENTRIES 16
/* Owner labels one ledger entry checks before any action by its id. */
#define AG_LEDGER_MAX_LABELS 4
/* Extra wall-clock time for `docker start -a` beyond the agent timeout, so the
 * client's own exit is seen before AgentGuard kills it. */
#define AG_RUN_START_SLACK_MS 2000
/* Bytes of the run id's random suffix (hex digits = 2x). */
#define AG_RUN_ID_RANDOM_BYTES 4
/* Largest contained-run.json written (canonical, bounded). */
#define AG_RUN_ARTIFACT_MAX_BYTES (16 * 1024 * 1024)
/* Most changed paths listed in an artifact; the counts stay exact. */
#define AG_RUN_CHANGED_LIST_MAX 1000
/* The agent argv inside the containment evidence (twice: requested and
 * execution): at most this many items and bytes, so the object stays inside
 * its 32 KiB bound; the artifact's own command list keeps every token. */
#define AG_RUN_EVIDENCE_ARGV_ITEMS 32
#define AG_RUN_EVIDENCE_ARGV_BYTES 4096
/* The artifact's own copy of the redacted argv (within its item bound). */
#define AG_RUN_ARTIFACT_ARGV_ITEMS 4096
#define AG_RUN_ARTIFACT_ARGV_BYTES (1024 * 1024)
/* Largest artifact the seal hashes (the artifact's own bound). */
#define AG_SEAL_ARTIFACT_MAX_BYTES (16u * 1024 * 1024)
/* Most differing paths recorded by the source integrity check. */
#define AG_RUN_SOURCE_DIFF_MAX 100
/* Largest ownership marker or artifact read back by `agentguard cleanup`. */
#define AG_RUN_MARKER_MAX_BYTES 8192
/* Most run directories examined by one `agentguard cleanup`. */
#define AG_RUN_CLEANUP_SCAN_MAX 4096
/* Seconds the agent's in-container init waits past the configured timeout
 * before it kills every process of the container (run/deadline.h): enough
 * for AgentGuard's own timer, when it is alive, to act first. */
#define AG_RUN_INIT_GRACE_SECONDS 1
/* A preflight probe older than this is orphaned (a live one lasts at most
 * the probe timeout plus a few control calls, well under a minute). */
#define AG_RUN_PROBE_ORPHAN_SECONDS 120

/* ---- evidence verify / reports (src/lib/evidence/verify.c, src/lib/report) ---- */
/* Largest contained-run.json verified or reported: the writer's 16 MiB
 * canonical bound plus its trailing newline. Protects memory. */
#define AG_VERIFY_ARTIFACT_MAX_BYTES (AG_RUN_ARTIFACT_MAX_BYTES + 1)
/* Largest seal or chain head read; both are one small canonical line. */
#define AG_VERIFY_SEAL_MAX_BYTES 4096
/* Largest report rendered (HTML escaping can grow a 16 MiB artifact ~6x). */
#define AG_REPORT_MAX_BYTES (128 * 1024 * 1024)
/* Most paths listed per change kind in text/md/html; the counts stay exact. */
#define AG_REPORT_LIST_ITEMS 200
/* Longest single value shown in a report (bytes, before escaping). */
#define AG_REPORT_VALUE_MAX 512
/* Most evidence lines shown per check in text/md/html/SARIF/JUnit. */
#define AG_REPORT_EVIDENCE_ITEMS 6
/* Last lines of each agent output stream shown in text/md/html (each line
 * bounded by AG_REPORT_VALUE_MAX); the artifact keeps the whole capture. */
#define AG_REPORT_OUTPUT_LINES 20
/* Most run directories listed by `agentguard report --list`. */
#define AG_REPORT_LIST_RUNS_MAX 4096
/* Most destination rows (decision, host, port, reason) a report's egress
 * section shows, denied first; a line says how many more there were. */
#define AG_REPORT_EGRESS_ROWS 40
/* Most distinct destination keys a report groups from one manifest (its
 * events, or its aggregates list); entries beyond are counted as "more". */
#define AG_REPORT_EGRESS_KEYS_MAX 1024
/* Most self-test results listed in a report's egress section. */
#define AG_REPORT_EGRESS_SELFTESTS 16

_Static_assert(AG_CONFIG_MAX_DEPTH <= 128, "walkers recurse once per level");
_Static_assert(AG_ENV_RENDER_MAX_ENTRIES == AG_ENV_MAX_ENTRIES + 4, "four fixed defaults");

/* ---- policy checks (src/lib/policy; upstream-reference 8; docs/checks.md) ---- */
/* Work (character steps) one path-pattern match may spend; past it the match
 * has no answer and the check fails closed (reason policy.pathmatch.limit).
 * The matcher is O(pattern x path): 4096-byte paths against 1000-byte
 * patterns stay below it. */
#define AG_PATHMATCH_MAX_STEPS (4u * 1024 * 1024)
/* Secret content scan: most changed text files read; one more makes the scan
 * incomplete, and an incomplete scan fails secret-scan (upstream bound). */
#define AG_CHECK_SCAN_MAX_FILES 256
/* Largest single file scanned; a larger changed file makes the scan incomplete. */
#define AG_CHECK_SCAN_MAX_FILE_BYTES 1000000
/* Most bytes read over all scanned files; past it the scan is incomplete. */
#define AG_CHECK_SCAN_MAX_TOTAL_BYTES 8000000
/* Longest line scanned (bytes, without its newline); a longer line makes the
 * scan incomplete (a detector could straddle any cut). */
#define AG_CHECK_SCAN_MAX_LINE_BYTES 16384
/* Most content matches recorded per run; the scan stops there (the check
 * fails anyway, since every match fails it). */
#define AG_CHECK_SCAN_MAX_MATCHES 100
/* Most matches recorded for one detector in one file. */
#define AG_CHECK_SCAN_MAX_PER_DETECTOR_FILE 5
/* Evidence strings kept per check, and the longest one (bytes, redacted);
 * the message carries the exact totals. */
#define AG_CHECK_EVIDENCE_MAX_ITEMS 6
#define AG_CHECK_EVIDENCE_MAX_BYTES 360

/* ---- live-study egress (src/lib/egress; upstream-reference 9; docs/study-egress.md) ---- */
/* Largest policy file read (bytes); a bigger one is refused before parsing. */
#define AG_EGRESS_POLICY_MAX_BYTES (64 * 1024)
/* Most destination rules in one policy (upstream bound). */
#define AG_EGRESS_POLICY_MAX_RULES 64
/* Longest host name, after trimming (DNS limit, upstream bound). */
#define AG_EGRESS_HOST_MAX 253
/* Longest rule purpose (characters). */
#define AG_EGRESS_PURPOSE_MAX 256
/* Credential injection (issue 21, docs/study-egress.md "Credential
 * injection"): rules with an inject in one policy; the longest header
 * name, prefix, credential source (a variable name or relative path) and
 * placeholder variable name; the longest credential (bytes, after one
 * trailing newline is dropped). */
#define AG_EGRESS_INJECT_MAX 8
#define AG_EGRESS_INJECT_HEADER_MAX 64
#define AG_EGRESS_INJECT_PREFIX_MAX 32
#define AG_EGRESS_INJECT_SOURCE_MAX 255
#define AG_EGRESS_INJECT_ENV_MAX 64
#define AG_EGRESS_CREDENTIAL_MAX 4096
/* Largest CA bundle read for the agent's CA file (the host's) or given as a
 * test-only destination bundle (bytes). */
#define AG_STUDY_HOST_CA_MAX (4 * 1024 * 1024)
/* An inject directory in /dev/shm older than this (seconds) is a leftover
 * of a run killed before it could remove it (setup removes its own within
 * seconds); each study run with injection removes such leftovers of its
 * user, looking at most at AG_STUDY_INJECT_SWEEP_MAX entries. */
#define AG_STUDY_INJECT_STALE_SECS 600
/* Deepest nesting ag_json_wipe_strings descends (an inject file is 3 deep). */
#define AG_JSON_WIPE_DEPTH 16
#define AG_STUDY_INJECT_SWEEP_MAX 4096
/* Longest CONNECT authority or URL one event may carry (upstream bound). */
#define AG_EGRESS_AUTHORITY_MAX 8192
/* Most resolved addresses one event may carry; more is ambiguous (upstream). */
#define AG_EGRESS_RESOLVED_MAX 8
/* Longest textual address (IPv6 with an embedded IPv4 is 45; brackets 47). */
#define AG_EGRESS_ADDR_TEXT_MAX 64
/* Largest byte counter one event may record (upstream: 10^12). */
#define AG_EGRESS_EVENT_BYTES_MAX 1000000000000LL
/* Manifest: most events recorded; past it the manifest is truncated and
 * can never be complete (upstream bound). */
#define AG_EGRESS_MANIFEST_MAX_EVENTS 256
/* Manifest shape bounds (upstream): longest string (bytes), longest list,
 * most keys per object, deepest nesting (root = 1), serialized bytes. */
#define AG_EGRESS_MANIFEST_MAX_STRING 512
#define AG_EGRESS_MANIFEST_MAX_LIST 256
#define AG_EGRESS_MANIFEST_MAX_KEYS 96
#define AG_EGRESS_MANIFEST_MAX_DEPTH 8
#define AG_EGRESS_MANIFEST_MAX_BYTES (256 * 1024)
/* Longest trial or authorization id. */
#define AG_EGRESS_ID_MAX 128
/* Gateway container defaults (upstream plan): uid/gid, CPUs, memory, PIDs, tmpfs. */
#define AG_EGRESS_GATEWAY_UID 65532
#define AG_EGRESS_GATEWAY_CPUS 0.5
#define AG_EGRESS_GATEWAY_MEMORY "128m"
#define AG_EGRESS_GATEWAY_MEMORY_BYTES (128 * 1024 * 1024)
#define AG_EGRESS_GATEWAY_PIDS 128
#define AG_EGRESS_GATEWAY_TMPFS "64m"
/* The gateway's evidence directory: a tmpfs holding only the mount points
 * of its three evidence files (bound one by one from the run directory),
 * and the largest file it can write there (RLIMIT_FSIZE): its stream's
 * own bound. Its disk use on the host is at most two such files. */
#define AG_EGRESS_GATEWAY_EVIDENCE_TMPFS "1m"
#define AG_EGRESS_GATEWAY_FSIZE AG_GW_EVENTS_MAX_BYTES
/* The proxy port the gateway listens on, on the study network only. */
#define AG_EGRESS_GATEWAY_PORT 8080

_Static_assert(AG_EGRESS_MANIFEST_MAX_EVENTS <= AG_EGRESS_MANIFEST_MAX_LIST, "events are a list");
/* ---- reports for tools, JSON output, the run's patch (issue 14, h-user) ---- */
/* Most locations on one SARIF result (distinct changed paths named by a
 * check's evidence; a check keeps at most AG_CHECK_EVIDENCE_MAX_ITEMS). */
#define AG_REPORT_SARIF_LOCATIONS_MAX 16
/* Longest SARIF artifact URI (bytes, after percent-encoding a path). */
#define AG_REPORT_SARIF_URI_MAX 4096
/* Largest changes.patch (bytes); over it the patch is not written and the
 * artifact says why (patch.status omitted, reason limit.patch.size). */
#define AG_PATCH_MAX_BYTES (32u * 1024 * 1024)
/* Most file content read to build it (old + new sides, all files; one side
 * of one file at most this too): limit.patch.input. */
#define AG_PATCH_MAX_INPUT_BYTES (128u * 1024 * 1024)
/* Lines of context around each hunk (git's default). */
#define AG_PATCH_CONTEXT_LINES 3
/* ---- redaction and terminal output (src/lib/base/redact.c, termsafe.c) ---- */
/* Longest credential flag or header name the argv rules look at (bytes,
 * without the dashes); a longer name is not a credential flag. */
#define AG_REDACT_FLAG_NAME_MAX 64
/* Longest secret whose encoded forms (percent, JSON) are searched too; a
 * longer one (only an argv credential can be) is searched as given. The
 * automaton holds each form, so this bounds its size at about 7 times the
 * secret bytes. */
#define AG_REDACT_ENCODED_SECRET_MAX 16384
/* ---- Engine API transport and ledger (src/lib/docker/engine.c, ledger.c) ---- */
/* Largest container inspection answer read: the judged fields fit in 64 KiB,
 * but the daemon also returns the agent's argv twice (Config.Cmd and Args,
 * up to AG_CHILD_ARGV_MAX_BYTES each, JSON-escaped) and its environment;
 * those are dropped right after parsing. */
#define AG_ENGINE_INSPECT_MAX_BYTES (8 * 1024 * 1024)
/* Largest single string and array in that answer (an argv item, the argv). */
#define AG_ENGINE_INSPECT_MAX_STRING (AG_CHILD_ARG_MAX_BYTES + 1)
#define AG_ENGINE_INSPECT_MAX_ITEMS (AG_CHILD_ARGV_MAX_ITEMS + 16)
/* Largest container list answer (GET /containers/json?filters=label...). The
 * daemon has no field selection: every summary carries its container's
 * whole command line, so a few agents with long argv lists must fit. */
#define AG_ENGINE_LIST_MAX_BYTES (16 * 1024 * 1024)
/* Longest string in that answer (one summary's joined, escaped command). */
#define AG_ENGINE_LIST_MAX_STRING (2 * AG_CHILD_ARGV_MAX_BYTES + 1024)
/* Most anonymous volumes of one container whose absence the ledger checks
 * after removing it; more are not tracked (an image with more VOLUME lines
 * than this is unusual; the removal with v=1 still takes them all). */
#define AG_LEDGER_VOLUMES_MAX 32
/* Seconds a running container is given to stop before it is killed. */
#define AG_ENGINE_STOP_SECONDS 2
/* ---- contained-run output in the artifact and image metadata (issue 9) ---- */
/* Most bytes of each captured stream kept in contained-run.json, whatever
 * max_output_bytes allows the capture to hold: two streams, each escaped
 * at worst 6x (\u00XX), stay far inside the artifact's 16 MiB and each
 * string inside its 1 MiB bound, so the artifact is always writable. A cut
 * stream is recorded truncated, with the byte count the agent wrote. */
#define AG_RUN_ARTIFACT_OUTPUT_MAX_BYTES (256 * 1024)
/* Image ENV names recorded in the containment evidence (its arrays hold at
 * most 64 items); the total is recorded beside them. */
#define AG_RUN_IMAGE_ENV_NAMES_MAX 32
/* Longest image ENV name recorded; a longer one is recorded as a marker. */
#define AG_RUN_IMAGE_ENV_NAME_MAX_BYTES 64
/* Anonymous volumes (image VOLUME) one container may show and have removed
 * and verified absent with it; more fails the cleanup closed. */
#define AG_RUN_CONTAINER_VOLUMES_MAX 32

/* ---- stage-1 runtime images (src/lib/images; docs/runtime-images.md) ---- */
/* Largest package-lock.json read (ours is ~2 KiB). Protects memory. */
#define AG_IMAGES_LOCK_MAX_BYTES (256 * 1024)
/* Largest npm tarball hashed (codex-linux-x64 is ~160 MB). A larger file is
 * refused rather than hashed for minutes. */
#define AG_IMAGES_TARBALL_MAX_BYTES (1024ull * 1024 * 1024)
/* Most members of an exported root filesystem (ours: a few thousand). */
#define AG_IMAGES_ROOTFS_MAX_ENTRIES 200000
/* Most bytes of file content hashed in one exported rootfs (ours: ~450 MB). */
#define AG_IMAGES_ROOTFS_MAX_BYTES (8ull * 1024 * 1024 * 1024)
/* Longest member name or link target in an exported rootfs. */
#define AG_IMAGES_ROOTFS_NAME_MAX 4096
/* Largest `docker image inspect` answer read for one image. */
#define AG_IMAGES_INSPECT_MAX_BYTES (256 * 1024)
/* `docker export` of an image of a few hundred MB: time and file size. */
#define AG_IMAGES_EXPORT_TIMEOUT_MS 300000
/* Largest exported root filesystem tar streamed from the daemon (ours:
 * ~460 MB); it is hashed as it arrives, never held in memory or on disk. */
#define AG_IMAGES_EXPORT_MAX_BYTES (2ull * 1024 * 1024 * 1024)
/* Most entries in the canonical runtime config's env/ports/volumes lists. */
#define AG_IMAGES_CONFIG_LIST_MAX 256
/* Largest freeze manifest, SBOM, provenance, scan report or exceptions file
 * read; each is a bounded document. */
#define AG_IMAGES_MANIFEST_MAX_BYTES (1024 * 1024)
#define AG_IMAGES_REPORT_MAX_BYTES (64 * 1024 * 1024)
/* Longest string field of a freeze manifest (names, refs, policy text). */
#define AG_IMAGES_MANIFEST_STRING_MAX 1024
/* Most entries per artifacts map (sbom, provenance, scans reports). */
#define AG_IMAGES_MANIFEST_ARTIFACTS_MAX 32
/* Deepest nesting in a freeze manifest. */
#define AG_IMAGES_MANIFEST_DEPTH_MAX 8
/* Most files in a build context digest, and most bytes hashed over them. */
#define AG_IMAGES_CONTEXT_MAX_FILES 10000
#define AG_IMAGES_CONTEXT_MAX_DEPTH 32
/* Most vulnerabilities read over all Trivy reports, most exceptions, and
 * most failures listed in the policy result (the counts stay exact). */
#define AG_IMAGES_VULN_MAX_FINDINGS 100000
#define AG_IMAGES_VULN_MAX_EXCEPTIONS 256
#define AG_IMAGES_VULN_MAX_REPORTS 16
#define AG_IMAGES_VULN_LIST_MAX 200
/* Most Debian packages listed in the base SBOM lock. */
#define AG_IMAGES_DEB_MAX_PACKAGES 64
/* ---- evidence signatures and the chain lock (docs/evidence.md) ---- */
/* Largest key file read (PEM): an Ed25519 PKCS#8 key is 119 bytes. */
#define AG_SIGN_KEY_MAX_BYTES 4096
/* Largest signature file read (canonical JSON, about 250 bytes). */
#define AG_SIGN_FILE_MAX_BYTES 4096
/* How long a run waits for the runs root's chain lock. Holding it takes
 * milliseconds (read the head, write two small files), so a longer wait
 * means a stuck holder: the run then fails with evidence.seal.lock_timeout
 * and seals its artifact outside the chain. */
#define AG_CHAIN_LOCK_WAIT_MS 10000
/* Poll interval while waiting for the chain lock (cancellation is checked
 * between polls). */
#define AG_CHAIN_LOCK_POLL_MS 50
/* Most --public-key options one verify or report accepts. */
#define AG_VERIFY_PUBLIC_KEYS_MAX 16
/* Most entries examined in a runs root inside the source repository before
 * a run (each run directory is verified); more fails closed
 * (workspace.agentguard_too_many): move old runs out of the repository. */
#define AG_RUNS_AUDIT_MAX_ENTRIES 4096
/* Most entries in one run directory of such a runs root. */
#define AG_RUNS_AUDIT_MAX_RUN_ENTRIES 16
/* Largest recovery record (recovered.json) `agentguard cleanup` signs or
 * the audit and `report --list` read back. */
#define AG_RECOVER_RECORD_MAX_BYTES 8192
/* Largest run file a recovery record hashes (an unsealed artifact, a
 * changes.patch); a larger one leaves the run unrecorded (incomplete). */
#define AG_RECOVER_FILE_MAX_BYTES (64u * 1024 * 1024)
/* ---- egress gateway (src/gateway; docs/study-egress.md "The gateway") ---- */
/* Most client connections open at once; one more gets 503 and a deny record. */
#define AG_GW_MAX_CONNECTIONS 256
/* Largest request head (request line + headers, bytes); more gets 431. */
#define AG_GW_HEADER_MAX (16 * 1024)
/* Most header lines in one request head. */
#define AG_GW_HEADER_LINES_MAX 100
/* Seconds a client has to send its whole request head. */
#define AG_GW_HEADER_SECS 10
/* Seconds to connect to the checked address. */
#define AG_GW_CONNECT_SECS 10
/* Default and largest idle time of a relayed connection (seconds, each direction). */
#define AG_GW_IDLE_SECS 300
#define AG_GW_IDLE_SECS_MAX 3600
/* Default and largest total lifetime of one connection (seconds). */
#define AG_GW_TOTAL_SECS 3600
#define AG_GW_TOTAL_SECS_MAX (24 * 3600)
/* Seconds open connections get to finish after SIGTERM before they are cut. */
#define AG_GW_DRAIN_SECS 5
/* Memory (docs/study-egress.md "Memory"): every tunnel is bounded, and the
 * most connections times that bound stays below the gateway container's
 * memory, so no agent can make the gateway run out of it.
 * Bytes buffered towards one side before reading from the other pauses. */
#define AG_GW_RELAY_HIGHWATER (64 * 1024)
/* Most bytes one read of a relayed side takes in (its read high watermark). */
#define AG_GW_RELAY_READ_MAX (16 * 1024)
/* SO_RCVBUF and SO_SNDBUF of every socket (the kernel doubles them; fixed,
 * so the kernel's autotuning cannot grow them). */
#define AG_GW_SOCKBUF (16 * 1024)
/* The buffer each direction of an established CONNECT tunnel moves
 * through (src/gateway/tunnel.c): its whole memory besides the sockets. */
#define AG_GW_TUNNEL_BUF (64 * 1024)
/* One tunnel at most: both output buffers full plus a read each (a CONNECT
 * tunnel: its two buffers, less), and two sockets' doubled receive and
 * send buffers. */
#define AG_GW_TUNNEL_MEM_MAX                                                                       \
	(2 * (AG_GW_RELAY_HIGHWATER + 2 * AG_GW_RELAY_READ_MAX) + 2 * 2 * 2 * AG_GW_SOCKBUF)
_Static_assert(2 * AG_GW_TUNNEL_BUF <= 2 * (AG_GW_RELAY_HIGHWATER + 2 * AG_GW_RELAY_READ_MAX),
	       "a CONNECT tunnel holds no more than a buffered relay");
/* Terminated tunnels (an inject rule's) open at once; one more gets 503
 * (terminated_limit). Each holds two TLS sessions (OpenSSL's buffers,
 * released while idle: SSL_MODE_RELEASE_BUFFERS) on top of a tunnel. */
#define AG_GW_TERMINATED_MAX 32
#define AG_GW_TLS_MEM_MAX (2 * 64 * 1024)
_Static_assert((unsigned long long)AG_GW_MAX_CONNECTIONS *AG_GW_TUNNEL_MEM_MAX +
		       (unsigned long long)AG_GW_TERMINATED_MAX * AG_GW_TLS_MEM_MAX +
		       32ull * 1024 * 1024 <=
		   128ull * 1024 * 1024,
	       "every connection at its bound fits the gateway container's 128 MiB");
/* Largest inject file the gateway reads (the trial CA's key and
 * certificate, the credentials); a larger one stops its start-up
 * (gateway.inject). */
#define AG_GW_INJECT_FILE_MAX (64 * 1024)
/* Largest evidence stream (bytes); a record past it is lost, the stream
 * incomplete, and every later request refused. */
#define AG_GW_EVENTS_MAX_BYTES (16 * 1024 * 1024)
/* Largest single evidence record (bytes). */
#define AG_GW_RECORD_MAX (16 * 1024)
/* DNS: seconds per attempt and attempts per query (the one resolver). */
#define AG_GW_DNS_TIMEOUT_SECS 3
#define AG_GW_DNS_ATTEMPTS 2
/* --host-address entries the gateway accepts (the host's own addresses:
 * bridges, uplinks; more fails the start, never truncates the list) */
#define AG_GW_HOST_ADDRS_MAX 128
/* Aggregates (docs/study-egress.md "Evidence the agent cannot evict"):
 * distinct (decision, host, port, reason) keys the gateway counts on their
 * own; every later key is counted in the one overflow entry. Each key is
 * one fixed slot of the aggregates file, rewritten in place. */
#define AG_GW_AGG_KEYS_MAX 128
#define AG_GW_AGG_SLOT 1024
/* The stream's individual decision records are a sample: the first
 * AG_GW_SAMPLE_FIRST, the first of every key (and of the overflow), and the
 * last AG_GW_SAMPLE_LAST (kept in memory, written at the end); the rest are
 * counted ("sampled_out"), never written. */
#define AG_GW_SAMPLE_FIRST 48
#define AG_GW_SAMPLE_LAST 48
_Static_assert(AG_GW_SAMPLE_FIRST + AG_GW_AGG_KEYS_MAX + 1 + AG_GW_SAMPLE_LAST <=
		   AG_EGRESS_MANIFEST_MAX_EVENTS,
	       "every sampled decision record fits the manifest's events");
/* Every connection at its bound, plus 32 MiB for the process itself (the
 * evidence held, libevent, the libraries), fits the container's memory. */
_Static_assert((int64_t)AG_GW_MAX_CONNECTIONS *AG_GW_TUNNEL_MEM_MAX + 32 * 1024 * 1024 <=
		   AG_EGRESS_GATEWAY_MEMORY_BYTES,
	       "the gateway's connections fit its container's memory");
_Static_assert((int64_t)(AG_GW_AGG_KEYS_MAX + 1) * AG_GW_AGG_SLOT <= AG_EGRESS_GATEWAY_FSIZE,
	       "the aggregates file fits the gateway's file size limit");
_Static_assert((AG_GW_SAMPLE_FIRST + AG_GW_AGG_KEYS_MAX + 1 + AG_GW_SAMPLE_LAST + 2) *
		       AG_GW_RECORD_MAX <
		   AG_GW_EVENTS_MAX_BYTES,
	       "no flood of requests can fill the evidence stream");

/* ---- live agent output and progress (src/lib/run/live.c; docs/contained-run.md) ---- */
/* Longest agent output line held for streaming redaction (bytes, plus the
 * longest redaction pattern); a longer line is shown up to its last blank
 * before the bound and the rest of it is withheld (never split a secret). */
#define AG_LIVE_LINE_MAX (64 * 1024)
/* Least time between two progress reports the library makes per stage
 * (ms); the CLI draws at most this often, so at most 10 redraws a second. */
#define AG_PROGRESS_INTERVAL_MS 100

/* ---- study-egress run (issue 12: the topology around the gateway) ---- */
/* Most DNS servers one study container is given (the agent has exactly 1). */
#define AG_RENDER_DNS_MAX 3
/* Largest network inspection answer (bytes): a network lists its members. */
#define AG_STUDY_NETWORK_INSPECT_MAX (256 * 1024)
/* Milliseconds the gateway gets to answer on its port after start. */
#define AG_STUDY_GATEWAY_READY_MS 10000
/* Seconds the gateway gets after SIGTERM to finish its stream and exit
 * (its own drain is AG_GW_DRAIN_SECS plus one). */
#define AG_STUDY_GATEWAY_STOP_SECS 10
/* Whole-run bound of the throwaway self-test probe (ms) and its output. */
#define AG_STUDY_PROBE_TIMEOUT_MS 30000
#define AG_STUDY_PROBE_OUTPUT_MAX 4096
/* Largest gateway evidence stream AgentGuard reads back (the gateway's own bound). */
#define AG_STUDY_STREAM_MAX_BYTES AG_GW_EVENTS_MAX_BYTES
/* Most decision records of one stream carried into the manifest; more marks
 * the manifest's gateway evidence truncated. */
#define AG_STUDY_STREAM_MAX_RECORDS AG_EGRESS_MANIFEST_MAX_EVENTS
/* The study network's default subnet when --study-subnet is not given: a
 * private /26 that Docker's default address pools (172.17-31/16,
 * 192.168/20) never hand out. Operators pick another with --study-subnet. */
#define AG_STUDY_DEFAULT_SUBNET "10.254.254.0/26"
/* Smallest and largest study subnet prefix (the gateway takes .2, the
 * self-test probe and the agent get addresses from the rest). */
#define AG_STUDY_SUBNET_PREFIX_MIN 16
#define AG_STUDY_SUBNET_PREFIX_MAX 28
/* Most lines of /proc/net/route read to check the study subnets against the
 * host's routes; more fails closed. */
#define AG_STUDY_HOST_ROUTES_MAX 4096
/* Networks' IPv4 subnets read from the engine when a study subnet is
 * chosen or checked; more: study.subnet.networks. */
#define AG_STUDY_ENGINE_NETWORKS_MAX 1024
/* Where a study subnet is chosen when none is given: /26 pairs (the study
 * network, then AgentGuard's own outbound network) of this block. */
#define AG_STUDY_AUTO_POOL "10.254.0.0/16"
/* A chosen subnet is a /26 (its outbound block the next /26), smaller when
 * the pool (study_egress.subnet_pool) is: a quarter of the pool (so it
 * holds two pairs, for two studies at once), at most /28. */
#define AG_STUDY_AUTO_PREFIX 26
/* The machine-wide lock held from choosing a study subnet until its
 * networks exist, so two AgentGuard runs never choose the same one
 * (study.c), and the longest wait for it; past it: study.subnet.lock_busy. */
#define AG_STUDY_SUBNET_LOCK_PATH "/run/lock/agentguard-study-subnets.lock"
#define AG_STUDY_SUBNET_LOCK_WAIT_MS 60000
#define AG_STUDY_POOL_PREFIX_MIN 8
#define AG_STUDY_POOL_PREFIX_MAX 27

/* ---- runtime images: the export container (issue 13, gateway half) ---- */
/* The export container is created (never started) through the ledger and
 * needs limits to be rendered at all: the smallest the renderer accepts. */
#define AG_IMAGES_EXPORT_CPU 0.1
#define AG_IMAGES_EXPORT_MEMORY "64m"
#define AG_IMAGES_EXPORT_PIDS 16
#define AG_IMAGES_EXPORT_TMPFS "64k"

/* ---- batch (agentguard batch; the batch file and shard summaries are
 * untrusted input, a child's output is AgentGuard's own but bounded) ---- */
/* The batch file: a person's list, not data: 1 MiB, 256 entries expanding
 * to at most 1000 trials (each a full contained run: more is several
 * batches), 1000 repetitions, argv as the contained run bounds it. */
#define AG_BATCH_FILE_MAX_BYTES (1024 * 1024)
#define AG_BATCH_ENTRIES_MAX 256
#define AG_BATCH_TRIALS_MAX 1000
#define AG_BATCH_REPETITIONS_MAX 1000
#define AG_BATCH_ARGV_MAX 256
#define AG_BATCH_ARG_MAX_BYTES 4096
/* an entry's name (its trials' ids add ".REP") */
#define AG_BATCH_NAME_MAX 64
/* trials at once: past 64 the engine, not the batch, is the bottleneck */
#define AG_BATCH_JOBS_MAX 64
/* run directories read in one trial's runs root on resume (more:
 * limit.batch.attempts, move old ones away) */
#define AG_BATCH_ATTEMPTS_MAX 64
/* a child's --json document (a run summary is a few KiB), and its own
 * messages (kept only for the error reason) */
#define AG_BATCH_CHILD_STDOUT_MAX (1024 * 1024)
#define AG_BATCH_CHILD_STDERR_MAX (64 * 1024)
/* a cancelled child gets this long to remove its containers and networks
 * before SIGKILL (a study run's teardown takes seconds, not minutes) */
#define AG_BATCH_CANCEL_GRACE_MS 120000
/* a shard summary read back by merge: 1000 records of about 1 KiB, with room */
#define AG_BATCH_SUMMARY_MAX_BYTES (16 * 1024 * 1024)
/* a rendered summary (text, md, html) of 1000 trials */
#define AG_BATCH_RENDER_MAX (8 * 1024 * 1024)
/* a child's error reason token kept in a record */
#define AG_BATCH_REASON_MAX 128
/* a run's binding file: a SHA-256 hex digest and a newline */
#define AG_BATCH_BINDING_MAX_BYTES 128
/* /proc/meminfo read for MemAvailable (a few KiB on any kernel) */
#define AG_BATCH_MEMINFO_MAX 16384

#endif
