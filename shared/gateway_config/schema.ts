/**
 * The one description of every table and option of the gateway configuration. Validation, the
 * TOML writer and the generated reference in docs/configuration.md all read these tables, so a
 * key is added (or a default changed) here and nowhere else.
 */
import { z } from "zod";
import { field, type TableSpec } from "./fields.ts";
import {
  BACKEND_SERVICES,
  type BackendService,
  DEFAULT_CONTENT_LIMITS,
  ENDPOINT_SERVICES,
  type EndpointService,
  LOAD_BALANCING,
  LOG_LEVELS,
} from "./types.ts";

/** A problem found by a cross-key rule, at `key` of the options table (or the table itself). */
export interface RuleProblem {
  key?: string;
  message: string;
}

/** The options table of one service or middleware type. */
export interface OptionSchema<Owner = unknown> {
  /** One sentence for the reference. */
  doc: string;
  /** Allowed keys; when absent, any options table is accepted unchecked. */
  fields?: TableSpec;
  /** Rules across keys; they run only when every key passed its own check. */
  rules?: (options: Record<string, unknown>, owner: Owner) => RuleProblem[];
}

/** What backend option rules may read of their backend. */
export interface BackendOwner {
  targets: string[];
}

// ---- value schemas -------------------------------------------------------------------------

const text = () => z.string().min(1);
const int = (min: number, max = Number.MAX_SAFE_INTEGER) => z.int().min(min).max(max);
const port = () => int(1, 65_535);
const positive = () => z.number().positive();
const names = () => z.array(text());

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "";
  } catch {
    return false;
  }
}

const httpUrl = () => text().refine(isHttpUrl, "must be an http:// or https:// URL");
const absolutePath = () => text().refine((v) => v.startsWith("/"), "must start with `/`");

const aeTitle = () =>
  z.string().min(1).max(16)
    .refine(
      // DICOM AE titles exclude backslash and control characters (PS3.5 6.2, VR "AE").
      // deno-lint-ignore no-control-regex
      (v) => !/[\\\x00-\x1f\x7f]/.test(v),
      "must not contain a backslash or control characters",
    )
    .refine((v) => v === "" || v.trim() !== "", "must not be all spaces");

/** `path_prefix` as routed: starts with `/`, no trailing slash except for `/` itself. */
export function normalizePathPrefix(prefix: string): string {
  let p = prefix;
  while (p.length > 1 && p.endsWith("/")) p = p.slice(0, -1);
  return p;
}

const URL_PATH = /^\/[A-Za-z0-9\-._~!$&'()*+,;=:@%/]*$/;
const pathPrefix = () =>
  text()
    .refine((v) => v.startsWith("/"), "must start with `/`")
    .refine((v) => !v.startsWith("/") || URL_PATH.test(v), "must hold only URL path characters")
    .refine(
      (v) => !normalizePathPrefix(v).includes("//"),
      "must not contain an empty segment (`//`)",
    )
    .refine((v) => !/(^|\/)\.\.?(\/|$)/.test(v), "must not contain `.` or `..` segments")
    .transform(normalizePathPrefix);

/** `s3://<bucket>[/<prefix>]` with an S3-style bucket name. */
const S3_ROOT = /^s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](\/.*)?$/;

// ---- top level and fixed sections ----------------------------------------------------------

/** Scalar keys at the top of the file. */
export const TOP_LEVEL: TableSpec = {
  transforms_path: field(
    "string",
    text(),
    "Directory of transform (JOLT) files, relative to the main config file's directory.",
    {
      default: "transforms",
      example: "transforms",
    },
  ),
  pipelines_path: field(
    "string",
    text(),
    "Directory whose `*.toml` files add endpoints, backends, targets, middleware and pipelines; relative to the main config file's directory.",
    {
      example: "pipelines",
    },
  ),
};

/** Tables at the top of the file, in the order the writer emits them. */
export const SECTIONS = [
  "cloud",
  "network",
  "endpoints",
  "backends",
  "targets",
  "middleware",
  "pipelines",
  "proxy",
  "management",
  "logging",
] as const;

/** `[cloud]`. */
export const CLOUD: TableSpec = {
  enabled: field(
    "boolean",
    z.boolean(),
    "Must be true for the gateway to accept cloud authorization.",
    {
      default: false,
      example: true,
    },
  ),
  url: field(
    "string",
    httpUrl(),
    "Base URL of the cloud service (the pinned issuer of machine tokens).",
    {
      example: "https://cloud.example.com",
    },
  ),
};

/** `[network.<name>]`. */
export const NETWORK: TableSpec = {
  bind: field("string", text(), "Address the HTTP listener binds.", {
    default: "0.0.0.0",
    example: "127.0.0.1",
  }),
  port: field("integer", port(), "TCP port of the HTTP listener (1-65535).", {
    default: 8080,
    example: 8443,
  }),
  tls_cert_path: field(
    "string",
    text(),
    "PEM certificate chain; with `tls_key_path` the listener speaks TLS (ALPN h2, http/1.1).",
    {
      requiredWhen: "`tls_key_path` is set",
      example: "certs/gateway.pem",
    },
  ),
  tls_key_path: field("string", text(), "PEM private key of `tls_cert_path`.", {
    requiredWhen: "`tls_cert_path` is set",
    example: "certs/gateway-key.pem",
  }),
};

/** `[network.<name>.http3]`. */
export const HTTP3_LISTENER: TableSpec = {
  bind: field("string", text(), "Address the QUIC (UDP) listener binds.", {
    defaultDoc: "the network's `bind`",
    example: "0.0.0.0",
  }),
  port: field("integer", port(), "UDP port of the QUIC listener.", {
    defaultDoc: "the network's `port`",
    example: 8443,
  }),
  cert_path: field("string", text(), "PEM certificate chain for TLS 1.3.", {
    required: true,
    defaultDoc: "the network's `tls_cert_path`",
    example: "certs/gateway.pem",
  }),
  key_path: field("string", text(), "PEM private key of `cert_path`.", {
    required: true,
    defaultDoc: "the network's `tls_key_path`",
    example: "certs/gateway-key.pem",
  }),
};

/** `[endpoints.<name>]` (besides `options`). */
export const ENDPOINT: TableSpec = {
  service: field(
    "string",
    z.enum(ENDPOINT_SERVICES),
    `Endpoint service type: ${ENDPOINT_SERVICES.join(", ")}.`,
    {
      required: true,
      example: "fhir",
    },
  ),
  networks: field(
    "array of strings",
    names(),
    "Networks that serve this endpoint; empty means every network.",
    {
      default: [],
      example: ["public"],
    },
  ),
};

/** `[backends.<name>]` (besides `options` and `health_check`). */
export const BACKEND: TableSpec = {
  service: field(
    "string",
    z.enum(BACKEND_SERVICES),
    `Backend service type: ${BACKEND_SERVICES.join(", ")}.`,
    {
      required: true,
      example: "http",
    },
  ),
  targets: field(
    "array of strings",
    names(),
    "Names of `[targets.*]` to balance over (http, fhir and dicomweb backends); each target URL is a base URL.",
    {
      default: [],
      example: ["api_a", "api_b"],
    },
  ),
  required: field(
    "boolean",
    z.boolean(),
    "Tee backends only (not the first of a pipeline): a failure of this backend fails the request.",
    {
      default: false,
      example: true,
    },
  ),
  timeout_secs: field("number", positive(), "Whole-call timeout in seconds.", {
    default: 30,
    example: 5,
  }),
  retries: field("integer", int(0), "Retries of idempotent requests after a connection error.", {
    default: 1,
    example: 2,
  }),
  load_balancing: field(
    "string",
    z.enum(LOAD_BALANCING),
    `Target selection: ${LOAD_BALANCING.join(", ")}.`,
    {
      default: "round_robin",
      example: "least_requests",
    },
  ),
  max_failures: field(
    "integer",
    int(1),
    "Consecutive failures that take a target out of rotation.",
    {
      default: 3,
      example: 5,
    },
  ),
  cooldown_secs: field("number", positive(), "Seconds a failed target stays out of rotation.", {
    default: 10,
    example: 30,
  }),
  match: field(
    "table of strings",
    z.record(z.string(), z.string()),
    "Metadata routing: the backend takes part only in requests whose metadata has every listed key with the listed value.",
    {
      example: { tenant: "a" },
    },
  ),
};

/** `[backends.<name>.health_check]`: active health checks of the targets. */
export const HEALTH_CHECK: TableSpec = {
  path: field(
    "string",
    absolutePath(),
    "Path requested on each target (GET); a 2xx answer is healthy.",
    {
      required: true,
      example: "/health",
    },
  ),
  interval_secs: field("number", positive(), "Seconds between checks.", {
    default: 10,
    example: 5,
  }),
  timeout_secs: field("number", positive(), "Timeout of one check, in seconds.", {
    default: 2,
    example: 1,
  }),
  healthy_threshold: field(
    "integer",
    int(1),
    "Consecutive successful checks that bring a target back.",
    {
      default: 1,
      example: 2,
    },
  ),
};

/** `[targets.<name>]`. */
export const TARGET: TableSpec = {
  url: field("string", httpUrl(), "Base URL of the target (http:// or https://).", {
    required: true,
    example: "http://10.0.0.5:8080/api",
  }),
};

/** `[middleware.<name>]` (besides `options`). */
export const MIDDLEWARE: TableSpec = {
  type: field("string", text(), "Middleware type; see the middleware options below.", {
    required: true,
    example: "transform",
  }),
};

/** `[pipelines.<name>]`. */
export const PIPELINE: TableSpec = {
  endpoints: field(
    "array of strings",
    names().min(1),
    "Endpoints whose traffic enters this pipeline (an endpoint belongs to one pipeline).",
    {
      required: true,
      example: ["fhir_in"],
    },
  ),
  middleware: field(
    "array of strings",
    names(),
    "Middleware applied in this order on requests, and on responses.",
    {
      default: [],
      example: ["to_fhir"],
    },
  ),
  backends: field(
    "array of strings",
    names().min(1),
    "Backends called; the first is the primary, the others are tees.",
    {
      required: true,
      example: ["fhir_server"],
    },
  ),
};

/** `[proxy.content_limits]`. */
export const CONTENT_LIMITS: TableSpec = {
  max_body_size: field("integer", int(1), "Largest request or response body read, in bytes.", {
    default: DEFAULT_CONTENT_LIMITS.max_body_size,
    example: 52_428_800,
  }),
  max_csv_rows: field("integer", int(1), "Most CSV rows normalized.", {
    default: DEFAULT_CONTENT_LIMITS.max_csv_rows,
    example: 50_000,
  }),
  max_xml_depth: field("integer", int(1), "Deepest XML nesting accepted.", {
    default: DEFAULT_CONTENT_LIMITS.max_xml_depth,
    example: 64,
  }),
  max_multipart_files: field("integer", int(1), "Most files in one multipart body.", {
    default: DEFAULT_CONTENT_LIMITS.max_multipart_files,
    example: 20,
  }),
  max_form_fields: field("integer", int(1), "Most fields in one form body.", {
    default: DEFAULT_CONTENT_LIMITS.max_form_fields,
    example: 500,
  }),
};

/** `[proxy]`: holds only `content_limits`. */
export const PROXY: TableSpec = {};

/** `[management]`. */
export const MANAGEMENT: TableSpec = {
  enabled: field("boolean", z.boolean(), "Serve the management API.", {
    default: true,
    example: false,
  }),
  bind: field("string", text(), "Address of the management listener (loopback by default).", {
    default: "127.0.0.1",
    example: "0.0.0.0",
  }),
  port: field("integer", port(), "TCP port of the management listener.", {
    default: 9090,
    example: 9091,
  }),
  prefix: field(
    "string",
    z.string()
      .transform((v) => v.replace(/^\/+|\/+$/g, ""))
      .pipe(
        z.string().regex(
          /^[A-Za-z0-9_-]+$/,
          "must be one path segment of letters, digits, `_` or `-`",
        ),
      ),
    "Path prefix of the management routes, one segment (surrounding slashes are dropped).",
    { default: "admin", example: "ops" },
  ),
};

/** `[logging]`. */
export const LOGGING: TableSpec = {
  level: field(
    "string",
    z.enum(LOG_LEVELS),
    `Least severe level written: ${LOG_LEVELS.join(", ")}.`,
    {
      default: "info",
      example: "debug",
    },
  ),
  format: field("string", z.enum(["json", "text"]), "`json` (one object per line) or `text`.", {
    default: "json",
    example: "text",
  }),
};

// ---- service options -----------------------------------------------------------------------

/** `path_prefix` of HTTP-family endpoints. */
const PATH_PREFIX_DOC = "Path the endpoint serves; requests under it are routed here.";

/** Endpoint services served by the HTTP (and HTTP/3) listeners of the networks. */
export const HTTP_FAMILY_ENDPOINTS: readonly EndpointService[] = [
  "http",
  "fhir",
  "jmix",
  "dicomweb",
];

const requiredPrefix = (example: string): OptionSchema => ({
  doc: "HTTP-family endpoint.",
  fields: {
    path_prefix: field("string", pathPrefix(), PATH_PREFIX_DOC, { required: true, example }),
  },
});

/** `[endpoints.<name>.options]` per service. */
export const ENDPOINT_OPTION_SCHEMAS: Record<EndpointService, OptionSchema> = {
  http: requiredPrefix("/api"),
  fhir: requiredPrefix("/fhir"),
  jmix: requiredPrefix("/jmix"),
  dicomweb: {
    doc: "DICOMweb endpoint (answers 501 Not Implemented for now).",
    fields: {
      path_prefix: field("string", pathPrefix(), PATH_PREFIX_DOC, {
        default: "/dicomweb",
        example: "/dicomweb",
      }),
    },
  },
  dicom_scp: {
    doc: "DICOM DIMSE listener (its own TCP port; not served by networks).",
    fields: {
      local_aet: field(
        "string",
        aeTitle(),
        "AE title of this SCP (1-16 characters, no backslash or control characters).",
        {
          required: true,
          example: "GATEWAY",
        },
      ),
      bind_addr: field("string", text(), "Address the DIMSE listener binds.", {
        default: "0.0.0.0",
        example: "127.0.0.1",
      }),
      port: field("integer", port(), "TCP port of the DIMSE listener.", {
        default: 11112,
        example: 104,
      }),
      enable_echo: field("boolean", z.boolean(), "Answer C-ECHO.", {
        default: true,
        example: false,
      }),
      enable_find: field("boolean", z.boolean(), "Answer C-FIND.", {
        default: false,
        example: true,
      }),
      enable_move: field("boolean", z.boolean(), "Answer C-MOVE.", {
        default: false,
        example: true,
      }),
      enable_get: field("boolean", z.boolean(), "Answer C-GET.", { default: false, example: true }),
      enable_store: field("boolean", z.boolean(), "Accept C-STORE.", {
        default: false,
        example: true,
      }),
      storage_dir: field("string", text(), "Directory where received instances are kept.", {
        example: "data/dicom",
      }),
      allowed_calling_aets: field(
        "array of strings",
        z.array(aeTitle()),
        "Calling AE titles accepted; when absent, any.",
        {
          example: ["MODALITY1"],
        },
      ),
    },
  },
};

/** Backend services that call HTTP base URLs, and so may use `targets` and `health_check`. */
export const HTTP_LIKE_BACKENDS: readonly BackendService[] = ["http", "fhir", "dicomweb"];

/** `base_url` or `targets`, not both, not neither. */
function baseUrlOrTargets(options: Record<string, unknown>, owner: BackendOwner): RuleProblem[] {
  const hasUrl = options.base_url !== undefined;
  const hasTargets = owner.targets.length > 0;
  if (hasUrl && hasTargets) {
    return [{ key: "base_url", message: "use base_url or targets, not both" }];
  }
  if (!hasUrl && !hasTargets) {
    return [{ key: "base_url", message: "missing required key `base_url` (or list `targets`)" }];
  }
  return [];
}

const httpLike = (doc: string, example: string): OptionSchema<BackendOwner> => ({
  doc,
  fields: {
    base_url: field("string", httpUrl(), "Base URL of the upstream (http:// or https://).", {
      requiredWhen: "`targets` is empty (use one or the other)",
      example,
    }),
  },
  rules: baseUrlOrTargets,
});

/** Reports `key` when set and `condition` is false. */
function onlyWhen(
  options: Record<string, unknown>,
  keys: string[],
  condition: boolean,
  why: string,
): RuleProblem[] {
  if (condition) return [];
  return keys.filter((k) => options[k] !== undefined).map((key) => ({ key, message: why }));
}

/** Both keys set or neither. */
function bothOrNeither(options: Record<string, unknown>, a: string, b: string): RuleProblem[] {
  const hasA = options[a] !== undefined;
  const hasB = options[b] !== undefined;
  if (hasA === hasB) return [];
  const missing = hasA ? b : a;
  return [{ key: missing, message: `missing \`${missing}\`: set both ${a} and ${b}, or neither` }];
}

/** `[backends.<name>.options]` per service. */
export const BACKEND_OPTION_SCHEMAS: Record<BackendService, OptionSchema<BackendOwner>> = {
  http: httpLike("HTTP upstream.", "http://127.0.0.1:8081"),
  fhir: httpLike("FHIR server.", "http://hapi:8080/fhir"),
  dicomweb: httpLike("DICOMweb server.", "http://orthanc:8042/dicom-web"),
  http3: {
    doc: "HTTP/3 (QUIC) upstream; TLS 1.3 always.",
    fields: {
      host: field("string", text(), "Target hostname.", {
        required: true,
        example: "api.example.com",
      }),
      port: field("integer", port(), "Target UDP port.", { default: 443, example: 8443 }),
      base_path: field("string", absolutePath(), "Path prefix added to every request.", {
        example: "/v1",
      }),
      ca_cert_path: field("string", text(), "PEM CA certificate, for self-signed servers.", {
        example: "certs/ca.pem",
      }),
      timeout_secs: field("integer", int(1), "Request timeout in seconds.", {
        default: 30,
        example: 10,
      }),
    },
  },
  dicom_scu: {
    doc: "DICOM DIMSE peer (PACS): C-ECHO, C-FIND, C-MOVE, C-GET, C-STORE.",
    fields: {
      aet: field("string", aeTitle(), "Remote AE title.", { required: true, example: "ORTHANC" }),
      host: field("string", text(), "PACS hostname or IP.", {
        required: true,
        example: "pacs.local",
      }),
      port: field("integer", port(), "PACS port.", { required: true, example: 4242 }),
      local_aet: field("string", aeTitle(), "AE title of the gateway as SCU.", {
        default: "GATEWAY_SCU",
        example: "GW_SCU",
      }),
      dimse_retrieve_mode: field(
        "string",
        z.enum(["get", "move"]),
        "`get` (C-GET, no PACS-side setup) or `move` (C-MOVE; the PACS must know the SCU's AE title and address).",
        {
          default: "get",
          example: "move",
        },
      ),
      use_tls: field("boolean", z.boolean(), "DICOM TLS to the PACS.", {
        default: false,
        example: true,
      }),
      incoming_store_port: field(
        "integer",
        port(),
        "Port of the C-STORE SCP that receives C-MOVE results.",
        {
          requiredWhen: "`dimse_retrieve_mode` is `move`",
          example: 11113,
        },
      ),
      persistent_store_scp: field(
        "boolean",
        z.boolean(),
        "Keep the C-STORE SCP listening between requests.",
        {
          default: false,
          example: true,
        },
      ),
      ca_cert_path: field("string", text(), "PEM CA certificate of the PACS (with `use_tls`).", {
        example: "certs/pacs-ca.pem",
      }),
      cert_path: field("string", text(), "PEM client certificate (with `use_tls`).", {
        example: "certs/scu.pem",
      }),
      key_path: field("string", text(), "PEM client key (with `use_tls`).", {
        example: "certs/scu-key.pem",
      }),
    },
    rules: (o) => [
      ...(o.dimse_retrieve_mode === "move" && o.incoming_store_port === undefined
        ? [{
          key: "incoming_store_port",
          message:
            'missing required key `incoming_store_port` (required when dimse_retrieve_mode is "move")',
        }]
        : []),
      ...onlyWhen(
        o,
        ["ca_cert_path", "cert_path", "key_path"],
        o.use_tls === true,
        "applies only when use_tls = true",
      ),
      ...bothOrNeither(o, "cert_path", "key_path"),
    ],
  },
  storage: {
    doc: "Files on a local disk or in an S3-compatible bucket.",
    fields: {
      root: field(
        "string",
        text().refine(
          (v) => !v.startsWith("s3://") || S3_ROOT.test(v),
          "an S3 root must be s3://<bucket>/<prefix> with a valid bucket name",
        ),
        "Local directory or `s3://<bucket>/<prefix>`.",
        {
          required: true,
          example: "s3://archive/incoming",
        },
      ),
      read_pattern: field(
        "string",
        text(),
        "Path template for GET: `{uuid}`, `{timestamp}`, `{<metadata key>}`, `{<field>}`.",
        {
          requiredWhen: "`write_pattern` is absent",
          example: "{patient_id}/{file}",
        },
      ),
      write_pattern: field("string", text(), "Path template for POST/PUT (same placeholders).", {
        requiredWhen: "`read_pattern` is absent",
        example: "{patient_id}/{uuid}.json",
      }),
      region: field("string", text(), "S3 region.", {
        requiredWhen: "`root` is `s3://`",
        example: "eu-central-1",
      }),
      access_key_id: field("string", text(), "S3 access key id (else from the environment).", {
        example: "${S3_KEY_ID}",
      }),
      secret_access_key: field("string", text(), "S3 secret key (else from the environment).", {
        example: "${S3_SECRET}",
      }),
      endpoint: field("string", httpUrl(), "Endpoint of an S3-compatible store.", {
        example: "http://minio:9000",
      }),
    },
    rules: (o) => {
      const s3 = typeof o.root === "string" && o.root.startsWith("s3://");
      const problems: RuleProblem[] = [];
      if (o.read_pattern === undefined && o.write_pattern === undefined) {
        problems.push({ message: "set read_pattern, write_pattern, or both" });
      }
      if (s3 && o.region === undefined) {
        problems.push({
          key: "region",
          message: "missing required key `region` (required when root is s3://)",
        });
      }
      problems.push(
        ...onlyWhen(
          o,
          ["region", "access_key_id", "secret_access_key", "endpoint"],
          s3,
          "applies only when root is s3://",
        ),
        ...bothOrNeither(o, "access_key_id", "secret_access_key"),
      );
      return problems;
    },
  },
  echo: { doc: "Returns the request as the response; takes no options.", fields: {} },
};

const transformFields = (debug: boolean): TableSpec => ({
  spec_path: field("string", text(), "JOLT spec file, relative to `transforms_path`.", {
    required: true,
    example: "patient.json",
  }),
  apply: field(
    "string",
    z.enum(["left", "right", "both"]),
    "`left`: requests; `right`: responses; `both`.",
    {
      default: "left",
      example: "both",
    },
  ),
  fail_on_error: field(
    "boolean",
    z.boolean(),
    "Fail the request when the transform fails (else log and continue).",
    {
      default: true,
      example: false,
    },
  ),
  ...(debug
    ? {
      debug: field("boolean", z.boolean(), "Log transform input and output at debug level.", {
        default: false,
        example: true,
      }),
    }
    : {}),
});

/**
 * `[middleware.<name>.options]` per middleware type. Types registered without `fields` accept any
 * options table; a type not registered here is an error.
 */
export const MIDDLEWARE_OPTION_SCHEMAS: Record<string, OptionSchema> = {
  transform: { doc: "JSON-to-JSON JOLT transform of `data`.", fields: transformFields(true) },
  metadata_transform: {
    doc: "JOLT transform of the request metadata (the key-values used for routing).",
    fields: transformFields(false),
  },
};
