# shellcheck shell=bash
# shellcheck disable=SC2034 # sets variables for the test scripts
# tests/cli/lib-agents.sh: a real agent (Codex, Claude Code) doing a scripted
# task as a study run, against the mock provider (tests/gear/
# agtest-mock-provider.c) that it reaches only through the gateway. Source
# after lib-test.sh, require_docker, lib-contained.sh and lib-study.sh
# (which takes the network-slice lock and STUDY_TEST).
#
# The rules for tests that create networks hold: the outbound network is a
# free /28 of this file's slice of 203.0.113.0/24, --internal, labelled and
# removed by id; each container has --dns, --pull never, a lifetime and
# our labels; the study subnet is a free /28 pair of 198.51.100.0/24.
#
#   agents_setup        the gateway image, the outbound network with the
#                       resolver (agtest-net: mock-provider.test = the mock)
#                       and the mock provider on :8080; AGENTS_MOCK_LOG
#   agents_repo         $W/repo: README.md "status: draft", src/app.txt
#   agents_config IMAGE [ENV-LINE...]  $W/c.yaml for that agent image
#   agents_policy NAME [approve]       $W/NAME.json: the mock approved, or empty
#   agents_study POLICY KEYVAR KEY -- ARGV  study-egress run as the test user,
#                       with KEYVAR=KEY in its environment; sets AG_RC, AG_OUT,
#                       SUMMARY, REPORT, RUN_DIR, MANIFEST, EVENTS
#   agents_study_block POLICY   appends a study_egress block to $W/c.yaml: the
#                       policy (relative), the gateway image, the resolver, the
#                       outbound network and, instead of a subnet, this file's
#                       slice of 198.51.100.0/24 as the pool to choose one from
#   agents_study - KEYVAR KEY -- ARGV  the same run with no study option at
#                       all: everything comes from that block, the trial id
#                       is generated
#   agents_check_patch DESC   `agentguard patch` applies with `git apply` to a
#                       copy of the source and gives the scripted result
#   agents_check_done AGENT API TURNS CANARY  the last run did the scripted
#                       task: the mock saw TURNS requests of API, each with
#                       the credential, the last with the command's output;
#                       the agent printed the closing message; one allowed
#                       destination; manifest complete; evidence verifies;
#                       the patch (agents_check_patch); source unchanged;
#                       the CANARY key value nowhere in the evidence
#   agents_check_denied       the last run (mock not approved) failed, named
#                       the mock as denied, and the mock saw nothing
#
# Credential injection (issue 21): with AGENTS_TLS=1 before agents_setup,
# mock-provider.test is an HTTPS front on :443 (tests/gear/
# agtest-tls-upstream --forward, on the gateway image, its certificate from
# a test CA, AGENTS_TLS_CA) that logs each request head to
# AGENTS_FRONT_LOG and passes the request to the mock; AGENTS_DEST_PORT is
# then 443 and the runs pass --test-upstream-ca.
#   agents_policy NAME inject FROM_ENV HEADER PREFIX PLACEHOLDER_ENV
#                       the mock approved with that inject
AGENTS_MOCK_HOST=mock-provider.test
AGENTS_MOCK_PORT=8080
AGENTS_LIFETIME=900

_agents_container() { # NAME IP ARGV...: a gear container on the outbound network
	local name=$1 ip=$2
	shift 2
	"$AG_DOCKER" run -d --pull never --network "$OUT_ID" --ip "$ip" --dns "$AGENTS_RESOLVER" \
		--label "$AG_TEST_LABEL" --label "agentguard.test=$STUDY_TEST" \
		--read-only --cap-drop ALL --security-opt no-new-privileges --pids-limit 32 \
		--memory 64m --memory-swap 64m --user "$AG_TEST_UID:$AG_TEST_GID" \
		-v "$AG_BUILD/tests/agtest-net:/gear/agtest-net:ro" \
		-v "$AG_BUILD/tests/agtest-mock-provider:/gear/mock:ro" \
		-v "$AGENTS_LOGS/$name:/logs" "$AG_TEST_IMAGE" "$@"
}

_agents_wait_ready() { # DIR
	local i
	for i in $(seq 1 100); do
		[ -f "$1/ready" ] && return 0
		sleep 0.1
	done
	return 1
}

# shellcheck disable=SC2317 # called from the EXIT trap
_agents_teardown() {
	[ ${#AGENTS_IDS[@]} -eq 0 ] || "$AG_DOCKER" rm -f "${AGENTS_IDS[@]}" >/dev/null 2>&1 || true
	[ -z "${OUT_ID:-}" ] || "$AG_DOCKER" network rm "$OUT_ID" >/dev/null 2>&1 || true
}

agents_setup() {
	command -v jq >/dev/null || skip_all "jq is needed to read the evidence"
	[ -x "$AG_BUILD/tests/agtest-mock-provider" ] || { diag "the test gear is not built: make tests"; return 1; }
	study_begin
	free_slice 203.0.113 || return 1
	outbound_create "agents-$STUDY_TEST-$$" "$FREE_SLICE"
	AGENTS_OUT_NAME="agents-$STUDY_TEST-$$"
	local base=${FREE_SLICE%/*}
	base=${base##*.}
	AGENTS_RESOLVER=203.0.113.$((base + 2))
	AGENTS_MOCK=203.0.113.$((base + 3))
	AGENTS_LOGS=$T/agents-logs
	mkdir -p "$AGENTS_LOGS/resolver" "$AGENTS_LOGS/mock"
	chown "$AG_TEST_UID:$AG_TEST_GID" "$AGENTS_LOGS/resolver" "$AGENTS_LOGS/mock"
	chmod 0755 "$T" "$AGENTS_LOGS"
	# Cleanups run in the order registered: outbound_create's network
	# removal comes first and fails while these containers are attached,
	# so this removes them, then the network, again.
	AGENTS_IDS=()
	t_cleanup _agents_teardown
	local id
	local zone=$AGENTS_MOCK
	if [ "${AGENTS_TLS:-}" = 1 ]; then
		zone=203.0.113.$((base + 4))
		_agents_front "$zone" || return 1
	fi
	id=$(_agents_container resolver "$AGENTS_RESOLVER" /gear/agtest-net serve --log-dir /logs \
		--lifetime "$AGENTS_LIFETIME" --dns 0.0.0.0:53 \
		--zone "$AGENTS_MOCK_HOST=$zone") || return 1
	AGENTS_IDS+=("$id")
	id=$(_agents_container mock "$AGENTS_MOCK" /gear/mock --listen "0.0.0.0:$AGENTS_MOCK_PORT" \
		--log-dir /logs --lifetime "$AGENTS_LIFETIME" --workdir /agentguard-workspace) || return 1
	AGENTS_IDS+=("$id")
	_agents_wait_ready "$AGENTS_LOGS/resolver" && _agents_wait_ready "$AGENTS_LOGS/mock" &&
		{ [ "${AGENTS_TLS:-}" != 1 ] || _agents_wait_ready "$AGENTS_LOGS/front"; } || {
		diag "the resolver or the mock did not start"
		return 1
	}
	st_ok=1
	for ip in "$AGENTS_RESOLVER" "$AGENTS_MOCK"; do
		ip -4 route get "$ip" 2>/dev/null | grep -q ' dev br-' || st_ok=0
	done
	[ "$st_ok" = 1 ] || skip_all "the route to the outbound network names no owned bridge"
	AGENTS_MOCK_LOG=$AGENTS_LOGS/mock/requests.log
}

# _agents_front IP: the HTTPS front of the mock (AGENTS_TLS=1), on the
# gateway image (its glibc and OpenSSL), forwarding to the mock's :8080.
_agents_front() {
	local d=$T/agents-ca id
	mkdir -p "$d" "$AGENTS_LOGS/front"
	chmod 0777 "$AGENTS_LOGS/front"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
		-subj "/CN=agtest $STUDY_TEST provider CA" -keyout "$d/ca.key" -out "$d/ca.pem" \
		-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign 2>/dev/null &&
		openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
			-subj "/CN=$AGENTS_MOCK_HOST" -keyout "$d/srv.key" -out "$d/srv.csr" 2>/dev/null &&
		printf 'subjectAltName=DNS:%s\nextendedKeyUsage=serverAuth\n' "$AGENTS_MOCK_HOST" >"$d/srv.ext" &&
		openssl x509 -req -in "$d/srv.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" -CAcreateserial \
			-days 2 -extfile "$d/srv.ext" -out "$d/srv.pem" 2>/dev/null || return 1
	chmod 0755 "$d"
	chmod 0644 "$d"/*
	AGENTS_TLS_CA=$d/ca.pem
	AGENTS_FRONT_LOG=$AGENTS_LOGS/front/headers.log
	AGENTS_DEST_PORT=443
	id=$("$AG_DOCKER" run -d --pull never --network "$OUT_ID" --ip "$1" --dns "$AGENTS_RESOLVER" \
		--label "$AG_TEST_LABEL" --label "agentguard.test=$STUDY_TEST" \
		--read-only --cap-drop ALL --security-opt no-new-privileges --pids-limit 32 \
		--memory 64m --memory-swap 64m --user 65532:65532 \
		-v "$AG_BUILD/tests/agtest-tls-upstream:/gear/front:ro" -v "$d:/certs:ro" \
		-v "$AGENTS_LOGS/front:/logs" --entrypoint /gear/front "$GW_IMAGE" \
		--listen 0.0.0.0:443 --cert /certs/srv.pem --key /certs/srv.key --log-dir /logs \
		--lifetime "$AGENTS_LIFETIME" --name front --forward "$AGENTS_MOCK:$AGENTS_MOCK_PORT") || return 1
	AGENTS_IDS+=("$id")
}

agents_repo() {
	rm -rf "$W/repo"
	mkdir -p "$W/repo/src"
	printf 'status: draft\n' >"$W/repo/README.md"
	printf 'untouched\n' >"$W/repo/src/app.txt"
	chown -R "$U:$U" "$W/repo"
	(cd "$W/repo" && find . -type f -exec sha256sum {} + | sort) >"$T/repo.sum"
}

agents_config() {
	local image=$1 l
	shift
	{
		printf '%s\n' "task_id: $STUDY_TEST" "description: a real agent, scripted" "test_command: 'true'" \
			"mode: ci" "expected_modified_files: {min: 0, max: 50}" \
			"command_timeout_seconds: 240" "max_output_bytes: 1048576" \
			"sandbox: {type: docker, image: '$image', network: none}" \
			"contained_execution:" "  version: 1" "  platform: linux-docker-engine" \
			"  required_uid: $AG_TEST_UID" "  required_gid: $AG_TEST_GID" \
			"  memory_limit: 2g" "  pids_limit: 512" "  tmpfs_size: 256m" \
			"  environment:"
		for l in "$@"; do printf '    - %s\n' "$l"; done
	} >"$W/c.yaml"
	chown "$U:$U" "$W/c.yaml"
}

agents_policy() {
	if [ "${2:-}" = inject ]; then
		study_policy "$1" "[{\"host\":\"$AGENTS_MOCK_HOST\",\"port\":443,\"test_only\":true,
		  \"inject\":{\"from_env\":\"$3\",\"header\":\"$4\",\"prefix\":\"$5\",\"placeholder_env\":\"$6\"}}]"
	elif [ "${2:-}" = approve ]; then
		study_policy "$1" "[{\"host\":\"$AGENTS_MOCK_HOST\",\"port\":$AGENTS_MOCK_PORT,\"test_only\":true}]"
	else
		study_policy "$1" '[]'
	fi
}

agents_study_block() {
	printf '%s\n' "study_egress:" "  policy: $1.json" "  gateway_image: '$GW_IMAGE'" \
		"  resolver: $AGENTS_RESOLVER" "  outbound_network: $AGENTS_OUT_NAME" \
		"  subnet_pool: 198.51.100.$AG_NET_SLICE_LO/26" >>"$W/c.yaml"
}

agents_study() {
	local policy=$1 keyvar=$2 key=$3 opts=()
	shift 4 # the policy, the key's name and value, and "--"
	if [ "$policy" != - ]; then
		study_subnet || return 1
		opts=(--policy "$W/$policy.json" --trial-id "$STUDY_TEST-$policy-$$" --gateway-image "$GW_IMAGE"
			--resolver "$AGENTS_RESOLVER" --outbound-network "$AGENTS_OUT_NAME" --study-subnet "$STUDY_SUBNET")
		[ "${AGENTS_TLS:-}" != 1 ] || opts+=(--test-upstream-ca "$AGENTS_TLS_CA")
	fi
	# shellcheck disable=SC2016 # positional parameters of the inner shell
	t_run runuser -u "$U" -- env -i PATH=/usr/bin:/bin HOME="$W" "$keyvar=$key" \
		bash -c 'cd "$1" && shift && exec "$@"' _ "$W" \
		"$AG_BIN" study-egress run "$W/c.yaml" --repo repo --json "${opts[@]}" -- "$@"
	SUMMARY=$(grep -m1 '^{' <<<"$AG_OUT" || true)
	REPORT=$(jq -r '.report // empty' <<<"$SUMMARY" 2>/dev/null || true)
	RUN_DIR=
	[ -z "$REPORT" ] || { REPORT=$W/$REPORT && RUN_DIR=${REPORT%/*}; }
	MANIFEST=$RUN_DIR/live-study-egress-manifest.json
	EVENTS=$RUN_DIR/egress/events.jsonl
	ledger_runs
	diag "study run ($policy): exit $AG_RC; $(jq -r '"total \(.timings.total_ms) ms, completion \(.study_egress.completion) (\(.study_egress.completion_reason)), failure \(.failure_reason // "none")"' <<<"$SUMMARY" 2>/dev/null)"
	if [ "$AG_RC" != 0 ] && [ -f "$REPORT" ]; then
		diag "agent stderr (tail):" "$(jq -r '.command_result.stderr // empty' "$REPORT" | tail -n 15)"
	fi
	return 0
}

# The destinations of the last run's decision records, "decision host:port" sorted and unique.
agents_destinations() {
	jq -r 'select(.record=="decision")|"\(.event.decision) \(.event.requested.host):\(.event.requested.port)"' \
		"$EVENTS" 2>/dev/null | sort -u
}

agents_check_patch() {
	local d=$T/apply-$1
	rm -rf "$d"
	cp -a "$W/repo" "$d"
	"$AG_BIN" patch --public-key "$(pubkey)" "$RUN_DIR" >"$T/agent-$1.patch" 2>"$T/patch-$1.err"
	t_ok "$1: agentguard patch prints the verified patch" test -s "$T/agent-$1.patch"
	t_ok "$1: the patch applies with git apply to the source" \
		git -C "$d" apply --check "$T/agent-$1.patch"
	git -C "$d" apply "$T/agent-$1.patch" 2>/dev/null || true
	t_is "$1: ... README.md is reviewed" "$(cat "$d/README.md" 2>/dev/null)" "status: reviewed"
	t_is "$1: ... NOTES.md is written" "$(cat "$d/NOTES.md" 2>/dev/null)" "Written by the scripted agent."
	t_is "$1: ... and nothing else changed" \
		"$(cd "$d" && find . -type f ! -name README.md ! -name NOTES.md | sort | tr '\n' ' ')" "./src/app.txt "
}

agents_check_done() {
	local agent=$1 api=$2 turns=$3 canary=$4 want="" i path
	path=/v1/$api
	for ((i = 0; i < turns; i++)); do
		want+="${want:+$'\n'}POST $path api=$api step=$i credential=yes"
	done
	t_is "$agent: the mock saw the $turns scripted turns, each with the credential" \
		"$(grep ' step=' "$AGENTS_MOCK_LOG" 2>/dev/null | cut -d' ' -f2-6)" "$want"
	t_like "$agent: ... the last one carried the command's output (wc ran through bash)" \
		"$(tail -n 1 "$AGENTS_MOCK_LOG" 2>/dev/null)" 'saw_wc=yes'
	t_like "$agent printed the mock's closing message" "$(art 'a["command_result"]["stdout"]')" 'README.md reviewed'
	t_is "$agent: the egress: exactly one destination, the mock, allowed" "$(agents_destinations)" \
		"allow $AGENTS_MOCK_HOST:${AGENTS_DEST_PORT:-$AGENTS_MOCK_PORT}"
	t_is "$agent: the manifest is complete" "$(jq -r '.completion.status // .status // empty' "$MANIFEST" 2>/dev/null)" complete
	t_ok "$agent: the run's evidence verifies" "$AG_BIN" evidence verify --public-key "$(pubkey)" "$REPORT"
	agents_check_patch "$agent"
	t_ok "$agent: the source repository is unchanged" repo_unchanged
	t_unlike "$agent: the credential value is never recorded" "$(cat "$REPORT" "$EVENTS" "$MANIFEST" 2>/dev/null)" "$canary"
}

agents_check_denied() {
	t_unlike "with the mock not approved the run does not pass" "$AG_RC" '^0$'
	t_like "... the mock is named as denied" "$(agents_destinations)" \
		"deny $AGENTS_MOCK_HOST:${AGENTS_DEST_PORT:-$AGENTS_MOCK_PORT}"
	t_is "... and the mock saw no request" "$(wc -l <"$AGENTS_MOCK_LOG")" 0
	t_ok "... the source repository is unchanged" repo_unchanged
}
