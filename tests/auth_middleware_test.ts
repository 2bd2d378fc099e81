/**
 * `basic_auth` and `api_key` end to end, against software we did not write: curl as the client,
 * Apache's `htpasswd -B` (bcrypt) and the reference `argon2` CLI (Argon2id) writing the password
 * file. A request without or with wrong credentials gets 401 with a challenge and never reaches the
 * backend; a good one reaches it as `auth.subject`, its credential removed unless forwarded.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { startTestGateway } from "./harness.ts";
import { curl, requirePeer, runCommand } from "./support/mod.ts";

/** An http endpoint under `/api` through middleware `auth` to the echo backend. */
function pipeline(middleware: string): string {
  return `
[endpoints.api]
service = "http"
[endpoints.api.options]
path_prefix = "/api"

${middleware}

[backends.echo]
service = "echo"

[pipelines.api]
endpoints = ["api"]
middleware = ["auth"]
backends = ["echo"]
`;
}

/** curl's answer: status, headers (lowercase names) and body. */
async function call(args: string[]) {
  const r = await curl(["-s", "-i", ...args]);
  assertEquals(r.code, 0, r.stderr);
  const [head, ...rest] = r.stdout.split("\r\n\r\n");
  const lines = head.split("\r\n");
  const status = Number(lines[0].split(" ")[1]);
  const headers = new Map(
    lines.slice(1).map((
      l,
    ) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]),
  );
  return { status, headers, body: rest.join("\r\n\r\n") };
}

Deno.test({
  name: "basic_auth: htpasswd -B and argon2 hashes, curl -u; 401 with a challenge otherwise",
  ignore: !requirePeer("curl", "curl", "curl") ||
    !requirePeer("htpasswd", "htpasswd", "apache2-utils") ||
    !requirePeer("argon2", "argon2", "argon2"),
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "gw-basic-auth-" });
    const file = `${dir}/users.htpasswd`;
    const made = await runCommand("htpasswd", [
      "-B",
      "-C",
      "5",
      "-b",
      "-c",
      file,
      "ada",
      "s3cret pass",
    ]);
    assertEquals(made.code, 0, made.stderr);
    const argon = await runCommand("sh", [
      "-c",
      "printf %s 'b0b-pw' | argon2 saltsaltsalt16by -id -e -m 12 -t 2",
    ]);
    assertEquals(argon.code, 0, argon.stderr);
    assertMatch(argon.stdout.trim(), /^\$argon2id\$v=19\$m=4096,t=2,p=1\$/);
    await Deno.writeTextFile(file, `# team\nbob:${argon.stdout.trim()}\n`, { append: true });

    const gw = await startTestGateway(
      pipeline(
        `[middleware.auth]\ntype = "basic_auth"\n[middleware.auth.options]\nhtpasswd_path = "${file}"\nrealm = "radiology"`,
      ),
      { dir },
    );
    try {
      const url = `${gw.url}/api/studies`;
      const none = await call([url]);
      assertEquals(none.status, 401);
      assertEquals(
        none.headers.get("www-authenticate"),
        'Basic realm="radiology", charset="UTF-8"',
      );
      assertEquals(JSON.parse(none.body).error.code, "missing_credentials");

      for (
        const wrong of [["-u", "ada:wrong"], ["-u", "nobody:s3cret pass"], [
          "-u",
          "bob:s3cret pass",
        ]]
      ) {
        const r = await call([...wrong, url]);
        assertEquals(r.status, 401, wrong.join(" "));
        assertEquals(JSON.parse(r.body).error.code, "invalid_credentials");
        assert(!r.body.includes("s3cret"), "the answer never repeats the password");
      }
      const malformed = await call(["-H", "Authorization: Basic !!!", url]);
      assertEquals([malformed.status, JSON.parse(malformed.body).error.code], [
        401,
        "invalid_request",
      ]);

      for (const [user, password] of [["ada", "s3cret pass"], ["bob", "b0b-pw"]]) {
        // Twice: the second is answered from the remembered check.
        for (let i = 0; i < 2; i++) {
          const ok = await call(["-u", `${user}:${password}`, url]);
          assertEquals(ok.status, 200, ok.body);
          const echoed = JSON.parse(ok.body);
          assertEquals(echoed.metadata["auth.subject"], user);
          assertEquals(echoed.metadata["auth.method"], "basic_auth");
          assertEquals(
            echoed.headers.authorization,
            undefined,
            "the credential stays at the gateway",
          );
        }
      }
      const logs = gw.logs.join("\n");
      assert(!logs.includes("s3cret") && !logs.includes("b0b-pw"), "passwords are never logged");
    } finally {
      await gw.stop();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});

Deno.test({
  name: "basic_auth: weak hashes and unreadable files refuse the configuration, naming the line",
  ignore: !requirePeer("htpasswd", "htpasswd", "apache2-utils"),
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "gw-basic-auth-" });
    try {
      for (
        const [flag, pattern] of [["-m", /MD5 hashes/], ["-s", /SHA-1 hashes/], [
          "-p",
          /plain text/,
        ]] as const
      ) {
        const file = `${dir}/weak${flag}.htpasswd`;
        const r = await runCommand("htpasswd", [flag, "-b", "-c", file, "eve", "pw"]);
        assertEquals(r.code, 0, r.stderr);
        const gw = startTestGateway(
          pipeline(
            `[middleware.auth]\ntype = "basic_auth"\n[middleware.auth.options]\nhtpasswd_path = "${file}"`,
          ),
          { dir },
        );
        const err = await gw.then(async (g) => {
          await g.stop();
          return undefined;
        }, (e: Error) => e);
        assert(err !== undefined, `${flag}: the configuration was accepted`);
        assertMatch(err.message, pattern);
        assertMatch(err.message, new RegExp(`weak${flag}\\.htpasswd:1: user eve`));
      }
    } finally {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});

Deno.test({
  name: "basic_auth: a cost the gateway cannot afford refuses the configuration, naming the line",
  ignore: !requirePeer("htpasswd", "htpasswd", "apache2-utils") ||
    !requirePeer("argon2", "argon2", "argon2"),
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "gw-basic-auth-" });
    try {
      const file = `${dir}/costly.htpasswd`;
      await Deno.writeTextFile(file, "# staff\n");
      for (const [user, cost] of [["ada", "12"], ["eve", "13"]]) {
        const r = await runCommand("htpasswd", ["-B", "-C", cost, "-b", file, user, "pw"]);
        assertEquals(r.code, 0, r.stderr);
      }
      // Argon2id with 64 MiB and 3 passes (RFC 9106's second choice): 3 times the work allowed.
      const argon = await runCommand("sh", [
        "-c",
        "printf %s 'pw' | argon2 saltsaltsalt16by -id -e -m 16 -t 3",
      ]);
      assertEquals(argon.code, 0, argon.stderr);
      const argonFile = `${dir}/argon.htpasswd`;
      await Deno.writeTextFile(argonFile, `bob:${argon.stdout.trim()}\n`);
      for (
        const [path, pattern] of [
          [file, /costly\.htpasswd:3: user eve: bcrypt cost 13 is over 12, .*-C 12/],
          [
            argonFile,
            /argon\.htpasswd:1: user bob: Argon2 memory times passes 196608 is over 65536/,
          ],
        ] as const
      ) {
        const gw = startTestGateway(
          pipeline(
            `[middleware.auth]\ntype = "basic_auth"\n[middleware.auth.options]\nhtpasswd_path = "${path}"`,
          ),
          { dir },
        );
        const err = await gw.then(async (g) => {
          await g.stop();
          return undefined;
        }, (e: Error) => e);
        assert(err !== undefined, `${path}: the configuration was accepted`);
        assertMatch(err.message, pattern);
      }
    } finally {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});

Deno.test({
  name: "api_key: header or query parameter, hashed in the config; removed unless forwarded",
  ignore: !requirePeer("curl", "curl", "curl"),
  fn: async () => {
    const key = "k3y-" + crypto.randomUUID();
    const digest = Array.from(
      new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key))),
      (b) => b.toString(16).padStart(2, "0"),
    ).join("");
    const middleware = (forward: boolean) =>
      `[middleware.auth]\ntype = "api_key"\n[middleware.auth.options]\nquery_param = "api_key"\n` +
      `forward_credentials = ${forward}\n[middleware.auth.options.keys]\nlab_system = "sha256:${digest}"`;
    const gw = await startTestGateway(pipeline(middleware(false)));
    try {
      const url = `${gw.url}/api/orders`;
      const none = await call([url]);
      assertEquals(none.status, 401);
      assertEquals(none.headers.get("www-authenticate"), 'ApiKey header="x-api-key"');
      assertEquals(JSON.parse(none.body).error.code, "missing_credentials");
      const wrong = await call(["-H", "X-API-Key: nope", url]);
      assertEquals([wrong.status, JSON.parse(wrong.body).error.code], [401, "invalid_credentials"]);
      const huge = await call(["-H", `X-API-Key: ${"k".repeat(20_000)}`, url]);
      assertEquals(huge.status, 401);

      const byHeader = JSON.parse((await call(["-H", `X-API-Key: ${key}`, url])).body);
      assertEquals(byHeader.metadata["auth.subject"], "lab_system");
      assertEquals(byHeader.headers["x-api-key"], undefined);
      const byQuery = JSON.parse((await call([`${url}?api_key=${key}&status=open`])).body);
      assertEquals(byQuery.metadata["auth.subject"], "lab_system");
      assertEquals(byQuery.query, { status: "open" });
      assert(!gw.logs.join("\n").includes(key), "the key is never logged");

      await gw.writeConfig(pipeline(middleware(true)));
      const reload = await gw.mgmtFetch("/api/reload", { method: "POST" });
      assertEquals(reload.status, 200, await reload.text());
      const forwarded = JSON.parse((await call(["-H", `X-API-Key: ${key}`, url])).body);
      assertEquals(forwarded.headers["x-api-key"], key);
    } finally {
      await gw.stop();
    }
  },
});
