#!/bin/sh
# Writes one `make check`'s output into README.md: the block under "## What
# `make check` shows" and the count and time of the sentence below it.
# TestReadmeTable (cmd/check) fails when the two differ from the catalogue.
#   make readme
set -eu
cd "$(dirname "$0")/.."
out=$(mktemp)
bin=$(mktemp)
trap 'rm -f "$out" "$bin" README.md.new' EXIT INT TERM
# Built first, so that the time is the catalogue's, not the compiler's.
go build -o "$bin" ./cmd/check
start=$(date +%s.%N)
if ! "$bin" -backend "${BACKEND:-local}" >"$out"; then
	echo "readme-table: make check did not end with every run as expected; README.md left as it was:" >&2
	tail -3 "$out" >&2
	exit 1
fi
secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
runs=$(sed -n 's/^\([0-9]*\) runs, [0-9]* as expected$/\1/p' "$out")
awk -v out="$out" -v runs="$runs" -v secs="$secs" '
	/^## What `make check` shows$/ { print; inblock = 1; next }
	inblock == 1 && /^```$/ { print; while ((getline line < out) > 0) print line; inblock = 2; next }
	inblock == 2 && /^```$/ { print; inblock = 3; next }
	inblock == 2 { next }
	inblock == 3 && /^[0-9]+ runs in [0-9.]+ s\./ { sub(/^[0-9]+ runs in [0-9.]+ s\./, runs " runs in " secs " s."); inblock = 4 }
	{ print }
' README.md >README.md.new
mv README.md.new README.md
echo "readme-table: README.md shows $runs runs, made in $secs s"
