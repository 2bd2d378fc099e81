/**
 * The top-level `mod.ts` as a program embedding the gateway uses it: custom middleware types and
 * backend services (declared options checked like built-in ones, with file, line and key; defaults
 * applied; secrets found; written back), `startGateway` from an object, TOML text and a file, and
 * a custom middleware in front of the built-in http backend proxying to nginx.
 */
import { assert, assertEquals, assertRejects, assertThrows } from "./assert.ts";
import {
  type Backend,
  ConfigError,
  formatProblems,
  loadConfigText,
  type Middleware,
  registerBackendType,
  registerMiddlewareType,
  ResponseEnvelope,
  startGateway,
  unregisterBackendType,
  unregisterMiddlewareType,
  writeConfigToml,
} from "../mod.ts";
import { parse } from "smol-toml";
import { literalSecretPaths, redactSecrets } from "../shared/gateway_config/mod.ts";
import {
  canConnect,
  freePort,
  removeDir,
  requirePeer,
  startNginx,
  tempDir,
} from "./support/mod.ts";

const HAS_NGINX = requirePeer("nginx", "nginx", "nginx");

/** What the factories of the test types were given, by middleware/backend name. */
const built = new Map<string, Record<string, unknown>>();

/** Registers the test types for one test and removes them after it. */
function withTypes(fn: () => Promise<void>): () => Promise<void> {
  return async () => {
    registerMiddlewareType("tag_request", {
      doc: "Adds a header to the request and one to the response.",
      options: {
        header: { type: "string", doc: "Header to add.", required: true, pattern: /^x-[a-z-]+$/ },
        value: { type: "string", default: "tagged" },
        weight: { type: "integer", min: 1, max: 10, default: 3 },
        mode: { type: "string", values: ["request", "both"], default: "both" },
        signing_key: { type: "string", secret: true },
      },
      create: (config): Middleware => {
        built.set(config.name, config.options);
        const header = String(config.options.header);
        const value = String(config.options.value);
        return {
          name: config.name,
          acts: { request: true, response: config.options.mode === "both" },
          onRequest(req) {
            req.headers.set(header, value);
          },
          onResponse(res) {
            res.headers.set(`${header}-seen`, "1");
          },
        };
      },
    });
    registerBackendType("constant", {
      doc: "Answers every request with a fixed JSON body.",
      options: { status: { type: "integer", min: 200, max: 599, default: 200 } },
      rules: (options) =>
        options.status === 204 ? [{ key: "status", message: "204 has no body to send" }] : [],
      create: (config): Backend => {
        built.set(config.name, config.options);
        return {
          name: config.name,
          config,
          invoke: (req) =>
            Promise.resolve(
              ResponseEnvelope.json(Number(config.options.status), {
                path: req.path,
                tag: req.headers.get("x-tag"),
              }),
            ),
          close() {},
        };
      },
    });
    try {
      await fn();
    } finally {
      unregisterMiddlewareType("tag_request");
      unregisterBackendType("constant");
      built.clear();
    }
  };
}

const PIPELINE = (port: number, middlewareOptions: string) => `
[network.main]
bind = "127.0.0.1"
port = ${port}
[management]
enabled = false
[logging]
level = "error"
[endpoints.api]
service = "http"
[endpoints.api.options]
path_prefix = "/api"
[middleware.tag]
type = "tag_request"
[middleware.tag.options]
${middlewareOptions}
[backends.fixed]
service = "constant"
[pipelines.main]
endpoints = ["api"]
middleware = ["tag"]
backends = ["fixed"]
`;

Deno.test(
  "embedding: registered names are checked",
  withTypes(() => {
    const create = () => ({ name: "x", acts: { request: false, response: false } });
    assertThrows(() => registerMiddlewareType("tag_request", { doc: "", create }), /already/);
    assertThrows(() => registerMiddlewareType("transform", { doc: "", create }), /built in/);
    assertThrows(
      () => registerBackendType("http", { doc: "", create: () => ({}) as Backend }),
      /built in/,
    );
    assertThrows(() => registerMiddlewareType("Bad-Name", { doc: "", create }), /lowercase/);
    assertThrows(
      // deno-lint-ignore no-explicit-any
      () => registerMiddlewareType("no_factory", { doc: "" } as any),
      /create/,
    );
    return Promise.resolve();
  }),
);

Deno.test(
  "embedding: a custom type's options are validated like a built-in's",
  withTypes(async () => {
    const text = PIPELINE(8080, 'header = "X-Tag"\nweigth = 5\nmode = "bothh"\nweight = 11\n') +
      `[backends.fixed.options]\nstatus = 204\n`;
    const { problems } = await loadConfigText(text, "gw.toml");
    const out = formatProblems(problems);
    // Each problem names the file, the line and the key.
    assert(/gw\.toml:16: middleware\.tag\.options\.header: must match/.test(out), out);
    assert(out.includes("gw.toml:17: middleware.tag.options.weigth"), out);
    assert(out.includes("did you mean `weight`"), out);
    assert(out.includes('middleware.tag.options.mode: expected one of "request", "both"'), out);
    assert(out.includes("middleware.tag.options.weight: must be at most 10, found 11"), out);
    assert(out.includes("backends.fixed.options.status: 204 has no body to send"), out);

    const missing = await loadConfigText(PIPELINE(8080, ""), "gw.toml");
    assert(formatProblems(missing.problems).includes("middleware.tag.options.header"));

    // Unknown types list the registered ones beside the built-in ones.
    const unknown = await loadConfigText(
      PIPELINE(8080, 'header = "x-tag"').replace('type = "tag_request"', 'type = "tag_requst"'),
      "gw.toml",
    );
    assert(formatProblems(unknown.problems).includes("did you mean `tag_request`"));
  }),
);

Deno.test(
  "embedding: defaults, secrets and the writer cover custom options",
  withTypes(async () => {
    const text = PIPELINE(8080, 'header = "x-tag"\nsigning_key = "s3cr3t"\nweight = 3\n');
    const { config, problems } = await loadConfigText(text, "gw.toml");
    assertEquals(problems, []);
    assertEquals(config!.middleware.tag.options, {
      header: "x-tag",
      value: "tagged",
      weight: 3,
      mode: "both",
      signing_key: "s3cr3t",
    });
    assertEquals(config!.backends.fixed.options, { status: 200 });
    // A literal credential in a custom option is found like one in a built-in option.
    assert(literalSecretPaths(parse(text)).includes("middleware.tag.options.signing_key"));
    assert(!redactSecrets(text).includes("s3cr3t"));
    // The writer leaves defaults out, and what it writes loads back to the same configuration.
    const written = writeConfigToml(config!);
    assert(!written.includes("weight"), written);
    const again = await loadConfigText(written, "written.toml");
    assertEquals(again.problems, []);
    assertEquals(again.config!.middleware.tag.options, config!.middleware.tag.options);
  }),
);

Deno.test(
  "embedding: startGateway runs custom types; a reload refuses an unregistered one",
  withTypes(async () => {
    const port = freePort();
    const gateway = await startGateway({
      config: { toml: PIPELINE(port, 'header = "x-tag"\nvalue = "north"\n'), name: "inline.toml" },
    });
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/patients/1`);
      assertEquals(res.status, 200);
      assertEquals(res.headers.get("x-tag-seen"), "1");
      assertEquals(await res.json(), { path: "/patients/1", tag: "north" });
      assertEquals(built.get("tag")?.weight, 3);
      assert(gateway.metricsText().includes('backend="fixed"'));

      unregisterBackendType("constant");
      const reload = await gateway.reload();
      assertEquals(reload.ok, false);
      assert(formatProblems(reload.problems).includes("inline.toml"));
      // The running configuration keeps serving.
      const still = await fetch(`http://127.0.0.1:${port}/api/x`);
      assertEquals(still.status, 200);
      await still.body?.cancel();
    } finally {
      await gateway.shutdown();
    }
    assert(!(await canConnect(port)), "the listener is closed after shutdown");
  }),
);

Deno.test("embedding: startGateway refuses an invalid config and leaves nothing listening", async () => {
  const port = freePort();
  const err = (await assertRejects(
    () =>
      startGateway({
        config: {
          network: { main: { bind: "127.0.0.1", port } },
          management: { enabled: false },
          endpoints: { api: { service: "http", options: { path_prefix: "/api" } } },
          backends: { b: { service: "nosuch" } },
          pipelines: { p: { endpoints: ["api"], backends: ["b"] } },
        },
      }),
  )) as ConfigError;
  assert(err instanceof ConfigError);
  assert(formatProblems(err.problems).includes("<config object>"));
  assert(formatProblems(err.problems).includes("backends.b.service"));
  assert(!(await canConnect(port)));
  // A configuration URL must name a file.
  await assertRejects(
    () => startGateway({ config: new URL("https://example.org/gw.toml") }),
    /file: URL/,
  );
});

Deno.test({
  name: "embedding: a file config with a custom middleware in front of nginx, reloaded on demand",
  ignore: !HAS_NGINX,
  fn: withTypes(async () => {
    await using nginx = await startNginx({
      conf: `server {
  listen 127.0.0.1:{{port}};
  location / { return 200 "tag=$http_x_tag\\n"; }
}`,
    });
    const dir = await tempDir("embedding");
    const port = freePort();
    const file = `${dir}/gateway.toml`;
    const write = (value: string) =>
      Deno.writeTextFile(
        file,
        PIPELINE(port, `header = "x-tag"\nvalue = "${value}"\n`)
          .replace(
            'service = "constant"',
            `service = "http"\n[backends.fixed.options]\nbase_url = "${nginx.url}"`,
          ),
      );
    await write("one");
    const gateway = await startGateway({ config: file });
    try {
      const first = await fetch(`http://127.0.0.1:${port}/api/`);
      assertEquals(await first.text(), "tag=one\n");
      assertEquals(first.headers.get("x-tag-seen"), "1");
      await write("two");
      const reload = await gateway.reload();
      assert(reload.ok, formatProblems(reload.problems));
      const second = await fetch(`http://127.0.0.1:${port}/api/`);
      assertEquals(await second.text(), "tag=two\n");
    } finally {
      await gateway.shutdown();
      await removeDir(dir);
    }
  }),
});
