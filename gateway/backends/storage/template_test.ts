import { assert, assertEquals, assertRejects } from "../../../tests/assert.ts";
import { GatewayError } from "../../errors.ts";
import { fieldValue, parseTemplate, resolveTemplate, type TemplateInput } from "./template.ts";

const NOW = new Date("2025-01-31T09:15:02.123Z");

function input(over: Partial<TemplateInput> = {}): TemplateInput {
  return {
    path: "a/b.json",
    metadata: { tenant: "t1" },
    data: () => Promise.resolve({ patient_id: "p-1", n: 7, ok: true, nested: { id: "x9" } }),
    now: NOW,
    uuid: "6f1c2a4e-8d3b-4f5a-9c7e-1b2d3e4f5a6b",
    ...over,
  };
}

async function resolve(template: string, over: Partial<TemplateInput> = {}) {
  return await resolveTemplate(parseTemplate(template, "write_pattern"), input(over));
}

Deno.test("template: built-in placeholders", async () => {
  assertEquals(
    await resolve("{date}/{timestamp}-{uuid}.json"),
    "2025-01-31/2025-01-31T09:15:02.123Z-6f1c2a4e-8d3b-4f5a-9c7e-1b2d3e4f5a6b.json",
  );
  assertEquals(await resolve("{timestamp_compact}.bin"), "20250131T091502123Z.bin");
  assertEquals(await resolve("files/{path}"), "files/a/b.json");
  // One value per request: the same uuid and time wherever they appear.
  assertEquals(await resolve("{uuid}/{uuid}"), `${input().uuid}/${input().uuid}`);
});

Deno.test("template: metadata first, then data fields (dotted paths, numbers, booleans)", async () => {
  assertEquals(await resolve("{tenant}/{patient_id}/{n}-{ok}/{nested.id}"), "t1/p-1/7-true/x9");
  // A metadata key shadows a data field of the same name.
  assertEquals(await resolve("{patient_id}", { metadata: { patient_id: "meta" } }), "meta");
  // A top-level key with a dot wins over the dotted path.
  assertEquals(fieldValue({ "a.b": 1, a: { b: 2 } }, "a.b"), 1);
  assertEquals(fieldValue({ a: { b: 2 } }, "a.b"), 2);
  assertEquals(fieldValue({ a: [{ b: 3 }] }, "a.0.b"), 3);
  assertEquals(fieldValue(["x"], "0"), "x");
  assertEquals(fieldValue("text", "length"), undefined);
});

Deno.test("template: the body data is read only when a placeholder needs it", async () => {
  let reads = 0;
  const data = () => {
    reads++;
    return Promise.resolve({ f: "v" });
  };
  await resolve("{tenant}/{uuid}/{path}", { data });
  assertEquals(reads, 0);
  await resolve("{f}", { data });
  assertEquals(reads, 1);
});

Deno.test("template: a missing value is a 400 naming the placeholder", async () => {
  const err = await assertRejects(() => resolve("{tenant}/{nope}.json"));
  assert(err instanceof GatewayError);
  assertEquals([err.status, err.code], [400, "missing_path_value"]);
  assertEquals(err.details, { placeholder: "nope" });
  const nulls = await assertRejects(() =>
    resolve("{x}", { data: () => Promise.resolve({ x: null }) })
  );
  assertEquals((nulls as GatewayError).code, "missing_path_value");
  const noPath = await assertRejects(() => resolve("{path}", { path: "" }));
  assertEquals((noPath as GatewayError).code, "missing_path_value");
});

Deno.test("template: hostile values are refused, from metadata, data and the path", async () => {
  const hostile = [
    "..",
    "../etc",
    "/abs",
    "a\\b",
    "a\0b",
    "a//b",
    "a/",
    "",
    "a\rb",
    "./x",
  ];
  for (const value of hostile) {
    for (
      const over of <Partial<TemplateInput>[]> [
        { metadata: { v: value } },
        { metadata: {}, data: () => Promise.resolve({ v: value }) },
      ]
    ) {
      const err = await assertRejects(() => resolve("in/{v}.dat", over));
      assertEquals((err as GatewayError).code, "invalid_storage_path", JSON.stringify(value));
    }
    if (value !== "") {
      const err = await assertRejects(() => resolve("{path}", { path: value }));
      assertEquals((err as GatewayError).code, "invalid_storage_path", JSON.stringify(value));
    }
  }
  // A value may add segments and start a name with a dot inside a segment...
  assertEquals(await resolve("f{v}", { metadata: { v: ".json" } }), "f.json");
  assertEquals(await resolve("{v}", { metadata: { v: "a/b" } }), "a/b");
  // ...but the assembled path must not start a segment with one.
  const hidden = await assertRejects(() => resolve("in/{v}", { metadata: { v: ".x" } }));
  assertEquals((hidden as GatewayError).code, "invalid_storage_path");
  const object = await assertRejects(() =>
    resolve("{v}", { metadata: {}, data: () => Promise.resolve({ v: { a: 1 } }) })
  );
  assertEquals((object as GatewayError).code, "invalid_storage_path");
});

Deno.test("template: parse errors name the option and the problem", async () => {
  const cases: [string, RegExp][] = [
    ["{a", /unclosed/],
    ["a}", /unmatched/],
    ["{}", /invalid placeholder/],
    ["{a b}", /invalid placeholder/],
    ["/abs/{uuid}", /absolute/],
    ["../{uuid}", /`\.\.` segment/],
    ["a//{uuid}", /empty segment/],
    [".hidden/{uuid}", /starting with `\.`/],
    ["", /empty/],
  ];
  for (const [source, why] of cases) {
    await assertRejects(() => parseTemplate(source, "write_pattern"), why);
  }
  assertEquals(parseTemplate("{a}/{b.c}-x", "p").names, ["a", "b.c"]);
});
