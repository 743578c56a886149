#!/bin/sh
# lint.sh TESTS_DIR: the rule that keeps tests from failing when they run
# beside each other (tests/README.md, "Tests run beside each other"): no
# shell test captures vmalock's stderr into a file of its own; it goes
# through vml() (tests/cli/lib.sh), which sets aside the notes any run may
# print while it waits behind another test's live run. Discarding stderr
# (2>/dev/null, 2>&1 into a status-only check) is fine. TAP output.
set -u
dir=$1
n=0
failed=0
for f in $(find "$dir" -name '*.sh' ! -name lib.sh ! -name lint.sh | sort); do
	n=$((n + 1))
	# a line that runs "$vmalock" (or $vmalock) and sends fd 2 to a file
	# (a command continued over lines with a backslash is one line here)
	bad=$(awk '{ if (sub(/\\$/, "")) { held = held $0; next } print NR ": " held $0; held = "" }' "$f" |
		grep -E '"?\$vmalock"?([^#|;&]|&&)* 2>>? *([^&/ ]|/[^d]|/d[^e])')
	if [ -z "$bad" ]; then
		echo "ok $n - ${f#"$dir"/}"
	else
		echo "not ok $n - ${f#"$dir"/}: vmalock's stderr captured past vml():"
		echo "$bad" | sed 's/^/#   /'
		failed=$((failed + 1))
	fi
done
echo "1..$n"
[ "$failed" -eq 0 ]
