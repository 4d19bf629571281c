# bash completion for agentguard(1). Installed by `make install` as
# PREFIX/share/bash-completion/completions/agentguard.
# Completes commands, options and their values; files for CONFIG, RUN_DIR
# and DIR arguments. Nothing after a literal `--` (the agent's argv) is
# completed as an agentguard option.

_agentguard()
{
	local cur prev cmd i
	COMPREPLY=()
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	local commands="contained-run cleanup evidence patch report preflight render validate schema init study-egress runtime-image help"

	if [ "$COMP_CWORD" -eq 1 ]; then
		mapfile -t COMPREPLY < <(compgen -W "$commands --version --help" -- "$cur")
		return 0
	fi
	cmd=${COMP_WORDS[1]}
	for ((i = 2; i < COMP_CWORD; i++)); do
		# the agent's argv: complete plain files only
		if [ "${COMP_WORDS[i]}" = "--" ]; then
			mapfile -t COMPREPLY < <(compgen -f -- "$cur")
			return 0
		fi
	done

	case "$prev" in
	--format)
		mapfile -t COMPREPLY < <(compgen -W "text md html json sarif junit" -- "$cur")
		return 0
		;;
	--mode)
		mapfile -t COMPREPLY < <(compgen -W "run create" -- "$cur")
		return 0
		;;
	--preset)
		mapfile -t COMPREPLY < <(compgen -W "untrusted-agent codex claude-code" -- "$cur")
		return 0
		;;
	--repo | --runs-root | --workspace)
		mapfile -t COMPREPLY < <(compgen -d -- "$cur")
		return 0
		;;
	--docker-socket | --signing-key | --public-key)
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		return 0
		;;
	--timeout | --probe-age | --probe-label | --name | --label)
		return 0
		;;
	esac

	local opts=""
	case "$cmd" in
	contained-run) opts="--repo --runs-root --timeout --allow-fail-result --json --quiet --docker-socket --signing-key --help --" ;;
	cleanup) opts="--runs-root --probe-age --probe-label --docker-socket --signing-key --json --help" ;;
	evidence)
		if [ "$COMP_CWORD" -eq 2 ]; then
			mapfile -t COMPREPLY < <(compgen -W "verify keygen public-key" -- "$cur")
			return 0
		fi
		opts="--public-key --standalone --signing-key --json --help"
		;;
	study-egress)
		if [ "$COMP_CWORD" -eq 2 ]; then
			mapfile -t COMPREPLY < <(compgen -W "run policy decide manifest plan schema" -- "$cur")
			return 0
		fi
		opts="--policy --trial-id --gateway-image --gateway-dns --resolver --study-subnet --outbound-network --outbound-internal --json --help --"
		if [ "${COMP_WORDS[2]}" = run ]; then
			opts="$opts --repo --runs-root --timeout --allow-fail-result --quiet --docker-socket --signing-key"
		fi
		;;
	runtime-image)
		if [ "$COMP_CWORD" -eq 2 ]; then
			mapfile -t COMPREPLY < <(compgen -W "identity verify-inputs freeze validate vuln-policy rootfs-digest context-digest" -- "$cur")
			return 0
		fi
		opts="--role --json --docker-socket --source-commit --output --exceptions --help"
		;;
	patch) opts="--raw --public-key --help" ;;
	report) opts="--format --list --runs-root --json --public-key --help" ;;
	preflight) opts="--json --docker-socket --help" ;;
	render) opts="--workspace --name --label --mode --format --json --help --" ;;
	validate) opts="--json --help" ;;
	init) opts="--preset --image --gateway-image --docker-socket --force --dry-run --help" ;;
	schema) opts="--help" ;;
	help)
		mapfile -t COMPREPLY < <(compgen -W "$commands" -- "$cur")
		return 0
		;;
	esac
	if [[ "$cur" == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
	else
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
	fi
	return 0
}
complete -o filenames -F _agentguard agentguard
