#!/bin/bash
# Every shipped config passes `tierd --check-config`; a bad one fails with
# exactly its FILE:LINE:COLUMN: KEY: reason lines and exit status 1.
#   check-configs.sh TIERD CONFIGS_DIR FIXTURES_DIR
set -u
tierd=$(realpath "$1") configs=$2 fixtures=$3
fail=0

for f in "$configs"/*.yaml; do
	out=$("$tierd" --check-config "$f" 2>&1)
	rc=$?
	if [ $rc -ne 0 ] || [ "$out" != "configuration OK" ]; then
		echo "FAIL: $f: exit $rc: $out"
		fail=1
	else
		echo "ok   $f"
	fi
done

# -n FILE and --config FILE -n are the same check.
out=$("$tierd" -n --config "$configs/tierd.yaml" 2>&1) || { echo "FAIL: -n --config: $out"; fail=1; }

bad=$fixtures/conf/bad/range.yaml
out=$(cd "$(dirname "$bad")" && "$tierd" --check-config range.yaml 2>&1 >/dev/null)
rc=$?
want=$(cat "$fixtures/conf/bad/range.expected")
if [ $rc -ne 1 ] || [ "$out" != "$want" ]; then
	echo "FAIL: range.yaml: exit $rc, got:"; echo "$out"; echo "want:"; echo "$want"
	fail=1
else
	echo "ok   bad config refused with its exact messages"
fi

out=$("$tierd" --check-config /nonexistent.yaml 2>&1)
if [ $? -ne 1 ] || [ "$out" != "/nonexistent.yaml: No such file or directory" ]; then
	echo "FAIL: missing file: $out"
	fail=1
fi
out=$("$tierd" --check-config "$fixtures/conf" 2>&1)
if [ $? -ne 1 ] || [ "$out" != "$fixtures/conf: Is a directory" ]; then
	echo "FAIL: a directory: $out"
	fail=1
fi
# An empty file is a valid policy.
empty=$(mktemp)
out=$("$tierd" --check-config "$empty" 2>&1) || { echo "FAIL: empty file: $out"; fail=1; }
rm -f "$empty"
exit $fail
