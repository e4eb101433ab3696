#!/usr/bin/env bash
# Reads SIZE with `qemu-img convert -f raw -O raw -W -n URI <null target>`
# from `nbdscope serve --backend null` and from `qemu-nbd` serving a null-co
# image of the same size, side by side (alternating, median of REPEAT), at
# the OS default send buffer and at 2 MiB, and prints a markdown table with
# ratios. Needs qemu-utils. Usage: bench/qemu-img-read.sh [SIZE] [REPEAT]
set -euo pipefail
SIZE=${1:-4g}
REPEAT=${2:-5}
cd "$(dirname "$0")/.."
dir=$(mktemp -d /tmp/nbdscope-bench.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$dir"' EXIT
go build -o "$dir/nbdscope" ./cmd/nbdscope
bytes=$(numfmt --from=iec "${SIZE^^}")

wait_sock() { for _ in $(seq 100); do [ -S "$1" ] && return 0; sleep 0.05; done; echo "no socket $1" >&2; exit 1; }

# one_read SOCKET → seconds
one_read() {
	local t0 t1
	t0=$(date +%s.%N)
	qemu-img convert -f raw -W -n --target-image-opts "nbd+unix:///?socket=$1" "driver=null-co,size=$bytes"
	t1=$(date +%s.%N)
	echo "$t1 - $t0" | bc -l
}

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "| server | send buffer | median time (s) | GiB/s | ratio to qemu-nbd (default) |"
echo "|---|---|---|---|---|"
base=""
for buf in default 2m; do
	ours="$dir/ours-$buf.sock"; theirs="$dir/qemu-$buf.sock"
	"$dir/nbdscope" serve -k "$ours" --backend null --size "$SIZE" --sndbuf "$buf" 2>/dev/null &
	qemu-nbd --image-opts "driver=null-co,size=$bytes" -k "$theirs" -t -r &
	wait_sock "$ours"; wait_sock "$theirs"
	: >"$dir/o"; : >"$dir/q"
	for _ in $(seq "$REPEAT"); do
		one_read "$theirs" >>"$dir/q"
		one_read "$ours" >>"$dir/o"
	done
	kill %1 %2 2>/dev/null || true
	wait 2>/dev/null || true
	q=$(median <"$dir/q"); o=$(median <"$dir/o")
	[ -z "$base" ] && base=$q
	if [ "$buf" = default ]; then
		echo "| qemu-nbd null-co | default | $q | $(echo "$bytes/$q/1073741824" | bc -l | xargs printf %.2f) | 1.00x |"
	else
		echo "| qemu-nbd null-co | default (qemu-nbd has no flag) | $q | $(echo "$bytes/$q/1073741824" | bc -l | xargs printf %.2f) | $(echo "$base/$q" | bc -l | xargs printf %.2f)x |"
	fi
	echo "| nbdscope serve null | $buf | $o | $(echo "$bytes/$o/1073741824" | bc -l | xargs printf %.2f) | $(echo "$base/$o" | bc -l | xargs printf %.2f)x |"
done
