import assert from "node:assert/strict";
import { CloudClient } from "./client.ts";
import { fakeCloudFetch } from "../../tests/support/fake_cloud.ts";
import {
  CloudTransformSource,
  sha256Hex,
  syncTransforms,
  TransformFetcher,
  transformIdOf,
} from "./transforms.ts";

const ID = "0190f5e3-aaaa-7bbb-8ccc-dddddddddddd";
const BAD = "0190f5e3-aaaa-7bbb-8ccc-eeeeeeeeeeee";
const SPEC = '[\n  {\n    "operation": "shift",\n    "spec": {\n      "a": "b"\n    }\n  }\n]\n';

function setup(token: string | null = "tok") {
  const counted: boolean[] = [];
  const { fetch, calls } = fakeCloudFetch({
    [`GET /api/gateway/transforms/${ID}`]: () => new Response(SPEC),
    [`GET /api/gateway/transforms/${BAD}`]: () => new Response('[{"operation":"nope"}]'),
  });
  const fetcher = new TransformFetcher(
    new CloudClient("https://cloud.example.com", fetch),
    () => token ?? undefined,
    (ok) => counted.push(ok),
  );
  return { fetcher, calls, counted };
}

Deno.test("transformIdOf: `<uuid>.json` directly in transforms_path, case-insensitive", () => {
  assert.equal(transformIdOf(`${ID}.json`), ID);
  assert.equal(transformIdOf(`${ID.toUpperCase()}.JSON`), ID);
  for (const p of [`x/${ID}.json`, `${ID}.jolt`, "patient.json", `${ID}.json.bak`]) {
    assert.equal(transformIdOf(p), null, p);
  }
});

Deno.test("CloudTransformSource: a missing id file is downloaded and saved; present files and other names are read", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const { fetcher, calls, counted } = setup();
    const source = new CloudTransformSource(dir, fetcher);
    assert.equal(await source.read(`${ID}.json`), SPEC);
    assert.equal(await Deno.readTextFile(`${dir}/${ID}.json`), SPEC);
    assert.equal(await source.read(`${ID}.json`), SPEC);
    assert.deepEqual(calls, [`GET /api/gateway/transforms/${ID}`], "downloaded once");
    assert.deepEqual(counted, [true]);
    await assert.rejects(() => source.read("patient.json"), /transform file .* does not exist/);
    await assert.rejects(
      () => source.read(`${BAD}.json`),
      /downloading transform .* failed: the downloaded spec is invalid/,
    );
    await assert.rejects(() => Deno.stat(`${dir}/${BAD}.json`), "an invalid spec is not written");
    await assert.rejects(() => source.read("../x.json"), /outside transforms_path/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("CloudTransformSource: without a token the missing file's message says how to get one", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const { fetcher, calls } = setup(null);
    const source = new CloudTransformSource(dir, fetcher);
    await assert.rejects(
      () => source.read(`${ID}.json`),
      /without a machine token .*gwcli gateway:authorize/,
    );
    assert.deepEqual(calls, []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("syncTransforms: downloads what is missing or different, checks the SHA-256, reports failures", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const { fetcher, calls } = setup();
    const sha = await sha256Hex(SPEC);
    assert.deepEqual(await syncTransforms(dir, [{ id: ID, sha256: sha }], fetcher), []);
    assert.equal(await Deno.readTextFile(`${dir}/${ID}.json`), SPEC);
    assert.deepEqual(await syncTransforms(dir, [{ id: ID, sha256: sha }], fetcher), []);
    assert.equal(calls.length, 1, "an up-to-date file is not downloaded again");
    await Deno.writeTextFile(`${dir}/${ID}.json`, "[]");
    assert.deepEqual(await syncTransforms(dir, [{ id: ID, sha256: sha }], fetcher), []);
    assert.equal(await Deno.readTextFile(`${dir}/${ID}.json`), SPEC, "a changed file is replaced");
    const problems = await syncTransforms(dir, [
      { id: ID, sha256: "0".repeat(64) },
      { id: BAD, sha256: "1".repeat(64) },
      { id: "not-a-uuid", sha256: sha },
    ], fetcher);
    assert.deepEqual(problems.map((p) => p.path), [
      `transforms.${ID}`,
      `transforms.${BAD}`,
      "transforms.not-a-uuid",
    ]);
    assert.match(problems[0].message, /does not match the SHA-256/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
