/**
 * The cluster deployment of deploy/cluster (docs/scaling.md), checked without a container engine
 * (none runs here), as container_test.ts does for the Dockerfile. compose.yaml is read and checked
 * against the other files (mounted files exist, the gateways' config sits where the Dockerfile's
 * entry command reads it and its state in their volume, the variables the configs use are given to
 * the services that read them, HAProxy's servers and the NATS routes name the services and their
 * ports, the stop grace covers the gateway's). Then the deployment's own files run with the real
 * programs on this machine, each service name mapped to a free loopback port and every other line
 * kept: 3 `nats-server -c nats.conf` (JetStream, clustered), Redis started by compose's own
 * command, 3 gateways started with the Dockerfile's entry command on gateway.toml, HAProxy on
 * haproxy.cfg. Through HAProxy: the rate limit holds across the gateways (one bucket per client in
 * Redis), a message to the queued backend is acknowledged while its upstream is down and delivered
 * once it is up, and kill -9 of a gateway loses nothing acknowledged.
 */
import { parse as parseYaml } from "yaml";
import { parse as parseToml } from "smol-toml";
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { type GatewayProcess, startGateway } from "./support/gateway.ts";
import { waitJetStream } from "./support/nats.ts";
import { findBinary, requirePeer } from "./support/peers.ts";
import { freePort } from "./support/ports.ts";
import { type CapturedProcess, runCommand, spawnCaptured, waitReady } from "./support/process.ts";
import { REPO_ROOT } from "./support/paths.ts";
import { removeDir, tempDir } from "./support/temp.ts";
import { canConnect, waitFor } from "./support/wait.ts";
import { curl } from "./support/curl.ts";
import { validateConfigText } from "../shared/gateway_config/mod.ts";

const CLUSTER = `${REPO_ROOT}/deploy/cluster`;
const NATS = ["nats-1", "nats-2", "nats-3"];
const GATEWAYS = ["gateway-1", "gateway-2", "gateway-3"];

interface Service {
  image?: string;
  build?: { context: string; target: string };
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  depends_on?: string[];
  stop_grace_period?: string;
}

interface Compose {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
}

async function readCluster(name: string): Promise<string> {
  return await Deno.readTextFile(`${CLUSTER}/${name}`);
}

/** compose.yaml, with its `<<` merge keys applied. */
async function compose(): Promise<Compose> {
  return parseYaml(await readCluster("compose.yaml"), { merge: true }) as Compose;
}

/** The gateway stage's instruction `keyword` of the Dockerfile (continuation lines joined). */
async function gatewayInstruction(keyword: string): Promise<string> {
  const text = (await Deno.readTextFile(`${REPO_ROOT}/Dockerfile`)).replace(/\\\n/g, " ");
  let stage = "";
  for (const line of text.split("\n").map((l) => l.trim())) {
    if (line === "" || line.startsWith("#")) continue;
    const [, word, args] = line.match(/^(\w+)\s+(.*)$/)!;
    if (word.toUpperCase() === "FROM") stage = args.match(/\bAS\s+(\S+)/i)?.[1] ?? "";
    if (stage === "gateway" && word.toUpperCase() === keyword) return args.trim();
  }
  throw new Error(`no ${keyword} in the Dockerfile's gateway stage`);
}

/** The Dockerfile's entry command, and the config path it names. */
async function entryCommand(): Promise<{ entry: string[]; configPath: string }> {
  const entry = JSON.parse(await gatewayInstruction("ENTRYPOINT")) as string[];
  return { entry, configPath: entry[entry.indexOf("--config") + 1] };
}

/** A volume entry `source:target[:mode]`. */
function mount(entry: string): { source: string; target: string; mode?: string } {
  const [source, target, mode] = entry.split(":");
  return { source, target, mode };
}

function targetOf(service: Service, source: string): string | undefined {
  return service.volumes?.map(mount).find((m) => m.source === source)?.target;
}

/** `30s`, `1m30s`, `500ms` in seconds. */
function seconds(duration: string): number {
  let total = 0;
  for (const [, n, unit] of duration.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)) {
    total += Number(n) * ({ ms: 0.001, s: 1, m: 60, h: 3600 } as Record<string, number>)[unit];
  }
  return total;
}

/** The variables `${NAME}` (TOML, compose) or `$NAME` (nats.conf) a file reads. */
function variables(text: string, pattern: RegExp): string[] {
  const lines = text.split("\n").filter((l) => !l.trim().startsWith("#")).join("\n");
  return [...new Set([...lines.matchAll(pattern)].map((m) => m[1]))].sort();
}

/** `host:port` of a URL-ish string. */
function hostPort(url: string): { host: string; port: number } {
  const m = url.match(/^(?:[a-z-]+:\/\/)?([^:/]+):(\d+)/)!;
  return { host: m[1], port: Number(m[2]) };
}

/** The NATS config's client, monitoring and cluster listeners, routes, store and user. */
function natsConf(text: string) {
  const [top, cluster] = text.split(/^cluster \{/m);
  return {
    listen: hostPort(top.match(/^listen: (\S+)/m)![1]),
    http: hostPort(top.match(/^http: (\S+)/m)![1]),
    storeDir: top.match(/store_dir: (\S+)/)![1],
    clusterListen: hostPort(cluster.match(/listen: (\S+)/)![1]),
    routes: [...cluster.matchAll(/nats-route:\/\/(\S+)/g)].map((m) => hostPort(m[1])),
    user: text.match(/authorization \{\s*user: (\S+)/)![1],
  };
}

/** HAProxy's frontend port (`bind :PORT`) and its backend's servers. */
function haproxyCfg(text: string) {
  const frontend = text.split(/^frontend gateways$/m)[1].split(/^\S/m)[0];
  const backend = text.split(/^backend gateways$/m)[1].split(/^\S/m)[0];
  return {
    port: Number(frontend.match(/^\s*bind :(\d+)/m)![1]),
    servers: [...backend.matchAll(/^\s*server (\S+) (\S+)/gm)].map((m) => ({
      name: m[1],
      ...hostPort(m[2]),
    })),
  };
}

Deno.test("cluster deployment: compose.yaml's services, mounts, variables, names and ports agree with the files", async () => {
  const c = await compose();
  const services = c.services;
  assertEquals(Object.keys(services).sort(), [...GATEWAYS, "haproxy", ...NATS, "redis"].sort());
  const gatewayToml = await readCluster("gateway.toml");
  const natsText = await readCluster("nats.conf");
  const checked = validateConfigText(gatewayToml, "deploy/cluster/gateway.toml");
  assertEquals(checked.problems, []);
  const config = checked.config!;
  const nats = natsConf(natsText);
  const haproxy = haproxyCfg(await readCluster("haproxy.cfg"));
  const { configPath } = await entryCommand();

  for (const [name, s] of Object.entries(services)) {
    // An image pinned to a version, or the repository's Dockerfile.
    if (GATEWAYS.includes(name)) {
      assertEquals(s.build, { context: "../..", target: "gateway" }, name);
      assertEquals(s.image, undefined);
      assert(
        await Deno.stat(`${CLUSTER}/${s.build!.context}/Dockerfile`).then(() => true),
        "the build context holds the Dockerfile",
      );
    } else {
      assertMatch(s.image ?? "", /^[a-z]+:\d+(\.\d+)*-alpine$/, `${name}'s image is pinned`);
    }
    // Every file mounted exists here; every named volume is declared.
    for (const m of (s.volumes ?? []).map(mount)) {
      if (m.source.startsWith("./")) {
        assert((await Deno.stat(`${CLUSTER}/${m.source}`)).isFile, `${name} mounts ${m.source}`);
        assertEquals(m.mode, "ro", `${name} mounts ${m.source} read-only`);
      } else {
        assert(m.source in c.volumes, `volume ${m.source} of ${name} is declared`);
      }
    }
    for (const [key, value] of Object.entries(s.environment ?? {})) {
      // A secret from .env is refused when it is unset, never run empty.
      if (value.startsWith("$")) assertMatch(value, new RegExp(`^\\$\\{${key}:\\?[^}]+\\}$`));
    }
  }

  // The gateways: the same gateway.toml where the entry command reads it, state in their volume.
  assertEquals(variables(gatewayToml, /\$\{(\w+)\}/g), ["NATS_PASSWORD", "REDIS_PASSWORD"]);
  const volumes = JSON.parse(await gatewayInstruction("VOLUME")) as string[];
  const gatewayVolumes = new Set<string>();
  for (const name of GATEWAYS) {
    const s = services[name];
    assertEquals(targetOf(s, "./gateway.toml"), configPath, `${name}'s config file`);
    const data = s.volumes!.map(mount).find((m) => !m.source.startsWith("./"))!;
    assert(volumes.includes(data.target), `${data.target} is a VOLUME of the image`);
    gatewayVolumes.add(data.source);
    for (const dir of [config.cloud.state_dir!, config.cloud.data_dir!]) {
      assert(dir.startsWith(`${data.target}/`), `${dir} lies in ${name}'s volume ${data.target}`);
    }
    for (const v of ["NATS_PASSWORD", "REDIS_PASSWORD"]) assert(s.environment?.[v], `${name} ${v}`);
    assertEquals(
      [...s.depends_on!].sort(),
      [...NATS, "redis"],
      `${name} starts after the engines`,
    );
    // docker stop's SIGTERM: the gateway drains within its grace before Docker's SIGKILL.
    assert(
      seconds(s.stop_grace_period ?? "10s") >= (config.runtime?.shutdown_grace_secs ?? 10),
      `${name}'s stop_grace_period covers [runtime] shutdown_grace_secs`,
    );
  }
  assertEquals(gatewayVolumes.size, GATEWAYS.length, "a state volume per gateway");
  // The image's user owns the data volume's directory (a named volume copies its ownership).
  assertMatch(
    await Deno.readTextFile(`${REPO_ROOT}/Dockerfile`),
    /chown gateway:gateway \/var\/lib\/gateway\b/,
  );

  // NATS: the config where the command reads it, a store volume and a name each, the variables.
  const natsVolumes = new Set<string>();
  assertEquals(variables(natsText, /\$(\w+)/g), ["NATS_PASSWORD", "NATS_SERVER_NAME"]);
  for (const name of NATS) {
    const s = services[name];
    assertEquals(s.command, ["-c", targetOf(s, "./nats.conf")!]);
    assertEquals(s.environment!.NATS_SERVER_NAME, name);
    assert(s.environment!.NATS_PASSWORD, `${name} NATS_PASSWORD`);
    const store = s.volumes!.map(mount).find((m) => !m.source.startsWith("./"))!;
    assertEquals(store.target, nats.storeDir, `${name}'s JetStream store is its volume`);
    natsVolumes.add(store.source);
  }
  assertEquals(natsVolumes.size, NATS.length);
  assertEquals(nats.routes, NATS.map((host) => ({ host, port: nats.clusterListen.port })));
  const queue = config.backends.ehr.queue!;
  assertEquals(
    queue.nats_servers!.map(hostPort),
    NATS.map((host) => ({ host, port: nats.listen.port })),
  );
  assertEquals(queue.nats_user, nats.user);
  assert(queue.nats_replicas! <= NATS.length);

  // Redis: compose's command writes the password from its environment into the server's config.
  const redis = services.redis;
  assertEquals(redis.command!.slice(0, 2), ["sh", "-c"]);
  assertEquals(variables(redis.command![2], /\$\$(\w+)/g), ["REDIS_PASSWORD"]);
  assert(redis.environment!.REDIS_PASSWORD);
  assert(!/\bport\b/.test(redis.command![2]), "Redis keeps its default port 6379");
  const limit = config.middleware.per_client.options as Record<string, string>;
  assertEquals(hostPort(limit.redis_url), { host: "redis", port: 6379 });

  // HAProxy: its config where the image reads it, the gateways at their data port.
  const h = services.haproxy;
  assertEquals(targetOf(h, "./haproxy.cfg"), "/usr/local/etc/haproxy/haproxy.cfg");
  assert(h.ports!.includes(`${haproxy.port}:${haproxy.port}`), "the frontend's port is published");
  assertEquals(
    haproxy.servers,
    GATEWAYS.map((name) => ({ name, host: name, port: config.network.main.port })),
  );
  assertEquals([...h.depends_on!].sort(), GATEWAYS);
});

/** The test's rate limit (gateway.toml's, made small: see where it is rewritten). */
const RATE = 10;
const BURST = 30;

type ClusterConfig = {
  middleware: { per_client: { options: { requests_per_second: number; burst: number } } };
};
const rateOf = (c: ClusterConfig) => c.middleware.per_client.options.requests_per_second;
const burstOf = (c: ClusterConfig) => c.middleware.per_client.options.burst;

/** `text` with every `from` replaced by `to`; each `from` must occur (else the file changed). */
function rewrite(text: string, file: string, pairs: [string | RegExp, string][]): string {
  for (const [from, to] of pairs) {
    assert(
      typeof from === "string" ? text.includes(from) : from.test(text),
      `${file} holds ${from}`,
    );
    text = typeof from === "string" ? text.replaceAll(from, to) : text.replace(from, to);
  }
  return text;
}

/**
 * The secrets as compose.yaml's header tells an operator to make them: its `.env` recipe, run
 * with `sh` in `dir`. (Its first version wrote bare hex, which nats-server reads as a number when
 * it starts with a digit, and refuses to start: the test found it.)
 */
async function dotEnv(dir: string): Promise<{ NATS_PASSWORD: string; REDIS_PASSWORD: string }> {
  const header = (await readCluster("compose.yaml")).split("\n").filter((l) => l.startsWith("#"));
  const from = header.findIndex((l) => l.includes("test -s .env"));
  assert(from >= 0, "compose.yaml's header has the .env recipe");
  const recipe = header.slice(from, from + 2).map((l) => l.replace(/^#\s*/, "").replace(/#.*$/, ""))
    .join("\n");
  const made = await runCommand("sh", ["-c", recipe], { cwd: dir });
  assertEquals(made.code, 0, made.stderr);
  const vars = Object.fromEntries(
    (await Deno.readTextFile(`${dir}/.env`)).trim().split("\n").map((l) => l.split("=", 2)),
  );
  await Deno.remove(`${dir}/.env`);
  assertMatch(vars.NATS_PASSWORD, /^[A-Za-z][A-Za-z0-9]{15,}$/);
  assert(vars.REDIS_PASSWORD.length >= 16, "a long Redis password");
  return { NATS_PASSWORD: vars.NATS_PASSWORD, REDIS_PASSWORD: vars.REDIS_PASSWORD };
}

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

Deno.test({
  name:
    "cluster deployment: its files run here (3 nats-server, Redis, 3 gateways, HAProxy); through HAProxy the rate limit holds across gateways, a queued message waits for its upstream, kill -9 of a gateway loses nothing",
  ignore: !requirePeer("cluster deployment", "nats-server", "nats-server") ||
    !requirePeer("cluster deployment", "haproxy", "haproxy") ||
    !requirePeer("cluster deployment", "redis-server", "redis-server") ||
    !requirePeer("cluster deployment", "redis-cli", "redis-tools") ||
    !requirePeer("cluster deployment", "curl", "curl"),
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const started = performance.now();
    const c = await compose();
    const dir = await tempDir("gw-cluster-deploy-");
    const env = await dotEnv(dir);
    const engines: CapturedProcess[] = [];
    let gateways: GatewayProcess[] = [];
    let haproxy: CapturedProcess | undefined;
    const outputs: (() => string)[] = [];
    const nats = NATS.map(() => ({ client: freePort(), cluster: freePort(), http: freePort() }));
    const redisPort = freePort();
    const gw = GATEWAYS.map(() => ({ data: freePort(), mgmt: freePort() }));
    const front = freePort();
    const upstreamPort = freePort();
    const delivered = new Map<string, number>();
    let upstream: Deno.HttpServer | undefined;
    const startUpstream = () => {
      upstream = Deno.serve(
        { hostname: "127.0.0.1", port: upstreamPort, onListen: () => {} },
        async (req) => {
          const { id } = await req.json();
          delivered.set(id, (delivered.get(id) ?? 0) + 1);
          return new Response("{}", { status: 201 });
        },
      );
    };
    try {
      // NATS: nats.conf as compose runs it, with its names and variables from the environment.
      const natsText = await readCluster("nats.conf");
      const routes = (text: string) =>
        NATS.reduce(
          (t, name, i) => t.replaceAll(`${name}:6222`, `127.0.0.1:${nats[i].cluster}`),
          text,
        );
      const natsServers = NATS.map((name, i) => {
        const path = `${dir}/${name}.conf`;
        Deno.writeTextFileSync(
          path,
          routes(rewrite(natsText, "nats.conf", [
            ["listen: 0.0.0.0:4222", `listen: 127.0.0.1:${nats[i].client}`],
            ["http: 0.0.0.0:8222", `http: 127.0.0.1:${nats[i].http}`],
            ["listen: 0.0.0.0:6222", `listen: 127.0.0.1:${nats[i].cluster}`],
            ["store_dir: /data", `store_dir: "${dir}/${name}"`],
          ])),
        );
        const p = spawnCaptured(findBinary("nats-server")!, ["-c", path], {
          env: { NATS_SERVER_NAME: c.services[name].environment!.NATS_SERVER_NAME, ...env },
        });
        engines.push(p);
        outputs.push(() => `${name}: ${p.output()}`);
        return p;
      });
      // Redis: compose's own command ($$ is compose's escape of $), its files and port here.
      const redisConf = `${dir}/redis.conf`;
      const script = rewrite(c.services.redis.command![2], "compose.yaml redis", [
        ["$$", "$"],
        ["> /tmp/redis.conf", `> ${redisConf}`],
        [
          "exec redis-server /tmp/redis.conf",
          `exec redis-server ${redisConf} --port ${redisPort} --bind 127.0.0.1 --dir ${dir}`,
        ],
      ]);
      const redis = spawnCaptured("sh", ["-c", script], { env });
      engines.push(redis);
      outputs.push(() => `redis: ${redis.output()}`);
      await Promise.all([
        ...natsServers.map((p, i) =>
          waitReady(p, {
            name: NATS[i],
            check: () =>
              fetch(`http://127.0.0.1:${nats[i].http}/healthz`).then(
                async (r) => (await r.body?.cancel(), r.status === 200),
                () => false,
              ),
            description: `${NATS[i]}'s /healthz answered 200`,
            timeoutMs: 20_000,
            intervalMs: 100,
          })
        ),
        waitReady(redis, {
          name: "redis",
          check: () => canConnect(redisPort),
          description: `redis listening on 127.0.0.1:${redisPort}`,
          timeoutMs: 10_000,
        }),
      ]);
      await waitJetStream({
        servers: nats.map((n) => `127.0.0.1:${n.client}`),
        user: natsConf(natsText).user,
        pass: env.NATS_PASSWORD,
      }, 20_000);
      // The password compose passes is the one Redis requires.
      const cli = (...args: string[]) =>
        runCommand("redis-cli", ["-p", String(redisPort), "--no-auth-warning", ...args], {
          timeoutMs: 10_000,
        });
      assertMatch((await cli("ping")).stdout, /NOAUTH/);
      assertEquals((await cli("-a", env.REDIS_PASSWORD, "ping")).stdout.trim(), "PONG");

      // The gateways: gateway.toml with the Dockerfile's entry command, as compose starts them.
      const gatewayToml = await readCluster("gateway.toml");
      const config = parseToml(gatewayToml) as {
        backends: { ehr: { options: { base_url: string } } };
        middleware: { per_client: { options: { requests_per_second: number; burst: number } } };
      };
      const upstreamUrl = config.backends.ehr.options.base_url;
      const { entry, configPath } = await entryCommand();
      assertEquals(entry[0], "deno");
      const started3 = await Promise.allSettled(GATEWAYS.map((name, i) => {
        const text = rewrite(gatewayToml, "gateway.toml", [
          [/bind = "0\.0\.0\.0"\nport = 8080/, `bind = "127.0.0.1"\nport = ${gw[i].data}`],
          ["port = 9090", `port = ${gw[i].mgmt}`],
          ["/var/lib/gateway/", `${dir}/${name}/`],
          ["redis://redis:6379", `redis://127.0.0.1:${redisPort}`],
          [upstreamUrl, `http://127.0.0.1:${upstreamPort}${new URL(upstreamUrl).pathname}`],
          // HAProxy's address: the compose network's there, the loopback here.
          [/trusted_proxies = \[.*\]/, `trusted_proxies = ["127.0.0.1"]`],
          ...NATS.map((n, j): [string, string] => [`${n}:4222`, `127.0.0.1:${nats[j].client}`]),
          // The one setting added: what the killed gateway held goes to another after
          // nats_ack_wait_secs (docs/scaling.md), 30 s by default: 3 s here, for the run time.
          ["nats_replicas = 3\n", "nats_replicas = 3\nnats_ack_wait_secs = 3\n"],
          // A small bucket (the same one in Redis): 200/s with a burst of 400 is more than a
          // loaded test machine pushes through HAProxy, three gateways and JetStream, so the
          // client never got refused and queued thousands of messages.
          [`requests_per_second = ${rateOf(config)}\n`, `requests_per_second = ${RATE}\n`],
          [`burst = ${burstOf(config)}\n`, `burst = ${BURST}\n`],
        ]);
        return startGateway({
          configText: text,
          env,
          runArgs: (path) => entry.slice(1).map((a) => a === configPath ? path : a),
          readyTimeoutMs: 30_000,
        });
      }));
      gateways = started3.flatMap((r) => r.status === "fulfilled" ? [r.value] : []);
      for (const g of gateways) outputs.push(() => `gateway ${g.pid}: ${g.output()}`);
      for (const r of started3) if (r.status === "rejected") throw r.reason;
      // Ready is not the queue's streams made: on a loaded machine JetStream's first answer can
      // take longer than nats_timeout_secs, and the queue, degraded, answers 503 and tries again
      // in the background. The claims below start from a usable queue on every gateway.
      await waitFor(async () => {
        for (const g of gateways) {
          const queues = (await (await g.mgmtFetch("/admin/queues")).json()).queues;
          if (queues.some((q: { degraded: unknown }) => q.degraded !== null)) return false;
        }
        return true;
      }, { timeoutMs: 60_000, intervalMs: 200, description: "every gateway's queue on JetStream" });

      // HAProxy: haproxy.cfg with the gateways' names mapped to their ports.
      const haproxyPath = `${dir}/haproxy.cfg`;
      await Deno.writeTextFile(
        haproxyPath,
        rewrite(await readCluster("haproxy.cfg"), "haproxy.cfg", [
          ["bind :8080", `bind 127.0.0.1:${front}`],
          ["bind :8404", `bind 127.0.0.1:${freePort()}`],
          ...GATEWAYS.map((n, i): [string, string] => [`${n}:8080`, `127.0.0.1:${gw[i].data}`]),
        ]),
      );
      const balancer = spawnCaptured(findBinary("haproxy")!, ["-db", "-f", haproxyPath]);
      haproxy = balancer;
      outputs.push(() => `haproxy: ${balancer.output()}`);
      await waitReady(balancer, {
        name: "haproxy",
        check: () => canConnect(front),
        description: `HAProxy listening on 127.0.0.1:${front}`,
        timeoutMs: 10_000,
      });
      const ready = performance.now();

      const post = async (id: string): Promise<number> => {
        const res = await fetch(`http://127.0.0.1:${front}/fhir/Observation`, {
          method: "POST",
          headers: { "content-type": "application/fhir+json" },
          body: JSON.stringify({ resourceType: "Observation", id }),
        });
        await res.body?.cancel();
        return res.status;
      };

      /** POST through HAProxy from the address `source` (curl binds it): the status, 0 if none. */
      const postFrom = async (source: string, id: string): Promise<number> => {
        const r = await curl([
          "-s",
          "-o",
          "/dev/null",
          "-w",
          "%{http_code}",
          "--interface",
          source,
          "-H",
          "content-type: application/fhir+json",
          "--data",
          JSON.stringify({ resourceType: "Observation", id }),
          `http://127.0.0.1:${front}/fhir/Observation`,
        ], 10_000);
        return Number(r.stdout) || 0;
      };

      // The rate limit across the gateways: one client (127.0.0.1) sends until it was refused
      // 20 times; round robin spreads it over the three, which take from one bucket in Redis.
      startUpstream();
      const [rate, burst] = [RATE, BURST];
      const accepted: string[] = [];
      const other: number[] = [];
      let limited = 0;
      let sent = 0;
      const t0 = performance.now();
      await Promise.all(Array.from({ length: 16 }, async () => {
        while (limited < 20 && sent < 5_000) {
          const id = `rl-${sent++}`;
          const status = await post(id);
          if (status === 202) accepted.push(id);
          else if (status === 429) limited++;
          else other.push(status);
        }
      }));
      const elapsed = (performance.now() - t0) / 1000;
      assertEquals(other, [], "only 202 and 429");
      assert(limited >= 20, `refused ${limited} of ${sent}`);
      // One bucket: its burst and what it refilled, not that of three (16: answers in flight).
      assert(
        accepted.length >= burst && accepted.length <= burst + rate * elapsed + 16,
        `${accepted.length} accepted in ${elapsed.toFixed(2)} s (burst ${burst}, ${rate}/s)`,
      );
      const bucketKey = async (client: string) =>
        `gateway:rate_limit:per_client:${(await sha256Hex(client)).slice(0, 32)}`;
      assertEquals(
        (await cli("-a", env.REDIS_PASSWORD, "exists", await bucketKey("127.0.0.1"))).stdout.trim(),
        "1",
        "the client's bucket is in Redis",
      );
      // Another client (another source address) has a bucket of its own: HAProxy's address is
      // not the key (X-Forwarded-For set by HAProxy, read by the gateways' ip_filter).
      const other2 = await postFrom("127.0.0.2", "rl-other");
      assertEquals(other2, 202);
      accepted.push("rl-other");
      assertEquals(
        (await cli("-a", env.REDIS_PASSWORD, "exists", await bucketKey("127.0.0.2"))).stdout.trim(),
        "1",
        "the second client's bucket is its own",
      );
      await waitFor(() => Promise.resolve(accepted.every((id) => delivered.has(id))), {
        timeoutMs: 20_000,
        intervalMs: 50,
        description: `the ${accepted.length} accepted messages at the upstream`,
      });
      const rateDone = performance.now();

      // The upstream goes down: messages are acknowledged (202) all the same; one gateway is
      // killed with SIGKILL; what was acknowledged arrives once the upstream is up again.
      await upstream!.shutdown();
      upstream = undefined;
      const acknowledged: string[] = [];
      let resent = 0;
      const sendUntilAcknowledged = async (id: string) => {
        for (let attempt = 0; attempt < 50; attempt++) {
          // A client of its own (127.0.0.3): the bucket 127.0.0.1 emptied does not matter here.
          const status = await postFrom("127.0.0.3", id);
          if (status === 202) return void acknowledged.push(id);
          resent++;
          // A client's pacing before sending again (not a wait for an event).
          await new Promise((r) => setTimeout(r, 50));
        }
        throw new Error(`${id} was never acknowledged`);
      };
      // Six: two to each gateway (round robin), so the one killed next acknowledged some.
      for (let i = 0; i < 6; i++) await sendUntilAcknowledged(`down-${i}`);
      assertEquals(resent, 0, "every gateway acknowledged while the upstream was down");
      gateways[1].process.kill("SIGKILL");
      assertEquals((await gateways[1].process.status).signal, "SIGKILL");
      for (let i = 6; i < 12; i++) await sendUntilAcknowledged(`down-${i}`);
      assert(acknowledged.every((id) => !delivered.has(id)), "nothing delivered while down");
      startUpstream();
      // After the queue's back-off, or, for a message the killed gateway held when it died,
      // after nats_ack_wait_secs.
      await waitFor(() => Promise.resolve(acknowledged.every((id) => delivered.has(id))), {
        timeoutMs: 20_000,
        intervalMs: 50,
        description: "every acknowledged message at the upstream",
      });
      console.log(
        `cluster deployment: ready in ${Math.round(ready - started)} ms; rate limit: ${
          accepted.length - 1
        } of ${sent} accepted in ${elapsed.toFixed(2)} s (${limited} refused); 12 acknowledged ` +
          `with the upstream down and a gateway killed (${resent} sent again), all delivered ` +
          `${Math.round(performance.now() - rateDone)} ms after; total ${
            Math.round(performance.now() - started)
          } ms`,
      );
    } catch (err) {
      console.error(outputs.map((o) => o()).join("\n").slice(-8000));
      throw err;
    } finally {
      await upstream?.shutdown();
      // HAProxy, then the gateways (SIGTERM: they drain and close their connections), then the
      // engines they use.
      await haproxy?.stop();
      await Promise.all(gateways.map((g) => g.stop()));
      await Promise.all(engines.map((p) => p.stop()));
      await removeDir(dir);
    }
  },
});
