/**
 * The worked example of docs/architecture.md ("The configuration registry"), run: a small
 * middleware type registered through the top-level mod.ts, as an embedding program adds one, is
 * then validated (with the built-in types' messages), written back to TOML, listed in the
 * generated reference, described in the MCP tools' option schemas and drawn as a typed form by
 * the cloud UI, whose posted fields give the same options as the JSON path.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import {
  type Middleware,
  registerMiddlewareType,
  unregisterMiddlewareType,
  validateConfigText,
  writeConfigToml,
} from "../mod.ts";
import {
  configReferenceMarkdown,
  optionInputs,
  optionJsonSchema,
} from "../shared/gateway_config/mod.ts";
import { call, makeUser, uiRequest, uiSession, withCloud } from "./cloud_harness.ts";

// --- the example, as docs/architecture.md shows it -------------------------------------------
/** Registers `site_tag`: puts the site's name under a metadata key. */
function registerSiteTag(): void {
  registerMiddlewareType("site_tag", {
    doc: "Puts the site's name under a metadata key of every request.",
    options: {
      site: { type: "string", doc: "The site's name.", required: true, max: 64 },
      key: { type: "string", doc: "The metadata key.", default: "site" },
      on_conflict: {
        type: "string",
        doc: "When the key is already set: `replace` it or `keep` it.",
        values: ["replace", "keep"],
        default: "replace",
      },
    },
    create: (config): Middleware => ({
      name: config.name,
      acts: { request: true, response: false },
      onRequest(req) {
        const { site, key, on_conflict } = config.options as Record<string, string>;
        if (on_conflict === "keep" && req.metadata[key] !== undefined) return;
        req.metadata[key] = site;
      },
    }),
  });
}
// ----------------------------------------------------------------------------------------------

const CONFIG = `
[endpoints.api]
service = "http"
options = { path_prefix = "/api" }

[middleware.tag]
type = "site_tag"
options = { site = "north", on_conflict = "keep" }

[backends.echo]
service = "echo"

[pipelines.main]
endpoints = ["api"]
middleware = ["tag"]
backends = ["echo"]
`;

Deno.test("registry example: a type registered through mod.ts is validated, written, documented and drawn as a form", async () => {
  registerSiteTag();
  try {
    // Validation: the declared options, with the same messages as the built-in types'.
    const bad = validateConfigText(CONFIG.replace('"keep"', '"merge"'), "gateway.toml");
    assertEquals(bad.problems.map((p) => [p.path, p.message]), [[
      "middleware.tag.options.on_conflict",
      'expected one of "replace", "keep", found string "merge"',
    ]]);
    const { config, problems } = validateConfigText(CONFIG, "gateway.toml");
    assertEquals(problems, []);
    assertEquals(config!.middleware.tag.options, {
      site: "north",
      key: "site",
      on_conflict: "keep",
    });

    // The TOML writer: defaults left out, the rest written back.
    const toml = writeConfigToml(config!);
    assertMatch(toml, /\[middleware\.tag\.options\]\nsite = "north"\non_conflict = "keep"\n/);
    assertEquals(validateConfigText(toml, "written.toml").config, config);

    // The generated reference lists it beside the built-in middleware.
    const reference = configReferenceMarkdown();
    assertMatch(reference, /### `\[middleware\.<name>\.options\]` with type = "site_tag"/);
    assertMatch(reference, /\| `on_conflict` \| string \| no \| `"replace"` \|/);

    // The MCP tools' option schema and the form's inputs come from the same schema.
    const schema = optionJsonSchema("middleware", "site_tag")!;
    assertEquals(schema.required, ["site"]);
    assertEquals(
      optionInputs("middleware", "site_tag")!.map((i) => [i.key, i.control, i.choices ?? null]),
      [["site", "text", null], ["key", "text", null], [
        "on_conflict",
        "select",
        ["replace", "keep"],
      ]],
    );

    // The cloud UI draws its typed fields; posting them stores what the JSON path would.
    await withCloud(async (cloud) => {
      const ada = await makeUser(cloud, "ada@example.com", "Radiology");
      const ui = await uiSession(cloud, ada.user);
      const form = await uiRequest(cloud, ui, "/middleware/new");
      assert(form.text.includes('<option value="site_tag"'), "the type is offered");
      assert(form.text.includes('data-options-for="site_tag"'), "its options have their group");
      assertMatch(form.text, /<select id="f-options-site_tag-on_conflict"[^>]*>/);
      assert(form.text.includes("The site&#39;s name. Required."), "help from the schema");

      const typed = await uiRequest(cloud, ui, "/middleware/new", {
        name: "tag",
        type: "site_tag",
        options: "",
        options_was: "",
        "options.site_tag.site": "north",
        "options.site_tag.key": "",
        "options.site_tag.on_conflict": "keep",
      });
      assertEquals(typed.status, 303, typed.text);
      const viaJson = await uiRequest(cloud, ui, "/middleware/new", {
        name: "tag_json",
        type: "site_tag",
        options: '{ "site": "north", "on_conflict": "keep" }',
      });
      assertEquals(viaJson.status, 303, viaJson.text);
      const list = await call(cloud, "GET", "/api/middleware", { token: ada.apiToken });
      const options = Object.fromEntries(
        (list.json.items as { name: string; options: unknown }[]).map((m) => [m.name, m.options]),
      );
      assertEquals(options.tag, { site: "north", on_conflict: "keep" });
      assertEquals(options.tag, options.tag_json);
    });
  } finally {
    unregisterMiddlewareType("site_tag");
  }
  assertEquals(optionInputs("middleware", "site_tag"), undefined);
});
