/**
 * `basic_auth` under password guessing, with files Debian's `htpasswd -B -C <cost>` wrote: the
 * checks run in password workers, so while parallel wrong passwords for a cost-12 user are
 * checked, `/healthz` and another pipeline answer; an unknown user costs a hash of the file's
 * median cost, as a known one does (counted by the gateway, not timed); a client address past its check budget gets 429
 * without hashing.
 */
import { assert, assertEquals } from "./assert.ts";
import { startTestGateway } from "./harness.ts";
import { freePort, requirePeer, runCommand, startGateway } from "./support/mod.ts";
import { parseExposition, sampleValue } from "./support/metrics.ts";

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

/**
 * Parallel wrong passwords of the load test: two are parallel, and on a 2-core machine (one
 * password worker) one of them waits in the pool's queue; each more is another 0.2 s of hashing
 * that answers after the first one, which is what the probes race.
 */
const ATTEMPTS = 2;
/** Probe pairs (/healthz, the other pipeline) that must be answered before any attempt is. */
const PROBES = 5;

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/**
 * Sends a wrong password for `user` on a connection of its own; resolves once the request is in
 * the gateway's socket, with the answer's status to come (`onAnswer` runs at its first byte).
 */
async function sendAttempt(
  port: number,
  user: string,
  password: string,
  onAnswer: () => void,
): Promise<{ status: Promise<number> }> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const auth = btoa(`${user}:${password}`);
  await conn.write(
    new TextEncoder().encode(
      `GET /api/x HTTP/1.1\r\nHost: x\r\nAuthorization: Basic ${auth}\r\nConnection: close\r\n\r\n`,
    ),
  );
  const status = (async () => {
    const buf = new Uint8Array(4096);
    let text = "";
    try {
      for (let n; (n = await conn.read(buf)) !== null;) {
        if (text === "") onAnswer();
        text += new TextDecoder().decode(buf.subarray(0, n));
      }
    } finally {
      conn.close();
    }
    return Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
  })();
  return { status };
}

Deno.test({
  name:
    "basic_auth: parallel wrong passwords (bcrypt 12) are checked off the event loop: /healthz and another pipeline answer first",
  ignore: !HTPASSWD(),
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "gw-basic-load-" });
    const file = `${dir}/users.htpasswd`;
    await writeHtpasswd(file, { ada: 12 });
    const [port, mgmtPort] = [freePort(), freePort()];
    // One isolate, which serves the management API and both pipelines, and its password worker;
    // the budget is raised so that every attempt is hashed.
    await using gw = await startGateway({
      configText: twoPipelines(file, "address_check_burst = 1000") +
        `[runtime]\nworkers = 1\n[network.main]\nbind = "127.0.0.1"\nport = ${port}\n` +
        `[management]\nbind = "127.0.0.1"\nport = ${mgmtPort}\n[logging]\nlevel = "warn"\n`,
    });
    try {
      const data = gw.dataUrl(port);
      // Warm both paths (connections, the first answers) before the attack.
      for (let i = 0; i < 5; i++) {
        await timed(`${gw.mgmtUrl}/healthz`);
        await timed(`${data}/other/warm`);
      }
      // The order of the answers is the proof, not their times. The attempts are in the
      // gateway's sockets before the first probe is sent: a cost-12 check (a fraction of a second) made on
      // the event loop would hold every request behind it until its 401 went out, so not even the
      // first probe pair could be answered before an attempt was; in the password worker, the
      // probes are answered while the attempts are checked.
      let attemptsAnswered = 0;
      const answers: Promise<number>[] = [];
      for (let i = 0; i < ATTEMPTS; i++) {
        const sent = await sendAttempt(port, "ada", `guess-${i}`, () => attemptsAnswered++);
        answers.push(sent.status);
      }
      const probes: number[] = [];
      let before = 0;
      while (attemptsAnswered === 0 && before < PROBES) {
        const [h, hs] = await timed(`${gw.mgmtUrl}/healthz`);
        const [o, os] = await timed(`${data}/other/x`);
        assertEquals([hs, os], [200, 200]);
        probes.push(h, o);
        if (attemptsAnswered === 0) before++;
      }
      const statuses = await Promise.all(answers);
      console.log(
        `${before} probe pairs answered before the first of ${ATTEMPTS} attempts; probe p50 ` +
          `${quantile(probes, 0.5).toFixed(1)} max ${quantile(probes, 1).toFixed(1)} ms`,
      );
      assertEquals(before, PROBES, "probe pairs answered while the attempts were being checked");
      // The attack did cost what it should: every attempt was hashed (401), not refused.
      assertEquals(statuses, Array(ATTEMPTS).fill(401));
    } finally {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});

Deno.test({
  name: "basic_auth: an unknown user's wrong password costs what a known user's does",
  ignore: !HTPASSWD(),
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "gw-basic-timing-" });
    const file = `${dir}/users.htpasswd`;
    // Mixed costs: the decoy takes the median (8), not the cheapest user's (4) nor a fixed cost.
    // The claim is counted by the gateway (the hashes at each cost), not timed, so a low median
    // proves it as a high one would, at 1/8 of cost 11's hashing (16 checks, 13 ms each).
    await writeHtpasswd(file, { ada: 8, bob: 8, cy: 4 });
    const gw = await startTestGateway(twoPipelines(file, "address_check_burst = 1000"), { dir });
    try {
      const url = `${gw.url}/api/x`;
      const known: number[] = [];
      const unknown: number[] = [];
      for (let i = 0; i < 8; i++) {
        const pair = [["ada", known], [`nobody-${i}`, unknown]] as const;
        for (const [user, into] of i % 2 ? pair : [...pair].reverse()) {
          const [ms, status] = await timed(url, basic(user, `wrong-${i}`));
          assertEquals(status, 401);
          into.push(ms);
        }
      }
      // What each answer cost, from the gateway's own count of the hashes it computed: the time
      // of an answer is that work (the same bcrypt rounds in the same password worker), while
      // durations measured here also carry whatever else the machine does.
      const exposition = parseExposition(await (await gw.mgmtFetch("/metrics")).text());
      const checks = exposition.samples.filter((s) => s.name === "gateway_password_checks_total");
      assertEquals(
        checks.map((s) => [s.labels.user, s.labels.parameters, s.value]).sort(),
        [["known", "bcrypt cost=8", 8], ["unknown", "bcrypt cost=8", 8]],
      );
      assertEquals(checks.every((s) => s.labels.middleware === "auth"), true);
      console.log(
        `median wrong password: known ${quantile(known, 0.5).toFixed(1)} ms, unknown ` +
          `${quantile(unknown, 0.5).toFixed(1)} ms`,
      );
      // The same wrong password again is remembered: no hash for either kind of user.
      assertEquals((await timed(url, basic("ada", "wrong-0")))[1], 401);
      assertEquals((await timed(url, basic("nobody-0", "wrong-0")))[1], 401);
      const again = parseExposition(await (await gw.mgmtFetch("/metrics")).text());
      for (const user of ["known", "unknown"]) {
        const labels = { middleware: "auth", user, parameters: "bcrypt cost=8" };
        assertEquals(sampleValue(again, "gateway_password_checks_total", labels), 8);
      }
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
