/**
 * The configuration of tracking and of the management API's roles: validation (a clear problem
 * for content without a key, a token table without a token), defaults (a tracking pipeline without
 * `[tracking]` gets the store's defaults), the writer's round trip; and the roles at the
 * management API's door (viewers read, operators write, admins reload).
 */
import { assertEquals, assertMatch } from "./assert.ts";
import { validateConfigText, writeConfigToml } from "../shared/gateway_config/mod.ts";
import { ECHO_PIPELINE, startTestGateway } from "./harness.ts";
import { waitFor } from "./support/mod.ts";

Deno.test("tracking config: defaults, problems, round trip", () => {
  const ok = validateConfigText(
    `${ECHO_PIPELINE}\n[pipelines.echo.tracking]\nmax_content_bytes = 4096\n`,
    "t.toml",
  );
  assertEquals(ok.problems, []);
  const t = ok.config!.pipelines.echo.tracking!;
  assertEquals([t.enabled, t.content, t.max_content_bytes], [true, [], 4096]);
  assertEquals(ok.config!.tracking?.max_age_hours, 168);
  const written = writeConfigToml(ok.config!);
  assertMatch(written, /\[pipelines\.echo\.tracking\]\nmax_content_bytes = 4096/);
  assertEquals(validateConfigText(written, "w.toml").problems, []);

  const noKey = validateConfigText(
    `${ECHO_PIPELINE}\n[pipelines.echo.tracking]\ncontent = ["received"]\n`,
    "t.toml",
  );
  assertEquals(noKey.problems.map((p) => p.path), ["pipelines.echo.tracking.content"]);
  assertMatch(noKey.problems[0].message, /identity_file/);

  const badStage = validateConfigText(
    `${ECHO_PIPELINE}\n[pipelines.echo.tracking]\ncontent = ["everything"]\n`,
    "t.toml",
  );
  assertEquals(badStage.problems[0].path, "pipelines.echo.tracking.content[0]");

  const token = validateConfigText(
    `${ECHO_PIPELINE}\n[management.tokens.look]\nrole = "viewer"\n`,
    "t.toml",
  );
  assertEquals(token.problems.map((p) => p.path), ["management.tokens.look"]);
  const role = validateConfigText(
    `${ECHO_PIPELINE}\n[management.tokens.look]\nrole = "root"\ntoken_file = "/x"\n`,
    "t.toml",
  );
  assertEquals(role.problems.map((p) => p.path), ["management.tokens.look.role"]);
  const both = validateConfigText(
    `${ECHO_PIPELINE}\n[management.tokens.look]\nrole = "viewer"\ntoken_file = "/x"\n`,
    "t.toml",
  );
  assertEquals(both.problems, []);
  assertMatch(writeConfigToml(both.config!), /\[management\.tokens\.look\]\nrole = "viewer"/);
});

Deno.test("roles at the management API: viewers read, operators write, only admins reload", async () => {
  const dir = await Deno.makeTempDir({ prefix: "roles-" });
  const viewer = "viewer-0123456789abcdef0123456789abcdef";
  const operator = "operator-0123456789abcdef0123456789abcd";
  await Deno.writeTextFile(`${dir}/v`, viewer);
  await Deno.writeTextFile(`${dir}/o`, operator);
  const gw = await startTestGateway(`${ECHO_PIPELINE}
[management.tokens.look]
role = "viewer"
token_file = "${dir}/v"
[management.tokens.ops]
role = "operator"
token_file = "${dir}/o"
`);
  const call = async (token: string, method: string, path: string) => {
    const res = await fetch(`${gw.mgmt}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(method === "POST" ? { "content-type": "application/json" } : {}),
      },
      ...(method === "POST" ? { body: "{}" } : {}),
    });
    await res.body?.cancel();
    return res.status;
  };
  try {
    assertEquals(await call(viewer, "GET", "/admin/info"), 200);
    assertEquals(await call(viewer, "POST", "/api/reload"), 403);
    assertEquals(await call(operator, "POST", "/api/reload"), 403);
    assertEquals(await call(gw.mgmtToken, "POST", "/api/reload"), 200);
    assertEquals(await call("not-a-token-0123456789abcdef0123456789", "GET", "/admin/info"), 401);
  } finally {
    await gw.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("tracking turned on by a reload, and off again", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tracking-reload-" });
  const gw = await startTestGateway(ECHO_PIPELINE);
  const sendOne = async () => {
    const res = await fetch(`${gw.url}/echo/x`, { method: "POST", body: "x" });
    assertEquals(res.status, 200);
    await res.body?.cancel();
  };
  const reload = async () => {
    const r = await gw.mgmtFetch("/api/reload", { method: "POST" });
    assertEquals(r.status, 200, await r.clone().text());
    await r.body?.cancel();
  };
  try {
    const off = await gw.mgmtFetch("/admin/tracking/messages");
    assertEquals(off.status, 404);
    assertEquals((await off.json()).error.code, "tracking_disabled");
    await gw.writeConfig(
      `${ECHO_PIPELINE}\n[pipelines.echo.tracking]\n[tracking]\npath = "${dir}/store"\nflush_interval_ms = 20\n`,
    );
    await reload();
    await sendOne();
    await waitFor(async () => {
      const r = await gw.mgmtFetch("/admin/tracking/messages?pipeline=echo");
      return r.status === 200 && (await r.json()).messages.length === 1;
    }, { timeoutMs: 10_000, description: "the request tracked after the reload" });
    await gw.writeConfig(ECHO_PIPELINE);
    await reload();
    await sendOne();
    const status = await gw.mgmtFetch("/admin/tracking");
    assertEquals((await status.json()).enabled, false);
  } finally {
    await gw.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
