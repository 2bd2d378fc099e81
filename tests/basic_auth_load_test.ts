/**
 * `basic_auth` under password guessing, with files Debian's `htpasswd -B -C <cost>` wrote: the
 * checks run in password workers, so 80 parallel wrong passwords for a cost-12 user leave
 * `/healthz` and another pipeline fast; an unknown user takes as long as a known one (the decoy
 * has the file's median cost); a client address past its check budget gets 429 without hashing.
 */
import { assert, assertEquals } from "./assert.ts";
import { startTestGateway } from "./harness.ts";
import { freePort, requirePeer, runCommand, startGateway } from "./support/mod.ts";

const HTPASSWD = () => requirePeer("htpasswd", "htpasswd", "apache2-utils");

/** Writes `users` (name -> bcrypt cost) with `htpasswd -B -C`, each password `<name>-pw`. */
async function writeHtpasswd(file: string, users: Record<string, number>): Promise<void> {
  let create = true;
  for (const [user, cost] of Object.entries(users)) {
    const args = ["-B", "-C", String(cost), "-b", ...(create ? ["-c"] : []), file, user];
    const r = await runCommand("htpasswd", [...args, `${user}-pw`]);
    assertEquals(r.code, 0, r.stderr);
    create = false;
  }
}

/** Pipeline `api` behind `basic_auth` (with `options`) and pipeline `other` without, both echo. */
function twoPipelines(file: string, options = ""): string {
  return `
[endpoints.api]
service = "http"
[endpoints.api.options]
path_prefix = "/api"

[endpoints.other]
service = "http"
[endpoints.other.options]
path_prefix = "/other"

[middleware.auth]
type = "basic_auth"
[middleware.auth.options]
htpasswd_path = "${file}"
${options}

[backends.echo]
service = "echo"

[pipelines.api]
endpoints = ["api"]
middleware = ["auth"]
backends = ["echo"]

[pipelines.other]
endpoints = ["other"]
backends = ["echo"]
`;
}

function basic(user: string, password: string): HeadersInit {
  return { authorization: `Basic ${btoa(`${user}:${password}`)}` };
}

/** Milliseconds a GET of `url` takes, body read. */
async function timed(url: string, headers?: HeadersInit): Promise<[number, number]> {
  const started = performance.now();
  const res = await fetch(url, { headers });
  await res.arrayBuffer();
  return [performance.now() - started, res.status];
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

Deno.test({
  name:
    "basic_auth: 80 parallel wrong passwords (bcrypt 12) leave /healthz and another pipeline p99 < 50 ms",
  ignore: !HTPASSWD(),
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "gw-basic-load-" });
    const file = `${dir}/users.htpasswd`;
    await writeHtpasswd(file, { ada: 12 });
    const [port, mgmtPort] = [freePort(), freePort()];
    // Two isolates (the main thread and a data-plane worker), each with its password pool; the
    // budget is raised so that every attempt is hashed.
    await using gw = await startGateway({
      configText: twoPipelines(file, "address_check_burst = 1000") +
        `[runtime]\nworkers = 2\n[network.main]\nbind = "127.0.0.1"\nport = ${port}\n` +
        `[management]\nbind = "127.0.0.1"\nport = ${mgmtPort}\n[logging]\nlevel = "warn"\n`,
    });
    try {
      const data = gw.dataUrl(port);
      const probes = { healthz: [] as number[], other: [] as number[] };
      // Warm both paths (connections, the first answer of each isolate) before measuring.
      for (let i = 0; i < 5; i++) {
        await timed(`${gw.mgmtUrl}/healthz`);
        await timed(`${data}/other/warm`);
      }
      let attacking = true;
      const started = performance.now();
      const attack = Promise.all(
        Array.from(
          { length: 80 },
          (_, i) =>
            fetch(`${data}/api/x`, { headers: basic("ada", `guess-${i}`) })
              .then(async (r) => (await r.arrayBuffer(), r.status)),
        ),
      ).finally(() => attacking = false);
      const probing = (async () => {
        while (attacking) {
          const [h, hs] = await timed(`${gw.mgmtUrl}/healthz`);
          const [o, os] = await timed(`${data}/other/x`);
          assertEquals([hs, os], [200, 200]);
          if (!attacking) break; // a probe that ended after the attack measured nothing
          probes.healthz.push(h);
          probes.other.push(o);
          // The probe rate (a steady client, about 100 requests/s), not a wait for an event: back
          // to back, the probes alone would keep both cores busy.
          await new Promise((r) => setTimeout(r, 10));
        }
      })();
      const statuses = await attack;
      const attackMs = performance.now() - started;
      await probing;
      const hashed = statuses.filter((s) => s === 401).length;
      const summary = (v: number[]) =>
        `p50 ${quantile(v, 0.5).toFixed(1)} p99 ${quantile(v, 0.99).toFixed(1)} ` +
        `max ${quantile(v, 1).toFixed(1)} ms over ${v.length}`;
      console.log(
        `80 attempts in ${attackMs.toFixed(0)} ms (${hashed} hashed, ` +
          `${statuses.filter((s) => s === 503).length} busy); /healthz ${
            summary(probes.healthz)
          }; other pipeline ${summary(probes.other)}`,
      );
      // The attack did cost what it should: most attempts were hashed, for seconds.
      assert(hashed >= 60, `only ${hashed} of 80 attempts were checked: ${statuses}`);
      assert(statuses.every((s) => s === 401 || s === 503), `statuses: ${statuses}`);
      assert(attackMs > 2_000, `80 cost-12 checks took only ${attackMs.toFixed(0)} ms`);
      assert(quantile(probes.healthz, 0.99) < 50, `/healthz ${summary(probes.healthz)}`);
      assert(quantile(probes.other, 0.99) < 50, `other pipeline ${summary(probes.other)}`);
      assert(probes.healthz.length >= 50, `only ${probes.healthz.length} probes`);
    } finally {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});

Deno.test({
  name: "basic_auth: an unknown user's wrong password takes as long as a known user's",
  ignore: !HTPASSWD(),
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "gw-basic-timing-" });
    const file = `${dir}/users.htpasswd`;
    // Mixed costs: the decoy takes the median (11), not the cheapest user's nor a fixed cost.
    await writeHtpasswd(file, { ada: 11, bob: 11, cy: 5 });
    const gw = await startTestGateway(twoPipelines(file, "address_check_burst = 1000"), { dir });
    try {
      const url = `${gw.url}/api/x`;
      const known: number[] = [];
      const unknown: number[] = [];
      await timed(url, basic("ada", "warm-up")); // the password worker's start is not measured
      for (let i = 0; i < 16; i++) {
        // Alternate which goes first, so that a slow moment of the machine hits both alike.
        const pair = [["ada", known], [`nobody-${i}`, unknown]] as const;
        for (const [user, into] of i % 2 ? pair : [...pair].reverse()) {
          const [ms, status] = await timed(url, basic(user, `wrong-${i}`));
          assertEquals(status, 401);
          into.push(ms);
        }
      }
      const ratio = quantile(unknown, 0.5) / quantile(known, 0.5);
      console.log(
        `median wrong password: known ${quantile(known, 0.5).toFixed(1)} ms, unknown ` +
          `${quantile(unknown, 0.5).toFixed(1)} ms (ratio ${ratio.toFixed(2)})`,
      );
      assert(ratio > 0.8 && ratio < 1.25, `unknown/known median time ${ratio.toFixed(2)}`);
    } finally {
      await gw.stop();
    }
  },
});

Deno.test({
  name: "basic_auth: an address past its check budget gets 429 with Retry-After, not a hash",
  ignore: !HTPASSWD(),
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "gw-basic-budget-" });
    const file = `${dir}/users.htpasswd`;
    await writeHtpasswd(file, { ada: 5 });
    const config = twoPipelines(file, "address_check_burst = 3\naddress_checks_per_minute = 2");
    const gw = await startTestGateway(config, { dir });
    try {
      const url = `${gw.url}/api/x`;
      assertEquals((await timed(url, basic("ada", "ada-pw")))[1], 200);
      assertEquals((await timed(url, basic("ada", "wrong-1")))[1], 401);
      assertEquals((await timed(url, basic("nobody", "wrong-2")))[1], 401);
      const refused = await fetch(url, { headers: basic("ada", "wrong-3") });
      const body = await refused.json();
      assertEquals([refused.status, body.error.code], [429, "too_many_password_checks"]);
      // 2 checks a minute: a check is back within 30 s (less the time these requests took).
      const retryAfter = Number(refused.headers.get("retry-after"));
      assert(retryAfter >= 20 && retryAfter <= 30, `Retry-After: ${retryAfter}`);
      // The user who logged in is remembered: no check, no budget needed.
      assertEquals((await timed(url, basic("ada", "ada-pw")))[1], 200);
      const metrics = await (await gw.mgmtFetch("/metrics")).text();
      assert(
        /gateway_errors_total\{code="too_many_password_checks"\} 1\b/.test(metrics),
        "counted in gateway_errors_total",
      );
      // A reload builds a new generation: it checks passwords (the pool's lease passes on) and its
      // budgets start again, like rate_limit's.
      await gw.writeConfig(config);
      const reload = await gw.mgmtFetch("/api/reload", { method: "POST" });
      assertEquals(reload.status, 200, await reload.text());
      assertEquals((await timed(url, basic("ada", "ada-pw")))[1], 200);
      assertEquals((await timed(url, basic("ada", "wrong-4")))[1], 401);
    } finally {
      await gw.stop();
    }
  },
});
