#!/usr/bin/env bash
# t0883: credential injection in a real study run (issue 21). On the
# outbound network: a resolver (agtest-net) and a test HTTPS destination
# (tests/gear/agtest-tls-upstream, its own test CA, run on the gateway
# image whose glibc and OpenSSL it needs) that logs every header it gets.
# The policy injects the credential (from AgentGuard's environment) for
# tls.test only and approves plain.test without injection. The agent (the
# busybox test image) runs the static test client
# (tests/gear/agtest-tls-client) that trusts what SSL_CERT_FILE names.
#
# Shows: the destination receives the real credential and never the
# placeholder; the agent's environment holds the placeholder only and
# nothing the agent can read holds the credential; plain.test is spliced
# (the agent checks the destination's own certificate) and receives the
# placeholder the agent sent, never the credential; a Host other than the
# approved name inside the terminated tunnel is refused (421) and recorded;
# the evidence names the terminated host and the header, never a value;
# the credential is nowhere in the run directory or the artifact; the
# inject file (the CA key, the credential) is gone from the host's tmpfs;
# a credential also configured into the agent's environment is refused
# before anything starts; a missing credential likewise.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
. "$(dirname "$0")/lib-contained.sh"
STUDY_TEST=t0883
. "$(dirname "$0")/lib-study.sh"

command -v jq >/dev/null || skip_all "jq is needed to read the evidence"
command -v openssl >/dev/null || skip_all "openssl makes the test certificates"
CLIENT=$AG_BUILD/tests/agtest-tls-client UPSTREAM=$AG_BUILD/tests/agtest-tls-upstream
NET=$AG_BUILD/tests/agtest-net
for g in "$CLIENT" "$UPSTREAM" "$NET"; do
	[ -x "$g" ] || skip_all "the test gear is not built: make tests"
done
[ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] || skip_all "/dev/shm is not a tmpfs"

REAL=sk-real-t0883-$RANDOM$RANDOM$RANDOM
study_begin
free_slice 203.0.113 || exit 1
outbound_create "inject-$STUDY_TEST-$$" "$FREE_SLICE"
OUT_NAME="inject-$STUDY_TEST-$$"
base=${FREE_SLICE%/*}
base=${base##*.}
RESOLVER=203.0.113.$((base + 2)) DEST=203.0.113.$((base + 3))
LOGS=$T/logs
mkdir -p "$LOGS/resolver" "$LOGS/up" "$T/certs"
chmod 0777 "$LOGS/resolver" "$LOGS/up"
chmod 0755 "$T" "$LOGS" "$T/certs"

# ---- the destination's own test CA and certificate ----
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
	-subj "/CN=agtest t0883 destination CA" -keyout "$T/certs/ca.key" -out "$T/certs/ca.pem" \
	-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign 2>/dev/null
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=tls.test \
	-keyout "$T/certs/server.key" -out "$T/certs/server.csr" 2>/dev/null
printf 'basicConstraints=CA:FALSE\nsubjectAltName=DNS:tls.test,DNS:plain.test\nextendedKeyUsage=serverAuth\n' \
	>"$T/certs/server.ext"
openssl x509 -req -in "$T/certs/server.csr" -CA "$T/certs/ca.pem" -CAkey "$T/certs/ca.key" \
	-CAcreateserial -days 2 -extfile "$T/certs/server.ext" -out "$T/certs/server.pem" 2>/dev/null
chmod 0644 "$T"/certs/*

IDS=()
# shellcheck disable=SC2317 # called from the EXIT trap
teardown() { [ ${#IDS[@]} -eq 0 ] || "$AG_DOCKER" rm -f "${IDS[@]}" >/dev/null 2>&1 || true; }
t_cleanup teardown
gear() { # IMAGE IP USER ARGV...
	local image=$1 ip=$2 user=$3
	shift 3
	"$AG_DOCKER" run -d --pull never --network "$OUT_ID" --ip "$ip" --dns "$RESOLVER" \
		--label "$AG_TEST_LABEL" --label "agentguard.test=$STUDY_TEST" \
		--read-only --cap-drop ALL --security-opt no-new-privileges --pids-limit 32 \
		--memory 64m --memory-swap 64m --user "$user" \
		-v "$NET:/gear/agtest-net:ro" -v "$UPSTREAM:/gear/upstream:ro" \
		-v "$T/certs:/certs:ro" -v "$LOGS/resolver:/logs/resolver" -v "$LOGS/up:/logs/up" \
		--entrypoint "$1" "$image" "${@:2}"
}
id=$(gear "$AG_TEST_IMAGE" "$RESOLVER" "$AG_TEST_UID:$AG_TEST_GID" /gear/agtest-net serve \
	--log-dir /logs/resolver --lifetime 600 --dns 0.0.0.0:53 \
	--zone "tls.test=$DEST" --zone "plain.test=$DEST") && IDS+=("$id")
id=$(gear "$GW_IMAGE" "$DEST" 65532:65532 /gear/upstream --listen 0.0.0.0:443 \
	--cert /certs/server.pem --key /certs/server.key --log-dir /logs/up --lifetime 600 \
	--name t0883) && IDS+=("$id")
for _ in $(seq 1 100); do
	[ -f "$LOGS/resolver/ready" ] && [ -f "$LOGS/up/ready" ] && break
	sleep 0.1
done
t_ok "the resolver and the test HTTPS destination run" test -f "$LOGS/up/ready" -a -f "$LOGS/resolver/ready"
for ip in "$RESOLVER" "$DEST"; do
	ip -4 route get "$ip" 2>/dev/null | grep -q ' dev br-' || skip_all "the route to $ip names no owned bridge"
done

study_policy inject '[{"host":"tls.test","port":443,"test_only":true,
  "inject":{"header":"Authorization","prefix":"Bearer ","from_env":"AG_T0883_KEY",
            "placeholder_env":"T0883_API_KEY"}},
 {"host":"plain.test","port":443,"test_only":true}]'
make_repo
install -m 0755 "$CLIENT" "$W/repo/agtest-tls-client"
install -m 0644 "$T/certs/ca.pem" "$W/repo/destination-ca.pem"
chown "$U:$U" "$W/repo/agtest-tls-client" "$W/repo/destination-ca.pem"

# The agent: its environment, a scan of everything it can read for the
# credential's fixed prefix, then the three requests.
run_inject() { # CONFIG [EXTRA-ENV...]
	local cfg=$1
	shift
	study_subnet || return 1
	local sb=${STUDY_SUBNET%/*}
	GW_IP=${sb%.*}.$((${sb##*.} + 2))
	# shellcheck disable=SC2016 # expanded by the agent's shell
	local script='
sleep 3
C="./agtest-tls-client --proxy-ip '"$GW_IP"' --extra-ca ./destination-ca.pem"
echo "== env"; env | sort
echo "== scan"; for d in /*; do case $d in /proc|/sys|/dev) ;; *) grep -rslF sk-real-t0883 "$d" 2>/dev/null | head -3;; esac; done; cat /proc/[0-9]*/environ 2>/dev/null | tr "\0" "\n" | grep -F sk-real-t0883; echo "scan done"
echo "== inject"; $C --connect tls.test:443 --path /v1/models --header "Authorization: Bearer $T0883_API_KEY" --header "x-api-key: $T0883_API_KEY"; echo " rc=$?"
echo "== splice"; $C --connect plain.test:443 --path /plain --header "Authorization: Bearer $T0883_API_KEY"; echo " rc=$?"
echo "== mismatch"; $C --connect tls.test:443 --path /mismatch --host-header plain.test; echo " rc=$?"
exit 0'
	# The inject file's life on the host's tmpfs, polled every 0.1 s (bounded
	# by the run): P present, A absent.
	rm -f "$T/shm.log" "$T/shm.stop"
	(for _ in $(seq 1 1200); do
		[ -e "$T/shm.stop" ] && break
		if [ -n "$(find /dev/shm -maxdepth 2 -regextype posix-extended -regex '/dev/shm/agentguard-inject-[A-Za-z0-9]{6}/inject.json' -user "$U" 2>/dev/null)" ]; then
			echo P
		else
			echo A
		fi >>"$T/shm.log"
		sleep 0.1
	done) &
	local watcher=$!
	# shellcheck disable=SC2016 # positional parameters of the inner shell
	t_run runuser -u "$U" -- env -i PATH=/usr/bin:/bin HOME="$W" "AG_T0883_KEY=$REAL" \
		AGENT_API_TOKEN=CANARY-SENSITIVE-91c2 "$@" \
		bash -c 'cd "$1" && shift && exec "$@"' _ "$W" \
		"$AG_BIN" study-egress run "$W/$cfg.yaml" --repo repo --json --policy "$W/inject.json" \
		--trial-id "t0883-$$" --gateway-image "$GW_IMAGE" --resolver "$RESOLVER" \
		--outbound-network "$OUT_NAME" --study-subnet "$STUDY_SUBNET" \
		--test-upstream-ca "$T/certs/ca.pem" -- sh -c "$script"
	touch "$T/shm.stop"
	wait "$watcher" 2>/dev/null || true
	SUMMARY=$(grep -m1 '^{' <<<"$AG_OUT" || true)
	REPORT=$(jq -r '.report // empty' <<<"$SUMMARY" 2>/dev/null || true)
	RUN_DIR=
	[ -z "$REPORT" ] || { REPORT=$W/$REPORT && RUN_DIR=${REPORT%/*}; }
	ledger_runs
	return 0
}
section() { jq -r '.command_result.stdout // empty' "$REPORT" | sed -n "/^== $1\$/,/^== /p"; }

# A leftover of a run killed before it removed its inject file (older than
# 10 minutes, the test user's) and a fresh one (another run's, still in
# setup): the run removes the first only.
for d in stale fresh; do
	runuser -u "$U" -- mkdir -m 0700 "/dev/shm/agentguard-inject-t0883$d$$"
	runuser -u "$U" -- touch "/dev/shm/agentguard-inject-t0883$d$$/inject.json"
	t_cleanup rm -rf "/dev/shm/agentguard-inject-t0883$d$$"
done
touch -d '-20 minutes' "/dev/shm/agentguard-inject-t0883stale$$"
rm -f "$LOGS/up/headers.log"
run_inject c
t_ok "a killed run's stale inject directory is removed by the next run" \
	test ! -e "/dev/shm/agentguard-inject-t0883stale$$"
t_ok "... a fresh one (another run's, in its setup) is left alone" \
	test -e "/dev/shm/agentguard-inject-t0883fresh$$/inject.json"
diag "study run: exit $AG_RC; $(jq -r '"completion \(.study_egress.completion) (\(.study_egress.completion_reason)), failure \(.failure_reason // "none")"' <<<"$SUMMARY" 2>/dev/null)"
t_is "the study run with an inject rule passes" "$AG_RC" 0
[ -f "$REPORT" ] || { diag "$AG_OUT"; t_done; }
hdr=$(cat "$LOGS/up/headers.log")
t_like "the terminated destination received the real credential" "$hdr" \
	"REQUEST GET /v1/models HTTP/1.1"$'\n'"(H [^"$'\n'"]*"$'\n'")*H Authorization: Bearer $REAL"
t_is "... once, and no other credential header" \
	"$(sed -n '/GET \/v1\/models/,/GET \/plain/p' "$LOGS/up/headers.log" | grep -ciE '^H (authorization|x-api-key):')" 1
t_unlike "... never the placeholder" "$(sed -n '/GET \/v1\/models/,/REQUEST/p' "$LOGS/up/headers.log")" \
	'agentguard-placeholder-'
t_like "the agent got the destination's answer through the terminated tunnel" "$(section inject)" \
	'upstream-ok t0883'
t_like "the agent's environment holds a placeholder (redacted in the evidence)" "$(section env)" \
	'T0883_API_KEY=\[REDACTED'
t_like "... and names the trial CA for its TLS clients" "$(section env)" \
	'SSL_CERT_FILE=/agentguard-trial-ca.pem'
t_like "... for Node too" "$(section env)" 'NODE_EXTRA_CA_CERTS=/agentguard-trial-ca.pem'
t_unlike "... never the credential's variable" "$(section env)" 'AG_T0883_KEY'
t_is "nothing the agent could read holds the credential" "$(section scan | sed '1d')" "scan done
== inject"
t_like "plain.test is spliced: the agent checked the destination's own certificate" \
	"$(section splice)" 'upstream-ok t0883'
t_like "... and the destination got the placeholder the agent sent, not the credential" \
	"$(sed -n '/GET \/plain/,$p' "$LOGS/up/headers.log")" 'H Authorization: Bearer agentguard-placeholder-[0-9a-f]{32}'
t_unlike "... never the credential" "$(sed -n '/GET \/plain/,$p' "$LOGS/up/headers.log")" "$REAL"
t_like "a Host other than the approved name inside the tunnel is refused" "$(section mismatch)" \
	'HTTP/1.1 421'
t_unlike "... and never reached the destination" "$hdr" 'GET /mismatch'

EV=$RUN_DIR/egress/events.jsonl
t_like "the gateway's start record names the terminated destination and header" "$(head -1 "$EV")" \
	'"tls_terminated":\[\{"header":"Authorization","host":"tls.test","port":443\}\]'
recs=$(jq -c 'select(.record=="decision" and .event.requested.host=="tls.test")' "$EV")
t_like "the terminated request's record: terminated, the header name" "$recs" \
	'"injected_header":"authorization".*"tls":"terminated"'
t_like "the refused Host is recorded" "$recs" '"tunnel_refusal":"host_mismatch"'
t_like "the spliced request's record says spliced" \
	"$(jq -c 'select(.record=="decision" and .event.requested.host=="plain.test")' "$EV")" \
	'"tls":"client-owned-not-intercepted"'
t_like "the summary lists the terminated host" "$SUMMARY" '"tls_terminated":\["tls.test:443"\]'
t_ok "... and the summary is valid against the CLI output schema" /usr/bin/python3 -c '
import json, sys
from jsonschema import Draft202012Validator
s = json.load(open(sys.argv[1]))
d = json.loads(sys.argv[2])
errs = [e.message[:200] for e in Draft202012Validator(s).iter_errors(d)]
assert not errs, errs[:3]
' "$AG_ROOT/data/schemas/agentguard-cli-output-v1.schema.json" "$SUMMARY"
t_is "the artifact names the study's additions to the agent's environment (names only)" \
	"$(jq -c '.study_egress.agent_environment_additions|sort' "$REPORT")" \
	'["ALL_PROXY","CODEX_CA_CERTIFICATE","CURL_CA_BUNDLE","HTTPS_PROXY","HTTP_PROXY","NODE_EXTRA_CA_CERTS","NO_PROXY","REQUESTS_CA_BUNDLE","SSL_CERT_FILE","T0883_API_KEY"]'
t_like "... and the injection: the terminated destination, the header, the trial CA's hash, the placeholder's name" \
	"$(jq -c '.study_egress.injection' "$REPORT")" \
	'^\{"placeholder_names":\["T0883_API_KEY"\],"tls_terminated":\[\{"header":"authorization","host":"tls.test","port":443\}\],"trial_ca_sha256":"[0-9a-f]{64}"\}$'
t_is "... whose hash is the trial CA the agent was given" "$(jq -r '.study_egress.injection.trial_ca_sha256' "$REPORT")" \
	"$(openssl x509 -in "$RUN_DIR/egress/trial-ca.pem" -outform DER | sha256sum | cut -d' ' -f1)"
MAN=$RUN_DIR/live-study-egress-manifest.json
t_is "the manifest lists the terminated destination and the header name" \
	"$(jq -c '.tls_terminated' "$MAN")" '[{"header":"authorization","host":"tls.test","port":443}]'
t_like "... each event says terminated or spliced" \
	"$(jq -c '[.events[]|select(.protocol=="connect")|"\(.requested.host) \(.tls.mode) \(.tls.injected_header)"]|unique' "$MAN")" \
	'"plain.test spliced null","tls.test terminated authorization"'
# evidence verify judges the manifest against the run's copy of the policy:
# a copy of the run whose manifest claims a terminated tunnel to plain.test
# (re-sealed hashes would need the key; the claim alone must fail)
cp -a "$RUN_DIR" "$T/tampered"
jq -c '(.events[]|select(.requested.host=="plain.test")|.tls)={"mode":"terminated","injected_header":"authorization"}' \
	"$MAN" >"$T/tampered/live-study-egress-manifest.json"
t_run "$AG_BIN" study-egress manifest validate "$T/tampered/live-study-egress-manifest.json" \
	--policy "$W/inject.json"
t_like "a manifest claiming termination to a host without inject does not validate" "$AG_OUT" \
	'egress.manifest.tls'
t_is "the credential is nowhere in the run directory" "$(grep -rlF "$REAL" "$RUN_DIR" | head -3)" ""
t_is "... nor in the output" "$(grep -cF "$REAL" <<<"$AG_OUT" || true)" 0
t_is "no private key is in the run directory" "$(grep -rl 'PRIVATE KEY' "$RUN_DIR" | head -3)" ""
shm=$(tr -d '\n' <"$T/shm.log")
t_like "the inject file (the CA key, the credential) existed on the host's tmpfs during setup" "$shm" 'P'
tail_absent=${shm##*P}
t_like "... and was removed once the gateway had read it, before the agent ran (3 s and more absent at the end)" \
	"${#tail_absent}" '^([3-9][0-9]|[1-9][0-9][0-9]+)$'
t_is "the inject file is gone from the host's tmpfs" \
	"$(find /dev/shm -maxdepth 1 -regextype posix-extended -regex '/dev/shm/agentguard-inject-[A-Za-z0-9]{6}' -user "$U" | head -3)" ""
t_ok "the evidence verifies" "$AG_BIN" evidence verify --public-key "$(pubkey)" "$RUN_DIR"
for fmt in text md html; do
	rep=$("$AG_BIN" report "$RUN_DIR" --public-key "$(pubkey)" --format "$fmt" 2>&1 || true)
	t_like "the $fmt report says which destination was terminated, with the header" "$rep" \
		'terminated by the gateway to inject a credential.*tls\.test:443, header authorization'
	t_like "... and each tunnel: terminated or spliced" "$rep" \
		'tls\.test:443 terminated \(header authorization injected\)'
	t_like "... plain.test spliced" "$rep" 'plain\.test:443 spliced'
	t_unlike "... never the credential" "$rep" "$REAL"
done
t_ok "nothing of the run is left" study_nothing_left "$RUN_DIR"

# ---- refusals before anything starts ----
config c2 "    - {name: LEAK, value: '$REAL', allow_sensitive: true}"
run_inject c2
t_is "a credential also configured into the agent's environment is refused" "$AG_RC" 2
t_like "... and says why" "$AG_OUT" 'study.inject.credential_in_agent_env'
t_unlike "... without printing it" "$AG_OUT" "$REAL"
cp "$W/inject.json" "$T/inject.keep"
sed -i 's/T0883_API_KEY/SSL_CERT_FILE/' "$W/inject.json"
run_inject c
t_is "a placeholder variable with a reserved name is refused" "$AG_RC" 2
t_like "... and says why" "$AG_OUT" 'study.inject.placeholder_reserved'
cp "$T/inject.keep" "$W/inject.json"
REAL=$'sk-real-t0883-with\x01control' run_inject c
t_is "a credential with a control character is refused" "$AG_RC" 2
t_like "... and says why" "$AG_OUT" 'study.inject.credential_invalid'
# from_file: a link instead of the file is refused, without following it
printf 'CANARY-LINK-TARGET-0883\n' >"$T/link-target"
chmod 0644 "$T/link-target"
runuser -u "$U" -- ln -sf "$T/link-target" "$W/key-link"
sed -i 's/"from_env":"AG_T0883_KEY"/"from_file":"key-link"/' "$W/inject.json"
run_inject c
t_is "a credential file that is a link is refused" "$AG_RC" 2
t_like "... and says which rule" "$AG_OUT" 'destinations\[[01]\]\.inject\.from_file'
t_unlike "... without reading it" "$AG_OUT" 'CANARY-LINK-TARGET-0883'
t_unlike "... and without naming the host path" "$AG_OUT" "$T"
cp "$T/inject.keep" "$W/inject.json"
REAL= run_inject c
t_is "a missing credential is refused" "$AG_RC" 2
t_like "... and says which" "$AG_OUT" 'study.inject.credential_missing'
t_done
