#!/usr/bin/env bash
# The hash consume mode's cost against sha256sum (issue 16): CPU seconds per
# GiB of the load process of `nbdscope run --preset blksum` (NBD reads over
# a unix socket, SHA-256 of each 64 KiB block, the root over the digests)
# next to `sha256sum` of the same bytes (the null backend's 0xff fill) from
# a file in the page cache, and the hasher alone (Go benchmark). The bar:
# ours within 1.2x of sha256sum's CPU per GiB.
#
# Usage: bench/hash.sh            SIZE (file, default 2g), DURATION (s per
#                                 run, default 10), REPEAT (default 3),
#                                 NBDSCOPE (a prebuilt binary)
# Needs jq, /usr/bin/time, coreutils. Run it on a quiet machine.
set -euo pipefail
SIZE=${SIZE:-2g}
DURATION=${DURATION:-10}
REPEAT=${REPEAT:-3}
cd "$(dirname "$0")/.."
dir=$(mktemp -d /tmp/nbdscope-hash.XXXXXX)
trap 'rm -rf "$dir"' EXIT
bin=${NBDSCOPE:-$dir/nbdscope}
[ -n "${NBDSCOPE:-}" ] || go build -o "$bin" ./cmd/nbdscope
bytes=$(numfmt --from=iec "${SIZE^^}")
gib=$(echo "$bytes / 1073741824" | bc -l)

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# The bytes the load reads, in the page cache before every timed hash.
head -c "$bytes" /dev/zero | tr '\0' '\377' >"$dir/data"
for _ in $(seq "$REPEAT"); do
	cat "$dir/data" >/dev/null
	/usr/bin/time -f "%U %S" -o "$dir/t" sha256sum "$dir/data" >/dev/null
	read -r u s <"$dir/t"
	echo "($u + $s) / $gib" | bc -l >>"$dir/sum"
	echo "$gib / ($u + $s)" | bc -l >>"$dir/sumrate"
done
sum=$(median <"$dir/sum")

# Ours: the load process's user+system CPU per GiB, both sides (A at the
# OS default send buffer, B at 2 MiB), median over the repeats.
for _ in $(seq "$REPEAT"); do
	"$bin" run --preset blksum --duration "${DURATION}s" --json >"$dir/run.json"
	for i in 0 1; do
		jq -r ".sides[$i].summary | \"\(.client.cpu_s_per_gib) \(.client.user_s) \(.client.sys_s) \(.throughput_bps)\"" "$dir/run.json" >>"$dir/ours$i"
	done
done

alone=$(go test -run '^$' -bench StreamHasher -benchtime 2s ./engine/ | awk '/cpu-s\/GiB/ {for (i=1;i<=NF;i++) if ($(i+1)=="cpu-s/GiB") print $i}')

# openssl uses the CPU's SHA extensions where coreutils may not: the
# reference for what SHA-256 itself costs on this machine.
ossl=""
if command -v openssl >/dev/null; then
	for _ in $(seq "$REPEAT"); do
		cat "$dir/data" >/dev/null
		/usr/bin/time -f "%U %S" -o "$dir/t" openssl dgst -sha256 "$dir/data" >/dev/null
		read -r u s <"$dir/t"
		echo "($u + $s) / $gib" | bc -l >>"$dir/ossl"
	done
	ossl=$(median <"$dir/ossl")
fi

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); cores: $(nproc); $(grep -m1 -o 'sha_ni' /proc/cpuinfo || echo 'no sha_ni')"
echo
echo "| what | CPU s/GiB (user+sys) | user / sys s per run | GiB/s | ratio to sha256sum CPU/GiB |"
echo "|---|---|---|---|---|"
printf "| sha256sum, %s from page cache | %.3f | | %.2f (CPU-bound) | 1.00x |\n" "$SIZE" "$sum" "$(median <"$dir/sumrate")"
for i in 0 1; do
	name=A; [ $i = 1 ] && name=B
	c=$(awk '{print $1}' "$dir/ours$i" | median)
	line=$(awk -v c="$c" '$1==c' "$dir/ours$i" | head -1)
	read -r _ u s bps <<<"$line"
	printf "| nbdscope blksum side %s: load process | %.3f | %.2f / %.2f | %.2f | %.2fx |\n" "$name" "$c" "$u" "$s" "$(echo "$bps / 1073741824" | bc -l)" "$(echo "$c / $sum" | bc -l)"
done
printf "| hasher alone (go bench, one thread, no I/O) | %.3f | | | %.2fx |\n" "$alone" "$(echo "$alone / $sum" | bc -l)"
if [ -n "$ossl" ]; then
	printf "| openssl dgst -sha256 (SHA extensions), same file | %.3f | | | %.2fx |\n" "$ossl" "$(echo "$ossl / $sum" | bc -l)"
fi
