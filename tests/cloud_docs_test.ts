/**
 * docs/cloud-api.md and the OpenAPI document cover every route, with examples that the service
 * accepts. The route reference in the doc is generated from the registry; regenerate it with
 * `UPDATE_DOCS=1 deno test -A --unstable-kv tests/cloud_docs_test.ts`.
 */
import { createConfig, lintFromString } from "@redocly/openapi-core";
import { assert, assertEquals } from "./assert.ts";
import { call, createExamples, makeUser, withCloud } from "./cloud_harness.ts";
import { openApiPath, routesMarkdown, UPDATE_EXAMPLES } from "../cloud/api/mod.ts";
import { UI_PATHS } from "../cloud/ui/mod.ts";
import { RESOURCE_KINDS } from "../cloud/store/mod.ts";

const DOC = new URL("../docs/cloud-api.md", import.meta.url);
const API_PREFIXES = ["/api/", "/oauth/", "/.well-known/", "/healthz", "/readyz"];

function replaceBlock(doc: string, name: string, body: string): string {
  const begin = new RegExp(`(<!-- ${name}:begin[^\\n]*-->\\n)[\\s\\S]*?(<!-- ${name}:end -->)`);
  assert(begin.test(doc), `markers of ${name} missing`);
  return doc.replace(begin, (_m, open: string, close: string) => `${open}${body}${close}`);
}

Deno.test("docs/cloud-api.md: the route reference matches the registry", async () => {
  await withCloud(async (cloud) => {
    const current = await Deno.readTextFile(DOC);
    const body = "<!-- deno-fmt-ignore-start -->\n" + routesMarkdown(cloud.server.registry.routes) +
      "<!-- deno-fmt-ignore-end -->\n";
    const expected = replaceBlock(current, "routes", body);
    if (Deno.env.get("UPDATE_DOCS") === "1" && current !== expected) {
      await Deno.writeTextFile(DOC, expected);
      return;
    }
    assertEquals(
      current,
      expected,
      "run: UPDATE_DOCS=1 deno test -A --unstable-kv tests/cloud_docs_test.ts",
    );
    for (const r of cloud.server.registry.routes) {
      assert(
        current.includes(`\`${r.method.toUpperCase()} ${openApiPath(r.path)}\``),
        `${r.method} ${r.path} documented`,
      );
    }
  });
});

Deno.test("OpenAPI: every API route of the app is in the document, with summaries and examples", async () => {
  await withCloud(async (cloud) => {
    const res = await call(cloud, "GET", "/api/openapi.json");
    assertEquals(res.status, 200);
    const doc = res.json;
    assertEquals([doc.openapi, doc.servers[0].url], ["3.1.0", cloud.url]);
    const documented = new Set<string>();
    for (
      const [path, ops] of Object.entries(
        doc.paths as Record<string, Record<string, Record<string, unknown>>>,
      )
    ) {
      for (const [method, op] of Object.entries(ops)) {
        documented.add(`${method} ${path}`);
        assert(
          typeof op.summary === "string" && op.summary.length > 10,
          `${method} ${path} summary`,
        );
        const responses = op.responses as Record<
          string,
          { content?: Record<string, { example?: unknown }> }
        >;
        const withExample = Object.entries(responses).filter(([, r]) =>
          Object.values(r.content ?? {}).some((m) => m.example !== undefined)
        );
        const bodiless = Object.keys(responses).every((s) => s === "204" || s === "304");
        assert(bodiless || withExample.length > 0, `${method} ${path}: a response example`);
        const body = op.requestBody as {
          content: Record<string, { example?: unknown; schema?: { type?: string } }>;
        } | undefined;
        if (body) {
          for (const [type, media] of Object.entries(body.content)) {
            assert(media.example !== undefined, `${method} ${path}: request example`);
            if (type === "application/json") {
              assertEquals(media.schema?.type, "object", `${method} ${path} schema`);
            }
          }
        }
      }
    }
    // Every non-UI route the app serves is documented; UI routes are pages only.
    const served = cloud.server.app.routes.filter((r) => r.method !== "ALL");
    for (const r of served) {
      const key = `${r.method.toLowerCase()} ${openApiPath(r.path)}`;
      const uiPage = UI_PATHS.includes(r.path);
      if (!uiPage && API_PREFIXES.some((p) => r.path.startsWith(p))) {
        assert(documented.has(key), `${key} is in the OpenAPI document`);
      } else {
        assert(
          UI_PATHS.some((p) => r.path === p || r.path.startsWith(`${p}/`)) || r.path === "/ui.css",
          `${key} is a UI page`,
        );
      }
    }
    assertEquals(documented.size, cloud.server.registry.routes.length);
  });
});

Deno.test("documented examples: every create and update example is accepted as written", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const recs = await createExamples(cloud, u.apiToken);
    for (const kind of RESOURCE_KINDS) {
      const res = await call(cloud, "PATCH", `/api/${kind}/${recs[kind].id}`, {
        token: u.apiToken,
        body: UPDATE_EXAMPLES[kind],
      });
      assertEquals(res.status, 200, `${kind}: ${res.text}`);
      for (const [field, value] of Object.entries(UPDATE_EXAMPLES[kind])) {
        assertEquals(res.json[field], value, `${kind}.${field}`);
      }
    }
    const pipelineToml = await call(cloud, "GET", `/api/pipelines/${recs.pipelines.id}/toml`, {
      token: u.apiToken,
    });
    assertEquals(pipelineToml.json.problems, []);
    assert(pipelineToml.json.toml.includes("[pipelines.fhir_ingest]"));
  }, { rateLimits: { perToken: { limit: 10_000, windowSeconds: 60 } } as never });
});

/** Rules of Redocly's `recommended` set that are off, by decision (docs/cloud-api.md says why). */
const RULES_OFF = {
  // No license has been chosen for this project: the document must not claim one.
  "info-license": "off",
} as const;

/** Public status documents: every GET answers 200 (or 503 while not ready), no 4XX exists. */
const NEVER_4XX = [
  "/.well-known/jwks.json",
  "/.well-known/openid-configuration",
  "/.well-known/oauth-authorization-server",
  "/.well-known/oauth-protected-resource",
  "/.well-known/oauth-protected-resource/mcp/cloud",
  "/healthz",
  "/readyz",
  "/api/openapi.json",
];

Deno.test("docs/cloud-api.md names every exception of the Redocly lint, and its count", async () => {
  const doc = await Deno.readTextFile(DOC);
  const paragraph = doc.slice(0, doc.indexOf("## Running the service"));
  for (const rule of [...Object.keys(RULES_OFF), "operation-4xx-response"]) {
    assert(paragraph.includes(`\`${rule}\``), `the lint paragraph names ${rule}`);
  }
  for (const path of NEVER_4XX) {
    assert(paragraph.includes(`\`GET ${path}\``), `the lint paragraph names GET ${path}`);
  }
  const count = Object.keys(RULES_OFF).length + NEVER_4XX.length;
  assert(paragraph.includes(`${count} warnings`), `the lint paragraph counts ${count} warnings`);
});

Deno.test("OpenAPI: Redocly's recommended lint finds nothing; errors say what the server answers", async () => {
  await withCloud(async (cloud) => {
    const source = (await call(cloud, "GET", "/api/openapi.json")).text;
    // What a user who lints it with the defaults sees: the exceptions, and nothing else.
    const defaults = await lintFromString({
      source,
      absoluteRef: "openapi.json",
      config: await createConfig({ extends: ["recommended"] }),
    });
    assertEquals(
      defaults.map((p) => p.ruleId).sort(),
      [...Object.keys(RULES_OFF), ...NEVER_4XX.map(() => "operation-4xx-response")].sort(),
    );
    const config = await createConfig({ extends: ["recommended"], rules: RULES_OFF });
    const problems = await lintFromString({ source, absoluteRef: "openapi.json", config });
    const never4xx = NEVER_4XX.map((p) => `#/paths/${p.replaceAll("/", "~1")}/get/responses`);
    const left = problems.filter((p) =>
      !(p.ruleId === "operation-4xx-response" && never4xx.includes(p.location[0]?.pointer ?? ""))
    );
    assertEquals(
      left.map((p) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`),
      [],
    );
    // The error schema has what the server writes: used_by (409) and problems.
    const doc = JSON.parse(source);
    const error = doc.components.schemas.Error.properties.error.properties;
    assert(error.used_by && error.problems && error.fields);
    const deleteBackend = doc.paths["/api/backends/{id}"].delete.responses;
    assertEquals(Object.keys(deleteBackend).filter((s) => s.startsWith("4")).sort(), [
      "401",
      "403",
      "404",
      "409",
      "429",
    ]);
  });
});
