#!/usr/bin/env bash
# t0653: installable like a Unix tool. `make install` puts the binary, the
# schemas, the man page agentguard(1) and the bash and zsh completions under
# PREFIX; `man -l` renders the installed page without warnings; the bash
# completion loads (complete -p agentguard) and completes `agentguard ev` to
# `evidence`; LICENSE is Apache-2.0; `make dist` gives the same
# agentguard-VERSION.tar.gz twice, and the unpacked tarball builds.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"

version=$(sed -n 's/^#define AG_VERSION "\(.*\)"/\1/p' "$AG_ROOT/src/lib/base/ag.h")
t_like "the version is known" "$version" '^[0-9]+\.[0-9]+\.[0-9]+$'

# --- make install
inst=$T/inst
# BUILD relative to the tree, as the Makefile's own rules name their targets
# (an absolute BUILD would record its objects under other names).
rel_build=$(realpath --relative-to="$AG_ROOT" "$AG_BUILD")
t_ok "make install PREFIX=..." make -s -C "$AG_ROOT" BUILD="$rel_build" PREFIX="$inst" install
for f in bin/agentguard share/man/man1/agentguard.1 share/bash-completion/completions/agentguard \
	share/zsh/site-functions/_agentguard share/agentguard/schemas/agentguard-cli-output-v1.schema.json; do
	t_ok "installed: $f" test -f "$inst/$f"
done

# --- the man page
if command -v man >/dev/null; then
	t_run env MANWIDTH=80 man --warnings -l "$inst/share/man/man1/agentguard.1"
	t_is "man -l renders the installed page: exit 0" "$AG_RC" 0
	t_like "man -l: title and sections" "$AG_OUT" 'AGENTGUARD\(1\).*NAME.*SYNOPSIS.*DESCRIPTION.*EXIT STATUS'
	t_unlike "man -l: no roff warnings" "$AG_OUT" 'warning:'
	t_like "man: the page's version is the program's" "$(head -n 5 "$inst/share/man/man1/agentguard.1")" "\"agentguard $version\""
	for c in contained-run cleanup evidence patch report preflight render validate schema init; do
		t_like "man: documents '$c'" "$AG_OUT" "agentguard $c"
	done
else
	t_skip "man -l renders the installed page" "no man(1)"
fi

# --- completions
comp=$inst/share/bash-completion/completions/agentguard
t_run bash --norc --noprofile -c 'source "$1" && complete -p agentguard' _ "$comp"
t_is "bash completion loads: complete -p agentguard" "$AG_OUT" "complete -o filenames -F _agentguard agentguard"
complete_words() { # WORDS...: what the completion offers for the last word
	bash --norc --noprofile -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _agentguard; printf "%s\n" "${COMPREPLY[@]}"' _ "$comp" "$@"
}
t_is "bash: 'agentguard ev' completes to evidence" "$(complete_words agentguard ev)" evidence
t_is "bash: 'agentguard evidence v' completes to verify" "$(complete_words agentguard evidence v)" verify
t_is "bash: report --format s" "$(complete_words agentguard report --format s)" sarif
t_is "bash: cleanup --j" "$(complete_words agentguard cleanup --j)" --json
t_is "bash: after '--' no agentguard option is offered" "$(complete_words agentguard contained-run c.yaml -- --js)" ""
if command -v zsh >/dev/null; then
	t_ok "zsh completion parses (zsh -n)" zsh -n "$inst/share/zsh/site-functions/_agentguard"
	t_ok "zsh completion defines _agentguard" zsh -fc 'fpath=("$1" $fpath); autoload -Uz _agentguard && whence -w _agentguard' _ "$inst/share/zsh/site-functions"
else
	t_skip "zsh completion parses" "no zsh"
	t_skip "zsh completion defines _agentguard" "no zsh"
fi

# --- LICENSE
t_like "LICENSE is the Apache License 2.0, full text" "$(cat "$AG_ROOT/LICENSE")" 'Apache License.*Version 2\.0, January 2004.*TERMS AND CONDITIONS.*END OF TERMS AND CONDITIONS'

# --- make dist
if git -C "$AG_ROOT" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	t_ok "make dist" make -s -C "$AG_ROOT" dist DISTDIR="$T/d1"
	t_ok "make dist again" make -s -C "$AG_ROOT" dist DISTDIR="$T/d2"
	tgz=agentguard-$version.tar.gz
	t_ok "the tarball is named agentguard-VERSION.tar.gz" test -f "$T/d1/$tgz"
	t_ok "reproducible: the same bytes twice" cmp "$T/d1/$tgz" "$T/d2/$tgz"
	t_is "every entry owned by 0/0" "$(tar tzvf "$T/d1/$tgz" | awk '{print $2}' | sort -u)" "0/0"
	t_is "every entry has the one fixed mtime (the last commit's)" \
		"$(tar tzvf "$T/d1/$tgz" | awk '{print $4, $5}' | sort -u | wc -l)" 1
	t_ok "every entry is under agentguard-$version/" bash -c '! tar tzf "$1" | grep -v "^agentguard-$2/"' _ "$T/d1/$tgz" "$version"
	t_is "names in sorted order" "$(tar tzf "$T/d1/$tgz")" "$(tar tzf "$T/d1/$tgz" | LC_ALL=C sort)"
	mkdir "$T/u"
	tar -C "$T/u" -xzf "$T/d1/$tgz"
	t_ok "the tarball holds LICENSE, the man page and the completions" test -f "$T/u/agentguard-$version/LICENSE" -a \
		-f "$T/u/agentguard-$version/man/agentguard.1" -a -f "$T/u/agentguard-$version/completions/agentguard.bash"
	# (its own build/ directory: nothing from this environment's BUILD or flags)
	t_ok "the unpacked tarball builds (make -j2)" env -u BUILD -u CFLAGS -u CPPFLAGS -u LDFLAGS \
		-u SANITIZE make -s -j2 -C "$T/u/agentguard-$version" BUILD=build
	t_run "$T/u/agentguard-$version/build/agentguard" --version
	# outside a git checkout the commit is not known, and --version says so
	t_is "and the built binary runs" "$AG_OUT" "agentguard $version (commit unknown)"
else
	skip="not a git checkout"
	for d in "make dist" "make dist again" "named" "reproducible" "owner" "mtime" "under" "sorted" "holds" "builds" "runs"; do
		t_skip "dist: $d" "$skip"
	done
fi
t_done
