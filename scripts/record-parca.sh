#!/usr/bin/env bash
# record-parca.sh rebuilds the Parca replay fixtures in internal/source/fetch/testdata/parca/.
#
# It builds a real Parca server (github.com/parca-dev/parca/cmd/parca at $PARCA_VERSION,
# from the Go module proxy, outside this repository), builds a small Go workload that
# serves net/http/pprof and burns CPU in named functions and allocates, runs both on
# loopback only (Parca with its default in-memory storage, scraping the workload every
# 10s), waits $SCRAPE_SECONDS so the merges cover several captures, and then records the
# server's HTTP answers with curl: body bytes exactly as served into $OUT, and status,
# Content-Type, method, path and query of every request into $OUT/manifest.json.
#
# NOT run in CI: too slow. A cold build of Parca's ~1800 packages takes tens of minutes
# on two cores (4 minutes here with most dependencies already in the Go build cache; a
# few seconds once built), then about 4 minutes of scraping and recording. Run it by
# hand:
#
#	scripts/record-parca.sh
#
# Environment: PARCA_VERSION (default v0.28.0), PARCA_WORK (build and run directory,
# default /tmp/parca-record), OUT (default internal/source/fetch/testdata/parca),
# SCRAPE_SECONDS (default 150), PARCA_ADDR (default 127.0.0.1:7070), WORKLOAD_ADDR
# (default 127.0.0.1:6061), PPROF (pprof binary for the -raw summaries written to
# $PARCA_WORK/decoded; default: on PATH or in $(go env GOPATH)/bin; skipped if absent).
# Needs go, curl, jq, base64. If the Parca module needs a newer Go than the installed
# one, set GOTOOLCHAIN (e.g. GOTOOLCHAIN=go1.27.3).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
version=${PARCA_VERSION:-v0.28.0}
work=${PARCA_WORK:-/tmp/parca-record}
out=${OUT:-$root/internal/source/fetch/testdata/parca}
scrape_seconds=${SCRAPE_SECONDS:-150}
parca_addr=${PARCA_ADDR:-127.0.0.1:7070}
workload_addr=${WORKLOAD_ADDR:-127.0.0.1:6061}
base=http://$parca_addr

for tool in go curl jq base64; do
	command -v "$tool" >/dev/null || { echo "record-parca: $tool is missing" >&2; exit 1; }
done
mkdir -p "$work/build" "$work/workload" "$work/run" "$work/decoded" "$out"

# 1. Build Parca from its module (niced, one package at a time: the machine is shared).
# The module ships ui/packages/app/web/build/keep.go, so the UI go:embed is satisfied
# without building the web UI (the server then serves no UI pages, only the API).
echo "record-parca: building parca $version in $work/build" >&2
(
	cd "$work/build"
	[ -f go.mod ] || go mod init parcabuild >/dev/null 2>&1
	go get "github.com/parca-dev/parca/cmd/parca@$version"
	GOFLAGS="${GOFLAGS:-} -p=1" nice -n 19 go build -p 1 \
		-ldflags "-X main.version=$version -X main.commit=$version-module" \
		-o "$work/parca" github.com/parca-dev/parca/cmd/parca
)
"$work/parca" --version >&2

# 2. The workload: net/http/pprof on loopback, CPU in hashLoop and fibRecursive,
# allocations in allocBuffers (part of it retained so inuse_space is not zero).
cat >"$work/workload/go.mod" <<'EOF'
module workload

go 1.26
EOF
cat >"$work/workload/main.go" <<'EOF'
// Workload for recording Parca answers: serves net/http/pprof on loopback,
// burns CPU in a few named functions and allocates.
package main

import (
	"flag"
	"log"
	"net/http"
	_ "net/http/pprof"
	"runtime"
	"time"
)

var sink []byte
var keep [][]byte

//go:noinline
func hashLoop(n int) uint64 {
	var h uint64 = 1469598103934665603
	for i := 0; i < n; i++ {
		h ^= uint64(i)
		h *= 1099511628211
	}
	return h
}

//go:noinline
func fibRecursive(n int) int {
	if n < 2 {
		return n
	}
	return fibRecursive(n-1) + fibRecursive(n-2)
}

//go:noinline
func allocBuffers(n int) {
	for i := 0; i < n; i++ {
		sink = make([]byte, 64<<10)
	}
	// Retain a bounded set so inuse_space is non-zero.
	keep = append(keep, make([]byte, 256<<10))
	if len(keep) > 64 {
		keep = keep[1:]
	}
}

//go:noinline
func cpuWorker() {
	var acc uint64
	for {
		acc += hashLoop(2_000_000)
		acc += uint64(fibRecursive(24))
		allocBuffers(50)
		time.Sleep(2 * time.Millisecond)
	}
}

func main() {
	addr := flag.String("addr", "127.0.0.1:6061", "listen address (loopback)")
	flag.Parse()
	runtime.SetMutexProfileFraction(5)
	runtime.SetBlockProfileRate(100000)
	go cpuWorker()
	log.Fatal(http.ListenAndServe(*addr, nil))
}
EOF
(cd "$work/workload" && nice -n 19 go build -p 1 -o workload .)

# 3. Parca's config: the default pprof scrape (allocs as "memory", block, goroutine,
# mutex, and /debug/pprof/profile as the delta "process_cpu") of the workload every 10s.
# object_storage is required by the config; profiles stay in memory (no
# --enable-persistence), debuginfo goes to the filesystem bucket.
rm -rf "$work/run/data" "$work/run/debuginfo-cache"
cat >"$work/run/parca.yaml" <<EOF
object_storage:
  bucket:
    type: "FILESYSTEM"
    config:
      directory: "$work/run/data"

scrape_configs:
  - job_name: "workload"
    scrape_interval: "10s"
    static_configs:
      - targets: ["$workload_addr"]
        labels:
          env: "recording"
EOF

pids=()
cleanup() {
	for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
	for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT

# Refuse to record from some other server already on these addresses.
for addr in "$parca_addr" "$workload_addr"; do
	if curl -s -o /dev/null --max-time 2 "http://$addr/"; then
		echo "record-parca: $addr is already in use; stop it or set PARCA_ADDR/WORKLOAD_ADDR" >&2
		exit 1
	fi
done

start=$(date -u +%Y-%m-%dT%H:%M:%SZ)
"$work/workload/workload" -addr "$workload_addr" >"$work/run/workload.log" 2>&1 &
pids+=($!)
# --debuginfod-upstream-servers= : no upstream symbol servers (loopback only; Go
# profiles arrive symbolized anyway).
"$work/parca" --config-path="$work/run/parca.yaml" --http-address="$parca_addr" \
	--storage-path="$work/run/data" --debuginfo-cache-dir="$work/run/debuginfo-cache" \
	--debuginfod-upstream-servers= >"$work/run/parca.log" 2>&1 &
pids+=($!)

echo "record-parca: waiting for the first process_cpu capture" >&2
for _ in $(seq 1 60); do
	for pid in "${pids[@]}"; do
		kill -0 "$pid" 2>/dev/null || { echo "record-parca: process $pid exited; see $work/run/*.log" >&2; exit 1; }
	done
	if curl -sf "$base/api/profiles/types" 2>/dev/null | grep -q process_cpu; then break; fi
	sleep 2
done
curl -sf "$base/api/profiles/types" | grep -q process_cpu || {
	echo "record-parca: no process_cpu profile after 120s; see $work/run/parca.log" >&2
	exit 1
}
echo "record-parca: letting parca scrape for ${scrape_seconds}s" >&2
sleep "$scrape_seconds"
for pid in "${pids[@]}"; do
	kill -0 "$pid" 2>/dev/null || { echo "record-parca: process $pid exited; see $work/run/*.log" >&2; exit 1; }
done
end=$(date -u +%Y-%m-%dT%H:%M:%SZ)
# A capture is stamped with the time its scrape began, and a 10s CPU profile is stored
# only when it ends: wait until every capture stamped before $end is in, so the answers
# below do not change between requests.
sleep 25

# 4. Record. rec NAME METHOD PATH [curl -G --data-urlencode args...]: body to $out/NAME
# as served, one manifest line to $work/manifest.jsonl.
rm -f "$out"/*.json "$out"/*.txt "$work/manifest.jsonl"
rec() {
	local name=$1 method=$2 path=$3
	shift 3
	local meta
	meta=$(curl -sS -G -X "$method" -o "$out/$name" \
		-w '%{http_code}\n%{content_type}\n%{url_effective}\n' "$base$path" "$@")
	local status ctype url
	{ read -r status; read -r ctype; read -r url; } <<<"$meta"
	local pathq=${url#"$base"}
	local query=""
	case $pathq in *\?*) query=${pathq#*\?} ;; esac
	# The decoded parameters, in request order, from the --data-urlencode key=value args.
	local params='[]' a
	while [ $# -gt 0 ]; do
		a=$1
		shift
		if [ "$a" = --data-urlencode ]; then
			params=$(jq -c --arg kv "$1" '. + [{key: ($kv | sub("=.*$"; "")), value: ($kv | sub("^[^=]*="; ""))}]' <<<"$params")
			shift
		fi
	done
	jq -nc --arg name "$name" --arg method "$method" --arg path "${pathq%%\?*}" \
		--arg query "$query" --argjson params "$params" --arg status "$status" --arg ctype "$ctype" '{
			body: $name, method: $method, path: $path, query: $query, params: $params,
			status: ($status | tonumber), content_type: $ctype
		}' >>"$work/manifest.jsonl"
	echo "record-parca: $status $method $pathq -> $name" >&2
}

cpu='process_cpu:cpu:nanoseconds:cpu:nanoseconds:delta'
cpu_samples='process_cpu:samples:count:cpu:nanoseconds:delta'
alloc='memory:alloc_space:bytes:space:bytes'
inuse='memory:inuse_space:bytes:space:bytes'
merge() { # merge NAME QUERY START END [extra curl args]
	local name=$1 query=$2 s=$3 e=$4
	shift 4
	rec "$name" GET /api/profiles/query --data-urlencode mode=MODE_MERGE \
		--data-urlencode "merge.query=$query" --data-urlencode "merge.start=$s" \
		--data-urlencode "merge.end=$e" --data-urlencode reportType=REPORT_TYPE_PPROF "$@"
}

# Profile types, label names, label values.
rec types.json GET /api/profiles/types
rec types-window.json GET /api/profiles/types --data-urlencode "start=$start" --data-urlencode "end=$end"
rec labels.json GET /api/profiles/labels
rec labels-cpu.json GET /api/profiles/labels --data-urlencode "profile_type=$cpu" \
	--data-urlencode 'match=job="workload"' --data-urlencode "start=$start" --data-urlencode "end=$end"
rec values-job.json GET /api/profiles/labels/job/values
rec values-instance.json GET /api/profiles/labels/instance/values
rec values-job-cpu.json GET /api/profiles/labels/job/values --data-urlencode "profile_type=$cpu" \
	--data-urlencode "start=$start" --data-urlencode "end=$end"
rec values-unknown-label.json GET /api/profiles/labels/nosuchlabel/values
rec has-profile-data.json GET /api/profiles/has_profile_data

# Merges in pprof format over the whole scrape window.
merge query-merge-cpu.json "$cpu{job=\"workload\"}" "$start" "$end"
merge query-merge-cpu-samples.json "$cpu_samples{job=\"workload\"}" "$start" "$end"
merge query-merge-memory-alloc-space.json "$alloc{job=\"workload\"}" "$start" "$end"
merge query-merge-memory-inuse-space.json "$inuse{}" "$start" "$end"
# The same CPU merge with numeric enums and the proto (snake_case) field name.
rec query-merge-cpu-numeric-enums.json GET /api/profiles/query --data-urlencode mode=2 \
	--data-urlencode "merge.query=$cpu{job=\"workload\"}" --data-urlencode "merge.start=$start" \
	--data-urlencode "merge.end=$end" --data-urlencode report_type=1

# The captures in the window, one point per capture (step below the scrape interval):
# shows how many captures each merge summed, and that memory (allocs) captures are
# cumulative.
rec query-range-cpu.json GET /api/profiles/query_range --data-urlencode "query=$cpu{job=\"workload\"}" \
	--data-urlencode "start=$start" --data-urlencode "end=$end" --data-urlencode step=1s
rec query-range-memory-alloc-space.json GET /api/profiles/query_range \
	--data-urlencode "query=$alloc{job=\"workload\"}" \
	--data-urlencode "start=$start" --data-urlencode "end=$end" --data-urlencode step=1s

# Empty results: a window with no data, a selector that matches nothing, a type never stored.
merge query-empty-window.json "$cpu{job=\"workload\"}" 2020-01-01T00:00:00Z 2020-01-01T01:00:00Z
merge query-no-match.json "$cpu{job=\"nosuchjob\"}" "$start" "$end"
merge query-unknown-type.json 'nosuch:samples:count:cpu:nanoseconds{}' "$start" "$end"

# Errors.
merge error-bad-selector.json "$cpu{job=}" "$start" "$end"
merge error-no-profile-type.json '{job="workload"}' "$start" "$end"
merge error-profile-type-form.json 'process_cpu{job="workload"}' "$start" "$end"
merge error-bad-time.json "$cpu{}" yesterday "$end"
merge error-end-before-start.json "$cpu{}" "$end" "$start"
rec error-missing-start.json GET /api/profiles/query --data-urlencode mode=MODE_MERGE \
	--data-urlencode "merge.query=$cpu{}" --data-urlencode "merge.end=$end" \
	--data-urlencode reportType=REPORT_TYPE_PPROF
rec error-bad-mode.json GET /api/profiles/query --data-urlencode mode=MODE_BOGUS \
	--data-urlencode "merge.query=$cpu{}" --data-urlencode "merge.start=$start" \
	--data-urlencode "merge.end=$end" --data-urlencode reportType=REPORT_TYPE_PPROF
rec error-missing-mode.json GET /api/profiles/query \
	--data-urlencode "merge.query=$cpu{}" --data-urlencode "merge.start=$start" \
	--data-urlencode "merge.end=$end" --data-urlencode reportType=REPORT_TYPE_PPROF
rec error-labels-bad-profile-type.json GET /api/profiles/labels --data-urlencode profile_type=process_cpu
rec error-types-bad-time.json GET /api/profiles/types --data-urlencode start=bad --data-urlencode "end=$end"
rec error-not-found-api.txt GET /api/profiles/nosuchendpoint
rec error-not-found.txt GET /nosuchpath
rec error-method-post.json POST /api/profiles/types

jq -s --arg version "$version" --arg wstart "$start" --arg wend "$end" \
	--arg base "$base" '{
		parca_version: $version, server: $base,
		window: {start: $wstart, "end": $wend},
		recordings: .
	}' "$work/manifest.jsonl" >"$out/manifest.json"

# 5. Decoded summaries of the pprof answers (for the README; not written to $out).
pprof=${PPROF:-$(command -v pprof || echo "$(go env GOPATH)/bin/pprof")}
for f in "$out"/query-*.json; do
	n=$(basename "$f" .json)
	jq -r '.pprof // empty' "$f" | base64 -d >"$work/decoded/$n.pb.gz"
	[ -s "$work/decoded/$n.pb.gz" ] || continue
	if [ -x "$pprof" ]; then "$pprof" -raw "$work/decoded/$n.pb.gz" >"$work/decoded/$n.raw.txt" 2>&1 || true; fi
done
echo "record-parca: wrote $(jq '.recordings | length' "$out/manifest.json") recordings to $out (window $start .. $end)" >&2
