#!/usr/bin/env bash
# t0421: what a contained run reports never contradicts what happened
# (issue 9, finding 14). Each case is a real run on the engine:
#   - an agent whose child is OOM-killed (a tiny memory limit) is not
#     recorded as exit code 0 nor printed as "exited -1", even when it
#     exits the moment its child dies (the init waits for the engine);
#   - an argv whose executable does not exist never started: its exit code
#     is Docker's launcher status (127) or null, never 0; no score is given;
#     Docker's raw error text (and any container id) is not recorded;
#   - a failed workspace capture is not printed as "Changed files: None";
#   - a run refused at preflight shows no score;
#   - the full container id appears nowhere in the artifact, even when the
#     agent prints it.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-contained.sh"

config c
make_repo
t_cleanup remove_run_containers
# text RUN: the human summary (no --json); sets $AG_RC, $AG_OUT
text_run() { t_run as_user "$AG_BIN" contained-run "$W/c.yaml" --repo repo "$@"; }
# summary_json KEY: KEY of the JSON summary line in $AG_OUT
summary_json() { printf '%s\n' "$AG_OUT" | grep -m1 '^{' | "$PY" -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }
# id_in_artifact FILE: how many 64-hex strings in FILE hash to the recorded
# container id_sha256 (i.e. are the container's full id)
id_in_artifact() {
	"$PY" -c '
import hashlib,json,re,sys
t=open(sys.argv[1]).read()
h=json.loads(t)["containment_evidence"]["cleanup"]["container_identity"]["id_sha256"]
print(sum(1 for m in re.findall(r"[0-9a-f]{64}", t) if hashlib.sha256(m.encode()).hexdigest()[:16]==h))' "$1"
}
newest() { ls -1d "$W"/.agentguard/contained-runs/*/ | sort | tail -n 1; }
nart() { "$PY" -c 'import json,sys; a=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$(newest)contained-run.json" "$1"; }

# --- OOM: a child allocates past the 64m limit; the agent itself goes on and exits 0
config c "  memory_limit: 64m"
sed -i '/^  memory_limit: 128m$/d' "$W/c.yaml"
# (a background writer would add late.txt 0.2 s after the agent's shell
# exits: the init kills it before it waits for the engine, as its own exit
# would; another keeps signalling the init, so a signal is still queued
# when the agent is gone: it must not cut the wait short)
# The agent's last line is the kernel's uptime at its exit (the host's
# clock: no time namespace), to be set against the engine's "die" event.
oom='(while kill -0 $$ 2>/dev/null; do sleep 0.05; done; sleep 0.2; echo late >late.txt) & (while kill -WINCH 1; do :; done) 2>/dev/null & /bin/sh -c "x=0123456789abcdef0123456789abcdef; while :; do x=\$x\$x; done"; echo survived; read u _ </proc/uptime; echo "$u"'
ev_since=$(date +%s)
text_run -- /bin/sh -c "$oom"
t_is "oom: the run fails (exit 1)" "$AG_RC" 1
t_last_ok || diag "$AG_OUT"
t_is "oom: outcome oom_killed" "$(nart 'a["command_result"]["outcome"]')" oom_killed
t_is "oom: the artifact records no success exit code" "$(nart 'a["command_result"]["exit_code"]')" None
t_last_ok || diag "exit_code=$(nart "a[\"command_result\"][\"exit_code\"]") stdout=$(nart "a[\"command_result\"][\"stdout\"]") stderr=$(nart "a[\"command_result\"][\"stderr\"]")"
t_is "oom: nor does the containment evidence" \
	"$(nart 'a["containment_evidence"]["execution"]["exit_code"]')" None
t_unlike "oom: the terminal never prints 'exit code: 0'" "$AG_OUT" 'exit code: 0'
t_unlike "oom: no check says the agent 'exited -1'" "$AG_OUT$(cat "$(newest)contained-run.json")" 'exited -1'
t_like "oom: tests-passed says it was OOM-killed" \
	"$(nart '[c for c in a["checks"] if c["name"]=="tests-passed"][0]["evidence"][0]')" 'out-of-memory'
# The engine hears of the OOM kill and of the exit separately; the init
# outlives an OOM-killed child by 1 s so the OOM notice lands first (an agent
# that exits at once would otherwise, now and then, read as a clean exit 0).
# That wait, measured from the agent's exit to the engine's die event, both
# on the host's wall clock.
die_ns=$(docker events --since "$ev_since" --until "$(date +%s.%N)" --filter type=container \
	--filter event=die --filter "label=agentguard.contained-run.id=$(t_run_suffix "$(newest)")" \
	--format '{{.TimeNano}}' | head -n 1)
gap=$("$PY" - "$(newest)contained-run.json" "$die_ns" <<'PYEOF'
import json, sys, time
a = json.load(open(sys.argv[1]))
up_exit = float(a["command_result"]["stdout"].split("\n")[-2].split()[0])
# the host's wall clock minus its uptime: when the kernel's uptime was 0
boot = time.time() - float(open("/proc/uptime").read().split()[0])
print("%.2f" % (int(sys.argv[2]) / 1e9 - (boot + up_exit)))
PYEOF
) || gap=none
t_like "oom: the init outlived the agent by about 1 s for the engine" "$gap" '^(0\.9[0-9]|[1-9]\.[0-9]+)$'
t_last_ok || diag "gap $gap s, die event at $die_ns ns"
t_is "oom: nothing of the agent ran while the init waited (no late.txt)" \
	"$(nart 'a["mutations"]["added_files"]')" "[]"
check_clean "oom"
config c

# --- never started: the executable does not exist in the image
text_run -- /no-such-agent --flag
t_is "never-started: Docker failure (exit 6)" "$AG_RC" 6
t_last_ok || diag "$AG_OUT"
ec=$(nart 'a["command_result"]["exit_code"]' || true)
t_like "never-started: exit code is Docker's launcher status or null, never 0" "$ec" '^(None|125|126|127)$'
t_is "never-started: the artifact gives no score" "$(nart 'a["score"]')" None
t_like "never-started: the terminal shows no score" "$AG_OUT" 'Score: none'
t_unlike "never-started: no numeric score is printed" "$AG_OUT" 'Score: [0-9]'
t_is "never-started: tests-passed says it did not run" \
	"$(nart '[c for c in a["checks"] if c["name"]=="tests-passed"][0]["evidence"][0]')" '`contained-run` did not run'
t_is "never-started: no raw Docker text is kept as the agent's stderr" "$(nart 'a["command_result"]["stderr"]')" ''
t_unlike "never-started: no Docker daemon text anywhere in the artifact" \
	"$(cat "$(newest)contained-run.json")" '(Error response from daemon|OCI runtime|level=error)'
t_is "never-started: the container's full id appears nowhere in the artifact" \
	"$(id_in_artifact "$(newest)contained-run.json")" 0
t_like "never-started: the failure says the executable was not found" "$AG_OUT" 'executable was not found'
run -- /no-such-agent
t_is "never-started (json): score null" "$(summary_json score)" None
check_clean "never-started"

# --- the agent prints its own container id (cgroup path, hostname): recorded only redacted
run -- /bin/sh -c 'grep -m1 /etc/hostname /proc/self/mountinfo; hostname'
t_is "agent-id: exit 0" "$AG_RC" 0
t_like "agent-id: the agent did print its mount of Docker's per-container directory" "$(art 'a["command_result"]["stdout"]')" 'containers/'
t_is "agent-id: the container's full id appears nowhere in the artifact" "$(id_in_artifact "$REPORT")" 0
t_like "agent-id: the hostname (short id) is redacted" "$(art 'a["command_result"]["stdout"].splitlines()[-1]')" 'REDACTED'

# --- a failed capture: the agent plants a .git directory below the top
text_run -- /bin/sh -c 'mkdir /agentguard-workspace/src/.git'
t_is "capture: fails closed (exit 4)" "$AG_RC" 4
t_unlike "capture: never printed as 'Changed files: None'" "$AG_OUT" 'None'
t_like "capture: printed as unknown, with the reason" "$AG_OUT" 'Changed files: unknown .*workspace.git_spoofing'
run -- /bin/sh -c 'mkdir /agentguard-workspace/src/.git'
t_is "capture (json): changed_files_total null" "$(summary_json changed_files_total)" None
check_clean "capture"

# --- refused at preflight (the pinned image is not present): no score
config c
sed -i "s|image: '[^']*'|image: '127.0.0.1:5000/agentguard-test@sha256:$(printf '0%.0s' $(seq 1 64))'|" "$W/c.yaml"
text_run -- /bin/true
t_is "preflight: refused (exit 3)" "$AG_RC" 3
t_like "preflight: the terminal shows no score" "$AG_OUT" 'Score: none'
t_is "preflight: the artifact gives no score" "$(nart 'a["score"]')" None
t_run "$AG_BIN" evidence verify --public-key "$(pubkey)" "$(newest)contained-run.json"
t_is "preflight: the artifact still verifies" "$AG_RC" 0
t_done
