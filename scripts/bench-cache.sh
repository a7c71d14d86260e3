#!/usr/bin/env bash
# Benchmarks of the cache core (ordo-one/benchmark, release build), printed as a table.
#   scripts/bench-cache.sh                 # every CacheBenchmarks benchmark
#   scripts/bench-cache.sh --filter 'sync.*'   # extra arguments go to the benchmark plugin
# Figures are per operation: the sync-hit benchmarks run 1,000 hits per iteration and are scaled (--scale).
set -euo pipefail
cd "$(dirname "$0")/../Benchmarks"
exec swift package --allow-writing-to-package-directory benchmark \
    --target CacheBenchmarks --scale --time-units nanoseconds --no-progress "$@"
