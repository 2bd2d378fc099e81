/**
 * Authentication cost (`deno run -A bench/auth/main.ts [--duration 5]`), in one run:
 *
 * 1. Per request, in µs (median of batches): the `jwt_auth` middleware on a request whose token
 *    it has verified before (a client reusing its token), RS256 and ES256, beside jose's
 *    `jwtVerify` alone, which is what the first request with a new token costs (keys from a JWKS
 *    file, so no fetch); and `api_key`.
 * 2. Throughput with Debian's wrk: the gateway's `echo` pipeline without authentication, and the
 *    same pipeline behind `jwt_auth` (ES256 and RS256 tokens), requests/s and the ratio.
 * 3. The audit trail (a record per request, chained by SHA-256): the plain and the ES256 pipelines
 *    on a gateway without a trail, with `durability = "sync"` (each answer waits for its record's
 *    group commit: write and fdatasync) and with `durability = "batched"`, side by side, with the
 *    bytes of trail written.
 *
 * `--audit-only` runs part 3 alone; `--group-commit-ms N` sets the sync run's `group_commit_ms`;
 * `--connections N` sets wrk's connections in part 3 (default 32: a sync trail's batches hold about
 * as many records as requests are in flight).
 */
import { parseArgs } from "node:util";
import { createLocalJWKSet, exportJWK, generateKeyPair, jwtVerify, SignJWT } from "jose";
import { Body, RequestEnvelope } from "../../gateway/envelope.ts";
import { ApiKeyMiddleware, JwtAuthMiddleware } from "../../gateway/middleware/auth/mod.ts";
import { localKeys } from "../../gateway/middleware/auth/jwks.ts";
import { sha256Hex } from "../../gateway/middleware/auth/credentials.ts";
import { freePort, removeDir, startGateway, tempDir } from "../../tests/support/mod.ts";
import { Logger } from "../../shared/mod.ts";
import { fixed, markdownTable } from "../http_proxy/report.ts";
import { runWrk, type WrkResult } from "../http_proxy/wrk.ts";

const AUDIENCE = "https://gateway.example/fhir";
const ISSUER = "https://issuer.example";
const BATCH_MS = 50;
const BATCHES = 15;

/** Median µs per call of `fn` over BATCHES batches of about BATCH_MS each. */
async function microseconds(fn: () => Promise<unknown> | unknown): Promise<number> {
  let n = 1;
  for (;;) {
    const t = performance.now();
    for (let i = 0; i < n; i++) await fn();
    if (performance.now() - t >= BATCH_MS) break;
    n *= 2;
  }
  const per: number[] = [];
  for (let b = 0; b < BATCHES; b++) {
    const t = performance.now();
    for (let i = 0; i < n; i++) await fn();
    per.push(((performance.now() - t) * 1000) / n);
  }
  per.sort((a, b) => a - b);
  return per[Math.floor(BATCHES / 2)];
}

const silent = new Logger({ level: "error", format: "json", sink: () => {} });

function request(authorization: string, header = "authorization"): RequestEnvelope {
  return new RequestEnvelope({
    id: "bench",
    protocol: "http",
    method: "GET",
    path: "/Observation",
    endpoint: "api",
    headers: new Headers({ [header]: authorization }),
    body: Body.empty(),
  });
}

const flags = parseArgs({
  options: {
    duration: { type: "string", default: "5" },
    "audit-only": { type: "boolean", default: false },
    "group-commit-ms": { type: "string" },
    connections: { type: "string", default: "32" },
  },
}).values;
const duration = Number(flags.duration);
const auditOnly = flags["audit-only"];
/** `[audit] group_commit_ms` of the sync run (default: the gateway's). */
const groupCommit = flags["group-commit-ms"];
/** wrk's connections in part 3 (32 in parts 2 and 3 unless given). */
const auditConnections = Number(flags.connections);

const rs = await generateKeyPair("RS256", { extractable: true });
const es = await generateKeyPair("ES256", { extractable: true });
const jwks = {
  keys: [
    { ...(await exportJWK(rs.publicKey)), kid: "rs", alg: "RS256" },
    { ...(await exportJWK(es.publicKey)), kid: "es", alg: "ES256" },
  ],
};
const token = (key: CryptoKey, alg: string, kid: string) =>
  new SignJWT({ sub: "ada", scope: "lab.orders" }).setProtectedHeader({ alg, kid })
    .setIssuer(ISSUER).setAudience(AUDIENCE).setIssuedAt().setExpirationTime("2h").sign(key);
const tokens = {
  RS256: await token(rs.privateKey, "RS256", "rs"),
  ES256: await token(es.privateKey, "ES256", "es"),
};

const options = {
  issuer: ISSUER,
  audience: [AUDIENCE],
  algorithms: ["RS256", "ES256"],
  clock_skew_secs: 60,
  required_scopes: ["lab.orders"],
  required_claims: [],
  realm: "gateway",
  forward_credentials: false,
};
const mw = new JwtAuthMiddleware("auth", localKeys(JSON.stringify(jwks), "bench"), options, silent);
const keySet = createLocalJWKSet(jwks as never);
const rows: string[][] = [];
for (const [alg, t] of auditOnly ? [] : Object.entries(tokens)) {
  const direct = await microseconds(() =>
    jwtVerify(t, keySet, { issuer: ISSUER, audience: AUDIENCE })
  );
  const middleware = await microseconds(() => mw.onRequest(request(`Bearer ${t}`)));
  rows.push([`jwt_auth ${alg}`, fixed(middleware, 1), fixed(direct, 1)]);
}
const key = "k3y-" + crypto.randomUUID();
const apiKey = new ApiKeyMiddleware("keys", {
  header: "x-api-key",
  keys: { lab: `sha256:${sha256Hex(key)}` },
  forward_credentials: false,
});
if (!auditOnly) {
  rows.push([
    "api_key",
    fixed(await microseconds(() => apiKey.onRequest(request(key, "x-api-key"))), 1),
    "-",
  ]);
  console.log("\nPer request, µs, median of 15 batches:\n");
  console.log(
    markdownTable(["middleware", "token seen before", "new token (jose jwtVerify)"], rows),
  );
}

// Throughput: plain echo pipeline vs the same behind jwt_auth, then with the audit trail on.
const dir = await tempDir("bench-auth-");
await Deno.writeTextFile(`${dir}/keys.json`, JSON.stringify(jwks));
const config = (dataPort: number, audit: string) =>
  `[network.main]
bind = "127.0.0.1"
port = ${dataPort}
[management]
bind = "127.0.0.1"
port = ${freePort()}
[logging]
level = "warn"
[endpoints.plain]
service = "http"
[endpoints.plain.options]
path_prefix = "/plain"
[endpoints.authed]
service = "http"
[endpoints.authed.options]
path_prefix = "/authed"
[middleware.auth]
type = "jwt_auth"
[middleware.auth.options]
jwks_path = "${dir}/keys.json"
issuer = "${ISSUER}"
audience = ["${AUDIENCE}"]
required_scopes = ["lab.orders"]
[backends.e]
service = "echo"
[pipelines.plain]
endpoints = ["plain"]
backends = ["e"]
[pipelines.authed]
endpoints = ["authed"]
middleware = ["auth"]
backends = ["e"]
${audit}`;

const results: [string, WrkResult][] = [];
const auditResults: [string, WrkResult, number | undefined][] = [];
const ES256 = [`Authorization: Bearer ${tokens.ES256}`];
try {
  const run = (port: number, path: string, headers: string[] = [], connections = 32) =>
    runWrk({
      url: `http://127.0.0.1:${port}${path}`,
      threads: Math.min(2, connections),
      connections,
      durationSec: duration,
      headers,
    });
  if (!auditOnly) {
    const dataPort = freePort();
    const gateway = await startGateway({ configText: config(dataPort, "") });
    try {
      await run(dataPort, "/plain/warm");
      await run(dataPort, "/authed/warm", ES256);
      results.push(["echo, no authentication", await run(dataPort, "/plain/x")]);
      for (const [alg, t] of Object.entries(tokens)) {
        results.push([
          `echo behind jwt_auth (${alg})`,
          await run(dataPort, "/authed/x", [`Authorization: Bearer ${t}`]),
        ]);
      }
    } finally {
      await gateway.stop();
    }
    console.log(`\nThroughput, wrk 2 threads, 32 connections, ${duration} s:\n`);
    console.log(markdownTable(
      ["pipeline", "requests/s", "p50 ms", "p99 ms", "non-2xx", "ratio to plain"],
      results.map(([name, r]) => [
        name,
        fixed(r.requestsPerSec, 0),
        fixed(r.p50Ms, 2),
        fixed(r.p99Ms, 2),
        String(r.non2xx),
        fixed(r.requestsPerSec / results[0][1].requestsPerSec, 2),
      ]),
    ));
  }

  // The audit trail: off, sync (group commit), batched; a fresh gateway and trail for each.
  for (const durability of ["off", "sync", "batched"] as const) {
    const dataPort = freePort();
    const auditFile = `${dir}/audit-${durability}/audit.jsonl`;
    const audit = durability === "off" ? "" : `[audit]\nfile = "${auditFile}"\n` +
      `max_file_bytes = 1073741824\ndurability = "${durability}"\n` +
      (durability === "sync" && groupCommit ? `group_commit_ms = ${groupCommit}\n` : "");
    const gateway = await startGateway({ configText: config(dataPort, audit) });
    try {
      await run(dataPort, "/plain/warm");
      await run(dataPort, "/authed/warm", ES256);
      for (
        const [name, path, headers] of [
          ["echo", "/plain/x", []],
          ["echo behind jwt_auth (ES256)", "/authed/x", ES256],
        ] as const
      ) {
        const before = durability === "off" ? 0 : (await Deno.stat(auditFile)).size;
        const r = await run(dataPort, path, [...headers], auditConnections);
        // Batched records may still be in memory: the interval writes them.
        if (durability === "batched") await new Promise((r) => setTimeout(r, 500));
        const bytes = durability === "off" ? undefined : (await Deno.stat(auditFile)).size - before;
        auditResults.push([`${name}, audit ${durability}`, r, bytes]);
      }
    } finally {
      await gateway.stop();
    }
  }
  const off = (name: string) =>
    auditResults.find(([n]) => n === `${name.replace(/, audit \w+$/, "")}, audit off`)![1];
  console.log(
    `\nThe audit trail, wrk ${Math.min(2, auditConnections)} threads, ${auditConnections} ` +
      `connections, ${duration} s:\n`,
  );
  console.log(markdownTable(
    ["pipeline", "requests/s", "p50 ms", "p99 ms", "non-2xx", "ratio to off", "bytes/request"],
    auditResults.map(([name, r, bytes]) => [
      name,
      fixed(r.requestsPerSec, 0),
      fixed(r.p50Ms, 2),
      fixed(r.p99Ms, 2),
      String(r.non2xx),
      fixed(r.requestsPerSec / off(name).requestsPerSec, 2),
      bytes === undefined ? "-" : fixed(bytes / Math.max(1, r.requests), 0),
    ]),
  ));
} finally {
  await removeDir(dir);
}
