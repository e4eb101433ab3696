#!/usr/bin/env bash
# bench/countcost.sh — what counting a real process's system calls costs
# the throughput (issue 23, item 2: under 2%).
#
# It runs `nbdscope sweep --exec CLIENT` (and `--server CMD` for a real
# server), the exec sweep's own machinery, with counting on and with
# NBDSCOPE_SYSCOUNT=off, alternately: round after round, each case once
# with and once without, the order swapped every other round, so that a
# slow stretch of a shared machine falls on both. "On" is what nbdscope
# always does in an exec sweep: the client's calls counted over it and
# everything it starts (realproc.Calls), and a real server's too (the
# engine's real-server role); "off" opens no counter and shows those
# figures as n/a (which the report checks run by run).
#
# Cases, each with every send buffer of BUFS:
#   qemu-nbd/CLIENT   a real qemu-nbd (null-co) as the server
#                     (`--server 'qemu-nbd -r -t -e 0 -f raw -k {socket} …'`):
#                     both processes counted
#   serve/CLIENT      nbdscope's own server (null backend), which counts
#                     itself: only the client counted
# Clients: qemu-img (`qemu-img convert -f raw -O raw -W -n {uri}` into a
# null-co image) and nbdcopy (`nbdcopy {uri} null:`, 4 connections and
# their threads: more threads, so more counters to switch).
#
# It prints, per case and buffer, throughput with counting off and on
# (median, mean ± σ, min–max over every measured run), on/off (of the
# medians, of the fastest runs, the least disturbed by other load, and the
# median of the per-round ratios with their range), the client's and the
# server's CPU s/GiB off → on (user+sys over all runs: steadier than time
# on a shared machine), the cores other processes kept busy meanwhile, and
# the load average. bench/countpair does the same run by run (finer
# alternation, paired ratios), outside the sweep.
#
# Usage: bench/countcost.sh [-s SIZE] [-r ROUNDS] [-o DIR]
#        bench/countcost.sh -R DIR/raw.tsv    (the report of an earlier run)
# Environment (flags win):
#   SIZE=4g          bytes per run (--bytes)
#   ROUNDS=4         rounds; each runs every case on and off
#   REPEAT=2         measured runs per buffer in each sweep (--repeat); a
#                    sweep also makes one warm-up per buffer (--warmup 1)
#   BUFS=default,2m  send buffers (--sndbuf; qemu-nbd's set from outside)
#   SERVERS="qemu-nbd serve"   CLIENTS="qemu-img nbdcopy"
#   QEMU_HEAP=1      qemu-nbd and qemu-img with glibc's request buffers
#                    kept in the heap, as in compare.sh (else this VM's
#                    page faults set their pace); 0: as shipped
#   ON=on            how the "on" runs count (NBDSCOPE_SYSCOUNT): on (per
#                    process by bpf where allowed), bpf, or perf (per thread)
#   NBDSCOPE=PATH    a prebuilt nbdscope (else built from this tree)
#   OUT=DIR          keep the JSON of every sweep and raw.tsv in DIR
# Needs: go (or NBDSCOPE), jq, awk, qemu-utils, libnbd-bin for nbdcopy
# (a missing client or server skips its cases); root or CAP_PERFMON for
# the counting (`nbdscope doctor`). Linux only.
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; }

SIZE=${SIZE:-4g} ROUNDS=${ROUNDS:-4} REPEAT=${REPEAT:-2} BUFS=${BUFS:-default,2m}
SERVERS=${SERVERS:-qemu-nbd serve} CLIENTS=${CLIENTS:-qemu-img nbdcopy}
QEMU_HEAP=${QEMU_HEAP:-1} OUT=${OUT:-} REPORT="" ON=${ON:-on}
while getopts "s:r:o:R:h" o; do
	case $o in
	s) SIZE=$OPTARG ;; r) ROUNDS=$OPTARG ;; o) OUT=$OPTARG ;; R) REPORT=$OPTARG ;;
	h) usage; exit 0 ;; *) usage >&2; exit 2 ;;
	esac
done
cd "$(dirname "$0")/.."

qemu_nbd='qemu-nbd -r -t -e 0 -f raw -k {socket} '\''json:{"file":{"driver":"null-co","size":{size}}}'\'
client_cmd() {
	case $1 in
	qemu-img) echo 'qemu-img convert -f raw -O raw -W -n {uri} '\''json:{"file":{"driver":"null-co","size":{size}}}'\' ;;
	nbdcopy) echo 'nbdcopy {uri} null:' ;;
	*) echo "unknown client $1 (qemu-img or nbdcopy)" >&2; exit 2 ;;
	esac
}

# report RAW: the table of raw.tsv (round case mode buffer seconds ccpu scpu
# counted bytes others), then whether every run was counted as its mode
# says. others is the cores other processes kept busy during the run (the
# sweep's other_cores_busy; -1 unknown).
report() {
	awk -F'\t' '
	function stats(key, m,   n, i, j, t, s, ss) {
		n = cnt[key, m]; if (n == 0) return "n/a"
		for (i = 1; i <= n; i++) a[i] = tp[key, m, i]
		for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
		med[m] = (a[int((n + 1) / 2)] + a[int(n / 2) + 1]) / 2
		s = 0; for (i = 1; i <= n; i++) s += a[i]
		mean = s / n; ss = 0; for (i = 1; i <= n; i++) ss += (a[i] - mean) ^ 2
		sd = n > 1 ? sqrt(ss / (n - 1)) : 0
		return sprintf("%.3f (%.3f ± %.3f, %.3f–%.3f, n=%d)", med[m], mean, sd, a[1], a[n], n)
	}
	function rmed(key,   n, i, j, t, r, k) {
		n = 0
		for (k = 1; k <= maxround; k++) if (((key, k, "on") in rs) && ((key, k, "off") in rs)) r[++n] = (rs[key, k, "on"] / rc[key, k, "on"]) / (rs[key, k, "off"] / rc[key, k, "off"])
		if (n == 0) return "n/a"
		for (i = 2; i <= n; i++) { t = r[i]; for (j = i - 1; j >= 1 && r[j] > t; j--) r[j + 1] = r[j]; r[j + 1] = t }
		return sprintf("%.3f (%.3f–%.3f)", (r[int((n + 1) / 2)] + r[int(n / 2) + 1]) / 2, r[1], r[n])
	}
	{
		key = $2 SUBSEP $4; gib = $9 / 1073741824
		if (!(key in seen)) { seen[key] = 1; order[++nk] = key }
		i = ++cnt[key, $3]; tp[key, $3, i] = gib / $5
		ccpu[key, $3] += $6; scpu[key, $3] += $7; bytes[key, $3] += gib
		rs[key, $1, $3] += gib / $5; rc[key, $1, $3]++; if ($1 > maxround) maxround = $1
		if ($10 >= 0) { busy[key, $3] += $10; nbusy[key, $3]++ }
		if (($3 == "on") != ($8 == "yes")) wrong[$3]++
	}
	END {
		print "| case | send buffer | GiB/s, counting off: median (mean ± σ, min–max) | GiB/s, counting on | on/off (medians) | on/off (best runs) | on/off per round: median (range) | client CPU s/GiB off → on | server CPU s/GiB off → on | other load (cores) off, on |"
		print "|---|---|---|---|---|---|---|---|---|---|"
		for (k = 1; k <= nk; k++) {
			key = order[k]; split(key, p, SUBSEP)
			off = stats(key, "off"); hioff = a[cnt[key, "off"]]; on = stats(key, "on"); hion = a[cnt[key, "on"]]
			ratio = (cnt[key, "on"] && cnt[key, "off"]) ? sprintf("%.3f", med["on"] / med["off"]) : "n/a"
			best = (cnt[key, "on"] && cnt[key, "off"]) ? sprintf("%.3f", hion / hioff) : "n/a"
			load = sprintf("%s, %s", nbusy[key, "off"] ? sprintf("%.2f", busy[key, "off"] / nbusy[key, "off"]) : "n/a", nbusy[key, "on"] ? sprintf("%.2f", busy[key, "on"] / nbusy[key, "on"]) : "n/a")
			cpu = sprintf("%.3f → %.3f", ccpu[key, "off"] / bytes[key, "off"], ccpu[key, "on"] / bytes[key, "on"])
			spu = sprintf("%.3f → %.3f", scpu[key, "off"] / bytes[key, "off"], scpu[key, "on"] / bytes[key, "on"])
			printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", p[1], p[2], off, on, ratio, best, rmed(key), cpu, spu, load
		}
		print ""
		if (wrong["on"] + wrong["off"] == 0) print "Every run with counting on had its client'"'"'s calls counted, and none with it off."
		else printf "NOT AS ASKED: %d runs on without counts, %d runs off with counts.\n", wrong["on"], wrong["off"]
	}' "$1"
}

if [ -n "$REPORT" ]; then
	report "$REPORT"
	exit 0
fi

dir=$(mktemp -d /tmp/nbdscope-countcost.XXXXXX)
trap 'rm -rf "$dir"' EXIT
[ -n "$OUT" ] && mkdir -p "$OUT"
keep=${OUT:-$dir}
if [ -z "${NBDSCOPE:-}" ]; then
	NBDSCOPE=$dir/nbdscope
	go build -o "$NBDSCOPE" ./cmd/nbdscope
fi
if [ "$QEMU_HEAP" = 1 ]; then
	# The sweep's children inherit it; only glibc programs read it.
	export GLIBC_TUNABLES=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=1073741824:glibc.malloc.arena_max=1
fi
bytes=$(numfmt --from=iec "${SIZE^^}")
raw=$keep/raw.tsv
: >"$raw"

cases=()
for s in $SERVERS; do
	case $s in qemu-nbd | serve) ;; *) echo "unknown server $s (qemu-nbd or serve)" >&2; exit 2 ;; esac
	[ "$s" = qemu-nbd ] && ! command -v qemu-nbd >/dev/null && { echo "skip qemu-nbd: not installed" >&2; continue; }
	for c in $CLIENTS; do
		client_cmd "$c" >/dev/null
		command -v "$c" >/dev/null || { echo "skip $s/$c: $c not installed" >&2; continue; }
		cases+=("$s/$c")
	done
done
[ ${#cases[@]} -gt 0 ] || { echo "no case to run" >&2; exit 1; }

# sweep ROUND CASE MODE: one sweep, its runs appended to raw.tsv.
sweep() {
	local srv=${2%/*} cli=${2#*/} json="$keep/$1-${2/\//-}-$3.json" args=()
	[ "$srv" = qemu-nbd ] && args=(--server "$qemu_nbd")
	local env=NBDSCOPE_SYSCOUNT=$ON
	[ "$3" = off ] && env=NBDSCOPE_SYSCOUNT=off
	if ! env "$env" "$NBDSCOPE" sweep "${args[@]}" --exec "$(client_cmd "$cli")" --sndbuf "$BUFS" \
		--bytes "$SIZE" --repeat "$REPEAT" --warmup 1 --json >"$json" 2>"$json.err"; then
		echo "sweep $2 ($3) failed:" >&2; tail -5 "$json.err" >&2; exit 1
	fi
	jq -r --arg r "$1" --arg c "$2" --arg m "$3" --arg b "$bytes" '.rows[] | .buffer as $buf | .exec.runs[] |
		[$r, $c, $m, $buf, .seconds, (.user_s + .sys_s), (.server.user_s + .server.sys_s),
		 (if .client_calls != null then "yes" else "no" end), $b, (.other_cores_busy // -1)] | @tsv' "$json" >>"$raw"
}

echo "countcost: ${cases[*]} at $BUFS, $SIZE per run, $ROUNDS rounds × $REPEAT runs, on and off; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for r in $(seq "$ROUNDS"); do
	modes="on off"
	[ $((r % 2)) = 0 ] && modes="off on"
	for c in "${cases[@]}"; do
		for m in $modes; do
			sweep "$r" "$c" "$m"
			echo "round $r/$ROUNDS $c $m done, load $(cut -d' ' -f1 /proc/loadavg)" >&2
		done
	done
done
report "$raw"
echo
echo "$SIZE per run, $ROUNDS rounds, $REPEAT runs per buffer per sweep; placement split (the sweep's default)."
[ "$QEMU_HEAP" = 1 ] && echo "qemu-nbd and qemu-img ran with GLIBC_TUNABLES=$GLIBC_TUNABLES (QEMU_HEAP=0: as shipped)."
echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
