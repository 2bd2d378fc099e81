import assert from "node:assert/strict";
import { CliError, EXIT } from "./errors.ts";
import {
  addInstance,
  findInstance,
  type Instance,
  loadInstances,
  matchInstances,
  newInstanceId,
  normalizePrefix,
  parseIp,
  parseLabel,
  parsePort,
  prefixedUrl,
  replaceInstance,
  saveInstances,
} from "./instances.ts";

const usage = (e: unknown) => e instanceof CliError && e.exitCode === EXIT.usage;

Deno.test("instances: addresses, ports, prefixes and labels are checked", () => {
  assert.equal(parseIp("10.0.0.5"), "10.0.0.5");
  assert.equal(parseIp("[::1]"), "::1");
  assert.equal(parseIp("fe80::1"), "fe80::1");
  assert.equal(parseIp("gateway.internal"), "gateway.internal");
  for (const bad of ["256.1.1.1", "1.2.3", "a b", "", "-x.example"]) {
    assert.throws(() => parseIp(bad), usage, bad);
  }
  assert.equal(parsePort("8081"), 8081);
  for (const bad of ["0", "65536", "80a", "-1", "1.5", ""]) {
    assert.throws(() => parsePort(bad), usage, bad);
  }
  assert.equal(normalizePrefix("/admin/"), "admin");
  assert.equal(normalizePrefix("gw//admin"), "gw/admin");
  for (const bad of ["/", "", "a/../b", "a b", "a?b"]) {
    assert.throws(() => normalizePrefix(bad), usage, bad);
  }
  assert.equal(parseLabel(" edge "), "edge");
  assert.throws(() => parseLabel("a\u0007b"), usage);
  assert.throws(() => parseLabel("x".repeat(101)), usage);
});

Deno.test("instances: labels and ip:port are unique, ids are short and unique", () => {
  let list: Instance[] = [];
  const first = addInstance(list, { ip: "127.0.0.1", port: 8081, prefix: "admin" });
  list = first.instances;
  assert.match(first.added.id, /^[0-9a-f]{6}$/);
  assert.equal(first.added.label, "127.0.0.1:8081");
  assert.equal(first.added.gateway_id, null);
  const v6 = addInstance(list, { ip: "::1", port: 9090, prefix: "admin" });
  assert.equal(v6.added.label, "[::1]:9090");
  assert.equal(prefixedUrl(v6.added, "info"), "http://[::1]:9090/admin/info");
  list = v6.instances;
  assert.throws(
    () => addInstance(list, { ip: "10.0.0.1", port: 1, label: "127.0.0.1:8081", prefix: "a" }),
    /already labelled/,
  );
  assert.throws(
    () => addInstance(list, { ip: "127.0.0.1", port: 8081, label: "x", prefix: "a" }),
    /already registered/,
  );
  const ids = new Set(Array.from({ length: 200 }, () => newInstanceId(["aaaaaa"])));
  assert(!ids.has("aaaaaa"));
});

Deno.test("instances: selection by id, label, ip and port; the only instance by default", () => {
  const a: Instance = {
    id: "aaaaaa",
    gateway_id: null,
    label: "a",
    ip: "127.0.0.1",
    port: 1,
    prefix: "admin",
  };
  const b: Instance = { ...a, id: "bbbbbb", label: "b", port: 2 };
  assert.equal(findInstance([a], {}), a);
  assert.equal(findInstance([a, b], { id: "bbbbbb" }), b);
  assert.equal(findInstance([a, b], { label: "a" }), a);
  assert.throws(
    () => findInstance([a, b], {}),
    (e: unknown) => usage(e) && /2 instances are registered/.test((e as Error).message),
  );
  assert.throws(() => findInstance([], {}), /no gateway instance is registered/);
  assert.throws(() => findInstance([a], { id: "zzzzzz" }), /no instance has id 'zzzzzz'/);
  assert.throws(() => findInstance([a], { label: "zz" }), /no instance is labelled 'zz'/);
  assert.deepEqual(matchInstances([a, b], { ip: "127.0.0.1", port: 2 }), [b]);
  assert.throws(
    () => matchInstances([a, b], { ip: "127.0.0.1", port: 3 }),
    /no instance is registered at 127\.0\.0\.1:3/,
  );
  assert.throws(() => matchInstances([a, b], {}), usage);
  assert.deepEqual(replaceInstance([a, b], { ...b, gateway_id: "g" })[1].gateway_id, "g");
});

Deno.test("instances: the registry file round-trips and refuses malformed entries", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/instances.json`;
    assert.deepEqual(await loadInstances(path), []);
    const a: Instance = {
      id: "aaaaaa",
      gateway_id: "0190f5e1-2b3c-7d4e-8f5a-6b7c8d9e0f1a",
      label: "a",
      ip: "::1",
      port: 1,
      prefix: "gw/admin",
    };
    await saveInstances(path, [a]);
    assert.deepEqual(JSON.parse(await Deno.readTextFile(path)), { version: 1, instances: [a] });
    assert.deepEqual(await loadInstances(path), [a]);
    await Deno.writeTextFile(path, JSON.stringify({ instances: [{ id: 1 }] }));
    await assert.rejects(() => loadInstances(path), /malformed instance entry/);
    await Deno.writeTextFile(path, "[]");
    await assert.rejects(() => loadInstances(path), /must hold/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
