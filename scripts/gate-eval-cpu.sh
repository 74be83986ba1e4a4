#!/usr/bin/env bash
# gate-eval-cpu.sh measures profq diff's gate on real captures (docs/performance.md#gate-evaluation;
# `make gate-eval-cpu`; scripts/gate-eval.sh is profq bench's evaluation):
# it captures testdata/gateapp's benchmark under a background CPU load, with and without
# injected regressions (each capture only if it is missing), then draws random sets of
# captures and runs them through profq diff, counting pass, regression and inconclusive.
#
# Environment: PROFQ_BENCH_DIR (cache, default .bench; captures go to $PROFQ_BENCH_DIR/gate),
# DRAWS (draws per scenario, default 100), RUN (a regexp: only the scenarios it matches),
# LEGACY (a profq binary from before the three verdicts: also run the old recipe's scenarios
# through it, for a before-and-after comparison).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dir=${PROFQ_BENCH_DIR:-$root/.bench}
gate="$dir/gate"
draws=${DRAWS:-100}
mkdir -p "$gate"
cd "$root"

go build -o "$dir/profq" ./cmd/profq
go build -o "$dir/gateeval" ./tools/gateeval/cmd/gateeval
go test -c -o "$gate/gateapp.test" ./testdata/gateapp

# About 25 minutes on a 2-core machine the first time; nothing once every capture exists.
"$dir/gateeval" capture -dir "$gate" -binary "$gate/gateapp.test"

"$dir/gateeval" evaluate -dir "$gate" -profq "$dir/profq" -draws "$draws" -run "${RUN:-}" | tee "$gate/results.md"
if [ -n "${LEGACY:-}" ]; then
	"$dir/gateeval" evaluate -dir "$gate" -profq "$LEGACY" -legacy -draws "$draws" -run "${RUN:-}" | tee "$gate/results-legacy.md"
fi
