#!/usr/bin/env bash
# bench-serve.sh serves the 1.5M-sample synthetic profile (synth-default.pb.gz, made by
# bench-data.sh if missing) with `profq serve` and with `pprof -http`, one after the other,
# and measures for each: the time from the server's start to the first page received
# (profq's first page, the flame graph; pprof's, /ui/, the call graph; and pprof's flame
# graph, /ui/flamegraph), the time to answer a refined view (a focus, then the same view
# again: a reload), the server's peak RSS and its CPU time (user + sys) over the whole
# session, from GNU time. Pages are fetched with curl, as a browser fetches the HTML: the
# browser's own drawing is not counted. The machine's load is printed first.
#
# Environment: PROFQ_BENCH_DIR (cache, default .bench), PPROF (pprof binary, default: on
# PATH or in $(go env GOPATH)/bin), PROFILE (another profile to serve).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dir=${PROFQ_BENCH_DIR:-$root/.bench}
"$root/scripts/bench-data.sh" "$dir"
dir=$(cd "$dir" && pwd)
cd "$root"
profile=${PROFILE:-$dir/synth-default.pb.gz}
pprof=${PPROF:-$(command -v pprof || echo "$(go env GOPATH)/bin/pprof")}
go build -o "$dir/profq" ./cmd/profq

now() { date +%s.%N; }
# fetch URL: the seconds curl took to receive it whole; fails unless 200.
fetch() { curl -sf -o /dev/null -w '%{time_total}' "$1"; }
# first URL START: waits for the server to answer URL, then prints the seconds from START.
first() {
	until curl -sf -o /dev/null "$1"; do sleep 0.05; done
	echo "$(now) - $2" | bc
}

echo "load: $(uptime)"
echo "profile: $profile ($(du -h "$profile" | cut -f1))"

port=$((20000 + RANDOM % 20000))
log=$(mktemp)
start=$(now)
/usr/bin/time -v "$dir/profq" serve --no-browser --http "localhost:$port" "$profile" 2>"$log" &
pid=$!
base=http://localhost:$port
echo "profq serve: first page (flame graph) after $(first "$base/" "$start") s"
echo "profq serve: top after $(fetch "$base/top") s"
echo "profq serve: flame, focus=main.work after $(fetch "$base/flame?focus=main%5C.work") s; again (cached) $(fetch "$base/flame?focus=main%5C.work") s"
echo "profq serve: top, focus=main.work after $(fetch "$base/top?focus=main%5C.work") s"
echo "profq serve: flame, sample_index=1 granularity=lines after $(fetch "$base/flame?sample_index=1&granularity=lines") s"
kill -TERM "$(pgrep -P $pid)"
wait $pid || true
grep -E 'Maximum resident|User time|System time' "$log" | sed 's/^\s*/profq serve: /'

port=$((port + 1))
start=$(now)
/usr/bin/time -v "$pprof" -http "localhost:$port" -no_browser -symbolize=none "$profile" 2>"$log" &
pid=$!
base=http://localhost:$port
echo "pprof -http: first page (/ui/, call graph) after $(first "$base/ui/" "$start") s"
echo "pprof -http: top after $(fetch "$base/ui/top") s"
echo "pprof -http: flame graph after $(fetch "$base/ui/flamegraph") s"
echo "pprof -http: flame graph, f=main.work after $(fetch "$base/ui/flamegraph?f=main%5C.work") s; again $(fetch "$base/ui/flamegraph?f=main%5C.work") s"
echo "pprof -http: top, f=main.work after $(fetch "$base/ui/top?f=main%5C.work") s"
echo "pprof -http: flame graph, si=1 granularity=lines after $(fetch "$base/ui/flamegraph?si=1&g=lines") s"
kill -TERM "$(pgrep -P $pid)"
wait $pid || true
grep -E 'Maximum resident|User time|System time' "$log" | sed 's/^\s*/pprof -http: /'
rm -f "$log"
