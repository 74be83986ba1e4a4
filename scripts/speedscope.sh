#!/usr/bin/env bash
# Installs speedscope's npm package, pinned, into a cache directory outside the repository
# (once) and prints the directory of its built app (dist/release), which profq's browser
# test of `profq convert --to speedscope` serves. PROFQ_CACHE overrides the cache directory.
set -euo pipefail
version=1.25.0
cache="${PROFQ_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/profq}"
dir="$cache/speedscope-$version"
if [ ! -f "$dir/package/dist/release/index.html" ]; then
	mkdir -p "$cache"
	tmp="$(mktemp -d "$cache/speedscope.XXXXXX")"
	(cd "$tmp" && npm pack --silent "speedscope@$version" >/dev/null && tar xzf "speedscope-$version.tgz" && rm "speedscope-$version.tgz")
	rm -rf "$dir"
	mv "$tmp" "$dir"
fi
echo "$dir/package/dist/release"
