#!/usr/bin/env python3
"""Generates the agentguard.yaml test corpus (tests/config-corpus/{accept,reject}).

The generated files are committed; rerun this script after editing it:

    python3 tests/config-corpus/generate.py

It deletes and rewrites accept/*.yaml, reject/*.yaml and the prompt files
under accept/prompts and reject/prompts. Every document is derived from one
known-valid base with exactly one change, so a reject has exactly one defect.
The rules come from docs/config-reference.md and docs/config-errors.md.

Header lines of each document (see README.md):
    # expect: accept
    # expect: reject <reason-token> <key-path or ->
    # schema: loader-only: <why>      (JSON Schema parity checker skips it)
    # why: <one line>
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
HEX = "0123456789abcdef" * 4
assert len(HEX) == 64
PINNED = "127.0.0.1:5000/agentguard-test@sha256:" + HEX
CANARY = "CANARY-SECRET-"  # the test asserts this never shows up in any output
CAN = CANARY + "qzjxvkwp"  # a planted value

BASE = (
    "task_id: demo-task\n"
    "description: Demo task\n"
    'test_command: "true"\n'
    "repo_template: repo\n"
    "expected_modified_files: {min: 0, max: 3}\n"
)
BASE_NO_RT = (
    "task_id: demo-task\n"
    "description: Demo task\n"
    'test_command: "true"\n'
    "expected_modified_files: {min: 0, max: 3}\n"
)
SANDBOX = (
    "sandbox:\n"
    "  type: docker\n"
    '  image: "%s"\n'
    "  network: none\n" % PINNED
)
CE_HEAD = "contained_execution:\n  version: 1\n  platform: linux-docker-engine\n"
CONTAINED = BASE + SANDBOX + CE_HEAD


def q(s):
    """A YAML double-quoted scalar; control characters and DEL escaped."""
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif o < 0x20 or o == 0x7F:
            out.append("\\x%02x" % o)
        elif 0x80 <= o <= 0x9F or o in (0x2028, 0x2029):
            out.append("\\u%04x" % o)  # YAML streams cannot carry them raw
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def ce(extra):
    """Contained base plus lines inside contained_execution (2-space indent)."""
    return CONTAINED + extra


def env(*entries):
    """Contained base with an environment list; entries are dicts (ordered)."""
    text = CONTAINED + "  environment:\n"
    for e in entries:
        first = True
        for k, v in e.items():
            text += ("    - " if first else "      ") + "%s: %s\n" % (k, v)
            first = False
    return text


def sbx(lines):
    """Base plus a sandbox block given as lines (already indented by 2)."""
    return BASE + "sandbox:\n" + lines


def img(ref):
    """A docker sandbox without contained_execution, with the given image text."""
    return BASE + "sandbox:\n  type: docker\n  image: %s\n" % ref


accepts = []
rejects = []


def A(slug, body, why, loader_only=None):
    accepts.append((slug, body, why, loader_only, None, None))


def R(slug, body, reason, key, why, loader_only=None):
    if reason.startswith("config.yaml.") or reason.startswith("config.io."):
        assert key == "-", slug
    rejects.append((slug, body, why, loader_only, reason, key))


# ---------------------------------------------------------------- accept
A("minimal", BASE, "the minimal valid base document")
A("mode-ci-no-repo-template", BASE_NO_RT + "mode: ci\n",
  "repo_template is only required in benchmark mode")
A("mode-benchmark-explicit", BASE + "mode: benchmark\n", "mode benchmark spelled out")

FULL = (
    "task_id: full-example_1.0\n"
    "description: Every top-level key at once\n"
    'test_command: "make test"\n'
    "expected_modified_files:\n  min: 1\n  max: 10\n"
    "mode: benchmark\n"
    "repo_template: templates/repo\n"
    "agent_command: [\"agent\", \"--run\", \"task\"]\n"
    "agent_version_command: \"agent --version\"\n"
    "agent_environment:\n  AGENT_LOG: %s\n  OTHER: %s\n" % (q(CAN + "a"), q(CAN + "b")) +
    "agent_metadata:\n  team: core\n  retries: 3\n  ratio: 0.5\n  nightly: false\n  note: ~\n"
    "agent_model: model-x\n"
    "agent_name: agent-x\n"
    "agent_workdir: config_dir\n"
    "allowed_paths: [\"src/**\", \"tests/**\"]\n"
    "forbidden_paths: [\".git/**\", \"secrets/**\"]\n"
    "test_paths: [\"tests/**\"]\n"
    "secret_patterns: [\"AKIA*\"]\n"
    "unsafe_commands: [\"rm -rf /\", \"curl\"]\n"
    "guard_ignore_paths: [\"build/**\"]\n"
    "benchmark:\n  id: b-1\n  category: refactor\n  expected_behavior: passes\n"
    "  failure_mode: none\n  version: 2\n  difficulty: medium\n  tags: [a, b]\n"
    "command_policy: {mode: enforce}\n"
    "command_timeout_seconds: 120\n"
    "max_output_bytes: 100000\n"
    "diff_limits: {max_files_changed: 5, max_lines_added: 100, max_lines_deleted: 50}\n"
    "filesystem_watcher: polling\n"
    "policy:\n  diff_size: {severity: info}\n  tests_pass: {severity: critical}\n"
    "sandbox:\n  type: docker\n  image: \"%s\"\n  workdir: /workspace\n  network: none\n"
    "  read_only: true\n  timeout_seconds: 300\n" % PINNED +
    "secret_content_builtin_detectors: [private-key-header]\n"
    "secret_content_patterns:\n  - id: internal-token\n    contains: \"int-tok-\"\n"
    "task:\n  prompt: Fix the failing test.\n"
    "contained_execution:\n  version: 1\n  platform: linux-docker-engine\n"
)
A("all-top-level-keys", FULL, "all 31 top-level keys with valid values")

A("flow-style-document",
  '{task_id: demo-task, description: Demo task, test_command: "true", repo_template: repo,'
  " expected_modified_files: {min: 0, max: 3}}\n",
  "the whole document as one flow mapping")
A("explicit-document-markers", "---\n" + BASE + "...\n", "one document with --- and ... markers")
A("crlf-line-endings", BASE.replace("\n", "\r\n"), "CRLF line breaks are ordinary YAML line breaks")
A("quoted-keys",
  '"task_id": demo-task\n\'description\': Demo task\n"test_command": "true"\n'
  '"repo_template": repo\n"expected_modified_files": {"min": 0, "max": 3}\n',
  "quoted keys are string keys")
A("block-scalars",
  "task_id: demo-task\ndescription: |\n  Line one\n  Line two\ntest_command: >\n  make\n  test\n"
  "repo_template: repo\nexpected_modified_files: {min: 0, max: 3}\n",
  "literal and folded block scalars")
A("unicode-description", BASE.replace("Demo task", "Démo – задача – 任务 ✓"), "non-ASCII UTF-8 text")
A("comments-everywhere",
  "# leading comment\ntask_id: demo-task # trailing\n# between\ndescription: Demo task\n"
  'test_command: "true"   # comment\nrepo_template: repo\nexpected_modified_files: # here\n'
  "  min: 0 # a\n  max: 3 # b\n# end\n",
  "comments in every position")
A("task-id-128", BASE.replace("demo-task", "A" + "b" * 127), "task_id at its 128-character maximum")
A("task-id-one-char", BASE.replace("demo-task", "x"), "task_id of one character")
A("task-id-punctuation", BASE.replace("demo-task", "9A.b_c-D"), "task_id using . _ - after an alnum start")
A("expected-zero-zero", BASE.replace("{min: 0, max: 3}", "{min: 0, max: 0}"), "min = max = 0")
A("expected-max-max", BASE.replace("{min: 0, max: 3}", "{min: 1000000, max: 1000000}"),
  "min = max = 1000000 (upper edge)")
A("expected-block-style", BASE.replace("{min: 0, max: 3}", "\n  min: 0\n  max: 1000000"),
  "expected_modified_files in block style, max at its edge")
A("timeout-1", BASE + "command_timeout_seconds: 1\n", "command_timeout_seconds lower edge")
A("timeout-86400", BASE + "command_timeout_seconds: 86400\n", "command_timeout_seconds upper edge")
A("timeout-hex", BASE + "command_timeout_seconds: 0x3C\n", "a YAML 1.2 core hexadecimal integer (60)")
A("timeout-plus-sign", BASE + "command_timeout_seconds: +60\n", "a YAML core integer with a + sign")
A("max-output-1", BASE + "max_output_bytes: 1\n", "max_output_bytes lower edge")
A("max-output-64mib", BASE + "max_output_bytes: 67108864\n", "max_output_bytes upper edge")
A("nulls-take-defaults",
  BASE + "mode: ~\nagent_command: null\nagent_environment:\nagent_metadata: ~\n"
  "allowed_paths: null\nforbidden_paths: ~\nbenchmark: null\ncommand_policy: ~\n"
  "command_timeout_seconds: null\nmax_output_bytes: ~\ncontained_execution: null\n"
  "diff_limits: ~\nfilesystem_watcher: null\npolicy: ~\nsandbox: null\n"
  "secret_content_builtin_detectors: ~\nsecret_content_patterns: null\ntask: ~\n",
  "null for optional keys takes their defaults")
A("contained-null-local-sandbox", BASE + "sandbox: {type: local}\ncontained_execution: null\n",
  "contained_execution: null asks for no containment, so a local sandbox is fine")
A("contained-minimal", CONTAINED, "contained_execution with every optional field defaulted")
A("contained-full-shape",
  BASE + SANDBOX +
  "contained_execution:\n  version: 1\n  platform: linux-docker-engine\n  network: none\n"
  "  image_provenance: digest-required\n  required_uid: 1000\n  required_gid: 1000\n"
  "  cpu_limit: 1.0\n  memory_limit: 512m\n  pids_limit: 256\n  tmpfs_size: 256m\n"
  "  require_evidence_outside_agent_repo: true\n  allow_privileged: false\n"
  "  allow_host_network: false\n  allow_docker_socket_mount: false\n"
  "  allow_device_exposure: false\n  allow_host_namespace_sharing: false\n"
  "  environment:\n    - name: AGENT_API_TOKEN\n      source: host\n      required: true\n"
  "      allow_sensitive: true\n    - name: AGENT_MODE\n      value: batch\n",
  "the accepted v1 shape from the Configuration Contract, every field explicit")
A("contained-desktop-experimental", ce("").replace("linux-docker-engine", "docker-desktop-experimental"),
  "the reduced-claim platform value is accepted")
A("contained-bridge",
  CONTAINED.replace("  network: none\n", "  network: bridge\n") + "  network: bridge\n",
  "bridge networking when both sandbox and contained_execution say bridge")
A("contained-network-defaults",
  CONTAINED.replace("  network: none\n", "") + "  network: none\n",
  "sandbox.network omitted (none) equals contained_execution.network none")
A("contained-image-tag-and-digest", CONTAINED.replace(PINNED, PINNED.replace("@", ":1@")),
  "a tag plus a digest is pinned")
A("contained-cpu-0.1", ce("  cpu_limit: 0.1\n"), "cpu_limit lower edge")
A("contained-cpu-8.0", ce("  cpu_limit: 8.0\n"), "cpu_limit upper edge as a float")
A("contained-cpu-8-int", ce("  cpu_limit: 8\n"), "cpu_limit given as an integer is a number")
A("contained-memory-64m", ce("  memory_limit: 64m\n"), "memory_limit lower edge")
A("contained-memory-16g", ce("  memory_limit: 16g\n"), "memory_limit upper edge")
A("contained-memory-65536k", ce("  memory_limit: 65536k\n"), "memory_limit lower edge in KiB (k = 1024)")
A("contained-memory-uppercase", ce('  memory_limit: "512M"\n  tmpfs_size: "64K"\n'),
  "uppercase size suffixes are allowed")
A("contained-memory-bytes-min", ce('  memory_limit: "67108864"\n'),
  "a size string without suffix is bytes: exactly 64 MiB")
A("contained-memory-bytes-max", ce('  memory_limit: "17179869184"\n'),
  "a size string without suffix: exactly 16 GiB")
A("contained-memory-16384m", ce("  memory_limit: 16384M\n"), "16 GiB spelled in MiB")
A("contained-pids-16", ce("  pids_limit: 16\n"), "pids_limit lower edge")
A("contained-pids-4096", ce("  pids_limit: 4096\n"), "pids_limit upper edge")
A("contained-tmpfs-64k", ce("  tmpfs_size: 64k\n"), "tmpfs_size lower edge")
A("contained-tmpfs-4g", ce("  tmpfs_size: 4g\n"), "tmpfs_size upper edge")
A("contained-tmpfs-bytes", ce('  tmpfs_size: "65536"\n'), "tmpfs_size 64 KiB as plain bytes")
A("contained-tmpfs-4194304k", ce("  tmpfs_size: 4194304k\n"), "tmpfs_size upper edge in KiB")
A("contained-uid-1", ce("  required_uid: 1\n  required_gid: 1\n"), "required_uid/gid lower edge")
A("contained-uid-max", ce("  required_uid: 2147483647\n  required_gid: 2147483647\n"),
  "required_uid/gid upper edge")
A("contained-flags-false", ce(
    "  allow_privileged: false\n  allow_host_network: false\n  allow_docker_socket_mount: false\n"
    "  allow_device_exposure: false\n  allow_host_namespace_sharing: false\n"
    "  require_evidence_outside_agent_repo: true\n  image_provenance: digest-required\n"),
  "every safety flag at its only allowed value")
A("contained-bool-spellings", ce("  allow_privileged: False\n  require_evidence_outside_agent_repo: TRUE\n"),
  "YAML 1.2 core booleans in other capitalisations")
A("contained-pids-octal", ce("  pids_limit: 0o400\n"), "0o400 is a YAML 1.2 core integer (256)",
  loader_only="PyYAML (YAML 1.1) reads 0o400 as a string")
A("contained-cpu-scientific", ce("  cpu_limit: 1e0\n"), "1e0 is a YAML 1.2 core float (1.0)",
  loader_only="PyYAML (YAML 1.1) reads 1e0 as a string")
A("diff-limits-edges",
  BASE + "diff_limits: {max_files_changed: null, max_lines_added: 0, max_lines_deleted: 2147483647}\n",
  "diff_limits null, 0 and 2147483647")
A("diff-limits-empty-values", BASE + "diff_limits:\n  max_files_changed:\n  max_lines_added: 2147483647\n",
  "diff_limits with an empty (null) value")

A("list-1024-forbidden", BASE + "forbidden_paths:\n" + "".join("  - p%04d/**\n" % i for i in range(1024)),
  "forbidden_paths at its 1024-item bound")
A("list-1024-guard-ignore", BASE + "guard_ignore_paths: [" + ", ".join("g%d" % i for i in range(1024)) + "]\n",
  "guard_ignore_paths at its 1024-item bound, flow style")
A("list-1024-unsafe-commands",
  BASE + "unsafe_commands:\n" + "".join("  - cmd%d\n" % i for i in range(1024)),
  "unsafe_commands at its 1024-item bound")

A("env-32-entries", env(*[{"name": "VAR_%02d" % i, "value": "v%d" % i} for i in range(32)]),
  "32 environment entries (the bound)")
A("env-name-64", env({"name": "N" * 64, "value": "x"}), "an environment name of 64 characters")
A("env-value-4096", env({"name": "BLOB", "value": q(("abcdefgh" * 512)[:4096])}),
  "a literal value of 4096 characters")
A("env-value-4096-twobyte", env({"name": "BLOB", "value": q("é" * 4096)}),
  "4096 characters of a 2-byte letter: the value bound counts characters (8199 bytes in all)")
A("env-total-16384",
  env(*[{"name": "BLOB_%s" % c, "value": q(c * 4089)} for c in "ABCD"]),
  "names + '=' + values total exactly 16384 bytes (4 x (6+1+4089))")
A("env-empty-value", env({"name": "EMPTY_OK", "value": '""'}), "an empty literal value")
A("env-value-punctuation", env({"name": "OPTS", "value": q("a=b c 'd' \"e\" #f ü")}),
  "a value with spaces, quotes, '=' and non-ASCII")
A("env-host-sources",
  env({"name": "CI_JOB", "source": "host", "required": "true"},
      {"name": "OPTIONAL_FLAG", "source": "host"},
      {"name": "MODE_X", "source": "literal", "value": "fast", "required": "false"}),
  "host entries without value; an explicit literal source")
A("env-sensitive-allowed",
  env(*[{"name": "MY_%s_%d" % (w, i), "value": q(CAN + w.lower()), "allow_sensitive": "true"}
        for i, w in enumerate(["TOKEN", "SECRET", "PASSWORD", "PASS", "KEY", "CREDENTIAL", "AUTH", "COOKIE"])]),
  "every secret-like name word is accepted with allow_sensitive: true")
A("env-sensitive-marked-allowed",
  env({"name": "PLAIN_NAME", "value": q(CAN + "marked"), "sensitive": "true", "allow_sensitive": "true"}),
  "sensitive: true together with allow_sensitive: true")
A("env-sensitive-host-allowed",
  env({"name": "GH_TOKEN", "source": "host", "required": "true", "sensitive": "true", "allow_sensitive": "true"}),
  "a host-sourced secret-like name with allow_sensitive")
A("env-near-miss-1",
  env(*[{"name": n, "value": "x"} for n in ["HOMEPAGE_URL", "MY_PATHS", "DOCKERFILE_NAME", "LDFLAGS"]]),
  "names close to reserved ones but not reserved")
A("env-near-miss-2",
  env(*[{"name": n, "value": "x"} for n in ["COMPOSER_CACHE_DIR", "HOME_DIR", "PATH_PREFIX", "LANGUAGE",
                                             "LC_MESSAGES", "ENVIRONMENT"]]),
  "prefix look-alikes (COMPOSER_ is not COMPOSE_) and exact-name look-alikes")
A("env-near-miss-3",
  env(*[{"name": n, "value": "x"} for n in ["MY_CONFIGURATION", "APP_STORES", "APP_SOCKETS", "CONFIG",
                                             "RUNTIME_DIR", "SOCKET", "STORE", "MY_PATH_LIST", "DYLDX",
                                             "XDG_DATA_DIRS"]]),
  "suffix look-alikes: CONFIG, RUNTIME_DIR, SOCKET, STORE lack the leading underscore")
A("env-underscore-digits",
  env({"name": "_PRIVATE_FLAG", "value": q("1")}, {"name": "V2_MODE", "value": "enabled"}, {"name": "_", "value": "u"}),
  "names with a leading underscore and digits", loader_only=None)
A("env-null-list", ce("  environment: null\n"), "environment: null means no entries")
A("env-empty-list", ce("  environment: []\n"), "an empty environment list")

# images (docker sandbox, no containment)
A("image-localhost-nested-tag", img('"localhost/foo/bar:1.0"'), "localhost registry, nested path, tag")
A("image-registry-deep-path", img('"registry.example.com/org/team/app:v1.2.3"'), "dotted registry, 4 components")
A("image-dash-run", img('"registry.example.com/my--app"'), "a run of dashes joins path parts, as in Docker")
A("image-tag-and-digest", img('"example.com:443/a/b:tag@sha256:%s"' % HEX), "registry port, tag and digest")
A("image-bare-name", img("alpine"), "a bare repository name")
A("image-digest-only", img('"alpine@sha256:%s"' % HEX), "digest without tag")
A("image-separators", img('"reg.example.com/my_app__x/y-z.w:1"'), "path separators . _ __ -")
A("image-tag-128", img('"alpine:%s"' % ("T" + "t" * 127)), "a tag of 128 characters")
A("image-port-edges", img('"localhost:65535/app"'), "registry port 65535")
A("image-port-1", img('"example.com:1/app"'), "registry port 1")
A("image-port-no-dot", img('"foo:5000/bar"'), "a registry host without dot but with a port")
_img512 = "registry.example.com/" + "/".join(["a" * 60] * 8)
_img512 = _img512 + "/" + "b" * (512 - len(_img512) - 1)
assert len(_img512) == 512
A("image-512-chars", img(q(_img512)), "an image reference of exactly 512 characters")
A("image-local-sandbox", BASE + 'sandbox: {type: local, image: "alpine:3.19"}\n',
  "an image may be named with a local sandbox")
A("sandbox-docker-full",
  sbx('  type: docker\n  image: "alpine:3.19"\n  workdir: /srv/work\n  network: bridge\n'
      "  read_only: true\n  timeout_seconds: 1\n"
      '  docker: {cpus: 1024, memory: "1", network: none, read_only: false}\n'),
  "every sandbox key; sandbox.timeout_seconds lower edge; docker.cpus upper edge")
A("sandbox-timeout-86400", sbx("  timeout_seconds: 86400\n"), "sandbox.timeout_seconds upper edge")
A("sandbox-docker-cpus-string", sbx('  type: docker\n  image: alpine\n  docker: {cpus: "2.5", memory: 512m}\n'),
  "docker.cpus as a decimal string")
A("sandbox-docker-cpus-scientific", sbx('  type: docker\n  image: alpine\n  docker: {cpus: "1e1", memory: 1G}\n'),
  "docker.cpus as a scientific-notation string")
A("sandbox-docker-cpus-small", sbx("  type: docker\n  image: alpine\n  docker: {cpus: 0.01}\n"),
  "docker.cpus just above zero")
A("sandbox-bool-spellings", sbx("  read_only: True\n  docker: {read_only: FALSE}\n"),
  "True / FALSE are YAML 1.2 core booleans")

A("policy-all-keys",
  BASE + "policy:\n" + "".join(
      "  %s: {severity: %s}\n" % (k, s) for k, s in [
          ("diff_size", "info"), ("forbidden_paths", "warning"), ("scope_adherence", "error"),
          ("secret_scan", "critical"), ("test_tampering", "error"), ("tests_pass", "warning"),
          ("unsafe_commands", "info")]),
  "every policy key with every severity")
A("watcher-polling", BASE + "filesystem_watcher: polling\n", "filesystem_watcher string form")
A("watcher-map-disabled", BASE + "filesystem_watcher: {mode: disabled}\n", "filesystem_watcher map form")
A("watcher-auto", BASE + "filesystem_watcher: {mode: auto}\n", "filesystem_watcher map form, auto")
A("command-policy-workdir", BASE + "command_policy: {mode: enforce}\nagent_workdir: config_dir\n",
  "command_policy enforce and agent_workdir config_dir")
A("command-policy-audit", BASE + "command_policy:\n  mode: audit\nagent_workdir: repo_root\n",
  "command_policy audit and agent_workdir repo_root")
A("builtin-detectors-all",
  BASE + "secret_content_builtin_detectors:\n  - aws-access-key-id-shape\n  - generic-api-key-assignment\n"
  "  - github-token-shape\n  - npm-token-shape\n  - private-key-header\n",
  "all five built-in detectors")
A("secret-pattern-edges",
  BASE + "secret_content_patterns:\n  - id: %s\n    contains: %s\n  - id: b\n    contains: %s\n"
  % ("a" * 64, q("12345678"), q(("Zq-" * 400)[:1024])),
  "pattern id of 64 characters; literals of 8 and 1024 characters")
A("secret-pattern-id-chars", BASE + "secret_content_patterns:\n  - id: 0a.b_c-d\n    contains: \"needle-x\"\n",
  "an id using digits . _ -")
A("secret-total-16384",
  BASE + "secret_content_patterns:\n" + "".join(
      "  - id: p%02d\n    contains: %s\n" % (i, q(("%02d" % i) + "x" * 1022)) for i in range(16)),
  "16 literals of 1024 bytes: exactly 16384 bytes")
A("secret-32-patterns",
  BASE + "secret_content_patterns:\n" + "".join(
      "  - id: p%02d\n    contains: \"literal-%02d\"\n" % (i, i) for i in range(32)),
  "32 custom patterns and no built-ins")
A("secret-5-builtins-27-patterns",
  BASE + "secret_content_builtin_detectors: [aws-access-key-id-shape, generic-api-key-assignment,"
  " github-token-shape, npm-token-shape, private-key-header]\nsecret_content_patterns:\n" + "".join(
      "  - id: p%02d\n    contains: \"literal-%02d\"\n" % (i, i) for i in range(27)),
  "5 built-ins + 27 patterns = 32", loader_only="the built-ins + patterns count spans two keys")
A("secret-2048-bytes", BASE + "secret_content_patterns:\n  - id: twobyte\n    contains: %s\n" % q("é" * 1024),
  "1024 characters of a 2-byte letter: exactly 2048 bytes")
A("secret-total-16384-multibyte",
  BASE + "secret_content_patterns:\n" + "".join(
      "  - id: m%d\n    contains: %s\n" % (i, q(c * 1024)) for i, c in enumerate("éèêëàâçñ")),
  "8 literals of 2048 bytes each: exactly 16384 bytes")
A("prompt-file", BASE + "task: {prompt_file: prompts/ok.md}\n", "an existing prompt file inside the config dir")
A("prompt-file-64k", BASE + "task:\n  prompt_file: prompts/exact-64k.md\n",
  "a prompt file of exactly 65536 bytes", loader_only="prompt_file size is read from disk")
A("prompt-file-subdir", BASE + "task: {prompt_file: ./prompts/nested/deep.md}\n",
  "a prompt file in a subdirectory, with a leading ./")
A("prompt-inline", BASE + "task:\n  prompt: |\n    Fix the bug.\n    Then run the tests.\n",
  "an inline prompt")
A("agent-command-string", BASE + 'agent_command: "my-agent --go"\nagent_version_command: [my-agent, --version]\n',
  "agent_command as a string, agent_version_command as a list")
A("agent-environment-256",
  BASE + "agent_environment:\n" + "".join("  K%03d: %s\n" % (i, q(CAN + str(i))) for i in range(256)),
  "agent_environment at its 256-entry bound (values are secrets, never printed)")
A("agent-metadata-scalars",
  BASE + "agent_metadata:\n  n: null\n  e:\n  b: true\n  i: -42\n  f: -0.5\n  big: 2147483648\n"
  "  s: text\n  q: \"123\"\n",
  "agent_metadata accepts null, bool, integer, finite float and string")
A("agent-metadata-256",
  BASE + "agent_metadata:\n" + "".join("  m%03d: %d\n" % (i, i) for i in range(256)),
  "agent_metadata at its 256-entry bound")
A("benchmark-full",
  BASE + "benchmark:\n  id: bench-1\n  category: security\n  expected_behavior: refuses\n"
  "  failure_mode: leaks\n  version: \"3\"\n  difficulty: advanced\n  tags: [x, y, z]\n",
  "benchmark with a canonical integer string version")
A("benchmark-version-max", BASE + "benchmark: {version: 2147483647, difficulty: easy}\n",
  "benchmark.version upper edge")
A("benchmark-version-1", BASE + "benchmark: {version: 1, difficulty: hard}\n", "benchmark.version lower edge")
A("description-64k", BASE.replace("Demo task", "d" * 65536), "a scalar of exactly 64 KiB")
A("yaml11-words-are-strings",
  BASE.replace("demo-task", "no") + "agent_name: yes\nagent_model: on\n",
  "yes / no / on are plain strings under YAML 1.2 core",
  loader_only="PyYAML (YAML 1.1) reads yes/no/on as booleans")
A("agent-environment-canary", BASE + "agent_environment:\n  API_TOKEN: %s\n" % q(CAN + "agentenv"),
  "agent_environment values are never printed, even on success")

# ---------------------------------------------------------------- reject
# top level: required keys, patterns, types
R("missing-task-id", BASE.replace("task_id: demo-task\n", ""), "config.missing_required", "task_id",
  "task_id is required")
R("missing-description", BASE.replace("description: Demo task\n", ""), "config.missing_required", "description",
  "description is required")
R("missing-test-command", BASE.replace('test_command: "true"\n', ""), "config.missing_required", "test_command",
  "test_command is required")
R("missing-expected", BASE.replace("expected_modified_files: {min: 0, max: 3}\n", ""),
  "config.missing_required", "expected_modified_files", "expected_modified_files is required")
R("missing-expected-max", BASE.replace("{min: 0, max: 3}", "{min: 0}"),
  "config.missing_required", "expected_modified_files.max", "expected_modified_files.max is required")
R("missing-expected-min", BASE.replace("{min: 0, max: 3}", "{max: 3}"),
  "config.missing_required", "expected_modified_files.min", "expected_modified_files.min is required")
R("benchmark-mode-no-repo-template", BASE_NO_RT, "config.missing_required", "repo_template",
  "repo_template is required in the default benchmark mode")
R("repo-template-empty-ci", BASE_NO_RT + 'mode: ci\nrepo_template: ""\n', "config.empty_string", "repo_template",
  "repo_template must not be blank whenever present, even in ci mode")
R("description-blank", BASE.replace("description: Demo task", 'description: "   "'),
  "config.empty_string", "description", "description must not be blank")
R("test-command-empty", BASE.replace('test_command: "true"', 'test_command: ""'),
  "config.empty_string", "test_command", "test_command must not be empty")
R("task-id-129", BASE.replace("demo-task", "A" + "b" * 128), "config.pattern", "task_id",
  "task_id of 129 characters")
R("task-id-leading-dot", BASE.replace("demo-task", ".demo"), "config.pattern", "task_id",
  "task_id must start with a letter or digit")
R("task-id-slash", BASE.replace("demo-task", "demo/task"), "config.pattern", "task_id",
  "task_id must not contain /")
R("task-id-space", BASE.replace("demo-task", '"demo task"'), "config.pattern", "task_id",
  "task_id must not contain a space")
R("task-id-integer", BASE.replace("demo-task", "123"), "config.type", "task_id",
  "a plain 123 is an integer where a string is required")
R("description-list", BASE.replace("description: Demo task", "description: [Demo, task]"),
  "config.type", "description", "a list where a string is required")
R("description-bool", BASE.replace("description: Demo task", "description: true"),
  "config.type", "description", "a boolean where a string is required")
R("test-command-bare-true", BASE.replace('test_command: "true"', "test_command: true"),
  "config.type", "test_command", "an unquoted true is a boolean, not the command")
R("expected-not-map", BASE.replace("{min: 0, max: 3}", "3"), "config.type", "expected_modified_files",
  "expected_modified_files must be a map")
R("expected-min-string", BASE.replace("{min: 0, max: 3}", '{min: "0", max: 3}'),
  "config.type", "expected_modified_files.min", '"0" is a string, not an integer')
R("expected-max-float", BASE.replace("{min: 0, max: 3}", "{min: 0, max: 3.0}"),
  "config.type", "expected_modified_files.max", "3.0 is a float, not an integer",
  loader_only="JSON Schema treats 3.0 as an integer")
R("expected-max-1000001", BASE.replace("{min: 0, max: 3}", "{min: 0, max: 1000001}"),
  "config.range", "expected_modified_files.max", "max above 1000000")
R("expected-min-negative", BASE.replace("{min: 0, max: 3}", "{min: -1, max: 3}"),
  "config.range", "expected_modified_files.min", "min below 0")
R("expected-min-gt-max", BASE.replace("{min: 0, max: 3}", "{min: 4, max: 3}"),
  "config.min_gt_max", "-", "min > max", loader_only="JSON Schema cannot compare two values")
R("expected-unknown-key", BASE.replace("{min: 0, max: 3}", "{min: 0, max: 3, avg: 1}"),
  "config.unknown_key", "expected_modified_files.avg", "an unknown key inside expected_modified_files")
R("mode-bad", BASE + "mode: bench\n", "config.enum", "mode", "mode outside benchmark|ci")
R("timeout-0", BASE + "command_timeout_seconds: 0\n", "config.range", "command_timeout_seconds",
  "command_timeout_seconds below 1")
R("timeout-86401", BASE + "command_timeout_seconds: 86401\n", "config.range", "command_timeout_seconds",
  "command_timeout_seconds above 86400")
R("timeout-negative", BASE + "command_timeout_seconds: -5\n", "config.range", "command_timeout_seconds",
  "a negative timeout")
R("timeout-string", BASE + 'command_timeout_seconds: "1000"\n', "config.type", "command_timeout_seconds",
  '"1000" is a string, not an integer')
R("timeout-float", BASE + "command_timeout_seconds: 1000.0\n", "config.type", "command_timeout_seconds",
  "1000.0 is a float, not an integer", loader_only="JSON Schema treats 1000.0 as an integer")
R("timeout-scientific", BASE + "command_timeout_seconds: 1e3\n", "config.type", "command_timeout_seconds",
  "1e3 is a YAML 1.2 core float", loader_only="PyYAML (YAML 1.1) reads 1e3 as a string")
R("max-output-0", BASE + "max_output_bytes: 0\n", "config.range", "max_output_bytes", "max_output_bytes below 1")
R("max-output-67108865", BASE + "max_output_bytes: 67108865\n", "config.range", "max_output_bytes",
  "max_output_bytes above 64 MiB")
R("agent-command-empty", BASE + 'agent_command: ""\n', "config.empty_string", "agent_command",
  "agent_command must not be blank")
R("agent-command-blank-item", BASE + 'agent_command: [agent, "  "]\n', "config.empty_string", "agent_command[1]",
  "agent_command list items must not be blank")
R("agent-command-map", BASE + "agent_command: {run: agent}\n", "config.type", "agent_command",
  "agent_command is a string or a list")
R("agent-version-command-int-item", BASE + "agent_version_command: [agent, 1]\n", "config.type",
  "agent_version_command[1]", "list items must be strings")
R("agent-model-empty", BASE + 'agent_model: ""\n', "config.empty_string", "agent_model", "agent_model not blank")
R("agent-name-number", BASE + "agent_name: 1.5\n", "config.type", "agent_name", "a number where a string is required")
R("agent-workdir-bad", BASE + "agent_workdir: cwd\n", "config.enum", "agent_workdir",
  "agent_workdir outside repo_root|config_dir")
R("agent-environment-int-value",
  BASE + "agent_environment:\n  GOOD: %s\n  COUNT: 1\n" % q(CAN + "env1"),
  "config.type", "agent_environment.COUNT", "agent_environment values must be strings (canary in a sibling)")
R("agent-environment-map-value",
  BASE + "agent_environment:\n  NESTED: {a: b}\n  OTHER: %s\n" % q(CAN + "env2"),
  "config.type", "agent_environment.NESTED", "a map as an agent_environment value")
R("agent-environment-list", BASE + "agent_environment: [A, B]\n", "config.type", "agent_environment",
  "agent_environment must be a map")
R("agent-environment-257",
  BASE + "agent_environment:\n" + "".join("  K%03d: %s\n" % (i, q(CAN + str(i))) for i in range(257)),
  "config.too_many", "agent_environment", "257 agent_environment entries (bound 256)")
R("agent-metadata-nested", BASE + "agent_metadata:\n  owner: {team: core}\n", "config.type", "agent_metadata.owner",
  "agent_metadata values must be scalars")
R("agent-metadata-list-value", BASE + "agent_metadata:\n  tags: [a, b]\n", "config.type", "agent_metadata.tags",
  "a list as an agent_metadata value")
R("agent-metadata-inf", BASE + "agent_metadata:\n  ratio: .inf\n", "config.range", "agent_metadata.ratio",
  "an infinite float in agent_metadata", loader_only="JSON has no infinity; a schema cannot require finiteness")
R("agent-metadata-nan", BASE + "agent_metadata:\n  ratio: .nan\n", "config.range", "agent_metadata.ratio",
  "a NaN in agent_metadata", loader_only="NaN compares false against every bound")
R("agent-metadata-257",
  BASE + "agent_metadata:\n" + "".join("  m%03d: %d\n" % (i, i) for i in range(257)),
  "config.too_many", "agent_metadata", "257 agent_metadata entries (bound 256)")

for lst in ["allowed_paths", "forbidden_paths", "test_paths", "secret_patterns", "unsafe_commands",
            "guard_ignore_paths"]:
    R("list-1025-" + lst.replace("_", "-"),
      BASE + lst + ":\n" + "".join("  - item%04d\n" % i for i in range(1025)),
      "config.too_many", lst, "%s with 1025 items (bound 1024)" % lst)
R("list-empty-item", BASE + 'forbidden_paths: [".git/**", "", "x"]\n', "config.empty_string", "forbidden_paths[1]",
  "list items must not be empty")
R("list-int-item", BASE + "test_paths: [tests, 5]\n", "config.type", "test_paths[1]", "list items must be strings")
R("list-is-map", BASE + "forbidden_paths: {a: b}\n", "config.type", "forbidden_paths", "a map where a list is needed")
R("list-is-string", BASE + "allowed_paths: src\n", "config.type", "allowed_paths", "a string where a list is needed")

# unknown keys
R("unknown-top-typo", BASE + "forbiden_paths: [x]\n", "config.unknown_key", "forbiden_paths",
  "a misspelled top-level key")
R("unknown-top-other", BASE + "timeout: 5\n", "config.unknown_key", "timeout", "a top-level key not in v1")
R("unknown-contained", ce("  allow_root: false\n"), "config.unknown_key", "contained_execution.allow_root",
  "an unknown key in contained_execution")
R("unknown-contained-typo", ce("  memory_limt: 512m\n"), "config.unknown_key", "contained_execution.memory_limt",
  "a misspelled contained_execution key")
R("unknown-env-entry", env({"name": "MODE_X", "value": q(CAN + "unk"), "valeu": "x"}), "config.unknown_key",
  "contained_execution.environment[0].valeu", "an unknown key in an environment entry")
R("unknown-sandbox", sbx("  type: local\n  privileged: false\n"), "config.unknown_key", "sandbox.privileged",
  "an unknown key in sandbox")
R("unknown-sandbox-docker", sbx("  type: docker\n  image: alpine\n  docker: {cpus: 1, memory_swap: 1g}\n"),
  "config.unknown_key", "sandbox.docker.memory_swap", "an unknown key in sandbox.docker")
R("unknown-policy-entry", BASE + "policy:\n  secret_scan: {severity: error, level: 2}\n", "config.unknown_key",
  "policy.secret_scan.level", "an unknown key inside policy.<x>")
R("unknown-policy-key", BASE + "policy:\n  diff_sizes: {severity: error}\n", "config.unknown_key",
  "policy.diff_sizes", "a policy key outside the seven checks")
R("unknown-task", BASE + "task:\n  prompt: %s\n  model: x\n" % q(CAN + "prompt"), "config.unknown_key",
  "task.model", "an unknown key in task (canary in the prompt)")
R("unknown-benchmark", BASE + "benchmark: {id: b, owner: me}\n", "config.unknown_key", "benchmark.owner",
  "an unknown key in benchmark")
R("unknown-diff-limits", BASE + "diff_limits: {max_files: 3}\n", "config.unknown_key", "diff_limits.max_files",
  "an unknown key in diff_limits")
R("unknown-command-policy", BASE + "command_policy: {mode: audit, strict: true}\n", "config.unknown_key",
  "command_policy.strict", "an unknown key in command_policy")
R("unknown-watcher", BASE + "filesystem_watcher: {mode: auto, interval: 5}\n", "config.unknown_key",
  "filesystem_watcher.interval", "an unknown key in the filesystem_watcher map")
R("unknown-secret-pattern", BASE + 'secret_content_patterns:\n  - {id: a1, contains: "abcdefgh", regex: x}\n',
  "config.unknown_key", "secret_content_patterns[0].regex", "an unknown key in a secret pattern")

# policy, watcher, detectors, benchmark
R("policy-bad-severity", BASE + "policy:\n  diff_size: {severity: fatal}\n", "config.enum", "policy.diff_size.severity",
  "severity outside info|warning|error|critical")
R("policy-severity-int", BASE + "policy:\n  tests_pass: {severity: 3}\n", "config.type", "policy.tests_pass.severity",
  "an integer severity")
R("policy-entry-string", BASE + "policy:\n  tests_pass: error\n", "config.type", "policy.tests_pass",
  "a policy entry must be a map")
R("watcher-bad-string", BASE + "filesystem_watcher: inotify\n", "config.enum", "filesystem_watcher",
  "filesystem_watcher outside auto|polling|disabled")
R("watcher-bad-map", BASE + "filesystem_watcher: {mode: inotify}\n", "config.enum", "filesystem_watcher.mode",
  "filesystem_watcher.mode outside auto|polling|disabled")
R("watcher-list", BASE + "filesystem_watcher: [auto]\n", "config.type", "filesystem_watcher",
  "filesystem_watcher is a string or a map")
R("command-policy-bad", BASE + "command_policy: {mode: strict}\n", "config.enum", "command_policy.mode",
  "command_policy.mode outside audit|enforce")
R("detectors-duplicate", BASE + "secret_content_builtin_detectors: [private-key-header, github-token-shape,"
  " private-key-header]\n", "config.duplicate", "secret_content_builtin_detectors[2]", "a repeated built-in detector")
R("detectors-unknown", BASE + "secret_content_builtin_detectors: [slack-token-shape]\n", "config.enum",
  "secret_content_builtin_detectors[0]", "a built-in detector that does not exist")
R("benchmark-version-0", BASE + "benchmark: {version: 0}\n", "config.range", "benchmark.version",
  "benchmark.version must be positive")
R("benchmark-version-big", BASE + "benchmark: {version: 2147483648}\n", "config.range", "benchmark.version",
  "benchmark.version above 2147483647")
R("benchmark-version-float", BASE + "benchmark: {version: 1.5}\n", "config.type", "benchmark.version",
  "a float benchmark.version")
R("benchmark-difficulty-bad", BASE + "benchmark: {difficulty: extreme}\n", "config.enum", "benchmark.difficulty",
  "difficulty outside easy|medium|hard|advanced")
R("benchmark-category-empty", BASE + 'benchmark: {category: ""}\n', "config.empty_string", "benchmark.category",
  "benchmark.category must not be blank")
R("benchmark-tags-string", BASE + "benchmark: {tags: security}\n", "config.type", "benchmark.tags",
  "benchmark.tags is a list")
R("diff-limits-negative", BASE + "diff_limits: {max_lines_added: -1}\n", "config.range", "diff_limits.max_lines_added",
  "diff_limits below 0")
R("diff-limits-big", BASE + "diff_limits: {max_files_changed: 2147483648}\n", "config.range",
  "diff_limits.max_files_changed", "diff_limits above 2147483647")
R("diff-limits-string", BASE + 'diff_limits: {max_lines_deleted: "10"}\n', "config.type",
  "diff_limits.max_lines_deleted", '"10" is a string')

# task / prompt_file
R("task-both", BASE + "task:\n  prompt: %s\n  prompt_file: prompts/ok.md\n" % q(CAN + "both"),
  "config.task.exactly_one", "-", "both prompt and prompt_file")
R("task-prompt-blank", BASE + 'task: {prompt: "   "}\n', "config.empty_string", "task.prompt", "a blank prompt")
R("prompt-file-absolute", BASE + "task: {prompt_file: /etc/passwd}\n", "config.prompt_file.outside",
  "task.prompt_file", "an absolute prompt_file")
R("prompt-file-dotdot", BASE + "task: {prompt_file: ../accept/prompts/ok.md}\n", "config.prompt_file.outside",
  "task.prompt_file", "a prompt_file leaving the config directory (the target exists)")
R("prompt-file-missing", BASE + "task: {prompt_file: prompts/does-not-exist.md}\n", "config.prompt_file.missing",
  "task.prompt_file", "a prompt_file that does not exist", loader_only="prompt_file existence is on disk")
R("prompt-file-directory", BASE + "task: {prompt_file: prompts}\n", "config.prompt_file.missing",
  "task.prompt_file", "a prompt_file that is a directory", loader_only="prompt_file existence is on disk")
R("prompt-file-too-large", BASE + "task: {prompt_file: prompts/too-large.md}\n", "config.prompt_file.too_large",
  "task.prompt_file", "a prompt file of 65537 bytes", loader_only="prompt_file size is read from disk")
R("task-not-map", BASE + "task: Fix it\n", "config.type", "task", "task must be a map")

# sandbox
R("sandbox-type-bad", sbx("  type: podman\n"), "config.enum", "sandbox.type", "sandbox.type outside local|docker")
R("sandbox-network-bad", sbx("  network: overlay\n"), "config.enum", "sandbox.network", "sandbox.network outside none|bridge")
R("sandbox-docker-no-image", sbx("  type: docker\n"), "config.missing_required", "sandbox.image",
  "sandbox.image is required when type is docker")
R("sandbox-workdir-relative", sbx("  workdir: workspace\n"), "config.pattern", "sandbox.workdir",
  "sandbox.workdir must be absolute")
R("sandbox-read-only-string", sbx('  read_only: "false"\n'), "config.type", "sandbox.read_only",
  '"false" is a string, not a boolean')
R("sandbox-read-only-int", sbx("  read_only: 1\n"), "config.type", "sandbox.read_only", "1 is an integer, not a boolean")
R("sandbox-read-only-yes", sbx("  read_only: yes\n"), "config.type", "sandbox.read_only",
  "yes is a string under YAML 1.2 core", loader_only="PyYAML (YAML 1.1) reads yes as a boolean")
R("sandbox-read-only-off", sbx("  read_only: off\n"), "config.type", "sandbox.read_only",
  "off is a string under YAML 1.2 core", loader_only="PyYAML (YAML 1.1) reads off as a boolean")
R("sandbox-timeout-0", sbx("  timeout_seconds: 0\n"), "config.range", "sandbox.timeout_seconds",
  "sandbox.timeout_seconds below 1")
R("sandbox-timeout-86401", sbx("  timeout_seconds: 86401\n"), "config.range", "sandbox.timeout_seconds",
  "sandbox.timeout_seconds above 86400")
R("sandbox-not-map", BASE + "sandbox: docker\n", "config.type", "sandbox", "sandbox must be a map")
R("sandbox-docker-cpus-0", sbx("  type: docker\n  image: alpine\n  docker: {cpus: 0}\n"), "config.range",
  "sandbox.docker.cpus", "docker.cpus must be > 0")
R("sandbox-docker-cpus-1025", sbx("  type: docker\n  image: alpine\n  docker: {cpus: 1025}\n"), "config.range",
  "sandbox.docker.cpus", "docker.cpus above 1024")
R("sandbox-docker-cpus-negative", sbx("  type: docker\n  image: alpine\n  docker: {cpus: -1.5}\n"), "config.range",
  "sandbox.docker.cpus", "negative docker.cpus")
R("sandbox-docker-cpus-inf", sbx("  type: docker\n  image: alpine\n  docker: {cpus: .inf}\n"), "config.range",
  "sandbox.docker.cpus", "docker.cpus must be finite")
R("sandbox-docker-cpus-hex-string", sbx('  type: docker\n  image: alpine\n  docker: {cpus: "0x10"}\n'), "config.pattern",
  "sandbox.docker.cpus", "a hexadecimal string is not a decimal/scientific docker.cpus")
R("sandbox-docker-cpus-inf-string", sbx('  type: docker\n  image: alpine\n  docker: {cpus: ".inf"}\n'), "config.pattern",
  "sandbox.docker.cpus", "a non-finite string is not a decimal docker.cpus")
R("sandbox-docker-cpus-bool", sbx("  type: docker\n  image: alpine\n  docker: {cpus: true}\n"), "config.type",
  "sandbox.docker.cpus", "a boolean docker.cpus")
R("sandbox-docker-memory-zero", sbx('  type: docker\n  image: alpine\n  docker: {memory: "0"}\n'), "config.pattern",
  "sandbox.docker.memory", "docker.memory must not start with 0")
R("sandbox-docker-memory-mb", sbx("  type: docker\n  image: alpine\n  docker: {memory: 512mb}\n"), "config.pattern",
  "sandbox.docker.memory", "512mb is not a Docker size string")
R("sandbox-docker-network-bad", sbx("  type: docker\n  image: alpine\n  docker: {network: overlay}\n"), "config.enum",
  "sandbox.docker.network", "docker.network outside none|bridge")
R("sandbox-docker-read-only-int", sbx("  type: docker\n  image: alpine\n  docker: {read_only: 0}\n"), "config.type",
  "sandbox.docker.read_only", "an integer docker.read_only")

# images
for slug, ref, why in [
    ("uppercase-path", '"Alpine:3.19"', "an uppercase path component"),
    ("uppercase-nested", '"registry.example.com/Org/app"', "an uppercase nested component"),
    ("digest-short", '"alpine@sha256:%s"' % HEX[:63], "a digest of 63 hex digits"),
    ("digest-long", '"alpine@sha256:%s0"' % HEX, "a digest of 65 hex digits"),
    ("digest-uppercase", '"alpine@sha256:%s"' % HEX.upper(), "uppercase hex in the digest"),
    ("digest-sha512", '"alpine@sha512:%s"' % (HEX + HEX), "a digest algorithm other than sha256"),
    ("digest-nonhex", '"alpine@sha256:%s"' % ("g" + HEX[1:]), "a non-hex digit in the digest"),
    ("port-99999", '"localhost:99999/app"', "a registry port above 65535"),
    ("port-0", '"localhost:0/app"', "registry port 0"),
    ("empty-tag", '"alpine:"', "an empty tag"),
    ("tag-129", '"alpine:%s"' % ("T" + "t" * 128), "a tag of 129 characters"),
    ("tag-leading-dot", '"alpine:.hidden"', "a tag starting with ."),
    ("double-slash", '"registry.example.com//app"', "an empty path component"),
    ("trailing-separator", '"app-"', "a path component ending in a separator"),
    ("trailing-slash", '"alpine/"', "a trailing /"),
    ("too-long", q(_img512 + "c"), "an image reference of 513 characters"),
]:
    R("image-" + slug, img(ref), "config.image.invalid", "sandbox.image", why)
R("image-option-like", img('"-alpine"'), "config.image.option_like", "sandbox.image",
  "an image starting with - could be read as a docker option")
R("image-option-like-flag", img('"--privileged"'), "config.image.option_like", "sandbox.image",
  "an image that is a docker flag")
R("image-space", img('"alpine latest"'), "config.image.control", "sandbox.image", "whitespace in the image")
R("image-newline", img('"alpine\\nlatest"'), "config.image.control", "sandbox.image", "a newline in the image")
R("image-tab", img('"alpine:3\\t"'), "config.image.control", "sandbox.image", "a tab in the image")
R("image-nul", img('"alpine\\0x"'), "config.image.control", "sandbox.image", "a NUL in the image")
R("image-int", img("5"), "config.type", "sandbox.image", "an integer image")

# contained_execution
R("contained-version-2", CONTAINED.replace("version: 1", "version: 2"), "config.contained.version",
  "contained_execution.version", "version 2 does not exist")
R("contained-version-0", CONTAINED.replace("version: 1", "version: 0"), "config.contained.version",
  "contained_execution.version", "version 0 does not exist")
R("contained-missing-version", CONTAINED.replace("  version: 1\n", ""), "config.missing_required",
  "contained_execution.version", "version is required")
R("contained-missing-platform", CONTAINED.replace("  platform: linux-docker-engine\n", ""),
  "config.missing_required", "contained_execution.platform", "platform is required")
R("contained-platform-bad", CONTAINED.replace("linux-docker-engine", "podman"), "config.enum",
  "contained_execution.platform", "platform outside the two v1 values")
R("contained-not-map", BASE + SANDBOX + "contained_execution: [1]\n", "config.type", "contained_execution",
  "contained_execution must be a map")
R("contained-not-map-string", BASE + SANDBOX + "contained_execution: v1\n", "config.type", "contained_execution",
  "contained_execution must be a map, not a string")
for flag in ["allow_privileged", "allow_host_network", "allow_docker_socket_mount", "allow_device_exposure",
             "allow_host_namespace_sharing"]:
    R("contained-" + flag.replace("_", "-"), ce("  %s: true\n" % flag), "config.contained.forbidden",
      "contained_execution." + flag, "%s: true is refused" % flag)
R("contained-evidence-in-repo", ce("  require_evidence_outside_agent_repo: false\n"), "config.contained.forbidden",
  "contained_execution.require_evidence_outside_agent_repo", "evidence inside the agent repository is refused")
R("contained-network-host", ce("  network: host\n"), "config.contained.forbidden", "contained_execution.network",
  "host networking is refused")
R("contained-network-bogus", ce("  network: overlay\n"), "config.enum", "contained_execution.network",
  "network outside none|bridge")
R("contained-provenance-tag", ce("  image_provenance: tag-only\n"), "config.enum",
  "contained_execution.image_provenance", "tag-only provenance is not a v1 value")
R("contained-sandbox-local", BASE + "sandbox: {type: local}\n" + CE_HEAD, "config.contained.sandbox_type", "-",
  "contained_execution with a local sandbox")
R("contained-sandbox-absent", BASE + CE_HEAD, "config.contained.sandbox_type", "-",
  "contained_execution with no sandbox (type defaults to local)")
R("contained-image-tag-only", CONTAINED.replace(PINNED, "127.0.0.1:5000/agentguard-test:1"),
  "config.contained.image_not_pinned", "-", "contained_execution with a tag-only image")
R("contained-image-bare", CONTAINED.replace(PINNED, "alpine"),
  "config.contained.image_not_pinned", "-", "contained_execution with a bare image name")
R("contained-network-mismatch", CONTAINED + "  network: bridge\n", "config.contained.network_mismatch", "-",
  "sandbox.network none but contained_execution.network bridge",
  loader_only="equality across sandbox and contained_execution")
R("contained-network-mismatch-2", CONTAINED.replace("  network: none\n", "  network: bridge\n"),
  "config.contained.network_mismatch", "-", "sandbox.network bridge but contained_execution.network defaults to none",
  loader_only="equality across sandbox and contained_execution")
R("contained-cpu-0.09", ce("  cpu_limit: 0.09\n"), "config.range", "contained_execution.cpu_limit", "cpu_limit below 0.1")
R("contained-cpu-8.01", ce("  cpu_limit: 8.01\n"), "config.range", "contained_execution.cpu_limit", "cpu_limit above 8.0")
R("contained-cpu-9", ce("  cpu_limit: 9\n"), "config.range", "contained_execution.cpu_limit", "integer cpu_limit above 8")
R("contained-cpu-0", ce("  cpu_limit: 0\n"), "config.range", "contained_execution.cpu_limit", "cpu_limit 0")
R("contained-cpu-inf", ce("  cpu_limit: .inf\n"), "config.range", "contained_execution.cpu_limit",
  "an infinite cpu_limit")
R("contained-cpu-nan", ce("  cpu_limit: .nan\n"), "config.range", "contained_execution.cpu_limit", "a NaN cpu_limit",
  loader_only="NaN compares false against every bound")
R("contained-cpu-string", ce('  cpu_limit: "1.0"\n'), "config.type", "contained_execution.cpu_limit",
  "a string cpu_limit")
R("contained-cpu-bool", ce("  cpu_limit: true\n"), "config.type", "contained_execution.cpu_limit",
  "a boolean cpu_limit")
R("contained-memory-63m", ce("  memory_limit: 63m\n"), "config.range", "contained_execution.memory_limit",
  "memory_limit below 64 MiB", loader_only="byte bound of a size string")
R("contained-memory-65535k", ce("  memory_limit: 65535k\n"), "config.range", "contained_execution.memory_limit",
  "memory_limit one KiB below 64 MiB", loader_only="byte bound of a size string")
R("contained-memory-bytes-under", ce('  memory_limit: "67108863"\n'), "config.range",
  "contained_execution.memory_limit", "memory_limit one byte below 64 MiB", loader_only="byte bound of a size string")
R("contained-memory-17g", ce("  memory_limit: 17g\n"), "config.range", "contained_execution.memory_limit",
  "memory_limit above 16 GiB", loader_only="byte bound of a size string")
R("contained-memory-16385m", ce("  memory_limit: 16385m\n"), "config.range", "contained_execution.memory_limit",
  "memory_limit one MiB above 16 GiB", loader_only="byte bound of a size string")
R("contained-memory-overflow", ce("  memory_limit: 99999999999999999999g\n"), "config.range",
  "contained_execution.memory_limit", "a size that overflows 64 bits", loader_only="byte bound of a size string")
R("contained-memory-overflow-wrap", ce("  memory_limit: 18014398510006272k\n"), "config.range",
  "contained_execution.memory_limit", "(2^54 + 2^19) KiB wraps to exactly 512 MiB in 64-bit arithmetic",
  loader_only="byte bound of a size string")
R("contained-memory-0m", ce("  memory_limit: 0m\n"), "config.pattern", "contained_execution.memory_limit",
  "a size string may not start with 0")
R("contained-memory-mb", ce("  memory_limit: 512mb\n"), "config.pattern", "contained_execution.memory_limit",
  "512mb is not a Docker size string")
R("contained-memory-decimal", ce("  memory_limit: 1.5g\n"), "config.pattern", "contained_execution.memory_limit",
  "a fractional size string", loader_only=None)
R("contained-memory-space", ce('  memory_limit: "512 m"\n'), "config.pattern", "contained_execution.memory_limit",
  "a space inside a size string")
R("contained-memory-int", ce("  memory_limit: 536870912\n"), "config.type", "contained_execution.memory_limit",
  "an integer where a size string is required")
R("contained-memory-tib", ce("  memory_limit: 1t\n"), "config.pattern", "contained_execution.memory_limit",
  "t is not an allowed suffix")
R("contained-pids-15", ce("  pids_limit: 15\n"), "config.range", "contained_execution.pids_limit", "pids_limit below 16")
R("contained-pids-4097", ce("  pids_limit: 4097\n"), "config.range", "contained_execution.pids_limit",
  "pids_limit above 4096")
R("contained-pids-string", ce('  pids_limit: "256"\n'), "config.type", "contained_execution.pids_limit",
  "a string pids_limit")
R("contained-tmpfs-63k", ce("  tmpfs_size: 63k\n"), "config.range", "contained_execution.tmpfs_size",
  "tmpfs_size below 64 KiB", loader_only="byte bound of a size string")
R("contained-tmpfs-5g", ce("  tmpfs_size: 5g\n"), "config.range", "contained_execution.tmpfs_size",
  "tmpfs_size above 4 GiB", loader_only="byte bound of a size string")
R("contained-tmpfs-4194305k", ce("  tmpfs_size: 4194305k\n"), "config.range", "contained_execution.tmpfs_size",
  "tmpfs_size one KiB above 4 GiB", loader_only="byte bound of a size string")
R("contained-tmpfs-bytes-under", ce('  tmpfs_size: "65535"\n'), "config.range", "contained_execution.tmpfs_size",
  "tmpfs_size one byte below 64 KiB", loader_only="byte bound of a size string")
R("contained-tmpfs-pattern", ce("  tmpfs_size: 64kb\n"), "config.pattern", "contained_execution.tmpfs_size",
  "64kb is not a Docker size string")
R("contained-uid-0", ce("  required_uid: 0\n"), "config.range", "contained_execution.required_uid",
  "required_uid 0 (root) is refused")
R("contained-uid-big", ce("  required_uid: 2147483648\n"), "config.range", "contained_execution.required_uid",
  "required_uid above 2147483647")
R("contained-uid-negative", ce("  required_uid: -1\n"), "config.range", "contained_execution.required_uid",
  "negative required_uid")
R("contained-gid-0", ce("  required_gid: 0\n"), "config.range", "contained_execution.required_gid",
  "required_gid 0 is refused")
R("contained-uid-string", ce('  required_uid: "1000"\n'), "config.type", "contained_execution.required_uid",
  "a string required_uid")
R("contained-uid-bool", ce("  required_uid: true\n"), "config.type", "contained_execution.required_uid",
  "a boolean required_uid")

# environment allowlist
R("env-33-entries", env(*[{"name": "VAR_%02d" % i, "value": q(CAN + str(i))} for i in range(33)]),
  "config.env.too_many", "contained_execution.environment", "33 entries (bound 32)")
R("env-not-list", ce("  environment: {MODE: fast}\n"), "config.type", "contained_execution.environment",
  "environment must be a list")
R("env-entry-string", ce('  environment: ["MODE=fast"]\n'), "config.type", "contained_execution.environment[0]",
  "an environment entry must be a map")
R("env-missing-name", env({"value": q(CAN + "noname")}), "config.missing_required",
  "contained_execution.environment[0].name", "an entry without a name")
R("env-name-65", env({"name": "N" * 65, "value": "x"}), "config.env.name_length",
  "contained_execution.environment[0].name", "a name of 65 characters")
R("env-name-lowercase", env({"name": "VALID_ONE", "value": "x"}, {"name": "mode", "value": "x"}),
  "config.env.name_pattern", "contained_execution.environment[1].name", "a lowercase name")
R("env-name-mixed-case", env({"name": "My_Mode", "value": "x"}), "config.env.name_pattern",
  "contained_execution.environment[0].name", "a mixed-case name")
R("env-name-leading-digit", env({"name": "9LIVES", "value": "x"}), "config.env.name_pattern",
  "contained_execution.environment[0].name", "a name starting with a digit")
R("env-name-dash", env({"name": "MY-MODE", "value": "x"}), "config.env.name_pattern",
  "contained_execution.environment[0].name", "a dash in a name")
R("env-name-equals", env({"name": q("A=B"), "value": "x"}), "config.env.name_pattern",
  "contained_execution.environment[0].name", "an = in a name")
R("env-name-int", env({"name": "123", "value": "x"}), "config.type",
  "contained_execution.environment[0].name", "an integer name")
R("env-duplicate", env({"name": "MODE_X", "value": "a"}, {"name": "OTHER", "value": "b"},
                       {"name": "MODE_X", "value": q(CAN + "dup")}),
  "config.env.duplicate", "contained_execution.environment[2].name", "a repeated name",
  loader_only="uniqueness by one property of list items")
R("env-literal-no-value", env({"name": "MODE_X"}), "config.env.source", "-", "a literal entry without value")
R("env-literal-explicit-no-value", env({"name": "MODE_X", "source": "literal", "required": "true"}),
  "config.env.source", "-", "an explicit literal entry without value")
R("env-host-with-value", env({"name": "MODE_X", "source": "host", "value": q(CAN + "host")}), "config.env.source", "-",
  "a host entry must not carry a value")
R("env-source-bad", env({"name": "MODE_X", "source": "file", "value": "x"}), "config.enum",
  "contained_execution.environment[0].source", "source outside literal|host")
R("env-value-4097", env({"name": "BLOB", "value": q((CAN * 300)[:4097])}), "config.env.value_length",
  "contained_execution.environment[0].value", "a value of 4097 characters (made of the canary)")
R("env-value-tab", env({"name": "MODE_X", "value": q(CAN + "\tx")}), "config.env.value_control",
  "contained_execution.environment[0].value", "a tab in a value")
R("env-value-newline", env({"name": "MODE_X", "value": q(CAN + "\nx")}), "config.env.value_control",
  "contained_execution.environment[0].value", "a newline in a value")
R("env-value-cr", env({"name": "MODE_X", "value": q(CAN + "\rx")}), "config.env.value_control",
  "contained_execution.environment[0].value", "a carriage return in a value")
R("env-value-nul", env({"name": "MODE_X", "value": q(CAN + "\0x")}), "config.env.value_control",
  "contained_execution.environment[0].value", "a NUL in a value")
R("env-value-del", env({"name": "MODE_X", "value": q(CAN + "\x7fx")}), "config.env.value_control",
  "contained_execution.environment[0].value", "a DEL in a value")
R("env-value-esc", env({"name": "MODE_X", "value": q("\x1b[31m" + CAN)}), "config.env.value_control",
  "contained_execution.environment[0].value", "an ESC in a value")
R("env-value-int", env({"name": "MODE_X", "value": "5"}), "config.type",
  "contained_execution.environment[0].value", "an integer value")
R("env-required-string", env({"name": "MODE_X", "value": "x", "required": '"true"'}), "config.type",
  "contained_execution.environment[0].required", '"true" is a string, not a boolean')
R("env-sensitive-int", env({"name": "MODE_X", "value": "x", "sensitive": "1"}), "config.type",
  "contained_execution.environment[0].sensitive", "1 is not a boolean")
R("env-allow-sensitive-string", env({"name": "MODE_X", "value": "x", "allow_sensitive": '"yes"'}), "config.type",
  "contained_execution.environment[0].allow_sensitive", '"yes" is not a boolean')
for i, w in enumerate(["TOKEN", "SECRET", "PASSWORD", "PASS", "KEY", "CREDENTIAL", "AUTH", "COOKIE"]):
    R("env-sensitive-" + w.lower(), env({"name": "MY_" + w, "value": q(CAN + w.lower())}),
      "config.env.sensitive", "-", "a name containing %s needs allow_sensitive" % w)
R("env-sensitive-embedded", env({"name": "XAPIKEYX", "value": q(CAN + "emb")}), "config.env.sensitive", "-",
  "KEY anywhere inside the name")
R("env-sensitive-marked", env({"name": "PLAIN_NAME", "value": q(CAN + "m"), "sensitive": "true"}),
  "config.env.sensitive", "-", "sensitive: true without allow_sensitive")
R("env-sensitive-false-ignored", env({"name": "API_TOKEN", "value": q(CAN + "f"), "sensitive": "false"}),
  "config.env.sensitive", "-", "a secret-like name is sensitive even with sensitive: false")
R("env-sensitive-allow-false", env({"name": "API_TOKEN", "source": "host", "allow_sensitive": "false"}),
  "config.env.sensitive", "-", "allow_sensitive: false on a secret-like host entry")
R("env-total-16385",
  env(*[{"name": "BLOB_%s" % c, "value": q(c * (4090 if c == "D" else 4089))} for c in "ABCD"]),
  "config.env.total_bytes", "-", "names + '=' + values total 16385 bytes",
  loader_only="a byte total across list items")
R("env-total-twobyte",
  env({"name": "BLOB_A", "value": q("é" * 4096)}, {"name": "BLOB_B", "value": q("é" * 4096)}),
  "config.env.total_bytes", "-", "two 4096-character values of 2-byte letters: 16398 bytes",
  loader_only="a byte total across list items")

RESERVED = ("BASH_ENV BUILDKIT_HOST CDPATH COMPOSE_FILE COMPOSE_PROJECT_NAME DOCKER_CERT_PATH DOCKER_CONFIG "
            "DOCKER_CONTEXT DOCKER_HOST DOCKER_TLS DOCKER_TLS_VERIFY ENV GIT_ASKPASS GNUPGHOME GPG_AGENT_INFO HOME "
            "KUBECONFIG LANG LC_ALL LD_LIBRARY_PATH PATH PYTHONHOME PYTHONPATH REQUESTS_CA_BUNDLE SSL_CERT_DIR "
            "SSL_CERT_FILE SSH_AGENT_PID SSH_AUTH_SOCK XDG_CONFIG_HOME XDG_RUNTIME_DIR").split()
SENSITIVE_WORDS = ["TOKEN", "SECRET", "PASSWORD", "PASS", "KEY", "CREDENTIAL", "AUTH", "COOKIE"]


def is_sensitive(n):
    return any(w in n.upper() for w in SENSITIVE_WORDS)


def reserved_entry(n):
    e = {"name": n, "value": q(CAN + "r")}
    if is_sensitive(n):
        e["allow_sensitive"] = "true"  # keep the reserved name the only defect
    return e


def reject_reserved_exact(n):
    R("env-reserved-" + n.lower().replace("_", "-"), env({"name": "OK_FIRST", "value": "x"}, reserved_entry(n)),
      "config.env.reserved", "contained_execution.environment[1].name", "reserved exact name %s" % n)


for n in RESERVED:
    reject_reserved_exact(n)
for n, kind in [("DOCKER_X", "prefix DOCKER_"), ("COMPOSE_X", "prefix COMPOSE_"),
                ("DYLD_INSERT_LIBRARIES", "prefix DYLD_"), ("LD_PRELOAD", "prefix LD_"),
                ("TOOL_CONFIG", "suffix _CONFIG"), ("TOOL_CONFIG_DIR", "suffix _CONFIG_DIR"),
                ("TOOL_CONFIG_HOME", "suffix _CONFIG_HOME"), ("JAVA_HOME", "suffix _HOME"),
                ("NODE_PATH", "suffix _PATH"), ("APP_RUNTIME_DIR", "suffix _RUNTIME_DIR"),
                ("AGENT_SOCK", "suffix _SOCK"), ("AGENT_SOCKET", "suffix _SOCKET"),
                ("CERT_STORE", "suffix _STORE"), ("XDG_DATA_HOME", "suffix _HOME on an XDG name"),
                ("_PATH", "suffix _PATH as the whole name")]:
    assert n not in RESERVED
    R("env-reserved-" + n.lower().replace("_", "-").strip("-") + ("-whole" if n.startswith("_") else ""),
      env(reserved_entry(n)), "config.env.reserved", "contained_execution.environment[0].name",
      "reserved by %s" % kind)

# secret content patterns
R("secret-literal-7", BASE + 'secret_content_patterns:\n  - {id: short, contains: "1234567"}\n',
  "config.secret_pattern.literal", "secret_content_patterns[0].contains", "a literal of 7 characters")
R("secret-literal-1025", BASE + "secret_content_patterns:\n  - id: long\n    contains: %s\n" % q((CAN * 60)[:1025]),
  "config.secret_pattern.literal", "secret_content_patterns[0].contains", "a literal of 1025 characters (canary)")
R("secret-literal-multiline", BASE + "secret_content_patterns:\n  - id: ml\n    contains: %s\n" % q(CAN + "\nline2"),
  "config.secret_pattern.literal", "secret_content_patterns[0].contains", "a multi-line literal")
R("secret-literal-nul", BASE + "secret_content_patterns:\n  - id: nul\n    contains: %s\n" % q(CAN + "\0tail"),
  "config.secret_pattern.literal", "secret_content_patterns[0].contains", "a NUL in a literal")
R("secret-literal-2049-bytes", BASE + "secret_content_patterns:\n  - id: wide\n    contains: %s\n" % q("€" * 683),
  "config.secret_pattern.literal", "secret_content_patterns[0].contains",
  "683 characters of a 3-byte letter: 2049 bytes", loader_only="a UTF-8 byte bound")
R("secret-literal-int", BASE + "secret_content_patterns:\n  - {id: num, contains: 123456789}\n",
  "config.type", "secret_content_patterns[0].contains", "an integer literal")
R("secret-id-65", BASE + 'secret_content_patterns:\n  - {id: %s, contains: "%s"}\n' % ("a" * 65, CAN),
  "config.secret_pattern.id", "secret_content_patterns[0].id", "an id of 65 characters")
R("secret-id-uppercase", BASE + 'secret_content_patterns:\n  - {id: MyToken, contains: "%s"}\n' % CAN,
  "config.secret_pattern.id", "secret_content_patterns[0].id", "an uppercase id")
R("secret-id-leading-dash", BASE + 'secret_content_patterns:\n  - {id: "-tok", contains: "%s"}\n' % CAN,
  "config.secret_pattern.id", "secret_content_patterns[0].id", "an id starting with -")
R("secret-missing-id", BASE + 'secret_content_patterns:\n  - {contains: "%s"}\n' % CAN,
  "config.missing_required", "secret_content_patterns[0].id", "a pattern without id")
R("secret-missing-contains", BASE + "secret_content_patterns:\n  - {id: lonely}\n",
  "config.missing_required", "secret_content_patterns[0].contains", "a pattern without contains")
R("secret-duplicate-id", BASE + 'secret_content_patterns:\n  - {id: same, contains: "%sa"}\n'
  '  - {id: same, contains: "%sb"}\n' % (CAN, CAN),
  "config.duplicate", "secret_content_patterns[1].id", "a repeated pattern id",
  loader_only="uniqueness by one property of list items")
R("secret-duplicate-literal", BASE + 'secret_content_patterns:\n  - {id: one, contains: "%s"}\n'
  '  - {id: two, contains: "%s"}\n' % (CAN, CAN),
  "config.duplicate", "secret_content_patterns[1].contains", "a repeated literal",
  loader_only="uniqueness by one property of list items")
R("secret-total-16392",
  BASE + "secret_content_patterns:\n" + "".join(
      "  - id: p%02d\n    contains: %s\n" % (i, q(("%02d" % i) + "x" * 1022)) for i in range(16)) +
  '  - id: p16\n    contains: "%s"\n' % (CAN[:8]),
  "config.secret_pattern.total_bytes", "-", "16 x 1024 + 8 = 16392 literal bytes",
  loader_only="a byte total across list items")
R("secret-total-multibyte",
  BASE + "secret_content_patterns:\n" + "".join(
      "  - id: m%d\n    contains: %s\n" % (i, q(c * 1024)) for i, c in enumerate("éèêëàâçñ")) +
  '  - id: m8\n    contains: "%s"\n' % (CAN[:8]),
  "config.secret_pattern.total_bytes", "-", "8 x 2048 + 8 bytes", loader_only="a byte total across list items")
R("secret-33-patterns",
  BASE + "secret_content_patterns:\n" + "".join(
      "  - id: p%02d\n    contains: \"%s-%02d\"\n" % (i, CAN, i) for i in range(33)),
  "config.secret_pattern.too_many", "-", "33 custom patterns")
R("secret-5-builtins-28-patterns",
  BASE + "secret_content_builtin_detectors: [aws-access-key-id-shape, generic-api-key-assignment,"
  " github-token-shape, npm-token-shape, private-key-header]\nsecret_content_patterns:\n" + "".join(
      "  - id: p%02d\n    contains: \"literal-%02d\"\n" % (i, i) for i in range(28)),
  "config.secret_pattern.too_many", "-", "5 built-ins + 28 patterns = 33",
  loader_only="the built-ins + patterns count spans two keys")
R("secret-patterns-not-list", BASE + "secret_content_patterns: {id: a}\n", "config.type", "secret_content_patterns",
  "secret_content_patterns must be a list")

# canaries in otherwise-valid places, defect elsewhere
R("canary-prompt-bad-mode", BASE + "mode: sprint\ntask:\n  prompt: %s\n" % q(CAN + "prompt"), "config.enum", "mode",
  "a canary prompt; the defect is the mode")
R("canary-everywhere-bad-timeout",
  BASE + "command_timeout_seconds: 0\nagent_environment: {TOKEN_X: %s}\ntask: {prompt: %s}\n"
  "secret_content_patterns:\n  - {id: c1, contains: %s}\n" % (q(CAN + "1"), q(CAN + "2"), q(CAN + "3")),
  "config.range", "command_timeout_seconds", "canaries in three places; the defect is the timeout")
R("canary-env-bad-cpu",
  env({"name": "MODE_X", "value": q(CAN + "lit")}, {"name": "API_TOKEN", "value": q(CAN + "tok"),
                                                     "allow_sensitive": "true"}).replace(
      "  platform: linux-docker-engine\n", "  platform: linux-docker-engine\n  cpu_limit: 99\n"),
  "config.range", "contained_execution.cpu_limit", "canary env values; the defect is cpu_limit")

# YAML hazards
R("yaml-duplicate-top", BASE + "task_id: other-task\n", "config.yaml.duplicate_key", "-", "task_id twice",
  loader_only="PyYAML keeps the last duplicate key")
R("yaml-duplicate-nested", BASE.replace("{min: 0, max: 3}", "{min: 0, max: 3, min: 1}"),
  "config.yaml.duplicate_key", "-", "a repeated key inside a nested map", loader_only="PyYAML keeps the last duplicate key")
R("yaml-duplicate-quoted", BASE + '"mode": ci\nmode: ci\n', "config.yaml.duplicate_key", "-",
  "a quoted and a plain spelling of the same key", loader_only="PyYAML keeps the last duplicate key")
R("yaml-anchor-alias", BASE.replace("repo_template: repo", "repo_template: &r repo\nagent_name: *r"),
  "config.yaml.anchor", "-", "an anchor with an alias", loader_only="anchors/aliases")
R("yaml-anchor-only", BASE.replace("repo_template: repo", "repo_template: &r repo"), "config.yaml.anchor", "-",
  "an anchor even without an alias", loader_only="anchors")
R("yaml-billion-laughs",
  BASE + "agent_metadata:\n  a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
  "  b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n  c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
  "  d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n  e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
  "  f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n  g: [*f, *f, *f, *f, *f, *f, *f, *f, *f]\n",
  "config.yaml.anchor", "-", "an alias bomb is refused at its first anchor", loader_only="anchors/aliases")
R("yaml-tag-str", BASE + "agent_name: !!str 5\n", "config.yaml.tag", "-", "an explicit core tag",
  loader_only="explicit tags")
R("yaml-tag-custom", BASE + "agent_name: !custom x\n", "config.yaml.tag", "-", "an application tag",
  loader_only="explicit tags")
R("yaml-tag-verbatim", BASE + "agent_name: !<tag:yaml.org,2002:str> x\n", "config.yaml.tag", "-", "a verbatim tag",
  loader_only="explicit tags")
R("yaml-merge-key", BASE + "<<: {mode: ci}\n", "config.yaml.merge_key", "-", "a merge key without alias",
  loader_only="merge keys")
R("yaml-merge-key-nested", BASE.replace("{min: 0, max: 3}", "{min: 0, <<: {max: 3}}"), "config.yaml.merge_key", "-",
  "a nested merge key", loader_only="merge keys")
R("yaml-two-documents", "---\n" + BASE + "---\n" + BASE, "config.yaml.multiple_documents", "-",
  "two valid documents in one file", loader_only="multiple documents")
R("yaml-empty-second-document", BASE + "---\n", "config.yaml.multiple_documents", "-",
  "a second, empty document", loader_only="multiple documents")
R("yaml-empty", "", "config.yaml.empty", "-", "only the header comments")
R("yaml-tilde", "~\n", "config.yaml.empty", "-", "a null document")
R("yaml-null-word", "---\nnull\n...\n", "config.yaml.empty", "-", "a null document with markers")
R("yaml-top-list", "- task_id: demo-task\n- description: Demo task\n", "config.yaml.top_not_mapping", "-",
  "a top-level list")
R("yaml-top-scalar", "just a string\n", "config.yaml.top_not_mapping", "-", "a top-level scalar")
R("yaml-top-number", "42\n", "config.yaml.top_not_mapping", "-", "a top-level integer")
R("yaml-key-int", BASE + "1: x\n", "config.yaml.non_string_key", "-", "an integer key",
  loader_only="non-string keys")
R("yaml-key-bool", BASE + "true: x\n", "config.yaml.non_string_key", "-", "a boolean key",
  loader_only="non-string keys")
R("yaml-key-null", BASE + "~: x\n", "config.yaml.non_string_key", "-", "a null key", loader_only="non-string keys")
R("yaml-key-seq", BASE + "? [a]\n: b\n", "config.yaml.non_string_key", "-", "a sequence key",
  loader_only="non-string keys")
R("yaml-key-map", BASE + "? {a: b}\n: c\n", "config.yaml.non_string_key", "-", "a mapping key",
  loader_only="non-string keys")
R("yaml-key-nested-int", BASE + "agent_metadata:\n  7: seven\n", "config.yaml.non_string_key", "-",
  "an integer key in a nested map", loader_only="non-string keys")
R("yaml-depth-66", BASE + "agent_metadata:\n  deep: " + "[" * 64 + "x" + "]" * 64 + "\n",
  "config.yaml.depth", "-", "66 nested collections (top map, agent_metadata, 64 lists): deeper than 64 "
  "however the top level is counted", loader_only="nesting depth")
R("yaml-depth-100", BASE + "agent_metadata:\n  deep: " + "[" * 98 + "]" * 98 + "\n",
  "config.yaml.depth", "-", "100 nested collections", loader_only="nesting depth")
R("yaml-depth-block", BASE + "unknown_root:\n" + "".join(" " * (2 * i + 2) + "k%d:\n" % i for i in range(70)) + " " * 142 + "leaf: 1\n",
  "config.yaml.depth", "-", "72 nested block mappings under an unknown key: depth is checked before keys",
  loader_only="nesting depth")
R("yaml-scalar-65537", BASE.replace("Demo task", "d" * 65537), "config.yaml.scalar_too_long", "-",
  "a description of 65537 bytes", loader_only="scalar byte bound")
R("yaml-scalar-canary-long", BASE + "agent_metadata:\n  note: %s\n" % q(CAN * 4682), "config.yaml.scalar_too_long", "-",
  "a quoted scalar of %d bytes made of the canary" % (len(CAN) * 4682), loader_only="scalar byte bound")
R("yaml-invalid-utf8", BASE.replace("Demo task", "Demo \udcff task"), "config.yaml.syntax", "-",
  "an invalid UTF-8 byte (0xFF) in a value", loader_only="invalid UTF-8")
R("yaml-invalid-utf8-overlong", BASE.replace("Demo task", "Demo \udcc0\udcaf task"), "config.yaml.syntax", "-",
  "an overlong UTF-8 encoding (C0 AF)", loader_only="invalid UTF-8")
R("yaml-tab-indent", BASE.replace("{min: 0, max: 3}", "\n\tmin: 0\n\tmax: 3"), "config.yaml.syntax", "-",
  "tab characters used as indentation", loader_only="YAML syntax error")
R("yaml-unclosed-flow", BASE.replace("{min: 0, max: 3}", "{min: 0, max: 3"), "config.yaml.syntax", "-",
  "an unclosed flow mapping", loader_only="YAML syntax error")
R("yaml-unclosed-quote", BASE.replace("description: Demo task", 'description: "Demo task'), "config.yaml.syntax", "-",
  "an unterminated double-quoted scalar", loader_only="YAML syntax error")
R("yaml-bad-indent", BASE + "sandbox:\n  type: local\n network: none\n", "config.yaml.syntax", "-",
  "inconsistent indentation", loader_only="YAML syntax error")


# ---------------------------------------------------------------- more edges
A("image-tag-uppercase", img('"alpine:V1.0-RC_2"'), "tags may use uppercase, digits, . _ -")
A("contained-cpu-hex", ce("  cpu_limit: 0x8\n"), "a hexadecimal integer cpu_limit (8) is a number")
A("explicit-key-syntax", BASE.replace("repo_template: repo\n", "? repo_template\n: repo\n"),
  "an explicit ? key that is a plain string")
A("secret-literal-tab-and-case",
  BASE + 'secret_content_patterns:\n  - {id: a, contains: "abc\\tdefgh"}\n  - {id: b, contains: "ABCDEFGH"}\n'
  '  - {id: c, contains: "abcdefgh"}\n',
  "a tab is allowed in a literal; literals differing only in case are distinct")
A("env-duplicate-free-similar", env({"name": "MODE_A", "value": "x"}, {"name": "MODE_AA", "value": "y"},
                                    {"name": "MODE__A", "value": "z"}),
  "similar but distinct names")

R("task-id-non-ascii", BASE.replace("demo-task", "démo"), "config.pattern", "task_id", "a non-ASCII letter in task_id")
R("task-id-trailing-newline", BASE.replace("task_id: demo-task", 'task_id: "demo-task\\n"'), "config.pattern",
  "task_id", "a trailing newline in task_id (no $-matches-before-newline slip)")
R("timeout-bool", BASE + "command_timeout_seconds: true\n", "config.type", "command_timeout_seconds",
  "a boolean where an integer is required")
R("timeout-overflow", BASE + "command_timeout_seconds: 99999999999999999999\n", "config.range",
  "command_timeout_seconds", "an integer beyond 64 bits is out of range")
R("uid-overflow-wrap", ce("  required_uid: 18446744073709551617\n"), "config.range",
  "contained_execution.required_uid", "2^64 + 1 wraps to 1 in unsigned 64-bit arithmetic")
R("mode-uppercase", BASE + "mode: CI\n", "config.enum", "mode", "enum values are case-sensitive")
R("sandbox-type-uppercase", sbx("  type: Docker\n"), "config.enum", "sandbox.type", "enum values are case-sensitive")
for slug, ref, why in [
    ("digest-no-colon", '"alpine@sha256"', "a digest without algorithm separator"),
    ("trailing-at", '"alpine:1@"', "an empty digest"),
    ("leading-underscore", '"_app"', "a path component starting with _"),
    ("triple-underscore", '"a___b"', "three underscores are not a separator"),
    ("double-dot", '"a..b"', "two dots are not a separator"),
    ("empty-port", '"localhost:/app"', "an empty registry port"),
    ("port-65536", '"example.com:65536/app"', "registry port 65536"),
    ("non-ascii", '"alp\u00efne"', "a non-ASCII letter"),
    ("scheme", '"https://registry.example.com/app"', "a URL scheme"),
    ("tag-leading-dash", '"alpine:-x"', "a tag starting with -"),
]:
    R("image-" + slug, img(ref), "config.image.invalid", "sandbox.image", why)
R("image-del", img('"alpine\\x7f"'), "config.image.control", "sandbox.image", "a DEL in the image")
R("contained-cpu-negative", ce("  cpu_limit: -0.5\n"), "config.range", "contained_execution.cpu_limit",
  "a negative cpu_limit")
R("contained-pids-float", ce("  pids_limit: 256.0\n"), "config.type", "contained_execution.pids_limit",
  "256.0 is a float", loader_only="JSON Schema treats 256.0 as an integer")
R("contained-gid-big", ce("  required_gid: 2147483648\n"), "config.range", "contained_execution.required_gid",
  "required_gid above 2147483647")
R("contained-platform-case", CONTAINED.replace("linux-docker-engine", "Linux-Docker-Engine"), "config.enum",
  "contained_execution.platform", "platform values are case-sensitive")
R("contained-memory-plus", ce('  memory_limit: "+64m"\n'), "config.pattern", "contained_execution.memory_limit",
  "a sign in a size string")
R("contained-memory-trailing-space", ce('  memory_limit: "64m "\n'), "config.pattern",
  "contained_execution.memory_limit", "a trailing space in a size string")
R("contained-memory-fraction", ce("  memory_limit: 0.5g\n"), "config.pattern", "contained_execution.memory_limit",
  "a fractional size string (plain 0.5g is a string in both YAML versions)")
R("env-source-uppercase", env({"name": "MODE_X", "source": "HOST"}), "config.enum",
  "contained_execution.environment[0].source", "source values are case-sensitive")
R("env-sensitive-monkey", env({"name": "MONKEY_NAME", "value": q(CAN + "mk")}), "config.env.sensitive", "-",
  "KEY inside MONKEY makes the name secret-like")
R("env-sensitive-author", env({"name": "AUTHOR_NAME", "value": q(CAN + "au")}), "config.env.sensitive", "-",
  "AUTH inside AUTHOR makes the name secret-like")
R("env-sensitive-compass", env({"name": "COMPASS_HEADING", "value": q(CAN + "cp")}), "config.env.sensitive", "-",
  "PASS inside COMPASS makes the name secret-like")
R("env-duplicate-host", env({"name": "CI_JOB", "source": "host"}, {"name": "CI_JOB", "value": q(CAN + "d")}),
  "config.env.duplicate", "contained_execution.environment[1].name", "a host and a literal entry with one name",
  loader_only="uniqueness by one property of list items")
R("secret-pattern-not-map", BASE + 'secret_content_patterns: ["abcdefgh"]\n', "config.type",
  "secret_content_patterns[0]", "a pattern entry must be a map")
R("detectors-case", BASE + "secret_content_builtin_detectors: [Private-Key-Header]\n", "config.enum",
  "secret_content_builtin_detectors[0]", "detector names are case-sensitive")
R("detectors-string", BASE + "secret_content_builtin_detectors: private-key-header\n", "config.type",
  "secret_content_builtin_detectors", "detectors must be a list")
R("benchmark-list", BASE + "benchmark: [id]\n", "config.type", "benchmark", "benchmark must be a map")
R("benchmark-id-blank", BASE + 'benchmark: {id: "  "}\n', "config.empty_string", "benchmark.id", "a blank benchmark.id")
R("unknown-top-case", BASE + "Mode: ci\n", "config.unknown_key", "Mode", "keys are case-sensitive")
R("unknown-top-quoted-number", BASE + '"1": x\n', "config.unknown_key", "1", "a quoted number is a string key")
R("policy-list", BASE + "policy: [diff_size]\n", "config.type", "policy", "policy must be a map")
R("diff-limits-list", BASE + "diff_limits: [1, 2, 3]\n", "config.type", "diff_limits", "diff_limits must be a map")
R("command-policy-string", BASE + "command_policy: enforce\n", "config.type", "command_policy",
  "command_policy is a map {mode}, not a string")
R("yaml-anchor-on-map", BASE + "policy: &p\n  diff_size: {severity: info}\n", "config.yaml.anchor", "-",
  "an anchor on a mapping", loader_only="anchors")
R("yaml-key-float", BASE + "1.5: x\n", "config.yaml.non_string_key", "-", "a float key", loader_only="non-string keys")
R("yaml-duplicate-agent-env", BASE + "agent_environment:\n  A: %s\n  A: %s\n" % (q(CAN + "1"), q(CAN + "2")),
  "config.yaml.duplicate_key", "-", "a repeated agent_environment key (canary values)",
  loader_only="PyYAML keeps the last duplicate key")
R("yaml-duplicate-env-entry", env({"name": "MODE_X", "value": q(CAN + "a"), "name ": "MODE_Y"}).replace(
    "name : MODE_Y", "name: MODE_Y"), "config.yaml.duplicate_key", "-", "a repeated key inside an environment entry",
  loader_only="PyYAML keeps the last duplicate key")
R("yaml-raw-control-char", BASE.replace("Demo task", "Demo \x01 task"), "config.yaml.syntax", "-",
  "a raw U+0001 byte in the file", loader_only="YAML syntax error")
R("yaml-raw-nul", BASE.replace("Demo task", "Demo \x00 task"), "config.yaml.syntax", "-",
  "a raw NUL byte in the file (a C string would end here)", loader_only="YAML syntax error")

R("yaml-alias-undefined", BASE + "agent_name: *nowhere\n", "config.yaml.alias", "-",
  "an alias with no anchor: the text contains an alias, the only way to reach config.yaml.alias",
  loader_only="aliases")
R("env-name-canary", env({"name": q(CAN + "NAME"), "value": "x"}), "config.env.name_pattern",
  "contained_execution.environment[0].name", "a name failing the pattern is not echoed (canary in the name)")
R("unknown-key-value-canary", BASE + "agent_environment_typo: %s\n" % q(CAN + "typo"), "config.unknown_key",
  "agent_environment_typo", "the value under an unknown key is not echoed")

# ---------------------------------------------------------------- workspace (issue 14)
A("workspace-include-ignored", BASE + "workspace: {include_ignored: true}\n",
  "workspace.include_ignored true copies git-ignored files too")
A("workspace-exclude", BASE + "workspace:\n  include_ignored: false\n  exclude: [node_modules, '*.log', 'dist/**']\n",
  "workspace.exclude takes path patterns")
A("workspace-null-values", BASE + "workspace:\n  include_ignored:\n  exclude: ~\n",
  "workspace keys may be null (defaults)")
A("workspace-null", BASE + "workspace: ~\n", "workspace may be null")
R("workspace-unknown-key", BASE + "workspace: {include_ignore: true}\n", "config.unknown_key",
  "workspace.include_ignore", "an unknown key in workspace")
R("workspace-include-ignored-string", BASE + "workspace: {include_ignored: yes}\n", "config.type",
  "workspace.include_ignored", "include_ignored is a boolean (yes is a string in YAML 1.2)")
R("workspace-exclude-not-list", BASE + "workspace: {exclude: node_modules}\n", "config.type",
  "workspace.exclude", "exclude is a list")
R("workspace-exclude-empty-item", BASE + "workspace: {exclude: ['']}\n", "config.empty_string",
  "workspace.exclude[0]", "an exclude pattern is not empty")
R("workspace-not-map", BASE + "workspace: [a]\n", "config.type", "workspace", "workspace is a map")

rejects = [r for r in rejects if r is not None]

# ---------------------------------------------------------------- issue 9: names and values
# Appended last so earlier documents keep their numbers.
ISSUE9_RESERVED = ("AWS_CA_BUNDLE CARGO_HTTP_CAINFO CURL_CA_BUNDLE DBUS_SESSION_BUS_ADDRESS DBUS_SYSTEM_BUS_ADDRESS "
                   "GIT_PROXY_COMMAND GIT_SSH GIT_SSH_COMMAND GIT_SSL_CAINFO GIT_SSL_CAPATH NODE_EXTRA_CA_CERTS "
                   "NPM_CONFIG_CAFILE PIP_CERT TMUX TMUX_PANE").split()
for n in ISSUE9_RESERVED:
    reject_reserved_exact(n)
for n, kind in [("GIT_CONFIG_COUNT", "prefix GIT_CONFIG_"), ("GIT_CONFIG_KEY_0", "prefix GIT_CONFIG_"),
                ("GIT_CONFIG_PARAMETERS", "prefix GIT_CONFIG_"), ("GIT_CONFIG", "suffix _CONFIG (git's own)")]:
    R("env-reserved-" + n.lower().replace("_", "-"), env(reserved_entry(n)), "config.env.reserved",
      "contained_execution.environment[0].name", "reserved by %s" % kind)
R("env-value-c1-csi", env({"name": "MODE_X", "value": q(CAN + "\u009b31m")}), "config.env.value_control",
  "contained_execution.environment[0].value", "a C1 control (U+009B CSI) in a value")
R("env-value-c1-nel", env({"name": "MODE_X", "value": q(CAN + "\u0085x")}), "config.env.value_control",
  "contained_execution.environment[0].value", "a C1 control (U+0085 NEL) in a value")
R("env-value-c1-osc", env({"name": "MODE_X", "value": q("\u009d8;;x" + CAN)}), "config.env.value_control",
  "contained_execution.environment[0].value", "a C1 control (U+009D OSC) in a value")
R("env-value-line-separator", env({"name": "MODE_X", "value": q(CAN + "\u2028x")}), "config.env.value_control",
  "contained_execution.environment[0].value", "a line separator (U+2028) in a value")
R("env-value-paragraph-separator", env({"name": "MODE_X", "value": q(CAN + "\u2029x")}),
  "config.env.value_control", "contained_execution.environment[0].value",
  "a paragraph separator (U+2029) in a value")
A("env-near-miss-issue9",
  env(*[{"name": n, "value": "x"} for n in ["GIT_CONFIGURED", "TMUX_MODE", "CURL_CA", "NODE_EXTRA",
                                             "DBUS_SESSION", "GIT_SSH_USER", "GIT_COMMITTER_NAME"]]),
  "look-alikes of the issue-9 reserved names (GIT_CONFIG_ needs the underscore; TMUX is exact)")
A("env-value-unicode-ok",
  env({"name": "MODE_X", "value": q("caf\u00e9 \u00a0nbsp \u20ac \U0001F600")}),
  "printable non-ASCII (U+00A0 and above, not U+2028/U+2029) is accepted")

# ---------------------------------------------------------------- workspace.git (issue 20)
A("workspace-git-none", BASE + "workspace: {git: none}\n", "workspace.git none: no repository in the copy")
A("workspace-git-baseline", BASE + "workspace:\n  git: baseline\n  include_ignored: false\n",
  "workspace.git baseline is the default, said explicitly")
A("workspace-git-null", BASE + "workspace: {git: ~}\n", "workspace.git may be null (baseline)")
R("workspace-git-bad", BASE + "workspace: {git: full}\n", "config.enum", "workspace.git",
  "workspace.git is baseline or none")
R("workspace-git-bool", BASE + "workspace: {git: false}\n", "config.type", "workspace.git",
  "workspace.git is a word, not a boolean")

# study_egress (issue 20): the study's options in the config, each checked by key.
GWREF = "127.0.0.1:5000/agentguard-gateway@sha256:" + "a" * 64
A("study-egress-full", BASE + "study_egress:\n  policy: egress-policy.json\n  gateway_image: '" + GWREF +
  "'\n  resolver: 203.0.113.53\n  study_subnet: 10.254.8.0/26\n  outbound_internal: true\n",
  "study_egress with every key but outbound_network")
A("study-egress-outbound", BASE + "study_egress: {outbound_network: my-egress, resolver: '2001:db8::53'}\n",
  "study_egress naming an existing outbound network and an IPv6 resolver")
A("study-egress-null", BASE + "study_egress: ~\n", "study_egress may be null")
R("study-egress-unknown-key", BASE + "study_egress: {trial_id: t1}\n", "config.unknown_key", "study_egress.trial_id",
  "the trial id is not a config key: every run is its own trial")
R("study-egress-tag-image", BASE + "study_egress: {gateway_image: 'agentguard-gateway:latest'}\n",
  "config.study_egress.gateway_image", "study_egress.gateway_image", "the gateway image must be pinned by digest")
R("study-egress-resolver-name", BASE + "study_egress: {resolver: dns.example}\n",
  "config.study_egress.resolver", "study_egress.resolver", "the resolver is an address, not a name",
  loader_only="an IPv4 or IPv6 address is checked by the loader's parser")
R("study-egress-subnet-prefix", BASE + "study_egress: {study_subnet: 10.254.0.0/30}\n",
  "config.study_egress.study_subnet", "study_egress.study_subnet", "the study subnet is /16../28")
R("study-egress-internal-with-outbound", BASE + "study_egress: {outbound_network: n, outbound_internal: true}\n",
  "config.study_egress.outbound_internal", "study_egress.outbound_internal",
  "outbound_internal is for AgentGuard's own outbound network only",
  loader_only="a rule across two keys")
A("study-egress-pool", BASE + "study_egress: {subnet_pool: 198.51.100.64/26}\n",
  "study_egress.subnet_pool: a /26 pool (a /27 pair is chosen from it)")
R("study-egress-pool-small", BASE + "study_egress: {subnet_pool: 198.51.100.64/28}\n",
  "config.study_egress.subnet_pool", "study_egress.subnet_pool", "a pool is /8../27")
R("study-egress-policy-number", BASE + "study_egress: {policy: 7}\n", "config.type", "study_egress.policy",
  "the policy is a path string")

# contained_execution.runtime (issue 24)
A("contained-runtime-gvisor", ce("  runtime: gvisor\n"),
  "runtime: gvisor with the pids headroom its sandbox needs; runtime_name defaults to runsc")
A("contained-runtime-gvisor-named", ce("  runtime: gvisor\n  runtime_name: runsc-kvm\n  pids_limit: 512\n"),
  "runtime_name names the engine's gVisor runtime")
A("contained-runtime-runc", ce("  runtime: runc\n"), "runc is the default, said out loud")
R("contained-runtime-unknown", ce("  runtime: kata\n"), "config.enum", "contained_execution.runtime",
  "runc or gvisor only")
R("contained-runtime-name-without-gvisor", ce("  runtime_name: runsc\n"), "config.contained.runtime_name",
  "contained_execution.runtime_name", "runtime_name only with runtime: gvisor",
  loader_only="a cross-key rule (runtime_name needs runtime: gvisor)")
R("contained-runtime-name-bad", ce("  runtime: gvisor\n  runtime_name: Run_SC\n  pids_limit: 256\n"),
  "config.contained.runtime_name", "contained_execution.runtime_name", "an engine runtime name is lowercase")
R("contained-runtime-gvisor-pids", ce("  runtime: gvisor\n  pids_limit: 128\n"), "config.contained.runtime_pids",
  "contained_execution.pids_limit", "gVisor's sandbox counts against the pids limit: at least 256",
  loader_only="a cross-key rule (pids_limit >= 256 with runtime: gvisor)")

# ---------------------------------------------------------------- credential injection (issue 21)
# The agent's CA variables a study run with inject sets; a config cannot.
reject_reserved_exact("CODEX_CA_CERTIFICATE")


# ---------------------------------------------------------------- write
def header(expect, loader_only, why):
    h = "# expect: %s\n" % expect
    if loader_only:
        h += "# schema: loader-only: %s\n" % loader_only
    if why:
        h += "# why: %s\n" % why
    return h


def write_bytes(path, data):
    with open(path, "wb") as f:
        f.write(data)


def main():
    for d in ("accept", "reject"):
        full = os.path.join(HERE, d)
        os.makedirs(full, exist_ok=True)
        for name in os.listdir(full):
            if name.endswith(".yaml"):
                os.unlink(os.path.join(full, name))
    seen = set()
    for d, items in (("accept", accepts), ("reject", rejects)):
        for n, (slug, body, why, lo, reason, key) in enumerate(items, 1):
            assert slug not in seen, slug
            seen.add(slug)
            assert "\n" not in why
            expect = "accept" if reason is None else "reject %s %s" % (reason, key)
            text = header(expect, lo, why)
            if body.startswith("\r\n") or "\r\n" in body:
                text = text.replace("\n", "\r\n")
            text += body
            data = text.encode("utf-8", "surrogateescape")
            assert len(data) < 200 * 1024, slug
            write_bytes(os.path.join(HERE, d, "%03d-%s.yaml" % (n, slug)), data)
    # prompt files
    ap = os.path.join(HERE, "accept", "prompts")
    os.makedirs(os.path.join(ap, "nested"), exist_ok=True)
    write_bytes(os.path.join(ap, "ok.md"), b"Fix the failing test without touching the tests.\n")
    write_bytes(os.path.join(ap, "nested", "deep.md"), b"A prompt in a subdirectory.\n")
    write_bytes(os.path.join(ap, "exact-64k.md"), (b"p" * 65535) + b"\n")
    rp = os.path.join(HERE, "reject", "prompts")
    os.makedirs(rp, exist_ok=True)
    write_bytes(os.path.join(rp, "ok.md"), b"A prompt next to the reject documents.\n")
    write_bytes(os.path.join(rp, "too-large.md"), (b"p" * 65536) + b"\n")
    lo = sum(1 for x in accepts + rejects if x[3])
    print("accept %d, reject %d, loader-only %d, total %d" % (len(accepts), len(rejects), lo,
                                                             len(accepts) + len(rejects)))


if __name__ == "__main__":
    sys.exit(main())
