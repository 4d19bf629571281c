#!/usr/bin/env bash
# t0600: the GitHub Actions adoption example,
# examples/github-actions/agentguard-contained-run.yml.
#
# Part 1 parses the workflow (PyYAML) and checks its security properties one
# by one: pull_request only, read-only contents permission (security-events:
# write only in the optional code-scanning job, which runs only when asked),
# every action pinned by a full commit SHA, checkout without persisted
# credentials, Docker verified before anything runs, AgentGuard built from a
# pinned commit of THIS repository (checked: it is in our history, and at
# that commit, built in a temporary tree, every command the workflow calls
# answers --help with the options it uses), an ephemeral signing key whose
# public half goes to the step summary, a digest-pinned image with network
# none, the argv after the required "--", the upload of everything needed to
# verify the run elsewhere, standalone verification, the Markdown report in
# the step summary, and no secret or token near the contained step.
#
# Part 2 replays the workflow's own `run:` steps, in order and with the
# runner's step semantics (bash -eo pipefail; a failed step skips later steps
# unless they say `if: always()`), on the real engine of scripts/test-env, as
# the unprivileged test user. The checkout and build steps are replaced by the
# already-built $AG_BIN and a small git repository; the image is swapped for
# $AG_TEST_IMAGE. The uploaded set is copied elsewhere and verified there, as
# root, with the public key from the step summary alone. Then it shows the
# evidence check can fail: a planted host-private path or a wrong schema must
# make it exit non-zero.
# Single-quoted $ and ${{ }} below are literal on purpose (patterns, Python).
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"

PY=/usr/bin/python3
WF="$AG_ROOT/examples/github-actions/agentguard-contained-run.yml"
GLOB='.agentguard/contained-runs/*/contained-run.json'

# wf EXPR: evaluate EXPR over the parsed workflow. Names: d (document), on
# (the trigger; PyYAML reads the bare key `on` as boolean True), jobs, job
# (the only job), steps, ids (step ids in order), step(ID), uses (every
# `uses:` value), text (the raw file), runs (every run block).
wf() {
	"$PY" - "$WF" "$1" <<'PY'
import re, sys, yaml
text = open(sys.argv[1], encoding="utf-8").read()
d = yaml.safe_load(text)
on = d["on"] if "on" in d else d.get(True)
jobs = d.get("jobs") or {}
job = jobs.get("contained-run")
cs = jobs.get("code-scanning") or {}
steps = (job or {}).get("steps") or []
ids = [s.get("id") for s in steps]
def step(i):
    return next(s for s in steps if s.get("id") == i)
def index(i):
    return ids.index(i)
uses = [s["uses"] for s in steps if "uses" in s]
runs = [s["run"] for s in steps if "run" in s]
print(eval(sys.argv[2]))
PY
}

t_ok "the workflow file exists" test -f "$WF"
t_ok "the workflow parses as YAML" wf 'd is not None'
t_is "two jobs: the contained run and the optional code scanning" "$(wf 'sorted(jobs)')" "['code-scanning', 'contained-run']"

# --- trigger and permissions
t_is "trigger is pull_request only" "$(wf 'sorted(on) if isinstance(on, dict) else on')" "['pull_request']"
t_is "pull_request has no filters or types" "$(wf 'on["pull_request"]')" None
# The workflow without its comment lines.
CODE=$(grep -v '^[[:space:]]*#' "$WF")
t_unlike "no pull_request_target anywhere" "$CODE" 'pull_request_target'
t_is "top-level permissions are exactly {contents: read}" "$(wf 'd.get("permissions")')" "{'contents': 'read'}"
t_is "the contained-run job grants no permissions of its own" "$(wf '"permissions" in job')" False
t_is "only the code-scanning job may write security events" "$(wf 'cs.get("permissions")')" "{'contents': 'read', 'security-events': 'write'}"
t_is "security-events appears nowhere else" "$(grep -c 'security-events' <<<"$(grep -v '^[[:space:]]*#' "$WF")")" 1
t_is "code scanning runs only when the repository asks for it" "$(wf 'cs.get("if")')" "always() && vars.AGENTGUARD_CODE_SCANNING == 'true'"
t_is "code scanning needs the contained run" "$(wf 'cs.get("needs")')" contained-run
t_is "code scanning downloads the SARIF then uploads it (pinned)" "$(wf '[s["uses"].split("@")[0] for s in cs["steps"]]')" "['actions/download-artifact', 'github/codeql-action/upload-sarif']"
t_is "code scanning: every uses pinned by SHA with a version comment" "$(wf 'all(re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+@[0-9a-f]{40}", s["uses"]) for s in cs["steps"])')" True
t_is "code scanning runs on ubuntu-24.04" "$(wf 'cs.get("runs-on")')" ubuntu-24.04
t_is "runs on a Linux runner (ubuntu-24.04)" "$(wf 'job.get("runs-on")')" ubuntu-24.04

# --- actions pinned by SHA
t_is "every uses is owner/repo@<40 hex>" "$(wf 'all(re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+(/[A-Za-z0-9_./-]+)?@[0-9a-f]{40}", u) for u in uses)')" True
t_is "every uses line carries a version comment" "$(wf 'all(re.search(r"@[0-9a-f]{40} # v[0-9]+(\.[0-9]+)*\s*$", l) for l in text.splitlines() if re.match(r"\s*(- )?uses:", l))')" True
t_is "uses actions/checkout and actions/upload-artifact" "$(wf 'sorted({u.split("@")[0] for u in uses})')" "['actions/checkout', 'actions/upload-artifact']"
t_is "every checkout has persist-credentials: false" "$(wf '[s["with"].get("persist-credentials") for s in steps if s.get("uses", "").startswith("actions/checkout@")]')" "[False, False]"
t_is "no run block uses \${{ }} expressions" "$(wf 'any("${{" in r for r in runs)')" False

# --- Docker verified before anything runs
t_is "verify-docker runs before the build, pull and contained run" "$(wf 'index("verify-docker") < min(index("build-agentguard"), index("pull-image"), index("contained-run"))')" True
t_is "verify-docker is the first step after the checkout" "$(wf 'index("verify-docker") == 1 and steps[0]["uses"].startswith("actions/checkout@")')" True
vd=$(wf 'step("verify-docker")["run"]')
t_like "verify-docker checks uname -s is Linux" "$vd" 'uname -s'
t_like "verify-docker requires docker info to succeed" "$vd" 'if ! docker info'
t_like "verify-docker checks the server OS is linux" "$vd" "\{\{\.OSType\}\}.*"$'\n'".*!= linux"

# --- AgentGuard from a pinned source revision
t_like "AGENTGUARD_REF is a full 40-hex commit SHA" "$(wf 'd["env"]["AGENTGUARD_REF"]')" '^[0-9a-f]{40}$'
t_is "AgentGuard is checked out at AGENTGUARD_REF" "$(wf '[s["with"].get("ref") for s in steps if s.get("uses", "").startswith("actions/checkout@") and "repository" in s["with"]]')" "['\${{ env.AGENTGUARD_REF }}']"
build=$(wf 'step("build-agentguard")["run"]')
t_like "the build verifies the checked-out commit" "$build" 'rev-parse HEAD.*'$'\n''.*"\$AGENTGUARD_REF"'
t_like "the build installs its Debian deps with sudo apt-get install" "$build" 'sudo [^'$'\n'']*apt-get install'
t_like "the build runs make" "$build" '(^|'$'\n'')make '
for pkg in gcc make pkg-config libyaml-dev libjansson-dev libssl-dev libgit2-dev libcurl4-openssl-dev libseccomp-dev; do
	t_like "the build installs $pkg" "$build" "(^| )$pkg( |\$|"$'\n'")"
done

# --- the pinned commit is one of ours and has every command the workflow calls
REF=$(wf 'd["env"]["AGENTGUARD_REF"]')
if git -C "$AG_ROOT" rev-parse --git-dir >/dev/null 2>&1; then
	t_ok "AGENTGUARD_REF is a commit of this repository" git -C "$AG_ROOT" cat-file -e "$REF^{commit}"
	t_ok "AGENTGUARD_REF is in this checkout's history" git -C "$AG_ROOT" merge-base --is-ancestor "$REF" HEAD
	mkdir -p "$T/pinned"
	git -C "$AG_ROOT" archive "$REF" | tar -x -C "$T/pinned"
	t_run env -u SANITIZE -u CFLAGS -u LDFLAGS make -C "$T/pinned" -j2 BUILD=build build/agentguard
	t_is "the pinned commit builds" "$AG_RC" 0
	PIN="$T/pinned/build/agentguard"
	# Every build output the workflow installs has a rule at the pin (a file
	# added to the install line after the pin would fail the job).
	mapfile -t INSTALLED < <(wf '"\n".join(sorted(set(re.findall(r"agentguard-src/(build/[A-Za-z0-9_.-]+)", "\n".join(runs)))))')
	t_like "the workflow installs build outputs" "${INSTALLED[*]}" 'build/agentguard-init'
	for f in "${INSTALLED[@]}"; do
		t_run make -C "$T/pinned" -n BUILD=build "$f"
		t_is "pinned: the Makefile builds $f" "$AG_RC" 0
	done
	# Every "agentguard WORD [SUBWORD]" the run blocks call, with --help.
	mapfile -t CALLS < <(wf '"\n".join(sorted({" ".join(filter(None, m.group(1, 2))) for r in runs for m in re.finditer(r"(?m)^\s*agentguard ([a-z-]+)(?: (keygen|public-key|verify))?", r)}))')
	t_is "the workflow calls these commands" "${CALLS[*]}" "contained-run evidence keygen evidence public-key evidence verify report validate"
	for cmdline in "${CALLS[@]}"; do
		read -ra words <<<"$cmdline"
		t_run "$PIN" "${words[@]}" --help
		t_is "pinned: agentguard $cmdline --help works" "$AG_RC" 0
		case "$cmdline" in
		contained-run) t_like "pinned: contained-run has --signing-key" "$AG_OUT" '--signing-key FILE' ;;
		"evidence verify") t_like "pinned: evidence verify has --standalone and --public-key" "$AG_OUT" '--public-key FILE.*--standalone' ;;
		"evidence public-key") t_like "pinned: evidence public-key has --signing-key" "$AG_OUT" 'public-key \[--signing-key FILE\]' ;;
		report) t_like "pinned: report has --public-key and md/sarif" "$AG_OUT" '--public-key FILE(.|'$'\n'')*md (.|'$'\n'')*sarif' ;;
		esac
	done
	# Drift: every --option the run blocks pass to agentguard is in that
	# command's --help at the pin; the pin has live output (contained-run
	# --quiet turns it off); and it is at most one release behind HEAD
	# (AG_VERSION at the pin is HEAD's or the one released before it).
	mapfile -t OPTS < <(wf '"\n".join(sorted({c + " " + o for r in runs for m in re.finditer(r"(?ms)^\s*agentguard ([a-z-]+(?: (?:keygen|public-key|verify))?)((?:[^\n]*\\\n)*[^\n]*)", r) for c in [m.group(1)] for o in re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", m.group(2))}))')
	t_like "the run blocks pass options to agentguard" "${OPTS[*]}" 'contained-run --signing-key'
	for co in "${OPTS[@]}"; do
		read -ra words <<<"$co"
		opt=${words[-1]}
		unset 'words[-1]'
		t_run "$PIN" "${words[@]}" --help
		t_like "pinned: agentguard ${words[*]} has $opt" "$AG_OUT" "(^|[^a-z-])$opt([^a-z-]|\$)"
	done
	t_run "$PIN" contained-run --help
	t_like "pinned: contained-run has live output (--quiet)" "$AG_OUT" '--quiet'
	ver() { git -C "$AG_ROOT" show "$1:src/lib/base/ag.h" | sed -n 's/^#define AG_VERSION "\(.*\)"/\1/p'; }
	head_ver=$(ver HEAD)
	pin_ver=$(ver "$REF")
	# the releases in order: each AG_VERSION value the history had, oldest first
	mapfile -t RELS < <(git -C "$AG_ROOT" log --reverse --format=%H -G'define AG_VERSION' HEAD -- src/lib/base/ag.h |
		while read -r c; do ver "$c"; done | awk '!seen[$0]++')
	prev=""
	for ((k = 0; k < ${#RELS[@]}; k++)); do [ "${RELS[k]}" = "$head_ver" ] && [ "$k" -gt 0 ] && prev=${RELS[k - 1]}; done
	t_ok "the pin ($pin_ver) is at most one release behind HEAD ($head_ver)" \
		test "$pin_ver" = "$head_ver" -o \( -n "$prev" -a "$pin_ver" = "$prev" \)
else
	t_skip "AGENTGUARD_REF is a commit of this repository" "not a git checkout"
fi

# --- docs/github-actions.md says what the YAML does: packages, install path
DOC="$AG_ROOT/docs/github-actions.md"
doc_pkgs=$("$PY" -c '
import re, sys
t = " ".join(open(sys.argv[1]).read().split())
m = re.search(r"it installs: `([^`]*)`", t)
print(" ".join(sorted(m.group(1).split())) if m else "")' "$DOC")
yml_pkgs=$(wf '" ".join(sorted(re.search(r"apt-get install -y -q --no-install-recommends \\\n((?:[^\n]*\\\n)*[^\n]*)", step("build-agentguard")["run"]).group(1).replace("\\", " ").split()))')
t_is "the docs list exactly the packages the YAML installs" "$doc_pkgs" "$yml_pkgs"
yml_path=$(wf 're.search(r"install -D -m 0755 -t (\S+)", step("build-agentguard")["run"]).group(1)')
t_like "the docs name the YAML's install path ($yml_path)" "$(tr -s ' \n' '  ' <"$DOC")" "installs .{0,120}under \`$yml_path\`"

# --- config: digest-pinned image, network none, runner uid/gid
t_like "AGENTGUARD_IMAGE is digest-pinned" "$(wf 'd["env"]["AGENTGUARD_IMAGE"]')" '^[a-z0-9._/-]+@sha256:[0-9a-f]{64}$'
cfg=$(wf 'step("write-config")["run"]')
t_like "the config uses AGENTGUARD_IMAGE" "$cfg" 'image: "\$AGENTGUARD_IMAGE"'
t_is "the config says network: none for the sandbox and contained_execution" "$(grep -c '^ *network: none$' <<<"$cfg")" 2
t_like "required_uid comes from id -u" "$cfg" 'required_uid: \$\(id -u\)'
t_like "required_gid comes from id -g" "$cfg" 'required_gid: \$\(id -g\)'
t_unlike "nothing asks for privileged, host network, socket or devices" "$CODE" 'privileged: true|--privileged|network: (host|bridge)|docker\.sock|--device|allow_[a-z_]+: true'

# --- the contained run
cr=$(wf 'step("contained-run")["run"]')
t_like "argv after -- is a bash array" "$cr" 'argv=\(/bin/true\)'
t_like "agentguard contained-run CONFIG --signing-key KEY -- \"\${argv[@]}\"" "$cr" 'agentguard contained-run agentguard-contained\.yaml \\'$'\n''[[:space:]]*--signing-key "\$RUNNER_TEMP/agentguard-signing-key\.pem" -- "\$\{argv\[@\]\}"'

# --- the ephemeral signing key, verification, the step summary
sk=$(wf 'step("signing-key")["run"]')
t_is "the key is made before the contained run" "$(wf 'index("signing-key") < index("contained-run")')" True
t_like "the key is made with evidence keygen under RUNNER_TEMP" "$sk" 'agentguard evidence keygen "\$key"'
t_like "the key file is in RUNNER_TEMP, outside the repository" "$sk" 'key="\$RUNNER_TEMP/'
t_like "its public half goes to the step summary" "$sk" 'cat "\$pub"(.|'$'\n'')*>>"\$GITHUB_STEP_SUMMARY"'
ve=$(wf 'step("verify-evidence")["run"]')
t_like "evidence verify --standalone --public-key on each uploaded run" "$ve" 'agentguard evidence verify "\$run" --standalone --public-key agentguard-evidence-public-key\.pem'
t_is "verification runs if: always()" "$(wf 'step("verify-evidence").get("if")')" "always()"
sm=$(wf 'step("summary")["run"]')
t_like "the summary step writes report --format md to GITHUB_STEP_SUMMARY" "$sm" 'agentguard report "\$run" --format md --public-key [^'$'\n'']*>>"\$GITHUB_STEP_SUMMARY"'
t_like "the summary step writes SARIF for the optional job" "$sm" '--format sarif'
t_is "the summary step runs if: always()" "$(wf 'step("summary").get("if")')" "always()"
t_is "no secrets. or GITHUB_TOKEN in the contained-run step" "$(wf 'any(k in repr(step("contained-run")) for k in ("secrets.", "GITHUB_TOKEN", "github.token"))')" False
t_is "no secrets. or GITHUB_TOKEN in workflow or job env" "$(wf 'any(k in repr(d.get("env")) + repr(job.get("env")) for k in ("secrets.", "GITHUB_TOKEN", "github.token"))')" False
t_is "no step sets env at all (nothing to forward)" "$(wf '[s.get("id") for s in steps if "env" in s]')" "[]"

# --- evidence upload and check
up=$(wf '[index("upload-evidence")]')
upw() { wf "step('upload-evidence')$1"; }
t_is "upload paths: the whole runs root (artifact, seal, signature, patch, head) and the public key, without the lock or a retained workspace" "$(upw '["with"]["path"].split()')" "['.agentguard/contained-runs/', '!.agentguard/contained-runs/.agentguard-chain.lock', '!.agentguard/contained-runs/*/workspace-lifecycle/', 'agentguard-evidence-public-key.pem']"
t_is "upload comes after standalone verification" "$(wf 'index("verify-evidence") < index("upload-evidence")')" True
t_is "upload include-hidden-files: true" "$(upw '["with"]["include-hidden-files"]')" True
t_is "upload if-no-files-found: error" "$(upw '["with"]["if-no-files-found"]')" error
t_is "upload retention is an integer in 1..90" "$(upw '["with"]["retention-days"] in range(1, 91)')" True
t_is "upload runs if: always()" "$(upw '.get("if")')" "always()"
t_is "upload comes after the contained run" "$(wf "${up}[0] > index('contained-run')")" True
t_is "evidence check runs if: always()" "$(wf 'step("check-evidence").get("if")')" "always()"
t_is "evidence check is the last step" "$(wf 'ids[-1]')" check-evidence
ce=$(wf 'step("check-evidence")["run"]')
for p in /home/ /tmp/ /Users/ /root/; do
	t_like "evidence check looks for $p" "$ce" "\"$p\""
done
t_like "evidence check requires schema agentguard.contained-run" "$ce" 'get\("schema"\) != "agentguard\.contained-run"'

# ===================== part 2: replay the run steps on the real engine
# require_docker skips or fails the whole script, which is only valid before
# the first test point; so probe it in a subshell first (traps are reset
# there, $T stays) and report part 2 as one skipped or failed point.
if [ "$( (require_docker >/dev/null 2>&1 && echo up) || true)" = up ]; then
	require_docker
elif [ "${AG_REQUIRE_DOCKER:-}" = 1 ]; then
	t_fail "docker test environment is up (AG_REQUIRE_DOCKER=1)" "run: scripts/test-env up"
	t_done
else
	t_skip "replay of the workflow's run steps" "docker test environment not up"
	t_done
fi

U=$AG_TEST_USER
chmod 755 "$T"
R="$T/runner"
WS="$R/work/repo" # GITHUB_WORKSPACE: the repository under test
mkdir -p "$R/temp" "$R/home" "$WS/src" "$R/steps"
# Stands in for the build step's /opt/agentguard/bin: root-owned, with the probe.
BIN="$T/opt-agentguard/bin"
mkdir -p -m 755 "$BIN"
install -m 0755 "$AG_BIN" "$AG_BUILD/agentguard-probe" "$AG_BUILD/agentguard-init" "$BIN/"
printf 'print("hello")\n' >"$WS/src/app.py"
printf '# repo under test\n' >"$WS/README.md"
: >"$R/github_path"
: >"$R/step_summary.md"
chown -R "$U:$U" "$R"
runuser -u "$U" -- env -i PATH=/usr/bin:/bin HOME="$R/home" bash -c '
	cd "$1" && git init -q && git add -A &&
	git -c user.name=t -c user.email=t@example.invalid commit -qm init' _ "$WS"

# Write each run block to $R/steps/NN-ID.sh; list "NN ID IF" in order.
"$PY" - "$WF" "$R/steps" >"$R/steps.list" <<'PY'
import os, sys, yaml
d = yaml.safe_load(open(sys.argv[1], encoding="utf-8"))
job = next(iter(d["jobs"].values()))
for n, s in enumerate(job["steps"]):
    if "run" not in s:
        continue
    path = os.path.join(sys.argv[2], "%02d-%s.sh" % (n, s["id"]))
    with open(path, "w", encoding="utf-8") as f:
        f.write(s["run"])
    print("%02d %s %s" % (n, s["id"], s.get("if", "success()")))
PY
chmod 644 "$R/steps"/*.sh
t_is "run steps found, in order" "$(cut -d' ' -f2 "$R/steps.list" | tr '\n' ' ')" "verify-docker build-agentguard pull-image write-config signing-key contained-run verify-evidence summary check-evidence "

# The workflow-level env, with the image swapped for the test image.
mapfile -t WF_ENV < <(wf '"\n".join("%s=%s" % (k, v) for k, v in d["env"].items())')
for i in "${!WF_ENV[@]}"; do
	case "${WF_ENV[$i]}" in AGENTGUARD_IMAGE=*) WF_ENV[i]="AGENTGUARD_IMAGE=$AG_TEST_IMAGE" ;; esac
done

# step FILE [DIR]: run one step file as the runner would (shell: bash), as
# the test user, in DIR (default the workspace); sets AG_RC and AG_OUT.
step() {
	t_run runuser -u "$U" -- env -i \
		PATH="$BIN:/usr/bin:/bin" HOME="$R/home" \
		CI=true GITHUB_ACTIONS=true GITHUB_WORKSPACE="$WS" RUNNER_TEMP="$R/temp" \
		GITHUB_PATH="$R/github_path" GITHUB_STEP_SUMMARY="$R/step_summary.md" "${WF_ENV[@]}" \
		bash -c 'cd "$1" && exec bash --noprofile --norc -eo pipefail "$2"' _ "${2:-$WS}" "$1"
}

failed=0
while read -r n id cond; do
	if [ "$id" = build-agentguard ]; then
		t_skip "step $id" "replaced by the built \$AG_BIN"
		continue
	fi
	if [ "$failed" -eq 1 ] && [ "$cond" != "always()" ]; then
		t_fail "step $id" "skipped: an earlier step failed"
		continue
	fi
	step "$R/steps/$n-$id.sh"
	if [ "$AG_RC" -eq 0 ]; then
		t_pass "step $id passes"
	else
		failed=1
		t_fail "step $id passes" "exit $AG_RC" "$AG_OUT"
	fi
	case "$id" in
	verify-docker) t_like "verify-docker printed the server OS" "$AG_OUT" '\(linux/' ;;
	contained-run) t_like "contained run says PASS" "$AG_OUT" 'Result: PASS' ;;
	verify-evidence) t_like "standalone verification passed and said the chain was not checked" "$AG_OUT" '^valid: .*'$'\n''signed by: ed25519:[0-9a-f]{64}'$'\n''chain: NOT CHECKED' ;;
	check-evidence) t_like "evidence check names the report" "$AG_OUT" 'no host-private paths' ;;
	esac
done <"$R/steps.list"

# The step summary: the public key, then the Markdown report.
SUMMARY=$(cat "$R/step_summary.md")
t_like "summary: the ephemeral public key" "$SUMMARY" '-----BEGIN PUBLIC KEY-----'
t_like "summary: its fingerprint" "$SUMMARY" 'Key fingerprint: ed25519:[0-9a-f]{64}'
t_like "summary: the Markdown report with its Containment Evidence" "$SUMMARY" '## Containment Evidence'
t_ok "the key never left RUNNER_TEMP" test ! -e "$WS/agentguard-signing-key.pem"

# What the upload step would pick up, copied elsewhere and verified there as
# another user (root) with the public key from the step summary alone.
mkdir -p "$T/elsewhere"
(cd "$WS" && tar -c --exclude=.agentguard-chain.lock --exclude=workspace-lifecycle .agentguard/contained-runs agentguard-evidence-public-key.pem) | tar -x -C "$T/elsewhere"
"$PY" -c 'import re,sys; print(re.search(r"-----BEGIN PUBLIC KEY-----.*?-----END PUBLIC KEY-----", open(sys.argv[1]).read(), re.S).group(0))' "$R/step_summary.md" >"$T/summary-key.pem"
UP=$(ls -d "$T"/elsewhere/.agentguard/contained-runs/*/ | head -n 1)
t_ok "uploaded: the run dir holds artifact, seal and signature" test -s "$UP/contained-run.json" -a -s "$UP/contained-run.seal.json" -a -s "$UP/contained-run.seal.sig"
t_ok "uploaded: the chain head is there" test -s "$T/elsewhere/.agentguard/contained-runs/agentguard-chain-head.json"
t_ok "uploaded: the public key beside it matches the summary's" cmp -s "$T/summary-key.pem" "$T/elsewhere/agentguard-evidence-public-key.pem"
t_run env HOME="$T/verifier" "$AG_BIN" evidence verify "$UP" --standalone --public-key "$T/summary-key.pem"
t_is "elsewhere: the uploaded run verifies with the public key alone" "$AG_RC" 0
t_like "elsewhere: standalone says the chain was not checked" "$AG_OUT" 'chain: NOT CHECKED'
t_ok "elsewhere: the uploaded runs root also verifies with its chain" env HOME="$T/verifier" "$AG_BIN" evidence verify "$UP" --public-key "$T/summary-key.pem"
ag_must_fail 2 evidence.signature.untrusted "elsewhere: without the key it is not trusted" env HOME="$T/verifier" "$AG_BIN" evidence verify "$UP" --standalone

# The config the workflow wrote.
c() { "$PY" -c 'import sys, yaml; c=yaml.safe_load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$WS/agentguard-contained.yaml" "$1"; }
t_is "written config: image is the swapped digest-pinned image" "$(c 'c["sandbox"]["image"]')" "$AG_TEST_IMAGE"
t_is "written config: network none twice" "$(c '(c["sandbox"]["network"], c["contained_execution"]["network"])')" "('none', 'none')"
t_is "written config: required uid/gid from id -u/-g" "$(c '(c["contained_execution"]["required_uid"], c["contained_execution"]["required_gid"])')" "($AG_TEST_UID, $AG_TEST_GID)"

# What the upload step would pick up: the exact glob, hidden files included.
mapfile -t up_files < <({ cd "$WS" && compgen -G "$GLOB"; } || true)
t_is "the upload glob matches exactly one report" "${#up_files[@]}" 1
REPORT="$WS/${up_files[0]:-none}"
art() { "$PY" -c 'import json,sys; a=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$REPORT" "$1"; }
if [ ! -f "$REPORT" ]; then
	t_fail "report exists" "no report; the rest of this file cannot be checked"
	t_done
fi
t_is "report: schema" "$(art 'a["schema"]')" agentguard.contained-run
t_is "report: result PASS" "$(art 'a["result"]')" PASS
t_is "report: /bin/true exited 0 with no output" "$(art '(a["command_result"]["exit_code"], a["command_result"]["stdout"])')" "(0, '')"
t_is "report: preflight supported" "$(art 'a["containment_evidence"]["preflight"]["status"]')" supported
t_is "report: cleanup verified, nothing of this run left" "$(art '(a["cleanup_complete"], a["cleanup"]["liveness_verified"], a["residue"]["this_run_after"])')" "(True, True, 0)"
t_unlike "report: no host-private path" "$(cat "$REPORT")" '/home/|/tmp/|/Users/|/root/'

# --- the evidence check can fail
CHECK="$R/steps/$(awk '$2 == "check-evidence" {print $1}' "$R/steps.list")-check-evidence.sh"
plant() { # DIR-NAME PYTHON-STATEMENT-ON-a
	local d="$WS/.agentguard/contained-runs/$1"
	mkdir -p "$d"
	"$PY" -c 'import json,sys; a=json.load(open(sys.argv[1])); exec(sys.argv[3]); open(sys.argv[2],"w").write(json.dumps(a,sort_keys=True,separators=(",",":")))' \
		"$REPORT" "$d/contained-run.json" "$2"
	chown -R "$U:$U" "$d"
}
for p in /home/ /tmp/ /Users/ /root/; do
	name="planted-$(tr -dc "[:lower:]" <<<"$p")"
	plant "$name" "a[\"command_result\"][\"stdout\"] = \"cwd was ${p}someone/project\\n\""
	step "$CHECK"
	t_is "evidence check fails on a planted $p" "$AG_RC" 1
	t_like "evidence check names the private path $p" "$AG_OUT" "$name/contained-run.json: contains a host-private path \(${p//\//\\/}\)"
	rm -rf "$WS/.agentguard/contained-runs/$name"
done
plant planted-key 'a["/home/x"] = 1'
step "$CHECK"
t_is "evidence check fails on a /home/ path in a key" "$AG_RC" 1
rm -rf "$WS/.agentguard/contained-runs/planted-key"
plant planted-escaped 'a["note"] = "\\/ok"'
sed -i 's|\\\\/ok|\\/home\\/x|' "$WS/.agentguard/contained-runs/planted-escaped/contained-run.json"
step "$CHECK"
t_is "evidence check fails on a JSON-escaped \\/home\\/ path" "$AG_RC" 1
t_like "evidence check decoded the escaped path" "$AG_OUT" 'planted-escaped/contained-run.json: contains a host-private path \(/home/\)'
rm -rf "$WS/.agentguard/contained-runs/planted-escaped"
plant planted-schema 'a["schema"] = "agentguard.something-else"'
step "$CHECK"
t_is "evidence check fails on a wrong schema" "$AG_RC" 1
t_like "evidence check says why" "$AG_OUT" 'schema is not agentguard\.contained-run'
rm -rf "$WS/.agentguard/contained-runs/planted-schema"
mkdir -p "$R/empty" && chown "$U:$U" "$R/empty"
step "$CHECK" "$R/empty"
t_is "evidence check fails when no report was written" "$AG_RC" 1
step "$CHECK"
t_is "evidence check passes again on the real report alone" "$AG_RC" 0

t_done
