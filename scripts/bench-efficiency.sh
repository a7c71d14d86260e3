#!/usr/bin/env bash
# What the cache keeps: replays the synthetic traces (Zipf, Zipf with a periodic scan, a loop of 1.5x the cache, a
# hot set that moves, a recency-friendly stream), each at three sizes, through the release build's raw API (a fresh
# service per row: --memory-entries N --disk-limit 0 for the memory tier, --memory-entries 1 and a disk budget of N
# files for the disk tier alone), and prints the service's hit ratio beside LRU's, a fixed 1 % window W-TinyLFU's and
# Belady's optimum computed from the same trace (docs/eviction.md). Exits non-zero when a row misses the goal.
# Arguments go to the bench (e.g. --length 50000 --sizes 500 --traces loop --tier memory --eviction lru --jobs 2).
set -euo pipefail
cd "$(dirname "$0")/.."
RELEASE=(-c release --static-swift-stdlib --scratch-path .build-release)
swift build "${RELEASE[@]}" --product unicache 2>&1 | tail -1
swift build "${RELEASE[@]}" --product efficiency-bench 2>&1 | tail -1
exec .build-release/release/efficiency-bench --unicache "$PWD/.build-release/release/unicache" "$@"
