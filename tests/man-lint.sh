#!/bin/sh
# Every man page as installed (after meson's @...@ substitution) through
# mandoc's linter: any message, down to style, fails.
#   man-lint.sh PAGE...
command -v mandoc >/dev/null || { echo "mandoc missing: scripts/install-deps --build"; exit 1; }
fail=0
for page in "$@"; do
	out=$(mandoc -T lint -W style "$page" 2>&1)
	if [ -n "$out" ]; then
		echo "$out"
		fail=1
	else
		echo "ok   $(basename "$page")"
	fi
done
exit $fail
