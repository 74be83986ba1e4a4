#!/usr/bin/env bash
# mcp-conformance.sh [PORT] runs the MCP conformance suite's server scenarios
# (@modelcontextprotocol/conformance, pinned below, installed once into a cache directory
# outside the repository) against profq mcp over Streamable HTTP on 127.0.0.1:PORT (default
# 18765), with testdata/ as its root, and prints the suite's summary. docs/agents.md says
# which scenarios apply to profq and what they gave.
#
# 0.1.13 is the last version that runs on Node.js 20 (later ones import fs.globSync, Node 22).
set -euo pipefail
version=0.1.13
port=${1:-18765}
root=$(cd "$(dirname "$0")/.." && pwd)
cache="${PROFQ_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/profq}"
dir="$cache/mcp-conformance-$version"
if [ ! -f "$dir/node_modules/@modelcontextprotocol/conformance/package.json" ]; then
	mkdir -p "$cache"
	tmp="$(mktemp -d "$cache/mcp-conformance.XXXXXX")"
	(cd "$tmp" && npm install --silent --no-audit --no-fund --ignore-scripts "@modelcontextprotocol/conformance@$version" >/dev/null)
	rm -rf "$dir"
	mv "$tmp" "$dir"
fi
work=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
(cd "$root" && go build -o "$work/profq" ./cmd/profq)
mkdir "$work/out"
"$work/profq" mcp --http "127.0.0.1:$port" --root "$root/testdata" --output-dir "$work/out" 2>"$work/server.log" &
server=$!
for _ in $(seq 50); do
	grep -q serving "$work/server.log" && break
	sleep 0.2
done
cd "$work"
node "$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js" server --url "http://127.0.0.1:$port/mcp" -o "$work/results" >"$work/run.txt" 2>&1 || true
sed -n '/=== SUMMARY ===/,$p' "$work/run.txt"
for d in "$work"/results/*; do
	jq -r --arg s "$(basename "$d")" '.[] | select(.status == "FAILURE") | "\($s): \(.errorMessage)"' "$d/checks.json" 2>/dev/null || true
done
