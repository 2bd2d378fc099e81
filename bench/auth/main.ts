/**
 * Authentication cost (`deno run -A bench/auth/main.ts [--duration 5]`), in one run:
 *
 * 1. Per request, in µs (median of batches): the `jwt_auth` middleware on a request whose token
 *    it has verified before (a client reusing its token), RS256 and ES256, beside jose's
 *    `jwtVerify` alone, which is what the first request with a new token costs (keys from a JWKS
 *    file, so no fetch); and `api_key`.
 * 2. Throughput with Debian's wrk: the gateway's `echo` pipeline without authentication, and the
 *    same pipeline behind `jwt_auth` (ES256 and RS256 tokens), requests/s and the ratio; then the
 *    ES256 pipeline again on a gateway that keeps an `[audit]` trail (a record per request,
 *    chained by SHA-256), with the records written per second.
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

const flags = parseArgs({ options: { duration: { type: "string", default: "5" } } }).values;
const duration = Number(flags.duration);

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
for (const [alg, t] of Object.entries(tokens)) {
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
rows.push([
  "api_key",
  fixed(await microseconds(() => apiKey.onRequest(request(key, "x-api-key"))), 1),
  "-",
]);
console.log("\nPer request, µs, median of 15 batches:\n");
console.log(
  markdownTable(["middleware", "token seen before", "new token (jose jwtVerify)"], rows),
);

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
let plain: WrkResult | undefined;
let auditLine = "";
try {
  let dataPort = freePort();
  let gateway = await startGateway({ configText: config(dataPort, "") });
  const run = (path: string, headers: string[] = []) =>
    runWrk({
      url: `http://127.0.0.1:${dataPort}${path}`,
      threads: 2,
      connections: 32,
      durationSec: duration,
      headers,
    });
  try {
    await run("/plain/warm");
    await run("/authed/warm", [`Authorization: Bearer ${tokens.ES256}`]);
    plain = await run("/plain/x");
    results.push(["echo, no authentication", plain]);
    for (const [alg, t] of Object.entries(tokens)) {
      results.push([
        `echo behind jwt_auth (${alg})`,
        await run("/authed/x", [`Authorization: Bearer ${t}`]),
      ]);
    }
  } finally {
    await gateway.stop();
  }
  dataPort = freePort();
  const auditFile = `${dir}/audit/audit.jsonl`;
  gateway = await startGateway({
    configText: config(dataPort, `[audit]\nfile = "${auditFile}"\nmax_file_bytes = 1073741824\n`),
  });
  try {
    await run("/authed/warm", [`Authorization: Bearer ${tokens.ES256}`]);
    const before = (await Deno.stat(auditFile)).size;
    const audited = await run("/authed/x", [`Authorization: Bearer ${tokens.ES256}`]);
    results.push(["echo behind jwt_auth (ES256), audit trail on", audited]);
    await new Promise((r) => setTimeout(r, 500));
    const bytes = (await Deno.stat(auditFile)).size - before;
    auditLine = `Audit trail: ${fixed(bytes / 1e6, 1)} MB written in the ${duration} s run ` +
      `(${fixed(bytes / Math.max(1, audited.requests), 0)} bytes per request).`;
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
      fixed(r.requestsPerSec / plain!.requestsPerSec, 2),
    ]),
  ));
  console.log(`\n${auditLine}`);
} finally {
  await removeDir(dir);
}
