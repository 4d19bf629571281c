#!/usr/bin/env bash
# t0412: changes are counted in files and symlinks, as the earlier
# implementation counted them. An agent that writes one new file in a new
# nested directory and removes an empty directory made one change, so a
# scope of at most one changed file below src/ passes, and so does a
# max_files_changed of 1; the artifact lists that one file only.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-contained.sh"

config c
# one changed file allowed, below src/ only, and a one-file diff limit
sed -i 's/^expected_modified_files: .*/expected_modified_files: {min: 1, max: 1}/' "$W/c.yaml"
printf '%s\n' "allowed_paths: ['src/**']" "diff_limits: {max_files_changed: 1}" >>"$W/c.yaml"
make_repo
mkdir -p "$W/repo/src/empty-dir"
chown -R "$U:$U" "$W/repo"
(cd "$W/repo" && find . -type f -exec sha256sum {} + | sort) >"$T/repo.sum"

run -- /bin/sh -c 'cd /agentguard-workspace && mkdir -p src/new/deeper && echo one > src/new/deeper/file.txt && rmdir src/empty-dir'
t_is "one file in new dirs: exit 0" "$AG_RC" 0
t_is "one file in new dirs: result PASS" "$(art 'a["result"]')" PASS
t_is "one file in new dirs: the only change is the file" "$(art 'a["mutations"]["changed_files"]')" "['src/new/deeper/file.txt']"
t_is "one file in new dirs: added lists it alone" "$(art 'a["mutations"]["added_files"]')" "['src/new/deeper/file.txt']"
t_is "one file in new dirs: nothing deleted" "$(art 'a["mutations"]["deleted_files"]')" "[]"
t_is "one file in new dirs: scope-adherence passes" "$(art '[c["passed"] for c in a["checks"] if c["name"]=="scope-adherence"][0]')" True
t_is "one file in new dirs: diff-size passes" "$(art '[c["passed"] for c in a["checks"] if c["name"]=="diff-size"][0]')" True
t_is "one file in new dirs: the evidence counts one" "$(art 'a["containment_evidence"]["workspace"]["changed_files_count"]')" 1
check_clean "files"

# a symlink is a change; a directory the agent only chmods is not
run -- /bin/sh -c 'cd /agentguard-workspace && chmod 700 docs && ln -s edit.txt src/link'
t_is "symlink: exit 0" "$AG_RC" 0
t_is "symlink: the link is the one change" "$(art 'a["mutations"]["changed_files"]')" "['src/link']"
t_is "symlink: result PASS" "$(art 'a["result"]')" PASS
check_clean "symlink"
t_done
