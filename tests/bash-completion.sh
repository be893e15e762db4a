#!/bin/bash
# tierctl's bash completion, driven as bash-completion drives it: the
# commands, the options, dry-run's argument, and nothing after a command.
#   bash-completion.sh COMPLETION_FILE
[ -r /usr/share/bash-completion/bash_completion ] ||
	{ echo "bash-completion missing: scripts/install-deps --build"; exit 1; }
. /usr/share/bash-completion/bash_completion
# shellcheck source=/dev/null
. "$1"
fail=0

expect() { # LINE EXPECTED
	local line=$1 want=$2 got
	COMP_LINE=$line COMP_POINT=${#line}
	read -ra COMP_WORDS <<<"$line"
	[[ $line == *" " ]] && COMP_WORDS+=("")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	_tierctl tierctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
	got="${COMPREPLY[*]}"
	if [ "$got" = "$want" ]; then
		echo "ok   '$line' -> '$got'"
	else
		echo "FAIL: '$line' -> '$got', expected '$want'"
		fail=1
	fi
}

expect "tierctl " "status nodes cgroups metrics reload dry-run"
expect "tierctl st" "status"
expect "tierctl --" "--json --runtime-dir --version --help"
expect "tierctl --json dry-run " "on off"
expect "tierctl dry-run o" "on off"
expect "tierctl --runtime-dir /run/x n" "nodes"
expect "tierctl status " ""
expect "tierctl dry-run on " ""
exit $fail
