# shellcheck shell=bash
# tests/cli/lib-test.sh: a small TAP library for AgentGuard's CLI tests.
#
# Source it from a tests/cli/tNNNN-*.sh script (tests/run exports AG_BIN,
# AG_ROOT, AG_BUILD; when a script is run by hand they default from this
# file's location):
#
#   #!/usr/bin/env bash
#   set -euo pipefail
#   . "$(dirname "$0")/lib-test.sh"
#   require_docker                       # only for tests that need the engine
#   t_ok   "binary runs"      "$AG_BIN" --version
#   t_is   "two is two"       "$(echo 2)" 2
#   t_like "mentions docker"  "$out" '[Dd]ocker'
#   ag_must_fail 2 config_invalid "bad YAML is refused" "$AG_BIN" check "$T/bad.yml"
#   t_done
#
# Test points
#   plan N                    optional: print "1..N" first (else t_done prints it)
#   t_pass DESC / t_fail DESC [DIAG...]     raw test points
#   t_ok DESC CMD...          passes if CMD exits 0 (its output goes to diag on failure)
#   t_is DESC GOT EXPECTED    string equality
#   t_like DESC TEXT REGEX    bash ERE match;  t_unlike: must not match
#   ag_must_fail EXIT REASON DESC CMD...
#                             CMD must exit with exactly EXIT (never 0, >=126, or a
#                             signal); if REASON is non-empty its stdout+stderr must
#                             contain "[REASON]" or "reason":"REASON". Afterwards
#                             $AG_RC and $AG_OUT hold the exit code and the output.
#   t_run CMD...              run CMD, set $AG_RC and $AG_OUT (stdout+stderr); no test point
#   t_skip DESC WHY           a skipped test point
#   skip_all WHY              "1..0 # SKIP WHY" and exit 0 (before any test point)
#   diag MSG...               "# MSG" on stderr
#   t_done                    print the plan (done_testing style), exit 1 if any failed
#   t_last_ok                 exit status 0 iff the latest test point passed
#
# Environment
#   $T                        a fresh per-script temp dir, removed on exit
#   t_cleanup CMD...          register CMD to run on exit (before $T is removed)
#   require_docker            needs `scripts/test-env status` healthy, then exports
#                             AG_TEST_IMAGE, AG_TEST_IMAGE_ID, AG_TEST_USER,
#                             AG_TEST_UID, AG_TEST_GID, AG_DOCKER. Not healthy:
#                             skip the whole script, or, with AG_REQUIRE_DOCKER=1,
#                             fail it.
#
# Sharing an engine (other test runs, a developer's real AgentGuard runs)
#   $AG_TEST_RUN_ID           this test run's id (tests/run exports it; a script
#                             run by hand makes its own)
#   $AG_TEST_LABEL            "agentguard.test-run=$AG_TEST_RUN_ID": every
#                             container, network, volume or image a test creates
#                             carries it, and a test finds and removes only
#                             objects carrying it (plus its own file's label)
#   t_docker_rm_own KEY=VALUE remove the containers carrying both $AG_TEST_LABEL
#                             and KEY=VALUE (the test file's own label)
#   t_run_suffix DIR          the run id label of the run directory DIR (its
#                             last 32 characters, lowercased, leading
#                             non-alphanumerics dropped), with no fork
#   t_run_suffixes RUNS_DIR...
#                             t_run_suffix of every run directory under each
#                             RUNS_DIR (e.g. $W/.agentguard/contained-runs),
#                             one per line
#   t_run_objects KIND [FILTER...] -- SUFFIX...
#                             the ids of the containers (KIND ps) or networks
#                             (KIND network) whose agentguard.contained-run.id
#                             label is one of SUFFIX, from ONE engine query
#                             (a `docker` call costs ~0.1 s of CPU: loops of
#                             them, one per run, were a tenth of CI's CPU)
#   t_ledger_run SUFFIX       record an AgentGuard contained run of this test
#                             run (its container label value) so
#                             `scripts/test-env sweep ID` can find its container
#                             by the run's own label after a crash
#
# Every helper returns 0 even when its test point fails, so scripts may use
# `set -e`; use t_last_ok to branch on a result.

[ -n "${_AG_LIB_TEST_LOADED:-}" ] && return 0
_AG_LIB_TEST_LOADED=1

AG_ROOT=${AG_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
AG_BUILD=${AG_BUILD:-$AG_ROOT/build}
AG_BIN=${AG_BIN:-$AG_BUILD/agentguard}
export AG_ROOT AG_BUILD AG_BIN

_t_count=0
_t_failed=0
_t_planned=
_t_last=0
_t_done=0
_t_cleanups=()

T=$(mktemp -d "${TMPDIR:-/tmp}/ag-cli.XXXXXX")
export T

if ! [[ "${AG_TEST_RUN_ID:-}" =~ ^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$ ]]; then
	AG_TEST_RUN_ID=manual-$(date -u +%Y%m%d%H%M%S)-$$-${T##*.}
fi
AG_TEST_LABEL=agentguard.test-run=$AG_TEST_RUN_ID
export AG_TEST_RUN_ID AG_TEST_LABEL

_t_on_exit() {
	local rc=$? c
	for c in "${_t_cleanups[@]}"; do
		eval "$c" >/dev/null 2>&1 || true # commands registered by the test script itself
	done
	rm -rf -- "$T"
	if [ "$_t_done" -eq 0 ] && [ "$rc" -eq 0 ] && [ "$_t_count" -gt 0 ]; then
		echo "# test script ended without t_done" >&2
		rc=1
	fi
	exit "$rc"
}
trap _t_on_exit EXIT

# t_network_lock: one of the four subnet slices (lib-netlock.sh).
# shellcheck source-path=SCRIPTDIR
. "$(dirname "${BASH_SOURCE[0]}")/lib-netlock.sh"

# t_cleanup CMD...: run CMD (argv, quoted safely) when the script exits.
t_cleanup() {
	local q
	printf -v q '%q ' "$@"
	_t_cleanups+=("$q")
}

# diag MSG...: each MSG (may span lines) as "# " lines on stderr.
diag() {
	local msg line
	for msg in "$@"; do
		[ -n "$msg" ] || continue
		while IFS= read -r line; do
			printf '# %s\n' "$line" >&2
		done <<<"$msg"
	done
}

plan() {
	_t_planned=$1
	echo "1..$1"
}

t_pass() {
	_t_count=$((_t_count + 1))
	_t_last=0
	echo "ok $_t_count - $1"
}

t_fail() {
	_t_count=$((_t_count + 1))
	_t_failed=$((_t_failed + 1))
	_t_last=1
	echo "not ok $_t_count - $1"
	shift
	[ $# -eq 0 ] || diag "$@"
}

t_skip() {
	_t_count=$((_t_count + 1))
	_t_last=0
	echo "ok $_t_count - $1 # SKIP ${2:-}"
}

t_last_ok() { return "$_t_last"; }

# t_run CMD...: AG_RC, AG_OUT = exit status and combined output of CMD.
t_run() {
	AG_RC=0
	AG_OUT=$("$@" 2>&1 </dev/null) || AG_RC=$?
}

t_ok() {
	local desc=$1
	shift
	t_run "$@"
	if [ "$AG_RC" -eq 0 ]; then
		t_pass "$desc"
	else
		t_fail "$desc" "command: $*" "exit: $AG_RC" "$AG_OUT"
	fi
}

t_is() {
	if [ "$2" = "$3" ]; then
		t_pass "$1"
	else
		t_fail "$1" "     got: '$2'" "expected: '$3'"
	fi
}

t_like() {
	if [[ "$2" =~ $3 ]]; then
		t_pass "$1"
	else
		t_fail "$1" "text: '$2'" "does not match: $3"
	fi
}

t_unlike() {
	if [[ "$2" =~ $3 ]]; then
		t_fail "$1" "text: '$2'" "matches: $3"
	else
		t_pass "$1"
	fi
}

# ag_must_fail EXIT REASON DESC CMD...
ag_must_fail() {
	local want=$1 reason=$2 desc=$3
	shift 3
	if ! [[ "$want" =~ ^[0-9]+$ ]] || [ "$want" -eq 0 ] || [ "$want" -ge 126 ]; then
		t_fail "$desc" "ag_must_fail: expected exit must be 1..125, got '$want'"
		return 0
	fi
	t_run "$@"
	if [ "$AG_RC" -ge 126 ]; then
		t_fail "$desc" "command: $*" "exit $AG_RC: not run, or killed by a signal" "$AG_OUT"
	elif [ "$AG_RC" -ne "$want" ]; then
		t_fail "$desc" "command: $*" "exit $AG_RC, expected $want" "$AG_OUT"
	elif [ -n "$reason" ] && [[ "$AG_OUT" != *"[$reason]"* ]] &&
		[[ "$AG_OUT" != *"\"reason\":\"$reason\""* ]]; then
		t_fail "$desc" "command: $*" "exit $AG_RC as expected, but no [$reason] or \"reason\":\"$reason\" in:" "$AG_OUT"
	else
		t_pass "$desc"
	fi
}

skip_all() {
	echo "1..0 # SKIP $*"
	_t_done=1
	exit 0
}

t_done() {
	_t_done=1
	if [ -z "$_t_planned" ]; then
		echo "1..$_t_count"
	elif [ "$_t_planned" -ne "$_t_count" ]; then
		diag "planned $_t_planned tests but ran $_t_count"
		exit 1
	fi
	if [ "$_t_failed" -gt 0 ]; then
		diag "failed $_t_failed of $_t_count"
		exit 1
	fi
	exit 0
}

# t_docker_rm_own KEY=VALUE: see the header.
t_docker_rm_own() {
	local ids
	ids=$("${AG_DOCKER:-docker}" ps -aq --filter "label=$AG_TEST_LABEL" --filter "label=$1") || return 0
	# shellcheck disable=SC2086 # one id per word
	[ -z "$ids" ] || "${AG_DOCKER:-docker}" rm -f $ids >/dev/null 2>&1 || true
}

# t_run_suffix DIR: see the header.
t_run_suffix() {
	local id=${1%/}
	id=${id##*/}
	[ ${#id} -le 32 ] || id=${id: -32}
	id=${id,,}
	printf '%s\n' "${id#"${id%%[a-z0-9]*}"}"
}

# t_run_suffixes RUNS_DIR...: see the header.
t_run_suffixes() {
	local r d
	for r in "$@"; do
		for d in "$r"/*/; do
			[ -d "$d" ] && t_run_suffix "$d"
		done
	done
	return 0
}

# t_run_objects KIND [FILTER...] -- SUFFIX...: see the header.
t_run_objects() {
	local kind=$1 key=agentguard.contained-run.id id val
	shift
	local -a filters=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		filters+=("$1")
		shift
	done
	[ $# -gt 0 ] && shift
	[ $# -gt 0 ] || return 0
	local -A want=()
	for val in "$@"; do want[$val]=1; done
	case $kind in
	ps) set -- ps -a ;;
	network) set -- network ls ;;
	*) return 2 ;;
	esac
	while read -r id val; do
		[ -n "$val" ] && [ -n "${want[$val]:-}" ] && printf '%s\n' "$id"
	done < <("${AG_DOCKER:-docker}" "$@" --no-trunc --filter "label=$key" "${filters[@]}" \
		--format "{{.ID}} {{.Label \"$key\"}}")
	return 0
}

# t_ledger_run SUFFIX: see the header. The ledger exists only under tests/run.
t_ledger_run() {
	local dir=${AG_TEST_LEDGER_ROOT:-/tmp/agentguard-test-runs}/$AG_TEST_RUN_ID
	[[ "$1" =~ ^[a-z0-9][a-z0-9_.-]{0,31}$ ]] || return 0
	[ -d "$dir" ] && [ ! -L "$dir" ] && [ -O "$dir" ] || return 0
	printf '%s\n' "$1" >>"$dir/runs" 2>/dev/null || true
}

# require_docker: see the header.
require_docker() {
	local status line name value
	# tests/run checks the environment once per suite (AG_TEST_ENV_HEALTHY
	# names the suite) instead of once per file: the check costs ~0.5 s of CPU.
	if { [ -n "${AG_TEST_ENV_HEALTHY:-}" ] && [ "$AG_TEST_ENV_HEALTHY" = "${AG_TEST_RUN_ID%.*}" ] &&
		status="checked by tests/run"; } ||
		status=$("$AG_ROOT/scripts/test-env" status 2>&1); then
		while IFS= read -r line; do
			# Parse, never eval: only `export AG_NAME=safe-value` lines.
			if [[ "$line" =~ ^export\ (AG_[A-Z_]+)=([A-Za-z0-9@:/._+-]+)$ ]]; then
				name=${BASH_REMATCH[1]}
				value=${BASH_REMATCH[2]}
				export "$name=$value"
			fi
		done < <("$AG_ROOT/scripts/test-env" env 2>/dev/null)
		if [ -n "${AG_TEST_IMAGE:-}" ] && [ -n "${AG_DOCKER:-}" ]; then
			return 0
		fi
		status+=$'\n''scripts/test-env env gave no image'
	fi
	if [ "${AG_REQUIRE_DOCKER:-}" = 1 ]; then
		echo "1..1"
		echo "not ok 1 - docker test environment is up (AG_REQUIRE_DOCKER=1)"
		diag "$status" "run: scripts/test-env up"
		_t_done=1
		exit 1
	fi
	skip_all "docker test environment not up"
}
