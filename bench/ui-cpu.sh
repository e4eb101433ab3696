#!/usr/bin/env bash
# Measures the CPU the explorer's own process (the controller: the UI and
# the pair's bookkeeping; it moves no data) uses while the pair runs, and
# its children's (the servers and load processes) for comparison.
#
# Starts `nbdscope` (default preset) in a private tmux server at 160x48,
# lets it run WARMUP+MEASURE seconds and reads utime+stime from
# /proc/PID/stat of the controller (the tmux pane's process) and of each
# child at WARMUP and at WARMUP+MEASURE seconds. Prints the percentage of
# one core each used over the MEASURE seconds, and the controller's
# wake-ups a second (the voluntary context switches of all its threads,
# from /proc/PID/task/*/status): a count, which the machine's load moves
# far less than the CPU share. The target for the
# controller is ≤ 1% of one core (issue 36); the header of the explorer
# shows the same figure itself ("nbdscope 0.6%").
#
# What the controller spends it on: run `NBDSCOPE_CPUPROFILE=FILE nbdscope`
# and `go tool pprof -top BINARY FILE` (bench/README, "The controller's
# own CPU": a third drawing frames, a sixth each the fill sampler and the
# look for the sides' connections).
#
# Usage: bench/ui-cpu.sh [BINARY [FLAG...]]   (default: build ./cmd/nbdscope;
# FLAGs go to the explorer, e.g. --fill-source kernel)
# Environment: WARMUP (default 10), MEASURE (default 20), COLS, ROWS.
# Linux only (/proc). Needs tmux.
set -euo pipefail
WARMUP=${WARMUP:-10}
MEASURE=${MEASURE:-20}
COLS=${COLS:-160}
ROWS=${ROWS:-48}
cd "$(dirname "$0")/.."
command -v tmux >/dev/null || { echo "ui-cpu: tmux not installed" >&2; exit 1; }
[ -d /proc/self ] || { echo "ui-cpu: needs /proc (Linux)" >&2; exit 1; }

dir=$(mktemp -d /tmp/nbuicpu.XXXXXX) # not /tmp/nbdscope-*, which is what nbdscope's socket directories look like
sock="nbdscope-uicpu-$$"
sockpath=""
cleanup() {
	if tmux -L "$sock" has-session 2>/dev/null; then
		tmux -L "$sock" send-keys -t s q 2>/dev/null || true
		for _ in $(seq 50); do tmux -L "$sock" has-session 2>/dev/null || break; sleep 0.1; done
		tmux -L "$sock" kill-server 2>/dev/null || true
	fi
	[ -n "$sockpath" ] && rm -f "$sockpath"
	rm -rf "$dir"
}
trap cleanup EXIT

bin=${1:-}
[ $# -gt 0 ] && shift
args=""
for a in "$@"; do args="$args '$a'"; done
if [ -z "$bin" ]; then
	bin="$dir/nbdscope"
	go build -o "$bin" ./cmd/nbdscope
fi
bin=$(realpath "$bin")

# exec: the pane's process is nbdscope itself, not a shell.
env -u TMUX tmux -L "$sock" -f /dev/null new-session -d -s s -x "$COLS" -y "$ROWS" "exec '$bin'$args"
pid=$(tmux -L "$sock" display -p -t s '#{pane_pid}')
sockpath=$(tmux -L "$sock" display -p -t s '#{socket_path}')
# The pane's shell execs nbdscope: wait for it (up to 5 s).
for _ in $(seq 50); do
	[ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$bin" ] && break
	sleep 0.1
done
[ "$(readlink "/proc/$pid/exe")" = "$bin" ] || { echo "ui-cpu: pane process $pid is not $bin" >&2; exit 1; }
hz=$(getconf CLK_TCK)

# ticks PID → utime+stime in clock ticks (fields 14 and 15; the command
# name in field 2 may hold spaces, so count from the last ')').
ticks() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | awk '{print $12 + $13}'; }
# children PID → the PIDs whose parent is PID.
children() {
	local f
	for f in /proc/[0-9]*/stat; do
		sed 's/.*) //' "$f" 2>/dev/null | awk -v p="$1" -v f="$f" '$2 == p { split(f, a, "/"); print a[3] }'
	done
}
role() { tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | awk '{print $3}'; }
sockname() { tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -o '[AB]\.sock' | head -1 | cut -c1; }
now() { date +%s.%N; }
# wakes PID → the voluntary context switches of all its threads (each a
# sleep and a wake-up), a count that does not depend on the machine's load.
wakes() { cat /proc/"$1"/task/*/status 2>/dev/null | awk '/^voluntary_ctxt_switches/ {n += $2} END {print n}'; }

sleep "$WARMUP"
kids=$(children "$pid")
t0=$(now); c0=$(ticks "$pid"); v0=$(wakes "$pid")
declare -A k0
for k in $kids; do k0[$k]=$(ticks "$k"); done
sleep "$MEASURE"
t1=$(now); c1=$(ticks "$pid"); v1=$(wakes "$pid")
[ -n "$c1" ] || { echo "ui-cpu: nbdscope exited during the run" >&2; exit 1; }
wall=$(echo "$t1 - $t0" | bc -l)
pct() { echo "100 * ($2 - $1) / $hz / $wall" | bc -l | xargs printf '%.1f'; }

printf 'nbdscope explorer at %sx%s, %s s after %s s of warm-up, %s cores\n' "$COLS" "$ROWS" "$(printf %.1f "$wall")" "$WARMUP" "$(nproc)"
printf '%-28s %6s%% of one core\n' "controller (UI, pid $pid)" "$(pct "$c0" "$c1")"
printf '%-28s %6s a second\n' "  its wake-ups" "$(echo "($v1 - $v0) / $wall" | bc -l | xargs printf '%.0f')"
tot0=0; tot1=0
for k in $kids; do
	k1=$(ticks "$k")
	if [ -z "$k1" ]; then echo "  child $k exited during the run"; continue; fi
	printf '  %-26s %6s%%\n' "$(sockname "$k") $(role "$k") (pid $k)" "$(pct "${k0[$k]}" "$k1")"
	tot0=$((tot0 + k0[$k])); tot1=$((tot1 + k1))
done
printf '%-28s %6s%% of one core\n' "children (total)" "$(pct "$tot0" "$tot1")"
