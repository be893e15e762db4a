#!/bin/bash
# Build the libFuzzer targets with clang, ASan and UBSan in a build directory
# of their own, and run each for a bounded time.  Fails when a target
# crashes, leaks, trips UBSan, times out on one input, or cannot be built.
#   run-fuzz.sh SOURCE_DIR FUZZ_BUILD_DIR [TARGET...]   (default: conf ctl)
# TIERD_FUZZ_SECONDS: seconds per target (default 30).  A smoke run on every
# CI, not a campaign: the corpora and regress inputs are also replayed by the
# unit suite.  In a 60 s CI run on 2 cores, fuzz_conf (~6,000 runs/s) found
# its last new edge (cov 975) at run 160,000 (~25 s) and had 94% of its
# 60 s features (ft 4110 of 4366) by 30 s; fuzz_ctl (~35,000 runs/s) found
# nothing past its seeds (cov 159) in 2.1 million runs.
# A crash leaves its input in FUZZ_BUILD_DIR/artifacts/; to keep it as a
# regression fixture, copy it to tests/fuzz/regress/TARGET/ and fix the bug.
set -u
src=$(realpath "$1") dir=$2
shift 2
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(conf ctl)
secs=${TIERD_FUZZ_SECONDS:-30}

command -v clang >/dev/null || { echo "run-fuzz: clang not installed (scripts/install-deps)"; exit 1; }
if [ ! -f "$dir/build.ninja" ]; then
	CC=clang nice meson setup "$dir" "$src" -Dfuzz=true \
		-Db_sanitize=address,undefined -Db_lundef=false >"$dir.setup.log" 2>&1 ||
		{ cat "$dir.setup.log"; echo "run-fuzz: meson setup failed"; exit 1; }
fi
nice meson compile -C "$dir" "${targets[@]/#/tests/fuzz/fuzz_}" >"$dir/compile.log" 2>&1 ||
	{ cat "$dir/compile.log"; echo "run-fuzz: build failed"; exit 1; }

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
mkdir -p "$dir/artifacts"
# One target: fuzz it, then write its verdict to $dir/result-$t (0 or 1)
# and its report to $dir/report-$t.
fuzz_one() {
	local t=$1 work log seeds rc execs cov
	work=$(mktemp -d "$dir/corpus-$t.XXXXXX")
	log=$dir/fuzz-$t.log
	seeds=("$src/tests/fuzz/corpus/$t")
	[ -d "$src/tests/fuzz/regress/$t" ] && seeds+=("$src/tests/fuzz/regress/$t")
	# New inputs go to $work, never into the checked-in corpus.
	"$dir/tests/fuzz/fuzz_$t" -max_total_time="$secs" -timeout=10 \
		-rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$dir/artifacts/$t-" "$work" "${seeds[@]}" >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	cov=$(grep -Eo 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1)
	if [ $rc -ne 0 ] || grep -q 'runtime error:' "$log"; then
		{
			echo "FAIL: fuzz_$t (exit $rc) after ${execs:-?} runs:"
			grep -E -A30 '^==[0-9]+==ERROR|runtime error:|deadly signal|Test unit written' "$log" | head -80
			for a in "$dir/artifacts/$t-"*; do
				[ -f "$a" ] && echo "input $a (base64): $(base64 -w0 "$a" | head -c 2000)"
			done
		} >"$dir/report-$t"
		echo 1 >"$dir/result-$t"
	else
		echo "ok   fuzz_$t: ${secs} s, ${execs:-?} runs, $cov, $(ls "$work" | wc -l) new inputs, no crash" >"$dir/report-$t"
		echo 0 >"$dir/result-$t"
	fi
	rm -rf "$work"
}

# Each libFuzzer process runs on one CPU: run as many targets at once as
# there are CPUs (the suite is not parallel with other tests), so that two
# targets on two cores take the wall time of one, with the same runs each.
jobs_max=$(nproc)
for t in "${targets[@]}"; do
	rm -f "$dir/result-$t" "$dir/report-$t"
	while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n; done
	fuzz_one "$t" &
done
wait
fail=0
for t in "${targets[@]}"; do
	cat "$dir/report-$t" 2>/dev/null || echo "FAIL: fuzz_$t left no report"
	[ "$(cat "$dir/result-$t" 2>/dev/null)" = 0 ] || fail=1
done
exit $fail
