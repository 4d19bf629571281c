#!/usr/bin/env bash
# t0920: `runtime-image freeze` then `validate` on the REAL images that
# scripts/runtime-images builds (gateway and agent, FROM the pinned base,
# pushed to the local registry). The manifest records both pinned images,
# gateway first; its artifacts hold the SHA-256 of the SBOM and provenance
# files as written; no scanner ran, so it says "not_scanned" and nothing
# reads that as clean; it claims no publication and no live study. A byte
# changed anywhere is refused with a named reason.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
. "$(dirname "$0")/lib-runtime-images.sh"
require_docker
for c in npm musl-gcc jq apt-get dpkg-deb readelf; do
	command -v "$c" >/dev/null || skip_all "$c missing (scripts/deps)"
done
REG=127.0.0.1:5000
host_libs=
[ "$(basename "$AG_BUILD")" = build ] || host_libs=1 # a sanitizer gateway needs libasan
out=$(BUILD=$AG_BUILD AG_GATEWAY_HOST_LIBS=$host_libs AGENTGUARD="$AG_BIN" \
	"$AG_ROOT/scripts/runtime-images" "$REG" 2>"$T/build.err") || diag "$(tail -n 20 "$T/build.err")"
G=$(sed -n 's/^gateway //p' <<<"$out")
A=$(sed -n 's/^agent //p' <<<"$out")
t_like "the gateway image is built and pinned" "$G" "^$REG/agentguard-gateway@sha256:[0-9a-f]{64}\$"
t_like "the agent image is built and pinned" "$A" "^$REG/agentguard-runtime-agent@sha256:[0-9a-f]{64}\$"
jf() { jq -r "$1" "$2"; }

SRC=$(git -C "$AG_ROOT" rev-parse HEAD 2>/dev/null) || SRC=0123456789abcdef0123456789abcdef01234567
M=$T/freeze/m.json
mkdir -p "$T/freeze"
t_run "$AG_BIN" runtime-image freeze --source-commit "$SRC" --gateway "$G" --agent "$A" \
	--root "$AG_ROOT" --output "$M"
t_is "freeze on the real images: exit 0" "$AG_RC" 0
t_like "... and says nothing was published" "$AG_OUT" 'not published \(phase 1\)'
t_ok "validate accepts the manifest" "$AG_BIN" runtime-image validate "$M"
t_run "$AG_BIN" runtime-image validate "$M" --json
cli_conforms "validate --json: the CLI output schema" agentguard.runtime-image-validate "$AG_OUT"

t_is "gateway first in the manifest, pinned as built" "$(jf '.gateway.oci_digest' "$M")" "${G#*@}"
t_is "agent pinned as built" "$(jf '.agent.oci_digest' "$M")" "${A#*@}"
t_is "both FROM one pinned base" "$(jf '.gateway.base_image' "$M")" "$(jf '.agent.base_image' "$M")"
t_is "roles' users" "$(jf '[.gateway.uid,.gateway.gid,.agent.uid,.agent.gid]|join(" ")' "$M")" \
	"65532 65532 10001 10001"
t_is "the source commit" "$(jf .source.commit "$M")" "$SRC"
t_is "the gateway's build context digest" "$(jf .gateway.build_context_digest "$M")" \
	"$("$AG_BIN" runtime-image context-digest "$AG_ROOT/runtime-images/gateway")"

sbom=$(jf '.artifacts.sbom|keys[0]' "$M")
prov=$(jf '.artifacts.provenance|keys[0]' "$M")
t_is "artifacts: the SBOM's SHA-256, as written" "$(jf ".artifacts.sbom[\"$sbom\"]" "$M")" \
	"$(sha256sum <"$T/freeze/$sbom" | cut -d' ' -f1)"
t_is "artifacts: the provenance's SHA-256, as written" "$(jf ".artifacts.provenance[\"$prov\"]" "$M")" \
	"$(sha256sum <"$T/freeze/$prov" | cut -d' ' -f1)"
t_is "the SBOM is CycloneDX 1.5" "$(jf '.bomFormat + " " + .specVersion' "$T/freeze/$sbom")" "CycloneDX 1.5"
t_is "the SBOM lists the base's, the gateway's, the agent tools layer's and the Codex packages" \
	"$(jf '[.components[]|.name]|sort|join(" ")' "$T/freeze/$sbom")" \
	"bash ca-certificates codex codex coreutils diffutils findutils grep libacl1 libattr1 libc-bin libc6 libevent-2.1-7 libevent-core-2.1-7 libevent-openssl-2.1-7 libgcc-s1 libgmp10 libjansson4 libpcre2-8-0 libselinux1 libssl3 libtinfo6 sed"
t_is "... the tools layer's marked as such" \
	"$(jf '[.components[]|select(.name=="bash")|.properties[0].value]|join(" ")' "$T/freeze/$sbom")" \
	"agent (tools layer)"
t_is "the provenance names both pushed images" \
	"$(jf '[.subject[]|.digest.sha256]|join(" ")' "$T/freeze/$prov")" "${G##*sha256:} ${A##*sha256:}"
t_is "the provenance names the source commit" \
	"$(jf .predicate.buildDefinition.externalParameters.source.commit "$T/freeze/$prov")" "$SRC"

# Honest about what did not happen.
t_is "no scanner ran: not_scanned" "$(jf .artifacts.scans.vulnerability_policy.status "$M")" not_scanned
t_is "scanner failures are not suppressed" \
	"$(jf .artifacts.scans.vulnerability_policy.scanner_failures_suppressed "$M")" false
t_is "no live study: usage evidence blocked" "$(jf .usage_evidence.status "$M")" USAGE_EVIDENCE_BLOCKED
t_is "no publication" "$(jf '.publication.status + " " + .publication.registry_verification' "$M")" \
	"not_published_phase_1 deferred_to_phase_2"

# Any change is refused by name.
jq -c '.publication.status = "published"' "$M" >"$T/pub.json"
ag_must_fail 2 images.manifest.publication "a publication claim is refused" \
	"$AG_BIN" runtime-image validate "$T/pub.json"
jq -c '.agent.uid = 0' "$M" >"$T/uid.json"
ag_must_fail 2 images.manifest.uid "a changed uid is refused" "$AG_BIN" runtime-image validate "$T/uid.json"
sed 's/"not_scanned"/"pass"/' "$M" >"$T/clean.json"
t_run "$AG_BIN" runtime-image validate "$T/clean.json"
t_is "\"not scanned\" edited into a pass is refused" "$AG_RC" 2

# The freeze is reproducible: the same images give the same bytes.
mkdir -p "$T/again"
t_ok "a second freeze of the same images" "$AG_BIN" runtime-image freeze --source-commit "$SRC" \
	--gateway "$G" --agent "$A" --root "$AG_ROOT" --output "$T/again/m.json"
t_ok "... writes byte-identical documents" cmp "$M" "$T/again/m.json"

# Gateway before agent: with a good gateway and a bad agent, the error names the agent.
ag_must_fail 2 images.role.user "the gateway image standing in as agent is refused" \
	"$AG_BIN" runtime-image freeze --source-commit "$SRC" --gateway "$G" --agent "$G" \
	--root "$AG_ROOT" --output "$T/bad/m.json"
t_ok "...and no manifest exists" test ! -e "$T/bad/m.json"
t_done
