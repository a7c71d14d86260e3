# The two set-up commands of the README: `make run` and `make test`.
# Each installs the system packages it needs (Debian) and then calls SwiftPM.
SHELL := /bin/bash
APT_PACKAGES := libmicrohttpd-dev pkg-config
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: deps run test build release

deps:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

run: deps
	swift run -c release unicache $(ARGS)

build: deps
	swift build

release: deps
	swift build -c release

test: deps
	swift test
