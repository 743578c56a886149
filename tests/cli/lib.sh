# lib.sh - what the TAP shell tests of the vmalock command share; sourced
# after setting $vmalock and changing into the test's own temporary directory.
#
# The rule (tests/README.md, "Tests run beside each other"): a test reads
# vmalock's stderr only through vml(), which sets the notes aside. A note
# ("vmalock: note: ...") is what any run may print when it waits behind
# another test's live run: it is never an error, and an error line is never
# expected at a fixed position. tests/cli/lint.sh enforces this.
n=0
failed=0

# ok STATUS DESCRIPTION: one TAP line; a failure shows the last out and err.
ok() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=$((failed + 1))
		sed 's/^/#   /' out err 2>/dev/null | head -n 60
	fi
}

# vml ARGS...: run vmalock ARGS; its stdout to ./out, its stderr to ./err
# without the notes, which go to ./notes. Returns vmalock's exit status.
vml() {
	"$vmalock" "$@" >out 2>err.all
	vml_rc=$?
	grep -v '^vmalock: note: ' err.all >err
	grep '^vmalock: note: ' err.all >>notes
	rm -f err.all
	return $vml_rc
}

# err_lines: how many lines of ./err (notes already set aside).
err_lines() {
	wc -l <err | tr -d ' '
}

# expect STATUS PATTERN DESCRIPTION -- ARGS...: vmalock ARGS exits STATUS and
# says one thing on stderr, a line matching PATTERN.
expect() {
	status=$1 pattern=$2 desc=$3
	shift 4
	vml "$@"
	rc=$?
	[ $rc -eq "$status" ] && grep -q -- "$pattern" err && [ "$(err_lines)" -le 1 ]
	ok $? "$desc (exit $rc)"
}

# done_tap: the notes seen (as TAP comments), the plan line, and the exit
# status meson reads.
done_tap() {
	[ -s notes ] && sed 's/^/# /' notes
	echo "1..$n"
	[ "$failed" -eq 0 ]
	exit $?
}
