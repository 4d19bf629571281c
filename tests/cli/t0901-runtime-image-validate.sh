#!/usr/bin/env bash
# t0901: `agentguard runtime-image validate` over the freeze-manifest corpus
# (tests/fixtures/runtime-images/manifests, made by gen-manifests.py; each
# invalid manifest breaks exactly one rule and is otherwise re-sealed with
# Python's canonical JSON). Valid ones pass (which also shows the C and the
# Python canonical forms agree, non-ASCII included); every invalid one is
# refused with exit 2 and the reason its rule names; --json says the same.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
. "$(dirname "$0")/lib-runtime-images.sh"

FIX="$AG_ROOT/tests/fixtures/runtime-images"
n=0 invalid=0
declare -A reasons_seen=()
while IFS=$'\t' read -r f reason; do
	case $f in '#'* | '') continue ;; esac
	n=$((n + 1))
	if [ -z "$reason" ]; then
		t_ok "valid: $f" "$AG_BIN" runtime-image validate "$FIX/manifests/$f"
	else
		invalid=$((invalid + 1))
		reasons_seen[$reason]=1
		ag_must_fail 2 "$reason" "refused: $f ($reason)" \
			"$AG_BIN" runtime-image validate "$FIX/manifests/$f"
	fi
done <"$FIX/manifests.tsv"
t_ok "the corpus holds at least 60 manifests ($n)" test "$n" -ge 60
t_ok "at least 60 of them are invalid ($invalid)" test "$invalid" -ge 60
for r in codex.integrity base_unpinned uid publication scans.suppressed digest_mismatch \
	unknown_key bound.string bound.items bound.depth; do
	t_ok "the corpus covers images.manifest.$r" test -n "${reasons_seen[images.manifest.$r]:-}"
done

# A manifest over 1 MiB is refused before it is parsed.
{
	head -c -2 "$FIX/manifests/000-valid-not-scanned.json"
	head -c $((1024 * 1024)) /dev/zero | tr '\0' ' '
	printf '}\n'
} >"$T/big.json"
ag_must_fail 2 images.manifest.bound.size "a manifest over 1 MiB is refused" \
	"$AG_BIN" runtime-image validate "$T/big.json"

# --json: one object naming the verdict, the reason and the field.
t_run "$AG_BIN" runtime-image validate --json "$FIX/manifests/000-valid-not-scanned.json"
t_is "--json valid: exit 0" "$AG_RC" 0
t_like "--json valid" "$AG_OUT" '"valid":true'
cli_conforms "--json valid: the CLI output schema" agentguard.runtime-image-validate "$AG_OUT"
f=$(awk -F'\t' '$2 == "images.manifest.codex.integrity" {print $1; exit}' "$FIX/manifests.tsv")
t_run "$AG_BIN" runtime-image validate --json "$FIX/manifests/$f"
t_is "--json invalid: exit 2" "$AG_RC" 2
t_like "--json invalid names the reason and key" "$AG_OUT" \
	'"key":"agent.codex.integrity".*"reason":"images.manifest.codex.integrity".*"valid":false'
t_json_only=$("$AG_BIN" runtime-image validate --json "$FIX/manifests/$f" 2>/dev/null) || true
cli_conforms "--json invalid: the CLI output schema (stdout only)" agentguard.runtime-image-validate "$t_json_only"
ag_must_fail 2 images.manifest.open "a missing file is refused" \
	"$AG_BIN" runtime-image validate "$T/nonexistent.json"
ag_must_fail 2 usage "validate needs a file" "$AG_BIN" runtime-image validate
t_done
