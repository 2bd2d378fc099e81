import assert from "node:assert/strict";
import { isAbsolute, join, relative, resolve } from "node:path";
import { validateConfigText, writeConfigToml } from "../../shared/gateway_config/mod.ts";
import { loadConfigFile, loadConfigText } from "./load.ts";

const FIXTURES = resolve(new URL("../../fixtures/configs", import.meta.url).pathname);
const noEnv = () => undefined;

/** How the loader names a file in problems: relative to the current directory when below it. */
function shown(path: string): string {
  const rel = relative(Deno.cwd(), path);
  return rel.startsWith("..") || isAbsolute(rel) ? path : rel;
}

async function tempTree(files: Record<string, string>): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "gw_config_" });
  for (const [name, text] of Object.entries(files)) {
    await Deno.mkdir(join(dir, name, ".."), { recursive: true });
    await Deno.writeTextFile(join(dir, name), text);
  }
  return dir;
}

Deno.test("loadConfigFile: resolves transforms_path and lists the source file", async () => {
  const path = join(FIXTURES, "minimal.toml");
  const loaded = await loadConfigFile(path, { env: noEnv });
  assert.deepEqual(loaded.problems, []);
  assert.equal(loaded.config?.transforms_path, join(FIXTURES, "transforms"));
  assert.deepEqual(loaded.config?.source_files, [path]);
  assert.deepEqual(loaded.files, [path]);
  assert.deepEqual(loaded.dirs, []);
});

Deno.test("loadConfigFile: merges every *.toml of pipelines_path in name order", async () => {
  const main = join(FIXTURES, "multi", "gateway.toml");
  const loaded = await loadConfigFile(main, { env: noEnv });
  assert.deepEqual(loaded.problems, []);
  const config = loaded.config!;
  const files = [
    main,
    join(FIXTURES, "multi", "pipelines", "10_fhir.toml"),
    join(FIXTURES, "multi", "pipelines", "20_echo.toml"),
  ];
  assert.deepEqual(config.source_files, files);
  assert.deepEqual(loaded.files, files);
  assert.deepEqual(loaded.dirs, [join(FIXTURES, "multi", "pipelines")]);
  assert.equal(config.pipelines_path, "pipelines");
  assert.deepEqual(Object.keys(config.endpoints), ["fhir", "echo"]);
  assert.deepEqual(Object.keys(config.pipelines), ["fhir", "echo"]);
  assert.deepEqual(config.backends.hapi.targets, ["hapi"]);
  assert.deepEqual(config.middleware.patient.options, {
    spec_path: "patient.json",
    apply: "left",
    fail_on_error: true,
    max_steps: 10_000_000,
    debug: false,
    input: "data",
  });
});

Deno.test("loadConfigFile: a name defined twice across files names both places", async () => {
  const dir = join(FIXTURES, "invalid", "duplicate");
  const loaded = await loadConfigFile(join(dir, "gateway.toml"), { env: noEnv });
  const b = shown(join(dir, "pipelines", "b.toml"));
  assert.equal(loaded.config, undefined);
  assert.deepEqual(loaded.problems, [
    {
      file: b,
      line: 2,
      path: "backends.echo",
      message: `\`backends.echo\` is already defined at ${join(dir, "gateway.toml")}:3`,
    },
    {
      file: b,
      line: 5,
      path: "endpoints.echo",
      message: `\`endpoints.echo\` is already defined at ${
        shown(join(dir, "pipelines", "a.toml"))
      }:1`,
    },
    {
      file: b,
      line: 9,
      path: "logging",
      message:
        "unknown key `logging`; a pipelines file holds only endpoints, backends, targets, middleware, pipelines",
    },
  ]);
});

Deno.test("loadConfigFile: environment substitution, with fallbacks", async () => {
  const path = join(FIXTURES, "full.toml");
  const env: Record<string, string> = { S3_KEY_ID: "AKIA123" };
  const loaded = await loadConfigFile(path, { env: (n) => env[n] });
  assert.deepEqual(loaded.problems, []);
  const options = loaded.config!.backends.archive.options;
  assert.equal(options.access_key_id, "AKIA123");
  assert.equal(options.secret_access_key, "minio-secret");
  assert.deepEqual(Object.keys(loaded.config!.endpoints).at(-1), "echo_in");
});

Deno.test("loadConfigText: unset variables and validation problems are all reported", async () => {
  const text = [
    "[backends.pacs]",
    'service = "dicom_scu"',
    'options = { aet = "${PACS_AET}", host = "${PACS_HOST}", port = "104" }',
  ].join("\n");
  const loaded = await loadConfigText(text, "gw.toml", {
    env: (n) => n === "PACS_AET" ? "PACS" : undefined,
  });
  assert.deepEqual(loaded.problems, [
    {
      file: "gw.toml",
      line: 3,
      path: "backends.pacs.options.host",
      message: "environment variable `PACS_HOST` is not set",
    },
    {
      file: "gw.toml",
      line: 3,
      path: "backends.pacs.options.port",
      message: 'expected integer, found string "104"',
    },
  ]);
});

Deno.test("loadConfigText: pipelines_path relative to baseDir; problems in each file", async () => {
  const dir = await tempTree({
    "conf/pipes/a.toml": '[endpoints.a]\nservice = "http"\noptions = { path_prefix = "/a" }\n',
    "conf/pipes/b.toml": "[backends.b\n",
    "conf/pipes/c.toml": '[pipelines.p]\nendpoints = ["a"]\nbackends = ["${B}"]\n',
    "conf/pipes/notes.txt": "ignored",
  });
  try {
    const loaded = await loadConfigText(
      'pipelines_path = "pipes"\ntransforms_path = "/abs/tx"',
      "main.toml",
      {
        baseDir: join(dir, "conf"),
        env: noEnv,
      },
    );
    const c = join(dir, "conf", "pipes", "c.toml");
    assert.deepEqual(loaded.problems, [
      {
        file: join(dir, "conf", "pipes", "b.toml"),
        line: 1,
        path: "",
        message: "TOML syntax error at column 12: illegal character in key",
      },
      {
        file: c,
        line: 3,
        path: "pipelines.p.backends[0]",
        message: "environment variable `B` is not set",
      },
      {
        file: c,
        line: 3,
        path: "pipelines.p.backends[0]",
        message: "unknown backend `${B}`; no backend is defined",
      },
    ]);
    assert.deepEqual(
      loaded.files,
      ["a", "b", "c"].map((n) => join(dir, "conf", "pipes", `${n}.toml`)),
    );

    await Deno.remove(join(dir, "conf", "pipes", "b.toml"));
    await Deno.writeTextFile(
      join(dir, "conf", "pipes", "c.toml"),
      '[backends.b]\nservice = "echo"\n[pipelines.p]\nendpoints = ["a"]\nbackends = ["b"]\n',
    );
    const fixed = await loadConfigText(
      'pipelines_path = "pipes"\ntransforms_path = "/abs/tx"',
      "main.toml",
      {
        baseDir: join(dir, "conf"),
        env: noEnv,
      },
    );
    assert.deepEqual(fixed.problems, []);
    assert.equal(fixed.config!.transforms_path, "/abs/tx");
    assert.deepEqual(
      fixed.config!.source_files,
      ["a", "c"].map((n) => join(dir, "conf", "pipes", `${n}.toml`)),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loadConfigFile: a missing file or pipelines directory is a problem, not a throw", async () => {
  const missing = await loadConfigFile("/nonexistent/gw.toml");
  assert.equal(missing.problems.length, 1);
  assert.equal(missing.problems[0].file, "/nonexistent/gw.toml");
  assert.match(missing.problems[0].message, /^cannot read config file: /);

  const dir = await tempTree({ "gw.toml": '\n\npipelines_path = "nope"\n' });
  try {
    const loaded = await loadConfigFile(join(dir, "gw.toml"));
    assert.equal(loaded.problems.length, 1);
    const [problem] = loaded.problems;
    assert.deepEqual({ ...problem, message: "" }, {
      file: join(dir, "gw.toml"),
      line: 3,
      path: "pipelines_path",
      message: "",
    });
    assert.match(problem.message, new RegExp(`^cannot read directory ${join(dir, "nope")}: `));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loadConfigFile: a merged config written self-contained validates to the same config", async () => {
  const loaded = await loadConfigFile(join(FIXTURES, "full.toml"), { env: noEnv });
  assert.deepEqual(loaded.problems, []);
  const config = loaded.config!;
  const again = validateConfigText(writeConfigToml(config, { selfContained: true }), "out.toml");
  assert.deepEqual(again.problems, []);
  const { pipelines_path: _dropped, ...expected } = config;
  assert.deepEqual(again.config, { ...expected, source_files: [] });
});

Deno.test("loadConfigFile: the invalid fixtures report syntax errors and conflicts", async () => {
  const syntax = join(FIXTURES, "invalid", "syntax.toml");
  assert.deepEqual((await loadConfigFile(syntax, { env: noEnv })).problems, [
    {
      file: syntax,
      line: 4,
      path: "",
      message: "TOML syntax error at column 1: expected comma or end of structure",
    },
  ]);
  const conflicts = join(FIXTURES, "invalid", "conflicts.toml");
  const loaded = await loadConfigFile(conflicts, { env: noEnv });
  assert.deepEqual(loaded.problems.map((p) => `${p.line}: ${p.path}: ${p.message}`), [
    '16: endpoints.two.options.path_prefix: path_prefix "/api" is also served by endpoint `one` on network `b`',
    "29: endpoints.scp2.options.port: dicom_scp endpoint `scp2` listens on 127.0.0.1:11112 (TCP), which dicom_scp endpoint `scp1` also uses (0.0.0.0:11112)",
    "39: pipelines.p2.endpoints[1]: endpoint `three` is already used by pipeline `p1`; an endpoint feeds one pipeline",
  ]);
});

Deno.test("loadConfigFile: a pipelines_path holding the main file does not merge it twice", async () => {
  const dir = await tempTree({
    "gw.toml": 'pipelines_path = "."\n[backends.echo]\nservice = "echo"\n',
    "more.toml": '[endpoints.e]\nservice = "http"\noptions = { path_prefix = "/e" }\n' +
      '[pipelines.p]\nendpoints = ["e"]\nbackends = ["echo"]\n',
  });
  try {
    const loaded = await loadConfigFile(join(dir, "gw.toml"), { env: noEnv });
    assert.deepEqual(loaded.problems, []);
    assert.deepEqual(loaded.config!.source_files, [join(dir, "gw.toml"), join(dir, "more.toml")]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loadConfigFile: managed files merge like pipeline files plus networks; a missing one is skipped", async () => {
  const dir = await tempTree({
    "gateway.toml": '[cloud]\nstate_dir = "st"\n\n[network.main]\nport = 8081\n',
    "managed.toml": '[network.extra]\nport = 8082\n\n[logging]\nlevel = "debug"\n',
  });
  try {
    const main = join(dir, "gateway.toml");
    const missing = await loadConfigFile(main, {
      env: noEnv,
      managedFiles: [join(dir, "no.toml")],
    });
    assert.deepEqual(missing.problems, []);
    assert.equal(missing.config!.cloud.state_dir, join(dir, "st"), "resolved like transforms_path");
    const loaded = await loadConfigFile(main, {
      env: noEnv,
      managedFiles: [join(dir, "managed.toml")],
    });
    assert.deepEqual(loaded.problems.map((p) => [p.path, p.message]), [[
      "logging",
      "unknown key `logging`; a managed file holds only endpoints, backends, targets, middleware, pipelines, network",
    ]]);
    await Deno.writeTextFile(join(dir, "managed.toml"), "[network.extra]\nport = 8082\n");
    const ok = await loadConfigFile(main, {
      env: noEnv,
      managedFiles: [join(dir, "managed.toml")],
    });
    assert.deepEqual(Object.keys(ok.config!.network), ["main", "extra"]);
    assert.deepEqual(ok.files, [main], "managed files are not listed for watching");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loadConfigFile: GATEWAY_STATE_DIR holds state, data, queues and audit; the rest stays", async () => {
  const text = `
[cloud]
enabled = false

[audit]
file = "audit/audit.jsonl"

[management]
token_file = "management-token"

[backends.pacs]
service = "http"
[backends.pacs.options]
base_url = "http://pacs.example"
[backends.pacs.queue]

[backends.lab]
service = "http"
[backends.lab.options]
base_url = "http://lab.example"
[backends.lab.queue]
dir = "q/lab"

[backends.abs]
service = "http"
[backends.abs.options]
base_url = "http://abs.example"
[backends.abs.queue]
dir = "/srv/q/abs"
`;
  const dir = await tempTree({ "etc/gateway.toml": text });
  try {
    const file = join(dir, "etc/gateway.toml");
    const state = join(dir, "var");
    const inState = await loadConfigFile(file, {
      env: (name) => name === "GATEWAY_STATE_DIR" ? state : undefined,
    });
    assert.deepEqual(inState.problems, []);
    const c = inState.config!;
    assert.deepEqual(
      [c.cloud.state_dir, c.cloud.data_dir, c.audit?.file],
      [join(state, "state"), join(state, "data"), join(state, "audit/audit.jsonl")],
    );
    assert.deepEqual(
      [c.backends.pacs.queue?.dir, c.backends.lab.queue?.dir, c.backends.abs.queue?.dir],
      [join(state, "queues/pacs"), join(state, "q/lab"), "/srv/q/abs"],
    );
    // What the gateway reads stays beside the config file.
    assert.equal(c.management.token_file, join(dir, "etc/management-token"));
    assert.equal(c.transforms_path, join(dir, "etc/transforms"));

    // Without the variable, all of it is beside the config file, as before.
    const beside = (await loadConfigFile(file, { env: noEnv })).config!;
    assert.deepEqual(
      [beside.cloud.state_dir, beside.cloud.data_dir, beside.backends.pacs.queue?.dir],
      [join(dir, "etc/state"), join(dir, "etc/data"), join(dir, "etc/queues/pacs")],
    );
    assert.equal(beside.audit?.file, join(dir, "etc/audit/audit.jsonl"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
