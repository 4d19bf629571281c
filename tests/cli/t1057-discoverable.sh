#!/usr/bin/env bash
# t1057: a new user finds every command: `study-egress run` is in
# `agentguard help`, the man page and both shell completions, and help no
# longer calls all of study-egress "(no Docker)"; `--version` names the
# version and the commit the binary was built from.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"

t_run "$AG_BIN" help
t_like "help lists study-egress run" "$AG_OUT" 'study-egress run CONFIG --policy POLICY'
t_unlike "help no longer calls all of study-egress no-Docker" "$AG_OUT" 'plan \(no Docker\)'
t_run "$AG_BIN" study-egress --help
t_unlike "study-egress --help does not say run never calls Docker" "$AG_OUT" 'helpers \(experimental\)\. They decide'

man="$AG_ROOT/man/agentguard.1"
t_like "the man page's synopsis has study-egress run" "$(cat "$man")" $'\\.B agentguard study\\\\-egress run\n'
t_like "the man page describes study-egress run" "$(cat "$man")" $'\\.B study\\\\-egress run\n'

# bash: complete "agentguard study-egress <TAB>" and "... study-egress run --<TAB>"
comp() { # WORDS...: the completions offered for the last word
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _agentguard; printf "%s\n" "${COMPREPLY[@]}"' \
		_ "$AG_ROOT/completions/agentguard.bash" "$@"
}
t_like "bash completion offers study-egress run" "$(comp agentguard study-egress '')" $'(^|\n)run(\n|$)'
t_like "bash completion: run's options" "$(comp agentguard study-egress run --gat)" 'gateway-image'
t_like "bash completion: run takes the contained-run options" "$(comp agentguard study-egress run --re)" 'repo'
z="$AG_ROOT/completions/_agentguard"
t_like "zsh completion has a study-egress case offering run" "$(cat "$z")" $'study-egress\\)\n[^\n]*\n[^\n]*run\\\\:'
t_like "zsh completion: run's options" "$(cat "$z")" "'--gateway-image\\["
if command -v zsh >/dev/null; then
	t_ok "zsh parses the completion" zsh -n "$z"
else
	t_skip "zsh parses the completion" "no zsh here"
fi

# --version: the version and the commit
t_run "$AG_BIN" --version
t_like "--version names the version" "$AG_OUT" '^agentguard [0-9]+\.[0-9]+\.[0-9]+ \(commit '
if [ "$(git -C "$AG_ROOT" rev-parse --show-toplevel 2>/dev/null)" = "$AG_ROOT" ]; then
	# the commit of the build (HEAD when the binary is fresh), one of this repository's
	c=$(printf '%s\n' "$AG_OUT" | sed -n 's/.*(commit \([0-9a-f]\{12\}\)\(-dirty\)\{0,1\})$/\1/p')
	t_like "--version names a 12-digit commit" "$c" '^[0-9a-f]{12}$'
	t_ok "that commit is one of this repository's" git -C "$AG_ROOT" cat-file -e "${c:-none}^{commit}"
else
	t_skip "--version names the commit it was built from" "not a git checkout"
fi
t_done
