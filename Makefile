# The two set-up commands of the README are `make run` and `make test`; each installs the Debian packages
# it needs (when missing) and then calls SwiftPM. `make check` is what CI runs after `make test`.
SHELL := /bin/bash
# redis-server and haproxy: the fleet (`make fleet`, `make fleet-check`) and the shared-tier tests and benchmarks.
# jq and python3: the README tour (jq reads the JSON; scripts/dev-token.py mints test tokens) and `make docs-check`.
APT_PACKAGES := libmicrohttpd-dev redis-server haproxy pkg-config libgnutls28-dev iproute2 curl openssl jq python3
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# The release build `make run`, the conformance and Docker checks, the benchmarks and pressure.sh share (the
# Dockerfile's flags): the Swift runtime and Foundation linked in, so that the resident memory §1 bounds is the
# same wherever the service runs.
RELEASE_FLAGS := -c release --static-swift-stdlib --product unicache --scratch-path .build-release

.PHONY: deps run test build release check tsan openapi alerts ops-check conformance docker-check docs-check fleet fleet-check bench-http bench-cache bench-instructions bench-shared bench-threads bench-stampede bench-efficiency

deps:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

run: release
	"$$(swift build $(RELEASE_FLAGS) --show-bin-path)/unicache" $(ARGS)

build: deps
	swift build

test: deps
	swift test

release: deps
	swift build $(RELEASE_FLAGS)

# Every test under the thread sanitizer (its own build folder), one test at a time: instrumented, the crypto of the
# TLS, JWT and sealing tests starved the live-server tests run beside them past their 10 s header timeout on 2 cores
# (each passes alone); one at a time the run takes about 3 minutes. scripts/tsan-suppressions.txt: known false
# reports in swift-nio, each narrowed to its file, with the reason.
tsan: deps
	TSAN_OPTIONS="suppressions=$(CURDIR)/scripts/tsan-suppressions.txt $${TSAN_OPTIONS:-}" \
		swift test --sanitize=thread --scratch-path .build-tsan --no-parallel

openapi:
	bash scripts/check-openapi.sh

# The alert rules: `promtool check rules` and `promtool test rules deploy/alerts.test.yml` (installs Debian's
# prometheus package, which ships promtool, when missing), and a test and a runbook section for every rule.
alerts:
	bash scripts/check-alerts.sh

conformance: release
	UNICACHE_BIN=$$(swift build $(RELEASE_FLAGS) --show-bin-path)/unicache bash scripts/conformance.sh

# The operator's kit against the release build: the dashboard (a valid dashboard whose expressions parse and name only
# exported metrics), the alert rules' metric names, and `unicache top` in a tmux pane (installs tmux and promtool).
ops-check: release
	UNICACHE_BIN=$$(swift build $(RELEASE_FLAGS) --show-bin-path)/unicache bash scripts/check-ops.sh

docker-check: release
	UNICACHE_BIN=$$(swift build $(RELEASE_FLAGS) --show-bin-path)/unicache bash scripts/check-docker.sh

# Every command of the README and docs/*.md, run as written against the release build (scripts/check-docs.sh says
# how blocks become commands); also every flag of --help documented in docs/configuration.md.
docs-check: release
	UNICACHE_BIN=$$(swift build $(RELEASE_FLAGS) --show-bin-path)/unicache bash scripts/check-docs.sh

# The fleet of compose.fleet.yaml without Docker: Redis, two instances of the release build and HAProxy on free
# loopback ports, until Ctrl-C (ARGS: more flags for every instance, e.g. ARGS="--demo-latency 50ms"). TLS=1: Redis
# speaks TLS only, with a certificate from a CA the script makes, and the instances verify it. SENTINEL=1: a primary,
# a replica and three Sentinels, the instances connecting with redis-sentinel:// (plain TCP only). CLUSTER=1: a Redis
# Cluster of three primaries and three replicas (deploy/redis-cluster.conf), the instances with --redis-cluster (TLS=1
# too: the cluster's bus and replication over TLS as well).
TLS ?= 0
SENTINEL ?= 0
CLUSTER ?= 0
fleet: release
	FLEET_TLS=$(TLS) FLEET_SENTINEL=$(SENTINEL) FLEET_CLUSTER=$(CLUSTER) UNICACHE_BIN=$$(swift build $(RELEASE_FLAGS) --show-bin-path)/unicache bash scripts/fleet.sh $(ARGS)

# Its smoke test: shared hits, an event's invalidation on every instance within 100 ms, one instance killed, Redis
# killed (about 5-20 s; every request and wait in it has its own deadline); over plain TCP, then over TLS, then through
# Sentinel (a primary, a replica, three Sentinels), where a SENTINEL FAILOVER replaces the killed Redis (15-25 s),
# then on a Redis Cluster, plain and over TLS, where a killed primary's replica is promoted (15-25 s each).
fleet-check: release
	UNICACHE_BIN=$$(swift build $(RELEASE_FLAGS) --show-bin-path)/unicache bash scripts/check-fleet.sh
	FLEET_TLS=1 UNICACHE_BIN=$$(swift build $(RELEASE_FLAGS) --show-bin-path)/unicache bash scripts/check-fleet.sh
	FLEET_SENTINEL=1 UNICACHE_BIN=$$(swift build $(RELEASE_FLAGS) --show-bin-path)/unicache bash scripts/check-fleet.sh
	FLEET_CLUSTER=1 UNICACHE_BIN=$$(swift build $(RELEASE_FLAGS) --show-bin-path)/unicache bash scripts/check-fleet.sh
	FLEET_CLUSTER=1 FLEET_TLS=1 UNICACHE_BIN=$$(swift build $(RELEASE_FLAGS) --show-bin-path)/unicache bash scripts/check-fleet.sh

check: openapi alerts conformance ops-check docker-check docs-check fleet-check tsan

bench-http:
	bash scripts/bench-http.sh

bench-cache:
	bash scripts/bench-cache.sh

# What the cache keeps (docs/eviction.md): the service's hit ratios on synthetic traces beside LRU's and the optimum's.
bench-efficiency:
	bash scripts/bench-efficiency.sh

# Instructions per warm hit under callgrind (needs valgrind): the figure that does not drift with the machine.
bench-instructions:
	bash scripts/bench-instructions.sh

# The shared Redis tier (needs redis-server, which `deps` installs): L1 misses from Redis vs disk and nginx's
# proxy_cache hit (nginx-light, installed when missing), a fleet stampede, one instance's against raw libmicrohttpd,
# a dead Redis.
bench-shared: deps
	bash scripts/bench-shared.sh

# A disk hit's and a shared hit's CPU thread by thread, kernel included, from /proc (needs redis-server), beside raw
# libmicrohttpd through the same hand-off with none of unicache's code; PERF=1 adds the frames that tell the two hits
# apart under `perf record` (Debian's linux-perf).
bench-threads: deps
	bash scripts/bench-threads.sh

# One instance's stampede of 1,000 cold requests against raw libmicrohttpd answering 1,000 requests held as long
# (Benchmarks/mhd-baseline's hold mode), in RUNS interleaved rounds (default 5); `make bench-shared` runs it too.
bench-stampede: release
	python3 scripts/bench-stampede.py --bin "$$(swift build $(RELEASE_FLAGS) --show-bin-path)/unicache" --raw --runs $${RUNS:-5}
