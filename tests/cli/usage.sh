#!/bin/sh
# usage.sh VMALOCK: the replay and show commands' usage errors (exit 2 with
# one line naming the bad argument), bad script lines (exit 2, FILE:LINE:),
# failed expectations (exit 1) and the happy paths. TAP output.
set -u
vmalock=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

cat >good.ops <<'OPS'
# two mappings
file data 16K
mmap 0x100000000000 16K rw- private,anon
mmap 0x100000010000 16K r-- private file=data
OPS

expect 2 "missing FILE" "replay without FILE" -- replay
expect 2 "target: unknown target 'bogus'" "bad --target named" -- replay good.ops --target bogus
expect 2 "view: unknown view 'bogus'" "bad --view named" -- replay good.ops --view bogus
expect 2 "compare: unknown view 'nope'" "bad --compare view named" -- replay good.ops --compare maps,nope
expect 2 "lock: unknown policy 'rcu'" "bad --lock named" -- replay good.ops --lock rcu
expect 2 "range: bad range '0x2000-0x1000'" "backwards --range" -- replay good.ops --range 0x2000-0x1000
expect 2 "range: bad range '1000-2000'" "--range without 0x" -- replay good.ops --range 1000-2000
expect 2 "unknown option '--frob'" "unknown option named" -- replay good.ops --frob
expect 2 "target needs a value" "option without its value" -- replay good.ops --target
expect 2 "unexpected argument 'extra.ops'" "second FILE" -- replay good.ops extra.ops
expect 2 "compare needs --target both" "--compare with one target" -- replay good.ops --compare maps --target live
expect 2 "quiet takes no value" "value on a flag" -- replay good.ops --quiet=yes
expect 2 "nosuch.ops: No such file" "missing script file" -- replay nosuch.ops --target live
expect 2 "missing VIEW" "show without VIEW" -- show --script good.ops
expect 2 "VIEW: unknown view 'mapz'" "show with a bad VIEW" -- show mapz --script good.ops
expect 2 "missing FILE" "show without a script" -- show maps
expect 2 "target: unknown target 'both'" "show takes one target" -- show maps --script good.ops --target both

# bad script lines: exit 2, one line FILE:LINE: OP: reason
printf '# fine\nmmap 0x100000000000 4K rw- private,anon\nmprotect 0x100000000000 4K rwq\n' >bad1.ops
expect 2 "^bad1.ops:3: mprotect: unknown protection 'rwq'" "bad prot: file:line: op:" -- replay bad1.ops --target live
printf 'mmap 0x100000000000 4K rw- private file=data\n' >bad2.ops
expect 2 "^bad2.ops:1: mmap: file 'data' is not declared" "undeclared file" -- replay bad2.ops --target live
printf '\n\nfrobnicate 1 2\n' >bad3.ops
expect 2 "^bad3.ops:3: frobnicate: unknown op" "unknown op" -- replay bad3.ops --target live
printf 'munmap 0x100000000000\n' >bad4.ops
expect 2 "^bad4.ops:1: munmap: missing argument" "missing argument" -- show maps --script bad4.ops --target live
printf 'munmap 0x100000000000 4K expect=EWHATEVER\n' >bad5.ops
expect 2 "^bad5.ops:1: munmap: unknown errno 'EWHATEVER'" "bad expect=" -- replay bad5.ops --target live

# ops that end unlike their expect=: exit 1, one line per op
printf 'mmap 0x100000000000 4K rw- private,anon\nmunmap 0x100000000000 4K expect=EINVAL\n' >exp.ops
expect 1 "^exp.ops:2: munmap: live returned 0, expected -EINVAL" "expect= mismatch reported" -- replay exp.ops --target live
printf 'mprotect 0x100000000000 4K r--\n' >exp2.ops
expect 1 "^exp2.ops:1: mprotect: live returned -ENOMEM, expected 0" "a failing op without expect=" -- replay exp2.ops --target live

# the model target, until it links: a clean one-line refusal
if "$vmalock" replay --help | grep -q "not linked"; then
	expect 2 "the model is not linked" "--target model refused cleanly" -- replay good.ops --target model
	expect 2 "the model is not linked" "--target both refused cleanly" -- replay good.ops --target both
	expect 2 "the model is not linked" "--compare refused cleanly" -- replay good.ops --compare maps
	expect 2 "the model is not linked" "show --target model refused" -- show maps --script good.ops --target model
fi

# happy paths
vml replay good.ops --target live
[ $? -eq 0 ] && [ ! -s err ] && [ "$(wc -l <out)" -eq 2 ] && grep -q '^100000010000-100000014000 r--p 00000000 00:00 0 \{26\}/tmp/vmalock.XXXXXX/data$' out
ok $? "replay prints the normalised range"
vml replay good.ops --target live --raw
[ $? -eq 0 ] && ! grep -q 'XXXXXX' out && grep data out | grep -vq ' 00:00 0 ' 
ok $? "--raw keeps device, inode and the directory name"
vml replay good.ops --target live --quiet
[ $? -eq 0 ] && [ ! -s out ] && [ ! -s err ]
ok $? "--quiet prints nothing when all is well"
vml replay good.ops --target live --range 0x100000010000-0x100000011000
[ $? -eq 0 ] && [ "$(wc -l <out)" -eq 1 ] && grep -q '^100000010000-' out
ok $? "--range cuts the view"
printf '# two mappings, CRLF\r\nfile data 16K \r\nmmap 0x100000000000 16K rw- private,anon\t\r\nmmap 0x100000010000 16K r-- private file=data expect=0\r # a comment\r\n' >crlf.ops
"$vmalock" replay good.ops --target live >out2 2>/dev/null
vml replay crlf.ops --target live
[ $? -eq 0 ] && [ ! -s err ] && cmp -s out out2
ok $? "a CRLF script (CRs before comments and blanks too) reads as the LF one"
vml replay good.ops --target live --view query
cp out out1
vml replay good.ops --target live
[ $? -eq 0 ] && cmp -s out1 out
ok $? "the query view equals maps"
vml replay good.ops --target live --view numa_maps
[ $? -eq 0 ] && grep -q '^100000000000 default' out && grep -q 'file=/tmp/vmalock.XXXXXX/data' out
ok $? "numa_maps view"
vml show maps --script good.ops --target live
[ $? -eq 0 ] && grep -q '\[stack\]' out && grep -q '^100000000000-100000004000 rw-p' out && ! grep -q XXXXXX out
ok $? "show prints the whole raw view"
vml show smaps_rollup --script good.ops --target live
[ $? -eq 0 ] && head -n 1 out | grep -q '\[rollup\]$'
ok $? "show smaps_rollup"
vml replay --help
[ $? -eq 0 ] && grep -q -- '--compare' out && grep -q -- '--range' out && grep -q -- '--lock' out
ok $? "replay --help"
vml show --help
[ $? -eq 0 ] && grep -q -- '--script' out
ok $? "show --help"

expect 2 "missing PID" "watch without PID" -- watch
expect 2 "PID: bad value 'abc'" "watch with a bad PID" -- watch abc
expect 2 "interval: bad value '0'" "watch with a zero --interval" -- watch 1 --interval 0
expect 2 "duration needs a value" "watch --duration without its value" -- watch 1 --duration
expect 2 "unknown option '--frob'" "watch: unknown option named" -- watch 1 --frob
expect 2 "no process 999999999" "watch of a PID that does not exist" -- watch 999999999
vml watch --help
[ $? -eq 0 ] && grep -q -- '--json' out && grep -q 'root' out
ok $? "watch --help"

# One grammar for all commands (the option tables in src/cli/opts.c).
expect 2 "seed: bad value '-1'" "a negative --seed refused" -- bench proc-vs-map --seed -1
expect 2 "readers: bad value '1,,2'" "an empty list item refused" -- bench proc-vs-map --readers 1,,2
expect 2 "seed: bad value '-1'" "race: the same --seed grammar" -- race --seed -1
expect 2 "json: cannot write '/nonexistent/x.json'" "an unwritable --json refused before running" -- bench proc-vs-map --json /nonexistent/x.json
expect 2 "plot: cannot write '/nonexistent/x.svg'" "an unwritable --plot refused before running" -- run --plot /nonexistent/x.svg
expect 2 "trace-events: needs --trace" "--trace-events without --trace refused" -- bench proc-vs-map --trace-events ev.txt
expect 2 "trace-events: needs --trace and proc-vs-map" "--trace-events on another scenario refused" -- bench ops --trace --trace-events ev.txt
expect 2 "trace-events: cannot write '/nonexistent/ev.txt'" "an unwritable --trace-events refused before running" -- run --trace --trace-events /nonexistent/ev.txt
# --trace-events writes the events the table was made of (the model's own, without root).
vml bench proc-vs-map --target model --lock mmap --view smaps --readers 1 --samples 1 \
	--duration 0.2 --record-ns 0 --call-ns 0 --trace --trace-events ev.txt --quiet
[ $? -eq 0 ] && grep -q '^# sample 1: model mmap mainline, mapper [0-9]*, 1 reader [0-9]*$' ev.txt &&
	grep -q ' released mmap_lock read$' ev.txt && grep -q ' acquire_returned mmap_lock write$' ev.txt
ok $? "--trace-events writes the model's lock events per sample"
vml bench proc-vs-map --target model --lock mmap --view smaps --readers 1 --samples 1 \
	--duration 0.1 --record-ns 0 --call-ns 0 --trace --trace-events /dev/full --quiet
[ $? -eq 1 ] && grep -q 'trace-events: writing: No space left on device' err
ok $? "--trace-events on a full disk fails the run, saying why"
expect 2 "Is a directory" "replay of a directory" -- replay .
expect 2 "too large for an op script" "replay of /dev/zero ends" -- replay /dev/zero
expect 2 "profile: nosuch.json: No such file" "--profile of a missing file" -- replay good.ops --profile nosuch.json
expect 2 "i-mmap-order: unknown order 'x'" "bad --i-mmap-order named" -- replay good.ops --i-mmap-order x
expect 2 "shmem-swap-usage: unknown value 'x'" "bad --shmem-swap-usage named" -- show smaps good.ops --shmem-swap-usage x
# The model switches change how, not what: the same views either way.
vml replay good.ops --view smaps && cp out out.default &&
	vml replay good.ops --view smaps --i-mmap-order pre --shmem-swap-usage per-page &&
	cmp -s out out.default
ok $? "replay with --i-mmap-order pre --shmem-swap-usage per-page shows the same smaps"
vml show maps good.ops --target model
[ $? -eq 0 ] && grep -q '^100000000000-100000004000 rw-p' out
ok $? "show takes FILE after VIEW"
vml replay --script good.ops --target model
[ $? -eq 0 ] && [ "$(wc -l <out)" -eq 2 ]
ok $? "replay takes --script FILE"
vml replay - --target model <good.ops
[ $? -eq 0 ] && [ "$(wc -l <out)" -eq 2 ]
ok $? "replay - reads standard input"
vml replay good.ops --target model --lock both
[ $? -eq 0 ] && grep -q '^== model (mmap): maps' out && grep -q '^== model (vma): maps' out
ok $? "replay --lock both shows each policy"
vml show maps good.ops --lock both
[ $? -eq 0 ] && grep -q '^== model (mmap): maps' out && grep -q '^== model (vma): maps' out
ok $? "show --lock both shows each policy"
vml replay good.ops --compare maps --lock both
[ $? -eq 0 ] && grep -q 'maps: same on model (mmap) and live' out && grep -q 'maps: same on model (vma) and live' out
ok $? "replay --compare --lock both compares each policy"
printf 'require pkeys no-pkeys\nmmap 0x100000000000 4K rw- private,anon\n' >req.ops
expect 77 "skipped: it needs" "an unmet require skips with one line (exit 77)" -- replay req.ops --target model
vml host
[ $? -eq 0 ] && grep -q '^zero_page' out && grep -q '^pkeys' out && grep -q '^mmap_lock_handoff' out
ok $? "host prints the profile"
vml host --json prof.json && vml host --compare prof.json
[ $? -eq 0 ] && grep -q 'same as prof.json' out
ok $? "host --json, then --compare with itself"
python3 -c 'import json,sys; d=json.load(open("prof.json")); d["zero_page"]=not d["zero_page"]; json.dump(d,open("prof2.json","w"))'
vml host --compare prof2.json
[ $? -eq 1 ] && grep -q 'zero_page' out
ok $? "host --compare names the setting that differs (exit 1)"

# Page-cache folio sizes follow the profile: on ext4 with large folios a
# 64 KiB write() makes one 64 KiB folio, and a write fault through a shared
# mapping dirties it whole (shared-write-whole-folio.ops); under a profile of
# a filesystem with small pages only, one page.
vml host
[ $? -eq 0 ] && grep -Eq '^file_folio_max_kb +([0-9]+ \(.*: .* kB\)|unknown \(.*\): the model keeps 64)$' out
ok $? "host prints file_folio_max_kb, measured or unknown"
python3 -c 'import json; d=json.load(open("prof.json")); d["file_folio_max_kb"]=4; json.dump(d,open("small.json","w"))'
python3 -c 'import json; d=json.load(open("prof.json")); d["file_folio_max_kb"]=64; json.dump(d,open("large.json","w"))'
printf 'file f0 64K\nmmap 0x100000014000 72K rw- shared file=f0\ntouch 0x100000017000 4K write\n' >folio.ops
vml show smaps folio.ops --target model --profile large.json
[ $? -eq 0 ] && grep -q '^Private_Dirty: *64 kB' out
ok $? "a 64 kB file folio: one 4 kB write dirties 64 kB"
vml show smaps folio.ops --target model --profile small.json
[ $? -eq 0 ] && grep -q '^Private_Dirty: *4 kB' out && grep -q '^Rss: *4 kB' out
ok $? "small file folios (file_folio_max_kb 4): it dirties 4 kB"
vml host --profile small.json --compare large.json
[ $? -eq 1 ] && grep -q 'file_folio_max_kb: 64 vs 4' out
ok $? "host --compare names file_folio_max_kb"

# The name op follows the profile: with anonymous VMA names (a saved profile
# that has them) the model names the VMA; where the profile lacks them, EINVAL.
python3 -c 'import json; d=json.load(open("prof.json")); d["anon_vma_name"]=True; json.dump(d,open("names.json","w"))'
python3 -c 'import json; d=json.load(open("prof.json")); d["anon_vma_name"]=False; json.dump(d,open("nonames.json","w"))'
printf 'mmap 0x100000000000 8K rw- private,anon\nname 0x100000000000 4K heap two\n' >name.ops
vml replay name.ops --target model --profile names.json
[ $? -eq 0 ] && grep -q '^100000000000-100000001000 rw-p 00000000 00:00 0 .*\[anon:heap two\]$' out
ok $? "name on the model, as on a host with anon VMA names"
printf 'mmap 0x100000000000 8K rw- private,anon\nname 0x100000000000 4K x expect=EINVAL\n' >noname.ops
vml replay noname.ops --target model --profile nonames.json
ok $? "name is EINVAL on the model, as on a host without them"

# --compare tries fresh targets while only the views differ (the live
# kernel's own work can change them); a difference on every attempt fails.
# Replayed as if on a host of the other zero-page kind, reading untouched
# memory differs every time.
printf 'mmap 0x100000000000 16K rw- private,anon\ntouch 0x100000000000 16K read\n' >zero.ops
vml replay zero.ops --compare smaps --quiet --attempts 3 --profile prof2.json
[ $? -eq 1 ] && grep -q '^vmalock replay: attempt 1 of 3: the views differ' err &&
	grep -q '^vmalock replay: attempt 2 of 3: the views differ' err &&
	! grep -q 'attempt 3 of 3' err && grep -q '^+++ live/smaps' out
ok $? "replay --compare --attempts 3: a lasting difference fails after 3 runs, the last on stdout"
vml replay zero.ops --compare smaps --quiet --attempts 3 --profile prof.json
[ $? -eq 0 ] && ! grep -q attempt err && [ ! -s out ]
ok $? "replay --compare --attempts 3: agreeing views run once"
expect 2 "attempts: bad value '0'" "--attempts 0 refused" -- replay good.ops --compare maps --attempts 0

# The live-kernel lock file is every user's: a live run as another user
# still takes it where root's run left it 0644 (its umask), and a run
# leaves it writable by all. Root with setpriv only (it runs as nobody).
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1 &&
	setpriv --reuid=65534 --regid=65534 --clear-groups "$vmalock" --help >/dev/null 2>&1; then
	lock=/run/lock/vmalock.lock
	[ -w /run/lock ] || lock=/tmp/vmalock.lock
	printf 'mmap 0x100000000000 16K rw- private,anon\n' >anon.ops
	vml show maps anon.ops --target live	# creates it if missing
	chmod 644 "$lock"
	nb=$(mktemp /tmp/vmalock-usage-XXXXXX)
	cp anon.ops "$nb" && chmod 644 "$nb"
	(cd / && setpriv --reuid=65534 --regid=65534 --clear-groups "$vmalock" show maps "$nb" \
		--target live) >out 2>/dev/null
	rc=$?
	rm -f "$nb"
	[ $rc -eq 0 ] && grep -q '^100000000000-100000004000 rw-p' out
	ok $? "a live run as another user takes a lock file root left 0644 (exit $rc)"
	vml show maps anon.ops --target live
	[ "$(stat -c %a "$lock")" = 666 ]
	ok $? "a live run leaves the lock file writable by every user"
	# Page frames are root's: without them the folio sizes stay unknown.
	(cd / && setpriv --reuid=65534 --regid=65534 --clear-groups "$vmalock" host) >out 2>/dev/null
	grep -q '^file_folio_max_kb *unknown (.*root): the model keeps 64$' out
	ok $? "host as another user: file_folio_max_kb unknown, the model keeps 64"
else
	n=$((n + 3))
	echo "ok $((n - 2)) # skip not root, no setpriv, or nobody cannot run $vmalock"
	echo "ok $((n - 1)) # skip not root, no setpriv, or nobody cannot run $vmalock"
	echo "ok $n # skip not root, no setpriv, or nobody cannot run $vmalock"
fi

done_tap
