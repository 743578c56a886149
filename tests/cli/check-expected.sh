#!/bin/sh
# check-expected.sh VMALOCK SCRIPT REFDIR live|model
#
# REFDIR (tests/scripts/expected) holds reference sets, one directory each,
# recorded on one host: profile.json (that host's profile, `vmalock host
# --json`) and SCRIPT.maps, .smaps, .numa_maps (what the live kernel showed).
#
# live:  replay SCRIPT on this host's kernel and compare every view with the
#        set recorded on a host like this one (`vmalock host --compare`: the
#        settings the views depend on are the same). With no such set the
#        test is skipped (exit 77), naming how this host differs.
# model: replay SCRIPT on the model as on each set's host (--profile) and
#        compare with that set: the model must reproduce every recorded host,
#        whatever host this runs on.
set -u
vmalock=$1 script=$2 refdir=$3 mode=$4
name=$(basename "$script" .ops)
# Some page states (LazyFree, active) wait in the kernel's per-CPU LRU
# batches until a later call drains them on the same CPU: keep the live
# child on one CPU (it inherits the affinity), spreading tests over CPUs.
pin=
if command -v taskset >/dev/null 2>&1; then
	pin="taskset -c $(( $$ % $(nproc 2>/dev/null || echo 1) ))"
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# The live kernel does work of its own in the child between ops (khugepaged
# drains every CPU's LRU batches at each wake-up and collapses huge pages;
# DAMON marks sampled pages young): a live run that differs from the
# reference is run again, up to 4 times, as `vmalock replay --compare` does.
# The model is deterministic: it gets one run.

# check SET ARGS...: every view of SCRIPT against SET's references
check() {
	set_dir=$1; shift
	for view in maps smaps numa_maps; do
		ref="$set_dir/$name.$view"
		[ -f "$ref" ] || continue
		attempt=1
		while :; do
			$pin "$vmalock" replay "$script" --view "$view" "$@" > "$out"
			rc=$?
			if [ $rc -ne 0 ]; then
				echo "vmalock replay $* exited $rc"
				exit 1
			fi
			cmp -s "$ref" "$out" && break
			if [ "$1 $2" = "--target live" ] && [ $attempt -lt 4 ]; then
				echo "attempt $attempt of 4: $view differs from $ref; again:"
				diff -u "$ref" "$out"
				attempt=$((attempt + 1))
				continue
			fi
			echo "$view differs from $ref ($*):"
			diff -u "$ref" "$out"
			exit 1
		done
	done
}

case $mode in
live)
	why=""
	for set_dir in "$refdir"/*/; do
		set_dir=${set_dir%/}
		[ -f "$set_dir/$name.maps" ] || continue
		if diffs=$("$vmalock" host --compare "$set_dir/profile.json"); then
			check "$set_dir" --target live
			echo "live views match $set_dir"
			exit 0
		fi
		why="$why $(basename "$set_dir"): ${diffs#*: };"
	done
	echo "skip: no reference set for a host like this one:${why:- none recorded for $name}"
	exit 77
	;;
model)
	n=0
	for set_dir in "$refdir"/*/; do
		set_dir=${set_dir%/}
		[ -f "$set_dir/$name.maps" ] || continue
		check "$set_dir" --target model --profile "$set_dir/profile.json"
		n=$((n + 1))
	done
	[ $n -gt 0 ] || { echo "skip: no reference recorded for $name"; exit 77; }
	echo "the model reproduces $n reference set(s)"
	exit 0
	;;
*)
	echo "usage: $0 VMALOCK SCRIPT REFDIR live|model" >&2
	exit 2
	;;
esac
