import assert from "node:assert/strict";
import { validateConfigText } from "./text.ts";
import type { ConfigProblem } from "./types.ts";

const FILE = "refs.toml";

function problems(text: string): ConfigProblem[] {
  return validateConfigText(text, FILE).problems;
}

function p(line: number, path: string, message: string): ConfigProblem {
  return { file: FILE, line, path, message };
}

Deno.test("references: every name a pipeline, backend or endpoint uses must exist", () => {
  assert.deepEqual(
    problems(`
[network.main]
[endpoints.api]
service = "http"
networks = ["mian", "other"]
options = { path_prefix = "/api" }
[backends.up]
service = "http"
targets = ["t1", "t2"]
[targets.t1]
url = "http://a"
[pipelines.p]
endpoints = ["api", "apii"]
middleware = ["auth"]
backends = ["up", "up", "down"]
`),
    [
      p(5, "endpoints.api.networks[0]", "unknown network `mian`; did you mean `main`?"),
      p(5, "endpoints.api.networks[1]", "unknown network `other`; defined: main"),
      p(9, "backends.up.targets[1]", "unknown target `t2`; did you mean `t1`?"),
      p(13, "pipelines.p.endpoints[1]", "unknown endpoint `apii`; did you mean `api`?"),
      p(14, "pipelines.p.middleware[0]", "unknown middleware `auth`; no middleware is defined"),
      p(15, "pipelines.p.backends[1]", "backend `up` is listed twice"),
      p(15, "pipelines.p.backends[2]", "unknown backend `down`; defined: up"),
    ],
  );
});

Deno.test("references: an endpoint feeds one pipeline", () => {
  assert.deepEqual(
    problems(`
[endpoints.api]
service = "http"
options = { path_prefix = "/api" }
[backends.echo]
service = "echo"
[pipelines.a]
endpoints = ["api"]
backends = ["echo"]
[pipelines.b]
endpoints = [
  "api",
]
backends = ["echo"]
`),
    [
      p(
        12,
        "pipelines.b.endpoints[0]",
        "endpoint `api` is already used by pipeline `a`; an endpoint feeds one pipeline",
      ),
    ],
  );
});

Deno.test("references: the same normalized path_prefix on a common network conflicts", () => {
  assert.deepEqual(
    problems(`
[network.a]
port = 8080
[network.b]
port = 8081
[endpoints.all]
service = "http"
options = { path_prefix = "/api/" }
[endpoints.on_b]
service = "fhir"
networks = ["b"]
options = { path_prefix = "/api" }
[endpoints.x]
service = "jmix"
networks = ["a"]
options = { path_prefix = "/x" }
[endpoints.y]
service = "dicomweb"
networks = ["b"]
options = { path_prefix = "/x" }
[endpoints.dw1]
service = "dicomweb"
networks = ["a"]
[endpoints.dw2]
service = "dicomweb"
networks = ["a", "b"]
`),
    [
      p(
        12,
        "endpoints.on_b.options.path_prefix",
        'path_prefix "/api" is also served by endpoint `all` on network `b`',
      ),
      p(
        24,
        "endpoints.dw2.options.path_prefix",
        'path_prefix "/dicomweb" is also served by endpoint `dw1` on network `a`',
      ),
    ],
  );
});

Deno.test("references: listeners may not share an address and port", () => {
  assert.deepEqual(
    problems(`
[network.a]
port = 9090
[network.b]
bind = "127.0.0.1"
port = 8443
tls_cert_path = "c"
tls_key_path = "k"
[network.b.http3]
[network.c]
bind = "127.0.0.2"
port = 8444
http3 = { bind = "0.0.0.0", port = 8443, cert_path = "c", key_path = "k" }
[endpoints.scp1]
service = "dicom_scp"
options = { local_aet = "A", allow_unauthenticated = true }
[endpoints.scp2]
service = "dicom_scp"
options = { local_aet = "B", bind_addr = "127.0.0.1" }
[endpoints.scp3]
service = "dicom_scp"
options = { local_aet = "C", bind_addr = "127.0.0.1", port = 11113 }
[endpoints.scp4]
service = "dicom_scp"
options = { local_aet = "D", bind_addr = "127.0.0.2", port = 11113 }
`),
    [
      p(
        3,
        "network.a.port",
        "network `a` listens on 0.0.0.0:9090 (TCP), which the management API also uses (127.0.0.1:9090)",
      ),
      p(
        13,
        "network.c.http3.port",
        "the http3 listener of network `c` listens on 0.0.0.0:8443 (UDP), which the http3 listener of network `b` also uses (127.0.0.1:8443)",
      ),
      p(
        19,
        "endpoints.scp2.options.port",
        "dicom_scp endpoint `scp2` listens on 127.0.0.1:11112 (TCP), which dicom_scp endpoint `scp1` also uses (0.0.0.0:11112)",
      ),
    ],
  );
});

Deno.test("references: dicom_scp endpoints take no networks; HTTP endpoints need one", () => {
  assert.deepEqual(
    problems(`
[network]
[endpoints.scp]
service = "dicom_scp"
networks = ["a"]
options = { local_aet = "A", bind_addr = "127.0.0.1" }
[endpoints.api]
service = "http"
options = { path_prefix = "/api" }
`),
    [
      p(
        5,
        "endpoints.scp.networks",
        "dicom_scp endpoints listen on their own bind_addr and port; remove networks",
      ),
      p(7, "endpoints.api", "no network serves this endpoint: the network table defines none"),
    ],
  );
});
