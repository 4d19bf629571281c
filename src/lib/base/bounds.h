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

_Static_assert(AG_CONFIG_MAX_DEPTH <= 128, "walkers recurse once per level");
_Static_assert(AG_ENV_RENDER_MAX_ENTRIES == AG_ENV_MAX_ENTRIES + 4, "four fixed defaults");

#endif
