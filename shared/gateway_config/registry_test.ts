import assert from "node:assert/strict";
import { BUILT_IN_TYPES } from "./components/mod.ts";
import { configReferenceMarkdown } from "./docs_reference.ts";
import {
  componentNames,
  componentType,
  isBuiltInType,
  registerComponentType,
  unregisterComponentType,
} from "./registry.ts";
import { CONFIG_TABLES } from "./tree.ts";
import { BACKEND_SERVICES, ENDPOINT_SERVICES } from "./types.ts";

Deno.test("registry: the built-in types are the services and types the config names", () => {
  assert.deepEqual(componentNames("endpoint"), [...ENDPOINT_SERVICES]);
  assert.deepEqual(componentNames("backend"), [...BACKEND_SERVICES]);
  assert.equal(componentNames("middleware").length, 10);
  for (const type of BUILT_IN_TYPES) {
    assert.equal(componentType(type.kind, type.name), type);
    assert(isBuiltInType(type.kind, type.name), type.name);
  }
});

Deno.test("registry: a built-in type is neither replaced nor removed, a name is checked", () => {
  assert.throws(
    () => registerComponentType({ kind: "middleware", name: "cors", doc: "x" }),
    /built in and cannot be replaced/,
  );
  assert.throws(
    () => registerComponentType({ kind: "backend", name: "Bad-Name", doc: "x" }),
    /must be 1-64 lowercase letters/,
  );
  assert.equal(unregisterComponentType("middleware", "cors"), false);
  assert(componentType("middleware", "cors"));
});

Deno.test("registry: a registered type is listed after the built-in ones and in the reference", () => {
  registerComponentType({
    kind: "backend",
    name: "x_queue",
    doc: "A test backend.",
    fields: {},
  });
  try {
    assert.equal(componentNames("backend").at(-1), "x_queue");
    assert.throws(
      () => registerComponentType({ kind: "backend", name: "x_queue", doc: "again" }),
      /already registered/,
    );
    assert.match(
      configReferenceMarkdown(),
      /### `\[backends\.<name>\.options\]` with service = "x_queue"\n\nA test backend\.\n\nNo keys\./,
    );
  } finally {
    assert.equal(unregisterComponentType("backend", "x_queue"), true);
  }
  assert.equal(componentType("backend", "x_queue"), undefined);
});

Deno.test("the table of sections: one entry per option table kind, paths unique", () => {
  // A path described per kind of entry (`[alerts.rules.<name>]` per `kind`) has one title each.
  const paths = CONFIG_TABLES.map((t) => t.when && t.title ? t.title : t.path);
  assert.equal(new Set(paths).size, paths.length);
  assert.deepEqual(
    CONFIG_TABLES.filter((t) => t.component).map((t) => t.component!.kind),
    ["endpoint", "backend", "middleware"],
  );
});
