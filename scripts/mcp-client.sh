#!/usr/bin/env bash
# Installs the MCP client of profq's end-to-end test (internal/cli/mcp_e2e_test.go): the
# official TypeScript SDK (@modelcontextprotocol/sdk), pinned with every dependency by
# testdata/mcp/package.json and package-lock.json, into a cache directory outside the
# repository (once), and prints that directory. PROFQ_CACHE overrides the cache directory.
set -euo pipefail
cd "$(dirname "$0")/.."
lock="testdata/mcp/package-lock.json"
version="$(sha256sum "$lock" | cut -c1-12)"
cache="${PROFQ_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/profq}"
dir="$cache/mcp-client-$version"
if [ ! -f "$dir/node_modules/@modelcontextprotocol/sdk/package.json" ]; then
	mkdir -p "$cache"
	tmp="$(mktemp -d "$cache/mcp-client.XXXXXX")"
	cp testdata/mcp/package.json "$lock" "$tmp/"
	(cd "$tmp" && npm ci --silent --no-audit --no-fund --ignore-scripts >/dev/null)
	rm -rf "$dir"
	mv "$tmp" "$dir"
fi
echo "$dir"
