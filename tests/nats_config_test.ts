/**
 * `[backends.<name>.queue] store = "nats"` in the configuration registry: what loads, what is
 * refused with a message naming the key, what the writer writes back and which keys are secrets.
 */
import { assert, assertEquals } from "./assert.ts";
import {
  literalSecretPaths,
  parseConfigText,
  validateConfigText,
  writeConfigToml,
} from "../shared/gateway_config/mod.ts";

const BASE = `
[endpoints.in]
service = "http"
[endpoints.in.options]
path_prefix = "/in"
[backends.out]
service = "http"
[backends.out.options]
base_url = "http://127.0.0.1:9"
[pipelines.p]
endpoints = ["in"]
backends = ["out"]
[backends.out.queue]
`;

function problems(queue: string): string[] {
  return validateConfigText(BASE + queue, "gateway.toml").problems.map((p) =>
    `${p.path}: ${p.message}`
  );
}

Deno.test("nats queue config: a nats store loads with its keys; the file store stays the default", () => {
  const file = validateConfigText(BASE, "gateway.toml");
  assertEquals(file.problems, []);
  assertEquals(file.config!.backends.out.queue!.store, "file");
  assertEquals(file.config!.backends.out.queue!.nats_replicas, undefined);
  const text = BASE + `store = "nats"
nats_servers = ["nats://n1:4222", "tls://n2:4222"]
nats_replicas = 3
nats_user = "gw"
nats_password = "\${NATS_PASSWORD}"
nats_ca_path = "/etc/gw/ca.pem"
nats_max_payload = 262144
`;
  const ok = validateConfigText(text, "gateway.toml");
  assertEquals(ok.problems, []);
  const q = ok.config!.backends.out.queue!;
  assertEquals(q.store, "nats");
  assertEquals(q.nats_servers, ["nats://n1:4222", "tls://n2:4222"]);
  assertEquals(q.nats_replicas, 3);
  // Written back as it was (defaults left out), and read again the same.
  const written = writeConfigToml(ok.config!);
  assert(written.includes('store = "nats"'), written);
  assertEquals(validateConfigText(written, "gateway.toml").config!.backends.out.queue, q);
});

Deno.test("nats queue config: refusals name the key", () => {
  assert(problems(`store = "nats"`).some((p) => p.includes("nats_servers: missing")));
  assert(
    problems(`store = "nats"\nnats_servers = ["http://n1:4222"]`).some((p) =>
      p.includes("nats_servers[0]") && p.includes("nats:// or tls://")
    ),
  );
  assert(
    problems(`store = "nats"\nnats_servers = ["nats://u:p@n1:4222"]`).some((p) =>
      p.includes("must not hold credentials")
    ),
  );
  assert(problems(`nats_servers = ["nats://n1:4222"]`).some((p) => p.includes('store = "nats"')));
  assert(
    problems(`store = "nats"\nnats_servers = ["nats://n1"]\ndir = "/q"`).some((p) =>
      p.includes("queue.dir") && p.includes('store = "file"')
    ),
  );
  assert(
    problems(
      `store = "nats"\nnats_servers = ["nats://n1"]\nnats_token = "t"\nnats_user = "u"\nnats_password = "p"`,
    )
      .some((p) => p.includes("one way of authenticating")),
  );
  assert(
    problems(`store = "nats"\nnats_servers = ["nats://n1"]\nnats_user = "u"`).some((p) =>
      p.includes("go together")
    ),
  );
  assert(
    problems(`store = "nats"\nnats_servers = ["nats://n1"]\nnats_stream = "a.b"`).some((p) =>
      p.includes("nats_stream")
    ),
  );
  assert(
    problems(`store = "nats"\nnats_servers = ["nats://n1"]\nnats_replicas = 7`).some((p) =>
      p.includes("nats_replicas")
    ),
  );
});

Deno.test("nats queue config: the password and the token are secrets", () => {
  const text = BASE + `store = "nats"
nats_servers = ["nats://n1:4222"]
nats_token = "literal-token"
`;
  const doc = parseConfigText(text, "gateway.toml").raw!;
  assertEquals(literalSecretPaths(doc), ["backends.out.queue.nats_token"]);
});

Deno.test("nats queue config: the cluster deployment's gateway.toml (deploy/cluster) is valid", async () => {
  const text = await Deno.readTextFile(new URL("../deploy/cluster/gateway.toml", import.meta.url));
  const result = validateConfigText(text, "deploy/cluster/gateway.toml");
  assertEquals(result.problems, []);
  assertEquals(result.config!.backends.ehr.queue!.store, "nats");
  assertEquals(result.config!.backends.ehr.queue!.nats_replicas, 3);
});
