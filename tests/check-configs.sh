#!/bin/bash
# `tierd --check-config` through the real binary.  Every shipped config
# passes --offline, and against a fixture machine it is written for;
# tierd.yaml passes against this machine.  A bad file fails with exactly its
# FILE:LINE:COLUMN: KEY: reason lines and exit status 1; a file that names
# what the machine lacks fails the same way (nodes, group) or passes with
# warnings (cgroups), and passes --offline.
#   check-configs.sh TIERD CONFIGS_DIR FIXTURES_DIR
set -u
tierd=$(realpath "$1") configs=$(realpath "$2") fixtures=$(realpath "$3")
T=$(mktemp -d /tmp/check-configs.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail=0
offline_ok="configuration OK (offline: not checked against this machine)"

# expect RC WANT WHAT COMMAND...: exit status RC, stdout and stderr exactly WANT.
expect() {
	local rc=$1 want=$2 what=$3 out got
	shift 3
	out=$("$@" 2>&1)
	got=$?
	if [ $got -ne "$rc" ] || [ "$out" != "$want" ]; then
		echo "FAIL: $what: exit $got (want $rc), got:"
		echo "$out"
		echo "want:"
		echo "$want"
		fail=1
	else
		echo "ok   $what"
	fi
}

# machine NAME TOPOLOGY CGROUP...: a root for --root, a fixture topology
# and a cgroup2 tree holding these cgroups.
machine() {
	local root=$T/$1 cg
	cp -r "$fixtures/topology/$2" "$root"
	mkdir -p "$root/sys/fs/cgroup"
	touch "$root/sys/fs/cgroup/cgroup.controllers"
	shift 2
	for cg in "$@"; do mkdir -p "$root/sys/fs/cgroup$cg"; done
}
machine dram-cxl dram-cxl /system.slice/postgresql.service /train.slice /db.slice /tenants.slice
machine grace-hopper grace-hopper /system.slice/training.service

for f in "$configs"/*.yaml; do
	expect 0 "$offline_ok" "--offline $(basename "$f")" "$tierd" --check-config --offline "$f"
done
expect 0 "configuration OK" "tierd.yaml against this machine" "$tierd" --check-config "$configs/tierd.yaml"
expect 0 "configuration OK" "cxl-promotion.yaml on a DRAM + CXL machine" \
	"$tierd" --check-config --root "$T/dram-cxl" "$configs/cxl-promotion.yaml"
expect 0 "configuration OK" "gpu-coherent.yaml on a Grace Hopper machine" \
	"$tierd" --check-config --root "$T/grace-hopper" "$configs/gpu-coherent.yaml"

# -n FILE and --config FILE -n are the same check.
expect 0 "configuration OK" "-n --config" "$tierd" -n --config "$configs/tierd.yaml"

cd "$fixtures/conf/bad" || exit 1
expect 1 "$(cat range.expected)" "bad config refused with its exact messages" \
	"$tierd" --check-config range.yaml
expect 1 "$(cat cgroup-paths.expected)" "cgroup paths with '..', '.' or '//' refused" \
	"$tierd" --check-config --offline cgroup-paths.yaml

# Against the DRAM + CXL machine: fixtures/conf/machine/NAME.yaml says
# NAME.expected; it passes when that ends with "configuration OK".
cd "$fixtures/conf/machine" || exit 1
for f in *.yaml; do
	want=$(cat "${f%.yaml}.expected")
	rc=1
	[ "${want##*$'\n'}" = "configuration OK" ] && rc=0
	expect $rc "$want" "$f against the DRAM + CXL machine" \
		"$tierd" --check-config --root "$T/dram-cxl" "$f"
	expect 0 "$offline_ok" "$f --offline" "$tierd" --check-config --offline --root "$T/dram-cxl" "$f"
done

expect 1 "Failed to read the NUMA topology under $T/none: No such file or directory (--offline checks the file alone)" \
	"a machine without a topology" "$tierd" --check-config --root "$T/none" "$configs/tierd.yaml"
offline_alone() {
	local out rc
	out=$("$tierd" --offline 2>&1)
	rc=$?
	echo "${out%%$'\n'*}"
	return $rc
}
expect 2 "tierd: --offline goes with --check-config" "--offline alone" offline_alone
expect 1 "/nonexistent.yaml: No such file or directory" "missing file" \
	"$tierd" --check-config /nonexistent.yaml
expect 1 "$fixtures/conf: Is a directory" "a directory" "$tierd" --check-config "$fixtures/conf"
# An empty file is a valid policy.
: >"$T/empty.yaml"
expect 0 "configuration OK" "empty file" "$tierd" --check-config "$T/empty.yaml"
exit $fail
