/**
 * The gateway executable: --validate-config, the embedded default, SIGTERM drain (the management
 * API's clients within the grace too), the exclusive lock of the state directory.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { ECHO_PIPELINE, startHeldUpstream, startTestGateway } from "./harness.ts";
import { makeSelfSignedCert } from "./certs.ts";
import {
  curl,
  freePort,
  removeDir,
  requirePeer,
  runCommand,
  startGateway,
  tempDir,
  TEST_MANAGEMENT_TOKEN,
  waitFor,
  withManagementToken,
} from "./support/mod.ts";

const ENTRY = ["run", "-A", "--unstable-net", "--unstable-no-legacy-abort", "gateway/main.ts"];

Deno.test("--validate-config: exit 0 for a valid file, 1 listing every problem with file and line", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      `${dir}/good.toml`,
      `[endpoints.e]\nservice = "http"\n[endpoints.e.options]\npath_prefix = "/e"\n` +
        `[backends.b]\nservice = "echo"\n[pipelines.p]\nendpoints = ["e"]\nbackends = ["b"]\n`,
    );
    const good = await runCommand(Deno.execPath(), [
      ...ENTRY,
      "--validate-config",
      `${dir}/good.toml`,
    ]);
    assertEquals(good.code, 0, good.stderr);
    assertMatch(good.stdout, /configuration is valid/);

    await Deno.writeTextFile(
      `${dir}/bad.toml`,
      [
        "[endpoints.api]",
        'service = "http"',
        "[endpoints.api.options]",
        'path_prefx = "/api"',
        "[backends.api]",
        'service = "http"',
        "[backends.api.options]",
        'base_url = "ftp://x"',
        "[pipelines.main]",
        'endpoints = ["api"]',
        'backends = ["ap"]',
      ].join("\n"),
    );
    const bad = await runCommand(Deno.execPath(), [
      ...ENTRY,
      "--validate-config",
      `${dir}/bad.toml`,
    ]);
    assertEquals(bad.code, 1);
    const lines = bad.stderr.trim().split("\n");
    // Every problem is listed, each with file:line and the dotted key path.
    assert(
      lines.some((l) => /bad\.toml:4: endpoints\.api\.options\.path_prefx: .*path_prefix/.test(l)),
      bad.stderr,
    );
    assert(lines.some((l) => /bad\.toml:8: backends\.api\.options\.base_url/.test(l)), bad.stderr);
    assert(
      lines.some((l) =>
        /bad\.toml:11: pipelines\.main\.backends.*`ap`.*did you mean `api`/.test(l)
      ),
      bad.stderr,
    );
    assertMatch(lines.at(-1)!, /problem\(s\)/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("SIGTERM with [runtime] shutdown_grace_secs: what outlasts the grace is cut, exit 0", async () => {
  // The upstream holds the request until the test ends: only the grace can end the drain.
  const up = startHeldUpstream(() => new Response("too late"));
  const dataPort = freePort();
  const mgmtPort = freePort();
  const gw = await startGateway({
    configText: `[network.main]\nbind = "127.0.0.1"\nport = ${dataPort}\n` +
      `[management]\nport = ${mgmtPort}\n[runtime]\nshutdown_grace_secs = 1\n` +
      `[endpoints.api]\nservice = "http"\n[endpoints.api.options]\npath_prefix = "/api"\n` +
      `[backends.up]\nservice = "http"\ntimeout_secs = 30\n[backends.up.options]\n` +
      `base_url = "${up.url}"\n[pipelines.p]\nendpoints = ["api"]\nbackends = ["up"]\n`,
  });
  try {
    const inFlight = fetch(`${gw.dataUrl(dataPort)}/api/slow`).then(
      async (r) => `${r.status} ${await r.text().catch(() => "")}`,
      () => "cut",
    );
    await up.arrived;
    const exit = await gw.stop();
    assertEquals(exit.code, 0, gw.output());
    // It exited while the upstream still held the request: the grace ended the drain, which the
    // log says (not a clock window).
    assertEquals(up.answered, 0, "exited without waiting for the request");
    assertMatch(gw.output(), /"grace_secs":1[,}]/);
    assertMatch(gw.output(), /drain timed out; closing remaining connections/);
    assert(!(await inFlight).includes("too late"));
  } finally {
    await up.stop();
  }
});

Deno.test("no --config: the embedded default serves echo under /echo on :8080", async () => {
  // The default binds 0.0.0.0:8080 and 127.0.0.1:9090; skip quietly if something else holds them.
  for (const port of [8080, 9090]) {
    try {
      Deno.listen({ port }).close();
    } catch {
      console.log(`port ${port} is taken: the embedded-default test cannot run here`);
      return;
    }
  }
  const child = new Deno.Command(Deno.execPath(), {
    args: ENTRY,
    // One isolate, as startGateway's (the claim is the embedded configuration, not its workers;
    // a worker isolate costs ~0.5 s of CPU to load the module graph).
    env: { GATEWAY_MANAGEMENT_TOKEN: TEST_MANAGEMENT_TOKEN, GATEWAY_WORKERS: "1" },
    stdout: "null",
    stderr: "piped",
  }).spawn();
  try {
    // Up when it answers (the bound only ends a start that failed; it is not a start time).
    let res: Response | undefined;
    await waitFor(async () => {
      res = await fetch("http://127.0.0.1:8080/echo/x?a=1").catch(() => undefined);
      return res !== undefined;
    }, { timeoutMs: 60_000, intervalMs: 100, description: "the default gateway on :8080" });
    assert(res, "the default gateway answers on :8080");
    const body = await res.json();
    assertEquals(body.path, "/x");
    assertEquals(body.query, { a: "1" });
    const info = await (await fetch("http://127.0.0.1:9090/admin/info", withManagementToken()))
      .json();
    assertEquals(info.config_file, null);
  } finally {
    child.kill("SIGTERM");
    const status = await child.status;
    await child.stderr.cancel();
    assertEquals(status.code, 0);
  }
});

Deno.test({
  name: "relative TLS paths resolve against the config file's directory, not the working directory",
  ignore: !requirePeer("curl", "curl", "curl") || !requirePeer("openssl", "openssl", "openssl"),
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "gw-relative-tls-" });
    await Deno.mkdir(`${dir}/certs`);
    const cert = await makeSelfSignedCert(`${dir}/certs`);
    const gw = await startTestGateway(ECHO_PIPELINE, {
      dir,
      network: 'tls_cert_path = "certs/server.crt"\ntls_key_path = "certs/server.key"\n',
    });
    try {
      assert(Deno.cwd() !== dir, "the test runs from another directory");
      // curl trusts the self-signed certificate as a CA (Deno's client refuses it as a leaf).
      const r = await curl([
        "--cacert",
        cert.certPath,
        "-w",
        "\n%{http_code}",
        `https://localhost:${gw.dataPort}/echo/x`,
      ]);
      assertEquals(r.code, 0, r.stderr);
      assertMatch(r.stdout, /\n200$/);
    } finally {
      await gw.stop();
    }
  },
});

Deno.test("SIGTERM: clients trickling bodies to the management API do not hold the exit past shutdown_grace_secs", async () => {
  const mgmtPort = freePort();
  const gw = await startGateway({
    configText: `[network.main]\nbind = "127.0.0.1"\nport = ${freePort()}\n` +
      `[management]\nport = ${mgmtPort}\n[runtime]\nshutdown_grace_secs = 2\n` +
      `[endpoints.api]\nservice = "http"\n[endpoints.api.options]\npath_prefix = "/api"\n` +
      `[backends.echo]\nservice = "echo"\n[pipelines.p]\nendpoints = ["api"]\nbackends = ["echo"]\n`,
  });
  const enc = new TextEncoder();
  let trickling = true;
  // Three POSTs without a token announce a large body and trickle it: each is answered 401 at
  // once, and the runtime goes on reading the rest of the body for as long as it comes.
  const clients = await Promise.all([0, 1, 2].map(async () => {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: mgmtPort });
    await conn.write(enc.encode(
      `POST /${gw.mgmtPrefix}/reload HTTP/1.1\r\nHost: 127.0.0.1:${mgmtPort}\r\n` +
        `Content-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{`,
    ));
    const drip = (async () => {
      for (let i = 0; trickling && i < 300; i++) {
        await new Promise((r) => setTimeout(r, 200));
        if (await conn.write(enc.encode(" ")).then(() => false, () => true)) return;
      }
    })();
    const buf = new Uint8Array(4096);
    const n = await conn.read(buf);
    const head = new TextDecoder().decode(buf.subarray(0, n ?? 0));
    // The rest: read until the gateway closes the connection.
    const closed = (async () => {
      try {
        while ((await conn.read(buf)) !== null) { /* nothing more is expected */ }
      } catch {
        // reset: closed as well
      }
    })();
    return { conn, drip, head, closed };
  }));
  try {
    for (const c of clients) assertMatch(c.head, /^HTTP\/1\.1 401 /);
    const exit = await gw.stop(); // SIGTERM, then SIGKILL after 10 s
    // Exit 0: by itself, before the harness's SIGKILL at 10 s, while the clients would trickle on
    // for a minute (no elapsed-time window).
    assertEquals(exit.code, 0, gw.output());
    await Promise.all(clients.map((c) => c.closed));
  } finally {
    trickling = false;
    for (const c of clients) {
      await c.drip;
      try {
        c.conn.close();
      } catch {
        // closed already
      }
    }
  }
});

/**
 * The gateway started after the kill -9 also makes the SIGTERM drain's claim at its stop (a
 * request in flight finishes, then exit 0): one gateway start (~0.7 s of CPU) spared.
 */
Deno.test("state directory: a second gateway on it is refused and touches nothing; a kill -9 leaves no lock behind; SIGTERM: in-flight requests finish, then the process exits 0", async (t) => {
  // The upstream of /slow answers once the gateway has begun its drain: the request is in
  // flight then.
  const up = startHeldUpstream(() => new Response("slow but complete"));
  const shared = await tempDir("gw-state-lock-");
  const auditFile = `${shared}/audit/audit.jsonl`;
  const dataPort = freePort();
  const config = `[network.main]\nbind = "127.0.0.1"\nport = ${dataPort}\n` +
    `[management]\nport = ${freePort()}\n` +
    `[cloud]\nstate_dir = "${shared}/state"\n` +
    `[audit]\nfile = "${auditFile}"\nflush_interval_ms = 20\n` +
    `[endpoints.api]\nservice = "http"\n[endpoints.api.options]\npath_prefix = "/api"\n` +
    `[endpoints.later]\nservice = "http"\n[endpoints.later.options]\npath_prefix = "/later"\n` +
    `[backends.echo]\nservice = "echo"\n` +
    `[backends.later]\nservice = "http"\n[backends.later.options]\nbase_url = "http://127.0.0.1:1"\n` +
    `[backends.later.queue]\ndir = "${shared}/queue"\n` +
    `[pipelines.p]\nendpoints = ["api"]\nbackends = ["echo"]\n` +
    `[pipelines.q]\nendpoints = ["later"]\nbackends = ["later"]\n` +
    `[endpoints.slow]\nservice = "http"\n[endpoints.slow.options]\npath_prefix = "/slow"\n` +
    `[backends.up]\nservice = "http"\n[backends.up.options]\nbase_url = "${up.url}"\n` +
    `[pipelines.s]\nendpoints = ["slow"]\nbackends = ["up"]\n`;
  const first = await startGateway({ configText: config });
  const second = await tempDir("gw-state-lock-second-");
  try {
    const res = await fetch(`${first.dataUrl(dataPort)}/api/x`);
    await res.body?.cancel();
    await waitFor(async () => (await Deno.readTextFile(auditFile).catch(() => "")).length > 0, {
      timeoutMs: 10_000,
      description: "the first gateway's audit record",
    });
    // A message the first gateway is writing: a queue that starts sweeps its tmp/ directory.
    const writing = `${shared}/queue/tmp/being-written.tmp`;
    await Deno.writeTextFile(writing, "half a message");
    const auditBefore = await Deno.readTextFile(auditFile);

    // The same configuration again (same ports, same state): the lock, not the ports, refuses it.
    await Deno.writeTextFile(`${second}/gateway.toml`, config);
    const refused = await runCommand(
      Deno.execPath(),
      [...ENTRY, "--config", `${second}/gateway.toml`],
      {
        env: {
          GATEWAY_MANAGEMENT_TOKEN: TEST_MANAGEMENT_TOKEN,
          NO_COLOR: "1",
          GATEWAY_WORKERS: "1",
        },
        timeoutMs: 60_000,
      },
    );
    assertEquals(refused.code, 1, refused.stderr);
    const lines = refused.stderr.trim().split("\n");
    assertEquals(lines.length, 1, refused.stderr);
    assertEquals(
      lines[0],
      `gateway not started: the state directory ${shared}/state is in use by another gateway ` +
        `(pid ${first.pid}); stop it, or give this one its own [cloud] state_dir`,
    );
    assertEquals(await Deno.readTextFile(auditFile), auditBefore, "no audit record written");
    assert(await Deno.stat(writing).then(() => true, () => false), "the queue was not opened");

    // A gateway killed with SIGKILL: the OS lets its lock go, and the next one starts.
    first.process.kill("SIGKILL");
    await first.process.status;
    const next = await startGateway({ configText: config });
    let stopped = false;
    try {
      const again = await fetch(`${next.dataUrl(dataPort)}/api/y`);
      assertEquals(again.status, 200);
      await again.body?.cancel();
      assert(!(await Deno.stat(writing).then(() => true, () => false)), "its queue was opened");

      stopped = await t.step(
        "SIGTERM: in-flight requests finish, then the process exits 0",
        async () => {
          const inFlight = fetch(`${next.dataUrl(dataPort)}/slow/x`);
          await up.arrived;
          const status = next.stop();
          await waitFor(() => Promise.resolve(/draining in-flight requests/.test(next.output())), {
            timeoutMs: 10_000,
            description: "the drain begun",
          });
          up.release();
          const res = await inFlight;
          assertEquals(res.status, 200);
          assertEquals(await res.text(), "slow but complete");
          const exit = await status;
          assertEquals(exit.code, 0, next.output());
          assertMatch(next.output(), /gateway stopped/);
          const after = await fetch(`${next.dataUrl(dataPort)}/api/x`).then(
            () => "open",
            () => "closed",
          );
          assertEquals(after, "closed");
        },
      );
      assert(stopped, "the drain step passed");
    } finally {
      const exit = await next.stop();
      if (!stopped) assertEquals(exit.code, 0, next.output());
    }
  } finally {
    await first.stop();
    await up.stop();
    await removeDir(second);
    await removeDir(shared);
  }
});
