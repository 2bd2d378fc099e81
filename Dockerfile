# The gateway (default target) and the cloud service (`--target cloud`), on the pinned Deno.
# Dependencies are installed at build time, so the image starts without network access.
#   docker build -t healthcare-gateway .
#   docker run -p 8080:8080 -v gw-config:/etc/gateway -v gw-data:/var/lib/gateway healthcare-gateway

FROM node:20-bookworm-slim AS build
WORKDIR /app
ENV DENO_DIR=/app/.deno-cache DENO_NO_UPDATE_CHECK=1
# The pinned Deno comes from npm (package.json); its binary is copied out below.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY deno.json deno.lock ./
COPY shared shared
COPY gateway gateway
COPY cloud cloud
# npm dependencies of deno.json into node_modules (nodeModulesDir: auto), then checked offline.
RUN node_modules/.bin/deno install --frozen \
  && node_modules/.bin/deno cache --frozen gateway/main.ts cloud/main.ts \
  && cp node_modules/@deno/linux-x64-glibc/deno /usr/local/bin/deno

FROM debian:bookworm-slim AS base
RUN useradd --system --uid 10001 --home-dir /var/lib/gateway --shell /usr/sbin/nologin gateway \
  && mkdir -p /etc/gateway /var/lib/gateway \
  && chown gateway:gateway /var/lib/gateway
COPY --from=build /usr/local/bin/deno /usr/local/bin/deno
WORKDIR /app
COPY --from=build --chown=root:root /app /app
# Deno may refresh its transpile cache at run time: that one directory is the user's.
RUN chown -R gateway:gateway /app/.deno-cache
ENV DENO_NO_UPDATE_CHECK=1 DENO_DIR=/app/.deno-cache MALLOC_MMAP_THRESHOLD_=65536

FROM base AS cloud
USER gateway
EXPOSE 8000
VOLUME ["/var/lib/gateway"]
# Every address of the container's own network: a loopback base URL (compose's default) would
# otherwise bind 127.0.0.1 only (development mode), which no published port reaches.
ENTRYPOINT ["deno", "run", "--node-modules-dir=manual", "--v8-flags=--enable-experimental-regexp-engine,--enable-experimental-regexp-engine-on-excessive-backtracks", "--allow-net", "--allow-read", "--allow-write", "--allow-env", "--unstable-kv", "--unstable-no-legacy-abort", "cloud/main.ts", "--data-dir", "/var/lib/gateway/cloud", "--hostname", "0.0.0.0"]

FROM base AS gateway
COPY deploy/container/gateway.toml /etc/gateway/gateway.toml
USER gateway
# The data listener of the default configuration; the management API stays on the loopback.
EXPOSE 8080
VOLUME ["/etc/gateway", "/var/lib/gateway"]
# SIGTERM (docker stop) drains in-flight requests, writes the audit trail, stops the queues.
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
  CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/9090 && printf 'GET /healthz HTTP/1.0\\r\\nHost: localhost\\r\\n\\r\\n' >&3 && head -n1 <&3 | grep -q ' 200 '"]
ENTRYPOINT ["deno", "run", "--node-modules-dir=manual", "--allow-net", "--allow-read", "--allow-write", "--allow-env", "--allow-sys", "--allow-ffi=/lib/x86_64-linux-gnu/libc.so.6,/lib/aarch64-linux-gnu/libc.so.6,/lib64/libc.so.6", "--unstable-net", "--unstable-no-legacy-abort", "--v8-flags=--max-semi-space-size=2,--enable-experimental-regexp-engine,--enable-experimental-regexp-engine-on-excessive-backtracks", "gateway/main.ts", "--config", "/etc/gateway/gateway.toml"]
