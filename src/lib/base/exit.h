/*
 * exit.h: AgentGuard's exit codes (README "Exit codes"), shared by the
 * library, which decides them, and the CLI, which returns them. Stable,
 * below 126; a cancelled contained run exits 128 + the signal number.
 */
#ifndef AG_EXIT_H
#define AG_EXIT_H

enum ag_exit {
	AG_EXIT_PASS = 0,	   /* success */
	AG_EXIT_FAIL = 1,	   /* agent or check failed; init: file conflict */
	AG_EXIT_CONFIG = 2,	   /* config or usage error */
	AG_EXIT_PREFLIGHT = 3,	   /* Docker preflight not supported */
	AG_EXIT_WORKSPACE = 4,	   /* workspace preparation or capture */
	AG_EXIT_POLICY = 5,	   /* blocked by policy before launch */
	AG_EXIT_DOCKER = 6,	   /* Docker operational failure */
	AG_EXIT_TIMEOUT = 7,	   /* contained command timed out */
	AG_EXIT_CLEANUP = 8,	   /* cleanup or liveness not verified */
	AG_EXIT_SIGNAL_BASE = 128, /* + signal number: cancelled */
};

#endif
