/** Hot reload: API reloads, watched files, invalid configs kept out, a reload storm under load. */
import { canConnect, waitFor, withManagementToken } from "./support/mod.ts";
import { assert, assertEquals } from "./assert.ts";
import { startTestGateway } from "./harness.ts";

const echoAt = (prefix: string, pipeline = "echo") => `
[endpoints.e]
service = "http"
[endpoints.e.options]
path_prefix = "${prefix}"
[backends.echo]
service = "echo"
[pipelines.${pipeline}]
endpoints = ["e"]
backends = ["echo"]
`;

Deno.test("POST /api/reload swaps a valid config and rejects an invalid one", async () => {
  const gw = await startTestGateway(echoAt("/one"));
  try {
    assertEquals(await fetch(`${gw.url}/one`).then((r) => r.body?.cancel()), undefined);
    await gw.writeConfig(echoAt("/two"));
    const ok = await fetch(`${gw.mgmt}/api/reload`, withManagementToken({ method: "POST" }));
    const outcome = await ok.json();
    assertEquals(ok.status, 200);
    assertEquals(outcome.ok, true);
    assertEquals(outcome.generation, 2);
    const moved = await fetch(`${gw.url}/two/x`);
    assertEquals((await moved.json()).path, "/x");
    const old = await fetch(`${gw.url}/one/x`);
    await old.body?.cancel();
    assertEquals(old.status, 404);

    await gw.writeConfig(echoAt("/three") + '\n[backends.bad]\nservice = "nope"\n');
    const bad = await fetch(`${gw.mgmt}/api/reload`, withManagementToken({ method: "POST" }));
    const badOutcome = await bad.json();
    assertEquals(bad.status, 422);
    assertEquals(badOutcome.ok, false);
    assert(badOutcome.errors.length >= 1);
    assertEquals(badOutcome.errors[0].path, "backends.bad.service");
    // The running config is unchanged.
    const still = await fetch(`${gw.url}/two/x`);
    assertEquals(still.status, 200);
    await still.body?.cancel();
  } finally {
    await gw.stop();
  }
});

Deno.test("a changed config file is picked up by the watcher", async () => {
  const gw = await startTestGateway(echoAt("/before"));
  try {
    await gw.writeConfig(echoAt("/after"));
    // The watcher's reload lands: the new path answers (the bound only ends a wait that failed).
    await waitFor(async () => {
      const res = await fetch(`${gw.url}/after`);
      await res.body?.cancel();
      return res.status === 200;
    }, { timeoutMs: 30_000, description: "/after served after the watched file changed" });
  } finally {
    await gw.stop();
  }
});

Deno.test("a listener change starts the new port before closing the old one", async () => {
  const gw = await startTestGateway(echoAt("/e"));
  try {
    const text = await Deno.readTextFile(gw.configFile);
    const { freeTcpPort } = await import("./harness.ts");
    const newPort = freeTcpPort();
    await Deno.writeTextFile(
      gw.configFile,
      text.replace(`port = ${gw.dataPort}`, `port = ${newPort}`),
    );
    const outcome =
      await (await fetch(`${gw.mgmt}/api/reload`, withManagementToken({ method: "POST" }))).json();
    assertEquals(outcome.ok, true);
    const res = await fetch(`http://127.0.0.1:${newPort}/e`);
    assertEquals(res.status, 200);
    await res.body?.cancel();
    // The old listener closes once its connections are let go.
    await waitFor(async () => !(await canConnect(gw.dataPort)), {
      timeoutMs: 10_000,
      description: "the old port closed",
    });
    const gone = await fetch(`${gw.url}/e`).then(() => "open", () => "closed");
    assertEquals(gone, "closed");
  } finally {
    await gw.stop();
  }
});

Deno.test("reload storm: 20 reloads (valid and invalid) under continuous load, zero failed requests", async () => {
  const gw = await startTestGateway(echoAt("/load", "p0"), { logLevel: "warn" });
  try {
    let stop = false;
    let ok = 0;
    const failures: string[] = [];
    const worker = async () => {
      while (!stop) {
        try {
          const res = await fetch(`${gw.url}/load/x`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: '{"n":1}',
          });
          const body = await res.json();
          if (res.status === 200 && body.data?.n === 1) ok++;
          else failures.push(`${res.status} ${JSON.stringify(body)}`);
        } catch (err) {
          failures.push(String(err));
        }
      }
    };
    const workers = Array.from({ length: 8 }, worker);
    const PER_RELOAD = 8;
    const outcomes: boolean[] = [];
    for (let i = 1; i <= 20; i++) {
      const invalid = i % 3 === 0;
      await gw.writeConfig(
        invalid
          ? echoAt("/load", `p${i}`) + '\n[pipelines.broken]\nendpoints = ["missing"]\n'
          : echoAt("/load", `p${i}`),
      );
      const res = await fetch(`${gw.mgmt}/api/reload`, withManagementToken({ method: "POST" }));
      outcomes.push((await res.json()).ok);
      // Requests are served between one reload and the next, however fast the machine: wait for
      // some to finish rather than for a time in which they might.
      const served = ok;
      await waitFor(() => Promise.resolve(ok >= served + PER_RELOAD || failures.length > 0), {
        timeoutMs: 30_000,
        intervalMs: 5,
        description: `${PER_RELOAD} requests served after reload ${i}`,
      });
    }
    stop = true;
    await Promise.all(workers);
    assertEquals(failures, []);
    assert(ok >= 20 * PER_RELOAD, `requests served during the storm: ${ok}`);
    assertEquals(outcomes.filter((o) => !o).length, 6);
  } finally {
    await gw.stop();
  }
});

Deno.test("config_generation counts applied reloads only: one refused after its build leaves it", async () => {
  const gw = await startTestGateway(echoAt("/e"));
  // A port held without SO_REUSEPORT: the new listener cannot start, after the build succeeded.
  const holder = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held = (holder.addr as Deno.NetAddr).port;
  const reload = async () =>
    await (await fetch(`${gw.mgmt}/api/reload`, withManagementToken({ method: "POST" }))).json();
  const generation = async () =>
    (await (await gw.mgmtFetch("/admin/info")).json()).config_generation;
  try {
    assertEquals(await generation(), 1);
    const text = await Deno.readTextFile(gw.configFile);
    await Deno.writeTextFile(
      gw.configFile,
      text.replace(`port = ${gw.dataPort}`, `port = ${held}`),
    );
    for (let i = 0; i < 2; i++) {
      const refused = await reload();
      assertEquals([refused.ok, refused.generation], [false, 1]);
      assertEquals(refused.errors[0].path, "network");
    }
    assertEquals(await generation(), 1);
    // The watcher may have tried the refused file too: still nothing applied.
    await Deno.writeTextFile(gw.configFile, text.replace("/e", "/f"));
    const applied = await reload();
    assertEquals(applied.ok, true);
    // 1 at start, +1 per applied reload (the watcher may apply the same file once more, so the
    // two are read until they agree on one state).
    const successes = async () => {
      const metrics = await (await gw.mgmtFetch("/metrics")).text();
      return Number(/gateway_config_reloads_total\{outcome="success"\} (\d+)/.exec(metrics)![1]);
    };
    await waitFor(async () => (await generation()) === 1 + (await successes()), {
      timeoutMs: 5_000,
      description: "config_generation = 1 + applied reloads",
    });
  } finally {
    holder.close();
    await gw.stop();
  }
});
