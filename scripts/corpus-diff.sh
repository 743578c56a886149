#!/bin/sh
# corpus-diff.sh VMALOCK [DIR]: replay every corpus script of DIR
# (tests/scripts) that sets no THP knobs of its own on the model and the
# live kernel, under the host's settings as they are now, and count those
# whose maps, smaps, numa_maps and query views differ. Run it under other
# settings with `vmalock host --set NAME=VALUE... -- scripts/corpus-diff.sh
# VMALOCK` (the settings come back afterwards). Prints one line a script
# that differs or is skipped, then `N identical, N differ, N skipped`;
# exits 1 if any differs. Each difference is kept in $CORPUS_DIFF_OUT
# (default: a new directory under /tmp, printed).
set -u
vmalock=${1:?usage: corpus-diff.sh VMALOCK [DIR]}
dir=${2:-$(dirname "$0")/../tests/scripts}
out=${CORPUS_DIFF_OUT:-$(mktemp -d /tmp/corpus-diff.XXXXXX)}
same=0 differ=0 skipped=0
for s in "$dir"/*.ops; do
	grep -q '^knobs ' "$s" && continue
	name=$(basename "$s" .ops)
	taskset -c 0 "$vmalock" replay "$s" --target both \
		--compare maps,smaps,numa_maps,query >"$out/$name.diff" 2>&1
	case $? in
	0) same=$((same + 1)); rm -f "$out/$name.diff" ;;
	77) skipped=$((skipped + 1)); echo "skipped: $name" ;;
	*) differ=$((differ + 1)); echo "differs: $name ($out/$name.diff)" ;;
	esac
done
echo "$same identical, $differ differ, $skipped skipped (differences in $out)"
[ "$differ" -eq 0 ]
