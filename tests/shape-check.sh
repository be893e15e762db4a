#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The daemon's shape, checked: no file in daemon/ over 500 lines, no function
# over 80 lines, no include from daemon/core or daemon/sys up into daemon/.
#
#   tests/shape-check.sh SOURCE_ROOT
#
# Functions are found the way kernel style writes them: the body opens with
# "{" alone at column 0 and closes with "}" at column 0.
set -u
root=${1:?usage: shape-check.sh SOURCE_ROOT}
cd "$root/daemon" || exit 2
fail=0

while read -r n f; do
	[ "$f" = total ] && continue
	if [ "$n" -gt 500 ]; then
		echo "daemon/$f: $n lines (at most 500)"
		fail=1
	fi
done < <(find . -name '*.[ch]' -exec wc -l {} + | sed 's|\./||')

for f in $(find . -name '*.c' | sed 's|\./||' | sort); do
	awk -v f="daemon/$f" '
		/^\{/ { start = NR; name = prev; next }
		/^\}/ && start { n = NR - start - 1
			if (n > 80) { printf "%s:%d: %s: %d lines (at most 80)\n", f, start, name, n; bad = 1 }
			start = 0 }
		{ prev = $0 }
		END { exit bad }' "$f" || fail=1
done

# core/ and sys/ are below the daemon: they include each other's headers
# and their own, never one of daemon/.
upper=$(find . -maxdepth 1 -name '*.h' -printf '%f\n')
for f in $(find core sys -name '*.[ch]' | sort); do
	for h in $upper; do
		if grep -qE "^#include \"(\.\./)*$h\"" "$f"; then
			# A header of the same name may exist below (core/x.h).
			dir=$(dirname "$f")
			[ -e "$dir/$h" ] && continue
			echo "daemon/$f includes daemon/$h (a layer up)"
			fail=1
		fi
	done
done

[ $fail -eq 0 ] && echo "daemon/ shape OK"
exit $fail
