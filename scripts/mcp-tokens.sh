#!/usr/bin/env bash
# mcp-tokens.sh [PROFILE] measures what "what is hot in this profile?" costs a model, in
# bytes (and approximate tokens, 4 bytes each): pprof -top's text, profq top's JSON
# unbounded and its table, and the answer of profq mcp's top tool with its defaults (its
# structured content and its text, then the whole JSON-RPC message), and the server's peak
# and idle resident memory and CPU time for that answer (Linux: /proc). PROFILE defaults to
# the benchmark's 1.5M-sample synthetic profile (.bench/synth-default.pb.gz, made by
# scripts/bench-data.sh). Needs pprof (make tools) and jq.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
profile=${1:-$root/.bench/synth-default.pb.gz}
profile=$(cd "$(dirname "$profile")" && pwd)/$(basename "$profile")
work=$(mktemp -d)
trap 'exec 3>&- 2>/dev/null || true; kill "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
(cd "$root" && go build -o "$work/profq" ./cmd/profq)

row() { printf '| %s | %d | %d |\n' "$1" "$2" $((($2 + 3) / 4)); }
echo "| answer | bytes | ~tokens |"
echo "|---|---:|---:|"
row '`pprof -top -symbolize=none`' "$(pprof -top -symbolize=none "$profile" 2>/dev/null | wc -c)"
row '`profq top --format json`' "$("$work/profq" top --format json "$profile" | wc -c)"
row '`profq top`' "$("$work/profq" top "$profile" | wc -c)"

# profq mcp over stdio: initialize, then one call of top with its defaults.
mkfifo "$work/in"
"$work/profq" mcp --root "$(dirname "$profile")" --output-dir "$work" <"$work/in" >"$work/out" 2>/dev/null &
server=$!
exec 3>"$work/in"
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"mcp-tokens","version":"1"}}}' \
	'{"jsonrpc":"2.0","method":"notifications/initialized"}' \
	"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"top\",\"arguments\":{\"profiles\":[\"$(basename "$profile")\"]}}}" >&3
until [ "$(grep -c '"id":2' "$work/out" || true)" -ge 1 ]; do
	kill -0 "$server" 2>/dev/null || { echo "profq mcp ended early" >&2; exit 1; }
	sleep 0.5
done
answer=$(grep '"id":2' "$work/out")
row 'profq mcp `top` (defaults): structured content + text' "$(jq -j '.result | (.structuredContent | tojson) + (.content[0].text)' <<<"$answer" | wc -c)"
row 'profq mcp `top` (defaults): its JSON-RPC message' "$(printf '%s' "$answer" | wc -c)"
# What a session pays once, whatever it asks: the tools' definitions (tools/list).
printf '%s\n' '{"jsonrpc":"2.0","id":3,"method":"tools/list"}' >&3
until [ "$(grep -c '"id":3' "$work/out" || true)" -ge 1 ]; do sleep 0.5; done
row 'profq mcp `tools/list` (once per session): its result' "$(grep '"id":3' "$work/out" | jq -j '.result | tojson' | wc -c)"
# The same with four tools (--tools): a server started for them alone.
mkfifo "$work/in4"
"$work/profq" mcp --tools top,peek,list,diff --root "$(dirname "$profile")" <"$work/in4" >"$work/out4" 2>/dev/null &
server4=$!
exec 4>"$work/in4"
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"mcp-tokens","version":"1"}}}' \
	'{"jsonrpc":"2.0","method":"notifications/initialized"}' '{"jsonrpc":"2.0","id":3,"method":"tools/list"}' >&4
until [ "$(grep -c '"id":3' "$work/out4" || true)" -ge 1 ]; do sleep 0.5; done
row 'profq mcp `--tools top,peek,list,diff`, `tools/list`: its result' "$(grep '"id":3' "$work/out4" | jq -j '.result | tojson' | wc -c)"
exec 4>&-
wait "$server4" || true
jq -r '.result.structuredContent.page.note' <<<"$answer" | sed 's/^/page: /'
# The server's memory once it answered (peak, and what it holds while it waits), and its CPU.
sleep 2
echo "profq mcp: $(grep -E 'VmHWM|VmRSS' "/proc/$server/status" | tr -s ' \t\n' ' ')"
awk -v hz="$(getconf CLK_TCK)" '{printf "profq mcp: user+sys %.2f s\n", ($14 + $15) / hz}' "/proc/$server/stat"
