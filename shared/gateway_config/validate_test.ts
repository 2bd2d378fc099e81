import assert from "node:assert/strict";
import { validateConfigText } from "./text.ts";
import { parseConfigText } from "./parse.ts";
import { validateConfig } from "./validate.ts";
import type { ConfigProblem, GatewayConfig } from "./types.ts";
import {
  DEFAULT_RETRIEVE_SOP_CLASSES,
  DEFAULT_RETRIEVE_TRANSFER_SYNTAXES,
} from "./dicom_catalog.ts";

const FILE = "gw.toml";

/** Validates `text`, failing the test with the problems when it is invalid. */
function valid(text: string): GatewayConfig {
  const result = validateConfigText(text, FILE);
  assert.deepEqual(result.problems, []);
  assert.ok(result.config);
  return result.config;
}

function problems(text: string): ConfigProblem[] {
  const result = validateConfigText(text, FILE);
  assert.equal(result.config, undefined);
  return result.problems;
}

/** A problem in FILE. */
function p(line: number | undefined, path: string, message: string): ConfigProblem {
  return line === undefined ? { file: FILE, path, message } : { file: FILE, line, path, message };
}

/** The C-GET proposal defaults of a dicom_scu backend (dicom_retrieve_test.ts tests them). */
const RETRIEVE_DEFAULTS = {
  retrieve_sop_classes: [...DEFAULT_RETRIEVE_SOP_CLASSES],
  retrieve_transfer_syntaxes: [...DEFAULT_RETRIEVE_TRANSFER_SYNTAXES],
  retrieve_sop_class_lookup: true,
};

const BACKEND_DEFAULTS = {
  targets: [],
  required: false,
  timeout_secs: 30,
  retries: 1,
  load_balancing: "round_robin",
  max_failures: 3,
  cooldown_secs: 10,
};

Deno.test("validateConfig: a minimal file gets every default", () => {
  const config = valid(`
[endpoints.api]
service = "http"
options = { path_prefix = "/api/" }

[backends.up]
service = "http"
options = { base_url = "http://127.0.0.1:8081" }

[pipelines.api]
endpoints = ["api"]
backends = ["up"]
`);
  assert.deepEqual(config, {
    transforms_path: "transforms",
    cloud: {
      enabled: false,
      state_dir: "state",
      status_interval_secs: 60,
      allowed_env: [],
      data_dir: "data",
    },
    network: { default: { name: "default", bind: "0.0.0.0", port: 8080 } },
    endpoints: {
      api: { name: "api", service: "http", options: { path_prefix: "/api" }, networks: [] },
    },
    backends: {
      up: {
        name: "up",
        service: "http",
        ...BACKEND_DEFAULTS,
        options: { base_url: "http://127.0.0.1:8081", upstream_protocol: "http1" },
      },
    },
    targets: {},
    middleware: {},
    pipelines: { api: { name: "api", endpoints: ["api"], middleware: [], backends: ["up"] } },
    proxy: {
      content_limits: {
        max_body_size: 10485760,
        max_csv_rows: 10000,
        max_csv_columns: 1000,
        max_csv_cell_bytes: 131072,
        max_xml_depth: 100,
        max_multipart_files: 10,
        max_form_fields: 1000,
        max_json_depth: 128,
        max_xml_attributes: 256,
        max_xml_references: 100000,
        body_timeout_secs: 60,
        spool_threshold: 1048576,
      },
    },
    management: {
      enabled: true,
      bind: "127.0.0.1",
      port: 9090,
      prefix: "admin",
      allowed_hosts: [],
      console: true,
    },
    logging: { level: "info", format: "json", log_identifiers: false },
    runtime: {
      shutdown_grace_secs: 10,
      watchdog_miss_ms: 2000,
      watchdog_kill_ms: 10000,
      watchdog_exit_ms: 60000,
    },
    source_files: [],
  });
});

Deno.test("validateConfig: the full fixture keeps every value written", async () => {
  const text = await Deno.readTextFile(
    new URL("../../fixtures/configs/full.toml", import.meta.url),
  );
  const c = valid(text);
  assert.equal(c.transforms_path, "transforms");
  assert.equal(c.pipelines_path, "full.d");
  assert.deepEqual(c.cloud, {
    enabled: true,
    url: "https://cloud.example.com",
    gateway_code: "edge-berlin-1",
    state_dir: "/var/lib/gateway",
    status_interval_secs: 30,
    allowed_env: ["HAPI_URL"],
    data_dir: "/var/lib/gateway/data",
  });
  assert.deepEqual(c.network, {
    public: {
      name: "public",
      bind: "0.0.0.0",
      port: 8443,
      tls_cert_path: "certs/gateway.pem",
      tls_key_path: "certs/gateway-key.pem",
      connection_guard: true,
      header_timeout_secs: 5,
      idle_timeout_secs: 300,
      max_connections_per_ip: 1000,
      http3: {
        bind: "0.0.0.0",
        port: 8443,
        cert_path: "certs/gateway.pem",
        key_path: "certs/gateway-key.pem",
      },
    },
    internal: {
      name: "internal",
      bind: "127.0.0.1",
      port: 8080,
      connection_guard: false,
      header_timeout_secs: 10,
      idle_timeout_secs: 120,
      max_connections_per_ip: 256,
    },
  });
  assert.deepEqual(c.endpoints.dimse_in, {
    name: "dimse_in",
    service: "dicom_scp",
    networks: [],
    options: {
      local_aet: "GATEWAY",
      bind_addr: "0.0.0.0",
      port: 11112,
      enable_echo: true,
      enable_find: true,
      enable_move: false,
      enable_get: true,
      enable_store: true,
      storage_dir: "data/dicom",
      allowed_calling_aets: ["MODALITY1", "WORKSTATION"],
      allowed_source_addresses: ["10.20.0.0/16"],
      allow_unauthenticated: false,
    },
  });
  assert.deepEqual(c.backends.api, {
    name: "api",
    service: "http",
    targets: ["api_a", "api_b"],
    required: false,
    timeout_secs: 15,
    retries: 2,
    load_balancing: "least_requests",
    max_failures: 5,
    cooldown_secs: 30,
    match: { tenant: "a" },
    health_check: { path: "/health", interval_secs: 5, timeout_secs: 1, healthy_threshold: 2 },
    options: { upstream_protocol: "http1" },
  });
  assert.deepEqual(c.backends.pacs.options, {
    aet: "ORTHANC",
    host: "pacs.local",
    port: 4242,
    local_aet: "GATEWAY_SCU",
    dimse_retrieve_mode: "move",
    use_tls: true,
    incoming_store_port: 11113,
    persistent_store_scp: true,
    ca_cert_path: "certs/pacs-ca.pem",
    cert_path: "certs/scu.pem",
    key_path: "certs/scu-key.pem",
    association_idle_secs: 60,
    max_associations: 8,
    ...RETRIEVE_DEFAULTS,
  });
  // No environment substitution here: that is the loader's job.
  assert.deepEqual(c.backends.archive.options, {
    root: "s3://archive/incoming",
    read_pattern: "{patient_id}/{file}",
    write_pattern: "{patient_id}/{uuid}.json",
    region: "eu-central-1",
    access_key_id: "${S3_KEY_ID:-minio}",
    secret_access_key: "${S3_SECRET:-minio-secret}",
    endpoint: "http://minio:9000",
  });
  assert.deepEqual(c.backends.quic_api.options, {
    host: "api.example.com",
    port: 443,
    base_path: "/v1",
    ca_cert_path: "certs/ca.pem",
    timeout_secs: 30,
  });
  assert.deepEqual(c.middleware, {
    to_fhir: {
      name: "to_fhir",
      type: "transform",
      options: {
        spec_path: "patient.json",
        apply: "both",
        fail_on_error: false,
        max_steps: 50_000_000,
        debug: true,
        input: "data",
      },
    },
    route_tenant: {
      name: "route_tenant",
      type: "metadata_transform",
      options: {
        spec_path: "tenant.json",
        apply: "left",
        fail_on_error: true,
        max_steps: 10_000_000,
      },
    },
  });
  assert.deepEqual(c.proxy.content_limits, {
    max_body_size: 52428800,
    max_csv_rows: 50000,
    max_csv_columns: 200,
    max_csv_cell_bytes: 1048576,
    max_xml_depth: 64,
    max_multipart_files: 20,
    max_form_fields: 500,
    max_json_depth: 64,
    max_xml_attributes: 64,
    max_xml_references: 500000,
    body_timeout_secs: 30,
    spool_threshold: 4194304,
  });
  assert.deepEqual(c.management, {
    enabled: true,
    bind: "127.0.0.1",
    port: 9091,
    prefix: "ops",
    token_file: "/etc/gateway/management-token",
    allowed_hosts: ["gateway-1.hospital.internal"],
    tls_cert_path: "certs/mgmt.pem",
    tls_key_path: "certs/mgmt-key.pem",
    console: true,
  });
  assert.deepEqual(c.logging, { level: "debug", format: "text", log_identifiers: true });
});

const ECHO_PIPELINE = `
[backends.echo]
service = "echo"
`;

Deno.test("validateConfig: service option defaults", () => {
  const c = valid(`
[endpoints.dw]
service = "dicomweb"
[endpoints.scp]
service = "dicom_scp"
options = { local_aet = "GW", allow_unauthenticated = true }
[backends.q]
service = "http3"
options = { host = "h" }
[backends.scu]
service = "dicom_scu"
options = { aet = "PACS", host = "pacs", port = 104 }
[backends.files]
service = "storage"
options = { root = "/srv/data", write_pattern = "{uuid}.json" }
[middleware.t]
type = "transform"
options = { spec_path = "a.json" }
[middleware.m]
type = "metadata_transform"
options = { spec_path = "b.json" }
${ECHO_PIPELINE}`);
  assert.deepEqual(c.endpoints.dw.options, { path_prefix: "/dicomweb" });
  assert.deepEqual(c.endpoints.scp.options, {
    local_aet: "GW",
    bind_addr: "0.0.0.0",
    port: 11112,
    enable_echo: true,
    enable_find: false,
    enable_move: false,
    enable_get: false,
    enable_store: false,
    allow_unauthenticated: true,
  });
  assert.deepEqual(c.backends.q.options, { host: "h", port: 443, timeout_secs: 30 });
  assert.deepEqual(c.backends.scu.options, {
    aet: "PACS",
    host: "pacs",
    port: 104,
    local_aet: "GATEWAY_SCU",
    dimse_retrieve_mode: "get",
    use_tls: false,
    persistent_store_scp: false,
    association_idle_secs: 15,
    max_associations: 8,
    ...RETRIEVE_DEFAULTS,
  });
  assert.deepEqual(c.backends.files.options, { root: "/srv/data", write_pattern: "{uuid}.json" });
  assert.deepEqual(c.backends.echo, {
    name: "echo",
    service: "echo",
    ...BACKEND_DEFAULTS,
    options: {},
  });
  assert.deepEqual(c.middleware.t.options, {
    spec_path: "a.json",
    apply: "left",
    fail_on_error: true,
    max_steps: 10_000_000,
    debug: false,
    input: "data",
  });
  assert.deepEqual(c.middleware.m.options, {
    spec_path: "b.json",
    apply: "left",
    fail_on_error: true,
    max_steps: 10_000_000,
  });
});

Deno.test("validateConfig: an http3 listener inherits the network's address and TLS files", () => {
  const c = valid(`
[network.edge]
bind = "10.0.0.1"
port = 443
tls_cert_path = "c.pem"
tls_key_path = "k.pem"
[network.edge.http3]
`);
  assert.deepEqual(c.network.edge.http3, {
    bind: "10.0.0.1",
    port: 443,
    cert_path: "c.pem",
    key_path: "k.pem",
  });
  const own = valid(`
[network.edge.http3]
port = 4433
cert_path = "q.pem"
key_path = "qk.pem"
`);
  assert.deepEqual(own.network.edge, {
    name: "edge",
    bind: "0.0.0.0",
    port: 8080,
    connection_guard: true,
    header_timeout_secs: 10,
    idle_timeout_secs: 120,
    max_connections_per_ip: 256,
    http3: { bind: "0.0.0.0", port: 4433, cert_path: "q.pem", key_path: "qk.pem" },
  });
});

Deno.test("validateConfig: an empty [network] table means no HTTP listener at all", () => {
  const c = valid(`
[network]
[endpoints.scp]
service = "dicom_scp"
options = { local_aet = "GW", bind_addr = "127.0.0.1" }
`);
  assert.deepEqual(c.network, {});
});

Deno.test("validateConfig: unknown keys, with a suggestion or the allowed list", () => {
  assert.deepEqual(
    problems(`
networks = 1
[logging]
colour = true
[backends.x]
service = "echo"
tiemout_secs = 5
`),
    [
      p(2, "networks", "unknown key `networks`; did you mean `network`?"),
      p(4, "logging.colour", "unknown key `colour`; allowed: level, format, log_identifiers"),
      p(7, "backends.x.tiemout_secs", "unknown key `tiemout_secs`; did you mean `timeout_secs`?"),
    ],
  );
});

Deno.test("validateConfig: type errors say what was expected and what was found", () => {
  assert.deepEqual(
    problems(`
cloud = "yes"
transforms_path = 7
[network.main]
port = "80"
bind = 1.5
[management]
enabled = "true"
port = 90.5
[pipelines.p]
endpoints = ["a", 2]
backends = "b"
`),
    [
      p(2, "cloud", 'expected table, found string "yes"'),
      p(3, "transforms_path", "expected string, found integer 7"),
      p(5, "network.main.port", 'expected integer, found string "80"'),
      p(6, "network.main.bind", "expected string, found float 1.5"),
      p(8, "management.enabled", 'expected boolean, found string "true"'),
      p(9, "management.port", "expected integer, found float 90.5"),
      p(11, "pipelines.p.endpoints[1]", "expected string, found integer 2"),
      p(12, "pipelines.p.backends", 'expected array of strings, found string "b"'),
    ],
  );
});

Deno.test("validateConfig: ranges, enums and required keys", () => {
  assert.deepEqual(
    problems(`
[network.a]
port = 0
[network.b]
port = 70000
[backends.x]
service = "http"
timeout_secs = 0
retries = -1
load_balancing = "round_robn"
options = { base_url = "http://a" }
[backends.y]
[logging]
level = "verbose"
[pipelines.p]
endpoints = []
`),
    [
      p(3, "network.a.port", "must be at least 1, found 0"),
      p(5, "network.b.port", "must be at most 65535, found 70000"),
      p(8, "backends.x.timeout_secs", "must be greater than 0, found 0"),
      p(9, "backends.x.retries", "must be at least 0, found -1"),
      p(
        10,
        "backends.x.load_balancing",
        'expected one of "round_robin", "least_requests", "random", found string "round_robn"; did you mean `round_robin`?',
      ),
      p(12, "backends.y.service", "missing required key `service` (string)"),
      p(
        14,
        "logging.level",
        'expected one of "error", "warn", "info", "debug", "trace", found string "verbose"',
      ),
      p(16, "pipelines.p.endpoints", "must list at least one item"),
      p(15, "pipelines.p.backends", "missing required key `backends` (array of strings)"),
    ].sort((a, b) => a.line! - b.line!),
  );
});

Deno.test("validateConfig: path_prefix rules and normalization", () => {
  const c = valid(`
[endpoints.a]
service = "http"
options = { path_prefix = "/a/b///" }
[endpoints.root]
service = "fhir"
options = { path_prefix = "/" }
`);
  assert.equal(c.endpoints.a.options.path_prefix, "/a/b");
  assert.equal(c.endpoints.root.options.path_prefix, "/");
  assert.deepEqual(
    problems(`
[endpoints.a]
service = "http"
options = { path_prefix = "api" }
[endpoints.b]
service = "jmix"
options = { path_prefix = "/a//b" }
[endpoints.c]
service = "fhir"
options = { path_prefix = "/a/../b" }
[endpoints.d]
service = "http"
options = { path_prefix = "/a b" }
[endpoints.e]
service = "fhir"
`),
    [
      p(4, "endpoints.a.options.path_prefix", "must start with `/`"),
      p(7, "endpoints.b.options.path_prefix", "must not contain an empty segment (`//`)"),
      p(10, "endpoints.c.options.path_prefix", "must not contain `.` or `..` segments"),
      p(13, "endpoints.d.options.path_prefix", "must hold only URL path characters"),
      p(14, "endpoints.e.options.path_prefix", "missing required key `path_prefix` (string)"),
    ],
  );
});

Deno.test("validateConfig: DICOM AE titles", () => {
  assert.deepEqual(
    problems(`
[endpoints.a]
service = "dicom_scp"
options = { local_aet = "THIS_TITLE_IS_TOO_LONG", port = 1001 }
[endpoints.b]
service = "dicom_scp"
options = { local_aet = "A\\\\B", port = 1002 }
[endpoints.c]
service = "dicom_scp"
options = { local_aet = "   ", port = 1003, allowed_calling_aets = ["OK", ""] }
`),
    [
      p(
        4,
        "endpoints.a.options.local_aet",
        'must be at most 16 characters long, found string "THIS_TITLE_IS_TOO_LONG"',
      ),
      p(7, "endpoints.b.options.local_aet", "must not contain a backslash or control characters"),
      p(10, "endpoints.c.options.local_aet", "must not be all spaces"),
      p(10, "endpoints.c.options.allowed_calling_aets[1]", "must not be empty"),
    ],
  );
});

Deno.test("validateConfig: listener TLS files come in pairs", () => {
  assert.deepEqual(
    problems(`
[network.a]
tls_cert_path = "c.pem"
[network.b]
port = 8081
[network.b.http3]
port = 8443
`),
    [
      p(
        2,
        "network.a.tls_key_path",
        "missing `tls_key_path`: set both tls_cert_path and tls_key_path, or neither",
      ),
      p(6, "network.b.http3.cert_path", "missing required key `cert_path` (string)"),
      p(6, "network.b.http3.key_path", "missing required key `key_path` (string)"),
    ],
  );
});

Deno.test("validateConfig: http-like backends take base_url or targets", () => {
  assert.deepEqual(
    problems(`
[targets.t]
url = "http://t"
[targets.bad]
url = "localhost:80"
[backends.both]
service = "fhir"
targets = ["t"]
options = { base_url = "http://a" }
[backends.neither]
service = "http"
[backends.files]
service = "storage"
targets = ["t"]
options = { root = "/data", read_pattern = "{id}" }
[backends.files.health_check]
path = "/health"
[backends.e]
service = "echo"
options = { base_url = "http://a" }
[backends.hc]
service = "http"
options = { base_url = "http://a" }
health_check = { path = "health", interval_secs = 0 }
`),
    [
      p(5, "targets.bad.url", "must be an http:// or https:// URL"),
      p(9, "backends.both.options.base_url", "use base_url or targets, not both"),
      p(
        10,
        "backends.neither.options.base_url",
        "missing required key `base_url` (or list `targets`)",
      ),
      p(14, "backends.files.targets", "targets apply only to http, fhir, dicomweb backends"),
      p(
        16,
        "backends.files.health_check",
        "health_check applies only to http, fhir, dicomweb backends",
      ),
      p(20, "backends.e.options.base_url", "`echo` backends take no options"),
      p(24, "backends.hc.health_check.path", "must start with `/`"),
      p(24, "backends.hc.health_check.interval_secs", "must be greater than 0, found 0"),
    ],
  );
});

Deno.test("validateConfig: storage and dicom_scu rules across keys", () => {
  assert.deepEqual(
    problems(`
[backends.s3]
service = "storage"
options = { root = "s3://bucket/x", read_pattern = "{id}" }
[backends.local]
service = "storage"
options = { root = "/data", region = "eu", access_key_id = "k" }
[backends.badbucket]
service = "storage"
options = { root = "s3://B/x", read_pattern = "{id}" }
[backends.move]
service = "dicom_scu"
options = { aet = "P", host = "h", port = 104, dimse_retrieve_mode = "move", cert_path = "c.pem" }
`),
    [
      p(
        4,
        "backends.s3.options.region",
        "missing required key `region` (required when root is s3://)",
      ),
      p(7, "backends.local.options", "set read_pattern, write_pattern, or both"),
      p(7, "backends.local.options.region", "applies only when root is s3://"),
      p(7, "backends.local.options.access_key_id", "applies only when root is s3://"),
      p(
        7,
        "backends.local.options.secret_access_key",
        "missing `secret_access_key`: set both access_key_id and secret_access_key, or neither",
      ),
      p(
        10,
        "backends.badbucket.options.root",
        "an S3 root must be s3://<bucket>/<prefix> with a valid bucket name",
      ),
      p(
        13,
        "backends.move.options.incoming_store_port",
        'missing required key `incoming_store_port` (required when dimse_retrieve_mode is "move")',
      ),
      p(13, "backends.move.options.cert_path", "applies only when use_tls = true"),
      p(
        13,
        "backends.move.options.key_path",
        "missing `key_path`: set both cert_path and key_path, or neither",
      ),
    ],
  );
});

Deno.test("validateConfig: middleware types and their options", () => {
  assert.deepEqual(
    problems(`
[middleware.a]
type = "transfrom"
[middleware.b]
type = "metadata_transform"
options = { spec_path = "x.json", debug = true }
[middleware.c]
type = "transform"
options = { apply = "sideways" }
[middleware.d]
options = {}
`),
    [
      p(
        3,
        "middleware.a.type",
        'unknown middleware type "transfrom"; did you mean `transform`?; known types: transform, metadata_transform, api_key, jwt_auth, ip_filter, cors, rate_limit, request_filter, headers, basic_auth',
      ),
      p(
        6,
        "middleware.b.options.debug",
        "unknown key `debug`; allowed: spec_path, apply, fail_on_error, max_steps",
      ),
      p(9, "middleware.c.options.spec_path", "missing required key `spec_path` (string)"),
      p(
        9,
        "middleware.c.options.apply",
        'expected one of "left", "right", "both", found string "sideways"',
      ),
      p(10, "middleware.d.type", "missing required key `type` (string)"),
    ],
  );
});

Deno.test("validateConfig: management prefix is one segment, stored without slashes", () => {
  assert.equal(valid('[management]\nprefix = "/ops/"').management.prefix, "ops");
  assert.deepEqual(problems('[management]\nprefix = "a/b"'), [
    p(2, "management.prefix", "must be one path segment of letters, digits, `_` or `-`"),
  ]);
});

Deno.test("validateConfig: names must be plain identifiers", () => {
  assert.deepEqual(
    problems('[backends."my api"]\nservice = "echo"\n[backends._x]\nservice = "echo"'),
    [
      p(
        1,
        "backends.my api",
        "invalid name `my api`: use letters, digits, `_` and `-`, starting with a letter or digit",
      ),
      p(
        3,
        "backends._x",
        "invalid name `_x`: use letters, digits, `_` and `-`, starting with a letter or digit",
      ),
    ],
  );
});

Deno.test("validateConfig: the many-problems fixture reports each problem once, in line order", async () => {
  const url = new URL("../../fixtures/configs/invalid/many_problems.toml", import.meta.url);
  const file = "many_problems.toml";
  const parsed = parseConfigText(await Deno.readTextFile(url), file);
  const result = validateConfig(parsed.raw, parsed.positions, file);
  assert.deepEqual(result.problems, [
    {
      file,
      line: 2,
      path: "transforms_pth",
      message: "unknown key `transforms_pth`; did you mean `transforms_path`?",
    },
    { file, line: 5, path: "network.main.port", message: 'expected integer, found string "80"' },
    {
      file,
      line: 8,
      path: "endpoints.api.service",
      message:
        'expected one of "http", "fhir", "jmix", "dicomweb", "dicom_scp", "hl7", found string "htp"; did you mean `http`?',
    },
    {
      file,
      line: 13,
      path: "backends.up.timeout_secs",
      message: "must be greater than 0, found 0",
    },
    {
      file,
      line: 14,
      path: "backends.up.options.base_url",
      message: "must be an http:// or https:// URL",
    },
    {
      file,
      line: 17,
      path: "pipelines.main.endpoints[1]",
      message: "unknown endpoint `missing`; defined: api",
    },
    {
      file,
      line: 18,
      path: "pipelines.main.backends[0]",
      message: "unknown backend `upp`; did you mean `up`?",
    },
  ]);
});

Deno.test("validateConfigText: a syntax error names file, line and column", () => {
  assert.deepEqual(problems("[a]\nb = \n"), [
    p(2, "", "TOML syntax error at column 5: invalid value"),
  ]);
});

Deno.test("validateConfig: without positions, problems still name the file and path", () => {
  const result = validateConfig({ logging: { level: 3 } }, undefined, "cloud:gw-1");
  assert.deepEqual(result.problems, [
    {
      file: "cloud:gw-1",
      path: "logging.level",
      message: 'expected one of "error", "warn", "info", "debug", "trace", found integer 3',
    },
  ]);
  assert.deepEqual(validateConfig("nope").problems, [
    { file: "<config>", path: "", message: 'expected table, found string "nope"' },
  ]);
});

Deno.test("validateConfig: [cloud] needs url when enabled; gateway_code and status_interval_secs are checked", () => {
  assert.deepEqual(problems("[cloud]\nenabled = true\n"), [
    p(
      1,
      "cloud.url",
      "missing `url`: with `enabled = true` the cloud service's base URL is required " +
        '(e.g. url = "https://cloud.example.com")',
    ),
  ]);
  assert.deepEqual(problems('[cloud]\nenabled = true\nurl = "ftp://x"\n'), [
    p(3, "cloud.url", "must be an http:// or https:// URL"),
  ]);
  assert.deepEqual(
    problems('[cloud]\ngateway_code = "../x"\nstatus_interval_secs = 0\nstate_dir = ""\n'),
    [
      p(
        2,
        "cloud.gateway_code",
        "must be 1-64 letters, digits, `.`, `_` or `-`, starting with a letter or digit",
      ),
      p(3, "cloud.status_interval_secs", "must be at least 1, found 0"),
      p(4, "cloud.state_dir", "must not be empty"),
    ],
  );
  assert.deepEqual(valid("[cloud]\nenabled = false\n").cloud, {
    enabled: false,
    state_dir: "state",
    status_interval_secs: 60,
    allowed_env: [],
    data_dir: "data",
  });
});

Deno.test("validateConfig: the management API off loopback needs TLS; cert and key go together", () => {
  const problems = (text: string) =>
    validateConfigText(text, "gateway.toml").problems.map((p) => `${p.path}: ${p.message}`);
  assert.match(
    problems('[management]\nbind = "0.0.0.0"\n').join("\n"),
    /management\.bind: the management API may bind "0\.0\.0\.0" \(not loopback\) only with TLS/,
  );
  assert.match(
    problems('[management]\nbind = "10.1.2.3"\ntls_cert_path = "c.pem"\n').join("\n"),
    /management\.tls_key_path: missing `tls_key_path`/,
  );
  assert.deepEqual(
    problems('[management]\nbind = "0.0.0.0"\ntls_cert_path = "c.pem"\ntls_key_path = "k.pem"\n'),
    [],
  );
  for (const bind of ["127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"]) {
    assert.deepEqual(problems(`[management]\nbind = "${bind}"\n`), [], bind);
  }
  assert.deepEqual(problems('[management]\nenabled = false\nbind = "0.0.0.0"\n'), []);
});

Deno.test("validateConfigText: a key defined twice names both lines, and the file's other problems still come", () => {
  const text = `[backends.a]
service = "echo"
retries = 1
retries = 2

[backends.b]
service = "nope"
`;
  const { config, problems } = validateConfigText(text, "gw.toml");
  assert.equal(config, undefined);
  const lines = problems.map((p) => `${p.line}: ${p.path}: ${p.message}`);
  assert.ok(
    lines.includes(
      "4: backends.a.retries: `backends.a.retries` is defined twice: on line 3 and on line 4; keep one",
    ),
    lines.join("\n"),
  );
  assert.ok(lines.some((l) => l.startsWith("7: backends.b.service:")), lines.join("\n"));
  // A table defined twice is named too (the rest cannot be read reliably then).
  const tables = validateConfigText(
    '[backends.a]\nservice = "echo"\n[backends.a]\nretries = 1\n',
    "t.toml",
  );
  assert.match(
    tables.problems[0].message,
    /`backends\.a` is defined twice: on line 1 and on line 3/,
  );
});
