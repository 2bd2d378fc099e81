import assert from "node:assert/strict";
import { loadWithManagedConfig, ManagedConfigFiles, managedText } from "./managed_config.ts";

const PULLED = `# Gateway configuration

transforms_path = "transforms"

[cloud]
enabled = true
url = "https://cloud.example.com"

[network.public]
port = 8443

[endpoints.fhir_in]
service = "fhir"
networks = ["public"]

[endpoints.fhir_in.options]
path_prefix = "/fhir"

[backends.echo]
service = "echo"

[pipelines.fhir]
endpoints = ["fhir_in"]
backends = ["echo"]
`;

Deno.test("managedText: keeps the mergeable tables under a header naming version and ETag", () => {
  const text = managedText(PULLED, 7, '"abc"');
  assert.match(
    text,
    /^# Written by the gateway's cloud sync: configuration version 7 \(ETag "abc"\)/,
  );
  assert.match(text, /\[endpoints\.fhir_in\.options\]/);
  assert.match(text, /\[network\.public\]/);
  assert.ok(!text.includes("[cloud]") && !text.includes("transforms_path"));
  assert.match(managedText("# empty\n", 1, '"e"'), /^# Written .*\n# Do not edit.*\n$/);
  assert.throws(() => managedText("[a", 1, '"x"'));
});

Deno.test("loadWithManagedConfig: merges the state dir's cloud.toml while the cloud is enabled", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const local = (enabled: boolean) =>
      `[cloud]
enabled = ${enabled}
url = "https://cloud.example.com"
state_dir = "st"

[endpoints.local]
service = "http"
options = { path_prefix = "/local" }
[backends.local]
service = "echo"
[pipelines.local]
endpoints = ["local"]
backends = ["local"]
`;
    await Deno.writeTextFile(`${dir}/gateway.toml`, local(true));
    const bare = await loadWithManagedConfig(`${dir}/gateway.toml`);
    assert.deepEqual(bare.problems, []);
    assert.deepEqual(Object.keys(bare.config!.pipelines), ["local"]);
    assert.equal(bare.config!.cloud.state_dir, `${dir}/st`);

    const files = new ManagedConfigFiles(`${dir}/st`);
    await files.write(managedText(PULLED, 2, '"e2"'));
    const merged = await loadWithManagedConfig(`${dir}/gateway.toml`);
    assert.deepEqual(merged.problems, []);
    const c = merged.config!;
    assert.deepEqual(Object.keys(c.pipelines).sort(), ["fhir", "local"]);
    // The local file had no [network]: its implied `default` listener stays beside the cloud's.
    assert.deepEqual(Object.keys(c.network).sort(), ["default", "public"]);
    assert.equal(c.cloud.url, "https://cloud.example.com");
    assert.deepEqual(c.source_files, [`${dir}/gateway.toml`], "the managed file is not watched");
    assert.deepEqual(merged.files, [`${dir}/gateway.toml`]);

    // A name defined locally and in the cloud is a problem located in the managed file.
    await files.write(
      managedText(PULLED.replaceAll("pipelines.fhir", "pipelines.local"), 3, '"e3"'),
    );
    const clash = await loadWithManagedConfig(`${dir}/gateway.toml`);
    assert.equal(clash.config, undefined);
    assert.ok(
      clash.problems.some((p) => p.path === "pipelines.local" && /already defined/.test(p.message)),
    );

    // Disabled: the managed file is left out.
    await Deno.writeTextFile(`${dir}/gateway.toml`, local(false));
    const off = await loadWithManagedConfig(`${dir}/gateway.toml`);
    assert.deepEqual(Object.keys(off.config!.pipelines), ["local"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ManagedConfigFiles: write, restore (undefined removes), and the sync state", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const files = new ManagedConfigFiles(`${dir}/state`);
    assert.equal(await files.read(), undefined);
    assert.equal(await files.readState(), undefined);
    await files.write("# v1\n");
    assert.equal(await files.read(), "# v1\n");
    if (Deno.build.os !== "windows") {
      assert.equal(Deno.statSync(files.configPath).mode! & 0o777, 0o600);
    }
    await files.write(undefined);
    assert.equal(await files.read(), undefined);
    await files.writeState({ version: 4, etag: '"x"', applied_at: "2030-01-01T00:00:00.000Z" });
    assert.deepEqual(await files.readState(), {
      version: 4,
      etag: '"x"',
      applied_at: "2030-01-01T00:00:00.000Z",
    });
    await Deno.writeTextFile(files.statePath, "{");
    assert.equal(await files.readState(), undefined);
    assert.deepEqual([...Deno.readDirSync(`${dir}/state`)].map((e) => e.name), ["cloud-sync.json"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
