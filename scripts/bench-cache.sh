#!/usr/bin/env bash
# Benchmarks of the cache core (ordo-one/benchmark, release build), printed as a table.
#   scripts/bench-cache.sh                 # every CacheBenchmarks benchmark
#   scripts/bench-cache.sh --filter 'sync.*'   # extra arguments go to the benchmark plugin
# The sync-hit benchmarks run 1,000 hits (per thread) per iteration: their wall-clock time is per 1,000 hits,
# their throughput (--scale) per hit. The other benchmarks: one get, or one stampede of 1,000 gets, per iteration.
set -euo pipefail
cd "$(dirname "$0")/../Benchmarks"
exec swift package --allow-writing-to-package-directory benchmark \
    --target CacheBenchmarks --scale --time-units nanoseconds --no-progress "$@"
