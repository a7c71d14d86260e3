# syntax=docker/dockerfile:1
# unicache: a small, non-root image. Build: `docker build -t unicache .`
# scripts/check-docker.sh lints this file (hadolint) and proves that every shared library the binary needs is
# provided by a package the runtime stage installs (or by libc6, which debian:bookworm-slim ships).

# ---- build: the official Swift image on Debian 12 (same Swift as CI: 6.3.1) -------------------------------
FROM swift:6.3.1-bookworm AS build
# libmicrohttpd's headers, and pkg-config, without which SwiftPM cannot find Debian's multiarch .pc file.
# (libmicrohttpd-dev brings libgnutls28-dev, whose GnuTLS the shim calls to check a --tls-cert/--tls-key pair.)
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      libmicrohttpd-dev=0.9.75-6 \
      pkg-config=1.8.1-1 \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Resolve dependencies in their own layer so that a source change does not fetch them again.
COPY Package.swift ./
RUN swift package resolve
COPY Sources ./Sources
COPY Tests ./Tests
# Package.swift names the benchmark executables' folders: the manifest does not load without them.
COPY Benchmarks/HTTPBenchServer ./Benchmarks/HTTPBenchServer
COPY Benchmarks/AccessBench ./Benchmarks/AccessBench
# The Swift runtime and Foundation are linked statically; libmicrohttpd (LGPL) stays a shared library;
# Redis (TLS included) is Swift on SwiftNIO, BoringSSL built in by swift-nio-ssl.
# SwiftPM resource bundles (*.resources), if a target ever has some, must sit next to the executable.
RUN swift build -c release --static-swift-stdlib --product unicache \
 && bin="$(swift build -c release --static-swift-stdlib --show-bin-path)" \
 && install -D -m 0755 "$bin/unicache" /out/unicache \
 && find "$bin" -maxdepth 1 -name '*.resources' -exec cp -R {} /out/ \;

# ---- runtime ----------------------------------------------------------------------------------------------
FROM debian:bookworm-slim
# Its glibc (2.36) applies the binary's packed relocations (RELR, Package.swift); an older glibc refuses the binary.
# Only what `ldd unicache` needs beyond libc (libmicrohttpd12 brings gnutls & co. as its own dependencies; HTTPS
# needs nothing more: libmicrohttpd serves it with that GnuTLS),
# plus the CA bundle for https upstreams. No tzdata: Foundation's time zones come from the ICU data built into
# the binary. Versions are bookworm's current ones; check-docker.sh says when a pin no longer matches.
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      libmicrohttpd12=0.9.75-6 \
      libstdc++6=12.2.0-14+deb12u1 \
      libgcc-s1=12.2.0-14+deb12u1 \
      zlib1g=1:1.2.13.dfsg-1+deb12u1 \
      ca-certificates=20250419~deb12u2 \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 unicache \
 && useradd --system --no-log-init --uid 10001 --gid 10001 --home-dir /nonexistent --no-create-home \
      --shell /usr/sbin/nologin unicache \
 && install -d -o 10001 -g 10001 -m 0700 /data
COPY --from=build /out/ /usr/local/bin/
# Access (--auth): the image listens on 0.0.0.0, where protected mode would refuse every client outside the
# container (published ports arrive from the bridge, not loopback). It asks a bearer JWT instead and fails closed:
# without UNICACHE_JWT_JWKS (a mounted JWKS file or an https URL) and UNICACHE_JWT_AUDIENCE (the aud your identity
# provider mints this service's tokens for) it stops at start-up naming the flag. On a network where anyone who
# reaches the port may read everyone's data, choose that with -e UNICACHE_AUTH=none. The admin token is best given
# as a mounted file (-e UNICACHE_ADMIN_TOKEN_FILE=/run/secrets/admin-token, mode 600 or 400, owned by uid 10001).
ENV UNICACHE_HOST=0.0.0.0 \
    UNICACHE_PORT=8080 \
    UNICACHE_DATA_DIR=/data \
    UNICACHE_AUTH=jwt
VOLUME ["/data"]
USER 10001:10001
EXPOSE 8080
STOPSIGNAL SIGTERM
# `unicache healthcheck` GETs /healthz with its own socket client (no curl in the image); for host 0.0.0.0
# it connects to 127.0.0.1. Plain HTTP by default: TLS belongs to whoever has a certificate for the name clients
# dial (often a proxy or ingress in front). To serve HTTPS here, mount a certificate and key and name them, e.g.
#   docker run -v "$PWD/tls:/tls:ro" -e UNICACHE_TLS_CERT=/tls/cert.pem -e UNICACHE_TLS_KEY=/tls/key.pem …
# (the key readable by uid 10001); the healthcheck reads the same UNICACHE_TLS_CERT and checks over HTTPS.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 CMD ["unicache", "healthcheck"]
ENTRYPOINT ["unicache"]
