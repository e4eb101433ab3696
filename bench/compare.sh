#!/usr/bin/env bash
# bench/compare.sh — nbdscope against the bare socket and against qemu-nbd,
# nbdkit, qemu-img and nbdcopy, side by side in one run.
#
# For each send buffer (BUFS) and connection count (CONNS) it measures, in
# turn and REPEAT times (the order reversed on every other repeat, so drift
# hits every case alike):
#
#   copyloop            bench/copyloop: bare unix-socket copy, 2 MiB writes
#                       and reads into 8 buffers per connection in turn (the
#                       pair's 8 in flight, qemu-img's 8 × 2 MiB), reading
#                       as the pair's client does (non-blocking, waiting on
#                       EAGAIN in Go's netpoller), its buffers on huge
#                       pages as the pair's are
#   copyloop/small      the same on 4 KiB pages; of the two, the one with
#                       the higher median is the like-for-like ceiling and
#                       the bar
#   copyloop/block      the same with blocking reads (for reference)
#   copyloop/1buf       one hot 2 MiB buffer, blocking reads: it stays in
#                       cache, which no client with requests in flight can
#                       do — an upper bound, not a ceiling to meet
#   pair                `nbdscope run` (server + load process, both sides
#                       alike, alternate mode; figures of both sides summed)
#   serve/qemu-img      `nbdscope serve --backend null` read by
#                       `qemu-img convert … --target-image-opts driver=null-co`
#   serve0/qemu-img     the same with `--fill 0`: qemu-nbd's null-co sends
#                       zeroes, which qemu-img scans in full (0xff ends the
#                       scan at the first byte), so this is the like-for-like
#                       comparison with qemu-nbd
#   serve/nbdcopy       the same read by `nbdcopy --connections=C URI null:`
#   qemu-nbd/…          `qemu-nbd --image-opts driver=null-co,size=N -t -r -e 4`
#                       read by qemu-img, nbdcopy and nbdscope's load process
#                       (`nbdscope run --target-a URI`, side A's figures).
#                       qemu-nbd and qemu-img run with GLIBC_TUNABLES that
#                       keep their request buffers in the heap (QEMU_HEAP)
#   nbdkit/…            `nbdkit -r pattern size=N`, read by the same three
#
# External servers have no send-buffer flag: they run in the `default` group
# only. qemu-img has no connection count: it runs with 1.
#
# It prints a markdown table of medians: GiB/s, ratio to the ceiling (the
# median of per-repeat ratios: each run against the copy loop of the same
# repeat), CPU seconds per GiB of client and server (getrusage from
# nbdscope's JSON for its own processes, /usr/bin/time for external clients,
# /proc/PID/stat utime+stime for servers started in the background), system
# calls per 2 MiB where we count them ourselves (copy loop, nbdscope's
# processes; never strace, which would distort the timing), peak RSS
# (VmHWM) of each process, then the bars of issue 7, met or not.
#
# Usage: bench/compare.sh [-s SIZE] [-r REPEAT] [-d SECONDS] [-o DIR]
#        bench/compare.sh -R DIR/raw.tsv    (the report of an earlier run)
# Environment (flags win):
#   SIZE=8g        bytes per size-bound run (copy loop, qemu-img, nbdcopy)
#   REPEAT=3       repeats per case
#   DURATION=8     seconds of each `nbdscope run` (each side runs about half)
#   BUFS="default 2m"   server send buffers (nbdscope serve, copy loop writer)
#   CONNS="1 4"    connection counts
#   CASES=REGEX    only cases whose name matches (the copy loops always run)
#   PLACEMENT=split   where servers and clients run, for every case alike:
#                  split (server on the 2nd allowed core, client on the 1st,
#                  as nbdscope's pair does by default), shared (both on the
#                  1st) or os (the scheduler decides; on a 2-core machine
#                  that flips between the two from run to run)
#   QEMU_HEAP=1    run qemu-nbd and qemu-img with glibc's mmap threshold
#                  raised and one arena, so a request's buffer is reused from
#                  the heap. As shipped (0), glibc mmaps a 2 MiB buffer and
#                  unmaps it on free, and the next request faults its pages
#                  in again: qemu-nbd took 1.05M faults for 4 GiB, qemu-img
#                  reading zeroes 530k. Where a fault costs 10-16 µs (a VM
#                  that backs guest memory lazily) that alone held qemu-nbd
#                  at 0.14 GiB/s (29-31 s for 4 GiB, 1.56-1.62 s with the
#                  heap) and qemu-img on zeroes at 0.32 GiB/s (12.6 s, 1.23
#                  s): a comparison of the VM, not of the NBD servers. 0
#                  measures both as shipped.
#   QUICK=1        SIZE=1g REPEAT=1 DURATION=2: about a minute
#   NBDSCOPE=PATH  use this nbdscope binary instead of building one
#   OUT=DIR        keep raw results (raw.tsv, JSON, time files) in DIR
# Needs: go, jq, awk, /usr/bin/time; qemu-utils, libnbd-bin (nbdcopy) and
# nbdkit for the external cases (missing tools skip their cases). Linux only.
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; }

if [ "${QUICK:-0}" = 1 ]; then
	SIZE=${SIZE:-1g} REPEAT=${REPEAT:-1} DURATION=${DURATION:-2}
fi
SIZE=${SIZE:-8g}
REPEAT=${REPEAT:-3}
DURATION=${DURATION:-8}
PLACEMENT=${PLACEMENT:-split}
BUFS=${BUFS:-default 2m}
CONNS=${CONNS:-1 4}
CASES=${CASES:-.}
OUT=${OUT:-}
QEMU_HEAP=${QEMU_HEAP:-1}
# requests in flight per connection: the pair's (nbdscope's default) and
# qemu-img's 8 × 2 MiB; the like-for-like copy loop's reader buffers
inflight=8
qemu_tunables=
if [ "$QEMU_HEAP" = 1 ]; then
	qemu_tunables=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=1073741824:glibc.malloc.arena_max=1
fi
REPORT_ONLY=
while getopts "s:r:d:o:R:h" opt; do
	case $opt in
	R) REPORT_ONLY=$OPTARG ;;
	s) SIZE=$OPTARG ;;
	r) REPEAT=$OPTARG ;;
	d) DURATION=$OPTARG ;;
	o) OUT=$OPTARG ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done

# report RAW: the markdown tables and bars of a raw.tsv
report() {
	echo
	echo "## nbdscope compare"
	echo
	cat "$(dirname "$1")/meta.txt" 2>/dev/null || true
	echo "CPU = user+sys seconds per GiB; calls = read/write system calls per 2 MiB (client: receive, server: send), counted by the process itself; RSS = peak VmHWM."
	echo "× ceiling is against the like-for-like ceiling: of copyloop (huge pages, as the pair's buffers) and copyloop/small (4 KiB pages), the one with the higher median in the run, $inflight reader buffers per connection filled in turn, read as the pair's client reads (non-blocking, waiting on EAGAIN in the netpoller). copyloop/1buf (one cache-hot buffer, blocking reads) is an upper bound no client with requests in flight reaches, shown for reference."
	echo
	awk -F'\t' '
function median(s,   n, a, i, j, t) {
	n = split(s, a, " ")
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
	if (n == 0) return ""
	return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function add(k, v) { if (v != "" && v != "-") vals[k] = vals[k] (vals[k] == "" ? "" : " ") v }
function f(v, p) { return v == "" ? "n/a" : sprintf("%." p "f", v) }
NR == 1 { next }
{
	buf = $1; c = $2; name = $3; rep = $4; secs = $5; by = $6
	g = buf SUBSEP c; key = g SUBSEP name
	if (!(key in seen)) { seen[key] = 1; order[++n] = key }
	gib = by / 1073741824
	tp = gib / secs
	add(key SUBSEP "tp", tp)
	thr[key, rep] = tp
	if ($7 != "-") add(key SUBSEP "ccpu", $7 / gib)
	if ($8 != "-") add(key SUBSEP "scpu", $8 / gib)
	if ($9 != "-") add(key SUBSEP "crecv", $9 / (by / 2097152))
	if ($10 != "-") add(key SUBSEP "ssend", $10 / (by / 2097152))
	if ($11 != "-") add(key SUBSEP "crss", $11 / 1024)
	if ($12 != "-") add(key SUBSEP "srss", $12 / 1024)
	reps[key] = reps[key] " " rep
}
END {
	ceilings()
	print "| send buffer | conns | case | GiB/s | × ceiling | client CPU s/GiB | server CPU s/GiB | client calls/2MiB | server calls/2MiB | client RSS MiB | server RSS MiB |"
	print "|---|---|---|---|---|---|---|---|---|---|---|"
	for (i = 1; i <= n; i++) {
		key = order[i]; split(key, k, SUBSEP); g = k[1] SUBSEP k[2]
		# ratio to the ceiling of the same group and repeat
		split(substr(reps[key], 2), rr, " "); rs = ""
		for (r in rr) if ((g SUBSEP "ceiling", rr[r]) in thr) rs = rs " " thr[key, rr[r]] / thr[g SUBSEP "ceiling", rr[r]]
		ratio[key] = median(substr(rs, 2))
		printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", k[1], k[2], k[3],
			f(median(vals[key SUBSEP "tp"]), 2), f(ratio[key], 2),
			f(median(vals[key SUBSEP "ccpu"]), 3), f(median(vals[key SUBSEP "scpu"]), 3),
			f(median(vals[key SUBSEP "crecv"]), 2), f(median(vals[key SUBSEP "ssend"]), 2),
			f(median(vals[key SUBSEP "crss"]), 0), f(median(vals[key SUBSEP "srss"]), 0)
		med[key, "tp"] = median(vals[key SUBSEP "tp"])
		med[key, "ccpu"] = median(vals[key SUBSEP "ccpu"])
	}
	# pair-by-pair ratio of two cases of one group: median over the repeats
	print ""
	print "### Bars"
	print ""
	bar("2m", 1, "pair", "ceiling", 0.90, "nbdscope pair, 1 connection, 2 MiB buffer ≥ 90% of the like-for-like copy loop (8 buffers in turn, polling reader; huge or 4 KiB pages, whichever had the higher median)")
	bar("default", 1, "pair", "ceiling", 0.90, "the same at the default buffer")
	babar(1)
	ref("2m", 1, "pair", "copyloop/1buf", "for reference, the pair at 2m against the one-buffer blocking loop, an upper bound (not a bar)")
	ref("default", 1, "pair", "copyloop/1buf", "and at the default buffer")
	bar("default", 1, "serve0/qemu-img", "qemu-nbd/qemu-img", 1.0, "qemu-img convert from nbdscope serve --fill 0 ≥ from qemu-nbd null-co (default buffer, both send zeroes)")
	bar("default", 1, "serve/qemu-img", "qemu-nbd/qemu-img", 1.0, "the same with serve'"'"'s default 0xff fill (cheaper for qemu-img to scan)")
	bar("default", 4, "serve/nbdcopy", "nbdkit/nbdcopy", 1.0, "nbdcopy --connections=4 from nbdscope serve ≥ from nbdkit pattern (default buffer)")
	bar("2m", 4, "serve/nbdcopy", "nbdkit/nbdcopy", 1.0, "the same, nbdscope serve at 2 MiB (nbdkit at its default)")
	cpubar()
	rssbar()
}
# babar: the pair B/A (2m against the default buffer) within 10% of the
# copy loop B/A, repeat by repeat: the effect the pair shows is the socket,
# not its own pace at one of the two buffers
function babar(c,   p2, pd, l2, ld, rr, r, rs, v, text) {
	text = "the pair'"'"'s B/A (2m / default) within 10% of the copy loop'"'"'s, " c " connection"
	p2 = "2m" SUBSEP c SUBSEP "pair"; pd = "default" SUBSEP c SUBSEP "pair"
	l2 = "2m" SUBSEP c SUBSEP "ceiling"; ld = "default" SUBSEP c SUBSEP "ceiling"
	if (!(p2 in seen) || !(pd in seen) || !(l2 in seen) || !(ld in seen)) { printf "- %s: not measured\n", text; return }
	split(substr(reps[p2], 2), rr, " "); rs = ""
	for (r in rr) if ((pd, rr[r]) in thr && (l2, rr[r]) in thr && (ld, rr[r]) in thr)
		rs = rs " " (thr[p2, rr[r]] / thr[pd, rr[r]]) / (thr[l2, rr[r]] / thr[ld, rr[r]])
	v = median(substr(rs, 2))
	printf "- %s: %.2f vs %.2f, %.2fx — %s\n", text, med[p2, "tp"] / med[pd, "tp"], med[l2, "tp"] / med[ld, "tp"], v, (v >= 0.9 && v <= 1.1 ? "met" : "NOT met")
}
# ceilings: the pseudo-case "ceiling" of each group: of copyloop (huge
# pages, as the pair'"'"'s buffers) and copyloop/small (4 KiB pages), the
# one with the higher median GiB/s in the run, the fastest honest bare
# loop whichever backing wins on the day (the faster of the two repeat
# by repeat would be the top of two noisy draws, biased up by the noise)
function ceilings(   i, key, k, g, sk, rr, r, tps) {
	for (i = 1; i <= n; i++) {
		key = order[i]; split(key, k, SUBSEP)
		if (k[3] != "copyloop") continue
		g = k[1] SUBSEP k[2]; sk = g SUBSEP "copyloop/small"
		if ((sk in seen) && median(vals[sk SUBSEP "tp"]) > median(vals[key SUBSEP "tp"])) key = sk
		ceilcase[g] = key; tps = ""
		split(substr(reps[key], 2), rr, " ")
		for (r in rr) { thr[g SUBSEP "ceiling", rr[r]] = thr[key, rr[r]]; tps = tps " " thr[key, rr[r]] }
		seen[g SUBSEP "ceiling"] = 1; reps[g SUBSEP "ceiling"] = reps[key]
		med[g SUBSEP "ceiling", "tp"] = median(substr(tps, 2))
	}
}
function bar(buf, c, a, b, min, text,   ka, kb, rs, r, rr, v, kb2) {
	ka = buf SUBSEP c SUBSEP a; kb = buf SUBSEP c SUBSEP b
	if (!(ka in seen)) { printf "- %s: not measured\n", text; return }
	if (!(kb in seen)) {
		kb2 = "default" SUBSEP c SUBSEP b # external servers run in the default group
		if (!(kb2 in seen)) { printf "- %s: not measured\n", text; return }
		v = med[ka, "tp"] / med[kb2, "tp"]
		printf "- %s: %.2fx (medians, different groups) — %s\n", text, v, (v >= min ? "met" : "NOT met")
		return
	}
	split(substr(reps[ka], 2), rr, " "); rs = ""
	for (r in rr) if ((kb, rr[r]) in thr) rs = rs " " thr[ka, rr[r]] / thr[kb, rr[r]]
	v = median(substr(rs, 2))
	printf "- %s: %.2fx (%.2f vs %.2f GiB/s) — %s\n", text, v, med[ka, "tp"], med[kb, "tp"], (v >= min ? "met" : "NOT met")
}
# ref: a ratio like bar'"'"'s, reported without a threshold
function ref(buf, c, a, b, text,   ka, kb, rs, r, rr, v) {
	ka = buf SUBSEP c SUBSEP a; kb = buf SUBSEP c SUBSEP b
	if (!(ka in seen) || !(kb in seen)) { printf "- %s: not measured\n", text; return }
	split(substr(reps[ka], 2), rr, " "); rs = ""
	for (r in rr) if ((kb, rr[r]) in thr) rs = rs " " thr[ka, rr[r]] / thr[kb, rr[r]]
	v = median(substr(rs, 2))
	printf "- %s: %.2fx (%.2f vs %.2f GiB/s)\n", text, v, med[ka, "tp"], med[kb, "tp"]
}
function cpubar(   ka, kb) {
	ka = "default" SUBSEP 1 SUBSEP "qemu-nbd/load"; kb = "default" SUBSEP 1 SUBSEP "qemu-nbd/qemu-img"
	if (!(ka in seen) || !(kb in seen)) { print "- load process CPU s/GiB from qemu-nbd ≤ qemu-img convert from it: not measured"; return }
	printf "- load process CPU s/GiB from qemu-nbd ≤ qemu-img convert from it: %.3f vs %.3f — %s\n", med[ka, "ccpu"], med[kb, "ccpu"], (med[ka, "ccpu"] <= med[kb, "ccpu"] ? "met" : "NOT met")
}
# peak RSS of our processes ≤ connections × in flight × request size + 32 MiB:
# pair and load: 8 × 2 MiB per connection; serve: what its client keeps in
# flight (qemu-img 8 × 2 MiB; nbdcopy 64 × 256 KiB per connection)
function rssbar(   i, key, k, c, lim, v, ok, bad) {
	ok = 1; bad = ""
	for (i = 1; i <= n; i++) {
		key = order[i]; split(key, k, SUBSEP); c = k[2]
		if (k[3] == "pair" || k[3] ~ /\/load$/) lim = c * 16 + 32
		else if (k[3] ~ /^serve0?\/qemu-img$/) lim = 16 + 32
		else if (k[3] == "serve/nbdcopy") lim = c * 16 + 32
		else continue
		v = median(vals[key SUBSEP "crss"])
		if ((k[3] == "pair" || k[3] ~ /\/load$/) && v != "" && v > lim) { ok = 0; bad = bad sprintf(" %s/%s/%s load %.0f MiB > %d;", k[1], c, k[3], v, lim) }
		v = median(vals[key SUBSEP "srss"])
		if ((k[3] == "pair" || k[3] ~ /^serve0?\//) && v != "" && v > lim) { ok = 0; bad = bad sprintf(" %s/%s/%s server %.0f MiB > %d;", k[1], c, k[3], v, lim) }
	}
	printf "- peak RSS of nbdscope processes ≤ connections × in flight × request size + 32 MiB: %s%s\n", (ok ? "met" : "NOT met:"), bad
}
' "$1"
}

if [ -n "$REPORT_ONLY" ]; then
	report "$REPORT_ONLY"
	exit 0
fi

cd "$(dirname "$0")/.."
for t in jq awk bc numfmt /usr/bin/time go; do
	command -v "$t" >/dev/null || { echo "compare.sh: $t is required" >&2; exit 1; }
done

work=$(mktemp -d /tmp/nbdscope-compare.XXXXXX)
if [ -n "$OUT" ]; then mkdir -p "$OUT"; else OUT=$work/out; mkdir -p "$OUT"; fi
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

log() { echo "compare.sh: $*" >&2; }

NBD=${NBDSCOPE:-}
if [ -z "$NBD" ]; then
	go build -o "$work/nbdscope" ./cmd/nbdscope
	NBD=$work/nbdscope
fi
go build -o "$work/copyloop" ./bench/copyloop
bytes=$(numfmt --from=iec "${SIZE^^}")
tck=$(getconf CLK_TCK)
raw=$OUT/raw.tsv
echo -e "buf\tconns\tcase\trep\tseconds\tbytes\tclient_cpu_s\tserver_cpu_s\tclient_recv_calls\tserver_send_calls\tclient_rss_kib\tserver_rss_kib" >"$raw"

# The first two CPUs this shell may use (Cpus_allowed_list: "0-1", "2,5-7").
read -r cpu0 cpu1 < <(awk '/^Cpus_allowed_list:/ {
	n = split($2, r, ","); out = ""; k = 0
	for (i = 1; i <= n && k < 2; i++) {
		if (split(r[i], ab, "-") == 1) ab[2] = ab[1]
		for (c = ab[1]; c <= ab[2] && k < 2; c++) { out = out c " "; k++ }
	}
	print out }' /proc/self/status)
cpu1=${cpu1:-$cpu0}
case $PLACEMENT in
split) srv_pin=(taskset -c "$cpu1") cli_pin=(taskset -c "$cpu0") ;;
shared) srv_pin=(taskset -c "$cpu0") cli_pin=(taskset -c "$cpu0") ;;
os) srv_pin=() cli_pin=() ;;
*) echo "PLACEMENT=$PLACEMENT: want split, shared or os" >&2; exit 2 ;;
esac

have() { command -v "$1" >/dev/null; }
want() { [[ $1 =~ $CASES ]]; }

# record BUF CONNS CASE REP SECONDS BYTES CCPU SCPU CRECV SSEND CRSS SRSS ("-" = not measured)
record() { local IFS=$'\t'; echo "$*" >>"$raw"; }

cpu_ticks() { sed 's/^.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'; }
hwm_kib() { awk '/^VmHWM:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo -; }
now() { date +%s.%N; }

wait_sock() {
	for _ in $(seq 200); do [ -S "$1" ] && return 0; sleep 0.025; done
	log "no socket $1"; return 1
}

# start_server KIND BUF → sets spid, uri
start_server() {
	local sock=$work/s.$RANDOM.sock
	case $1 in
	serve) "${srv_pin[@]}" "$NBD" serve -k "$sock" --backend null --size "$bytes" --sndbuf "$2" 2>/dev/null & ;;
	serve0) "${srv_pin[@]}" "$NBD" serve -k "$sock" --backend null --size "$bytes" --sndbuf "$2" --fill 0 2>/dev/null & ;;
	qemu-nbd) env GLIBC_TUNABLES="$qemu_tunables" "${srv_pin[@]}" qemu-nbd --image-opts "driver=null-co,size=$bytes" -k "$sock" -t -r -e 4 2>/dev/null & ;;
	nbdkit) "${srv_pin[@]}" nbdkit -f -U "$sock" -r pattern "size=$bytes" 2>/dev/null & ;;
	esac
	spid=$!
	pids+=("$spid")
	wait_sock "$sock"
	uri="nbd+unix:///?socket=$sock"
}

stop_server() {
	kill "$spid" 2>/dev/null || true
	wait "$spid" 2>/dev/null || true
}

# client_run KIND CONNS URI TAG: runs an external client under /usr/bin/time
client_run() {
	local tf=$OUT/$4.time
	case $1 in
	qemu-img) GLIBC_TUNABLES="$qemu_tunables" "${cli_pin[@]}" /usr/bin/time -f "%U %S %M" -o "$tf" qemu-img convert -f raw -W -n "$3" --target-image-opts "driver=null-co,size=$bytes" ;;
	nbdcopy) "${cli_pin[@]}" /usr/bin/time -f "%U %S %M" -o "$tf" nbdcopy --connections="$2" "$3" null: ;;
	esac
}

# run_external SERVER CLIENT BUF CONNS REP
run_external() {
	local srv=$1 cl=$2 buf=$3 c=$4 rep=$5 tag="$1-$2-$3-$4-$5" t0 t1 s0 s1
	start_server "$srv" "$buf"
	s0=$(cpu_ticks "$spid")
	t0=$(now)
	if ! client_run "$cl" "$c" "$uri" "$tag" >/dev/null 2>"$OUT/$tag.err"; then
		log "$srv/$cl failed: $(tail -1 "$OUT/$tag.err")"
		stop_server
		return 0
	fi
	t1=$(now)
	s1=$(cpu_ticks "$spid")
	local srss; srss=$(hwm_kib "$spid")
	stop_server
	# time's last line holds the figures (a failing command adds a line first)
	read -r u s m < <(tail -1 "$OUT/$tag.time")
	record "$buf" "$c" "$srv/$cl" "$rep" "$(echo "$t1 - $t0" | bc -l)" "$bytes" \
		"$(echo "$u + $s" | bc -l)" "$(echo "($s1 - $s0) / $tck" | bc -l)" - - "$m" "$srss"
}

# sample_children PID FILE: the last VmHWM of every child of PID, by role
sample_children() {
	local parent=$1 f=$2
	while kill -0 "$parent" 2>/dev/null; do
		for c in $(pgrep -P "$parent" 2>/dev/null); do
			local role h
			role=$({ tr '\0' ' ' <"/proc/$c/cmdline"; } 2>/dev/null | awk '{print $3}') || continue
			h=$(hwm_kib "$c")
			[ -n "$role" ] && [ "$h" != - ] && echo "$c $role $h"
		done >>"$f"
		sleep 0.2
	done
}

# max_hwm FILE ROLE
max_hwm() { awk -v r="$2" '$2 == r && $3 > m {m = $3} END {print (m ? m : "-")}' "$1"; }

# run_nbdscope CASE BUF CONNS REP [TARGET]: `nbdscope run`; with TARGET
# side A reads it (side B: a spawned null server, 1 connection) and only A
# counts; without, both sides are the same pair and both count.
run_nbdscope() {
	local name=$1 buf=$2 c=$3 rep=$4 target=${5:-} tag="$1-$2-$3-$4" args
	tag=${tag//\//_}
	# --consume none: the load process drains the socket like the copy
	# loop's reader and like qemu-img/nbdcopy writing to null, so the
	# rows compare like with like (the explorer's default copies each
	# read once, as a client that uses its data).
	args=(run --duration "${DURATION}s" --json --mode alternate --consume none --placement "$PLACEMENT")
	if [ -n "$target" ]; then
		args+=(--target-a "$target" --connections-a "$c")
	else
		args+=(--sndbuf "$buf" --connections "$c")
	fi
	local s0=- hw=$OUT/$tag.hwm
	: >"$hw"
	[ -n "$target" ] && s0=$(cpu_ticks "$spid")
	"$NBD" "${args[@]}" >"$OUT/$tag.json" 2>"$OUT/$tag.err" &
	local rp=$!
	sample_children "$rp" "$hw" &
	local sp=$!
	if ! wait "$rp"; then
		log "$name failed: $(tail -1 "$OUT/$tag.err")"
		wait "$sp" 2>/dev/null || true
		return 0
	fi
	wait "$sp" 2>/dev/null || true
	local sel='.sides'
	[ -n "$target" ] && sel='[.sides[0]]'
	local j
	j=$(jq -r "$sel"' | map(.summary) | [
		(map(.seconds) | add), (map(.bytes) | add),
		(map(.client.user_s + .client.sys_s) | add),
		(if .[0].server == null then "-" else (map(.server.user_s + .server.sys_s) | add) end),
		(map(.client.recv_calls) | add),
		(if .[0].server == null then "-" else (map(.server.send_calls) | add) end)
	] | @tsv' "$OUT/$tag.json")
	local secs by ccpu scpu crecv ssend
	IFS=$'\t' read -r secs by ccpu scpu crecv ssend <<<"$j"
	if [ -n "$target" ]; then
		scpu=$(echo "($(cpu_ticks "$spid") - $s0) / $tck" | bc -l)
	fi
	local srss=-
	[ -z "$target" ] && srss=$(max_hwm "$hw" server)
	record "$buf" "$c" "$name" "$rep" "$secs" "$by" "$ccpu" "$scpu" "$crecv" "$ssend" "$(max_hwm "$hw" load)" "$srss"
}

# run_copyloop CASE BUF CONNS REP: copyloop (the like-for-like ceiling:
# $inflight buffers per connection, polling reader, huge pages as the
# pair's), copyloop/small (the same on 4 KiB pages), copyloop/block or
# copyloop/1buf (the upper bound)
run_copyloop() {
	local name=$1 buf=$2 c=$3 rep=$4 j mode=(-bufs "$inflight" -reader poll)
	case $name in
	copyloop/block) mode=(-bufs "$inflight" -reader block) ;;
	copyloop/1buf) mode=(-bufs 1 -reader block) ;;
	copyloop/small) mode=(-bufs "$inflight" -reader poll -pages small) ;;
	esac
	j=$("$work/copyloop" -bytes "$bytes" -conns "$c" -sndbuf "$buf" -placement "$PLACEMENT" "${mode[@]}" | tee "$OUT/${name//\//_}-$buf-$c-$rep.json")
	record "$buf" "$c" "$name" "$rep" $(jq -r '[.seconds, .bytes, (.reader.user_s + .reader.sys_s), (.writer.user_s + .writer.sys_s),
		.reader.calls, .writer.calls, .reader.vmhwm_kib, .writer.maxrss_kib] | @tsv' <<<"$j")
}

run_case() {
	local name=$1 buf=$2 c=$3 rep=$4
	log "buf=$buf conns=$c repeat $rep: $name"
	case $name in
	copyloop*) run_copyloop "$name" "$buf" "$c" "$rep" ;;
	pair) run_nbdscope pair "$buf" "$c" "$rep" ;;
	serve/* | serve0/*) run_external "${name%/*}" "${name#*/}" "$buf" "$c" "$rep" ;;
	*/load)
		start_server "${name%/load}" "$buf"
		run_nbdscope "$name" "$buf" "$c" "$rep" "$uri"
		stop_server
		;;
	*/*) run_external "${name%/*}" "${name#*/}" "$buf" "$c" "$rep" ;;
	esac
}

# cases BUF CONNS: the cases of one group, in the order they alternate
cases() {
	local buf=$1 c=$2 l=(copyloop copyloop/small copyloop/block copyloop/1buf pair)
	if have qemu-img && [ "$c" = 1 ]; then
		l+=(serve/qemu-img)
		[ "$buf" = default ] && l+=(serve0/qemu-img qemu-nbd/qemu-img)
		[ "$buf" = default ] && have nbdkit && l+=(nbdkit/qemu-img)
	fi
	if have nbdcopy; then
		l+=(serve/nbdcopy)
		[ "$buf" = default ] && have nbdkit && l+=(nbdkit/nbdcopy)
		[ "$buf" = default ] && have qemu-nbd && l+=(qemu-nbd/nbdcopy)
	fi
	if [ "$buf" = default ]; then
		have qemu-nbd && l+=(qemu-nbd/load)
		have nbdkit && l+=(nbdkit/load)
	fi
	for n in "${l[@]}"; do
		if [[ $n == copyloop* ]] || want "$n"; then echo "$n"; fi
	done
}

for t in qemu-img qemu-nbd nbdcopy nbdkit; do have "$t" || log "$t not installed: its cases are skipped"; done
log "SIZE=$SIZE REPEAT=$REPEAT DURATION=${DURATION}s BUFS=\"$BUFS\" CONNS=\"$CONNS\" PLACEMENT=$PLACEMENT (cpus $cpu0,$cpu1); raw results: $raw"
start=$(date +%s)
for buf in $BUFS; do
	for c in $CONNS; do
		mapfile -t list < <(cases "$buf" "$c")
		for rep in $(seq "$REPEAT"); do
			order=("${list[@]}")
			if [ $((rep % 2)) = 0 ]; then
				order=()
				for ((i = ${#list[@]} - 1; i >= 0; i--)); do order+=("${list[$i]}"); done
			fi
			for n in "${order[@]}"; do run_case "$n" "$buf" "$c" "$rep"; done
		done
	done
done
log "measured in $(($(date +%s) - start)) s"
{
	echo "$(uname -sr), $(nproc) cores ($(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)), $(date -u +%Y-%m-%dT%H:%MZ);" \
		"net.core.wmem_max=$(cat /proc/sys/net/core/wmem_max)."
	echo "SIZE=$SIZE per size-bound run, ${DURATION}s per nbdscope run, median of $REPEAT, placement $PLACEMENT, measured in $(($(date +%s) - start)) s;" \
		"load average at the end: $(cut -d' ' -f1-3 /proc/loadavg) (on a busy machine every figure is noise)."
	if [ "$QEMU_HEAP" = 1 ]; then
		echo "qemu-nbd and qemu-img ran with GLIBC_TUNABLES=$qemu_tunables (request buffers reused from the heap; QEMU_HEAP=0 for both as shipped)."
	else
		echo "qemu-nbd and qemu-img ran as shipped (QEMU_HEAP=0): a request's buffer may be faulted in afresh."
	fi
} >"$OUT/meta.txt"

report "$raw"
