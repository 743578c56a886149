#!/usr/bin/env bash
# Build vmalock three ways and run the test suites; print `N passed, N failed` last.
#
#   build/       debugoptimized, -Werror: suites unit, cli, diff, stress, fuzz, big,
#                then system (THP modes, restore after a kill) on its own
#   build-asan/  AddressSanitizer + UndefinedBehaviorSanitizer: unit, stress
#   build-tsan/  ThreadSanitizer: stress
#   build-fi/    fault injection (the N-th allocation fails) + ASan/UBSan: unit
#   build-fuzz/  clang-14, libFuzzer + ASan/UBSan: libfuzzer (the parser
#                fuzzers, a few seconds each; skipped without clang-14)
#
# VML_TEST_QUICK=1 skips the sanitizer builds (for a fast local loop).
set -u
cd "$(dirname "$0")/.."
top=$(pwd)

summary_file="$top/build/test-summary.txt"
failure_log=$(mktemp)
trap 'rm -f "$failure_log"' EXIT
passed=0
failed=0
failed_names=()

# meson test writes one JSON object a test to testlog.json; count results.
count_results() {
	local dir=$1 label=$2 log="$1/meson-logs/testlog.json"
	[ -f "$log" ] || return 0
	local p f names out
	# "PASSED FAILED", then the failed tests' names, one a line; their
	# output's last lines go to $failure_log
	out=$(python3 - "$log" "$failure_log" "$label" <<'PY'
import json, sys
p = f = 0
names = []
with open(sys.argv[2], "a") as log:
    for line in open(sys.argv[1]):
        line = line.strip()
        if not line:
            continue
        r = json.loads(line)
        if r.get("result") in ("OK", "EXPECTEDFAIL", "SKIP"):
            p += 1
            continue
        f += 1
        names.append(r.get("name"))
        out = ((r.get("stdout") or "") + (r.get("stderr") or "")).splitlines()
        # A TAP test's failing checks first, each with the comment lines after
        # it (its diagnostics), wherever they are in a long output.
        notok = []
        for i, l in enumerate(out):
            if l.startswith("not ok"):
                notok.append(l)
                for c in out[i + 1:i + 60]:
                    if not c.startswith("#"):
                        break
                    notok.append(c)
        if notok:
            log.write("---- %s:%s (%s), its failing checks:\n"
                      % (sys.argv[3], r.get("name"), r.get("result")))
            log.write("".join(l + "\n" for l in notok[:120]))
        log.write("---- %s:%s (%s), the last %d of %d lines:\n"
                  % (sys.argv[3], r.get("name"), r.get("result"), min(len(out), 30), len(out)))
        log.write("".join(l + "\n" for l in out[-30:]))
print(p, f)
for n in names:
    print(n)
PY
)
	{ read -r p f; names=$(cat); } <<<"$out"
	passed=$((passed + p))
	failed=$((failed + f))
	while IFS= read -r n; do
		[ -n "$n" ] && failed_names+=("$label:$n")
	done <<<"$names"
}

# setup_and_build DIR [meson options...]; a failed build counts as one failure.
setup_and_build() {
	local dir=$1; shift
	if [ ! -f "$dir/build.ninja" ]; then
		meson setup "$dir" -Dwerror=true "$@" >/dev/null || return 1
	fi
	ninja -C "$dir" >"$dir.buildlog" 2>&1 || { tail -n 40 "$dir.buildlog"; return 1; }
}

run_suites() {
	local dir=$1 label=$2; shift 2
	local args=()
	for s in "$@"; do args+=(--suite "$s"); done
	rm -f "$dir/meson-logs/testlog.json"
	echo "== $label: ${*}" >&2
	meson test -C "$dir" --print-errorlogs --num-processes 2 "${args[@]}" 2>&1 | \
		grep -E '^ *[0-9]+/[0-9]+ |^(Ok|Fail|Timeout|Skipped|Expected)' || true
	count_results "$dir" "$label"
}

suites_present() {
	# keep only the suites that have tests in this build
	local dir=$1; shift
	meson introspect --tests "$dir" | python3 -c '
import json, sys
have = {s.split(":")[-1] for t in json.load(sys.stdin) for s in t["suite"]}
for s in sys.argv[1:]:
    if s in have:
        print(s)' "$@"
}

build_or_fail() {
	if ! setup_and_build "$@"; then
		failed=$((failed + 1)); failed_names+=("build:$1"); return 1
	fi
}

if build_or_fail build; then
	mapfile -t s < <(suites_present build unit cli diff stress fuzz big)
	[ ${#s[@]} -gt 0 ] && run_suites build plain "${s[@]}"
	# Tests that change system-wide state, alone (tests/cli/meson.build).
	mapfile -t s < <(suites_present build system)
	[ ${#s[@]} -gt 0 ] && run_suites build system "${s[@]}"
fi

if [ "${VML_TEST_QUICK:-0}" != 1 ]; then
	if build_or_fail build-asan -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug \
			-Dlockdep=true; then
		mapfile -t s < <(suites_present build-asan unit stress)
		[ ${#s[@]} -gt 0 ] && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
			UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 run_suites build-asan asan "${s[@]}"
	fi
	if build_or_fail build-tsan -Db_sanitize=thread -Db_lundef=false -Dbuildtype=debugoptimized \
			-Dlockdep=true; then
		mapfile -t s < <(suites_present build-tsan stress)
		[ ${#s[@]} -gt 0 ] && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$top/tests/tsan.supp" \
			run_suites build-tsan tsan "${s[@]}"
	fi
	if build_or_fail build-fi -Dfault_injection=true -Db_sanitize=address,undefined \
			-Db_lundef=false -Dbuildtype=debug; then
		mapfile -t s < <(suites_present build-fi unit)
		[ ${#s[@]} -gt 0 ] && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
			UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 run_suites build-fi fi "${s[@]}"
	fi
	if command -v clang-14 >/dev/null; then
		if CC=clang-14 build_or_fail build-fuzz -Dfuzzing=true \
				-Db_sanitize=address,undefined -Db_lundef=false \
				-Dbuildtype=debugoptimized -Dc_args=-fsanitize=fuzzer-no-link; then
			mapfile -t s < <(suites_present build-fuzz libfuzzer)
			[ ${#s[@]} -gt 0 ] && ASAN_OPTIONS=detect_leaks=1 \
				run_suites build-fuzz libfuzzer "${s[@]}"
		fi
	else
		echo "== libfuzzer: skipped (no clang-14)" >&2
	fi
fi

if [ ${#failed_names[@]} -gt 0 ]; then
	cat "$failure_log"
	echo "failed:"
	printf '  %s\n' "${failed_names[@]}"
fi
mkdir -p build
echo "$passed passed, $failed failed" | tee "$summary_file"
[ "$failed" -eq 0 ]
