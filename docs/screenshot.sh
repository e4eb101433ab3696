#!/usr/bin/env bash
# Makes the README's screenshot from the real explorer: runs it under tmux
# at COLSxROWS, lets the charts fill for WAIT seconds, captures the screen
# with its colours and draws it as docs/explorer.svg and docs/explorer.png.
# Needs tmux and rsvg-convert (Debian: librsvg2-bin). Usage:
#   docs/screenshot.sh [extra explorer flags…]
set -euo pipefail
cd "$(dirname "$0")/.."
COLS=${COLS:-120} ROWS=${ROWS:-38} WAIT=${WAIT:-20}
for tool in tmux rsvg-convert; do
	command -v "$tool" >/dev/null || { echo "screenshot: $tool is missing" >&2; exit 1; }
done
tmp=$(mktemp -d)
session="nbdscope-shot-$$"
trap 'tmux kill-session -t "$session" 2>/dev/null || true; rm -rf "$tmp"' EXIT
go build -o "$tmp/nbdscope" ./cmd/nbdscope
go build -o "$tmp/ansisvg" ./internal/cmd/ansisvg
tmux new-session -d -s "$session" -x "$COLS" -y "$ROWS" "$tmp/nbdscope $*"
sleep "$WAIT"
tmux capture-pane -t "$session" -e -p >"$tmp/screen.ansi"
tmux send-keys -t "$session" q
"$tmp/ansisvg" -cols "$COLS" -rows "$ROWS" <"$tmp/screen.ansi" >docs/explorer.svg
rsvg-convert -o docs/explorer.png docs/explorer.svg
echo "wrote docs/explorer.svg and docs/explorer.png ($(stat -c %s docs/explorer.png) bytes)"
