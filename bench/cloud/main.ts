/**
 * Cloud service throughput: requests/s and latency (p50, p99) of gateway authorize, configuration
 * pull (full answer and 304), a resource list of 1,000 records, and /healthz as the baseline
 * (the last column is each scenario's requests/s relative to it). The service runs as its own
 * process (`cloud/main.ts`) on a temporary KV file; this process seeds the KV, then sends the load
 * over keep-alive connections.
 *
 *   deno run -A --unstable-kv bench/cloud/main.ts [--duration 5] [--connections 16]
 *     [--only healthz,authorize,config,config304,list] [--profile DIR]
 *
 * `--only` runs the named scenarios (the baseline always runs); `--profile DIR` runs the service
 * with `--cpu-prof` and leaves its V8 CPU profile in DIR (open it in Chrome DevTools).
 */
import { parseArgs } from "node:util";
import { createServices, resolveOptions } from "../../cloud/mod.ts";
import { createApiToken } from "../../cloud/auth/mod.ts";
import { createUser } from "../../cloud/users.ts";
import { openKv } from "../../cloud/store/mod.ts";
import { findBinary, freePort } from "../../tests/support/mod.ts";
import { runWrk } from "../http_proxy/wrk.ts";

/** The outcome of one scenario. */
export interface Result {
  name: string;
  requests: number;
  errors: number;
  seconds: number;
  p50: number;
  p99: number;
}

/** The value at quantile `q` of sorted `values`. */
export function quantile(sorted: number[], q: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
}

/** Runs `connections` loops of `send` for `seconds`; `ok` decides which answers count as success. */
export async function load(
  name: string,
  seconds: number,
  connections: number,
  send: () => Promise<Response>,
  ok: (status: number) => boolean = (s) => s === 200,
): Promise<Result> {
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(Array.from({ length: connections }, async () => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      const res = await send();
      await res.arrayBuffer();
      latencies.push(performance.now() - t0);
      if (!ok(res.status)) errors++;
    }
  }));
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    name,
    requests: latencies.length,
    errors,
    seconds: elapsed,
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
  };
}

/** The results as a Markdown table, with requests/s relative to `baseline`. */
export function table(results: Result[], baseline: Result): string {
  const rate = (r: Result) => r.requests / r.seconds;
  const lines = [
    "| scenario | requests | req/s | p50 ms | p99 ms | errors | vs /healthz |",
    "|---|---:|---:|---:|---:|---:|---:|",
    ...results.map((r) =>
      `| ${r.name} | ${r.requests} | ${rate(r).toFixed(0)} | ${r.p50.toFixed(2)} | ${
        r.p99.toFixed(2)
      } | ${r.errors} | ${(rate(r) / rate(baseline)).toFixed(3)} |`
    ),
  ];
  return lines.join("\n");
}

/** Seeds a KV file: a user and API token, a gateway with 5 pipelines, 1,000 endpoints. */
async function seed(
  dataDir: string,
  baseUrl: string,
): Promise<{ apiToken: string; gatewayCode: string }> {
  const options = resolveOptions({ dataDir, baseUrl, passwordIterations: 1000 });
  const kv = await openKv(options);
  const stop = new AbortController();
  try {
    const s = await createServices(options, kv, stop.signal);
    const { user, team } = await createUser(s, {
      email: "bench@example.com",
      name: "bench",
      password: "bench password",
    });
    const actor = { type: "user" as const, id: user.id, label: user.email, user_id: user.id };
    const { token } = await createApiToken(s, {
      userId: user.id,
      teamId: team.id,
      name: "bench",
      expiresInDays: null,
    }, actor);
    const r = s.resources;
    const gw = await r.create("gateways", team.id, actor, {
      code: "bench-gw",
      name: "bench-gw",
      description: "",
    });
    const svc = await r.create("services", team.id, actor, {
      name: "web",
      description: "",
      endpoint_types: ["http"],
      backend_types: ["http", "echo"],
    });
    const tr = await r.create("transforms", team.id, actor, {
      name: "rename",
      description: "",
      spec: [{ operation: "shift", spec: { a: "b", c: { d: "e[0]" } } }],
      sha256: "",
    });
    const mw = await r.create("middleware", team.id, actor, {
      name: "reshape",
      description: "",
      type: "transform",
      transform_id: tr.id,
      options: { apply: "both" },
    });
    for (let i = 0; i < 1000; i++) {
      const ep = await r.create("endpoints", team.id, actor, {
        name: `ep-${String(i).padStart(4, "0")}`,
        description: "",
        service_id: svc.id,
        type: "http",
        options: { path_prefix: `/p${i}` },
        network_ids: [],
      });
      if (i < 5) {
        const be = await r.create("backends", team.id, actor, {
          name: `be-${i}`,
          description: "",
          service_id: svc.id,
          type: "http",
          options: { base_url: `http://10.0.0.${i + 1}:8080` },
          targets: [],
          timeout_secs: 10,
          retries: null,
          load_balancing: null,
          required: null,
          match: null,
        });
        await r.create("pipelines", team.id, actor, {
          name: `p-${i}`,
          description: "",
          gateway_id: gw.id,
          endpoint_ids: [ep.id],
          middleware_ids: [mw.id],
          backend_ids: [be.id],
        });
      }
    }
    return { apiToken: token, gatewayCode: "bench-gw" };
  } finally {
    stop.abort();
    kv.close();
  }
}

/** One request shape sent over and over. */
interface Scenario {
  key: string;
  name: string;
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** The status that counts as success (200). */
  status?: number;
}

/**
 * Runs `sc` with Debian's `wrk` (one thread, `connections` keep-alive connections): a C client
 * that needs far less CPU per request than `fetch`, so more of the two cores goes to the service.
 * Errors are socket errors and answers outside 2xx/3xx (each scenario's status is checked once
 * with fetch before the load).
 */
async function loadWrk(
  sc: Scenario,
  seconds: number,
  connections: number,
  dir: string,
): Promise<Result> {
  const lua = `${dir}/${sc.key}.lua`;
  const quote = (v: string) => JSON.stringify(v);
  await Deno.writeTextFile(
    lua,
    [
      `wrk.method = ${quote(sc.method ?? "GET")}`,
      ...Object.entries(sc.headers ?? {}).map(([k, v]) => `wrk.headers[${quote(k)}] = ${quote(v)}`),
      sc.body === undefined ? "" : `wrk.body = ${quote(sc.body)}`,
    ].join("\n"),
  );
  const r = await runWrk({
    url: sc.url,
    threads: 1,
    connections,
    durationSec: seconds,
    script: lua,
  });
  return {
    name: sc.name,
    requests: r.requests,
    errors: r.socketErrors + r.non2xx,
    seconds: r.requests / r.requestsPerSec,
    p50: r.p50Ms,
    p99: r.p99Ms,
  };
}

async function main() {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      duration: { type: "string", default: "5" },
      connections: { type: "string", default: "16" },
      only: { type: "string" },
      profile: { type: "string" },
      client: { type: "string" },
    },
  });
  const client = values.client ?? (findBinary("wrk") ? "wrk" : "fetch");
  if (client !== "wrk" && client !== "fetch") throw new Error("--client: wrk or fetch");
  const only = values.only?.split(",").map((x) => x.trim());
  const wanted = (name: string) => !only || only.includes(name);
  const seconds = Number(values.duration);
  const connections = Number(values.connections);
  const dir = await Deno.makeTempDir({ prefix: "cloud-bench-" });
  const port = freePort();
  const base = `http://127.0.0.1:${port}`;
  const seeded = await seed(dir, base);
  const server = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...(values.profile ? ["--cpu-prof", `--cpu-prof-dir=${values.profile}`] : []),
      "--allow-net",
      "--allow-read",
      "--allow-write",
      "--allow-env",
      "--unstable-kv",
      new URL("../../cloud/main.ts", import.meta.url).pathname,
      "--port",
      String(port),
      "--hostname",
      "127.0.0.1",
      "--base-url",
      base,
      "--data-dir",
      dir,
      "--token-rate",
      "100000000",
      "--log-level",
      "warn",
    ],
    stdout: "null",
    stderr: "inherit",
  }).spawn();
  try {
    for (let i = 0;; i++) {
      try {
        const res = await fetch(`${base}/readyz`);
        await res.body?.cancel();
        if (res.ok) break;
      } catch {
        // not up yet
      }
      if (i > 200) throw new Error("the cloud service did not start");
      await new Promise((r) => setTimeout(r, 50));
    }
    const auth = { authorization: `Bearer ${seeded.apiToken}` };
    const authorizeBody = JSON.stringify({ gateway_code: seeded.gatewayCode });
    const authorize = () =>
      fetch(`${base}/api/gateway/authorize`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: authorizeBody,
      });
    const machine = (await (await authorize()).json()).machine_token as string;
    const mauth = { authorization: `Bearer ${machine}` };
    const first = await fetch(`${base}/api/gateway/config`, { headers: mauth });
    const etag = first.headers.get("etag")!;
    const pulled = await first.json();
    const list = await (await fetch(`${base}/api/endpoints?limit=1000`, { headers: auth })).json();
    console.log(
      `cloud bench: ${connections} connections, ${seconds} s per scenario; config version ${pulled.version} with ${pulled.pipelines.length} pipelines (${pulled.toml.length} bytes of TOML); the list answers ${list.items.length} endpoints`,
    );
    const scenarios: Scenario[] = [
      { key: "healthz", name: "GET /healthz (baseline)", url: `${base}/healthz` },
      {
        key: "authorize",
        name: "POST /api/gateway/authorize",
        url: `${base}/api/gateway/authorize`,
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: authorizeBody,
      },
      {
        key: "config",
        name: "GET /api/gateway/config (200)",
        url: `${base}/api/gateway/config`,
        headers: mauth,
      },
      {
        key: "config304",
        name: "GET /api/gateway/config (304, If-None-Match)",
        url: `${base}/api/gateway/config`,
        headers: { ...mauth, "if-none-match": etag },
        status: 304,
      },
      {
        key: "list",
        name: "GET /api/endpoints?limit=1000 (1,000 records)",
        url: `${base}/api/endpoints?limit=1000`,
        headers: auth,
      },
    ];
    const results: Result[] = [];
    for (const sc of scenarios) {
      if (sc.key !== "healthz" && !wanted(sc.key)) continue;
      const probe = await fetch(sc.url, { method: sc.method, headers: sc.headers, body: sc.body });
      await probe.body?.cancel();
      if (probe.status !== (sc.status ?? 200)) {
        throw new Error(`${sc.name} answered ${probe.status}, not ${sc.status ?? 200}`);
      }
      results.push(
        client === "wrk"
          ? await loadWrk(sc, seconds, connections, dir)
          : await load(sc.name, seconds, connections, () =>
            fetch(sc.url, {
              method: sc.method ?? "GET",
              headers: sc.headers,
              body: sc.body,
            }), (st) => st === (sc.status ?? 200)),
      );
    }
    const baseline = results[0];
    console.log(table(results, baseline));
  } finally {
    server.kill("SIGTERM");
    await server.status;
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) await main();
